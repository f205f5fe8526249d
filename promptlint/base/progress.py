"""A progress bar on stderr for long runs (`check` over many files, `audit` over a large trace).

Shown only when stderr is a terminal and the command's output is for people: a pipe, a CI log,
a daemon's captured stream and the machine formats get nothing. The bar is tqdm's; tqdm is
imported only when a bar is shown, so a pre-commit run (stderr not a terminal) never loads it.
``PROMPTLINT_NO_PROGRESS=1`` turns it off on a terminal too (the front end passes its environment:
nothing here reads the process's).
"""

from __future__ import annotations

import sys
from typing import Mapping, Optional


def wanted(stream, environ: Mapping[str, str]) -> bool:
    """Is ``stream`` a terminal a person watches (``environ``: the command's environment)?"""
    if environ.get("PROMPTLINT_NO_PROGRESS", "") not in ("", "0"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


class Bar:
    """A bar created on the first update (the total is known only then); a no-op when not wanted."""

    def __init__(self, what: str, unit: str, enabled: bool, unit_scale: bool = False, every_update: bool = False,
                 file=None) -> None:
        self.what = what
        self.mininterval = 0 if every_update else 0.1  # files are few and slow: show each; trace rows, ten times a second
        self.unit = unit
        self.enabled = enabled
        self.unit_scale = unit_scale
        self.file = file
        self._bar = None

    def __call__(self, done: int, total: Optional[int], postfix: Optional[str] = None) -> None:
        """``done`` of ``total`` (None: unknown) units are finished; ``postfix`` is shown after the rate."""
        if not self.enabled:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=self.what, unit=self.unit, unit_scale=self.unit_scale, file=self.file or sys.stderr,
                             leave=False, dynamic_ncols=True, mininterval=self.mininterval)
        if postfix is not None:
            self._bar.set_postfix_str(postfix, refresh=False)
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
