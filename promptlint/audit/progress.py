"""Progress on stderr while a trace is audited (only when stderr is a terminal), and the
closing line: rows used, skipped and failed, each with its reason."""

from __future__ import annotations

import sys
import time
from typing import IO, Any, Optional

EVERY_S = 1.0


class Progress:
    def __init__(self, total_bytes: int, out: IO[str]) -> None:
        self.total = total_bytes
        self.out = out
        self.bytes = 0.0
        self.rows = 0
        self.t0 = self.last = time.monotonic()

    @classmethod
    def for_stderr(cls, total_bytes: int) -> Optional["Progress"]:
        err = sys.stderr
        return cls(total_bytes, err) if hasattr(err, "isatty") and err.isatty() else None

    def read(self, nbytes: float) -> None:
        self.bytes += nbytes

    def audited(self) -> None:
        self.rows += 1
        if self.rows & 1023 == 0:
            now = time.monotonic()
            if now - self.last >= EVERY_S:
                self.last = now
                self._show(now)

    def _show(self, now: float) -> None:
        dt = max(1e-9, now - self.t0)
        rate = self.rows / dt
        line = f"read {self.rows:,} requests, {rate:,.0f}/s"
        if self.total and self.bytes:
            done = min(1.0, self.bytes / self.total)
            eta = dt * (1 - done) / max(done, 1e-9)
            line += f", {100 * done:.0f}% of {self.total / 1e6:,.0f} MB, ETA {_clock(eta)}"
        self.out.write("\r\x1b[K" + line)
        self.out.flush()

    def finish(self, tally: Any) -> None:
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
