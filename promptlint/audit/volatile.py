"""A cold request that is not really cold: it shares a long run of tokens with the tenant's
previous request, but after an early divergence (a time, a request id rendered near the start).
Prefix caching sees nothing in common; this says where and how much, so the row names the cause
instead of "cold".

For each tenant (and model revision) the last exact request's first ``WINDOW`` ids are kept.
A request whose shared prefix with it is short is aligned after the divergence: the first pair
of offsets (each at most ``MAX_GAP`` tokens on) from which the two agree again for at least
``MIN_RUN`` tokens. Standard library only.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from typing import Dict, Optional, Sequence, Tuple

from promptlint.arithmetic.compare import shared_prefix

WINDOW = 2048  # ids kept per tenant (4 bytes each: at most 32 MB over MAX_TENANTS)
MAX_GAP = 24  # differing tokens looked past on each side (a timestamp, a UUID)
MIN_RUN = 64  # tokens that must agree again
MAX_TENANTS = 4096  # tenants remembered (least recently seen forgotten first)


class Recent:
    def __init__(self) -> None:
        self.last: "OrderedDict[Tuple[str, str], Tuple[str, array]]" = OrderedDict()

    def check(self, model: str, tenant: str, request_id: str, ids: Sequence[int], cold: bool) -> Optional[Dict[str, object]]:
        """For a ``cold`` request, the early divergence from the tenant's previous request; then
        remember this one."""
        key = (str(model), str(tenant))
        before = self.last.pop(key, None)
        mine = array("I", ids[:WINDOW])
        self.last[key] = (request_id, mine)
        if len(self.last) > MAX_TENANTS:
            self.last.popitem(last=False)
        if before is None or not cold:
            return None
        found = realign(before[1], mine)
        if found is None:
            return None
        s, gap_a, gap_b, run = found
        return {"partner": before[0], "divergent_token": s, "differing_tokens": gap_b, "agreeing_tokens": run}


def realign(a: Sequence[int], b: Sequence[int]) -> Optional[Tuple[int, int, int, int]]:
    """(first divergent token S, tokens skipped in a, in b, tokens that agree again) or None."""
    s = shared_prefix(a.tolist() if isinstance(a, array) else list(a), b.tolist() if isinstance(b, array) else list(b))
    if s >= min(len(a), len(b)):
        return None
    best = None
    for total in range(2, 2 * MAX_GAP + 1):  # the smallest gap first: the changed value itself
        for ga in range(max(1, total - MAX_GAP), min(MAX_GAP, total - 1) + 1):
            gb = total - ga
            x, y = a[s + ga:s + ga + MIN_RUN], b[s + gb:s + gb + MIN_RUN]
            if len(x) == MIN_RUN and x == y:
                run = shared_prefix(list(a[s + ga:]), list(b[s + gb:]))  # within WINDOW: bounded
                best = (s, ga, gb, run)
                break
        if best is not None:
            return best
    return None
