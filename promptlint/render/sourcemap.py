"""Source maps: which template line and column produced each rendered character.

A render is a sequence of output chunks. Each chunk comes either from literal
template text (we know its exact source offset when we can find it) or from an
expression (`{{ ... }}`), located at the expression's opening braces.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple


@dataclass(frozen=True)
class Location:
    """A span in a template's source (1-based lines and columns)."""

    template: str  # template name (path relative to its search root)
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int

    @property
    def start(self) -> Tuple[int, int]:
        return (self.line, self.column)


@dataclass(frozen=True)
class Chunk:
    """A span of a render and the template text it came from."""

    start: int  # offset in the rendered string
    end: int
    template: str
    kind: str  # "literal" | "expression"
    line: int  # template line the engine reports for this chunk
    source_start: Optional[int]  # offset in the template source, when known
    source_end: Optional[int]


class SourceText:
    """A template's source with fast offset <-> (line, column) conversion."""

    def __init__(self, text: str):
        self.text = text
        starts = [0]
        find = text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._line_starts = starts

    def line_start(self, line: int) -> int:
        line = min(max(line, 1), len(self._line_starts))
        return self._line_starts[line - 1]

    def line_end(self, line: int) -> int:
        if line < len(self._line_starts):
            return self._line_starts[line] - 1
        return len(self.text)

    def position(self, offset: int) -> Tuple[int, int]:
        """1-based (line, column) of a source offset."""
        idx = bisect.bisect_right(self._line_starts, offset) - 1
        return idx + 1, offset - self._line_starts[idx] + 1

    def line_text(self, line: int) -> str:
        return self.text[self.line_start(line) : self.line_end(line)]


class SourceMap:
    """Rendered offset -> template Location, built chunk by chunk (``add``), or from a whole
    render's chunks when first read (``defer``: most renders, the variants, are never located)."""

    def __init__(self, sources: Dict[str, SourceText]):
        self.sources = sources
        self._chunks: List[Chunk] = []
        self._starts: List[int] = []
        self._cursor: Dict[str, int] = {}  # per template: source offset after the last mapped chunk
        self._pending: Optional[Tuple[str, List[Tuple[int, str, int, bool]]]] = None

    def defer(self, text: str, chunks: List[Tuple[int, str, int, bool]]) -> None:
        """The render ``text`` made of ``chunks`` (length, template, line, is_literal), in order:
        mapped as ``add`` would, when the map is first read."""
        self._pending = (text, chunks)

    @property
    def chunks(self) -> List[Chunk]:
        if self._pending is not None:
            text, pending = self._pending
            self._pending = None
            offset = 0
            for n, template, line, is_literal in pending:
                self.add(offset, text[offset : offset + n], template, line, is_literal)
                offset += n
        return self._chunks

    def add(self, start: int, text: str, template: str, line: int, is_literal: bool) -> None:
        if self._pending is not None:
            self.chunks  # noqa: B018 - the deferred chunks come first
        src = self.sources.get(template)
        s_start = s_end = None
        if src is not None:
            cursor = max(self._cursor.get(template, 0), 0)
            if is_literal:
                s_start = self._find_literal(src, text, line, cursor)
                if s_start is not None:
                    s_end = s_start + len(text)
            else:
                span = _find_expression(src, line, cursor)
                if span is not None:
                    s_start, s_end = span
            if s_end is not None:
                self._cursor[template] = s_end
        kind = "literal" if is_literal else "expression"
        self._chunks.append(Chunk(start, start + len(text), template, kind, line, s_start, s_end))
        self._starts.append(start)

    @staticmethod
    def _find_literal(src: SourceText, text: str, line: int, cursor: int) -> Optional[int]:
        if not text:
            return None
        # Literal text appears verbatim in the source unless whitespace control or newline
        # normalisation changed it. Searches stop at the lines the chunk can span: an unbounded
        # find per chunk made a template whose literals never match (CRLF) quadratic.
        window_end = src.line_end(line + text.count("\n") + 1) + 1 + len(text)
        hit = src.text.find(text, cursor, window_end)
        if hit == -1:
            hit = src.text.find(text, src.line_start(line), window_end)
        return hit if hit != -1 else None

    def locate(self, offset: int) -> Optional[Location]:
        """Template location of the rendered character at ``offset``."""
        chunks = self.chunks
        if not chunks:
            return None
        i = bisect.bisect_right(self._starts, offset) - 1
        # Empty chunks share a start with the next chunk; take the last non-empty one at this offset.
        while i > 0 and chunks[i].end <= offset and chunks[i].start == chunks[i - 1].start:
            i -= 1
        i = max(i, 0)
        chunk = chunks[i]
        src = self.sources.get(chunk.template)
        if src is None:
            return Location(chunk.template, chunk.line, 1, chunk.line, 1)
        if chunk.kind == "literal" and chunk.source_start is not None:
            pos = chunk.source_start + min(max(offset - chunk.start, 0), max(chunk.end - chunk.start - 1, 0))
            line, col = src.position(pos)
            return Location(chunk.template, line, col, line, col + 1)
        if chunk.source_start is not None:
            line, col = src.position(chunk.source_start)
            end_line, end_col = src.position(chunk.source_end)
            return Location(chunk.template, line, col, end_line, end_col)
        return Location(chunk.template, chunk.line, 1, chunk.line, 1)


def _find_expression(src: SourceText, line: int, cursor: int) -> Optional[Tuple[int, int]]:
    """Span of the `{{ ... }}` that produced an expression chunk reported at ``line``."""
    line_start, line_end = src.line_start(line), src.line_end(line)
    start = src.text.find("{{", max(cursor, line_start), line_end + 2)
    if start == -1:
        start = src.text.find("{{", line_start, line_end + 2)
        if start == -1:
            return None
    end = src.text.find("}}", start)
    return (start, len(src.text) if end == -1 else end + 2)
