"""Samples files and scenario inference."""

from __future__ import annotations

from jinja2 import Environment

from promptlint.lint import name_patterns
from promptlint.scenarios import infer_scenario, volatile_variant

from conftest import QWEN


def infer(src):
    env = Environment()
    return infer_scenario(env.parse(src), env.globals, name_patterns())


def test_kinds_by_name():
    s = infer("{{ now }} {{ created_at }} {{ report_date }} {{ trace_id }} {{ question }} {{ company }}")
    kinds = {n: (v.kind, v.sub_kind) for n, v in s.variables.items()}
    assert kinds == {
        "now": ("volatile", "timestamp"),
        "created_at": ("volatile", "timestamp"),
        "report_date": ("volatile", "date"),
        "trace_id": ("volatile", "id"),
        "question": ("per-request", "input"),
        "company": ("static", None),
    }


def test_shapes_from_use():
    s = infer("{% for d in docs %}{{ d.title }}: {{ d['body'] }}{% endfor %}{{ user.name }}{% for k, v in meta.items() %}{{ k }}{% endfor %}")
    docs = s.variables["docs"].value
    assert isinstance(docs, list) and len(docs) == 2 and set(docs[0]) == {"title", "body"}
    assert set(s.variables["user"].value) == {"name"}
    assert isinstance(s.variables["meta"].value, dict)


def test_realistic_variants():
    assert volatile_variant("2025-03-14 09:26:53", "timestamp") == "2025-03-14 09:27:00"
    assert volatile_variant("2025-03-14T09:26:53Z", "timestamp") == "2025-03-14T09:27:00Z"
    assert volatile_variant("2025-12-31", "date") == "2026-01-01"
    assert volatile_variant("req-7f3c9a2e", "id") == "req-8g4d0b3f"
    assert volatile_variant("09:26", "time") == "09:27"


def test_samples_file_declares_kinds(tmp_path, cli):
    (tmp_path / "t.j2").write_text("Build {{ build }}\n" + "Shared rules of the shop. " * 40 + "\n{{ q }}", encoding="utf-8")
    (tmp_path / "t.samples.toml").write_text(
        '[variables]\nbuild = { value = "b-1042", kind = "volatile", sub-kind = "id" }\nq = { value = "Hi", kind = "per-request" }\n',
        encoding="utf-8",
    )
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", tmp_path / "t.j2")
    (f,) = r.json()["findings"]
    assert f["variable"] == "build" and f["column"] == 7


def test_invalid_samples_files_are_e003(tmp_path, cli):
    t = tmp_path / "t.j2"
    t.write_text("Hello {{ name }}", encoding="utf-8")
    cases = {
        "[variables\n": "invalid TOML",
        '[variables]\nnow = { kind = "volatile" }\n': "variables.now",
        '[variables]\nnow = { value = "x", kind = "sometimes" }\n': "'sometimes' is not one of",
        "[vars]\nx = 1\n": "unknown key `vars`",
    }
    for text, words in cases.items():
        (tmp_path / "t.samples.toml").write_text(text, encoding="utf-8")
        r = cli("check", "--tokenizer", QWEN, "--output-format", "concise", t)
        assert r.code == 1, text
        assert "t.samples.toml:1:1: E003" in r.out and words in r.out, (text, r.out)
