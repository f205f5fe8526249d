"""The first field that broke a conversation's prefix, and its family.

The previous request plus its reply is what the next request should start with. Fields are
compared in the order the provider builds the prompt: the model, the tools, the system text,
the parameters that reach the prompt, then each message of the history (and the reply, when it
was recorded). The first difference is the break; its family says what happened:

``model-changed``, ``tools-added``, ``tools-removed``, ``tools-reordered``, ``tool-rekeyed``
(the same schema with its keys in another order), ``tool-changed``, ``system-changed`` (with
``volatile`` set when the changed text looks like a time, date or id), ``parameters-changed``,
``reasoning-dropped``, ``tool-result-replaced``, ``compaction`` (fewer messages than before:
a summary or a truncation), ``reply-rewritten`` (the reply does not come back as received),
``message-rewritten``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, List, Optional

from promptlint.conversation import shapes

VOLATILE = re.compile(
    r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(:\d{2})?|\b\d{6,}\b|"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b(?=[0-9a-z_-]*\d)[0-9a-z_-]{12,}\b|"
    r"\b(mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d",
    re.IGNORECASE)


@dataclass
class Break:
    family: str
    field: str  # the path: "system", "tools[2]", "messages[3]"
    detail: str  # one phrase for people
    message: Optional[int] = None  # the message index, for a message's break
    volatile: bool = False  # system-changed: the changed text looks like a time or an id
    before: str = ""  # the differing text, shortened
    after: str = ""


def first_break(prev: shapes.Shape, reply: List[Any], cur: shapes.Shape) -> Optional[Break]:
    """The first field where ``cur`` does not continue ``prev`` + ``reply``, or None."""
    if prev.model != cur.model:
        return Break("model-changed", "model", f"model {prev.model!r} became {cur.model!r}",
                     before=str(prev.model), after=str(cur.model))
    found = _tools(prev.tools, cur.tools, cur.kind)
    if found:
        return found
    if prev.system != cur.system:
        return _system(prev.system, cur.system)
    for key in sorted(set(prev.params) | set(cur.params)):
        if prev.params.get(key) != cur.params.get(key):
            return Break("parameters-changed", key, f"`{key}` changed", before=_short(prev.params.get(key)),
                         after=_short(cur.params.get(key)))
    return _messages(prev, reply, cur)


def _tools(a: List[Any], b: List[Any], kind: str) -> Optional[Break]:
    names_a, names_b = [shapes.tool_name(t) for t in a], [shapes.tool_name(t) for t in b]
    added = [n for n in names_b if n not in names_a]
    removed = [n for n in names_a if n not in names_b]
    if added or removed:
        family = "tools-added" if added and not removed else "tools-removed" if removed and not added else "tools-changed"
        i = next((i for i in range(max(len(a), len(b))) if names_a[i:i + 1] != names_b[i:i + 1]), 0)
        what = ", ".join(([f"added {', '.join(added)}"] if added else []) + ([f"removed {', '.join(removed)}"] if removed else []))
        return Break(family, f"tools[{i}]", f"tools {what}", before=", ".join(names_a), after=", ".join(names_b))
    if names_a != names_b:
        i = next(i for i in range(len(a)) if names_a[i] != names_b[i])
        return Break("tools-reordered", f"tools[{i}]", "the same tools in another order",
                     before=", ".join(names_a), after=", ".join(names_b))
    for i, (x, y) in enumerate(zip(a, b)):
        cx, cy = shapes.canon(x, kind), shapes.canon(y, kind)
        if cx == cy:
            continue
        if _sorted(cx) == _sorted(cy):
            return Break("tool-rekeyed", f"tools[{i}]", f"tool {names_a[i]!r}: the same schema with its keys in another order",
                         before=_short(cx), after=_short(cy))
        return Break("tool-changed", f"tools[{i}]", f"tool {names_a[i]!r} changed", before=_short(cx), after=_short(cy))
    return None


def _sorted(text: str) -> str:
    return json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False)


def _system(a: Optional[str], b: Optional[str]) -> Break:
    ta, tb = _plain(a), _plain(b)
    start = next((i for i in range(min(len(ta), len(tb))) if ta[i] != tb[i]), min(len(ta), len(tb)))
    end = 0
    while end < min(len(ta), len(tb)) - start and ta[-1 - end] == tb[-1 - end]:
        end += 1
    # the changed words, widened to whole tokens of text around the change
    lo = start
    while lo > 0 and (tb[lo - 1].isalnum() or tb[lo - 1] in ":-_"):
        lo -= 1
    hi_a, hi_b = len(ta) - end, len(tb) - end
    while hi_b < len(tb) and (tb[hi_b].isalnum() or tb[hi_b] in ":-_"):
        hi_b += 1
        hi_a += 1
    old, new = ta[lo:hi_a], tb[lo:hi_b]
    volatile = bool(VOLATILE.search(new) or VOLATILE.search(old))
    what = "looks like a time or an id that changes every request" if volatile else "changed"
    return Break("system-changed", "system", f"system text at character {start} {what}", volatile=volatile,
                 before=_short(old), after=_short(new))


def _plain(canonical: Optional[str]) -> str:
    """The text of a canonical system value (its text blocks joined), for pointing at the change."""
    if canonical is None:
        return ""
    value = json.loads(canonical)
    if isinstance(value, str):
        return value
    texts = []

    def walk(v):
        if isinstance(v, dict):
            if isinstance(v.get("text"), str):
                texts.append(v["text"])
            else:
                for x in v.values():
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            texts.append(v)

    walk(value)
    return "\n".join(texts)


def _messages(prev: shapes.Shape, reply: List[Any], cur: shapes.Shape) -> Optional[Break]:
    kind, key = cur.kind, cur.message_key
    a, b = prev.messages, cur.messages
    # the usual turn repeats the whole history as sent: one comparison of the JSON texts (linear
    # in the history) instead of one canonical form per message
    same = len(a) if len(b) >= len(a) and shapes.extends(shapes.wire(prev), len(a), shapes.wire(cur)) else 0
    for k in range(same, min(len(a), len(b))):
        if (a[k] == b[k] and _same_order(a[k], b[k])) or shapes.message_canon(a[k], kind) == shapes.message_canon(b[k], kind):
            continue
        if _role(a[k]) in ("system", "developer") and _role(b[k]) == _role(a[k]):
            found = _system(shapes.canon(_content(a[k])), shapes.canon(_content(b[k])))
            found.field, found.message = f"{key}[{k}]", k
            return found
        if shapes.has_reasoning(a[k]) and shapes.message_canon(shapes.without_reasoning(a[k]), kind) == shapes.message_canon(b[k], kind):
            return Break("reasoning-dropped", f"{key}[{k}]", f"{key}[{k}]: the reasoning sent before is dropped", k)
        if len(b) < len(a) + 1:
            return Break("compaction", f"{key}[{k}]", f"{key}[{k}] onwards replaced ({len(a)} messages became {len(b)}): "
                         "a summary or a truncation", k, before=_short(_text(a[k])), after=_short(_text(b[k])))
        if shapes.is_tool_result(a[k]):
            return Break("tool-result-replaced", f"{key}[{k}]", f"{key}[{k}]: the tool result was replaced", k,
                         before=_short(_text(a[k])), after=_short(_text(b[k])))
        return Break("message-rewritten", f"{key}[{k}]", f"{key}[{k}] rewritten", k,
                     before=_short(_text(a[k])), after=_short(_text(b[k])))
    if len(b) < len(a):
        return Break("compaction", f"{key}[{len(b)}]", f"history cut from {len(a)} to {len(b)} messages", len(b))
    for j, expected in enumerate(reply):
        k = len(a) + j
        if k >= len(b):
            break
        if shapes.message_canon(expected, kind) == shapes.message_canon(b[k], kind):
            continue
        if shapes.has_reasoning(expected) and not shapes.has_reasoning(b[k]):
            return Break("reasoning-dropped", f"{key}[{k}]", f"{key}[{k}]: the reply's reasoning is not sent back", k)
        return Break("reply-rewritten", f"{key}[{k}]", f"{key}[{k}]: the reply does not come back as received", k,
                     before=_short(_text(expected)), after=_short(_text(b[k])))
    return None


def _same_order(a: Any, b: Any) -> bool:
    """Two equal values whose objects list their keys in the same order (the common case, checked
    before the canonical form is built)."""
    # a loop, not all(generator): it runs for every message of every request's history
    if isinstance(a, dict):
        if list(a) != list(b):
            return False
        for k, v in a.items():  # only nested objects can differ in order: strings and numbers are skipped
            if isinstance(v, (dict, list)) and not _same_order(v, b[k]):
                return False
        return True
    if isinstance(a, list):
        for x, y in zip(a, b):
            if isinstance(x, (dict, list)) and not _same_order(x, y):
                return False
    return True


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _content(message: Any) -> Any:
    return message.get("content") if isinstance(message, dict) else message


def _text(message: Any) -> str:
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        return message["content"]
    return shapes.canon(message)


def _short(text: Any, limit: int = 60) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
