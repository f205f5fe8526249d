"""Progress on stderr while a trace is audited (only when stderr is a terminal), and the
closing line: rows used, skipped and failed, each with its reason."""

from __future__ import annotations

import sys
import time
from typing import IO, Any, Optional

POSTFIX_EVERY = 1024  # rows between updates of the "N requests" text (the bar itself throttles its drawing)


class Progress:
    """The live bar while the trace is read (tqdm, through promptlint.base.progress: bytes of the trace
    read, rate and ETA, with the requests audited) and the closing line."""

    def __init__(self, total_bytes: int, out: IO[str], bar: bool = True) -> None:
        from promptlint.base import progress

        self.total = total_bytes or None
        self.out = out
        self.bytes = 0.0
        self.rows = 0
        self.t0 = time.monotonic()
        self.bar = progress.Bar("auditing", "B" if self.total else "row", bar, unit_scale=True, file=out)

    @classmethod
    def for_stderr(cls, total_bytes: int, environ, bar: bool = True) -> Optional["Progress"]:
        """A progress for a person at a terminal (not a pipe, not PROMPTLINT_NO_PROGRESS=1 in the
        command's ``environ``), else None."""
        from promptlint.base import progress

        return cls(total_bytes, sys.stderr, bar) if progress.wanted(sys.stderr, environ) else None

    def read(self, nbytes: float) -> None:
        self.bytes += nbytes

    def audited(self) -> None:
        self.rows += 1
        postfix = f"{self.rows:,} requests" if self.rows == 1 or self.rows % POSTFIX_EVERY == 0 else None
        self.bar(int(self.bytes) if self.total else self.rows, self.total, postfix)

    def finish(self, tally: Any) -> None:
        self.bar.close()
        self.out.write("\r\x1b[K" + final_line(tally.as_dict(), time.monotonic() - self.t0) + "\n")
        self.out.flush()


def final_line(rows: dict, seconds: float) -> str:
    parts = [f"promptlint: audit: {rows['read']:,} rows in {_clock(seconds)}: {rows['used']:,} used"]
    skipped = "; ".join(f"{n:,} {reason}" for reason, n in rows["skipped_reasons"].items())
    parts.append(f"{rows['skipped']:,} skipped" + (f" ({skipped})" if skipped else ""))
    failed = f"{rows['failed']:,} failed"
    if rows["failed"]:
        failed += f" (first: line {rows['failures'][0]['line']}: {rows['failures'][0]['error']}; all named above)"
    parts.append(failed)
    return ", ".join(parts)


def _clock(s: float) -> str:
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
