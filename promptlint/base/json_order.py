"""Was a divergence caused by JSON key order or by the order of JSON values (tools, documents)?

Rendered prompts embed JSON: a tools array, one tool object per line, a documents list. Two
renders whose JSON differs only by key order, or only by the order of list items / of
adjacent JSON values, carry the same information but share no tokens past that point.
Given both texts and the character where they first differ, this finds the JSON fragment
(or the run of adjacent fragments) around that character in each text and compares them in
canonical form.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

_DECODER = json.JSONDecoder()
_MAX_SCAN = 2_000_000  # characters; longer renders are not scanned


@dataclass(frozen=True)
class OrderCause:
    kind: str  # "json-key-order" | "json-list-order" | "json-value-order"
    start: int  # character offset where the JSON fragment (or run) starts, in both texts
    message: str


# where a non-empty JSON object or array can start: `{"` / `{}` or `[` + a value or `]`
_OPEN = re.compile(r'\{\s*["}]|\[\s*[-"\[{0-9tfn\]]')
_WINDOW = 1 << 18  # a fragment longer than this many characters is not recognised
_MAX_FAILURES = 2000  # parse attempts that fail before the scan gives up


def fragments(text: str, until: Optional[int] = None) -> List[Tuple[int, int, Any]]:
    """Top-level JSON objects/arrays in ``text``: (start, end, value), left to right, non-overlapping.

    With ``until``, scanning stops at the first fragment that starts after ``until`` and is not
    adjacent (only whitespace or commas between) to the previous one: nothing past it can
    contain ``until`` or belong to the run of values around it. Each attempt decodes a bounded
    window (json's error path counts lines from the start of its input), and the scan gives up
    after ``_MAX_FAILURES`` failed attempts, so the cost stays linear on any input.
    """
    out: List[Tuple[int, int, Any]] = []
    if len(text) > _MAX_SCAN:
        return out
    i = 0
    failures = 0
    for m in _OPEN.finditer(text):
        j = m.start()
        if j < i:
            continue
        if until is not None and j > until and not (out and text[out[-1][1] : j].strip(" \t\r\n,") == ""):
            break
        try:
            value, length = _DECODER.raw_decode(text[j : j + _WINDOW])
        except (ValueError, RecursionError):
            failures += 1
            if failures > _MAX_FAILURES:
                break
            continue
        if isinstance(value, (dict, list)) and value:
            out.append((j, j + length, value))
            i = j + length
    return out


def _canon(value: Any, sort_lists: bool) -> Any:
    if isinstance(value, dict):
        return {k: _canon(v, sort_lists) for k, v in value.items()}
    if isinstance(value, list):
        items = [_canon(v, sort_lists) for v in value]
        if sort_lists:
            items.sort(key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
        return items
    return value


def _key(value: Any, sort_lists: bool = False) -> str:
    return json.dumps(_canon(value, sort_lists), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _runs(text: str, frags: List[Tuple[int, int, Any]]) -> List[Tuple[int, int, List[Any]]]:
    """Maximal runs of fragments separated only by whitespace or commas."""
    runs: List[Tuple[int, int, List[Any]]] = []
    for start, end, value in frags:
        if runs and text[runs[-1][1] : start].strip(" \t\r\n,") == "":
            s0, _, values = runs[-1]
            runs[-1] = (s0, end, values + [value])
        else:
            runs.append((start, end, [value]))
    return runs


def _containing(items, offset):
    for item in items:
        if item[0] <= offset < item[1]:
            return item
    return None


def explain(base: str, variant: str, char_offset: Optional[int] = None) -> Optional[OrderCause]:
    """The order cause of the first difference between two renders, or None."""
    if char_offset is None:
        n = min(len(base), len(variant))
        char_offset = next((i for i in range(n) if base[i] != variant[i]), n)
    fa, fb = fragments(base, char_offset), fragments(variant, char_offset)
    a, b = _containing(fa, char_offset), _containing(fb, char_offset)
    if a and b and a[0] == b[0] and json.dumps(a[2]) != json.dumps(b[2]):  # dict == ignores key order
        if _key(a[2]) == _key(b[2]):
            return OrderCause(
                "json-key-order",
                a[0],
                f"the renders differ here only by JSON key order (the JSON value at character {a[0]} has the "
                "same keys and values in another order); serialize with sorted keys",
            )
        if _key(a[2], True) == _key(b[2], True):
            return OrderCause(
                "json-list-order",
                a[0],
                f"the renders differ here only by the order of items in a JSON list (the JSON value at character "
                f"{a[0]}, perhaps with key order too); sort tools/documents (and keys) by a stable key",
            )
    ra, rb = _containing(_runs(base, fa), char_offset), _containing(_runs(variant, fb), char_offset)
    if ra and rb and ra[0] == rb[0] and len(ra[2]) > 1 and len(ra[2]) == len(rb[2]):
        ka, kb = [_key(v) for v in ra[2]], [_key(v) for v in rb[2]]
        if ka != kb and sorted(ka) == sorted(kb):
            return OrderCause(
                "json-value-order",
                ra[0],
                f"the renders differ here only by the order of {len(ka)} adjacent JSON values starting at character "
                f"{ra[0]} (tools or documents in another order); sort them by a stable key",
            )
    return None
