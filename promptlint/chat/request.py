"""How a chat request reaches the template: transformers 5.x/4.x, vLLM's OpenAI server, llama.cpp's server.

``prepare(request, source, template_text, undeclared, profile)`` returns the exact keyword
arguments `compiled_template.render(...)` receives, plus the `continue_final_message` field
to cut at. Facts and citations: docs/chat-templates.md and docs/engines.md (the llama.cpp
frontend lives in ``promptlint.chat.llamacpp``).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

# Explicit parameters of `apply_chat_template` (vLLM keeps chat_template_kwargs with these names).
HF_PARAMETERS = frozenset(
    {
        "conversation", "tools", "documents", "chat_template", "add_generation_prompt", "continue_final_message",
        "tokenize", "padding", "truncation", "max_length", "return_tensors", "return_dict",
        "return_assistant_tokens_mask", "tokenizer_kwargs", "sanitize_control_tokens",
    }
)


_ATOMIC = frozenset((str, int, float, bool, type(None), bytes))


def plain_copy(value: Any, memo: Optional[Dict[int, Any]] = None) -> Any:
    """``copy.deepcopy`` of a request's data, faster where it is plain (dicts, lists, strings,
    numbers: what messages, tools and documents are): the same structure, shared and cyclic parts
    included (one memo); anything else is deepcopy's own (with that memo). deepcopy's dispatch was
    4% of a cold run (a request copied for every variant rendered)."""
    if memo is None:
        memo = {}
    kind = type(value)
    if kind in _ATOMIC:
        return value
    known = memo.get(id(value))
    if known is not None:
        return known
    if kind is dict:
        out: Any = {}
        memo[id(value)] = out
        for k, v in value.items():
            out[k if type(k) in _ATOMIC else plain_copy(k, memo)] = v if type(v) in _ATOMIC else plain_copy(v, memo)
        return out
    if kind is list:
        out = []
        memo[id(value)] = out
        out.extend(v if type(v) in _ATOMIC else plain_copy(v, memo) for v in value)
        return out
    return copy.deepcopy(value, memo)


class RequestError(Exception):
    """The caller's request is invalid for this engine (transformers/vLLM would raise ValueError)."""


@dataclass(frozen=True)
class ChatProfile:
    """Which serving stack renders the template and how its output is tokenized."""

    transformers: int = 5
    frontend: str = "transformers"  # transformers | vllm | llamacpp
    serving: str = "chat"
    content_format: str = "auto"  # vLLM --chat-template-content-format: auto | string | openai

    @property
    def env_kind(self) -> str:
        return "transformers" if self.transformers >= 5 else "transformers4"

    @property
    def add_special_tokens(self) -> bool:
        """chat endpoint / apply_chat_template: False (BOS from the template); completions: True."""
        return self.serving == "completions"


@dataclass
class ChatRequest:
    """One chat scenario: what the caller sends."""

    messages: List[Dict[str, Any]]
    tools: Optional[List[Dict[str, Any]]] = None
    documents: Optional[List[Dict[str, Any]]] = None
    add_generation_prompt: Optional[bool] = None  # None: the frontend's default
    continue_final_message: Any = False
    kwargs: Dict[str, Any] = field(default_factory=dict)

    def copy(self) -> "ChatRequest":
        new = object.__new__(type(self))
        new.__dict__.update(plain_copy(self.__dict__))  # what deepcopy does with a dataclass: its state deep-copied
        return new


@dataclass
class Prepared:
    variables: Dict[str, Any]
    continue_field: Optional[str]  # the final message's field tagged for continue_final_message
    final_text: Optional[str]  # that field's text (to check it survived the render)
    notes: List[str] = field(default_factory=list)
    # llama.cpp's changes to the rendered text (continuing a final assistant message, GPT-OSS):
    # finish(render, render_with_generation_prompt) -> the prompt
    finish: Optional[Any] = None


# ------------------------------------------------------------------ transformers


def _normalize_messages_5(messages: List[Any]) -> List[Dict[str, Any]]:
    """5.x `_normalize_chat_messages`: objects to dicts, keys whose value is None dropped."""
    out = []
    for m in messages:
        m = _to_dicts(m)
        if not isinstance(m, dict):
            raise TypeError(f"Chat messages should be dicts, dataclasses or pydantic models, but got {m!r}.")
        out.append({k: v for k, v in m.items() if v is not None})
    return out


def _to_dicts(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_dicts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_dicts(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_dicts(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_dicts(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def plain_template_data(value: Any) -> Any:
    """5.x `_plain_template_data`: plain JSON types; anything else becomes "<TypeName>"."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, dict):
        return {plain_template_data(k): plain_template_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_template_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain_template_data(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain_template_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return f"<{type(value).__name__}>"


def alias_reasoning_fields(messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """5.x `_alias_reasoning_fields`: `thinking` and `reasoning_content` both carry the reasoning."""
    out = []
    for m in messages:
        if isinstance(m, dict):
            reasoning = next((m[k] for k in REASONING_FIELDS if m.get(k) is not None), None)
            if reasoning is not None:
                m = {"thinking": reasoning, **m, "reasoning_content": reasoning}
        out.append(m)
    return out


def _special_token_kwargs(source, version: int) -> Dict[str, Any]:
    out: Dict[str, Any] = dict(source.special_tokens)
    if version < 5 and source.additional_special_tokens:
        out["additional_special_tokens"] = list(source.additional_special_tokens)
    return out


def transformers_variables(request: ChatRequest, source, template_text: str, version: int = 5) -> Prepared:
    """The render kwargs `tokenizer.apply_chat_template(messages, tools=..., ...)` builds."""
    add_gen = bool(request.add_generation_prompt) if request.add_generation_prompt is not None else False
    cfm = request.continue_final_message
    if not request.messages:
        raise RequestError("Cannot apply chat template to an empty conversation. Provide at least one message.")
    if version >= 5:
        messages = _normalize_messages_5(request.messages)
        if cfm and add_gen:
            raise RequestError(
                "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message "
                "when you want the model to continue the final message, and add_generation_prompt when you want to "
                "add a header that will prompt it to start a new assistant message instead."
            )
    else:
        messages = plain_copy(request.messages)
    for doc in request.documents or []:
        if not isinstance(doc, dict):
            raise RequestError("Documents should be a list of dicts with 'title' and 'text' keys!")
    tools = plain_copy(request.tools) if request.tools is not None else None
    documents = plain_copy(request.documents)
    kwargs = {**_special_token_kwargs(source, version), **plain_copy(request.kwargs)}
    if version >= 5:
        tools, documents, kwargs = plain_template_data(tools), plain_template_data(documents), plain_template_data(kwargs)
        messages = alias_reasoning_fields(plain_template_data(messages))
    continue_field = final_text = None
    if cfm:
        continue_field, final_text = _tag_final_message(messages, cfm, template_text, version)
    variables = {"messages": messages, "tools": tools, "documents": documents, "add_generation_prompt": add_gen, **kwargs}
    return Prepared(variables, continue_field, final_text)


def _tag_last_text_block(parts) -> str:
    """Append the continue tag to the last text part of list content; return that part's text."""
    for block in reversed(parts):
        if "text" in block:
            final = block["text"]
            block["text"] = final + CONTINUE_TAG
            return final
    raise RequestError("continue_final_message is set but we could not find any text to continue in the final message!")


def _tag_final_message(messages, cfm, template_text: str, version: int) -> Tuple[str, str]:
    if version < 5:
        final = messages[-1].get("content") if messages else None
        if isinstance(final, (list, tuple)):
            final = _tag_last_text_block(final)
        else:
            messages[-1]["content"] = final + CONTINUE_TAG
        return "content", final
    name = cfm if isinstance(cfm, str) else "content"
    final = messages[-1].get(name)
    if final is None:
        raise RequestError(f'continue_final_message is set but the final message has no "{name}" to continue!')
    fields = [name]
    if name in REASONING_FIELDS:
        fields = [f for f in REASONING_FIELDS if messages[-1].get(f) == final]
    if not any(f in template_text for f in fields):
        raise RequestError(f'continue_final_message is set to "{name}" but this is not an accepted field in the chat_template')
    if isinstance(final, (list, tuple)):
        final = _tag_last_text_block(final)
    else:
        for f in fields:
            messages[-1][f] = messages[-1][f] + CONTINUE_TAG
    return name, final


def cut_continued(rendered: str, final_text: str) -> int:
    """Where transformers cuts a continue_final_message render (its length afterwards)."""
    tag = CONTINUE_TAG
    if final_text.strip() not in rendered or tag.strip() not in rendered:
        raise RequestError(
            "continue_final_message is set but the final message does not appear in the chat after applying the "
            "chat template! This can happen if the chat template deletes portions of the final message."
        )
    loc = rendered.rindex(tag.strip())
    if rendered[loc : loc + len(tag)] == tag:
        return loc
    return len(rendered[:loc].rstrip())


# ------------------------------------------------------------------ vLLM


def _template_mentions_developer(text: str) -> bool:
    return '"developer"' in text or "'developer'" in text


def detect_content_format(ast) -> str:
    """vLLM `_detect_content_format`: "openai" iff the template loops over a message's content.

    As vllm/entrypoints/chat_utils.py decides it: names assigned from `messages` (through
    filters, tests and slices: `loop_messages = messages[1:]`) are message lists; the targets
    of loops over those are messages; a loop over `<message>.content` / `<message>['content']`
    (again through filters, tests, slices) means list-of-parts content. A loop over a variable
    that was assigned `message.content` does not count (vLLM does not follow it)."""
    from jinja2 import nodes

    def access(node, var: str, key=None) -> bool:
        if isinstance(node, nodes.Filter):
            return node.node is not None and access(node.node, var, key)
        if isinstance(node, nodes.Test):
            return access(node.node, var, key)
        if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Slice):
            return access(node.node, var, key)
        if key is None:
            return isinstance(node, nodes.Name) and node.ctx == "load" and node.name == var
        if isinstance(node, nodes.Getitem):
            return access(node.node, var) and isinstance(node.arg, nodes.Const) and node.arg.value == key
        if isinstance(node, nodes.Getattr):
            return access(node.node, var) and node.attr == key
        return False

    lists, queue = ["messages"], ["messages"]
    while queue:
        name = queue.pop(0)
        for assign in ast.find_all(nodes.Assign):
            if isinstance(assign.target, nodes.Name) and access(assign.node, name):
                lists.append(assign.target.name)
                if assign.target.name != name:
                    queue.append(assign.target.name)
    loops = list(ast.find_all(nodes.For))
    message_vars = [
        loop.target.name for loop in loops if isinstance(loop.target, nodes.Name) and any(access(loop.iter, v) for v in lists)
    ]
    for loop in loops:
        if any(access(loop.iter, v, "content") for v in message_vars):
            return "openai"
    return "string"


def _vllm_tool(tool: Dict[str, Any]) -> Dict[str, Any]:
    """`ChatCompletionToolsParam.model_dump()`: declared fields (unset ones as None), then extras."""
    fn = dict(tool.get("function") or {})
    dumped_fn = {
        "name": fn.pop("name", None),
        "description": fn.pop("description", None),
        "parameters": fn.pop("parameters", None),
        "strict": fn.pop("strict", None),
        **fn,
    }
    rest = {k: v for k, v in tool.items() if k not in ("type", "function")}
    return {"type": tool.get("type", "function"), "function": dumped_fn, **rest}


def _vllm_message(m: Dict[str, Any], content_format: str) -> Dict[str, Any]:
    """vLLM `_parse_chat_message_content` for text-only messages."""
    role = m["role"]
    content = m.get("content")
    if content is None:
        parts: List[str] = []
    elif isinstance(content, str):
        parts = [content]
    else:
        parts = [p if isinstance(p, str) else (p.get("text") or p.get("refusal") or p.get("thinking") or "") for p in content]
    out: Dict[str, Any] = {"role": role}
    out["content"] = [{"type": "text", "text": p} for p in parts] if content_format == "openai" else "\n".join(parts)
    reasoning = m.get("reasoning")
    if reasoning is None:
        reasoning = m.get("reasoning_content")  # deprecated request field, mapped to `reasoning`
    if role == "assistant":
        if m.get("tool_calls") is not None:
            out["tool_calls"] = plain_copy(list(m["tool_calls"]))
        if reasoning is not None:
            out["reasoning"] = reasoning
            out["reasoning_content"] = reasoning
    elif role == "tool":
        if "tool_call_id" in m:
            out["tool_call_id"] = m["tool_call_id"]
        if isinstance(out["content"], list) and all(p.get("type") == "text" for p in out["content"]):
            out["content"] = "\n".join(p["text"] for p in out["content"])
    if isinstance(m.get("name"), str):
        out["name"] = m["name"]
    if role == "developer":
        out["tools"] = m.get("tools")
    return out


def _vllm_postprocess(messages: List[Dict[str, Any]]) -> None:
    """vLLM `_postprocess_messages`: tool-call arguments given as JSON strings become dicts."""
    for m in messages:
        if m["role"] == "assistant" and "tool_calls" in m:
            calls = m.get("tool_calls")
            if not isinstance(calls, list):
                continue
            if not calls:
                m.pop("tool_calls", None)
                continue
            for item in calls:
                args = item["function"].get("arguments")
                if isinstance(args, str):
                    try:
                        item["function"]["arguments"] = json.loads(args)
                    except ValueError:
                        item["function"]["arguments"] = {}
                elif not isinstance(args, (dict, list)):
                    item["function"]["arguments"] = {}


def vllm_request(request: ChatRequest, template_text: str, undeclared: frozenset, profile: ChatProfile) -> Tuple[ChatRequest, List[str]]:
    """What vLLM's /v1/chat/completions hands to `apply_chat_template` for ``request``."""
    notes: List[str] = []
    fmt = profile.content_format
    if fmt == "auto":
        fmt = _cached_format(template_text)
    messages = [_vllm_message(m, fmt) for m in request.messages]
    _vllm_postprocess(messages)
    if any(m["role"] == "developer" for m in messages) and not _template_mentions_developer(template_text):
        systems = []
        rest = []
        for m in messages:
            if m["role"] in ("developer", "system"):
                m = {k: v for k, v in m.items() if k != "tools"}
                m["role"] = "system"
                systems.append(m)
            else:
                rest.append(m)
        merged = dict(systems[0])
        merged["content"] = "\n\n".join(_text(m.get("content")) for m in systems)
        messages = [merged] + rest
        notes.append("vLLM maps `developer` messages to `system` (the template does not know `developer`)")
    kwargs = {}
    for k, v in request.kwargs.items():
        if k in ("chat_template", "tokenize"):
            raise RequestError(f"`{k}` is not allowed in chat_template_kwargs")
        if k in undeclared or k in HF_PARAMETERS:
            kwargs[k] = v
        else:
            notes.append(f"vLLM drops chat_template_kwargs `{k}`: the template does not use it")
    if "reasoning_effort" in request.kwargs and "enable_thinking" not in request.kwargs:
        kwargs["enable_thinking"] = request.kwargs["reasoning_effort"] != "none"
    add_gen = True if request.add_generation_prompt is None else request.add_generation_prompt
    if request.continue_final_message and add_gen:
        raise RequestError("Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
    tools = [_vllm_tool(t) for t in request.tools] if request.tools else None
    out = ChatRequest(messages, tools, plain_copy(request.documents), add_gen, request.continue_final_message, kwargs)
    return out, notes


def _text(content) -> str:
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


_FORMATS: Dict[str, str] = {}


def _cached_format(template_text: str) -> str:
    if template_text not in _FORMATS:
        from promptlint.render.environments import make_environment

        try:
            ast = make_environment("transformers").parse(template_text)
            _FORMATS[template_text] = detect_content_format(ast)
        except Exception:
            _FORMATS[template_text] = "string"
    return _FORMATS[template_text]


FRONTENDS = ("transformers", "vllm", "llamacpp")
