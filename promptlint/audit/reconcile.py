"""Engine-counter reconciliation from two direct scrapes of the same target.

Deltas are exact (value after - value before, no extrapolation) and valid only within one
stable window: any counter that went down, a changed ``_created`` sample or process start
time means a reset (restart); changed ``vllm:cache_config_info`` labels mean a
configuration change. Either way no ratio is given, and the reason is. Ratios pool across
series and instances by summing deltas (token-weighted), never by averaging ratios. Local
and external (connector) hits are kept apart.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from promptlint.audit.prom import Series
from promptlint.audit.summary import ratio

# (key, metric names accepted: exposition name with _total first)
COUNTERS = {
    "queries": ("vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries"),
    "hits": ("vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits"),
    "external_queries": ("vllm:external_prefix_cache_queries_total", "vllm:external_prefix_cache_queries"),
    "external_hits": ("vllm:external_prefix_cache_hits_total", "vllm:external_prefix_cache_hits"),
    "prompt_tokens": ("vllm:prompt_tokens_total", "vllm:prompt_tokens", "sglang:prompt_tokens_total"),
    "prompt_tokens_cached": ("vllm:prompt_tokens_cached_total", "vllm:prompt_tokens_cached", "sglang:cached_tokens_total"),
}
# llama-server (tools/server/server-task.cpp, to_metrics): `prompt_tokens_total` counts only the
# tokens it evaluated ("excluding cached tokens"); the ones reused from the slot's cache are
# `prompt_tokens_cached_total` (server-context.cpp: add_prompt_cached(n_past)). A prompt is both.
LLAMACPP_EVALUATED, LLAMACPP_CACHED = "llamacpp:prompt_tokens_total", "llamacpp:prompt_tokens_cached_total"
BY_SOURCE = ("vllm:prompt_tokens_cached_by_source_total", "vllm:prompt_tokens_cached_by_source")
CONFIG = ("vllm:cache_config_info",)
RESTART = ("process_start_time_seconds",)


def _is_counter(name: str) -> bool:
    return name.endswith("_total")


def check_window(before: Dict[Series, float], after: Dict[Series, float]) -> Tuple[str, Optional[str]]:
    """("ok", None) or ("reset detected" | "config changed", why)."""
    for (name, labels), v0 in before.items():
        v1 = after.get((name, labels))
        if name.endswith("_created") and v1 is not None and v1 != v0:
            return "reset detected", f"{name} changed ({v0:g} -> {v1:g}): the counter was re-created"
        if name in RESTART and v1 is not None and v1 != v0:
            return "reset detected", f"{name} changed: the process restarted"
        if _is_counter(name) and v1 is not None and v1 < v0:
            return "reset detected", f"{name}{_fmt(labels)} went down ({v0:g} -> {v1:g})"
    cfg0 = {lab for (n, lab) in before if n in CONFIG}
    cfg1 = {lab for (n, lab) in after if n in CONFIG}
    if cfg0 != cfg1:
        diff = sorted({k for k, _ in set().union(*cfg0) ^ set().union(*cfg1)}) if cfg0 and cfg1 else ["present/absent"]
        return "config changed", f"vllm:cache_config_info differs ({', '.join(diff)})"
    return "ok", None


def _fmt(labels) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels)) + "}" if labels else ""


def deltas(before: Dict[Series, float], after: Dict[Series, float]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, names in COUNTERS.items():
        for name in names:
            found = [(lab, v) for (n, lab), v in after.items() if n == name]
            if found:
                out[key] = int(sum(v - before.get((name, lab), 0.0) for lab, v in found))
                break
    if "prompt_tokens_cached" not in out:
        cached = _delta(before, after, LLAMACPP_CACHED)
        if cached is not None:
            out["prompt_tokens_cached"] = cached
            out["prompt_tokens"] = cached + (_delta(before, after, LLAMACPP_EVALUATED) or 0)
    src: Dict[str, int] = {}
    for name in BY_SOURCE:
        for (n, lab), v in after.items():
            if n == name:
                s = dict(lab).get("source", "?")
                src[s] = src.get(s, 0) + int(v - before.get((n, lab), 0.0))
        if src:
            break
    if src:
        out["cached_by_source"] = src
    return out


def _delta(before: Dict[Series, float], after: Dict[Series, float], name: str) -> Optional[int]:
    """The summed increase of every series of ``name`` (None when the scrape has none)."""
    found = [(lab, v) for (n, lab), v in after.items() if n == name]
    return int(sum(v - before.get((name, lab), 0.0) for lab, v in found)) if found else None


def reconcile(pairs: Dict[str, Tuple[Dict[Series, float], Dict[Series, float]]],
              trace: Dict[str, Dict[str, int]]) -> Dict[str, Any]:
    """``pairs``: instance label ("*" = the whole trace) -> (before, after);
    ``trace``: instance -> sums over the trace (queried = P of requests that did the lookup)."""
    instances: Dict[str, Any] = {}
    pooled: Dict[str, int] = {}
    excluded: List[str] = []
    for inst, (b, a) in sorted(pairs.items()):
        status, why = check_window(b, a)
        entry: Dict[str, Any] = {"status": status}
        if why:
            entry["reason"] = why
            excluded.append(inst)
        else:
            d = deltas(b, a)
            entry.update(_ratios(d))
            t = _trace_sums(trace, inst)
            entry["trace"] = t
            entry["residual"] = _residual(d, t)
            for k, v in d.items():
                if isinstance(v, int):
                    pooled[k] = pooled.get(k, 0) + v
        instances[inst] = entry
    out: Dict[str, Any] = {"instances": instances}
    if pooled:
        out["pooled"] = _ratios(pooled)
        if excluded:
            out["pooled"]["excluded"] = excluded
    out["status"] = "ok" if not excluded else ("reset detected" if any(
        instances[i]["status"] == "reset detected" for i in excluded) else "config changed")
    if excluded:
        out["reason"] = "; ".join(f"{i}: {instances[i]['reason']}" for i in excluded)
    return out


def _ratios(d: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(d)
    if "queries" in d:
        out["local_hit_ratio"] = ratio(d.get("hits", 0), d["queries"])
    if "external_queries" in d:
        out["external_hit_ratio"] = ratio(d.get("external_hits", 0), d["external_queries"])
    if "queries" in d and "external_hits" in d:
        out["combined_cached_ratio"] = ratio(d.get("hits", 0) + d["external_hits"], d["queries"])
    if "prompt_tokens" in d:
        out["cached_prompt_ratio"] = ratio(d.get("prompt_tokens_cached", 0), d["prompt_tokens"])
    return out


def _trace_sums(trace: Dict[str, Dict[str, int]], inst: str) -> Dict[str, int]:
    if inst == "*":
        t: Dict[str, int] = {}
        for v in trace.values():
            for k, n in v.items():
                t[k] = t.get(k, 0) + n
        return t
    return dict(trace.get(inst, {}))


def _residual(d: Dict[str, Any], t: Dict[str, int]) -> Dict[str, Any]:
    """Counter minus trace; reported, never forced to zero (requests straddling the window,
    preempted re-admissions, n>1 sampling all leave honest residuals)."""
    r: Dict[str, Any] = {}
    if "queries" in d:
        r["queries"] = d["queries"] - t.get("queried_tokens", 0)
    if "hits" in d:
        r["hits"] = d["hits"] + d.get("external_hits", 0) - t.get("queried_cached_tokens", 0)
    if "prompt_tokens" in d:
        r["prompt_tokens"] = d["prompt_tokens"] - t.get("prompt_tokens", 0)
    return r
