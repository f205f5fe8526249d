"""Hit tokens versus KV capacity in one pass (Mattson et al. 1970), and the direct LRU
simulation it is validated against.

Item = one KV block named by its chained fingerprint (so it names its whole prefix),
scoped by tenant (a salt makes blocks of different tenants different). Per request, with
L = floor((P-1)/B) look-up blocks and floor(P/B) full blocks:

1. stack distances d_j of the look-up blocks are read *before* the request touches
   anything (d = number of distinct blocks used since this one; None = never / too deep);
2. m_j = max(d_0..d_j): the engine stops at the first miss, so block j hits in an LRU
   cache of C blocks iff m_j < C;
3. the full blocks are touched tail first, so the head of a chain is the most recent and
   is evicted last (vLLM's free-queue order).

``hit_tokens(C) = B * #{(r, j): m_j < C}`` for every C at once. Distances are exact up to
``limit``; deeper ones count as a miss for every C <= limit, so memory is O(limit).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Dict, Hashable, List, Optional, Sequence


class StackDistance:
    """LRU stack distances with a Fenwick tree over last-use positions (O(log n) each)."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.size = max(1024, 4 * self.limit)
        self.tree = [0] * (self.size + 1)
        self.pos: Dict[Hashable, int] = {}
        self.next = 1
        self.live = 0

    def _add(self, i: int, v: int) -> None:
        tree, size = self.tree, self.size
        while i <= size:
            tree[i] += v
            i += i & -i

    def _prefix(self, i: int) -> int:
        tree = self.tree
        s = 0
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s

    def distance(self, item: Hashable) -> Optional[int]:
        p = self.pos.get(item)
        if p is None:
            return None
        d = self.live - self._prefix(p)
        return d if d < self.limit else None

    def touch(self, item: Hashable) -> None:
        p = self.pos.pop(item, None)
        if p is not None:
            self._add(p, -1)
            self.live -= 1
        if self.next > self.size:
            self._compact()
        self.pos[item] = self.next
        self._add(self.next, 1)
        self.live += 1
        self.next += 1

    def _compact(self) -> None:
        keep = sorted(self.pos.items(), key=lambda kv: kv[1])[-self.limit :]
        self.pos = {item: i + 1 for i, (item, _) in enumerate(keep)}
        n = len(keep)
        tree = [0] * (self.size + 1)
        size = self.size
        for i in range(1, size + 1):  # linear Fenwick build: a[i] = 1 for i <= n
            if i <= n:
                tree[i] += 1
            j = i + (i & -i)
            if j <= size:
                tree[j] += tree[i]
        self.tree = tree
        self.live = n
        self.next = n + 1


def request_distances(stack: StackDistance, blocks: Sequence[Hashable], lookup: int) -> List[Optional[int]]:
    """Prefix-max distances m_j of the first ``lookup`` blocks, then touch all ``blocks``."""
    out: List[Optional[int]] = []
    m: Optional[int] = 0
    for j in range(min(lookup, len(blocks))):
        if m is not None:
            d = stack.distance(blocks[j])
            m = None if d is None else max(m, d)
        out.append(m)
    for b in reversed(blocks):
        stack.touch(b)
    return out


class Curve:
    """Histogram of prefix-max distances, in tokens."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.hist: Dict[int, int] = {}
        self.lookup_tokens = 0

    def add(self, ms: Sequence[Optional[int]], block: int) -> None:
        h = self.hist
        for m in ms:
            if m is not None:
                h[m] = h.get(m, 0) + block
        self.lookup_tokens += len(ms) * block

    def hit_tokens(self, capacity: int) -> int:
        if capacity > self.limit:
            raise ValueError(f"capacity {capacity} is beyond the tracked limit {self.limit}")
        return sum(v for m, v in self.hist.items() if m < capacity)

    def merge(self, other: "Curve") -> None:
        for m, v in other.hist.items():
            self.hist[m] = self.hist.get(m, 0) + v
        self.lookup_tokens += other.lookup_tokens


class LRU:
    """Direct simulation of the same model at one capacity (blocks)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.od: "OrderedDict[Hashable, None]" = OrderedDict()

    def request(self, blocks: Sequence[Hashable], lookup: int) -> int:
        hits = 0
        for j in range(min(lookup, len(blocks))):
            if blocks[j] in self.od:
                hits += 1
            else:
                break
        od = self.od
        for b in reversed(blocks):
            od[b] = None
            od.move_to_end(b)
        while len(od) > self.capacity:
            od.popitem(last=False)
        return hits


def default_grid(limit: int) -> List[int]:
    """Capacities (blocks) for the curve: powers of two up to the limit, and the limit."""
    grid, c = [], 1
    while c < limit:
        grid.append(c)
        c *= 2
    grid.append(limit)
    return grid
