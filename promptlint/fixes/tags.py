"""The tags of a Jinja template's source, with their exact offsets and nesting depth.

Jinja's own lexer reports lines, not offsets, and drops what whitespace control strips, so a
fix that rewrites a span of the source needs its own scan: every `{{ … }}`, `{% … %}` and
`{# … #}` (default delimiters, which both environments use), string literals inside a tag
skipped, `{% raw %}` content kept as text. The scan is used to *propose* edits; whether an
edit is right is decided by rendering it (fixes/verify.py), never by this scan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional

OPENERS = {"{{": ("expr", "}}"), "{%": ("stmt", "%}"), "{#": ("comment", "#}")}
# statements that open a block closed by `end<keyword>` (`set` only without `=`: a block set)
BLOCKS = {"if", "for", "macro", "call", "filter", "block", "with", "autoescape", "trans", "set", "generation"}
_NAME = re.compile(r"(?<![.\w])([A-Za-z_]\w*)")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", re.S)


@dataclass
class Tag:
    kind: str  # "expr" | "stmt" | "comment"
    start: int  # offset of the opening delimiter
    end: int  # offset just past the closing delimiter
    body_start: int  # offset of the body (after the delimiter and any `-`/`+` marker)
    body_end: int
    left: str  # "-", "+" or ""
    right: str
    depth: int  # blocks open before this tag (a closing tag has the depth of its opener)
    keyword: str = ""  # a statement's first word

    def body(self, source: str) -> str:
        return source[self.body_start : self.body_end]

    @property
    def opens(self) -> bool:
        return self.kind == "stmt" and self.keyword in BLOCKS

    @property
    def closes(self) -> bool:
        return self.kind == "stmt" and self.keyword.startswith("end")


def scan(source: str) -> List[Tag]:
    """Every tag of ``source`` in order; an unterminated tag ends the scan (the template would
    not parse, and nothing is fixed in it)."""
    tags: List[Tag] = []
    depth = 0
    pos = 0
    raw = False
    while True:
        start = _next_opener(source, pos)
        if start < 0:
            return tags
        kind, closer = OPENERS[source[start : start + 2]]
        i = start + 2
        left = source[i] if i < len(source) and source[i] in "-+" else ""
        body_start = i + len(left)
        end = _closing(source, body_start, closer, kind != "comment")
        if end < 0:
            return tags
        body_end = end - (1 if source[end - 1 : end] in ("-", "+") and end - 1 >= body_start else 0)
        right = source[body_end:end]
        tag = Tag(kind, start, end + 2, body_start, body_end, left, right, depth)
        pos = end + 2
        if kind == "stmt":
            words = source[body_start:body_end].split(None, 1)
            tag.keyword = words[0] if words else ""
            body = source[body_start:body_end]
            if raw:
                if tag.keyword != "endraw":
                    continue  # inside {% raw %}: text
                raw = False
            elif tag.keyword == "raw":
                raw = True
            elif tag.keyword == "set" and "=" in _without_strings(body):
                pass  # `{% set x = … %}` is a statement, not a block
            elif tag.keyword in BLOCKS:
                depth += 1
            elif tag.keyword.startswith("end") and tag.keyword != "endraw":
                depth = max(0, depth - 1)
                tag.depth = depth
            if tag.keyword in ("elif", "else") and depth:
                tag.depth = depth - 1
            if tag.keyword == "set" and "=" in _without_strings(body):
                tag.keyword = "set="  # never a block opener
        elif raw:
            continue
        tags.append(tag)


def _next_opener(source: str, pos: int) -> int:
    best = -1
    for opener in OPENERS:
        i = source.find(opener, pos)
        if i >= 0 and (best < 0 or i < best):
            best = i
    return best


def _closing(source: str, pos: int, closer: str, skip_strings: bool) -> int:
    """Offset of ``closer`` ending the tag whose body starts at ``pos`` (-1 if none)."""
    i = pos
    while i < len(source):
        c = source[i]
        if skip_strings and c in "'\"":
            m = _STRING.match(source, i)
            if m is None:
                return -1
            i = m.end()
            continue
        if source.startswith(closer, i):
            return i
        i += 1
    return -1


def _without_strings(body: str) -> str:
    return _STRING.sub('""', body)


def blank_strings(body: str) -> str:
    """``body`` with the contents of its string literals blanked (same length, so offsets stay)."""
    return _STRING.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], body)


def names(body: str) -> List[str]:
    """The names a tag body reads or binds (not attributes after a dot, not inside strings)."""
    return _NAME.findall(_without_strings(body))


def source_name(variable: str) -> str:
    """The name the source reads for a finding's variable: a stand-in's key names its call
    (`now()`, `datetime.now()`: `now`, `datetime`) or its filter (`| stamp`: `stamp`)."""
    v = variable.strip()
    if v.startswith("|"):
        return v[1:].strip()
    if v.endswith("()"):
        v = v[:-2]
    return v.split(".", 1)[0]


def references(tag: Tag, source: str, name: str) -> bool:
    return tag.kind != "comment" and references_text(tag.body(source), name)


def references_text(body: str, name: str) -> bool:
    """Does a tag body (or part of one) read or bind ``name``?"""
    return name in names(body)


def line_start(source: str, offset: int) -> int:
    return source.rfind("\n", 0, offset) + 1


def line_end(source: str, offset: int) -> int:
    """Offset just past the newline ending the line at ``offset`` (the end of the text on the last line)."""
    i = source.find("\n", offset)
    return len(source) if i < 0 else i + 1


def enclosing_opener(tags: List[Tag], index: int) -> Optional[int]:
    """Index of the depth-0 block tag that encloses tag ``index`` (None when it is at depth 0)."""
    tag = tags[index]
    if tag.depth == 0 and not tag.closes and tag.keyword not in ("elif", "else"):
        return None
    for j in range(index - 1, -1, -1):
        if tags[j].depth == 0 and tags[j].opens:
            return j
    return None


def matching_end(tags: List[Tag], opener: int) -> Optional[int]:
    """Index of the tag closing the block ``opener`` opens."""
    depth = tags[opener].depth
    for j in range(opener + 1, len(tags)):
        if tags[j].closes and tags[j].depth == depth:
            return j
    return None
