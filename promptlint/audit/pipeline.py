"""Stream requests through index -> classify -> capacity, one worksheet row each."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from promptlint.audit.capacity import Curve
from promptlint.audit.classify import Verdict, ceiling, waterfall
from promptlint.audit.fingerprints import CHECKPOINT_TOKENS
from promptlint.audit.index import DEFAULT_INDEX_BLOCKS, PrefixIndex, prefix_run
from promptlint.audit.instances import NO_M, Partition, item as capacity_item
from promptlint.audit.records import AuditRequest, block_fps, flag, lookup_skipped
from promptlint.audit.volatile import Recent


class Auditor:
    def __init__(self, index_limit: int = DEFAULT_INDEX_BLOCKS, capacity_blocks: Optional[Dict[str, int]] = None,
                 curve_limit: int = 0, kv_events: Any = None) -> None:
        self.index = PrefixIndex(index_limit)
        self.capacity = capacity_blocks or {}  # instance (or "*") -> blocks
        self.curve_limit = curve_limit
        self.kv = kv_events
        stack_limit = max([curve_limit] + list(self.capacity.values()) + [0])
        self.stack_limit = stack_limit
        self.stacks = Partition(stack_limit, curve_limit)  # every instance's stack, unless partitioned
        self.partitioned = False  # True: the capacity stage ran elsewhere and set each request's stack_m
        self.remote_curves: List[Curve] = []  # gathered from those partitions at the end
        self.trace_sums: Dict[str, Dict[str, int]] = {}  # instance -> sums for reconciliation
        self.bounded = 0  # requests looked up after their shard dropped a generation
        self.series: Any = None  # --scrape: per-interval trace sums (audit.series.Series)
        self.recent = Recent()  # each tenant's last exact request: a cold row's early divergence

    def _capacity(self, instance: str) -> Optional[int]:
        return self.capacity.get(instance, self.capacity.get("*"))

    def audit(self, reqs: Iterable[AuditRequest]) -> Iterator[Dict[str, Any]]:
        for r in reqs:
            yield self.one(r)

    def one(self, r: AuditRequest) -> Dict[str, Any]:
        """Classify one request, then add it to the index (a request never matches itself)."""
        if self.kv is not None:
            self.kv.advance(r.arrival_ts)
        row = _row_labels(r)
        if not r.identity:
            evidence = ["no token identity (usage only): pass token ids, fingerprints or "
                        "a tokenizer and chat template to derive them"]
            if "not_derived" in r.flags:
                evidence.append(f"token ids not derived: {r.flags['not_derived']}")
            row.update({"class": "U", "shared_tokens": None, "ceiling_tokens": None, "ceiling_inst_tokens": None,
                        "lost": {}, "evidence": evidence})
            return self._finish(row, r)
        shard = self.index.shard(r.model_rev, r.chunk)
        if shard.rotations:
            self.bounded += 1  # looked back over the horizon only: a partner may have been forgotten
        evidence: List[str] = []
        S, interval, partner = self._shared_prefixes(shard, r, evidence)
        _template_matches(shard, r, S, evidence)
        bfps = block_fps(r.fps, r.chunk, r.block_size) if r.fps else None
        remainder, stack_m = self._remainder(r, bfps, self._stack_m(r), evidence)
        _flag_notes(r, evidence)
        v = waterfall(r.prompt_tokens, r.block_size, r.cached_tokens, S, remainder, r.engine)
        if partner is not None and v.ceilings["all"]:
            evidence.insert(0, f"partner {partner}")
        if v.over_ceiling:
            evidence.append(f"over ceiling by {v.over_ceiling} tokens (connector/host tier, or cache older than the trace)")
        row.update(_verdict_fields(r, S, v, partner, stack_m, evidence))
        if r.ids is not None:
            _volatile_hint(self.recent.check(r.model_rev, r.tenant, r.request_id, r.ids, v.cls in ("M0", "U")), v, evidence)
        if interval is not None:
            P, B = r.prompt_tokens, r.block_size
            row["shared_interval"] = interval
            row["ceiling_interval"] = [ceiling(interval[0], P, B, r.engine), ceiling(interval[1], P, B, r.engine)]
        _insert(shard, r)
        return self._finish(row, r)

    def _shared_prefixes(self, shard, r: AuditRequest,
                         evidence: List[str]) -> Tuple[Dict[str, int], Optional[List[int]], Optional[str]]:
        """S_all, S_tenant, S_inst (tokens), the checkpoint interval if any, and the partner."""
        if r.source == "checkpoint":
            return self._checkpoints(shard, r)
        g, fps = r.chunk, r.fps
        partner = None
        k_all = prefix_run(fps, shard.all)
        s_all = k_all * g
        if k_all:
            partner = shard.all.get(fps[k_all - 1])
        if r.ids is not None:
            extra, who = shard.exact_tail(k_all, fps, r.ids, g)
            if extra:
                s_all += extra
                partner = who
        k_ten = prefix_run(fps, shard.scope((r.tenant,)), k_all)
        k_inst = prefix_run(fps, shard.scope((r.tenant, r.instance)), k_ten)
        S = {"all": s_all, "tenant": k_ten * g, "inst": k_inst * g}
        if k_ten == k_all:
            S["tenant"] = s_all  # same chunks: the exact tail is the same tail
            if k_inst == k_ten:
                S["inst"] = s_all
        if r.block_size % g:
            evidence.append(f"fingerprint chunk {g} does not divide block size {r.block_size}: ceilings are lower bounds")
        return S, None, partner

    def _stack_m(self, r: AuditRequest) -> Any:
        """m_j of the first block the engine did not serve (NO_M when there is none): from the
        capacity stage when it ran elsewhere, else from this process's stacks."""
        if self.partitioned:
            return r.stack_m  # None: deeper than the tracked limit
        if not self.stack_limit:
            return NO_M
        it = capacity_item(r)
        return NO_M if it is None else self.stacks.run([it])[0]

    def _remainder(self, r: AuditRequest, bfps: Optional[List[str]], m: Any,
                   evidence: List[str]) -> Tuple[str, Optional[int]]:
        """The class of E_inst - O (unobserved, M7, M5 or U) and the first missing block's stack distance."""
        O, B = r.cached_tokens, r.block_size
        remainder = "U"
        stack_m = None
        if O is None:
            remainder = "unobserved"
            evidence.append("no observed cached tokens (what-if)")
        elif lookup_skipped(r):
            remainder = "M7"
            evidence.append("caching disabled" if flag(r, "caching_disabled") else "prompt_logprobs skips the cache lookup")
        if remainder == "U" and O is not None and bfps is not None:
            j = O // B
            if self.kv is not None and j < len(bfps):
                proof = self.kv.proof(r.instance, bfps[j])
                if proof:
                    remainder = "M5"
                    evidence.append(f"eviction proven: {proof}")
            cap = self._capacity(r.instance)
            if m != NO_M:
                stack_m = m
                if remainder == "U" and cap is not None and (stack_m is None or stack_m >= cap):
                    remainder = "M5"
                    evidence.append(f"eviction inferred: stack distance {'>= limit' if stack_m is None else stack_m} >= capacity {cap} blocks")
        return remainder, stack_m

    def _checkpoints(self, shard, r: AuditRequest) -> Tuple[Dict[str, int], List[int], Optional[str]]:
        """Largest checkpoint shared in each scope: S lies in [c_k, next checkpoint - 1]."""
        levels = [n for n in CHECKPOINT_TOKENS if n <= r.prompt_tokens]
        got = {}
        partner = None
        for scope, gens in (("all", (shard.all, shard.sparse_all)),
                            ("tenant", (shard.scope((r.tenant,)), shard.scope((r.tenant,), True))),
                            ("inst", (shard.scope((r.tenant, r.instance)), shard.scope((r.tenant, r.instance), True)))):
            best = 0
            for n in levels:
                fp = r.checkpoints.get(n)
                if fp is not None and any(fp in gsn for gsn in gens):
                    best = n
                    if scope == "all":
                        partner = gens[0].get(fp) or gens[1].get(fp)
                else:
                    break
            got[scope] = best
        lo = got["all"]
        nxt = [n for n in CHECKPOINT_TOKENS if n > lo]
        hi = min(r.prompt_tokens, nxt[0] - 1) if nxt else r.prompt_tokens
        return got, [lo, hi], partner

    def _finish(self, row: Dict[str, Any], r: AuditRequest) -> Dict[str, Any]:
        r.ids = None  # token ids never outlive their row
        t = self.trace_sums.get(r.instance)
        if t is None:
            t = self.trace_sums[r.instance] = {"requests": 0, "prompt_tokens": 0, "cached_tokens": 0,
                                               "queried_tokens": 0, "queried_cached_tokens": 0}
        O = r.cached_tokens or 0
        t["requests"] += 1
        t["prompt_tokens"] += r.prompt_tokens
        t["cached_tokens"] += O
        queried = not lookup_skipped(r) and not flag(r, "preempted")
        if queried:
            t["queried_tokens"] += r.prompt_tokens
            t["queried_cached_tokens"] += O
        if self.series is not None:
            self.series.add(r.instance, r.arrival_ts, r.prompt_tokens, O, queried)
        if "ttft_s" not in row:
            row["ttft_s"] = r.ttft_s
        return row

    def curve(self) -> Optional[Curve]:
        curves = self.stacks.curve_list() + self.remote_curves
        if not curves:
            return None
        total = Curve(self.curve_limit)
        for c in curves:
            total.merge(c)
        return total


def _row_labels(r: AuditRequest) -> Dict[str, Any]:
    return {
        "request_id": r.request_id, "arrival_ts": r.arrival_ts, "instance": r.instance, "tenant": r.tenant,
        "model_rev": r.model_rev, "tokenizer_rev": r.tokenizer_rev, "template_rev": r.template_rev,
        "engine": r.engine, "tokens_source": r.source, "prompt_tokens": r.prompt_tokens, "block_size": r.block_size,
        "cached_tokens": r.cached_tokens,
    }


def _template_matches(shard, r: AuditRequest, S: Dict[str, int], evidence: List[str]) -> None:
    """S_raw and S_tmpl: an earlier request with the same (raw / canonical) template inputs."""
    S["raw"] = S["tmpl"] = S["all"]
    for name, d in (("raw", r.tmpl_raw), ("tmpl", r.tmpl_canon)):
        if not d:
            continue
        hit = (shard.raw if name == "raw" else shard.canon).get(d)
        if hit is None:
            continue
        s = min(r.prompt_tokens, hit[0])
        if s <= S[name]:
            continue
        S[name] = s
        if name == "raw":
            diffs = [f"{f} {a}->{b}" for f, a, b in (("tokenizer_rev", hit[2], r.tokenizer_rev),
                                                     ("template_rev", hit[3], r.template_rev)) if a != b]
            evidence.append(f"same template inputs as {hit[1]}" + (f"; revs differ: {', '.join(diffs)}" if diffs else ""))
        else:
            evidence.append(f"canonical template inputs equal {hit[1]}'s, raw differ (order/serialization)")
    S["tmpl"] = max(S["tmpl"], S["raw"])


def _flag_notes(r: AuditRequest, evidence: List[str]) -> None:
    for k in ("ids_truncated", "preempted"):
        if flag(r, k):
            evidence.append(k.replace("_", " "))
    if "derived_length" in r.flags:
        evidence.append(f"derived tokens: {r.flags['derived_length']} rendered vs {r.prompt_tokens} reported")


def _verdict_fields(r: AuditRequest, S: Dict[str, int], v: Verdict, partner: Optional[str],
                    stack_m: Optional[int], evidence: List[str]) -> Dict[str, Any]:
    O = r.cached_tokens
    return {
        "class": v.cls, "shared_tokens": S["all"], "shared_tmpl_tokens": max(S["tmpl"], S["all"]),
        "shared_tenant_tokens": S["tenant"], "shared_inst_tokens": S["inst"], "partner": partner,
        "ceiling_tokens": v.ceilings["tmpl"], "ceiling_all_tokens": v.ceilings["all"],
        "ceiling_tenant_tokens": v.ceilings["tenant"], "ceiling_inst_tokens": v.ceilings["inst"],
        "gap_tokens": None if O is None else v.ceilings["inst"] - O,
        "over_ceiling_tokens": v.over_ceiling, "counted_observed_tokens": v.counted_observed,
        "lost": {k: n for k, n in v.lost.items()}, "stack_m": stack_m, "evidence": evidence,
    }


def _volatile_hint(found: Optional[Dict[str, Any]], v: Verdict, evidence: List[str]) -> None:
    """A request with nothing cacheable that agrees again with the tenant's previous request after
    a few differing tokens: the row names the volatile value instead of a bare "cold"."""
    if found is None or v.cls not in ("M0", "U") or found["agreeing_tokens"] < found["divergent_token"]:
        return
    evidence.insert(0, f"volatile value at token {found['divergent_token']}: {found['differing_tokens']} tokens differ "
                       f"from the tenant's previous request {found['partner']}, then {found['agreeing_tokens']} agree again "
                       "(a time or id rendered before shared content; move it after)")


def _insert(shard, r: AuditRequest) -> None:
    """Add the request to the index after its look-ups."""
    if r.source == "checkpoint":
        fps = [r.checkpoints[n] for n in sorted(r.checkpoints)]
        shard.insert(r.request_id, r.tenant, r.instance, fps, None, r.chunk, sparse=True)
    else:
        shard.insert(r.request_id, r.tenant, r.instance, r.fps, r.ids, r.chunk)
    shard.note_digests(r.tmpl_raw, r.tmpl_canon, (r.prompt_tokens, r.request_id, r.tokenizer_rev, r.template_rev))
