"""Conversations sent by the real openai and anthropic SDKs over httpx2.MockTransport: each
request body exactly as the SDK put it on the wire, with the reply the fake provider gave, written
as the JSON Lines capture `promptlint conversation` reads (tests/test_conversation.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import httpx2

OPENAI_REPLY = "Sure, here it is."


class Wire:
    """A fake provider: records each request body and answers with the next queued reply."""

    def __init__(self, replies: List[Dict[str, Any]]):
        self.replies = list(replies)
        self.sent: List[Dict[str, Any]] = []
        self.answered: List[Dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        reply = self.replies.pop(0) if self.replies else self.answered[-1]
        self.sent.append(body)
        self.answered.append(reply)
        return httpx2.Response(200, json=reply)

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def write(self, path: Path, conversation: str = "c1") -> Path:
        with path.open("w", encoding="utf-8") as f:
            for body, reply in zip(self.sent, self.answered):
                f.write(json.dumps({"conversation": conversation, **body, "reply": reply}) + "\n")
        return path


def openai_reply(content: str = OPENAI_REPLY, **message: Any) -> Dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, "refusal": None, **message}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def anthropic_reply(content: List[Dict[str, Any]], model: str = "claude-sonnet-4-5") -> Dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}


def openai_client(wire: Wire):
    import openai

    return openai.OpenAI(api_key="sk-test-not-a-secret", http_client=wire.client(), max_retries=0)


def anthropic_client(wire: Wire):
    import anthropic

    return anthropic.Anthropic(api_key="sk-ant-test", http_client=wire.client(), max_retries=0)


def chatml(messages: List[Dict[str, Any]], tools: List[Dict[str, Any]] = None, generation: bool = True) -> str:
    """The approximate framing of docs/operators.md written out by hand (string contents only)."""
    out = ""
    if tools:
        out += "<|im_start|>system\n# Tools\n" + "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tools) + "<|im_end|>\n"
    for m in messages:
        lines = [m["content"]] if m.get("content") else []
        for call in m.get("tool_calls") or []:
            lines.append(json.dumps({"name": call["function"]["name"], "arguments": call["function"]["arguments"]}))
        out += f"<|im_start|>{m['role']}\n" + "\n".join(lines) + "<|im_end|>\n"
    return out + ("<|im_start|>assistant\n" if generation else "")
