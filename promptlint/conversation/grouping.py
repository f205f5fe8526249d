"""Requests into conversations: by the capture's own key (``conversation``/``session``, a HAR
page, an OTLP conversation id or trace), else by their opening: a request without a key joins
the latest conversation whose first non-system message it repeats, or starts one."""

from __future__ import annotations

from typing import Dict, List, Tuple

from promptlint.conversation import shapes
from promptlint.conversation.capture import Request


def group(requests: List[Request]) -> List[Tuple[str, List[Request]]]:
    """``(name, requests in order)`` per conversation, in order of their first request."""
    keyed: Dict[tuple, List[Request]] = {}  # a dict keeps its keys in order of first insertion
    seen: Dict[tuple, tuple] = {}  # (id of an opening message, kind) -> (it, kept alive, its canonical text)
    for r in requests:
        key = ("key", r.path, r.test_id or "", r.conversation) if r.conversation is not None else ("open", r.path, r.test_id or "", _opening(r, seen))
        found = keyed.get(key)
        if found is None:
            keyed[key] = [r]
        else:
            found.append(r)
    out = []
    counts: Dict[str, int] = {}
    for reqs in keyed.values():
        scope = reqs[0].test_id or ""  # numbered per test (plugin) or per run
        counts[scope] = counts.get(scope, 0) + 1
        label = reqs[0].conversation if reqs[0].conversation is not None else f"#{counts[scope]}"
        out.append((str(label) if reqs[0].test_id is None else f"{reqs[0].test_id} {label}", reqs))
    return out


def _opening(r: Request, seen: Dict[tuple, tuple]) -> str:
    """The canonical text of the first non-system message. Bodies parsed with their history shared
    (the plugin's: ``bodies``) hold the same message object turn after turn: its text is made once."""
    s = shapes.of(r)
    first = next((m for m in s.messages if not (isinstance(m, dict) and m.get("role") in ("system", "developer"))), None)
    known = seen.get((id(first), s.kind))
    if known is None:
        known = seen[(id(first), s.kind)] = (first, shapes.message_canon(first, s.kind))
    return known[1]
