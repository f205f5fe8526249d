"""What one LLM request sends, block by block, in the order its provider builds the cached prefix.

The same walk serves Python SDK calls (values from ``flow``) and captured request bodies
(``promptlint diff``, through ``from_json``):

- Anthropic Messages and Bedrock: ``tools`` -> ``system`` -> ``messages`` (the documented
  order of the cached prefix); Bedrock Converse keeps its tools in ``toolConfig.tools``;
- OpenAI Responses: ``instructions``, then ``input`` (a string or a list of items);
- Gemini: ``system_instruction`` (a keyword, ``config``, or the ``GenerativeModel`` it is called
  on), then ``contents``;
- anything else ("chat": Chat Completions, LiteLLM, vLLM, LangChain): ``system``/``instructions``,
  the messages, then ``prompt``/``input``/``contents``.

A block's text is its ``text`` (or the text inside tool results, Gemini parts, Bedrock wrappers);
a tool definition or any other block renders as JSON. Blocks are joined by a blank line (no role
markers: the provider's own serialization is not public). A cache breakpoint closes the prefix
after the block that carries it: ``cache_control`` (Anthropic, LiteLLM), ``prompt_cache_breakpoint``
(OpenAI), a ``cachePoint`` block (Bedrock, it closes the block before it), or a top-level
``cache_control`` (Anthropic automatic caching: the last block).
"""

from __future__ import annotations

import ast
import json
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from promptlint.pysource.flow import Hole, Part, Val

SEPARATOR = "\n\n"
MARKERS = ("cache_control", "prompt_cache_breakpoint")  # keys on a block that close the cached prefix
POINT = "cachePoint"  # Bedrock: a block of its own that closes the prefix before it
# where a block's text lives, in order of preference (Bedrock wraps blocks in a one-key object)
TEXT_KEYS = ("text", "thinking", "content", "output", "parts", "toolResult", "guardContent", "source", "data")
PROMPT_KEYS = ("prompt", "prompts", "input", "contents", "text")
USER_ROLES = ("user", "human")  # a turn whose text is the person's own (LangChain says "human")


@dataclass
class Breakpoint:
    marker: str  # cache_control | prompt_cache_breakpoint | cachePoint
    where: str  # the block it closes: "system[0]", "messages[1].content[2]"
    node: Any = None  # where it is written (an ast node), for findings
    automatic: bool = False  # Anthropic's top-level cache_control: the last block, wherever it is


@dataclass
class Block:
    val: Val
    where: str
    section: str  # tools | system | messages | prompt


@dataclass
class Layout:
    provider: str  # anthropic | bedrock | openai-responses | gemini | chat
    blocks: List[Block] = field(default_factory=list)
    breakpoints: List[Tuple[int, Breakpoint]] = field(default_factory=list)  # (index of the closed block, marker)

    def add(self, val: Optional[Val], where: str, section: str, carrier: Optional[Val] = None) -> None:
        if val is None:
            return
        self.blocks.append(Block(val, where, section))
        carrier = carrier if carrier is not None else val
        marker = _marker(carrier)
        if marker is not None:
            self.breakpoints.append((len(self.blocks) - 1, Breakpoint(marker[0], where, _written_at(carrier, marker))))

    def point(self, val: Val, where: str) -> None:
        """A Bedrock ``cachePoint`` block: it closes the prefix up to the block before it."""
        if self.blocks:
            self.breakpoints.append((len(self.blocks) - 1, Breakpoint(POINT, self.blocks[-1].where, val.node)))

    def parts(self, upto: Optional[int] = None) -> List[Part]:
        """The prompt text up to and including block ``upto`` (all blocks when None)."""
        out: List[Part] = []
        for i, b in enumerate(self.blocks if upto is None else self.blocks[: upto + 1]):
            if i:
                out.append(SEPARATOR)
            if b.val.parts is not None:
                out.extend(b.val.parts)
        return out


def build(provider: str, get: Callable[[str], Optional[Val]], suffix: str = "", receiver: Optional[Val] = None) -> Layout:
    """The layout of one request; ``get(key)`` is the value of a request field (keyword or body key)."""
    if provider == "bedrock-invoke":
        body = get("body")
        inner = body.mapping if body is not None and body.mapping is not None else {}
        out = _anthropic(Layout("bedrock"), inner.get)
    elif provider == "anthropic":
        out = _anthropic(Layout(provider), get)
    elif provider == "bedrock":
        out = _bedrock(Layout(provider), get)
    elif provider == "openai-responses":
        out = _responses(Layout(provider), get)
    elif provider == "gemini":
        out = _gemini(Layout(provider), get, receiver)
    else:
        out = _chat(Layout("chat"), get, suffix)
    return out


# ----------------------------------------------------------------------------- providers


def _anthropic(out: Layout, get) -> Layout:
    for i, tool in enumerate(_items(get("tools"))):
        out.add(json_val(tool), f"tools[{i}]", "tools", carrier=tool)
    _content(out, get("system"), "system", "system")
    _conversation(out, get("messages"))
    top = get("cache_control")
    if _present(top) and out.blocks:  # automatic caching: a breakpoint on the last cacheable block
        out.breakpoints.append((len(out.blocks) - 1, Breakpoint("cache_control", out.blocks[-1].where, top.node, True)))
    return out


def _bedrock(out: Layout, get) -> Layout:
    for i, tool in enumerate(_items(_field(get("toolConfig"), "tools"))):
        if _has(tool, POINT):
            out.point(tool, f"toolConfig.tools[{i}]")
        else:
            spec = _field(tool, "toolSpec")
            out.add(json_val(spec if spec is not None else tool), f"toolConfig.tools[{i}]", "tools")
    _content(out, get("system"), "system", "system")
    _conversation(out, get("messages"))
    return out


def _responses(out: Layout, get) -> Layout:
    out.add(get("instructions"), "instructions", "system")
    items = get("input")
    if items is not None and items.items is None:
        out.add(items, "input", "prompt")
    for i, item in enumerate(_items(items)):
        if _has(item, "content"):
            _content(out, _field(item, "content"), f"input[{i}].content", "messages", _user(item))
        else:  # function_call_output, function_call, a bare string
            out.add(block_text(item), f"input[{i}]", "messages", carrier=item)
    return out


def _gemini(out: Layout, get, receiver: Optional[Val]) -> Layout:
    # a captured body's tools (function declarations reach the prompt; a change invalidates the cache)
    for i, tool in enumerate(_items(get("tools"))):
        out.add(json_val(tool), f"tools[{i}]", "tools", carrier=tool)
    system = get("system_instruction")
    for holder in (get("config"), receiver):  # GenerateContentConfig / GenerativeModel(system_instruction=...)
        if system is None:
            system = _field(holder, "system_instruction")
    _content(out, system, "system_instruction", "system")
    contents = get("contents")
    if contents is None:
        contents = get("history")  # client.chats.create(history=[...])
    if contents is not None and contents.items is None:
        out.add(block_text(contents), "contents", "messages")  # a string, or unknown
    for i, c in enumerate(_items(contents)):
        if _has(c, "parts"):
            _content(out, _field(c, "parts"), f"contents[{i}].parts", "messages", _user(c))
        else:
            out.add(block_text(c), f"contents[{i}]", "messages", carrier=c)
    return out


def _chat(out: Layout, get, suffix: str) -> Layout:
    for key in ("system", "instructions", "preamble"):  # preamble: Cohere's system prompt
        _content(out, get(key), f"{key}=", "system")
    for key in ("conversation", "messages"):
        _messages(out, get(key), key)
    for key in PROMPT_KEYS:
        if suffix == "generate" and key != "prompts":
            continue
        val = get(key)
        if val is None:
            continue
        if val.items and val.items[0].mapping is not None:
            _messages(out, val, key)
        elif val.items:
            out.add(val.items[0], f"{key}[0]", "prompt")
        else:
            out.add(val, f"{key}=", "prompt")
    return out


def _conversation(out: Layout, val: Optional[Val]) -> None:
    """Anthropic/Bedrock ``messages``; one unknown block when the list itself is unknown (a history
    built elsewhere), so that breakpoints after it are not measured as if it were empty."""
    if val is not None and val.items is None:
        out.add(val, "messages", "messages")
    for i, msg in enumerate(_items(val)):
        if _unknown_item(msg):  # `[*history, question]`: the history's messages, not known, where they go
            out.add(msg, f"messages[{i}]", "messages")
        _content(out, _field(msg, "content"), f"messages[{i}].content", "messages", _user(msg))


def _messages(out: Layout, val: Optional[Val], key: str) -> None:
    if val is None:
        return
    if val.items is None:
        if val.parts is not None or any(h.kind == "unordered" for h in val.hazards):
            out.add(val, f"{key}=", "messages")  # a list built from an unordered collection: where its messages go
        return
    for i, item in enumerate(val.items):
        if item.mapping is not None:
            _content(out, item.mapping.get("content"), f"{key}[{i}].content", "messages", _user(item))
        elif item.items is not None and len(item.items) == 2:  # LangChain ("system", "...") tuples
            text = item.items[1]
            out.add(_as_input(text) if literal(item.items[0]) in USER_ROLES else text, f"{key}[{i}].content", "messages")
        elif _unknown_item(item):
            out.add(item, f"{key}[{i}]", "messages")


def _content(out: Layout, val: Optional[Val], where: str, section: str, user: bool = False) -> None:
    """A string, or a list of content blocks each of which may carry a breakpoint; ``user``: a user
    turn's content, whose text promptlint cannot evaluate is the person's input (``_as_input``)."""
    if val is None:
        return
    text = _as_input if user else (lambda v: v)
    if val.items is None:
        out.add(text(block_text(val)), where, section, carrier=val)
        return
    for j, block in enumerate(val.items):
        if _has(block, POINT):
            out.point(block, f"{where}[{j}]")
        else:
            out.add(text(block_text(block)), f"{where}[{j}]", section, carrier=block)


def turn_text(message: Val) -> Optional[Val]:
    """A message dict's content as one block of text (a message not seen in a sent list, judged alone)."""
    content = _field(message, "content")
    if content is None:
        return None
    return _as_input(block_text(content)) if _user(message) else block_text(content)


def _user(message: Optional[Val]) -> bool:
    """Whether a message says it is a user turn (``"role": "user"``)."""
    return literal(_field(message, "role")) in USER_ROLES


def _as_input(val: Val) -> Val:
    """A user turn's text as the request sends it: a value in it that promptlint cannot evaluate (a
    parameter, a call's result) is what the person typed, per-request like a named question, not shared
    text of unknown length. Chat templates and prompt files read a user turn's inputs the same way
    (an input printed only in user turns is per-request)."""
    if val.parts is None or not any(_unknown(p) for p in val.parts):
        return val
    return dataclasses.replace(val, parts=[dataclasses.replace(p, kind="per-request") if _unknown(p) else p for p in val.parts])


def _unknown(p: Part) -> bool:
    return isinstance(p, Hole) and p.kind == "static" and p.order is None


# ----------------------------------------------------------------------------- block text


def block_text(v: Val) -> Val:
    """The text a content block contributes: its text field, else its JSON."""
    if v.mapping is None:
        if v.items is not None:  # tool_result content, Gemini parts: several blocks
            out = Val(parts=[])
            for i, item in enumerate(v.items):
                if i:
                    out.parts.append(SEPARATOR)
                out.parts.extend(block_text(item).parts or [])
            return out.add(v)
        return v
    for key in TEXT_KEYS:
        if key in v.mapping:
            return block_text(v.mapping[key])
    return json_val(v)


def json_val(v: Val) -> Val:
    """``v`` as JSON text (markers left out). A captured body keeps its exact JSON (``raw``)."""
    raw = getattr(v, "raw", _NONE)
    if raw is not _NONE:
        return Val(parts=[json.dumps(_strip(raw), ensure_ascii=False)])
    return Val(parts=_json_parts(v)).add(v)


def _json_parts(v: Val) -> List[Part]:
    if v.mapping is not None:
        out: List[Part] = ["{"]
        first = True
        for k, x in v.mapping.items():
            if k in MARKERS:
                continue
            out.append(("" if first else ", ") + json.dumps(k) + ": ")
            out.extend(_json_parts(x))
            first = False
        return out + ["}"]
    if v.items is not None:
        out = ["["]
        for i, x in enumerate(v.items):
            if i:
                out.append(", ")
            out.extend(_json_parts(x))
        return out + ["]"]
    if v.parts is None:
        return ["null"]
    return ['"'] + [json.dumps(p, ensure_ascii=False)[1:-1] if isinstance(p, str) else p for p in v.parts] + ['"']


_NONE = object()


def _strip(raw: Any) -> Any:
    if isinstance(raw, dict):
        return {k: _strip(x) for k, x in raw.items() if k not in MARKERS}
    if isinstance(raw, list):
        return [_strip(x) for x in raw]
    return raw


# ----------------------------------------------------------------------------- small helpers


def _unknown_item(v: Val) -> bool:
    """An item of a message list that stands for items not known (pysource.flow ``_unknown_items``)."""
    return v.mapping is None and v.items is None and v.parts is not None and len(v.parts) == 1 and \
        isinstance(v.parts[0], Hole) and v.parts[0].label.startswith("the items of ")


def literal(v: Optional[Val]) -> Optional[str]:
    """The text of a value that is a plain literal (a role, a `model=` name), else None."""
    if v is None or v.parts is None or not all(isinstance(p, str) for p in v.parts):
        return None
    return "".join(v.parts)


def _items(v: Optional[Val]) -> List[Val]:
    return v.items if v is not None and v.items is not None else []


def _field(v: Optional[Val], key: str) -> Optional[Val]:
    return v.mapping.get(key) if v is not None and v.mapping is not None else None


def _has(v: Optional[Val], key: str) -> bool:
    return v is not None and v.mapping is not None and key in v.mapping


def _marker(v: Val) -> Optional[Tuple[str, Val]]:
    if v.mapping is None:
        return None
    for key in MARKERS:
        m = v.mapping.get(key)
        if _present(m):
            return key, m
    return None


def _present(v: Optional[Val]) -> bool:
    """A marker that is set: not missing and not ``None``."""
    return v is not None and (v.parts is not None or v.mapping is not None or v.items is not None)


def _written_at(carrier: Val, marker: Tuple[str, Val]) -> Any:
    """Where a marker is written: its value inside the block's dict literal, else the block, else the value."""
    node = carrier.node
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant) and k.value == marker[0]:
                return v
    return node if node is not None else marker[1].node


# ----------------------------------------------------------------------------- captured bodies


class JsonVal(Val):
    """A value read from a captured JSON body; ``raw`` keeps it exact for JSON rendering."""

    raw: Any = None


def from_json(data: Any) -> Val:
    """A captured JSON value as the evaluator's ``Val`` (all text literal)."""
    if isinstance(data, dict):
        v = JsonVal(mapping={k: from_json(x) for k, x in data.items() if isinstance(k, str)})
    elif isinstance(data, list):
        v = JsonVal(items=[from_json(x) for x in data])
    elif isinstance(data, str):
        v = JsonVal(parts=[data])
    elif data is None:
        v = JsonVal()
    else:
        v = JsonVal(parts=[json.dumps(data)])
    v.raw = data
    return v


def render_text(layout: Layout) -> str:
    """The text of a layout whose values are all literal (a captured body)."""
    return "".join(p if isinstance(p, str) else f"sample {p.label}" for p in layout.parts())


__all__ = ["Block", "Breakpoint", "Hole", "Layout", "build", "block_text", "from_json", "json_val", "render_text"]
