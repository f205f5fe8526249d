"""Records are built complete once, and the result's JSON is written from one typed record.

- A finding is frozen: a check hands its severity, cause, variant description and figures to
  ``kernel.finding``; nothing assigns an attribute afterwards (it raises), its notes cannot grow,
  and no module reaches around the freeze. The driver derives changed copies with
  ``dataclasses.replace``.
- ``records.Result.to_dict`` is the `json` document, its fields in the contract's order (the
  example in docs/output-formats.md).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import pytest

import import_graph
from conftest import REPO

import promptlint
from promptlint.base import records

PACKAGE_DIR = Path(promptlint.__file__).parent


def _m101(**complete):
    from promptlint.analysis.kernel import finding

    return finding("M101", "prompts/a.j2", "`now` changes on every request", 1, 15, 1, 24, variable="now",
                   notes=["vllm, block 16: eligible 1 block now"], **complete)


def test_a_finding_cannot_be_edited_after_it_is_built():
    f = _m101()
    for field, value in (("severity", "info"), ("cause", "other"), ("message", "x"), ("notes", []),
                         ("arithmetic", None), ("source_line", None), ("baseline", "new"), ("cost", None)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(f, field, value)
    assert isinstance(f.notes, tuple) and not hasattr(f.notes, "append")  # notes cannot grow either
    assert isinstance(f.models, tuple)


def test_every_record_a_finding_holds_is_frozen():
    """A finding's parts too: nothing can reach into a built finding and change its figures."""
    parts = [records.Finding, records.DivergentToken, records.Arithmetic, records.SourceLine, records.StoredAt,
             records.Cost, records.ModelHit, records.ReportContext]
    assert [c.__name__ for c in parts if not c.__dataclass_params__.frozen] == []


def test_a_check_hands_everything_to_the_constructor():
    """Severity, cause and the variant's description are the constructor's: the variant is the
    JSON `variant` and the first note, before the notes the check gives."""
    from promptlint.base.records import Arithmetic, DivergentToken

    token = DivergentToken(19, 21, 22, "6", "7", 29)
    arithmetic = Arithmetic(67, 19, 60, 16, 1, 3, 2, 32)
    f = _m101(severity="info", cause="other", variant_description="`now` on the next request: 1 → 2",
              first_divergent_token=token, arithmetic=arithmetic, evidence={"base_render": "a"})
    d = f.to_dict(evidence=True)
    assert d["severity"] == "info"  # the rule file says warning
    assert d["cause"] == "other" and d["variant"] == "`now` on the next request: 1 → 2"
    assert d["notes"] == ["variant: `now` on the next request: 1 → 2", "vllm, block 16: eligible 1 block now"]
    assert d["first_divergent_token"]["index"] == 19 and d["lost_blocks"] == 2 and d["evidence"] == {"base_render": "a"}
    assert _m101().to_dict()["severity"] == "warning" and "variant" not in _m101().to_dict()


def test_a_derived_copy_leaves_the_original_alone():
    f = _m101()
    marked = dataclasses.replace(f, baseline="new", notes=f.notes + ("included by b.j2",))
    assert f.baseline is None and f.notes == ("vllm, block 16: eligible 1 block now",)
    assert marked.baseline == "new" and marked.notes[-1] == "included by b.j2"


def test_the_cache_round_trip_gives_an_equal_frozen_finding():
    f = _m101(variant_description="v", cause="c", source_line=records.SourceLine("Time: {{ now }}"))
    back = records.finding_from_dict(f.to_dict(evidence=True, internal=True))
    assert back == f and isinstance(back.notes, tuple)


def test_no_module_reaches_around_the_freeze():
    """`object.__setattr__` on a record is editing it in place; only records.py (turning the lists
    a constructor is given into tuples) may call it."""
    found = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if path.relative_to(PACKAGE_DIR).as_posix() == "base/records.py":
            continue
        for node in import_graph.walk(path.read_text(encoding="utf-8")):  # parsed and walked once per process (tests/import_graph.py)
            if (isinstance(node, ast.Attribute) and node.attr == "__setattr__" and isinstance(node.value, ast.Name)
                    and node.value.id == "object"):
                found.append(f"{path.relative_to(PACKAGE_DIR)}:{node.lineno}")
    assert found == []


def _documented_example() -> dict:
    """The `json` example of docs/output-formats.md (the contract's field order)."""
    text = (REPO / "docs" / "output-formats.md").read_text(encoding="utf-8")
    block = re.search(r"```json\n(\{\n  \"version\".*?)\n```", text, re.S).group(1)
    return json.loads(block)


def test_the_json_document_has_the_contract_fields_in_order():
    class Spec:  # records.TokenizerShown: what a tokens.TokenizerSpec offers
        path, embedded, display = Path("/abs/models/qwen/tokenizer.json"), False, "qwen"

    result = records.Result(findings=[_m101()], files=1, tokenizer=Spec(), tokenizer_sha256="6f2c")
    doc = result.to_dict("9.9.9")
    example = _documented_example()
    assert list(doc) == list(example)
    assert list(doc["tokenizer"]) == list(example["tokenizer"])
    assert doc["tokenizer"] == {"path": "/abs/models/qwen/tokenizer.json", "sha256": "6f2c", "embedded": False}
    assert doc["version"] == "9.9.9" and doc["files"] == 1 and doc["skipped_scenarios"] == []
    assert list(doc["findings"][0])[:10] == list(example["findings"][0])[:10]
    # `tokenizers` and --baseline extend it, after the contract's fields
    with_models = dataclasses.replace(result, models=(records.ModelRun("qwen", None, "6f2c", "vllm", 16),))
    assert list(with_models.to_dict("9.9.9"))[-1] == "models"
    assert with_models.to_dict("9.9.9")["models"] == [
        {"name": "qwen", "path": None, "sha256": "6f2c", "engine": "vllm", "block_size": 16}]
