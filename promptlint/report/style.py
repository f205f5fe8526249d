"""Terminal colour (whether to use it is the ``ReportContext``'s ``color``: only on a TTY, never
with NO_COLOR, https://no-color.org; ``use_color`` decides it from what the front end passes)."""

from __future__ import annotations

from typing import Mapping

CODES = {"bold": "1", "red": "31", "yellow": "33", "cyan": "36", "blue": "34", "dim": "2", "green": "32"}


def use_color(stream, environ: Mapping[str, str]) -> bool:
    """Colour for ``stream``: never with NO_COLOR, always with FORCE_COLOR, else on a terminal."""
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


class Style:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles:
            return text
        return "\x1b[" + ";".join(CODES[s] for s in styles) + "m" + text + "\x1b[0m"


def shown_path(path: str) -> str:
    """A path for a one-line human report: control characters (a newline or an escape sequence in a
    file name) are shown escaped, so a finding stays one line and cannot drive the terminal."""
    return shown(path)


def shown(text: str, keep: str = "") -> str:
    """``text`` with every non-printable character but those in ``keep`` written as its Python
    escape (``\x1b``): a file name from a pull request cannot drive a terminal or a CI log."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in keep else repr(ch)[1:-1] for ch in text)
