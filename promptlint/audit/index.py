"""Bounded prefix index over chained fingerprints, sharded by model revision.

Within a shard three scopes are kept: every earlier request (``all``), the same tenant,
the same tenant on the same instance. Each scope is a set of chained fingerprints; since a
fingerprint names its whole prefix and a request always inserts its whole chain, each set
is *prefix-closed* (a chunk is present only if its parent is), so the shared prefix in
chunks is found by binary search.

Memory is bounded by generations: a shard holds the current and the previous generation
of at most ``limit`` fingerprints; when the current one fills, the previous one is dropped
(in every scope of the shard at once). Dropping whole generations keeps the sets
prefix-closed. A partner older than the horizon is simply not found (the request looks
colder than it was); the horizon is reported.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, insort
from typing import Dict, Optional, Sequence, Tuple

from promptlint.audit.fingerprints import ROOT


class Gen:
    """Two generations of a dict (fp -> value)."""

    __slots__ = ("cur", "old")

    def __init__(self) -> None:
        self.cur: dict = {}
        self.old: dict = {}

    def get(self, k):
        v = self.cur.get(k)
        if v is None:
            v = self.old.get(k)
        return v

    def __contains__(self, k) -> bool:
        return k in self.cur or k in self.old

    def rotate(self) -> None:
        self.old = self.cur
        self.cur = {}

    def __len__(self) -> int:
        return len(self.cur) + len(self.old)


def prefix_run(fps: Sequence[str], gen: Gen, hi: Optional[int] = None) -> int:
    """Number of leading fingerprints present (the set is prefix-closed: binary search)."""
    lo, hi = 0, len(fps) if hi is None else min(hi, len(fps))
    cur, old = gen.cur, gen.old
    while lo < hi:
        mid = (lo + hi + 1) // 2
        k = fps[mid - 1]
        if k in cur or k in old:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _run_in(fps: Sequence[str], d: dict) -> int:
    lo, hi = 0, len(fps)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fps[mid - 1] in d:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _key(ids: Sequence[int]) -> bytes:
    """A chunk's token ids as big-endian uint32 bytes: bytes order is the order of the id
    sequences (so sorted neighbours are the same as for tuples), at a fifth of a tuple's memory."""
    return struct.pack(f">{len(ids)}I", *ids)


def _common(a: bytes, b: bytes) -> int:
    """Leading tokens two chunk keys share."""
    m = min(len(a), len(b))
    x = int.from_bytes(a[:m], "big") ^ int.from_bytes(b[:m], "big")
    return (m - (x.bit_length() + 7) // 8) // 4


class Shard:
    """Everything known about earlier requests of one model revision (one chunk size)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.all = Gen()  # fp -> request_id of the latest request that had this prefix
        self.scoped: Dict[Tuple, Gen] = {}  # (tenant,) or (tenant, instance) -> fps
        self.sparse_all = Gen()  # checkpoint-only rows (not prefix-closed)
        self.sparse_scoped: Dict[Tuple, Gen] = {}
        self.children = Gen()  # parent fp -> sorted [(chunk key, request_id)], exact rows
        self.raw = Gen()  # template-input digests -> (P, request_id, tokenizer_rev, template_rev)
        self.canon = Gen()
        self.rotations = 0
        self.dropped = 0  # fingerprints of the `all` scope forgotten with the generations dropped

    def scope(self, key: Tuple, sparse: bool = False) -> Gen:
        d = self.sparse_scoped if sparse else self.scoped
        g = d.get(key)
        if g is None:
            g = d[key] = Gen()
        return g

    def _maybe_rotate(self) -> None:
        if len(self.all.cur) + len(self.sparse_all.cur) <= self.limit:
            return
        self.rotations += 1
        self.dropped += len(self.all.old) + len(self.sparse_all.old)
        for g in (self.all, self.sparse_all, self.children, self.raw, self.canon):
            g.rotate()
        for d in (self.scoped, self.sparse_scoped):
            for key in list(d):
                g = d[key]
                if not g.cur:
                    del d[key]  # nothing touched for a whole generation
                else:
                    g.rotate()

    # -- look-ups -------------------------------------------------------------------

    def exact_tail(self, k: int, fps: Sequence[str], ids: Sequence[int], chunk: int) -> Tuple[int, Optional[str]]:
        """Tokens shared inside chunk ``k`` (after k whole chunks) with the best earlier
        request, and that request's id: the max common prefix of a string against a set is
        reached at one of its two neighbours in sorted order."""
        parent = fps[k - 1] if k else ROOT
        query = _key(ids[k * chunk : (k + 1) * chunk])
        if not query:
            return 0, None
        best, who = 0, None
        for lst in (self.children.cur.get(parent), self.children.old.get(parent)):
            if not lst:
                continue
            i = bisect_left(lst, (query,))
            for j in (i - 1, i):
                if 0 <= j < len(lst):
                    c = _common(query, lst[j][0])
                    if c > best:
                        best, who = c, lst[j][1]
        return best, who

    # -- insertion ------------------------------------------------------------------

    def insert(self, rid: str, tenant: str, instance: str, fps: Sequence[str], ids: Optional[Sequence[int]],
               chunk: int, sparse: bool = False) -> None:
        if sparse:
            self.sparse_all.cur.update(dict.fromkeys(fps, rid))
            self.scope((tenant,), True).cur.update(dict.fromkeys(fps, True))
            self.scope((tenant, instance), True).cur.update(dict.fromkeys(fps, True))
        else:
            # each generation's current set is itself prefix-closed: add only what it lacks
            g = self.all
            g.cur.update(dict.fromkeys(fps[_run_in(fps, g.cur):], rid))
            for key in ((tenant,), (tenant, instance)):
                g = self.scope(key)
                g.cur.update(dict.fromkeys(fps[_run_in(fps, g.cur):], True))
        if ids is not None:
            cur = self.children.cur
            n = len(ids)
            for i in range(0, n, chunk):
                parent = fps[i // chunk - 1] if i else ROOT
                item = (_key(ids[i : i + chunk]), rid)
                lst = cur.get(parent)
                if lst is None:
                    cur[parent] = [item]
                else:
                    j = bisect_left(lst, (item[0],))
                    if j < len(lst) and lst[j][0] == item[0]:
                        lst[j] = item  # newest partner wins
                    else:
                        insort(lst, item)
        self._maybe_rotate()

    def note_digests(self, raw: Optional[str], canon: Optional[str], value: Tuple) -> None:
        if raw:
            self.raw.cur[raw] = value
        if canon:
            self.canon.cur[canon] = value


# Measured peak RSS (docs/audit.md, Scale): 0.93 GB at 1M, 723 MB at 750k (1M requests x 2,000 tokens);
# the default keeps a one-machine audit under 1 GB, and a dropped generation is always reported.
DEFAULT_INDEX_BLOCKS = 750_000


class PrefixIndex:
    """Shards keyed by (model revision, chunk size)."""

    def __init__(self, limit: int = DEFAULT_INDEX_BLOCKS) -> None:
        self.limit = limit
        self.shards: Dict[Tuple, Shard] = {}

    def shard(self, model_rev: str, chunk: int) -> Shard:
        key = (model_rev, chunk)
        s = self.shards.get(key)
        if s is None:
            s = self.shards[key] = Shard(self.limit)
        return s
