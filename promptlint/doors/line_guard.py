"""The one escaping step for every line promptlint writes to stdout and stderr.

A CI log is read line by line and some lines are commands: GitHub's runner acts on a line that
starts with ``::`` (after leading whitespace), Azure Pipelines on ``##vso[`` and ``##[``. A file
name or a configuration value from a pull request that carries a line break would start such a
line (``x.j2\\n::error::pwned``), in any output format and in any note or error on stderr.

``cli.main`` puts a ``LineGuard`` around ``sys.stdout`` and ``sys.stderr`` for the whole command, so
every ``print`` goes through it: a line (split where the runner splits: LF, CR, CRLF) that would
read as a command gets a leading backslash. The ``github``
reporter writes its own workflow commands through ``write_command`` (their data already
%-escaped: one line each); nothing else can. Bytes written to ``.buffer`` (the language server's
JSON-RPC frames) do not pass here; JSON output never starts a line with ``::`` anyway.
"""

from __future__ import annotations

import re
from typing import TextIO

# a line the CI would read as a command, once leading whitespace is trimmed
_COMMAND = re.compile(r"[ \t\f\v]*(?:::|##\[|##vso\[)")
# where a runner splits its output into lines (.NET's ReadLine: CR, LF, CRLF); not the other Unicode
# breaks, which JSON output may carry raw inside a string, where a backslash would break it
_BREAK = re.compile("\r\n|[\r\n]")
_AFTER_BREAK = re.compile(r"([\r\n])(?=[ \t\f\v]*(?:::|##\[|##vso\[))")  # a break, then a line that reads as a command
_PREFIXES = ("::", "##[", "##vso[")
NEUTRAL = "\\"  # what a neutralised line starts with


def neutral(line: str) -> str:
    """``line`` (no line break inside) as it is written: a backslash first when the CI would read it as a command."""
    return NEUTRAL + line if _COMMAND.match(line) else line


def _undecided(head: str) -> bool:
    """Whether a line that begins ``head`` could still turn into a command as more text arrives."""
    s = head.lstrip(" \t\f\v")
    return any(p.startswith(s) for p in _PREFIXES) and len(s) < max(map(len, _PREFIXES))


class LineGuard:
    """A text stream around ``raw`` that writes every line through ``neutral``."""

    def __init__(self, raw: TextIO):
        self.raw = raw
        self._pending = ""  # the start of the current line, not yet written (too short to decide)
        self._decided = False  # the current line's start was checked and written

    def write(self, text: str) -> int:
        if not text:
            return 0
        data, at_start = self._pending + text, not self._decided
        self._pending = ""
        cut = max(data.rfind("\n"), data.rfind("\r")) + 1  # where the last (unfinished) line starts
        if (cut > 0 or at_start) and _undecided(data[cut:]):
            data, self._pending = data[:cut], data[cut:]  # wait for the rest of that line
        if data:
            # one pass, and none at all without `::`/`##` (output can be megabytes of JSON)
            out = _AFTER_BREAK.sub(lambda m: m.group(1) + NEUTRAL, data) if "::" in data or "##" in data else data
            if at_start and _COMMAND.match(data):
                out = NEUTRAL + out
            self.raw.write(out)
            self._decided = not data.endswith(("\n", "\r"))
        return len(text)

    def write_command(self, line: str) -> None:
        """A workflow command the ``github`` reporter means to write (one line, data %-escaped)."""
        self.finish_line()
        command, *rest = _BREAK.split(line.rstrip("\r\n"))
        # its data is %-escaped (report/github.py); were a line break to slip through, what follows
        # it is data, and goes through ``neutral`` like every other line
        self.raw.write("\n".join([command] + [neutral(part) for part in rest]) + "\n")
        self._decided = False

    def finish_line(self) -> None:
        """Write a held-back line start (decided as it is now)."""
        if self._pending:
            self.raw.write(neutral(self._pending))
            self._pending, self._decided = "", True

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.raw.flush()

    def __getattr__(self, name):  # isatty, fileno, encoding, buffer (bytes pass untouched), ...
        return getattr(self.raw, name)


class guarded:
    """``with guarded():`` sys.stdout and sys.stderr go through a ``LineGuard`` (restored after)."""

    def __enter__(self):
        import sys

        self.saved = (sys.stdout, sys.stderr)
        if sys.stdout is not None and not isinstance(sys.stdout, LineGuard):
            sys.stdout = LineGuard(sys.stdout)
        if sys.stderr is not None and not isinstance(sys.stderr, LineGuard):
            sys.stderr = LineGuard(sys.stderr)
        return self

    def __exit__(self, *exc) -> None:
        import sys

        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, LineGuard):
                try:
                    stream.finish_line()
                    stream.flush()
                except (OSError, ValueError):
                    pass
        sys.stdout, sys.stderr = self.saved


def one_line(text) -> str:
    """A message for one line of stderr: every line break and control character written as its
    Python escape (``\\n``), so a path or a configuration value cannot start a line of its own."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
