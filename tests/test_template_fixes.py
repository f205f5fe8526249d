"""Template fixes (`check --fix`, `--unsafe-fixes`, `--diff`), each proven by re-checking.

- Every template case of a rule file with a `fixed` text: `--fix --unsafe-fixes` turns the
  failing template into exactly that text, and a re-check no longer reports the rule.
- Safety: `--fix` alone applies safe fixes only (M201) and names the unsafe ones it left.
- A fix that cannot be proven is reported as not applied, with the reason, and nothing is written.
- examples/: on a copy, `--diff` writes nothing; `--fix --unsafe-fixes` puts each value just before the
  question, where every request shares at least the blocks the template shares without the value's line,
  checked by this test's own render (plain jinja2) and a direct `tokenizers` encode, not promptlint's figures.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from conftest import DATA, REPO, shared_prefix

from promptlint.base import registry

CASES = [
    pytest.param(rule, case, id=f"{code}-{case['name']}")
    for code, rule in registry.all_rules().items()
    for case in rule.cases
    if "template" in case and "fixed" in case
]


def _write_case(tmp_path: Path, case: dict) -> Path:
    name = case.get("filename", "case.j2")
    (tmp_path / name).write_text(case["template"], encoding="utf-8")
    if "samples" in case:
        (tmp_path / f"{name.rsplit('.', 1)[0]}.samples.json").write_text(json.dumps(case["samples"]), encoding="utf-8")
    return tmp_path / name


def _tok(case: dict) -> Path:
    return DATA / "tokenizers" / case.get("tokenizer", "qwen2.5") / "tokenizer.json"


def test_every_template_fix_has_a_fixed_case():
    fixable = {c for c, r in registry.all_rules().items() if r.fix_safety("template")}
    with_case = {r.code for r, c in (p.values for p in CASES)}
    assert fixable and fixable <= with_case, sorted(fixable - with_case)


@pytest.mark.parametrize("rule,case", CASES)
def test_fix_gives_the_fixed_text_and_a_clean_recheck(rule, case, tmp_path, cli):
    path = _write_case(tmp_path, case)
    args = ["--tokenizer", _tok(case), "--no-cache", *case.get("args", [])]
    r = cli("check", *args, "--fix", "--unsafe-fixes", path.name, cwd=tmp_path)
    assert r.code in (0, 1), r.err
    assert f"{rule.code} fixed in {path.name}" in r.out, r.out
    assert path.read_text(encoding="utf-8") == case["fixed"]
    again = cli("check", *args, "--output-format", "json", path.name, cwd=tmp_path)
    assert [f for f in again.json()["findings"] if f["code"] == rule.code] == []


def _case(code: str, name: str) -> dict:
    return next(c for c in registry.get(code).cases if c["name"] == name)


def test_fix_alone_applies_only_safe_fixes(tmp_path, cli):
    unsafe = _case("M202", "tools-in-given-order")
    path = _write_case(tmp_path, unsafe)
    r = cli("check", "--tokenizer", _tok(unsafe), "--no-cache", "--fix", path.name, cwd=tmp_path)
    assert r.code == 1
    assert path.read_text(encoding="utf-8") == unsafe["template"]
    assert "1 unsafe fix available with --unsafe-fixes (M202 case.j2:2:26)" in r.out

    safe = _case("M201", "items-iteration-before-question")
    path = _write_case(tmp_path, safe)
    r = cli("check", "--tokenizer", _tok(safe), "--no-cache", "--fix", path.name, cwd=tmp_path)
    assert r.code == 0, r.out
    assert path.read_text(encoding="utf-8") == safe["fixed"]


def test_unprovable_fix_is_not_applied_with_its_reason(tmp_path, cli):
    # the request id shares its line with the instructions: moving the line moves them too, and the
    # shared prefix would win nothing back, so the verifier refuses it
    case = _case("M101", "request-id-declared-in-samples")
    path = _write_case(tmp_path, case)
    r = cli("check", "--tokenizer", _tok(case), "--no-cache", "--fix", "--unsafe-fixes", path.name, cwd=tmp_path)
    assert r.code == 1
    assert "M101 in case.j2:1:2: not applied: the edit wins no block back" in r.out, r.out
    assert path.read_text(encoding="utf-8") == case["template"]


def test_tojson_gets_sort_keys_in_the_transformers_environment(tmp_path, cli):
    path = tmp_path / "case.j2"
    path.write_text(
        "Store settings: {{ settings | tojson }}\n"
        "You are the store assistant. Answer questions about orders, shipping and returns politely and precisely, "
        "and always cite the relevant policy section. Never invent order numbers.\nQuestion: {{ question }}\n",
        encoding="utf-8",
    )
    (tmp_path / "case.samples.json").write_text(
        json.dumps({"variables": {"settings": {"region": "EU", "currency": "EUR", "locale": "de-DE"}}}), encoding="utf-8"
    )
    args = ["--tokenizer", DATA / "tokenizers" / "qwen2.5" / "tokenizer.json", "--no-cache", "--template-env", "transformers"]
    r = cli("check", *args, "--fix", "case.j2", cwd=tmp_path)
    assert r.code == 0, r.out
    assert path.read_text(encoding="utf-8").startswith("Store settings: {{ settings | tojson(sort_keys=true) }}\n")


# ------------------------------------------------------------------------------- examples/


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


QUESTION_B = "Can I return a tent I bought two weeks ago? I only used it once."


def _lost_blocks(tok, template: str, values: dict, volatile: dict, per_request: dict) -> int:
    """Lost blocks of the worst volatile/order variant, by this test's own render and encode (B = 16)."""
    import jinja2

    env = jinja2.Environment()
    t = env.from_string(template)
    base = tok.encode(t.render(**values), add_special_tokens=False).ids
    ideal_ids = tok.encode(t.render(**{**values, **per_request}), add_special_tokens=False).ids
    worst = 0
    for name, other in volatile.items():
        variant = tok.encode(t.render(**{**values, name: other}), add_special_tokens=False).ids
        p = len(variant)
        eligible = min(shared_prefix(base, variant), p - 1) // 16
        ideal = min(shared_prefix(base, ideal_ids), p - 1) // 16
        worst = max(worst, ideal - eligible)
    return worst


def _eligible(tok, template: str, values: dict, change: dict) -> int:
    """Blocks (B = 16) the render with ``change`` shares with the base render, by this test's own
    render and encode: floor(min(S, P - 1) / B)."""
    import jinja2

    t = jinja2.Environment().from_string(template)
    base = tok.encode(t.render(**values), add_special_tokens=False).ids
    variant = tok.encode(t.render(**{**values, **change}), add_special_tokens=False).ids
    return min(shared_prefix(base, variant), len(variant) - 1) // 16


def test_examples_fixed_lose_no_block(tmp_path, cli, mistral):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root)
    before = _tree(root)
    prompts = root / "prompts"
    tools = [
        {"name": "get_order", "description": "Look up an order by its number and return its status and items."},
        {"name": "track_parcel", "description": "Return the carrier, tracking code and last scan of a parcel."},
    ]
    question = "Where is my order 10023? It was supposed to arrive on Monday."
    checks = {
        "support_timestamp.j2": (
            {"now": "2025-03-14 09:26:53", "question": question},
            {"now": "2025-03-14 09:27:00"},
        ),
        "agent_request_id.j2": (
            {"rid": "req-7f3c9a2e", "tools": tools, "question": question},
            {"rid": "req-8g4d0b3f", "tools": list(reversed(tools))},
        ),
    }
    for name, (values, volatile) in checks.items():  # the hazards are real before the fix
        text = (prompts / name).read_text(encoding="utf-8")
        assert _lost_blocks(mistral, text, values, volatile, {"question": QUESTION_B}) > 0, name

    r = cli("check", "--no-cache", "--diff", "--unsafe-fixes", cwd=root)
    assert r.code == 1, r.err
    assert _tree(root) == before  # --diff writes nothing
    assert "+{% for tool in tools | sort(attribute=\"name\") %}" in r.out
    assert "-Current time: {{ now }}" in r.out and "+Current time: {{ now }}" in r.out

    r = cli("check", "--no-cache", "--fix", "--unsafe-fixes", cwd=root)
    assert r.code == 0, r.out + r.err
    assert "M101 fixed in prompts/support_timestamp.j2: 1 → 22 eligible blocks per request" in r.out
    # The fix puts each value just before the question (docs/rules/M101.md, "Use instead"): whether the
    # value's own block is then lost is only where block edges fall, so the test asks, by its own render,
    # that every request shares at least the blocks it would share with the value's line deleted.
    moved = {"support_timestamp.j2": "Current time: {{ now }}\n", "agent_request_id.j2": "### Request {{ rid }} ###\n"}
    for name, (values, volatile) in checks.items():
        text = (prompts / name).read_text(encoding="utf-8")
        assert moved[name] + text.splitlines(keepends=True)[-1] in text, (name, text)  # right before the question
        without = text.replace(moved[name], "")
        for var, other in volatile.items():
            eligible = _eligible(mistral, text, values, {var: other})
            assert eligible >= _eligible(mistral, without, values, {"question": QUESTION_B}), (name, var, text)
    assert (prompts / "support_clean.j2").read_bytes() == (REPO / "examples" / "prompts" / "support_clean.j2").read_bytes()


# ------------------------------------------------------------------------- --add-suppressions


def test_add_suppressions_silences_every_finding_without_changing_the_render(tmp_path, cli):
    import jinja2

    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root)
    prompts = root / "prompts"
    values = {"now": "2025-03-14 09:26:53", "rid": "req-1", "question": "q", "customer_name": "Ann",
              "tools": [{"name": "a", "description": "b"}]}
    renders = {p.name: jinja2.Environment().from_string(p.read_text(encoding="utf-8")).render(**values) for p in prompts.glob("*.j2")}
    r = cli("check", "--no-cache", "--add-suppressions", cwd=root)
    assert r.code == 0, r.err
    assert "Added 3 suppression comments in 2 files." in r.out
    assert (prompts / "support_timestamp.j2").read_text(encoding="utf-8").startswith(
        "Current time: {{ now }}{# promptlint: ignore[M101] #}\n")
    for p in prompts.glob("*.j2"):  # a comment renders nothing: the prompts are byte-identical
        assert jinja2.Environment().from_string(p.read_text(encoding="utf-8")).render(**values) == renders[p.name]
    again = cli("check", "--no-cache", "--output-format", "json", cwd=root)
    assert again.code == 0 and again.json()["findings"] == []


def test_add_suppressions_in_python_and_not_inside_a_string(tmp_path, cli):
    from promptlint.fixes.suppressions import annotate

    case = _case("M201", "python-json-dumps-into-system-prompt")
    (tmp_path / "app.py").write_text(case["python"], encoding="utf-8")
    r = cli("check", "--tokenizer", DATA / "tokenizers" / "qwen2.5" / "tokenizer.json", "--no-cache",
            "--add-suppressions", "app.py", cwd=tmp_path)
    assert r.code == 0, r.out + r.err
    line = (tmp_path / "app.py").read_text(encoding="utf-8").split("\n")[8]
    assert line.endswith('"\\nYou are the support assistant."  # promptlint: ignore[M201]'), line
    # a line that ends inside a multi-line tag or string is left alone (the comment would join it)
    text, n, missed = annotate("{{ a ~\n b }}\nx\n", {1: ["M101"], 3: ["M101"]}, python=False)
    assert (text, n, missed) == ("{{ a ~\n b }}\nx{# promptlint: ignore[M101] #}\n", 1, 1)
    text, n, missed = annotate('s = """x\ny"""\n', {1: ["M101"]}, python=True)
    assert (n, missed) == (0, 1) and text == 's = """x\ny"""\n'


def test_a_move_that_would_glue_lines_is_not_applied(tmp_path, cli):
    # transformers' trim_blocks + `{%- endif %}` glue "Current time: …" to the next line; moved, it would
    # glue to another one: the render's lines would change, so the verifier refuses the move
    text = (
        "{%- if now %}\nCurrent time: {{ now }}\n{%- endif %}\n"
        "You are the support assistant for Acme Corporation. Answer questions about orders, shipping and returns "
        "politely and precisely. Always cite the relevant policy section. Never invent order numbers.\n"
        "Question: {{ question }}\n"
    )
    (tmp_path / "case.j2").write_text(text, encoding="utf-8")
    r = cli("check", "--tokenizer", DATA / "tokenizers" / "qwen2.5" / "tokenizer.json", "--no-cache", "--template-env",
            "transformers", "--fix", "--unsafe-fixes", "case.j2", cwd=tmp_path)
    assert r.code == 1
    assert "not applied: moving the span would glue or split rendered lines (whitespace control)" in r.out, r.out
    assert (tmp_path / "case.j2").read_text(encoding="utf-8") == text


def test_fix_keeps_crlf_line_ends_of_a_template(tmp_path, cli):
    # a Windows-edited template: the fix must change only the line it fixes, not every line end
    safe = _case("M201", "items-iteration-before-question")
    path = tmp_path / "case.j2"
    path.write_bytes(safe["template"].replace("\n", "\r\n").encode("utf-8"))
    r = cli("check", "--tokenizer", _tok(safe), "--no-cache", "--fix", path.name, cwd=tmp_path)
    assert r.code == 0, r.out
    assert path.read_bytes() == safe["fixed"].replace("\n", "\r\n").encode("utf-8")


def test_fix_moves_a_stand_in_call_of_the_template_itself(tmp_path, cli):
    # `now()` / `clock.now()` are the application's own globals (stand-ins): the fix finds their
    # calls in the template itself instead of saying an included template renders them
    static = "".join(f"Rule {i}: answer politely, cite the handbook section, and never guess a price.\n" for i in range(12))
    for name, call in (("a.j2", 'now().strftime("%H:%M:%S")'), ("b.j2", "clock.utcnow().isoformat()")):
        path = tmp_path / name
        path.write_text(f"Now: {{{{ {call} }}}}\n" + static + "Question: {{ question }}\n", encoding="utf-8")
        r = cli("check", "--tokenizer", DATA / "tokenizers" / "qwen2.5" / "tokenizer.json", "--no-cache", "--fix",
                "--unsafe-fixes", path.name, cwd=tmp_path)
        assert f"M101 fixed in {name}" in r.out, r.out
        fixed = path.read_text(encoding="utf-8")
        assert fixed.startswith(static)  # the line moved below the shared rules (before or after the question)
        assert sorted(fixed.splitlines()) == sorted((f"Now: {{{{ {call} }}}}\n" + static + "Question: {{ question }}").splitlines())


def test_sort_key_comes_from_the_samples_file_or_the_fix_says_why_not(tmp_path, cli):
    # no field of these items is one promptlint would guess (name, title, id, ...): the samples file's
    # `sort-key` is what makes the fix possible (the rule case `documents-with-declared-sort-key`)
    case = _case("M203", "documents-with-declared-sort-key")
    args = ["--tokenizer", _tok(case), "--no-cache", "--fix", "--unsafe-fixes", "case.j2"]
    for declared, reason in (
        (None, "the items of `sections` have no field that tells every one apart"),
        ("rank", "the samples file's sort-key: not every item of `sections` has a field `rank`"),
        ('number") | reverse | list | sort(attribute="x', "the samples file's sort-key `number\") | reverse"),
    ):
        samples = json.loads(json.dumps(case["samples"]))
        if declared is None:
            del samples["variables"]["sections"]["sort-key"]
        else:
            samples["variables"]["sections"]["sort-key"] = declared
        _write_case(tmp_path, {**case, "samples": samples})
        r = cli("check", *args, cwd=tmp_path)
        assert r.code == 1
        assert f"M203 in case.j2:2:29: not applied: {reason}" in r.out, r.out
        assert (tmp_path / "case.j2").read_text(encoding="utf-8") == case["template"]


# ------------------------------------------------------------------------------ chat templates


def _reverse_keys(x):
    if isinstance(x, dict):
        return {k: _reverse_keys(x[k]) for k in reversed(list(x))}
    if isinstance(x, list):
        return [_reverse_keys(v) for v in x]
    return x


def _hf_render(template: str, tools: list, user: str) -> str:
    """Llama 3.x's template rendered as transformers renders it (its own environment, written here)."""
    from datetime import datetime

    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from promptlint.chat.scenarios import SYSTEM

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, sort_keys=False: json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    env.globals["strftime_now"] = lambda fmt: datetime(2025, 3, 14, 9, 26, 53).strftime(fmt)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    return env.from_string(template).render(messages=messages, tools=tools, add_generation_prompt=True,
                                            bos_token="<|begin_of_text|>", eos_token="<|eot_id|>")


def test_chat_template_fix_in_tokenizer_config_keeps_the_json_and_wins_the_blocks(tmp_path, cli):
    from tokenizers import Tokenizer

    from promptlint.chat.scenarios import TOOLS, USER_WEATHER

    template = (DATA / "chat_templates" / "meta-llama-Llama-3.2-3B-Instruct.jinja").read_text(encoding="utf-8")
    config = {"add_bos_token": True, "bos_token": "<|begin_of_text|>", "chat_template": template,
              "eos_token": "<|eot_id|>", "model_max_length": 131072, "note": "caf\u00e9 \u2192 ok"}
    # as transformers saves it (indent 2, sorted keys, non-ASCII kept): the file's own escaping style
    original = json.dumps(config, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (tmp_path / "tokenizer_config.json").write_text(original, encoding="utf-8")
    shutil.copy(DATA / "tokenizers" / "qwen2.5" / "tokenizer.json", tmp_path / "tokenizer.json")
    tok = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))

    def lost(text: str) -> int:  # worst loss of the M202 variants (order, key order), B = 16
        ids = lambda tools, user=USER_WEATHER: tok.encode(_hf_render(text, tools, user), add_special_tokens=False).ids
        base, ideal = ids(TOOLS), ids(TOOLS, "Is it going to snow in Oslo this weekend?")
        worst = 0
        for variant in (ids(list(reversed(TOOLS))), ids(_reverse_keys(TOOLS))):
            eligible = min(shared_prefix(base, variant), len(variant) - 1) // 16
            worst = max(worst, min(shared_prefix(base, ideal), len(variant) - 1) // 16 - eligible)
        return worst

    assert lost(template) > 0
    r = cli("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "M202 fixed in tokenizer_config.json" in r.out and "unsafe: it changes the model's chat format" in r.out, r.out
    # the date is set in one block and rendered in another: moving the setter cannot be proven
    assert "M101 in tokenizer_config.json:10:31: not applied: the fixed template does not render" in r.out
    text = (tmp_path / "tokenizer_config.json").read_text(encoding="utf-8")
    fixed = json.loads(text)
    assert {**fixed, "chat_template": template} == config
    assert 'for t in tools | sort(attribute="function.name")' in fixed["chat_template"]
    # only the chat_template string changed, re-serialized in the same style (no \u escapes added)
    start = original.index('"chat_template": ') + len('"chat_template": ')
    assert text[:start] == original[:start]
    assert text[start:] == json.dumps(fixed["chat_template"], ensure_ascii=False) + original[start + len(json.dumps(template, ensure_ascii=False)):]
    assert lost(fixed["chat_template"]) == 0


def test_chat_template_fix_needs_unsafe_fixes_and_refuses_a_foreign_escaping(tmp_path, cli):
    template = (DATA / "chat_templates" / "meta-llama-Llama-3.2-3B-Instruct.jinja").read_text(encoding="utf-8")
    shutil.copy(DATA / "tokenizers" / "qwen2.5" / "tokenizer.json", tmp_path / "tokenizer.json")
    # "<" escaped as \u003c (Go's encoder does) is valid JSON that json.dumps never writes: the string
    # cannot be rewritten byte for byte, so nothing is
    original = '{"bos_token": "<|begin_of_text|>", "chat_template": ' + json.dumps(template).replace("<", "\\u003c") + "}\n"
    (tmp_path / "tokenizer_config.json").write_text(original, encoding="utf-8")
    r = cli("check", "--no-cache", "--fix", ".", cwd=tmp_path)
    assert r.code == 1 and "unsafe fixes available with --unsafe-fixes" in r.out, r.out
    r = cli("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert r.code == 1
    assert "M202 in tokenizer_config.json:61:9: not applied: the `chat_template` string is escaped in a style" in r.out, r.out
    assert (tmp_path / "tokenizer_config.json").read_text(encoding="utf-8") == original


def test_bos_is_dropped_only_when_the_serving_path_adds_one(tmp_path, cli):
    from tokenizers import Tokenizer

    case = _case("M102", "own-bos-on-completions-path")
    tok = Tokenizer.from_file(str(_tok(case)))
    render = lambda t: t.replace("{{ question }}", "Where is my parcel?")
    before = tok.encode(render(case["template"]), add_special_tokens=True).ids
    assert before[0] == before[1] == tok.token_to_id("<s>")  # the hazard, by a direct encode
    path = _write_case(tmp_path, case)
    args = ["--tokenizer", _tok(case), "--no-cache", "--fix", "--unsafe-fixes", path.name]
    r = cli("check", "--serving", "chat", *args, cwd=tmp_path)  # the chat endpoint adds none: nothing to drop
    assert r.code == 0 and "M102" not in r.out, r.out
    assert path.read_text(encoding="utf-8") == case["template"]
    r = cli("check", "--serving", "completions", *args, cwd=tmp_path)
    assert "M102 fixed in case.j2" in r.out, r.out
    fixed = path.read_text(encoding="utf-8")
    # served through completions, the fixed template gives exactly the ids chat-endpoint traffic had
    after = tok.encode(render(fixed), add_special_tokens=True).ids
    assert after == tok.encode(render(case["template"]), add_special_tokens=False).ids
    assert f"0 → {(len(after) - 1) // 16} eligible blocks per request" in r.out, r.out
