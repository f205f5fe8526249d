"""Suppression comments (ignore / disable..enable, Jinja and Python forms) and PL100."""

from __future__ import annotations

import json

from integration_helpers import BAD, GOOD, QWEN, SHARED, run_cli

from promptlint.base import registry
from promptlint.driver import suppress
from promptlint.base.records import Finding


def finding(code, line, path="t.py"):
    return Finding(code, "x", "M1", "warning", "m", path, line, 1, line, 2)


def lint_json(capsys, monkeypatch, tmp_path, text, *extra):
    (tmp_path / "t.j2").write_text(text, encoding="utf-8")
    code, out, err = run_cli(
        capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--output-format", "json", *extra, "t.j2"
    )
    assert code in (0, 1), err
    doc = json.loads(out)
    return [(f["code"], f["line"], f["column"]) for f in doc["findings"] + doc["errors"]], doc


def test_parse_jinja_and_python_forms():
    text = (
        "a {{ x }} {#- promptlint: ignore[M101, m2] reason #}\n"
        "{# promptlint: disable[M1] #}\n"
        "x = 1  # promptlint: ignore[M101]\n"
        "{# promptlint: bogus #}\n"
    )
    jinja = suppress.parse(text)
    assert [(d.verb, d.codes, d.line, d.column, d.standalone) for d in jinja] == [
        ("ignore", ("M101", "M2"), 1, 11, False),
        ("disable", ("M1",), 2, 1, True),
        ("bogus", (), 4, 1, True),
    ]
    assert jinja[0].end_column == len("a {{ x }} {#- promptlint: ignore[M101, m2] reason #}") + 1
    py = suppress.parse(text, python=True)
    assert [(d.verb, d.line, d.column) for d in py] == [("ignore", 1, 11), ("disable", 2, 1), ("ignore", 3, 8), ("bogus", 4, 1)]
    assert suppress.parse("no directives here") == []


def test_python_comments_suppress_and_report_unused():
    source = "def build(now):\n    return f'{now} ...'  # promptlint: ignore[M101]\n# promptlint: ignore[M101]\nx = 1\n"
    findings = [finding("M101", 2), finding("M102", 2)]
    all_codes = list(registry.all_rules()) + ["M102"]
    out = suppress.apply(findings, "t.py", lambda p: source, lambda c: True, all_codes)
    assert [(f.code, f.line) for f in out] == [("M102", 2), ("PL100", 3)]
    assert "no M101 finding on this line or the next" in out[1].message
    # a Jinja file does not take `#` comments
    out = suppress.apply([finding("M101", 2, "t.j2")], "t.j2", lambda p: source, lambda c: True, all_codes)
    assert [f.code for f in out] == ["M101"]


def test_line_and_line_before(tmp_path, capsys, monkeypatch):
    got, _ = lint_json(capsys, monkeypatch, tmp_path, BAD)
    assert got == [("M101", 1, 15)]
    trailing = BAD.replace("{{ now }}", "{{ now }} {# promptlint: ignore[M101] #}")
    assert lint_json(capsys, monkeypatch, tmp_path, trailing)[0] == []
    before = "{# promptlint: ignore[M1] #}\n" + BAD
    assert lint_json(capsys, monkeypatch, tmp_path, before)[0] == []
    # a trailing comment on the line before does not reach the next line
    not_alone = "Header {# promptlint: ignore[M101] #}\n" + BAD
    assert sorted(lint_json(capsys, monkeypatch, tmp_path, not_alone)[0]) == [("M101", 2, 15), ("PL100", 1, 8)]


def test_ranges(tmp_path, capsys, monkeypatch):
    text = "{# promptlint: disable[M101] #}\nNow: {{ now }}\nId: {{ request_id }}\n{# promptlint: enable[M101] #}\n" + SHARED + "\n{{ question }}\n"
    assert lint_json(capsys, monkeypatch, tmp_path, text)[0] == []
    partial = text.replace("Id: {{ request_id }}\n{# promptlint: enable[M101] #}", "{# promptlint: enable[M101] #}\nId: {{ request_id }}")
    assert [c[:2] for c in lint_json(capsys, monkeypatch, tmp_path, partial)[0]] == [("M101", 4)]
    unclosed = "{# promptlint: disable[M101] #}\n" + BAD
    assert lint_json(capsys, monkeypatch, tmp_path, unclosed)[0] == []


def test_unused_only_for_enabled_rules_and_complete_analysis(tmp_path, capsys, monkeypatch):
    text = "{# promptlint: ignore[M101] #}\n" + GOOD
    assert lint_json(capsys, monkeypatch, tmp_path, text)[0] == [("PL100", 1, 1)]
    assert lint_json(capsys, monkeypatch, tmp_path, text, "--ignore", "M101")[0] == []  # rule not run: not judged
    assert lint_json(capsys, monkeypatch, tmp_path, text, "--ignore", "PL100")[0] == []
    broken = "{# promptlint: ignore[M101] #}\n{% if %}\n"
    assert [c[0] for c in lint_json(capsys, monkeypatch, tmp_path, broken)[0]] == ["E001"]
    _, doc = lint_json(capsys, monkeypatch, tmp_path, "{# promptlint: ignore #}\n" + GOOD)
    assert "needs rule codes" in doc["findings"][0]["message"]


def test_add_code_for_the_editor_action():
    assert suppress.add_code("x {# promptlint: ignore[M101] #}", "M201") == "x {# promptlint: ignore[M101, M201] #}"
    assert suppress.add_code("x {# promptlint: ignore[M101] #}", "M101") == "x {# promptlint: ignore[M101] #}"
    assert suppress.add_code("x = 1  # promptlint: ignore[M101]", "M2", python=True) == "x = 1  # promptlint: ignore[M101, M2]"
    assert suppress.add_code("plain", "M101") is None
    assert suppress.comment_for("M101") == "{# promptlint: ignore[M101] #}"
    assert suppress.comment_for("M101", python=True) == "# promptlint: ignore[M101]"


PY_SOURCE = '''import json

import anthropic

client = anthropic.Anthropic()


def ask(profile, question):
    system = "Customer: " + json.dumps(profile) + "\\nYou are the support assistant."
    return client.messages.create(
        model="claude-sonnet-4",
        system=system,
        messages=[{"role": "user", "content": question}],
        max_tokens=512,
    )
'''


def test_python_comment_end_to_end(tmp_path, capsys, monkeypatch):
    lines = PY_SOURCE.split("\n")
    (tmp_path / "a.py").write_text(PY_SOURCE, encoding="utf-8")
    lines[8] += "  # promptlint: ignore[M201]"
    (tmp_path / "b.py").write_text("\n".join(lines), encoding="utf-8")
    (tmp_path / "c.py").write_text("\n".join(lines).replace("ignore[M201]", "ignore[M202]"), encoding="utf-8")
    code, out, err = run_cli(
        capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--output-format", "concise", "a.py", "b.py", "c.py"
    )
    got = [l.split(" ")[:2] for l in out.splitlines()]
    assert got == [["a.py:9:29:", "M201"], ["c.py:9:29:", "M201"], ["c.py:9:87:", "PL100"]], out
