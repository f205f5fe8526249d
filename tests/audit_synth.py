"""The synthetic trace of audit-inputs §7.4 (seeded, integer token ids, no tokenizer).

Shared by the audit tests; every expected value is worked out by hand in EXPECTED from
``floor(min(S, P-1)/B)*B`` with B = 16, not produced by the code under test.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Dict, List

B = 16
C = 8  # capacity in blocks for instance a
_fresh = itertools.count(10_000)


def fresh(n: int) -> List[int]:
    return [next(_fresh) for _ in range(n)]


def row(rid, ts, inst, tenant, ids, O, tok_rev="tok-1", **extra) -> Dict[str, Any]:
    r = {"request_id": rid, "arrival_ts": ts, "instance": inst, "tenant": tenant, "model_rev": "m-1",
         "tokenizer_rev": tok_rev, "template_rev": "tpl-1", "engine": "vllm", "block_size": B,
         "prompt_tokens": len(ids), "cached_tokens": O, "token_ids": ids}
    r.update(extra)
    return r


TOOL_A = {"type": "function", "function": {"name": "alpha", "parameters": {"type": "object"}}}
TOOL_B = {"type": "function", "function": {"name": "beta", "parameters": {"type": "object"}}}
T0 = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u0"}], "tools": [TOOL_A, TOOL_B]}
T1 = {"messages": T0["messages"] + [{"role": "assistant", "content": "a0"}, {"role": "user", "content": "u1"}],
      "tools": [TOOL_A, TOOL_B]}
T5 = dict(T1, tools=[TOOL_B, TOOL_A])


def build():
    """(rows, kv_events) in arrival order."""
    r0 = fresh(100)
    rows = [
        row("r0", 0.0, "a", "t1", r0, 0, template_inputs=T0),
        row("r1", 1.0, "a", "t1", r0 + fresh(20), 96, template_inputs=T1),
        row("r2", 2.0, "b", "t1", r0 + fresh(7), 0),
        row("r3", 3.0, "a", "t2", r0 + fresh(9), 0),
        # same template inputs as r0, bumped tokenizer: token 40 differs
        row("r4", 4.0, "a", "t1", r0[:40] + fresh(60), 32, tok_rev="tok-2", template_inputs=T0),
        # r1's inputs with the two tools swapped: tokens differ from 50 on
        row("r5", 5.0, "a", "t1", r0[:50] + fresh(70), 48, template_inputs=T5),
    ]
    r1_ids = rows[1]["token_ids"]
    rows.append(row("r6", 6.0, "a", "t1", list(r1_ids), 0, flags={"prompt_logprobs": True}))
    rows.append(row("f1", 7.1, "a", "t1", fresh(80), 0))  # filler: 5 + 5 = 10 distinct blocks > C
    rows.append(row("f2", 7.2, "a", "t1", fresh(80), 0))
    rows.append(row("r7", 8.0, "a", "t1", r0 + fresh(12), 0))
    rows.append(row("f3", 8.5, "a", "t1", fresh(48), 0))  # 3 blocks < C
    rows.append(row("r8", 9.0, "a", "t1", r0 + fresh(14), 0))
    r9 = fresh(97)
    rows.append(row("r9a", 10.0, "a", "t1", r9, 0))
    rows.append(row("r9", 11.0, "a", "t1", list(r9), 96))
    # KV events on a: r0's six full blocks stored, block 0 removed before r7, r7 re-stores
    events = [
        {"instance": "a", "seq": 1, "ts": 0.5, "events": [
            {"type": "BlockStored", "block_hashes": [101, 102, 103, 104, 105, 106], "parent_block_hash": None,
             "token_ids": r0[:96], "block_size": 16, "extra_keys": ["tenant-salt-secret"]}]},
        {"instance": "a", "seq": 2, "ts": 7.5, "events": [{"type": "BlockRemoved", "block_hashes": [101]}]},
        {"instance": "a", "seq": 3, "ts": 8.2, "events": [
            {"type": "BlockStored", "block_hashes": [201], "parent_block_hash": None, "token_ids": r0[:16],
             "block_size": 16}]},
    ]
    return rows, events


def zero(**lost):
    base = {k: 0 for k in ("M3", "M2", "M1", "M4", "M6", "M7", "M5", "U")}
    base.update(lost)
    return base


# request_id -> (class, shared_tokens S_all, ceiling_tokens E_tmpl, ceiling_inst_tokens E_inst, lost)
EXPECTED = {
    "r0": ("M0", 0, 0, 0, zero()),
    "r1": ("HIT", 100, 96, 96, zero(M3=4)),
    "r2": ("M6", 100, 96, 0, zero(M3=4, M6=96)),
    "r3": ("M4", 100, 96, 0, zero(M3=4, M4=96)),
    "r4": ("M1", 40, 96, 32, zero(M3=3, M1=64)),  # S_tmpl = 100 -> min(100, 99) = 99, E_tmpl 96
    "r5": ("M2", 50, 112, 48, zero(M3=7, M2=64)),  # S_tmpl = 120 (r1's canonical inputs) -> 119, E 112
    "r6": ("M7", 120, 112, 112, zero(M3=7, M7=112)),
    "f1": ("M0", 0, 0, 0, zero()),
    "f2": ("M0", 0, 0, 0, zero()),
    "r7": ("M5", 100, 96, 96, zero(M3=4, M5=96)),
    "f3": ("M0", 0, 0, 0, zero()),
    "r8": ("U", 100, 96, 96, zero(M3=4, U=96)),
    "r9a": ("M0", 0, 0, 0, zero()),
    "r9": ("HIT", 97, 96, 96, zero()),  # last-token rule: floor(96/16)*16 = 96, not 97
}


def write(tmp_path):
    rows, events = build()
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ev = tmp_path / "events.jsonl"
    ev.write_text("".join(json.dumps(e) + "\n" for e in events))
    return trace, ev
