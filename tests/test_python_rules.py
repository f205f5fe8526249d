"""Runs the `python = ...` cases of every rule file (the template runner skips them).

A case lists every finding it expects (code, line, column); a `pass` case expects none, so
each case is also a false-positive check. A case with `fixed` must fix to exactly that text
and lint clean afterwards (for its own code).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from promptlint.base import registry
from promptlint.project.config import Settings
from promptlint.driver.lint import lint

ROOT = Path(__file__).resolve().parent.parent
TOKENIZER = ROOT / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"


def python_cases():
    out = []
    for rule in registry.all_rules().values():
        for case in rule.cases:
            if "python" in case:
                out.append(pytest.param(rule.code, case, id=f"{rule.code}-{case['name']}"))
    return out


def settings(tmp_path) -> Settings:
    return Settings(tokenizer=str(TOKENIZER), root=tmp_path)


def run(tmp_path, source: str, name: str = "case.py"):
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return path, lint([str(path)], settings(tmp_path))


@pytest.mark.parametrize("code,case", python_cases())
def test_python_case(tmp_path, code, case):
    path, report = run(tmp_path, case["python"])
    got = sorted((f.code, f.line, f.column) for f in report.findings + report.errors)
    want = sorted((e["code"], e["line"], e["column"]) for e in case.get("expect", []))
    assert got == want, "\n".join(f"{f.code} {f.line}:{f.column} {f.message}" for f in report.findings + report.errors)
    assert (case["kind"] == "pass") == (not want)
    if "fixed" in case:
        from promptlint.fixes.fixing import apply_fixes

        fixed, _ = apply_fixes(report, write=True)
        assert {f.code for f in fixed} == {code}
        assert path.read_text(encoding="utf-8") == case["fixed"]
        again = lint([str(path)], settings(tmp_path))
        assert [f for f in again.findings if f.code == code] == []


def test_every_new_python_rule_has_cases():
    for code in ("M102", "M201", "M202", "M203", "M401", "M402", "M701", "M702", "E008"):
        rule = registry.get(code)
        assert any("python" in c for c in rule.cases), code
        assert rule.docs.get("what-it-does"), code


def test_m101_reports_tokens_and_blocks(tmp_path):
    case = next(c for c in registry.get("M101").cases if c["name"] == "python-timestamp-and-uuid-in-helper-f-string")
    _, report = run(tmp_path, case["python"])
    by_col = {f.column: f for f in report.findings}
    uuid_f = by_col[23]
    assert uuid_f.variable == "uuid.uuid4()"
    assert uuid_f.arithmetic.lost_blocks > 0
    # the divergent token matches a direct `tokenizers` encode of the two renders
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    a = tok.encode(uuid_f.evidence["base_render"], add_special_tokens=False).ids
    b = tok.encode(uuid_f.evidence["variant_render"], add_special_tokens=False).ids
    s = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert uuid_f.first_divergent_token.index == s
    assert uuid_f.first_divergent_token.base_id == a[s]
    assert any("line 23" in n for n in uuid_f.notes)  # where it reaches the LLM call
    assert by_col[41].variable == "datetime.now()"


def test_cli_fix_then_clean(tmp_path):
    case = next(c for c in registry.get("M201").cases if c["name"] == "python-json-dumps-into-system-prompt")
    path = tmp_path / "app.py"
    path.write_text(case["python"], encoding="utf-8")
    cmd = [sys.executable, "-m", "promptlint", "check", str(path), "--tokenizer", str(TOKENIZER)]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    diff = subprocess.run(cmd + ["--diff"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert diff.returncode == 1 and "+    system = \"Customer: \" + json.dumps(profile, sort_keys=True)" in diff.stdout
    assert path.read_text(encoding="utf-8") == case["python"]  # --diff writes nothing
    fixed = subprocess.run(cmd + ["--fix"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Fixed 1 finding (M201" in fixed.stdout
    again = subprocess.run(cmd + ["--output-format", "json"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["findings"] == []


def test_syntax_error_is_a_finding_not_a_traceback(tmp_path):
    _, report = run(tmp_path, "def f(:\n  pass\n")
    assert [(f.code, f.line) for f in report.errors] == [("E008", 1)]
    _, report = run(tmp_path, "x = '\x00'\n", "nul.py")
    assert report.errors and report.errors[0].code in ("E005", "E008")


def test_utf8_bom_and_crlf_python_files_are_analysed_and_fixed_in_place(tmp_path):
    # Python itself accepts a UTF-8 BOM (Windows editors write one); promptlint must too. Columns are
    # counted after the BOM, as editors show them, and --fix keeps the BOM and the CRLF line ends.
    # Line 1 is `json.dumps` at column 8 (1-based) after "meta = " — counted by hand.
    from promptlint.fixes.fixing import apply_fixes

    source = (
        'meta = json.dumps(profile)\r\n'
        'import json, openai\r\n'
        'openai.chat.completions.create(model="m", messages=[{"role": "system", "content": "Profile: " + meta}])\r\n'
    )
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + source.encode("utf-8"))
    report = lint([str(path)], settings(tmp_path))
    assert report.errors == []
    assert [(f.code, f.line, f.column) for f in report.findings] == [("M201", 1, 8)]
    apply_fixes(report, write=True)
    assert path.read_bytes() == b"\xef\xbb\xbf" + source.replace("json.dumps(profile)", "json.dumps(profile, sort_keys=True)").encode("utf-8")


def test_template_only_run_never_imports_libcst_or_pysource(tmp_path):
    (tmp_path / "t.j2").write_text("You are helpful.\nQuestion: {{ question }}\n", encoding="utf-8")
    code = (
        "import sys; from promptlint.project.config import Settings; from promptlint.driver.lint import lint; from pathlib import Path;"
        f"lint([{str(tmp_path)!r}], Settings(tokenizer={str(TOKENIZER)!r}, root=Path({str(tmp_path)!r})));"
        "bad = [m for m in sys.modules if m.startswith(('libcst', 'promptlint.pysource'))]; print(bad); assert not bad"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stdout + r.stderr


def test_python_analysis_does_not_import_libcst(tmp_path):
    case = next(c for c in registry.get("M202").cases if c["name"] == "python-tools-from-set-in-helper-comprehension")
    (tmp_path / "a.py").write_text(case["python"], encoding="utf-8")
    code = (
        "import sys; from promptlint.project.config import Settings; from promptlint.driver.lint import lint; from pathlib import Path;"
        f"r = lint([{str(tmp_path / 'a.py')!r}], Settings(tokenizer={str(TOKENIZER)!r}, root=Path({str(tmp_path)!r})));"
        "assert [f.code for f in r.findings] == ['M202'], r.findings; assert 'libcst' not in sys.modules"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stdout + r.stderr


def test_directory_walk_takes_only_llm_python(tmp_path):
    (tmp_path / "plain.py").write_text("import os\nprint(os.getcwd())\n", encoding="utf-8")
    (tmp_path / "bot.py").write_text("from openai import OpenAI\n", encoding="utf-8")
    (tmp_path / "serve.sh").write_text("vllm serve m --no-enable-prefix-caching\n", encoding="utf-8")
    (tmp_path / "other.sh").write_text("echo hi\n", encoding="utf-8")
    from promptlint import analyzers
    from promptlint.project.discovery import discover

    files, _ = discover([str(tmp_path)], tmp_path, (), (), kinds=analyzers)
    assert sorted(f.name for f in files) == ["bot.py", "serve.sh"]
    explicit, _ = discover([str(tmp_path / "plain.py")], tmp_path, (), (), kinds=analyzers)
    assert [f.name for f in explicit] == ["plain.py"]
    report = lint([str(tmp_path)], settings(tmp_path))
    assert [(f.code, Path(f.path).name, f.line, f.column) for f in report.findings] == [("M701", "serve.sh", 1, 14)]


def generated_module(lines: int = 2000) -> str:
    head = (
        "import json\nimport uuid\nfrom datetime import datetime\n\nfrom openai import OpenAI\n\nclient = OpenAI()\n"
        "TOOLS = {'get_order': {'type': 'function'}, 'track_parcel': {'type': 'function'}}\n"
    )
    chunks = [head]
    i = 0
    while sum(c.count("\n") for c in chunks) < lines:
        chunks.append(f'''

SYSTEM_{i} = (
    "You are assistant number {i} of Acme Corporation. Answer questions about orders, shipping and returns "
    "politely and precisely. Always cite the relevant policy section. Never invent order numbers."
)


def build_{i}(question, profile, names):
    header = f"Request {{uuid.uuid4()}} at {{datetime.now().isoformat()}}"
    context = "Customer: " + json.dumps(profile)
    tools = [TOOLS[n] for n in set(names)]
    messages = [{{"role": "system", "content": header + SYSTEM_{i} + context}}]
    messages.append({{"role": "user", "content": question}})
    return messages, tools


def send_{i}(question, profile):
    messages, tools = build_{i}(question, profile, ["track_parcel", "get_order"])
    for m in messages:
        m["content"] = m["content"].strip()
    return client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
''')
        i += 1
    return "".join(chunks)


def test_2000_line_module_is_analysed(tmp_path):
    # its speed is measured by benchmarks/python_module.py, not asserted here
    source = generated_module()
    assert source.count("\n") >= 2000
    path = tmp_path / "big.py"
    path.write_text(source, encoding="utf-8")
    s = settings(tmp_path)
    from promptlint.analysis.kernel import Context, TokenizerProvider, rule_filter as _enabled, tokenizer_spec
    from promptlint.analyzers import python_source

    provider = TokenizerProvider(tokenizer_spec(s))
    provider()  # the tokenizer load is shared by every file of a run; time the analysis
    ctx = Context(s, provider, _enabled(s))
    findings = python_source.lint_file(path, source, ctx)
    assert findings and {f.code for f in findings} >= {"M101", "M201"}
