"""Run the per-row stage (parse, derive token ids, fingerprint) on several cores.

The parse stage needs no other row, so batches of raw lines go to workers -- local processes
(``--workers N``) or Ray actors (``--ray [ADDRESS]``) -- and come back in the order they were
sent: the stages after it (arrival order, prefix index, capacity, classification) see exactly
the stream a single process would, so the result is identical row for row. At most ``window``
batches per shard are in flight, which bounds memory whatever the trace size.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Deque, Iterable, Iterator, List, Optional, Tuple

from promptlint.audit.ingest import Options, parse_line

BATCH_ROWS = 256
RAY_INSTALL = "pip install 'promptlint-kv[fleet]'"

_opts: Optional[Options] = None  # a worker process's options (set once, by the pool initializer)


class RayError(RuntimeError):
    """Ray is not installed, or cannot be started or reached (a usage error, exit 2)."""


def parse_batch(opts: Options, name: str, batch: List[Tuple[int, Any]]) -> List[Tuple[int, list]]:
    """``(number, rows)`` of each line of a batch: requests, skips and row errors."""
    return [(n, parse_line(n, line, f"{name}:{n}", opts)) for n, line in batch]


class SetupFailed:
    """A worker could not load the tokenizer or template: the driver raises it as a usage error."""

    def __init__(self, message: str) -> None:
        self.message = message


def _init(opts: Options) -> None:
    global _opts
    _opts = _loaded(opts)


def _loaded(opts: Options) -> Any:
    """The options with the deriver loaded (once per process), or the SetupFailed that says why not.
    Never raises: a pool initializer that raises is restarted for ever."""
    from promptlint.audit.derive import DeriverSetupError

    if opts.deriver is not None and hasattr(opts.deriver, "load"):
        try:
            opts.deriver.load()
        except DeriverSetupError as e:
            return SetupFailed(str(e))
    return opts


def _worker_batch(name: str, batch: List[Tuple[int, Any]]) -> Any:
    return _opts if isinstance(_opts, SetupFailed) else parse_batch(_opts, name, batch)


def _checked(result: Any) -> List[Tuple[int, list]]:
    if isinstance(result, SetupFailed):
        from promptlint.audit.derive import DeriverSetupError

        raise DeriverSetupError(result.message)
    return result


class InProcess:
    """The parse stage in this process (``--workers 1``)."""

    workers = 1

    def __init__(self, opts: Options) -> None:
        self.opts = opts

    def submit(self, name: str, batch: List[Tuple[int, Any]]) -> Any:
        return parse_batch(self.opts, name, batch)

    def result(self, handle: Any) -> List[Tuple[int, list]]:
        return handle

    def close(self) -> None:
        pass


class LocalPool(InProcess):
    """``--workers N``: N local processes, each with its own tokenizer and template. With
    ``defer`` the first ``defer`` batches run in this process and the pool starts only for a
    longer trace (starting processes costs more than a short trace takes)."""

    def __init__(self, opts: Options, workers: int, defer: int = 0) -> None:
        super().__init__(opts)
        self.workers = workers
        self.defer = defer
        self.eager = defer == 0  # --workers given: the capacity stage gets processes too
        self.pool: Any = None

    def submit(self, name: str, batch: List[Tuple[int, Any]]) -> Any:
        if self.pool is None:
            if self.defer > 0:
                self.defer -= 1
                return _Done(parse_batch(self.opts, name, batch))
            from promptlint.doors import interpreters

            ctx = interpreters.context("spawn" if _threads_started() else None)
            d = self.opts.deriver
            if ctx.get_start_method() == "fork" and d is not None and hasattr(d, "load"):
                d.load()  # once, here: forked workers inherit the loaded tokenizer and template
            self.pool = ctx.Pool(self.workers, initializer=_init, initargs=(self.opts,))
        return self.pool.apply_async(_worker_batch, (name, batch))

    def result(self, handle: Any) -> List[Tuple[int, list]]:
        return _checked(handle.get())

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()


class _Done:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def get(self) -> Any:
        return self.value


def _threads_started() -> bool:
    import threading

    return threading.active_count() > 1  # fork after threads is unsafe: spawn instead


class RayPool(InProcess):
    """``--ray [ADDRESS]``: one parse actor per CPU of the cluster (or ``workers``)."""

    def __init__(self, opts: Options, address: Optional[str], workers: Optional[int]) -> None:
        ray = import_ray()
        super().__init__(opts)
        self.ray = ray
        self.started = not ray.is_initialized()
        if self.started:
            import os
            from promptlint.doors import safe_write

            kw: dict = {"include_dashboard": False, "logging_level": "ERROR", "log_to_driver": False}
            try:
                if not address and os.environ.get("RAY_ADDRESS"):
                    ray.init(**kw)  # a submitted job: its cluster and its own runtime environment
                else:
                    # Ray puts the driver's working directory (a pull request's checkout, in CI) first on
                    # every worker's sys.path unless the job has a working_dir: an empty one keeps the
                    # checkout's modules out of the workers (promptlint.doors.interpreters, for our own starts).
                    with safe_write.temporary_directory("promptlint-ray-") as empty:
                        kw["runtime_env"] = {"working_dir": str(empty)}
                        if address:
                            ray.init(address=address, **kw)
                        else:
                            ray.init(num_cpus=workers or None, **kw)
            except Exception as e:  # Ray raises ConnectionError, ValueError, RuntimeError, ...
                where = f"at {address}" if address else "locally"
                raise RayError(f"--ray: cannot start or reach Ray {where} ({type(e).__name__}: "
                               f"{str(e).splitlines()[0] if str(e) else 'no detail'}); check the address") from None
        cpus = max(1.0, float(ray.cluster_resources().get("CPU", 1)))
        n = workers or int(cpus)
        # more actors than CPUs share them (whole CPUs each would leave some never scheduled)
        actor = ray.remote(num_cpus=min(1.0, cpus / n))(_RayParser)
        self.actors = [actor.remote(opts) for _ in range(n)]
        self.workers = n
        self.next = 0

    def submit(self, name: str, batch: List[Tuple[int, Any]]) -> Any:
        a = self.actors[self.next % len(self.actors)]
        self.next += 1
        return a.parse.remote(name, batch)

    def result(self, handle: Any) -> List[Tuple[int, list]]:
        return _checked(self.ray.get(handle))

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        if self.started:
            self.ray.shutdown()


class _RayParser:
    def __init__(self, opts: Options) -> None:
        self.opts = _loaded(opts)

    def parse(self, name: str, batch: List[Tuple[int, Any]]) -> Any:
        return self.opts if isinstance(self.opts, SetupFailed) else parse_batch(self.opts, name, batch)


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayError(f"--ray needs Ray: {RAY_INSTALL}") from None
    return ray


def parsed(rows: Iterable[Tuple[int, Any]], name: str, executor: Any,
           window: int) -> Iterator[Tuple[int, list]]:
    """``(number, rows)`` per line of one shard, in file order, at most ``window`` batches ahead."""
    pending: Deque[Any] = deque()
    batch: List[Tuple[int, Any]] = []
    for item in rows:
        batch.append(item)
        if len(batch) >= BATCH_ROWS:
            pending.append(executor.submit(name, batch))
            batch = []
            while len(pending) > window:
                yield from executor.result(pending.popleft())
    if batch:
        pending.append(executor.submit(name, batch))
    while pending:
        yield from executor.result(pending.popleft())


DEFER_BATCHES = 4  # default --workers: a trace of up to this many batches stays in this process


def executor(opts: Options, workers: int, ray: Optional[str], explicit: bool = True) -> Any:
    """In this process, a local pool, or Ray (``ray`` is the address; '' for a local Ray)."""
    if ray is not None:
        return RayPool(opts, ray or None, workers if workers > 0 else None)
    if workers <= 1:
        return InProcess(opts)
    return LocalPool(opts, workers, 0 if explicit else DEFER_BATCHES)


def capacity_partitions(ex: Any, stack_limit: int, curve_limit: int) -> Any:
    """Where the capacity stage runs: partitions beside the parse workers, or None (this process)."""
    from promptlint.audit import instances

    if not stack_limit:
        return None
    if isinstance(ex, RayPool):
        return instances.RayPartitions(ex.ray, ex.workers, stack_limit, curve_limit)
    if isinstance(ex, LocalPool) and ex.eager:
        return instances.LocalPartitions(ex.workers, stack_limit, curve_limit)
    return None
