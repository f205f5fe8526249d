"""Every [[cases]] entry of every rule file in rules/ runs as a test (sqlfluff's YAML cases, in TOML).

A case gives a `template` (and optionally `samples`, `tokenizer`, `filename`) and the
findings it must produce (`[[cases.expect]]`: code, line, and optionally column/variable);
a pass case expects none of the rule's own code. Cases with a `python` key are run by the
Python-rule tests.

A case with `chat = { bos_token = ..., eos_token = ... }` is a Hugging Face chat template: it is
linted as a model directory (the tokenizer's tokenizer.json, a tokenizer_config.json holding the
template and those special tokens, `samples` as its chat samples file). An expectation
`token = N` checks the first divergent token against a direct `tokenizers` encode of both renders
(the evidence), not promptlint's own arithmetic.
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import DATA
from reference_tokenizers import of_file

from promptlint.base import registry

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
def test_rule_case(rule, case, tmp_path, check_in_memory):
    r, tok = run_case(case, tmp_path, check_in_memory)
    expect = case.get("expect", [])
    assert r.code in (0, 1), r.err
    doc = r.json()
    got = [f for f in doc["findings"] + doc["errors"] if f["code"] == rule.code]
    assert len(got) == len(expect), (got, expect)
    for g, e in zip(sorted(got, key=lambda f: (f["line"], f["column"])), expect):
        for key, value in e.items():
            if key == "token":
                assert g["first_divergent_token"]["index"] == value == _direct_divergence(tok, g["evidence"]), g
            else:
                assert g[key] == value, (key, g, e)
    if case.get("kind") == "pass":
        assert not expect


def run_case(case, tmp_path, check):
    """Lay out a rule case in ``tmp_path`` and lint it (JSON output) with ``check(*args, cwd=)``
    (conftest's ``check_in_memory``: one parse of each tokenizer per test run; or ``cli``):
    (result, tokenizer.json used)."""
    tok = DATA / "tokenizers" / case.get("tokenizer", "qwen2.5") / "tokenizer.json"
    args = list(case.get("args", []))
    if any("token" in e for e in case.get("expect", [])):
        args.append("--evidence")
    if "chat" in case:
        target = tmp_path / "model"
        target.mkdir()
        os.symlink(tok, target / "tokenizer.json")
        config = {**case["chat"], "chat_template": case["template"]}
        (target / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
        if "samples" in case:
            (target / "chat_template.samples.json").write_text(json.dumps(case["samples"]), encoding="utf-8")
        r = check("--output-format", "json", *args, "model", cwd=tmp_path)
    else:
        name = case.get("filename", "case.j2")
        (tmp_path / name).write_text(case["template"], encoding="utf-8")
        if "samples" in case:
            stem = name.rsplit(".", 1)[0]
            (tmp_path / f"{stem}.samples.json").write_text(json.dumps(case["samples"]), encoding="utf-8")
        r = check("--tokenizer", tok, "--output-format", "json", *args, name, cwd=tmp_path)
    return r, tok


def _direct_divergence(tokenizer_json, evidence) -> int:
    """First index where the two renders' token ids differ, by a plain `tokenizers` encode (its own parse
    of the file, once per test process: tests/reference_tokenizers.py)."""
    tok = of_file(tokenizer_json)
    special = evidence["add_special_tokens"]
    a = tok.encode(evidence["base_render"], add_special_tokens=special).ids
    b = tok.encode(evidence["variant_render"], add_special_tokens=special).ids
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return i
