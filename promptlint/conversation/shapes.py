"""A request body as its provider builds the prompt: model, tools, system, the parameters that
reach the prompt, and the messages, each in a canonical form that compares what is rendered.

Canonical means: the key order of an envelope (a message, a content block, a tool's outer
object) is sorted away, because providers and chat templates read fields by name; key order
inside a tool's parameter schema, a tool call's input and any JSON *text* is kept, because it is
rendered as written. Null fields, cache markers (``cache_control``, ``prompt_cache_breakpoint``,
Bedrock ``cachePoint`` blocks) and, on Anthropic, earlier turns' thinking blocks (the API strips
them from the prompt) are left out; a string content equals one text block with that text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

MARKERS = ("cache_control", "prompt_cache_breakpoint")
ORDERED = ("parameters", "input_schema", "inputSchema", "parametersJsonSchema", "input", "args", "json")
MESSAGE_KEYS = {"chat": "messages", "anthropic": "messages", "bedrock": "messages", "openai-responses": "input",
                "gemini": "contents"}
SYSTEM_KEYS = ("system", "instructions", "systemInstruction", "system_instruction")
# fields besides the messages that reach the prompt (or, on Anthropic, invalidate the cached messages)
PROMPT_PARAMS = ("tool_choice", "thinking", "chat_template_kwargs", "add_generation_prompt", "documents",
                 "reasoning", "toolConfig", "tool_config", "response_format", "text")
REASONING_KEYS = ("reasoning_content", "reasoning")
REASONING_TYPES = ("thinking", "redacted_thinking", "reasoning", "reasoningContent")


@dataclass
class Shape:
    kind: str  # chat | anthropic | bedrock | openai-responses | gemini
    model: Optional[str]
    tools: List[Any] = field(default_factory=list)
    system: Optional[str] = None  # canonical text of the system field (None: absent)
    params: Dict[str, str] = field(default_factory=dict)
    messages: List[Any] = field(default_factory=list)  # raw messages
    message_key: str = "messages"
    wire: Optional[str] = None  # the messages as JSON text (``messages_json``), made on first use


def of(request: Any) -> Shape:
    """A captured request's shape, made once: grouping and the analysis both read it."""
    if request.shape is None:
        request.shape = shape(request.body)
    return request.shape


def messages_json(messages: List[Any]) -> str:
    """The messages as JSON text, keys in their own order: one pass of the C encoder. Two requests
    whose texts agree up to a message boundary sent those messages identically (``extends``), so
    a conversation's history is compared once per request, not message by message."""
    try:
        return json.dumps(messages, ensure_ascii=False, check_circular=False)
    except (TypeError, ValueError, RecursionError):
        return ""


def wire(s: Shape) -> str:
    if s.wire is None:
        s.wire = messages_json(s.messages)
    return s.wire


def extends(a: str, n: int, b: str) -> bool:
    """Whether the JSON list ``b`` starts with every one of the ``n`` items of the JSON list ``a``,
    each written identically (same values, same key order): JSON values delimit themselves, so
    ``a`` without its closing bracket followed by a comma or the close in ``b`` is that."""
    if not a or not b:
        return False
    if n == 0:
        return True
    head = len(a) - 1
    return len(b) > head and b.startswith(a[:head]) and b[head] in ",]"


def kind_of(body: Dict[str, Any]) -> str:
    from promptlint.operators.captured import sdk_provider

    return sdk_provider(body) or "chat"


def shape(body: Dict[str, Any], kind: Optional[str] = None) -> Shape:
    kind = kind or kind_of(body)
    key = MESSAGE_KEYS.get(kind, "messages")
    messages = body.get(key)
    if isinstance(messages, str):  # Responses: a string input is one user message
        messages = [{"role": "user", "content": messages}]
    tools = body.get("tools")
    if kind == "bedrock" and isinstance(body.get("toolConfig"), dict):
        tools = body["toolConfig"].get("tools")
    if kind == "gemini" and isinstance(tools, list):
        tools = _declarations(tools)
    system = next((body[k] for k in SYSTEM_KEYS if body.get(k) is not None), None)
    if kind == "anthropic" and isinstance(system, str):  # a string is one text block, as in messages
        system = [{"type": "text", "text": system}]
    params = {k: canon(body[k]) for k in PROMPT_PARAMS if body.get(k) is not None and not (kind == "bedrock" and k == "toolConfig")}
    model = body.get("model") if isinstance(body.get("model"), str) else body.get("modelId")
    return Shape(kind, model if isinstance(model, str) else None,
                 [t for t in tools if not (isinstance(t, dict) and "cachePoint" in t)] if isinstance(tools, list) else [],
                 None if system is None else canon(system, kind), params,
                 list(messages) if isinstance(messages, list) else [], key)


def _declarations(tools: List[Any]) -> List[Any]:
    """Gemini's tools, one per function declaration (the SDK gathers the declarations of several
    tools into one ``functionDeclarations`` list: their order is the tools' order)."""
    out: List[Any] = []
    for tool in tools:
        decls = (tool.get("functionDeclarations") or tool.get("function_declarations")) if isinstance(tool, dict) else None
        if isinstance(decls, list) and len(tool) == 1:
            out.extend({"functionDeclarations": [d]} for d in decls)
        else:
            out.append(tool)
    return out


def canon(value: Any, kind: str = "", ordered: bool = False) -> str:
    """The canonical JSON text of a value (see the module docstring)."""
    return json.dumps(_canon(value, kind, ordered), ensure_ascii=False, sort_keys=False)


def _canon(v: Any, kind: str, ordered: bool) -> Any:
    if isinstance(v, dict):
        if ordered:
            return {k: _canon(x, kind, True) for k, x in v.items()}
        items = [(k, x) for k, x in v.items() if x is not None and k not in MARKERS and x != []]
        return {k: _canon(x, kind, k in ORDERED) for k, x in sorted(items)}
    if isinstance(v, list):
        kept = [x for x in v if not (isinstance(x, dict) and ("cachePoint" in x or _dropped_block(x, kind)))]
        return [_canon(x, kind, ordered) for x in kept]
    return v


def _dropped_block(block: Dict[str, Any], kind: str) -> bool:
    return kind == "anthropic" and block.get("type") in ("thinking", "redacted_thinking")


def message_canon(message: Any, kind: str) -> str:
    """A message as rendered: content as a list of blocks (a string is one text block)."""
    if not isinstance(message, dict):
        return canon(message, kind)
    m = dict(message)
    if kind in ("chat", "anthropic", "bedrock") and isinstance(m.get("content"), str):
        m["content"] = [{"type": "text", "text": m["content"]}] if kind != "bedrock" else [{"text": m["content"]}]
    if kind == "chat":  # only what a chat template reads; the reply's bookkeeping (refusal, annotations) is not
        m = {k: v for k, v in m.items() if k in ("role", "name", "content", "tool_calls", "tool_call_id") + REASONING_KEYS}
        if isinstance(m.get("tool_calls"), list):
            m["tool_calls"] = [{"function": c.get("function"), "id": c.get("id")} if isinstance(c, dict) else c
                               for c in m["tool_calls"]]
    return canon(m, kind)


def without_reasoning(message: Any) -> Any:
    """The message with its reasoning taken out (a field, or reasoning blocks/items)."""
    if not isinstance(message, dict):
        return message
    m = {k: v for k, v in message.items() if k not in REASONING_KEYS}
    if isinstance(m.get("content"), list):
        m["content"] = [b for b in m["content"] if not (isinstance(b, dict) and (b.get("type") in REASONING_TYPES
                                                                                 or "reasoningContent" in b))]
    return m


def has_reasoning(message: Any) -> bool:
    return isinstance(message, dict) and (
        any(message.get(k) for k in REASONING_KEYS) or message.get("type") == "reasoning"
        or any(isinstance(b, dict) and (b.get("type") in REASONING_TYPES or "reasoningContent" in b)
               for b in (message.get("content") if isinstance(message.get("content"), list) else ())))


def is_tool_result(message: Any) -> bool:
    if not isinstance(message, dict):
        return False
    if message.get("role") == "tool" or message.get("type") == "function_call_output":
        return True
    content = message.get("content") if isinstance(message.get("content"), list) else message.get("parts")
    return any(isinstance(b, dict) and (b.get("type") == "tool_result" or "toolResult" in b or "functionResponse" in b)
               for b in content or ())


def reply_messages(reply: Optional[Dict[str, Any]], kind: str) -> List[Any]:
    """The messages a reply adds to the history, in the request's own shape ([] when unknown)."""
    if not isinstance(reply, dict):
        return []
    choices = reply.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
        message = dict(choices[0]["message"])
        if kind == "anthropic" and isinstance(message.get("content"), str):
            message["content"] = [{"type": "text", "text": message["content"]}]
        return [message]
    if kind == "anthropic" and isinstance(reply.get("content"), list):
        return [{"role": "assistant", "content": reply["content"]}]
    if kind == "openai-responses" and isinstance(reply.get("output"), list):
        return [item for item in reply["output"] if isinstance(item, dict)]
    candidates = reply.get("candidates")
    if kind == "gemini" and isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        return [candidates[0].get("content")] if isinstance(candidates[0].get("content"), dict) else []
    output = reply.get("output")
    if kind == "bedrock" and isinstance(output, dict) and isinstance(output.get("message"), dict):
        return [output["message"]]
    return []


def tool_name(tool: Any) -> str:
    if not isinstance(tool, dict):
        return canon(tool)
    for holder in (tool.get("function"), tool.get("toolSpec"), tool):
        if isinstance(holder, dict) and isinstance(holder.get("name"), str):
            return holder["name"]
    decls = tool.get("functionDeclarations") or tool.get("function_declarations")
    if isinstance(decls, list):
        return ",".join(str(d.get("name")) for d in decls if isinstance(d, dict))
    return canon(tool)


def schema_keys(value: Any) -> Any:
    """The key order of every object inside a tool definition (what a re-keyed schema changes)."""
    if isinstance(value, dict):
        return [[k, schema_keys(x)] for k, x in value.items()]
    if isinstance(value, list):
        return [schema_keys(x) for x in value]
    return None
