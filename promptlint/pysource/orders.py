"""M202/M203 on Python code measured in tokens: the request rendered with stand-in items in two orders.

An unordered collection (a set, a directory listing, a dict built from one) reaches a request without
its items being known. To give the finding the figures a template's order finding has (first divergent
token, eligible KV blocks lost), the request's prompt text is rendered twice with ``STAND_INS`` made-up
items where the collection sits, in their order and reversed, and both renders are tokenized with the
pinned tokenizer (``analyzers.python_source``). Where the collection sits:

- text joined from it (``"\\n\\n".join(docs)``): the items joined by that separator, in place of the join
  (``flow.Hole.order`` marks it);
- a request field built from it with no text of its own (``messages=[... for d in a_set]``): the items,
  one block each, in that field's place;
- tools (M202) whose list is not known: the stand-in tool definitions first, before the system prompt,
  where Anthropic and Bedrock put tools in the cached prefix (OpenAI's server renders them into the
  system message's start too).

The ideal is the render with only the per-request inputs changed (docs/python.md, "Measuring M101"):
a collection after the first per-request input costs nothing beyond what that input costs, and is
not reported.
"""

from __future__ import annotations

import json
from typing import Callable, List, Optional, Tuple

from promptlint.pysource.flow import Hazard, Hole, Part
from promptlint.pysource.layout import SEPARATOR, Layout

STAND_INS = 3


def document_item(i: int) -> str:
    """The ``i``-th (1-based) stand-in item of an unordered collection of text."""
    return f"sample item {i} of the unordered collection (its real text is not known to promptlint)"


def tool_item(i: int) -> str:
    """The ``i``-th stand-in tool definition, as JSON (tools render as JSON blocks, pysource.layout)."""
    return json.dumps({"name": f"sample_tool_{i}", "description": f"sample tool {i} of the unordered collection",
                       "parameters": {"type": "object", "properties": {}}})


def renders(request: Layout, hazard: Hazard, code: str) -> Optional[Tuple[List[Part], List[Part]]]:
    """(the prompt's parts with the stand-ins in order, reversed), or None when the collection's place in
    the request is not known."""
    place = _place(request, hazard, code)
    if place is None:
        return None
    item = tool_item if code == "M202" else document_item
    items = [item(i) for i in range(1, STAND_INS + 1)]
    return place(items), place(list(reversed(items)))


def _place(request: Layout, hazard: Hazard, code: str) -> Optional[Callable[[List[str]], List[Part]]]:
    parts = request.parts()
    for i, p in enumerate(parts):
        if isinstance(p, Hole) and p.order is not None and id(hazard.node) in p.order[1]:
            glue = p.order[0]
            return lambda items, i=i, glue=glue: parts[:i] + [glue.join(items)] + parts[i + 1:]
    for k, block in enumerate(request.blocks):
        if block.val.parts is None and any(h is hazard for h in block.val.hazards):
            return lambda items, k=k: _with_block(request, k, SEPARATOR.join(items))
    if code == "M202" and not any(b.section == "tools" for b in request.blocks):
        return lambda items: [SEPARATOR.join(items)] + ([SEPARATOR] + parts if parts else [])
    return None


def _with_block(request: Layout, k: int, text: str) -> List[Part]:
    out: List[Part] = []
    for i, b in enumerate(request.blocks):
        if i:
            out.append(SEPARATOR)
        if i == k:
            out.append(text)
        elif b.val.parts is not None:
            out.extend(b.val.parts)
    return out
