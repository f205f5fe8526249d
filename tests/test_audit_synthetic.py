"""audit-inputs §7.4: the synthetic trace with every expected value asserted."""

from __future__ import annotations

import json

import pytest

from promptlint.cli import main
import audit_synth as syn


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("synth")
    trace, events = syn.write(tmp)
    sheet = tmp / "sheet.jsonl"
    out = tmp / "out.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["audit", str(trace), "--output-format", "json", "--kv-events", str(events),
                   "--capacity-blocks", f"a={syn.C}", "--worksheet", str(sheet)])
    assert rc == 0
    return json.loads(buf.getvalue()), [json.loads(l) for l in sheet.read_text().splitlines()], tmp


@pytest.mark.parametrize("rid", list(syn.EXPECTED))
def test_row_matches_table(result, rid):
    data, sheet, _ = result
    req = {r["request_id"]: r for r in data["requests"]}[rid]
    cls, shared, ceil, ceil_inst, lost = syn.EXPECTED[rid]
    assert req["class"] == cls
    assert req["shared_tokens"] == shared
    assert req["ceiling_tokens"] == ceil
    assert req["ceiling_inst_tokens"] == ceil_inst
    assert {k: req["lost"].get(k, 0) for k in lost} == lost
    # waterfall closes: sum of losses + observed (as counted) = min(S_tmpl, P-1)
    row = {r["request_id"]: r for r in sheet}[rid]
    top = min(row["shared_tmpl_tokens"], row["prompt_tokens"] - 1)
    assert sum(row["lost"].values()) + min(row["cached_tokens"], row["ceiling_tokens"]) == top


def test_evidence(result):
    data, _, _ = result
    req = {r["request_id"]: r for r in data["requests"]}
    assert any("BlockRemoved seq=2" in e for e in req["r7"]["evidence"])
    assert any("tokenizer_rev tok-1->tok-2" in e for e in req["r4"]["evidence"])
    assert any("canonical template inputs equal r1" in e for e in req["r5"]["evidence"])
    assert any("prompt_logprobs" in e for e in req["r6"]["evidence"])
    assert req["r2"]["evidence"][0].startswith("partner r")


def test_summary_totals(result):
    data, _, _ = result
    s = data["summary"]
    P = sum(len(r["token_ids"]) for r in syn.build()[0])
    assert s["prompt_tokens"] == P
    assert s["cached_tokens"] == 96 + 32 + 48 + 96
    assert s["ceiling_tokens"] == sum(v[2] for v in syn.EXPECTED.values())
    assert s["classes"]["M6"] == {"requests": 1, "tokens": 96, "share": 96 / P}
    assert s["classes"]["M0"]["requests"] == 5
    assert s["classes"]["M0"]["tokens"] == 100 + 80 + 80 + 48 + 97  # r0, f1, f2, f3, r9a
    assert s["classes"]["HIT"] == {"requests": 2, "tokens": 96 + 96, "share": 192 / P}
    assert s["classes"]["M3"]["tokens"] == 4 * 5 + 3 + 7 + 7  # r1 r2 r3 r7 r8, r4, r5, r6
    assert s["by"]["instance"]["b"]["ceiling_inst_ratio"] == 0.0
    assert s["reconciliation"] == {"status": "not requested"}


def test_no_prompt_or_salt_written(result):
    data, sheet, tmp = result
    text = json.dumps(data) + (tmp / "sheet.jsonl").read_text()
    assert "tenant-salt-secret" not in text
    assert '"u0"' not in text and "alpha" not in text
    rows, _ = syn.build()
    assert str(rows[0]["token_ids"][:5])[1:-1] not in text
