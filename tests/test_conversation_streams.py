"""Streamed replies assembled (``promptlint.conversation.streams``) equal what the real SDKs
assemble from the same event stream: the openai SDK's ``chat.completions.stream`` final
completion and the anthropic SDK's ``messages.stream`` final message are the independent
reference (text, reasoning/thinking with its signature, tool calls whose arguments arrive in
pieces), over httpx2.MockTransport."""

from __future__ import annotations

import json

import httpx2

from promptlint.conversation.streams import reply_from_bytes


def sse(events, named=False):
    return "".join((f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events) + (
        "" if named else "data: [DONE]\n\n")


def transport(payload: str):
    return httpx2.MockTransport(lambda r: httpx2.Response(200, content=payload.encode(),
                                                          headers={"content-type": "text/event-stream"}))


def test_openai_chunks_with_tool_calls_in_pieces_assemble_as_the_sdk_does():
    import openai

    def chunk(delta):
        return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1",
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}

    events = [chunk({"role": "assistant", "content": ""}), chunk({"content": "Let me "}), chunk({"content": "check."}),
              chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "weather", "arguments": ""}}]}),
              chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\": "}}]}),
              chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "time", "arguments": "{}"}}]}),
              chunk({"tool_calls": [{"index": 0, "function": {"arguments": "\"Oslo\"}"}}]}),
              {**chunk({}), "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    payload = sse(events)
    client = openai.OpenAI(api_key="k", max_retries=0, http_client=httpx2.Client(transport=transport(payload)))
    with client.chat.completions.stream(model="gpt-4.1", messages=[{"role": "user", "content": "q"}]) as stream:
        final = stream.get_final_completion().choices[0].message
    mine = reply_from_bytes(payload.encode())["choices"][0]["message"]
    assert mine["content"] == final.content == "Let me check."
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in mine["tool_calls"]] == [
        (c.id, c.function.name, c.function.arguments) for c in final.tool_calls] == [
        ("call_a", "weather", "{\"city\": \"Oslo\"}"), ("call_b", "time", "{}")]


def test_anthropic_events_with_thinking_and_a_tool_input_in_pieces_assemble_as_the_sdk_does():
    import anthropic

    message = {"id": "m1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    events = [{"type": "message_start", "message": message},
              {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user "}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "wants Oslo."}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}},
              {"type": "content_block_stop", "index": 0},
              {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
              {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Checking."}},
              {"type": "content_block_stop", "index": 1},
              {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "tu_1", "name": "weather", "input": {}}},
              {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"ci"}},
              {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "ty\": \"Oslo\"}"}},
              {"type": "content_block_stop", "index": 2},
              {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}},
              {"type": "message_stop"}]
    payload = sse(events, named=True)
    client = anthropic.Anthropic(api_key="k", max_retries=0, http_client=httpx2.Client(transport=transport(payload)))
    with client.messages.stream(model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "q"}]) as stream:
        final = stream.get_final_message()
    mine = reply_from_bytes(payload.encode())
    sdk = [{k: v for k, v in b.model_dump().items() if v is not None} for b in final.content]
    assert mine["content"] == sdk
    assert [b["type"] for b in mine["content"]] == ["thinking", "text", "tool_use"]
    assert mine["content"][2]["input"] == {"city": "Oslo"} and mine["stop_reason"] == "tool_use"


def test_a_stream_cut_short_or_of_no_provider_leaves_the_reply_unknown():
    cut = sse([{"type": "message_start", "message": {"role": "assistant", "content": []}},
               {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "n", "input": {}}},
               {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"ci"}}], named=True)
    assert reply_from_bytes(cut.encode()) is None  # the tool input never closed
    assert reply_from_bytes(b"data: {\"hello\": 1}\n\n") is None
    assert reply_from_bytes(b"\xff\xfe") is None
