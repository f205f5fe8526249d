"""The approximate chat framing of an OpenAI Chat Completions body, for `promptlint diff` when no
chat template is given (docs/operators.md, "Chat Completions bodies without a chat template").

A served model's chat template decides the real text; without it, a body is rendered in ChatML,
the framing most open-weight templates use or resemble, so two bodies can still be compared in
tokens. The framing, exactly:

- the tools, when the body has any, first (where most templates put them, in a system turn):
  ``<|im_start|>system\\n# Tools\\n`` + each tool as JSON on its own line + ``<|im_end|>\\n``;
- each message: ``<|im_start|>{role}`` (`` name={name}`` when it has one) ``\\n``, its content
  (a string; for a list of parts, each text part's text and every other part as JSON, one per
  line), each tool call as JSON ``{"name": …, "arguments": …}`` on its own line, ``<|im_end|>\\n``;
- ``<|im_start|>assistant\\n`` unless ``add_generation_prompt`` is false.

JSON keeps the body's key order (``json.dumps``, ``", "``/``": "`` separators, non-ASCII as is):
key order reaches the prompt in real templates too. The markers are plain text; a tokenizer that
has them as special tokens (Qwen) reads them as such. A real template adds what this cannot know
(a default system prompt, the date, tool-use instructions), so figures are approximate.
"""

from __future__ import annotations

import json
from typing import Any, List, Tuple

NAME = "chatml"


class BodyError(ValueError):
    """The body is not a usable Chat Completions body; the message says which field."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _content(content: Any, where: str) -> List[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise BodyError(f"`{where}.content` must be a string or a list of content parts")
    out = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            out.append(part["text"])
        else:
            out.append(_json(part))
    return out


def render(body: dict) -> str:
    """The body's text in the approximate framing (BodyError for a field of the wrong type)."""
    head, pieces, tail = parts(body)
    return head + "".join(pieces) + tail


def parts(body: dict, start: int = 0) -> Tuple[str, List[str], str]:
    """The framing in its parts: the tools' block, each message's text from message ``start`` on
    (a caller that already rendered the messages before it joins the rest to that text), and the
    generation prompt. BodyError for a field of the wrong type among those rendered."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages[start:]):
        raise BodyError("`messages` must be a list of objects")
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise BodyError("`tools` must be a list of tool objects")
    head = "<|im_start|>system\n# Tools\n" + "".join(_json(t) + "\n" for t in tools) + "<|im_end|>\n" if tools else ""
    pieces = [_message(m, i) for i, m in enumerate(messages[start:], start)]
    tail = "<|im_start|>assistant\n" if body.get("add_generation_prompt", True) is not False else ""
    return head, pieces, tail


def _message(m: dict, i: int) -> str:
    role = m.get("role")
    if not isinstance(role, str):
        raise BodyError(f"`messages[{i}].role` must be a string")
    name = m.get("name")
    head = f"<|im_start|>{role}" + (f" name={name}" if isinstance(name, str) else "") + "\n"
    lines = _content(m.get("content"), f"messages[{i}]")
    calls = m.get("tool_calls") or []
    if not isinstance(calls, list):
        raise BodyError(f"`messages[{i}].tool_calls` must be a list")
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise BodyError(f"`messages[{i}].tool_calls` entries must be objects with a `function`")
        lines.append(_json({"name": function.get("name"), "arguments": function.get("arguments")}))
    return head + "\n".join(lines) + "<|im_end|>\n"
