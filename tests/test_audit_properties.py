"""Properties of the audit arithmetic on random traces, each against an independent oracle."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from promptlint.audit import fingerprints as fpm
from promptlint.audit.capacity import LRU, Curve, StackDistance, request_distances
from promptlint.audit.classify import waterfall
from promptlint.audit.ingest import Options, native
from promptlint.audit.pipeline import Auditor
from promptlint.audit.reconcile import reconcile
from promptlint.audit.summary import Summary
from promptlint.arithmetic.compare import eligible_tokens, shared_prefix

KEY = b"k" * 32


def random_trace(seed: int, n: int = 40, block: int = 16):
    """Requests built from a few shared stems plus fresh tails, random labels and flags."""
    rnd = random.Random(seed)
    stems = [[rnd.randrange(50) for _ in range(rnd.randrange(1, 90))] for _ in range(4)]
    rows = []
    for i in range(n):
        ids = list(rnd.choice(stems))[: rnd.randrange(0, 90)] + [rnd.randrange(50) for _ in range(rnd.randrange(1, 40))]
        rows.append({
            "request_id": f"q{i}", "arrival_ts": float(i), "instance": rnd.choice("ab"), "tenant": rnd.choice("xy"),
            "model_rev": "m", "block_size": block, "token_ids": ids, "prompt_tokens": len(ids),
            "cached_tokens": rnd.randrange(0, len(ids) + 1), "flags": {"prompt_logprobs": rnd.random() < 0.1},
            "template_inputs": {"tools": rnd.sample(["a", "b", "c"], 2)} if rnd.random() < 0.3 else None,
        })
    return rows


def audit_rows(rows, chunk=16, **kw):
    opts = Options(KEY, chunk)
    aud = Auditor(**kw)
    return [aud.one(native(r, "t", opts)) for r in rows]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1, 4, 16, 32]))
def test_waterfall_closes_and_lcp_is_brute_force(seed, block):
    rows = random_trace(seed, block=block)
    out = audit_rows(rows, capacity_blocks={"*": 4})
    for i, (r, o) in enumerate(zip(rows, out)):
        # S_all equals the brute-force longest common prefix against every earlier request
        brute = max([shared_prefix(r["token_ids"], e["token_ids"]) for e in rows[:i]] or [0])
        assert o["shared_tokens"] == brute
        same_inst = [e for e in rows[:i] if e["instance"] == r["instance"] and e["tenant"] == r["tenant"]]
        s_inst = max([shared_prefix(r["token_ids"], e["token_ids"]) for e in same_inst] or [0])
        P = len(r["token_ids"])
        assert o["ceiling_inst_tokens"] == eligible_tokens(s_inst, P, block)
        top = min(o["shared_tmpl_tokens"], P - 1) if P else 0
        assert sum(o["lost"].values()) + min(o["cached_tokens"], o["ceiling_tokens"]) == max(0, top)
        assert all(v >= 0 for v in o["lost"].values())


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400), st.integers(0, 400), st.integers(0, 400), st.integers(1, 400),
       st.sampled_from([1, 16, 64]), st.one_of(st.none(), st.integers(0, 400)), st.sampled_from(["U", "M5", "M7"]))
def test_waterfall_identity(a, b, c, d, P, B, O, rem):
    s = sorted([a, b, c, d], reverse=True)
    S = {"tmpl": s[0], "raw": s[0], "all": s[1], "tenant": s[2], "inst": s[3]}
    S = {k: min(v, P) for k, v in S.items()}
    v = waterfall(P, B, O, S, rem)
    assert v.top == sum(v.lost.values()) + v.counted_observed


def test_fingerprint_rows_equal_token_rows_when_g_divides_B():
    rows = random_trace(7, n=60, block=32)
    exact = audit_rows(rows)
    fp_rows = []
    for r in rows:
        q = dict(r)
        q["block_fp"] = fpm.chain_hex(q.pop("token_ids"), 16, KEY)
        q["fp_tokens"] = 16
        fp_rows.append(q)
    fp = audit_rows(fp_rows)
    for e, f in zip(exact, fp):
        for k in ("ceiling_tokens", "ceiling_all_tokens", "ceiling_tenant_tokens", "ceiling_inst_tokens", "class"):
            assert e[k] == f[k], (e["request_id"], k)


def test_checkpoint_intervals_contain_the_exact_ceiling():
    rnd = random.Random(3)
    stem = [rnd.randrange(9) for _ in range(1200)]
    rows = []
    for i in range(30):
        cut = rnd.randrange(0, 1200)
        ids = stem[:cut] + [100 + i] + [rnd.randrange(9) for _ in range(rnd.randrange(0, 300))]
        rows.append({"request_id": f"c{i}", "arrival_ts": float(i), "instance": "a", "tenant": "t", "model_rev": "m",
                     "block_size": 16, "token_ids": ids, "prompt_tokens": len(ids), "cached_tokens": 0})
    exact = audit_rows(rows)
    cp_rows = []
    for r in rows:
        q = dict(r)
        q["checkpoints"] = fpm.checkpoints_hex(q.pop("token_ids"), KEY)
        cp_rows.append(q)
    cps = audit_rows(cp_rows)
    checked = 0
    for e, c in zip(exact, cps):
        lo, hi = c["ceiling_interval"]
        assert lo <= e["ceiling_all_tokens"] <= hi, (e["request_id"], e["ceiling_all_tokens"], lo, hi)
        s_lo, s_hi = c["shared_interval"]
        assert s_lo <= e["shared_tokens"] <= s_hi
        checked += lo < hi
    assert checked  # some intervals are genuinely wide


def _lru_oracle(seqs, capacity):
    lru = LRU(capacity)
    return sum(lru.request(blocks, lookup) for blocks, lookup in seqs)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_mattson_equals_direct_lru(seed):
    rnd = random.Random(seed)
    # chained block ids: prefixes of a few random stems, so blocks name their whole prefix
    stems = [[(s, j) for j in range(rnd.randrange(1, 12))] for s in range(6)]
    seqs = []
    for _ in range(60):
        stem = rnd.choice(stems)
        blocks = stem[: rnd.randrange(0, len(stem) + 1)] + [("fresh", rnd.random())] * rnd.randrange(0, 2)
        seqs.append((blocks, rnd.randrange(0, len(blocks) + 1)))
    limit = 24
    stack, curve = StackDistance(limit), Curve(limit)
    for blocks, lookup in seqs:
        curve.add(request_distances(stack, blocks, lookup), 1)
    for cap in (1, 2, 3, 5, 8, 13, 24):
        assert curve.hit_tokens(cap) == _lru_oracle(seqs, cap), cap


def test_stack_distance_compaction_keeps_answers():
    # many touches force compaction (size = max(1024, 4*limit)); distances stay exact below the limit
    limit = 50
    sd = StackDistance(limit)
    rnd = random.Random(1)
    order = []
    for _ in range(5000):
        x = rnd.randrange(120)
        expect = None
        if x in order:
            d = len(order) - 1 - order.index(x)
            expect = d if d < limit else None
        assert sd.distance(x) == expect
        if x in order:
            order.remove(x)
        order.append(x)
        sd.touch(x)


def test_pooled_ratio_is_not_a_mean_of_ratios():
    rows = [
        {"request_id": "big", "instance": "a", "prompt_tokens": 1000, "cached_tokens": 1000},
        {"request_id": "small", "instance": "b", "prompt_tokens": 10, "cached_tokens": 0},
    ]
    s = Summary()
    for r in rows:
        s.add({**r, "tenant": "-", "model_rev": "-", "tokenizer_rev": "-", "template_rev": "-", "class": "U",
               "ceiling_tokens": None, "ceiling_inst_tokens": None, "lost": {}})
    d = s.as_dict()
    assert d["observed_ratio"] == 1000 / 1010  # ~0.990, the token-weighted answer
    per = [t["observed_ratio"] for t in d["by"]["instance"].values()]
    assert sum(per) / len(per) == 0.5  # what averaging would have said


def _scrape(q, h, created=1.0, cfg="16"):
    return {("vllm:prefix_cache_queries_total", frozenset({("engine", "0")})): q,
            ("vllm:prefix_cache_hits_total", frozenset({("engine", "0")})): h,
            ("vllm:prefix_cache_queries_created", frozenset({("engine", "0")})): created,
            ("vllm:cache_config_info", frozenset({("block_size", cfg)})): 1.0}


def test_zero_denominator_is_na():
    rec = reconcile({"a": (_scrape(100, 40), _scrape(100, 40))}, {})
    assert rec["instances"]["a"]["local_hit_ratio"] == "n/a"
    assert Summary().as_dict()["observed_ratio"] == "n/a"


def test_counter_reset_gives_no_ratio():
    rec = reconcile({"a": (_scrape(500, 200), _scrape(120, 30))}, {})
    assert rec["status"] == "reset detected"
    assert "local_hit_ratio" not in rec["instances"]["a"]
    assert "went down" in rec["instances"]["a"]["reason"]
    rec = reconcile({"a": (_scrape(500, 200), _scrape(900, 300, created=2.0))}, {})
    assert rec["status"] == "reset detected" and "re-created" in rec["reason"]
    rec = reconcile({"a": (_scrape(500, 200), _scrape(900, 300, cfg="32"))}, {})
    assert rec["status"] == "config changed" and "block_size" in rec["reason"]


def test_reconciliation_pools_deltas_and_reports_residual():
    pairs = {"a": (_scrape(1000, 0), _scrape(2000, 1000)), "b": (_scrape(0, 0), _scrape(10, 0))}
    trace = {"a": {"queried_tokens": 1000, "queried_cached_tokens": 990, "prompt_tokens": 1000},
             "b": {"queried_tokens": 10, "queried_cached_tokens": 0, "prompt_tokens": 10}}
    rec = reconcile(pairs, trace)
    assert rec["pooled"]["local_hit_ratio"] == 1000 / 1010
    assert rec["instances"]["a"]["local_hit_ratio"] == 1.0
    assert rec["instances"]["a"]["residual"] == {"queries": 0, "hits": 10}


def test_llamacpp_counters_reconcile_prompt_and_reused_tokens():
    # llama-server's /metrics: prompt_tokens_total excludes the reused tokens, which are
    # prompt_tokens_cached_total. The slot-log fixture's tasks (tests/test_audit_llamacpp.py):
    # 7,600 prompt tokens of which 2,769 reused, so 4,831 evaluated.
    lab = frozenset()
    before = {("llamacpp:prompt_tokens_total", lab): 100.0, ("llamacpp:prompt_tokens_cached_total", lab): 50.0}
    after = {("llamacpp:prompt_tokens_total", lab): 100.0 + 4831, ("llamacpp:prompt_tokens_cached_total", lab): 50.0 + 2769}
    rec = reconcile({"a": (before, after)}, {"a": {"prompt_tokens": 7600, "cached_tokens": 2769}})
    a = rec["instances"]["a"]
    assert rec["status"] == "ok"
    assert (a["prompt_tokens"], a["prompt_tokens_cached"]) == (7600, 2769)
    assert a["cached_prompt_ratio"] == 2769 / 7600
    assert a["residual"] == {"prompt_tokens": 0}
    restarted = {k: v - 100.0 for k, v in before.items()}  # counters went down: a restart, no ratio
    assert reconcile({"a": (after, restarted)}, {})["status"] == "reset detected"
