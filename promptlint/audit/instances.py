"""The capacity stage: LRU stack distances and capacity curves, one stack per engine
instance. No instance ever looks at another's stack, so the instances are partitioned
(``crc32(instance) % P``) and each partition runs where it is kept: in this process, in a
local process (``--workers``) or in a Ray actor (``--ray``: Ray routes each instance's
requests to its partition -- the shuffle by instance). A partition receives its instances'
requests in arrival order and returns, per request, the prefix-max stack distance ``m_j`` of
the first block the engine did not serve (``j = cached_tokens // B``), which is all the
waterfall needs; the curves are gathered at the end.
"""

from __future__ import annotations

import zlib
from collections import deque
from typing import Any, Deque, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from promptlint.audit.capacity import Curve, StackDistance, request_distances
from promptlint.audit.records import AuditRequest, block_fps

NO_M = -1  # no distance for this request (no look-up block j, or nothing observed)
BATCH = 512

# (instance, model_rev, tenant, block fingerprints, look-up blocks, j or None, block size)
Item = Tuple[str, str, str, List[str], int, Optional[int], int]


def item(r: AuditRequest) -> Optional[Item]:
    """What the capacity stage needs of a request, or None when it has no block identity."""
    if not r.identity or not r.fps:
        return None
    bfps = block_fps(r.fps, r.chunk, r.block_size)
    if bfps is None:
        return None
    B = r.block_size
    j = None if r.cached_tokens is None else r.cached_tokens // B
    return (r.instance, r.model_rev, r.tenant, bfps, max(0, (r.prompt_tokens - 1) // B), j, B)


class Partition:
    """The stacks (and curves) of some instances."""

    def __init__(self, stack_limit: int, curve_limit: int) -> None:
        self.stack_limit = stack_limit
        self.curve_limit = curve_limit
        self.stacks: Dict[str, StackDistance] = {}
        self.curves: Dict[str, Curve] = {}

    def run(self, items: Sequence[Item]) -> List[Any]:
        """``m_j`` per item (None: deeper than the tracked limit; NO_M: no block j)."""
        out: List[Any] = []
        for inst, mrev, tenant, bfps, lookup, j, B in items:
            st = self.stacks.get(inst)
            if st is None:
                st = self.stacks[inst] = StackDistance(self.stack_limit)
            ms = request_distances(st, [(mrev, tenant, f) for f in bfps], lookup)
            if self.curve_limit:
                c = self.curves.get(inst)
                if c is None:
                    c = self.curves[inst] = Curve(self.curve_limit)
                c.add(ms, B)
            out.append(ms[j] if j is not None and j < len(ms) else NO_M)
        return out

    def curve_list(self) -> List[Curve]:
        return list(self.curves.values())


def _serve(conn: Any, stack_limit: int, curve_limit: int) -> None:
    """A local partition process: batches in, distances out, the curves when told to stop."""
    part = Partition(stack_limit, curve_limit)
    while True:
        msg = conn.recv()
        if msg is None:
            conn.send(part.curve_list())
            return
        conn.send(part.run(msg))


class LocalPartitions:
    """``--workers``: one process per partition, talked to through a pipe (requests of an
    instance always go to the same process, in order)."""

    def __init__(self, n: int, stack_limit: int, curve_limit: int) -> None:
        import threading

        from promptlint.doors import interpreters

        ctx = interpreters.context("spawn" if threading.active_count() > 1 else None)
        self.conns, self.procs = [], []
        for _ in range(n):
            here, there = ctx.Pipe()
            p = ctx.Process(target=_serve, args=(there, stack_limit, curve_limit), daemon=True)
            p.start()
            self.conns.append(here)
            self.procs.append(p)

    def submit(self, k: int, items: List[Item]) -> Any:
        self.conns[k].send(items)
        return k

    def result(self, handle: Any) -> List[Any]:
        return self.conns[handle].recv()

    def curves(self) -> List[Curve]:
        out: List[Curve] = []
        for c in self.conns:
            c.send(None)
            out.extend(c.recv())
        return out

    def close(self) -> None:
        for p in self.procs:
            p.kill()
            p.join()


class RayPartitions:
    """``--ray``: one actor per partition; Ray moves each instance's blocks to its actor."""

    def __init__(self, ray: Any, n: int, stack_limit: int, curve_limit: int) -> None:
        self.ray = ray
        actor = ray.remote(num_cpus=0)(Partition)  # stateful and light: does not take a parse CPU
        self.actors = [actor.remote(stack_limit, curve_limit) for _ in range(n)]

    def submit(self, k: int, items: List[Item]) -> Any:
        return self.actors[k].run.remote(items)

    def result(self, handle: Any) -> List[Any]:
        return self.ray.get(handle)

    def curves(self) -> List[Curve]:
        return [c for part in self.ray.get([a.curve_list.remote() for a in self.actors]) for c in part]

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)


def annotated(reqs: Iterable[AuditRequest], parts: Any, n: int) -> Iterator[AuditRequest]:
    """The requests, in the same order, each with ``stack_m`` from its instance's partition;
    the next batch is computed while this one is classified."""
    pending: Deque[Tuple[List[AuditRequest], List[Tuple[int, List[int], Any]]]] = deque()
    batch: List[AuditRequest] = []

    def send(batch: List[AuditRequest]) -> None:
        groups: Dict[int, Tuple[List[int], List[Item]]] = {}
        for i, r in enumerate(batch):
            r.stack_m = NO_M
            it = item(r)
            if it is not None:
                k = zlib.crc32(r.instance.encode("utf-8", "surrogatepass")) % n
                g = groups.setdefault(k, ([], []))
                g[0].append(i)
                g[1].append(it)
        pending.append((batch, [(k, idx, parts.submit(k, items)) for k, (idx, items) in groups.items()]))

    def receive() -> List[AuditRequest]:
        done, handles = pending.popleft()
        for _, idx, h in handles:
            for i, m in zip(idx, parts.result(h)):
                done[i].stack_m = m
        return done

    for r in reqs:
        batch.append(r)
        if len(batch) >= BATCH:
            send(batch)
            batch = []
            if len(pending) > 1:
                yield from receive()
    if batch:
        send(batch)
    while pending:
        yield from receive()
