"""Every [[cases]] entry of every rule file in rules/ runs as a test (sqlfluff's YAML cases, in TOML).

A case gives a `template` (and optionally `samples`, `tokenizer`, `filename`) and the
findings it must produce (`[[cases.expect]]`: code, line, and optionally column/variable);
a pass case expects none of the rule's own code. Cases with a `python` key are run by the
Python-rule tests.
"""

from __future__ import annotations

import json

import pytest

from conftest import DATA

from promptlint import registry

CASES = [
    pytest.param(rule, case, id=f"{code}-{case['name']}")
    for code, rule in registry.all_rules().items()
    for case in rule.cases
    if "template" in case
]


def test_every_rule_has_cases():
    # E003/E005 need files on disk rather than a template; they are covered in test_bad_input.py
    without = [c for c, r in registry.all_rules().items() if not r.cases and c not in ("E003", "E005")]
    assert not without, f"rules without pass/fail cases: {without}"


@pytest.mark.parametrize("rule,case", CASES)
def test_rule_case(rule, case, tmp_path, cli):
    name = case.get("filename", "case.j2")
    (tmp_path / name).write_text(case["template"], encoding="utf-8")
    if "samples" in case:
        stem = name.rsplit(".", 1)[0]
        (tmp_path / f"{stem}.samples.json").write_text(json.dumps(case["samples"]), encoding="utf-8")
    tok = DATA / "tokenizers" / case.get("tokenizer", "qwen2.5") / "tokenizer.json"
    r = cli("check", "--tokenizer", tok, "--output-format", "json", name, cwd=tmp_path)
    assert r.code in (0, 1), r.err
    doc = r.json()
    got = [f for f in doc["findings"] + doc["errors"] if f["code"] == rule.code]
    expect = case.get("expect", [])
    assert len(got) == len(expect), (got, expect)
    for g, e in zip(sorted(got, key=lambda f: (f["line"], f["column"])), expect):
        for key, value in e.items():
            assert g[key] == value, (key, g, e)
    if case.get("kind") == "pass":
        assert not expect
