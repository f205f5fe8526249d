"""How llama.cpp's server turns a chat-completions request into template variables (``--frontend llamacpp``).

From llama.cpp commit 0c1e570 (the copy vendored in llama-cpp-python 0.3.36), llama-server
with its defaults (``--jinja``, prefill of a trailing assistant message, ``enable_thinking``):

- ``tools/server/server-common.cpp``, ``oaicompat_chat_params_parse``: request validation,
  ``add_generation_prompt`` (default true), ``continue_final_message`` and the assistant
  prefill, ``chat_template_kwargs``, ``reasoning_effort``;
- ``common/chat.cpp``: ``common_chat_msgs_parse_oaicompat`` / ``common_chat_msg::to_json_oaicompat``
  (what a message looks like to the template), ``common_chat_tools_parse_oaicompat`` /
  ``common_chat_tools_to_json_oaicompat`` (a tool keeps only ``name``, ``description``
  (``""`` when missing) and ``parameters``), ``common_chat_templates_apply_jinja`` (the
  workarounds chosen by the template's capabilities, see ``llamacpp_caps``) and
  ``common_chat_template_direct_apply_impl`` (the variables: ``messages``, ``bos_token``,
  ``eos_token``, ``enable_thinking``, ``tools``, ``datetime``, ``date_string``, the kwargs,
  ``add_generation_prompt`` only when true);
- ``common/parsers/gpt-oss.cpp``: the one specialized handler modelled (reasoning as
  ``thinking``). Other templates that llama.cpp routes to a specialized handler are rendered
  on the generic path, with a note.

The template itself is rendered by promptlint's Jinja environment, not llama.cpp's own Jinja
engine (docs/engines.md lists the known differences).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Dict, List, Optional, Tuple

from promptlint.chat.llamacpp_caps import Caps, has_reasoning_markers, template_caps
from promptlint.chat.request import ChatRequest, Prepared, RequestError

CONTINUE_NONE, CONTINUE_AUTO, CONTINUE_CONTENT, CONTINUE_REASONING = "none", "auto", "content", "reasoning_content"

# common_chat_templates_init: source patches applied to every template before compiling
_SOURCE_PATCHES = (
    (
        ("<|channel|>", "in message.content or"),
        '{%- if "<|channel|>analysis<|message|>" in message.content or "<|channel|>final<|message|>" in message.content %}',
        "{%- if false %}",
    ),
    (
        ("[TOOL_CALLS]", "if (message['content'] is none or"),
        "{%- if (message['content'] is none or message['content'] == '' or message['content']|length == 0) and "
        "(message['tool_calls'] is not defined or message['tool_calls'] is none or message['tool_calls']|length == 0) %}",
        "{%- if false %}",
    ),
)


def patch_source(text: str) -> str:
    """The template text llama.cpp compiles (two known-broken checks disabled, as it does)."""
    for needles, old, new in _SOURCE_PATCHES:
        if all(n in text for n in needles):
            text = text.replace(old, new)
    return text


def specialized_handler(src: str) -> Optional[str]:
    """``common_chat_try_specialized_template``: the handler llama.cpp renders this template with, if any."""
    has = src.__contains__
    if has("[SYSTEM_PROMPT]") and has("[TOOL_CALLS]") and has("[ARGS]") and not has("[CALL_ID]"):
        return "Ministral 3"
    if has("<|channel|>"):
        return "GPT-OSS"
    if has("<atem:function_calls>") and has("<|eom|>"):
        return "Muse Glimmer"
    if has(">>>all") and has(">>>${recipient}"):
        return "Functionary v3.2"
    if has("<|tool_calls_section_begin|>") and has("<|tool_call_begin|>"):
        return "Kimi K2"
    if has("<|open|>") and has("<|close|>") and has("<|end_of_msg|>"):
        return "Kimi K3"
    if has("<role>ASSISTANT</role>") and has("<arg_key>"):
        return "Ling 3.0"
    if has("<|START_TEXT|>") and has("<|START_ACTION|>"):
        return "Cohere2 MoE"
    if has("<|tool_list_start|>") and has("<|tool_list_end|>"):
        return "LFM2"
    if has("List of tools: [") and not has("<|tool_list_start|>"):
        return "LFM2.5"
    if has("<|role_sep|>") and has("<|message_sep|>") and not has("<|function_call|>"):
        return "GigaChatV3"
    if has("]<]minimax[>[") and has("<tool_call>") and has("<invoke name="):
        return "MiniMax-M3"
    if has("dsml_token") and has("DSML") and (has("function_calls") or has("tool_calls")):
        return "DeepSeek V3.2/V4"
    if has("'<|tool_call>call:'"):
        return "Gemma 4"
    if has("Tool usage guidelines:") and has('<function name="') and has('<param name="'):
        return "MiniCPM5"
    if has("<tool_call>") and has("<function=") and has("<parameter=") and not has("'<tool_call><function=' ~ tool_call.name ~ '>'"):
        return "Qwen3-Coder"
    return None


# ------------------------------------------------------------------ request parsing


def _dump(value: Any) -> str:
    """nlohmann ``json::dump()``: compact, key order kept, UTF-8 unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _parse_json(text: str) -> Any:
    def no_constants(name):
        raise ValueError(f"invalid literal {name}")

    return json.loads(text, parse_constant=no_constants)


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise RequestError(f"Failed to parse messages: {what} must be a string, got {json.dumps(value)}")
    return value


def _validate(messages: List[Any]) -> None:
    """``oaicompat_chat_params_parse``: the checks before messages are parsed."""
    for msg in messages:
        if not isinstance(msg, dict):
            raise RequestError(f"Failed to parse messages: Expected 'message' to be an object, got {json.dumps(msg)}")
        role = msg.get("role") if isinstance(msg.get("role"), str) else ""
        if role != "assistant" and "content" not in msg:
            raise RequestError("All non-assistant messages must contain 'content'")
        if role == "assistant":
            if "content" not in msg and "tool_calls" not in msg:
                raise RequestError("Assistant message must contain either 'content' or 'tool_calls'!")
            if "content" not in msg:
                continue
        content = msg["content"]
        if content is None or isinstance(content, str):
            continue
        if not isinstance(content, list):
            raise RequestError("Expected 'content' to be a string or an array")
        for part in content:
            kind = part.get("type") if isinstance(part, dict) and isinstance(part.get("type"), str) else ""
            if kind == "image_url":
                raise RequestError("image input is not supported - hint: if this is unexpected, you may need to provide the mmproj")
            if kind == "input_audio":
                raise RequestError("audio input is not supported - hint: if this is unexpected, you may need to provide the mmproj")
            if kind in ("input_video", "video_url"):
                raise RequestError("video input is not supported - hint: if this is unexpected, you may need to provide the mmproj")
            if kind != "text":
                raise RequestError("unsupported content[].type")


def _parse_messages(messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """``common_chat_msgs_parse_oaicompat``: each message as llama.cpp's ``common_chat_msg``."""
    out = []
    for m in messages:
        if "role" not in m:
            raise RequestError(f"Failed to parse messages: Missing 'role' in message: {_dump(m)}")
        msg: Dict[str, Any] = {"role": _string(m["role"], "role"), "content": "", "content_parts": [],
                               "tool_calls": [], "reasoning_content": "", "tool_name": "", "tool_call_id": ""}
        content = m.get("content")
        if isinstance(content, str):
            msg["content"] = content
        elif isinstance(content, list):
            for part in content:
                if "type" not in part:
                    raise RequestError(f"Failed to parse messages: Missing content part type: {_dump(part)}")
                if part["type"] not in ("text", "media_marker"):
                    raise RequestError(f"Failed to parse messages: Unsupported content part type: {_dump(part['type'])}")
                if "text" not in part:
                    raise RequestError(f"Failed to parse messages: content part without 'text': {_dump(part)}")
                msg["content_parts"].append({"type": part["type"], "text": _string(part["text"], "content[].text")})
        elif content is not None:
            raise RequestError(
                f"Failed to parse messages: Invalid 'content' type: expected string or array, got {_dump(content)}"
            )
        calls = m.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise RequestError(f"Failed to parse messages: 'tool_calls' must be an array, got {_dump(calls)}")
        for call in calls or []:
            msg["tool_calls"].append(_parse_tool_call(call))
        if "content" not in m and "tool_calls" not in m:
            raise RequestError("Failed to parse messages: Expected 'content' or 'tool_calls'")
        if "reasoning_content" in m:
            msg["reasoning_content"] = _string(m["reasoning_content"], "reasoning_content")
        if "name" in m:
            msg["tool_name"] = _string(m["name"], "name")
        if "tool_call_id" in m:
            msg["tool_call_id"] = _string(m["tool_call_id"], "tool_call_id")
        out.append(msg)
    return out


def _parse_tool_call(call: Any) -> Dict[str, str]:
    if not isinstance(call, dict) or "type" not in call:
        raise RequestError(f"Failed to parse messages: Missing tool call type: {_dump(call)}")
    if call["type"] != "function":
        raise RequestError(f"Failed to parse messages: Unsupported tool call type: {_dump(call)}")
    fn = call.get("function")
    if not isinstance(fn, dict):
        raise RequestError(f"Failed to parse messages: Missing tool call function: {_dump(call)}")
    if "name" not in fn:
        raise RequestError(f"Failed to parse messages: Missing tool call name: {_dump(call)}")
    if "arguments" not in fn:
        raise RequestError(f"Failed to parse messages: tool call without 'arguments': {_dump(call)}")
    args = fn["arguments"]
    return {
        "name": _string(fn["name"], "tool_calls[].function.name"),
        # a string is kept as sent; anything else is serialized compactly (nlohmann dump)
        "arguments": args if isinstance(args, str) else _dump(args),
        "id": _string(call["id"], "tool_calls[].id") if "id" in call else "",
    }


def _parse_tools(tools: Any) -> List[Dict[str, Any]]:
    """``common_chat_tools_parse_oaicompat`` + ``common_chat_tools_to_json_oaicompat``."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise RequestError(f"Failed to parse tools: Expected 'tools' to be an array, got {_dump(tools)}")
    out = []
    for tool in tools:
        if not isinstance(tool, dict) or "type" not in tool:
            raise RequestError(f"Failed to parse tools: Missing tool type: {_dump(tool)}")
        if tool["type"] != "function":
            raise RequestError(f"Failed to parse tools: Unsupported tool type: {_dump(tool)}")
        if "function" not in tool:
            raise RequestError(f"Failed to parse tools: Missing tool function: {_dump(tool)}")
        fn = tool["function"]
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise RequestError(f"Failed to parse tools: a tool function needs a string 'name': {_dump(tool)}")
        description = fn.get("description", "")
        if not isinstance(description, str):
            raise RequestError(f"Failed to parse tools: 'description' must be a string: {_dump(tool)}")
        parameters = fn["parameters"] if "parameters" in fn else {}
        out.append({
            "type": "function",
            "function": {"name": fn["name"], "description": description, "parameters": _parse_json(_dump(parameters))},
        })
    return out


def _continuation(value: Any) -> str:
    """``common_chat_continuation_parse``."""
    if value is True:
        return CONTINUE_AUTO
    if value == "reasoning_content":
        return CONTINUE_REASONING
    if value == "content":
        return CONTINUE_CONTENT
    return CONTINUE_NONE


# ------------------------------------------------------------------ messages as the template sees them


def _concat_parts(parts: List[Dict[str, str]]) -> str:
    """Join text parts with newlines (none around media markers)."""
    text = ""
    last_media = False
    for p in parts:
        if p["type"] == "text":
            newline = not last_media and text != ""
            last_media = False
        elif p["type"] == "media_marker":
            newline = False
            last_media = True
        else:
            continue
        if newline:
            text += "\n"
        text += p["text"]
    return text


def _message_json(msg: Dict[str, Any]) -> Dict[str, Any]:
    """``common_chat_msg::to_json_oaicompat`` (typed parts kept as parts)."""
    out: Dict[str, Any] = {"role": msg["role"]}
    if msg["content"] and msg["content_parts"]:
        raise RequestError("Cannot specify both content and content_parts")
    if msg["content"]:
        out["content"] = msg["content"]
    elif msg["content_parts"]:
        out["content"] = [{"type": p["type"], "text": p["text"]} for p in msg["content_parts"]]
    else:
        out["content"] = ""
    if msg["reasoning_content"]:
        out["reasoning_content"] = msg["reasoning_content"]
    if msg["tool_name"]:
        out["name"] = msg["tool_name"]
    if msg["tool_call_id"]:
        out["tool_call_id"] = msg["tool_call_id"]
    if msg["tool_calls"]:
        calls = []
        for c in msg["tool_calls"]:
            tc: Dict[str, Any] = {"type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            if c["id"]:
                tc["id"] = c["id"]
            calls.append(tc)
        out["tool_calls"] = calls
    return out


def _normalize_content(messages: List[Dict[str, Any]], caps: Caps) -> None:
    """``messages_inp_normalizer``: string content to one text part, or parts to one string."""
    only_string = caps.supports_string_content and not caps.supports_typed_content
    only_typed = caps.supports_typed_content and not caps.supports_string_content
    for m in messages:
        content = m.get("content")
        if only_typed and isinstance(content, str):
            m["content"] = [{"type": "text", "text": content}]
        elif only_string and isinstance(content, list):
            m["content"] = _concat_parts(content)


def _trim(s: str) -> str:
    return s.strip(" \t\n\v\f\r")  # std::isspace in the "C" locale


def render_content(msg: Dict[str, Any]) -> str:
    """``common_chat_msg::render_content``: the content, or the text parts joined by blank lines."""
    if msg["content"]:
        return msg["content"]
    return "\n\n".join(p["text"] for p in msg["content_parts"] if p["type"] == "text")


# ------------------------------------------------------------------ the variables


def llamacpp_request(request: ChatRequest, source, template_text: str, now: Optional[datetime] = None) -> Prepared:
    """The render variables llama-server builds for ``request`` (and what it changes, as notes)."""
    notes: List[str] = []
    src = patch_source(template_text)
    caps = template_caps(src)
    if not isinstance(request.messages, list):
        raise RequestError("Expected 'messages' to be an array")
    _validate(request.messages)
    msgs = _parse_messages(request.messages)
    tools = _parse_tools(request.tools)
    if request.documents:
        notes.append("llama.cpp does not pass `documents` to the template")

    add_gen = request.add_generation_prompt if isinstance(request.add_generation_prompt, bool) else True
    cont = _continuation(request.continue_final_message)
    if cont == CONTINUE_NONE and msgs and msgs[-1]["role"] == "assistant":  # prefill_assistant (default on)
        if len(msgs) >= 2 and msgs[-2]["role"] == "assistant":
            raise RequestError("Cannot have 2 or more assistant messages at the end of the list.")
        cont, add_gen = CONTINUE_AUTO, False
        notes.append("llama.cpp continues a trailing assistant message (prefill) instead of starting a new one")
    if cont != CONTINUE_NONE and add_gen:
        raise RequestError("Cannot set both add_generation_prompt and continue_final_message to true.")
    if cont != CONTINUE_NONE and msgs and msgs[-1]["role"] == "assistant" and msgs[-1]["tool_calls"]:
        raise RequestError("Cannot continue an assistant message that contains tool calls.")

    kwargs: Dict[str, Any] = {}
    for k, v in (request.kwargs or {}).items():
        kwargs[k] = _parse_json(_dump(v))
    enable_thinking = True
    if "enable_thinking" in kwargs:
        if isinstance(kwargs["enable_thinking"], bool):
            enable_thinking = kwargs["enable_thinking"]
        elif isinstance(kwargs["enable_thinking"], str):
            raise RequestError('invalid type for "enable_thinking" (expected boolean, got string)')
    effort = kwargs.get("reasoning_effort")
    if effort == "none":
        enable_thinking = False
        kwargs.pop("reasoning_effort")

    handler = specialized_handler(src)
    if src.find("You have access to the following functions in JSONSchema format") != -1:
        for m in msgs:  # StepFun: whitespace trimmed before rendering
            m["content"] = _trim(m["content"])
            m["reasoning_content"] = _trim(m["reasoning_content"])
            for p in m["content_parts"]:
                if p["type"] == "text":
                    p["text"] = _trim(p["text"])
    messages = [_message_json(m) for m in msgs]
    _normalize_content(messages, caps)
    continue_msg = None
    if cont != CONTINUE_NONE and msgs:
        continue_msg = msgs[-1]
        messages.pop()
        if cont == CONTINUE_AUTO:
            cont = CONTINUE_CONTENT
            if continue_msg["reasoning_content"] and not continue_msg["content"] and not continue_msg["content_parts"]:
                cont = CONTINUE_REASONING
    if "<|channel|>" not in src:
        for m in messages:
            if m.get("role") == "developer":
                m["role"] = "system"
    if not caps.supports_system_role and messages and messages[0].get("role") == "system":
        first = messages.pop(0)
        if messages:
            messages[0]["content"] = _string(first["content"], "system content") + "\n" + _string(messages[0]["content"], "content")
            notes.append("llama.cpp merges the system message into the next one: the template does not read a system role")
        else:
            notes.append("llama.cpp drops the system message: the template does not read a system role")
    if caps.supports_tool_calls:
        for m in messages:
            if "tool_calls" in m and "content" not in m:
                m["content"] = ""
    if caps.supports_object_arguments:
        for m in messages:
            for call in m.get("tool_calls", []):
                args = call["function"]["arguments"]
                if isinstance(args, str):
                    try:
                        call["function"]["arguments"] = _parse_json(args)
                    except ValueError as e:
                        raise RequestError(f"Failed to parse tool call arguments as JSON: {e}") from None
    if handler == "GPT-OSS":
        for m in messages:  # reasoning as the template's `thinking`; content dropped beside tool calls
            if isinstance(m.get("reasoning_content"), str):
                m["thinking"] = m["reasoning_content"]
                if m.get("tool_calls"):
                    m.pop("content", None)
    elif handler is not None:
        notes.append(f"llama.cpp renders this template with its specialized {handler} handler; promptlint models the generic path")

    variables: Dict[str, Any] = {
        "messages": messages,
        "bos_token": source.special_tokens.get("bos_token", "") or "",
        "eos_token": source.special_tokens.get("eos_token", "") or "",
        "enable_thinking": enable_thinking,
    }
    if tools:
        variables["tools"] = tools
    when = now or datetime.now()
    variables["datetime"] = when.strftime("%b %d %Y")
    variables["date_string"] = when.strftime("%d %b %Y")
    variables.update(kwargs)
    if add_gen and cont == CONTINUE_NONE:
        variables["add_generation_prompt"] = True
    if "reasoning_effort" in variables and isinstance(variables["reasoning_effort"], str) and variables["reasoning_effort"]:
        variables["reasoning_strength"] = variables["reasoning_effort"]
    if isinstance(variables.get("preserve_reasoning"), bool):
        keep = variables["preserve_reasoning"]
        variables.update(preserve_thinking=keep, clear_thinking=not keep, truncate_history_thinking=not keep, drop_thinking=not keep)
    prepared = Prepared(variables, None, None, notes)
    gpt_oss_end = handler == "GPT-OSS" and not variables.get("add_generation_prompt")
    if continue_msg is not None or gpt_oss_end:

        def finish(text: str, with_generation_prompt) -> str:
            if gpt_oss_end:  # common/parsers/gpt-oss.cpp: no generation prompt, so the last <|return|> ends a turn
                pos = text.rfind("<|return|>")
                if pos != -1:
                    text = text[:pos] + "<|end|>" + text[pos + len("<|return|>"):]
            if continue_msg is None:
                return text
            return text + continuation_suffix(cont, continue_msg, handler, text, with_generation_prompt(), src)

        prepared.finish = finish
    return prepared


def continuation_suffix(cont: str, msg: Dict[str, Any], handler: Optional[str], without: str, with_prompt: str, template_text: str) -> str:
    """What llama.cpp appends to the render of the earlier messages to continue ``msg``.

    ``without``/``with_prompt``: the earlier messages rendered without and with the generation
    prompt (llama.cpp's ``common_chat_template_generation_prompt``: what the second adds).
    """
    if handler == "GPT-OSS":
        suffix = "<|start|>assistant<|channel|>analysis<|message|>" + msg["reasoning_content"]
        if cont == CONTINUE_CONTENT:
            suffix += "<|end|><|start|>assistant<|channel|>final<|message|>" + render_content(msg)
        return suffix
    if has_reasoning_markers(template_text):
        raise RequestError(
            "continuing a final assistant message of a reasoning template: llama.cpp places the reasoning tags it "
            "finds by analysing the template, which promptlint does not model"
        )
    i = 0
    n = min(len(without), len(with_prompt))
    while i < n and without[i] == with_prompt[i]:
        i += 1
    suffix = with_prompt[i:]
    if cont == CONTINUE_CONTENT:
        suffix += render_content(msg)
    return suffix

