"""Where a string value sits in a JSON text, character by character (a leaf: standard library only).

A chat template stored in tokenizer_config.json is one JSON string: findings give the line and
column within the template, and CI annotations need the JSON file's own line and column of that
character. ``string_at`` finds the value of a key path (the last duplicate key wins, as in
``json.loads``); ``char_offsets`` maps each decoded character to its offset in the JSON text.
"""

from __future__ import annotations

import re
from json.decoder import scanstring
from typing import List, Optional, Sequence, Tuple, Union

_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _skip(text: str, i: int) -> int:
    """The end of the JSON value starting at ``i`` (iterative: any nesting depth)."""
    if text[i] == '"':
        return scanstring(text, i + 1)[1]
    if text[i] not in "{[":
        m = _SCALAR.match(text, i)
        if m is None:
            raise ValueError(f"no JSON value at offset {i}")
        return m.end()
    depth = 0
    while True:
        c = text[i]
        if c == '"':
            i = scanstring(text, i + 1)[1]
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def _member(text: str, i: int, step: Union[str, int]) -> Optional[int]:
    """Offset of the value of ``step`` (a key, or an index) in the container starting at ``i``."""
    opening, closing = ("{", "}") if isinstance(step, str) else ("[", "]")
    if text[i] != opening:
        return None
    i = _ws(text, i + 1)
    found, index = None, 0
    while text[i] != closing:
        if isinstance(step, str):
            key, i = scanstring(text, i + 1)
            i = _ws(text, _ws(text, i) + 1)  # past the colon
            if key == step:
                found = i  # keep going: json.loads keeps the last of duplicate keys
        elif index == step:
            return i
        i = _ws(text, _skip(text, i))
        index += 1
        if text[i] == ",":
            i = _ws(text, i + 1)
    return found


def string_at(text: str, path: Sequence[Union[str, int]]) -> Optional[int]:
    """Offset of the opening quote of the string at ``path`` (keys and list indices), or None."""
    try:
        i = _ws(text, 0)
        for step in path:
            found = _member(text, i, step)
            if found is None:
                return None
            i = found
        return i if text[i] == '"' else None
    except (ValueError, IndexError):
        return None


def char_offsets(text: str, quote: int) -> List[int]:
    """Offset in ``text`` of each character of the string whose opening quote is at ``quote``,
    followed by the closing quote's offset (so an exclusive end maps too)."""
    out: List[int] = []
    i = quote + 1
    while True:
        c = text[i]
        if c == '"':
            out.append(i)
            return out
        out.append(i)
        if c != "\\":
            i += 1
        elif text[i + 1] != "u":
            i += 2
        elif _surrogate_pair(text, i):
            i += 12  # one character in Python, as json.loads decodes it
        else:
            i += 6


def _surrogate_pair(text: str, i: int) -> bool:
    high = int(text[i + 2 : i + 6], 16)
    if not 0xD800 <= high < 0xDC00 or text[i + 6 : i + 8] != "\\u":
        return False
    return 0xDC00 <= int(text[i + 8 : i + 12], 16) < 0xE000


def line_column(text: str, offset: int) -> Tuple[int, int]:
    """1-based line and column (code points) of ``offset`` in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1
