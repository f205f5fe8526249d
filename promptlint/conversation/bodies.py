"""Recorded request bodies (JSON text) parsed so that a conversation's history is parsed once.

A conversation of N turns sends its whole history each turn: O(N²) messages in all. A body whose
message list starts with the text of the previous body's list from the same sender (the same
messages written identically, up to a message boundary: JSON values delimit themselves) shares
that body's parsed messages and parses only the ones after them, so the parsed objects, and the
work, stay O(N); the analysis compares and renders the shared history once too.

The result equals ``json.loads``: ``json``'s own scanner parses every value, and a text this walk
does not take (not an object, a repeated key, an error anywhere) goes to ``json.loads`` itself,
which gives the result or the error. Each message list's raw JSON text comes back with the body:
the wire text ``shapes.extends`` compares (otherwise written again by ``shapes.messages_json``).
Nothing parsed is ever changed in place by the analysis (it copies what it rewrites), so sharing
the message objects is safe.
"""

from __future__ import annotations

import json
from json.decoder import WHITESPACE, scanstring
from typing import Any, Dict, Hashable, Optional, Tuple

from promptlint.conversation.shapes import MESSAGE_KEYS

HISTORY_KEYS = frozenset(MESSAGE_KEYS.values())  # messages, input, contents
_scan = json.JSONDecoder().scan_once  # what json.loads runs for each value (the C scanner when built)
_ws = WHITESPACE.match


class Parser:
    """Bodies in the order they were sent; ``sender`` keys the previous body a body may repeat."""

    def __init__(self) -> None:
        # sender -> {history key: (its raw text without the closing bracket, its parsed messages)}
        self._last: Dict[Hashable, Dict[str, Tuple[str, list]]] = {}

    def parse(self, text: str, sender: Hashable) -> Tuple[Any, Dict[str, str]]:
        """``json.loads(text)`` (its errors too), and the raw JSON text of each message list."""
        walked = _walk(text, self._last.get(sender) or {})
        if walked is None:
            self._last.pop(sender, None)
            return json.loads(text), {}
        body, raws = walked
        self._last[sender] = {k: (raw[:-1], body[k]) for k, raw in raws.items() if body[k]}
        return body, raws


def _walk(s: str, last: Dict[str, Tuple[str, list]]) -> Optional[Tuple[Dict[str, Any], Dict[str, str]]]:
    """The top-level object, key by key (None: left to ``json.loads``)."""
    try:
        idx = _ws(s, 0).end()
        if s[idx:idx + 1] != "{":
            return None
        body: Dict[str, Any] = {}
        raws: Dict[str, str] = {}
        idx = _ws(s, idx + 1).end()
        if s[idx:idx + 1] == "}":
            idx += 1
        else:
            while True:
                if s[idx:idx + 1] != '"':
                    return None
                key, idx = scanstring(s, idx + 1)
                if key in body:
                    return None  # json.loads keeps the last value: left to it
                idx = _ws(s, idx).end()
                if s[idx:idx + 1] != ":":
                    return None
                start = _ws(s, idx + 1).end()
                if key in HISTORY_KEYS and s[start:start + 1] == "[":
                    body[key], idx = _history(s, start, last.get(key))
                    raws[key] = s[start:idx]
                else:
                    body[key], idx = _scan(s, start)
                idx = _ws(s, idx).end()
                sep = s[idx:idx + 1]
                if sep == "}":
                    idx += 1
                    break
                if sep != ",":
                    return None
                idx = _ws(s, idx + 1).end()
        if _ws(s, idx).end() != len(s):
            return None
        return body, raws
    except (StopIteration, ValueError, RecursionError):
        return None


def _history(s: str, start: int, last: Optional[Tuple[str, list]]) -> Tuple[list, int]:
    """The message list at ``start``: the previous body's messages when its text is repeated
    (``last``: that text without its closing bracket, and the parsed list, never empty), then
    the ones after them."""
    if last is not None and s.startswith(last[0], start):
        at = start + len(last[0])
        sep = s[at:at + 1]
        if sep == "]":
            return list(last[1]), at + 1
        if sep == ",":
            items = list(last[1])
            while True:  # s[at] is the comma before the next message
                value, at = _scan(s, _ws(s, at + 1).end())
                items.append(value)
                at = _ws(s, at).end()
                sep = s[at:at + 1]
                if sep == "]":
                    return items, at + 1
                if sep != ",":
                    raise ValueError("not a JSON list")
    return _scan(s, start)
