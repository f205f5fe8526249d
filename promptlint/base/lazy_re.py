"""A module-level regular expression compiled on its first use.

A module's patterns are compiled when it is imported, and ``re`` keeps nothing between processes:
a one-template `check` compiled ~45 of promptlint's own, some of them only for other kinds of file
(Python and TypeScript suppression comments, launch-configuration flags, Prompty role lines), the
cache's prune or an error's wording (~4 ms in all). ``compile`` gives a stand-in with the same
methods and attributes (``search``, ``finditer``, ``groupindex``, ...) that compiles the pattern
when one is first asked for. Only for patterns used through their methods: it is not a
``re.Pattern`` (``isinstance`` and ``re.sub(pattern, ...)`` want the compiled one: ``.compiled``).
"""

from __future__ import annotations

import re


class LazyPattern:
    __slots__ = ("_source", "_flags", "_compiled")

    def __init__(self, source: str, flags: int = 0):
        self._source, self._flags, self._compiled = source, flags, None

    @property
    def compiled(self) -> "re.Pattern":
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def __getattr__(self, name: str):  # only for what the slots above do not hold: the pattern's own
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"lazy_re.compile({self._source!r}, {self._flags!r})"


def compile(source: str, flags: int = 0) -> LazyPattern:  # noqa: A001 - re.compile's name, on purpose
    return LazyPattern(source, flags)
