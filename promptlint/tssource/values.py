"""Small pieces of the TS/JS front end: node text and string values, source spans, text parts
and the JSON text ``JSON.stringify`` gives (no other tssource module is imported here)."""

from __future__ import annotations

import json
from typing import List, Optional

from promptlint.pysource.flow import Hole, Part, Val, merge

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def string_value(node) -> Optional[str]:
    """The value of a plain string literal node (escapes decoded), else None."""
    if node is None or node.type != "string":
        return None
    return "".join(decode_fragment(c) for c in node.named_children)


class Span:
    """Where a tree-sitter node is, with the attributes of a Python ``ast`` node (findings use them)."""

    __slots__ = ("lineno", "col_offset", "end_lineno", "end_col_offset", "path", "_node", "_text")

    def __init__(self, node, path: str):
        start, end = node.start_point, node.end_point
        self.lineno, self.col_offset = start[0] + 1, start[1]
        self.end_lineno, self.end_col_offset = end[0] + 1, end[1]
        self.path = path
        self._node, self._text = node, None

    @property
    def text(self) -> str:
        """The node's source on one line (made when a message asks: most spans are never shown)."""
        if self._text is None:
            self._text = " ".join(text(self._node).split())
        return self._text


def decode_fragment(node) -> str:
    """A string or template fragment's value: escapes decoded, CRLF read as LF (template literals)."""
    raw = text(node)
    if node.type != "escape_sequence":
        return raw.replace("\r\n", "\n")
    body = raw[1:]
    if body[:1] in _ESCAPES and not body[1:2].isdigit():
        return _ESCAPES[body[:1]]
    if body.startswith("u{"):
        return chr(int(body[2:-1], 16))
    if body.startswith("u") and len(body) == 5:
        return chr(int(body[1:], 16))
    if body.startswith("x") and len(body) == 3:
        return chr(int(body[1:], 16))
    if body.startswith(("\n", "\r")):
        return ""  # a line continuation
    return body


def args_of(call) -> list:
    a = call.child_by_field_name("arguments")
    if a is None:
        return []
    if a.type == "template_string":
        return [a]
    return [c for c in a.named_children if c.type != "comment"]


def joined(parts: List[Part]) -> List[Part]:
    out: List[Part] = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return out


def single_volatile(v: Val) -> bool:
    return v.parts is not None and len(v.parts) == 1 and isinstance(v.parts[0], Hole) and v.parts[0].kind == "volatile"


def js_json(v: Val, indent: str = "", level: int = 0, skip=None) -> Optional[List[Part]]:
    """``JSON.stringify(v, null, indent)`` as parts, when every key and value is known (``skip``: the
    values it leaves out of an object, functions)."""
    nl = "\n" + indent * (level + 1) if indent else ""
    end = "\n" + indent * level if indent else ""
    colon = ": " if indent else ":"
    if v.mapping is not None:
        if not v.mapping:
            return ["{}"]
        out: List[Part] = ["{"]
        kept = [(k, x) for k, x in v.mapping.items() if skip is None or not skip(x)]
        if not kept:
            return ["{}"]
        for i, (k, x) in enumerate(kept):
            inner = js_json(x, indent, level + 1, skip)
            if inner is None:
                return None
            out += [("," if i else "") + nl + json.dumps(k, ensure_ascii=False) + colon] + inner
        return joined(out + [end + "}"])
    if v.items is not None:
        if not v.items:
            return ["[]"]
        out = ["["]
        for i, x in enumerate(v.items):
            inner = js_json(x, indent, level + 1, skip)
            if inner is None:
                return None
            out += [("," if i else "") + nl] + inner
        return joined(out + [end + "]"])
    if v.parts is None:
        return ["null"]
    if len(v.parts) == 1 and isinstance(v.parts[0], Hole):
        h = v.parts[0]
        return ['"', h, '"'] if h.sub not in ("number",) else [h]  # unknown text: a string of it
    if all(isinstance(p, str) for p in v.parts):
        return [json.dumps("".join(v.parts), ensure_ascii=False)]
    return ['"'] + [json.dumps(p, ensure_ascii=False)[1:-1] if isinstance(p, str) else p for p in v.parts] + ['"']


def either(vals: List[Val]) -> Val:
    """One of several values (branches, returns, ``a ?? b``, a field's writes): their hazards, and as
    the text measured the first that holds a volatile value, if one does (a branch that loses blocks)."""
    return merge(sorted(vals, key=lambda v: not has_volatile(v)) if len(vals) > 1 else vals)


def has_volatile(v: Val) -> bool:
    if v.parts is not None:
        return any(isinstance(p, Hole) and p.kind == "volatile" for p in v.parts)
    return any(h.kind == "volatile" for h in v.hazards)
