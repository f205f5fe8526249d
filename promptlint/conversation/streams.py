"""A streamed reply (server-sent events) assembled into the reply the provider would have sent
whole, so the next request's assistant turn can be checked against it.

- **OpenAI Chat Completions** (``stream=True``): ``chat.completion.chunk`` deltas; content,
  ``reasoning_content`` and ``refusal`` are joined, tool calls are joined by their ``index``
  (id and name from the first delta, ``arguments`` concatenated);
- **OpenAI Responses**: the ``response.completed`` event carries the whole response;
- **Anthropic** (``messages.stream``, ``stream=True``): ``message_start``, then
  ``content_block_start``/``_delta`` per block (``text_delta``, ``thinking_delta``,
  ``signature_delta``, ``input_json_delta`` whose ``partial_json`` pieces make the tool input);
- **Gemini** (``streamGenerateContent?alt=sse``, or its JSON array form): each chunk's parts,
  consecutive text parts joined.

Anything else (Bedrock's binary event stream, an unknown event shape) gives None: the reply is
then unknown, as when nothing was recorded.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional


def reply_from_bytes(raw: bytes) -> Optional[Dict[str, Any]]:
    """The reply in ``raw``: a JSON response, or an event stream assembled; None if neither."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return assemble(_events(text))
    if isinstance(doc, list):  # Gemini's streamGenerateContent without alt=sse: a JSON array of chunks
        return assemble([c for c in doc if isinstance(c, dict)])
    return doc if isinstance(doc, dict) else None


def assemble(events: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The whole reply from its events; None when they are no known stream (or a malformed one:
    a capture is input, and an unknown reply is said as unknown, never guessed)."""
    try:
        return _assemble(events)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError):
        return None


def _events(text: str) -> List[Dict[str, Any]]:
    """The JSON ``data:`` payloads of an event stream, in order (``[DONE]`` and comments skipped)."""
    out: List[Dict[str, Any]] = []
    data: List[str] = []
    for line in text.replace("\r\n", "\n").split("\n") + [""]:
        if line.startswith("data:"):
            data.append(line[5:][1:] if line[5:6] == " " else line[5:])
        elif not line and data:
            payload = "\n".join(data)
            data = []
            try:
                event = json.loads(payload)
            except (ValueError, RecursionError):
                continue
            if isinstance(event, dict):
                out.append(event)
    return out


def _assemble(events: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    if not events:
        return None
    kinds = {e.get("type") for e in events} | {e.get("object") for e in events}
    if "chat.completion.chunk" in kinds:
        return _openai_chat(events)
    if "message_start" in kinds:
        return _anthropic(events)
    done = next((e.get("response") for e in events if e.get("type") == "response.completed"), None)
    if isinstance(done, dict):
        return done
    if any(isinstance(e.get("candidates"), list) for e in events):
        return _gemini(events)
    return None


def _openai_chat(events: List[Dict[str, Any]]) -> Dict[str, Any]:
    message: Dict[str, Any] = {"role": "assistant"}
    calls: Dict[int, Dict[str, Any]] = {}
    for e in events:
        for choice in e.get("choices") or ():
            delta = choice.get("delta") if isinstance(choice, dict) and choice.get("index", 0) == 0 else None
            if not isinstance(delta, dict):
                continue
            for key in ("content", "reasoning_content", "refusal"):
                if isinstance(delta.get(key), str):
                    message[key] = message.get(key, "") + delta[key]
            for call in delta.get("tool_calls") or ():
                if isinstance(call, dict):
                    _join_call(calls.setdefault(int(call.get("index", 0) or 0), {}), call)
    message.setdefault("content", None)
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    first = events[0]
    return {"id": first.get("id"), "object": "chat.completion", "model": first.get("model"),
            "choices": [{"index": 0, "message": message}]}


def _join_call(into: Dict[str, Any], delta: Dict[str, Any]) -> None:
    for key in ("id", "type"):
        if delta.get(key) and key not in into:
            into[key] = delta[key]
    fn = delta.get("function") if isinstance(delta.get("function"), dict) else {}
    target = into.setdefault("function", {})
    if fn.get("name") and "name" not in target:
        target["name"] = fn["name"]
    if isinstance(fn.get("arguments"), str):
        target["arguments"] = target.get("arguments", "") + fn["arguments"]


_DELTAS = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature",
           "citations_delta": None, "input_json_delta": None}


def _anthropic(events: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    start = next((e.get("message") for e in events if e.get("type") == "message_start"), None)
    message: Dict[str, Any] = dict(start) if isinstance(start, dict) else {"role": "assistant"}
    blocks: Dict[int, Dict[str, Any]] = {}
    partial: Dict[int, str] = {}
    for e in events:
        kind, index = e.get("type"), e.get("index")
        if not isinstance(index, int):
            index = -1
        if kind == "content_block_start" and isinstance(e.get("content_block"), dict) and isinstance(index, int):
            blocks[index] = dict(e["content_block"])
        elif kind == "content_block_delta" and isinstance(e.get("delta"), dict) and index in blocks:
            delta, block = e["delta"], blocks[index]
            if delta.get("type") == "input_json_delta":
                partial[index] = partial.get(index, "") + str(delta.get("partial_json") or "")
            field = _DELTAS.get(str(delta.get("type")))
            if field and isinstance(delta.get(field), str):
                block[field] = block.get(field, "") + delta[field]
        elif kind == "message_delta" and isinstance(e.get("delta"), dict):
            message.update({k: v for k, v in e["delta"].items() if k in ("stop_reason", "stop_sequence")})
    for index, text in partial.items():
        try:
            blocks[index]["input"] = json.loads(text) if text else {}
        except (ValueError, RecursionError):
            return None  # a tool input cut short: the reply is not known
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _gemini(events: List[Dict[str, Any]]) -> Dict[str, Any]:
    parts: List[Dict[str, Any]] = []
    role = "model"
    for e in events:
        candidates = e.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        content = candidate.get("content") if isinstance(candidate, dict) else None
        if not isinstance(content, dict):
            continue
        role = content.get("role") or role
        for part in content.get("parts") or ():
            if not isinstance(part, dict):
                continue
            last = parts[-1] if parts else None
            if (last is not None and set(part) == {"text"} and set(last) == {"text"}):
                last["text"] += str(part["text"])
            else:
                parts.append(dict(part))
    return {"candidates": [{"content": {"role": role, "parts": parts}, "index": 0}]}
