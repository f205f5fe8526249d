"""A bounded reader for the YAML front matter of prompt files (Prompty's `---` block).

Why not a YAML library: none is a declared dependency, the file comes from the repository
(untrusted: anchors and aliases can blow up, tags can name constructors), and promptlint reads
only a few keys of it (`model.api`, `model.configuration`, `sample`, `inputs.<name>.sample` /
`default`). So this reads the subset those files use, in one pass and with hard caps: block
mappings by indentation, block lists (`- item`, `- key: value`), plain, single- and
double-quoted scalars, block scalars (`|`, `>`, with `-`/`+`), one-line flow lists and flow
mappings of scalars, comments. Anything else (anchors, aliases, tags, multi-line flow
collections) is kept as its raw text: it never becomes code or a reference, and the keys
promptlint uses are read wherever the rest is exotic.
"""

from __future__ import annotations

import json
import re
from typing import Any, List, Optional, Tuple

from promptlint.base import lazy_re

MAX_LINES = 5_000
MAX_DEPTH = 32

_KEY = lazy_re.compile(r"""^(?P<key>"[^"]*"|'[^']*'|[^\s#'"\[\]{},:][^#:]*?|[^\s#:]+?)\s*:(?:\s+|$)(?P<rest>.*)$""")
_OPEN = lazy_re.compile(r"^\s*---\s*$")


class FrontMatterError(ValueError):
    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.message, self.line = message, line


def split(text: str) -> Optional[Tuple[str, int, int]]:
    """(the front matter, its first line, the number of lines up to and including the closing
    `---`), or None when ``text`` does not open with `---` (leading blank lines allowed)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines) or not _OPEN.match(lines[i]):
        return None
    for j in range(i + 1, min(len(lines), MAX_LINES)):
        if _OPEN.match(lines[j]):
            return "\n".join(lines[i + 1 : j]), i + 2, j + 1
    raise FrontMatterError("the front matter opened with `---` is never closed by a `---` line; close it", i + 1)


def parse(text: str, first_line: int = 1) -> Any:
    """The front matter as Python values (FrontMatterError: a line that is not YAML at all)."""
    lines = [(n + first_line, raw) for n, raw in enumerate(text.split("\n")[:MAX_LINES])]
    items = [(n, len(raw) - len(raw.lstrip(" ")), raw.strip()) for n, raw in lines]
    parser = _Parser(items)
    value = parser.block(0, 0)
    return {} if value is None else value


class _Parser:
    def __init__(self, items: List[Tuple[int, int, str]]):
        self.items = items
        self.i = 0

    def _skip(self) -> None:
        while self.i < len(self.items) and (not self.items[self.i][2] or self.items[self.i][2].startswith("#")):
            self.i += 1

    def block(self, indent: int, depth: int) -> Any:
        self._skip()
        if self.i >= len(self.items) or self.items[self.i][1] < indent or depth > MAX_DEPTH:
            return None
        line, at, text = self.items[self.i]
        if text == "-" or text.startswith("- "):
            return self._list(at, depth)
        return self._mapping(at, depth)

    def _mapping(self, indent: int, depth: int) -> dict:
        out: dict = {}
        while True:
            self._skip()
            if self.i >= len(self.items):
                return out
            line, at, text = self.items[self.i]
            if at < indent:
                return out
            if at > indent:
                raise FrontMatterError("unexpected indentation in the front matter", line)
            m = _KEY.match(text)
            if m is None:
                raise FrontMatterError(f"not a `key: value` line in the front matter: {text[:60]!r}", line)
            self.i += 1
            key = _unquote(m.group("key").strip())
            out[key] = self._value(m.group("rest"), indent, depth)

    def _list(self, indent: int, depth: int) -> list:
        out: list = []
        while True:
            self._skip()
            if self.i >= len(self.items):
                return out
            line, at, text = self.items[self.i]
            if at != indent or not (text == "-" or text.startswith("- ")):
                return out
            rest = text[1:].strip()
            if _KEY.match(rest) and not rest.startswith(("'", '"', "[", "{")):
                # `- key: value`: a mapping whose first key sits after the dash
                self.items[self.i] = (line, at + 2, rest)
                out.append(self._mapping(at + 2, depth + 1))
            else:
                self.i += 1
                out.append(self._value(rest, indent, depth))

    def _value(self, rest: str, indent: int, depth: int) -> Any:
        rest = _strip_comment(rest)
        if rest[:1] in ("|", ">"):
            return self._block_scalar(rest, indent)
        if rest:
            return _scalar(rest)
        return self.block(indent + 1, depth + 1)

    def _block_scalar(self, header: str, indent: int) -> str:
        lines: List[str] = []
        body_indent = None
        while self.i < len(self.items):
            line, at, text = self.items[self.i]
            if text and at <= indent:
                break
            if text and body_indent is None:
                body_indent = at
            lines.append("" if not text else " " * (at - (body_indent or at)) + text)
            self.i += 1
        while lines and lines[-1] == "" and "+" not in header:
            lines.pop()
        joined = "\n".join(lines) if header[0] == "|" else re.sub(r"(?<!\n)\n(?!\n)", " ", "\n".join(lines))
        return joined if "-" in header else joined + "\n"


def _strip_comment(text: str) -> str:
    if text.startswith(("'", '"')):
        return text.strip()
    return re.split(r"\s#", text, maxsplit=1)[0].strip()


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        if text[0] == '"':
            try:
                return json.loads(text)
            except ValueError:
                return text[1:-1]
        return text[1:-1].replace("''", "'")
    return text


def _scalar(text: str) -> Any:
    if text[0] in "'\"":
        return _unquote(text)
    if text[0] in "[{" and text[-1] in "]}":
        return _flow(text)
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "~"):
        return None
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?", text):
        return float(text)
    return text


def _flow(text: str) -> Any:
    """A one-line flow list or mapping of scalars; anything nested stays its raw text."""
    inner = text[1:-1].strip()
    if any(c in inner for c in "[]{}"):
        return text
    parts = [p.strip() for p in re.findall(r"""(?:"[^"]*"|'[^']*'|[^,])+""", inner)] if inner else []
    if text[0] == "[":
        return [_scalar(p) for p in parts if p]
    out = {}
    for p in parts:
        key, sep, value = p.partition(":")
        out[_unquote(key.strip())] = _scalar(value.strip()) if value.strip() else None
    return out
