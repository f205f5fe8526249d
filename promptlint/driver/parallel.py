"""Analyse a run's files in several worker processes (``--jobs``; a cold run on every core).

The workers are forked once the parent holds what they share: the settings, the rule filter,
the cache and the run's loaded tokenizer (its hundreds of MB are shared copy-on-write, not
parsed again). Work goes out in *units*: a few files that use the run's tokenizer, or every
file of one model directory group (the directories sharing a tokenizer.json, which the worker
parses and releases when the unit is done, so that each process holds one directory tokenizer
at a time). A unit's results come back as plain records and the driver puts them in discovery
order: the report is the one a single process writes, byte for byte.

Fork is Linux-only here (macOS and Windows run one process); a resident Workspace (the daemon,
the language server) asks for no workers (``jobs`` None): its warmth is its point. When a worker dies the
units it had not returned are analysed in the parent.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

JOBS_ENV = "PROMPTLINT_JOBS"  # read by the front ends (commands/check.py, commands/conversation.py)
MIN_FILES = 4  # fewer files to analyse than this: one process (forking costs more than it wins)
# Less source than this to analyse (and no model directory): one process. Forking two workers, each
# warming up on its own (the imports a Python module follows parsed again, the engine's memos cold),
# costs ~0.15 s of CPU on two cores: about what five 3 kB templates take to analyse.
MIN_BYTES = 16 * 1024

# What the forked workers call: set in the parent right before the fork, inherited, never pickled.
_WORK: Dict[str, object] = {}


def jobs_wanted(requested: Optional[int], environ: Mapping[str, str]) -> int:
    """--jobs N, else PROMPTLINT_JOBS in the command's ``environ``, else the CPUs this process may run
    on (at most 8); ValueError naming the variable when it is set to something else than a whole number >= 1."""
    if requested is None:
        raw = environ.get(JOBS_ENV, "").strip()
        if raw and (not raw.isdigit() or int(raw) < 1):
            raise ValueError(f"{JOBS_ENV}={raw[:40]!r}: expected a whole number of at least 1 (worker processes), or unset it")
        requested = int(raw) if raw else 0
    if requested >= 1:
        return requested
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def workers_for(n_units: int, n_files: int, requested: Optional[int]) -> int:
    """How many worker processes to fork for this much work (0: analyse in this process); a
    library caller that asks for nothing (None) gets this process."""
    if requested is None or not sys.platform.startswith("linux") or n_files < MIN_FILES:
        return 0
    jobs = min(requested, n_units)
    return jobs if jobs > 1 else 0


def run(units: Sequence[object], analyse_unit: Callable[[object], object], workers: int) -> Iterator[Tuple[int, object]]:
    """Yield (unit index, what ``analyse_unit(unit)`` returned) as units finish, in any order.
    Units a dead worker did not return are analysed here afterwards."""
    import concurrent.futures as cf

    from promptlint.doors import interpreters

    _WORK.update(unit=analyse_unit, units=units)  # before the first submit: that is when the pool forks
    # Rust's thread pool does not survive a fork: the workers encode on their own thread (one
    # process per core already), and tokenizers prints no fork warning when this is set.
    saved = os.environ.get("TOKENIZERS_PARALLELISM")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    done = set()
    pool = cf.ProcessPoolExecutor(workers, mp_context=interpreters.context("fork"))  # fork: no interpreter start
    try:
        futures = {pool.submit(_call, k): k for k in range(len(units))}
        try:
            for future in cf.as_completed(futures):
                k = futures[future]
                yield k, _unwrap(future.result())
                done.add(k)
        except cf.process.BrokenProcessPool:
            pass  # a worker died (killed, out of memory): the rest runs here
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # also when the caller stops early (an error, ^C)
        if saved is None:
            os.environ.pop("TOKENIZERS_PARALLELISM", None)
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = saved
        _WORK.clear()
    for k in range(len(units)):
        if k not in done:
            yield k, analyse_unit(units[k])


def _call(k: int):
    """In a worker: analyse unit ``k``; an exception that must stop the run comes back as a value."""
    from promptlint.tokenization.tokens import TokenizerError

    try:
        return ("ok", _WORK["unit"](_WORK["units"][k]))
    except TokenizerError as e:
        return ("tokenizer", str(e))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # never the exception itself: a native panic does not pickle (PicklingError)
        return ("failed", f"{type(e).__name__} in a worker process")


class WorkerFailed(Exception):
    """A unit failed in a worker outside any one file's analysis (a bug); picklable by construction."""


def _unwrap(reply):
    kind, value = reply
    if kind == "ok":
        return value
    from promptlint.tokenization.tokens import TokenizerError

    if kind == "failed":
        raise WorkerFailed(value)
    raise TokenizerError(value)


def chunks(items: List[int], workers: int) -> List[List[int]]:
    """Split one group's files into units: small ones (a worker that is done takes the next), so that
    no worker is left with a long tail."""
    if not items:
        return []
    size = max(1, len(items) // (workers * 16))
    return [items[i:i + size] for i in range(0, len(items), size)]


def heavy_enough(paths: Sequence[str]) -> bool:
    """Whether analysing ``paths`` is worth forking workers: a directory among them (a model
    directory: every built-in scenario rendered) or at least ``MIN_BYTES`` of files."""
    return any(os.path.isdir(p) for p in paths) or volume(paths) >= MIN_BYTES


def volume(paths: Sequence[str]) -> int:
    """Bytes of the regular files among ``paths`` (what the workers will at least render)."""
    import stat

    total = 0
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
    return total


# What a file's analysis encodes, in characters, told before anything is rendered: the driver's
# plan before forking (encode_volume) from which the tokenizer decides once whether the workers
# share a model built here (promptlint.fastbpe.engine: expect). File bytes alone miss most of it: a
# chat template renders every built-in scenario (~38 renders), and without windows every variant of a
# template is encoded whole. Measured on benchmarks/run.py's repository (Qwen2.5; 20 chat templates
# of 0.6-18 kB, 60 application templates of 3-12 kB), as (in windows, every variant whole):
CHAT_CHARS = (34_000, 82_000)  # a chat template (1.3k-57k and 2.7k-240k among the 20)
CHARS_PER_BYTE = (1.1, 3.2)  # any other file, per byte of it


def encode_volume(paths: Sequence[str], whole: bool) -> int:
    """Characters the analysis of ``paths`` will encode (an estimate from names and sizes only:
    no file is read); ``whole``: variants are encoded whole, not in windows."""
    total = 0.0
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        total += _chars(p, st, whole)
    return int(total)


def _chars(path: str, st: os.stat_result, whole: bool) -> float:
    """One path's share of ``encode_volume``."""
    import stat

    from promptlint.chat.source import CONFIG_NAME, TEMPLATE_FILE

    name = os.path.basename(path)
    if stat.S_ISDIR(st.st_mode) or name in (CONFIG_NAME, TEMPLATE_FILE) or name.endswith(".jinja"):
        return CHAT_CHARS[whole]
    if stat.S_ISREG(st.st_mode):
        return st.st_size * CHARS_PER_BYTE[whole]
    return 0.0


def heaviest_first(paths: Sequence[str]) -> List[int]:
    """Indices of ``paths``, the likely slowest to analyse first (directories: chat templates with
    many scenarios; then by what each will encode: a chat template's file, every built-in scenario
    rendered, before application templates of its size): the last unit to finish is then a small one."""

    def weight(p: str) -> float:
        try:
            st = os.stat(p)
        except OSError:
            return 0.0
        import stat

        if stat.S_ISDIR(st.st_mode):
            return float("inf")
        return _chars(p, st, False) + st.st_size  # the size: the larger of two chat templates first

    weights = [weight(p) for p in paths]
    return sorted(range(len(paths)), key=lambda k: -weights[k])
