"""Per-request ceilings, the waterfall of losses and the request's class.

Every ceiling is block-rounded: ``E_x = ceiling(S_x, P, B)``. The shared prefixes are
nested (S_tmpl >= S_raw >= S_all >= S_tenant >= S_inst), so the ceilings form a
non-increasing chain and each step down is lost to one class:

    min(S_tmpl, P-1) = M3 + M2 + M1 + M4 + M6 + (M7 | M5 | U) + counted_observed

with M3 = min(S_tmpl, P-1) - E_tmpl (rounding), M2 = E_tmpl - E_raw (only the order of
order-free inputs differed), M1 = E_raw - E_all (token identity changed), M4 = E_all -
E_tenant, M6 = E_tenant - E_inst, and the rest = E_inst - O. Observed reuse O is laid over
the chain from the bottom: tokens the engine did serve are never called lost, so a request
served above its instance ceiling (connector or host-tier hits, a cache older than the
trace) reduces the upper steps and is reported as ``over_ceiling_tokens``.
counted_observed = min(O, E_tmpl). The identity holds exactly for every request.
"""

from __future__ import annotations

from typing import Dict, Optional

from promptlint.arithmetic.compare import eligible_tokens

CLASS_ORDER = ("M1", "M2", "M4", "M6", "M7", "M5", "U")  # tie-break order for the class
LOST_KEYS = ("M3", "M2", "M1", "M4", "M6", "M7", "M5", "U")
ALL_CLASSES = ("HIT", "M0", "M1", "M2", "M3", "M4", "M5", "M6", "M7", "U")
# one-line meanings, printed as the legend of the `full` output (docs/audit.md has the rules)
CLASS_MEANING = {
    "HIT": "served: cached tokens reached the ceiling E_tmpl",
    "M0": "cold: nothing shareable with any earlier request",
    "M1": "token identity changed (tokenizer or template revision)",
    "M2": "only the order/serialization of order-free inputs differed",
    "M3": "block and last-token rounding (explained, not a defect)",
    "M4": "tenant or salt separation (correct behaviour)",
    "M5": "evicted (proven by KV events, or inferred from capacity)",
    "M6": "the partner request lives on another replica",
    "M7": "caching off, or prompt_logprobs skips the lookup",
    "U": "unexplained: no evidence for another class",
    "unobserved": "no cached-token count reported (what-if ceilings only)",
}

# Hosted APIs: (increment, minimum cacheable prompt). Approximate by construction: their
# breakpoints are not visible in a trace (docs/audit.md, "hosted APIs").
HOSTED = {"openai": (128, 1024), "anthropic": (1, 1024), "gemini": (1, 1024)}


def ceiling(shared: int, prompt: int, block: int, engine: str = "vllm") -> int:
    hosted = HOSTED.get(engine)
    if hosted is not None:
        inc, minimum = hosted
        e = eligible_tokens(shared, prompt, block if block and block > 1 else inc)
        return e if e >= minimum else 0
    return eligible_tokens(shared, prompt, block)


class Verdict:
    __slots__ = ("ceilings", "lost", "cls", "top", "counted_observed", "over_ceiling")

    def __init__(self) -> None:
        self.ceilings: Dict[str, int] = {}
        self.lost: Dict[str, int] = {}
        self.cls = "U"
        self.top = 0
        self.counted_observed = 0
        self.over_ceiling = 0


def waterfall(P: int, B: int, O: Optional[int], S: Dict[str, int], remainder: str, engine: str = "vllm") -> Verdict:
    """``S`` holds the nested shared prefixes tmpl, raw, all, tenant, inst (tokens);
    ``remainder`` is the class of E_inst - O (M7, M5 or U; "unobserved" when O is None)."""
    v = Verdict()
    s_inst = S["inst"]
    s_ten = max(S["tenant"], s_inst)
    s_all = max(S["all"], s_ten)
    s_raw = max(S["raw"], s_all)
    s_tmpl = max(S["tmpl"], s_raw)
    E = {k: ceiling(s, P, B, engine) for k, s in
         (("tmpl", s_tmpl), ("raw", s_raw), ("all", s_all), ("tenant", s_ten), ("inst", s_inst))}
    v.ceilings = E
    v.top = max(0, min(s_tmpl, P - 1))
    o = 0 if O is None else O
    counted = min(o, E["tmpl"])
    v.counted_observed = counted
    lost = {"M3": v.top - E["tmpl"]}
    steps = (("M2", E["tmpl"], E["raw"]), ("M1", E["raw"], E["all"]), ("M4", E["all"], E["tenant"]),
             ("M6", E["tenant"], E["inst"]), (remainder, E["inst"], 0))
    for name, hi, lo in steps:
        lost[name] = lost.get(name, 0) + max(0, hi - max(lo, counted))
    v.lost = lost
    if O is not None and O > E["inst"]:
        v.over_ceiling = O - E["inst"]
    if O is None:
        v.cls = "M0" if E["tmpl"] == 0 else "unobserved"
    elif E["tmpl"] == 0:
        v.cls = "M0"
    elif O >= E["tmpl"]:
        v.cls = "HIT"
    else:
        best, who = -1, "U"
        for c in CLASS_ORDER:
            n = lost.get(c, 0)
            if n > best:
                best, who = n, c
        v.cls = who
    return v


def closes(v: Verdict) -> bool:
    return v.top == sum(v.lost.values()) + v.counted_observed
