"""The quick schema check (promptlint/schemas/quick.py): a cold check of a valid project imports no
jsonschema, and wherever the quick check decides it agrees with jsonschema itself."""

from __future__ import annotations

import copy
import glob
import math
import os
import shutil
import subprocess
import sys
import tomllib
from datetime import date, datetime

import jsonschema
import pytest

from conftest import QWEN, REPO
from promptlint.schemas import quick, schema, validate

SHA = "0123456789abcdef" * 4

CONFIGS = [
    {},
    {"tokenizer": "tok/tokenizer.json"},
    {"tokenizer": "t.json", "tokenizer-sha256": SHA, "block-size": 16, "engine": "vllm", "select": ["M1", "E"]},
    {"tokenizer": "t.json", "tokenizer-sha256": SHA + "\n"},  # `$` matches before a final newline (re.search), as in jsonschema
    {"tokenizers": {"a": "x.json", "b": {"path": "y.json", "sha256": SHA, "block-size": 32, "engine": "sglang"}}},
    {"render-timeout": 2.5, "analysis-timeout": 30, "per-file-ignores": {"a/*.j2": ["M101"]}, "exclude": ["x"]},
    {"block-size": 16.0},  # 16.0 is an integer in JSON Schema
    # invalid ones: each must be judged invalid (False) or left to jsonschema (None), never True
    {"block-size": 0}, {"block-size": 65537}, {"block-size": True}, {"block-size": 1.5}, {"block-size": "16"},
    {"tokenizer-sha256": "abc"}, {"tokenizer-sha256": SHA.upper()[:-1] + "g"}, {"select": ["m101"]}, {"select": "M101"},
    {"engine": "tgi"}, {"engine": 1}, {"unknown-key": 1}, {"tokenizers": {}}, {"tokenizers": {"a": ""}},
    {"tokenizers": {"a": {"sha256": SHA}}}, {"tokenizers": {"a": {"path": "p", "extra": 1}}}, {"tokenizers": {"a": 3}},
    {"render-timeout": 0}, {"render-timeout": -1}, {"render-timeout": 601}, {"render-timeout": math.inf},
    {"render-timeout": math.nan}, {"analysis-timeout": False}, {"template-env": "mako"}, {"exclude": [1]},
    {"tokenizer": datetime(2025, 1, 1)}, [], "x", None,
]

SAMPLES = [
    {"variables": {"now": {"value": "2025-01-01T00:00:00Z", "kind": "volatile", "sub-kind": "timestamp"}}},
    {"variables": {"name": "Ada", "when": {"value": datetime(2025, 3, 14, 9, 26)}, "day": date(2025, 3, 14)}},
    {"variables": {"kind": "volatile"}},  # a plain value that happens to be a string
    {"variables": {"x": {"kind": "static"}}},  # a table with `kind` but no `value`: invalid
    {"variables": {"x": {"value": 1, "kind": "sometimes"}}}, {"variables": {"x": {"value": 1, "other": 2}}},
    {"variables": {"x": {"value": [1, 2], "order": "unordered", "sort-key": ""}}},
    {"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}], "add_generation_prompt": True},
    {"messages": []}, {"messages": [{"content": "no role"}]}, {"messages": [{"role": 1}]}, {"tools": [1]},
    {"continue_final_message": "content"}, {"continue_final_message": 1}, {"reply": {"role": "assistant"}}, {"reply": 3},
    {"include-choices": {"policy": ["a.txt", "b.txt"]}}, {"include-choices": {"policy": []}},
    {"include-choices": {"policy": [""]}}, {"tools-order": "pinned"}, {"tools-order": "sorted"},
    {"tools-sort-key": ""}, {"documents-sort-key": "title"}, {"typo": 1},
]


def _rule_case_samples():
    out = []
    for path in sorted(glob.glob(str(REPO / "rules" / "*.toml"))):
        with open(path, "rb") as f:
            out += [case["samples"] for case in tomllib.load(f).get("cases", []) if "samples" in case]
    return out


def _agrees(name: str, doc) -> bool:
    verdict = quick.check(schema(name), doc)
    valid = not list(jsonschema.Draft202012Validator(schema(name)).iter_errors(doc))
    assert verdict in (None, valid), (name, doc, verdict, valid)
    return verdict is not None


@pytest.mark.parametrize("name,docs", [("config", CONFIGS), ("samples", SAMPLES)])
def test_every_decision_is_jsonschemas(name, docs):
    decided = [_agrees(name, doc) for doc in docs]
    # the quick check decides nearly everything here (only values it does not type are left: dates)
    assert sum(decided) >= len(docs) - 3, decided


def test_rule_cases_samples_agree_and_mutations_never_pass():
    docs = _rule_case_samples()
    assert len(docs) >= 20
    vouched = 0
    for doc in docs:
        _agrees("samples", doc)
        vouched += quick.check(schema("samples"), doc) is True
        broken = copy.deepcopy(doc)
        broken["variables" if "variables" in broken else "messages"] = 7  # neither an object nor an array
        _agrees("samples", broken)
        assert validate("samples", broken) is not None
    assert vouched >= len(docs) - 3  # the cases of invalid samples files (E-rules) are the rest


def test_cold_check_of_a_valid_project_imports_no_jsonschema(tmp_path):
    (tmp_path / "tok").mkdir()
    shutil.copy(QWEN, tmp_path / "tok" / "tokenizer.json")
    (tmp_path / "promptlint.toml").write_text('tokenizer = "tok/tokenizer.json"\nblock-size = 16\n', encoding="utf-8")
    (tmp_path / "a.j2").write_text("Request {{ rid }}\n" + "Shared rules of the shop. " * 20 + "\nQ: {{ q }}\n",
                                   encoding="utf-8")
    (tmp_path / "a.samples.toml").write_text('[variables]\nrid = { value = "req-1", kind = "volatile", sub-kind = "id" }\n',
                                             encoding="utf-8")
    code = ("import sys\nfrom promptlint.cli import main\nrc = main(['check', '--no-cache', '--output-format', 'concise'])\n"
            "print('MODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))\nsys.exit(rc)")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(REPO), PROMPTLINT_JOBS="1"))
    out, _, mods = r.stdout.rpartition("MODULES ")
    assert r.returncode == 1 and "a.j2:1:" in out and "M101" in out, r.stdout + r.stderr
    assert "jinja2" in mods.split() and "jsonschema" not in mods.split()


def test_an_invalid_config_still_gets_jsonschemas_message(tmp_path, cli):
    (tmp_path / "promptlint.toml").write_text("block-size = 0\n", encoding="utf-8")
    (tmp_path / "a.j2").write_text("hi\n", encoding="utf-8")
    r = cli("check", "a.j2", cwd=tmp_path)
    assert r.code == 2 and "`block-size`: 0 is less than the minimum of 1" in r.err
