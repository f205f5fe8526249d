"""`audit`: a cold request that agrees again with its tenant's previous request after a few
tokens (a timestamp at token 8) names that volatile value instead of a bare M0."""

from __future__ import annotations

import json


def _row(rid, ts, tenant, ids):
    return {"request_id": rid, "arrival_ts": ts, "instance": "a", "tenant": tenant, "model_rev": "m-1",
            "tokenizer_rev": "tok-1", "template_rev": "tpl-1", "engine": "vllm", "block_size": 16,
            "prompt_tokens": len(ids), "cached_tokens": 0, "token_ids": ids}


def test_a_timestamp_at_token_8_is_named_on_the_cold_row(cli, tmp_path):
    head = list(range(1000, 1008))  # 8 shared tokens: under one 16-token block, so nothing is cacheable
    body = list(range(2000, 2300))  # 300 tokens the two requests share after the stamp
    rows = [_row("a", 0.0, "t1", head + [5, 6] + body),  # the stamp: two tokens, then one
            _row("b", 1.0, "t1", head + [7] + body),
            _row("c", 2.0, "t1", list(range(3000, 3300))),  # really cold: nothing in common with b
            _row("d", 3.0, "t2", head + [9] + body)]  # another tenant: not compared with t1's requests
    trace = tmp_path / "trace.jsonl"
    trace.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    done = cli("audit", trace, "--output-format", "json")
    assert done.code == 0, done.err
    req = {r["request_id"]: r for r in done.json()["requests"]}
    assert req["b"]["class"] == "M0"
    # a's stamp is 2 tokens, b's 1; then the 300 body tokens agree again
    assert req["b"]["evidence"][0] == ("volatile value at token 8: 1 tokens differ from the tenant's previous request a, "
                                       "then 300 agree again (a time or id rendered before shared content; move it after)")
    for rid in "acd":
        assert not any(e.startswith("volatile value") for e in req[rid]["evidence"]), rid
