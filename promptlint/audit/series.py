"""A time series of /metrics scrapes (``--scrape``): hit ratio and evictions per interval
between consecutive scrapes of one instance, reconciled with the trace's own figures for the
requests that arrived in the interval, with two flags -- a decaying hit ratio and eviction
churn. Each interval is checked like a before/after pair (a reset or configuration change
gives no ratio, only the reason).

A scrape's time is the latest sample timestamp in it (the exposition format's optional
milliseconds) or, without timestamps, the file's modification time; ``time_source`` says which.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from typing import Any, Dict, List, Optional, Tuple

from promptlint.audit import prom
from promptlint.audit.reconcile import _ratios, _residual, check_window, deltas
from promptlint.audit.summary import ratio

EVICT = "vllm:kv_block_idle_before_evict_seconds_count"  # sampled (--kv-cache-metrics)
LIFETIME = ("vllm:kv_block_lifetime_seconds_sum", "vllm:kv_block_lifetime_seconds_count")
PREEMPT = "vllm:num_preemptions_total"
DECAY_RUN = 3  # intervals in a row, each with a lower hit ratio than the one before ...
DECAY_DROP = 0.10  # ... and at least this much lower at the end of the run


def files(path: str) -> List[str]:
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path) if os.path.isfile(os.path.join(path, f))
                      and not f.startswith("."))
    return [path]


def load(path: str) -> Tuple[Dict[prom.Series, float], float, str]:
    """(samples, time in seconds, "sample timestamps" | "file modification time")."""
    samples, stamp = prom.load_timed(path)
    if stamp is not None:
        return samples, stamp / 1000.0, "sample timestamps"
    return samples, os.path.getmtime(path), "file modification time"


class Series:
    """Scrapes per instance ("*" = the whole trace), in time order, and the trace sums per interval."""

    def __init__(self, scrapes: Dict[str, List[Tuple[str, Dict[prom.Series, float], float, str]]]) -> None:
        self.scrapes = {k: sorted(v, key=lambda s: s[2]) for k, v in scrapes.items()}
        self.times = {k: [s[2] for s in v] for k, v in self.scrapes.items()}
        self.sums: Dict[Tuple[str, int], Dict[str, int]] = {}

    def add(self, instance: str, arrival_ts: float, prompt: int, cached: int, queried: bool) -> None:
        """One audited request into the interval of each series that covers its instance."""
        for key in (instance, "*"):
            times = self.times.get(key)
            if not times:
                continue
            i = bisect_right(times, arrival_ts) - 1
            if 0 <= i < len(times) - 1:
                t = self.sums.setdefault((key, i), {"requests": 0, "prompt_tokens": 0, "queried_tokens": 0,
                                                    "queried_cached_tokens": 0})
                t["requests"] += 1
                t["prompt_tokens"] += prompt
                if queried:
                    t["queried_tokens"] += prompt
                    t["queried_cached_tokens"] += cached

    def report(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for key, scrapes in sorted(self.scrapes.items()):
            intervals = [self._interval(key, i, scrapes[i], scrapes[i + 1]) for i in range(len(scrapes) - 1)]
            out[key] = {"scrapes": len(scrapes), "time_source": sorted({s[3] for s in scrapes}),
                        "intervals": intervals, "flags": flags(intervals)}
        return out

    def _interval(self, key: str, i: int, a: Tuple, b: Tuple) -> Dict[str, Any]:
        (pa, before, t0, _), (pb, after, t1, _) = a, b
        e: Dict[str, Any] = {"start": t0, "end": t1, "from": pa, "to": pb}
        status, why = check_window(before, after)
        e["status"] = status
        t = dict(self.sums.get((key, i), {"requests": 0, "prompt_tokens": 0, "queried_tokens": 0,
                                          "queried_cached_tokens": 0}))
        t["hit_ratio"] = ratio(t["queried_cached_tokens"], t["queried_tokens"])
        e["trace"] = t
        if why:
            e["reason"] = why
            return e
        d = deltas(before, after)
        e.update(_ratios(d))
        e["residual"] = _residual(d, t)
        ev = _delta(before, after, EVICT)
        if ev is not None:
            e["evictions_sampled"] = int(ev)
        life = [_delta(before, after, n) for n in LIFETIME]
        if life[0] is not None and life[1]:
            e["mean_evicted_lifetime_s"] = life[0] / life[1]
        pre = _delta(before, after, PREEMPT)
        if pre is not None:
            e["preemptions"] = int(pre)
        return e


def _delta(before: Dict[prom.Series, float], after: Dict[prom.Series, float], name: str) -> Optional[float]:
    found = [(lab, v) for (n, lab), v in after.items() if n == name]
    if not found:
        return None
    return sum(v - before.get((name, lab), 0.0) for lab, v in found)


def flags(intervals: List[Dict[str, Any]]) -> List[str]:
    """``decaying hit ratio``: DECAY_RUN intervals in a row, each lower than the one before and the
    last at least DECAY_DROP below the first; ``eviction churn``: an interval whose evicted blocks
    lived, on average, less than the interval lasted (the cache turned over within it)."""
    out: List[str] = []
    ok = [e for e in intervals if e["status"] == "ok" and isinstance(e.get("local_hit_ratio"), float)]
    run = 1
    for k in range(1, len(ok)):
        a, b = ok[k - 1]["local_hit_ratio"], ok[k]["local_hit_ratio"]
        run = run + 1 if b < a else 1
        first = ok[k - run + 1]["local_hit_ratio"]
        if run >= DECAY_RUN and first - b >= DECAY_DROP:
            out.append(f"decaying hit ratio: {100 * first:.1f}% -> {100 * b:.1f}% over {run} intervals "
                       f"ending {ok[k]['end']:.0f}")
            break
    for e in intervals:
        life = e.get("mean_evicted_lifetime_s")
        if life is not None and life < e["end"] - e["start"]:
            out.append(f"eviction churn: blocks evicted between {e['start']:.0f} and {e['end']:.0f} lived "
                       f"{life:.1f}s on average, less than the {e['end'] - e['start']:g}s interval")
    return out
