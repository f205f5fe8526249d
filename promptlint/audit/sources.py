"""Where the trace's rows come from: one JSONL file or stdin, or shards -- several files, a
directory, a glob -- of JSONL or Parquet (through pyarrow, the optional ``fleet`` extra), or
llama.cpp server logs and ``/slots`` snapshots (made into one row per task: audit.llamacpp).

Each shard yields ``(line or row number, raw line or decoded row)``; the reader never parses
JSON itself (that is the parallel stage). A Parquet row is a dict whose null fields are
dropped (at every depth): a null column value means the field is absent from that row.
"""

from __future__ import annotations

import glob
import os
from typing import Any, Iterator, List, Optional, Tuple

PARQUET_SUFFIXES = (".parquet", ".pq")
TRACE_SUFFIXES = (".jsonl", ".json", ".ndjson", ".log") + PARQUET_SUFFIXES
FLEET_INSTALL = "pip install 'promptlint-kv[fleet]'"


class SourceError(ValueError):
    """A trace argument that names nothing readable (the message says what to do)."""


class Shard:
    __slots__ = ("path", "name", "size")

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = "<stdin>" if path == "-" else path
        self.size = 0 if path == "-" else os.path.getsize(path)

    @property
    def parquet(self) -> bool:
        return self.path.endswith(PARQUET_SUFFIXES)


def expand(args: List[str]) -> List[Shard]:
    """Files as given, a directory's trace files and a glob's matches, each in name order."""
    shards: List[Shard] = []
    for a in args:
        if a == "-":
            paths = ["-"]
        elif os.path.isdir(a):
            paths = sorted(os.path.join(a, f) for f in os.listdir(a)
                           if f.endswith(TRACE_SUFFIXES) and os.path.isfile(os.path.join(a, f)))
            if not paths:
                raise SourceError(f"{a}: no trace files ({', '.join(TRACE_SUFFIXES)}) in this directory")
        elif glob.has_magic(a) and not os.path.exists(a):
            paths = sorted(p for p in glob.glob(a) if os.path.isfile(p))
            if not paths:
                raise SourceError(f"{a}: the pattern matches no file; check the path")
        else:
            paths = [a]
        for p in paths:
            try:
                shards.append(Shard(p))
            except OSError as e:
                raise SourceError(f"{p}: cannot read the trace ({e.strerror}); check the path")
    if sum(s.path == "-" for s in shards) and len(shards) > 1:
        raise SourceError("'-' (stdin) cannot be combined with other trace files")
    if any(s.parquet for s in shards):
        require_pyarrow()
    return shards


def require_pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SourceError(f"reading Parquet traces needs pyarrow: {FLEET_INSTALL}") from None
    return pq


def rows(shard: Shard, progress: Optional[Any] = None) -> Iterator[Tuple[int, Any]]:
    """``(number, line)`` of every non-blank JSONL line, or ``(number, row dict)`` of every
    Parquet row; ``progress(bytes)`` is told how far the file has been read."""
    if shard.parquet:
        yield from _parquet_rows(shard, progress)
        return
    import itertools
    import sys

    from promptlint import bounded_io, jsonl
    from promptlint.audit import llamacpp

    try:
        # binary: a JSONL line ends at \n only
        f = sys.stdin.buffer if shard.path == "-" else bounded_io.open_stream(shard.path)
    except OSError as e:
        raise SourceError(f"{shard.name}: cannot read the trace ({e.strerror}); check the path")
    with f:
        lines = _measured(jsonl.numbered_lines(f), progress)
        head = list(itertools.islice(lines, llamacpp.SNIFF_LINES))
        kind = llamacpp.sniff(head)  # a llama.cpp server log or /slots snapshots: rows per task
        if kind is None:
            yield from head
            yield from lines
        else:
            yield from llamacpp.rows(itertools.chain(head, lines), kind, llamacpp.server_label(shard.path))


def _measured(lines: Iterator[Tuple[int, Any]], progress: Optional[Any]) -> Iterator[Tuple[int, Any]]:
    for n, line in lines:
        if progress is not None:
            progress(len(line) if isinstance(line, bytes) else 0)
        yield n, line


def _parquet_rows(shard: Shard, progress: Optional[Any]) -> Iterator[Tuple[int, Any]]:
    pq = require_pyarrow()
    import pyarrow as pa

    try:
        pf = pq.ParquetFile(shard.path)
    except (OSError, pa.ArrowException) as e:
        raise SourceError(f"{shard.name}: cannot read the Parquet file ({e}); check that it is Parquet")
    n = 0
    per_row = shard.size / max(1, pf.metadata.num_rows)
    try:
        for batch in pf.iter_batches(batch_size=1024):
            for row in batch.to_pylist():
                n += 1
                if progress is not None:
                    progress(per_row)
                yield n, _present(row)
    except (OSError, pa.ArrowException) as e:
        raise SourceError(f"{shard.name}: row {n + 1}: cannot read the Parquet file ({e})")


def _present(row: Any) -> Any:
    """A decoded row without its null fields (at every depth of objects; lists are kept as they are)."""
    if isinstance(row, dict):
        return {k: _present(v) for k, v in row.items() if v is not None}
    return row
