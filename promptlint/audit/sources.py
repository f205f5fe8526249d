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

    from promptlint.doors import bounded_io
    from promptlint.base import jsonl
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


# A Parquet row is capped like a JSONL line, by its decoded size, measured before it becomes
# Python objects: a dictionary-encoded column repeats one stored value on every row (a 9 KB file
# once decoded past 3 GB), and a compressed page expands by its codec's ratio. The dictionaries
# are kept as they are stored (``read_dictionary``) and each batch's row sizes computed on them;
# a file whose decoded rows pass MAX_EXPANSION times its size (at least the line cap) is refused.
PARQUET_BATCH_ROWS = 64
MAX_EXPANSION = 1000


def _parquet_rows(shard: Shard, progress: Optional[Any]) -> Iterator[Tuple[int, Any]]:
    pq = require_pyarrow()
    import pyarrow as pa

    from promptlint.base.jsonl import MAX_LINE_BYTES, LineError

    try:
        schema = pq.ParquetFile(shard.path).schema
        pf = pq.ParquetFile(shard.path, read_dictionary=_byte_array_columns(schema))
    except (OSError, pa.ArrowException) as e:
        raise SourceError(f"{shard.name}: cannot read the Parquet file ({e}); check that it is Parquet")
    cap = max(MAX_LINE_BYTES, MAX_EXPANSION * shard.size)
    decoded = 0
    n = 0
    per_row = shard.size / max(1, pf.metadata.num_rows)
    try:
        for group in range(pf.metadata.num_row_groups):
            meta = pf.metadata.row_group(group)
            stored = sum(meta.column(i).total_uncompressed_size for i in range(meta.num_columns))
            if decoded + stored > cap:  # its pages alone (dictionaries included) would pass the cap
                raise _bomb(shard, cap)
            for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, row_groups=[group]):
                sizes = _row_sizes(batch)
                kept = sum(size for size in sizes if size <= MAX_LINE_BYTES)
                decoded += kept
                if decoded > cap:
                    raise _bomb(shard, cap)
                whole = batch.to_pylist() if kept <= MAX_LINE_BYTES else None  # else a row at a time
                for i, size in enumerate(sizes):
                    n += 1
                    if progress is not None:
                        progress(per_row)
                    if size > MAX_LINE_BYTES:
                        yield n, LineError(f"row larger than {MAX_LINE_BYTES:,} bytes decoded; split the record")
                        continue
                    row = whole[i] if whole is not None else batch.slice(i, 1).to_pylist()[0]
                    yield n, _present(row)
    except (OSError, pa.ArrowException) as e:
        raise SourceError(f"{shard.name}: row {n + 1}: cannot read the Parquet file ({e})")


def _bomb(shard: Shard, cap: int) -> SourceError:
    from promptlint.base.jsonl import MAX_LINE_BYTES

    return SourceError(f"{shard.name}: its rows decode to more than {cap:,} bytes (the cap: {MAX_EXPANSION:,} times the "
                       f"file's size, at least {MAX_LINE_BYTES:,}); a column's values are repeated or compressed far beyond "
                       "any trace: not read further")


def _byte_array_columns(schema) -> List[str]:
    """The columns whose values are byte strings (what a dictionary page can repeat), read as stored."""
    return [schema.column(i).path for i in range(len(schema))
            if schema.column(i).physical_type == "BYTE_ARRAY"]


def _row_sizes(batch) -> List[int]:
    """Each row's size once decoded (bytes of its strings, widths of its numbers), computed on the
    stored form: a dictionary value's length counts on every row that refers to it."""
    import numpy as np

    total = np.zeros(batch.num_rows, dtype=np.int64)
    for column in batch.columns:
        total += _sizes(column)
    return total.tolist()


def _sizes(arr) -> Any:
    """Per element of ``arr``, its decoded size in bytes (a numpy int64 array)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    t = arr.type
    if pa.types.is_dictionary(t):
        per_value = _sizes(arr.dictionary)
        indices = pc.fill_null(arr.indices, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        out = per_value[indices] if len(per_value) else np.zeros(len(arr), dtype=np.int64)
        return np.where(arr.is_null().to_numpy(zero_copy_only=False), 0, out)
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return pc.fill_null(pc.binary_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    if pa.types.is_map(t):  # (keys and items are not sliced with the array: cut them by its offsets)
        first, last = arr.offsets[0].as_py(), arr.offsets[-1].as_py()
        return _per_parent(arr, _sizes(arr.keys.slice(first, last - first)) + _sizes(arr.items.slice(first, last - first)))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _per_parent(arr, _sizes(arr.flatten()))
    if pa.types.is_struct(t):
        out = np.zeros(len(arr), dtype=np.int64)
        for child in arr.flatten():
            out += _sizes(child)
        return out
    width = getattr(t, "bit_width", 64) if pa.types.is_primitive(t) else 64
    return np.full(len(arr), max(1, width // 8), dtype=np.int64)


def _per_parent(arr, child_sizes) -> Any:
    """Sum the sizes of a list's (or map's) values per row, by its offsets (pyarrow's
    list_parent_indices aborts the process on a map)."""
    import numpy as np

    lengths = np.diff(arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64))
    parents = np.repeat(np.arange(len(arr)), lengths)
    return np.bincount(parents, weights=child_sizes, minlength=len(arr)).astype(np.int64)[: len(arr)]


def _present(row: Any) -> Any:
    """A decoded row without its null fields (at every depth of objects; lists are kept as they are)."""
    if isinstance(row, dict):
        return {k: _present(v) for k, v in row.items() if v is not None}
    return row
