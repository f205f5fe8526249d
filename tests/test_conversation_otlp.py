"""OTLP traces as the current GenAI semantic conventions write them (open-telemetry/
semantic-conventions-genai, docs/gen-ai: attributes in structured form, `gen_ai.tool.definitions`
as flat `{"type": "function", "name", "description", "parameters"}` objects, the content also
on the `gen_ai.client.inference.operation.details` event). A tool reorder is found from the trace
alone; an Anthropic trace, which cannot carry `cache_control`, says its reuse is unknown instead
of printing 0. Figures are computed here from the spans' own values: the documented framings
written out by hand and encoded with the Qwen tokenizer, OpenAI's rule as a formula."""

from __future__ import annotations

import hashlib
import json

from conftest import QWEN, shared_prefix
from conversation_sdk import chatml

PIN = ["--tokenizer", str(QWEN), "--tokenizer-sha256", hashlib.sha256(QWEN.read_bytes()).hexdigest()]
POLICY = "".join(f"Rule {i}: answer in full sentences and cite the order number when there is one.\n" for i in range(90))
WEATHER = {"type": "function", "name": "get_weather", "description": "Weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
TIME = {"type": "function", "name": "get_time", "description": "Time in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}


def value(v):
    """An OTLP AnyValue in structured form (what the conventions ask for on spans and events)."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    return {"kvlistValue": {"values": [{"key": k, "value": value(x)} for k, x in v.items()]}}


def attributes(d):
    return [{"key": k, "value": value(v)} for k, v in d.items()]


def turn(provider, model, conversation, tools, system, messages, answer, on_event=False, start=0, usage=None):
    """One inference span: (span, the same turn as plain data for the hand computation)."""
    content = {"gen_ai.system_instructions": [{"type": "text", "content": system}],
               "gen_ai.input.messages": [{"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]}
                                         for m in messages],
               "gen_ai.output.messages": [{"role": "assistant", "parts": [{"type": "text", "content": answer}],
                                           "finish_reason": "stop"}]}
    if tools:
        content["gen_ai.tool.definitions"] = tools
    span_attrs = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider, "gen_ai.request.model": model,
                  "gen_ai.conversation.id": conversation, **(usage or {})}
    span = {"traceId": "0" * 31 + "1", "spanId": f"{start + 1:016x}", "name": f"chat {model}", "kind": 3,
            "startTimeUnixNano": str(1_764_000_000_000_000_000 + start * 2_000_000_000),
            "endTimeUnixNano": str(1_764_000_000_000_000_000 + start * 2_000_000_000 + 1)}
    if on_event:
        span["attributes"] = attributes(span_attrs)
        span["events"] = [{"name": "gen_ai.client.inference.operation.details", "timeUnixNano": span["endTimeUnixNano"],
                           "attributes": attributes(content)}]
    else:
        span["attributes"] = attributes({**span_attrs, **content})
    return span


def export(spans):
    return {"resourceSpans": [{"resource": {"attributes": attributes({"service.name": "agent"})},
                               "scopeSpans": [{"scope": {"name": "agent"}, "spans": spans}]}]}


def reordered(provider, model, on_event=False):
    """Two turns; the tool server reconnected between them and lists its tools in another order."""
    q1 = [{"role": "user", "content": "Weather in Paris?"}]
    q2 = q1 + [{"role": "assistant", "content": "Sunny, 21 C."}, {"role": "user", "content": "And the time there?"}]
    return [turn(provider, model, "c1", [WEATHER, TIME], POLICY, q1, "Sunny, 21 C.", on_event, 0),
            turn(provider, model, "c1", [TIME, WEATHER], POLICY, q2, "It is noon.", on_event, 1)], (q1, q2)


def write(tmp_path, spans, name="trace.json"):
    path = tmp_path / name
    path.write_text(json.dumps(export(spans)), encoding="utf-8")
    return path


def ids(qwen, text):
    return qwen.encode(text, add_special_tokens=False).ids


def openai_hosted(shared, minimum=1024, step=128):
    return 0 if shared < minimum else minimum + (shared - minimum) // step * step


def as_openai(tool):
    """The Chat Completions wire shape of a semantic-convention tool definition."""
    return {"type": "function", "function": {k: tool[k] for k in ("name", "description", "parameters")}}


def as_anthropic(tool):
    return {"name": tool["name"], "description": tool["description"], "input_schema": tool["parameters"]}


def test_openai_tool_reorder_from_semantic_convention_tool_definitions(cli, qwen, tmp_path):
    spans, (q1, q2) = reordered("openai", "gpt-4.1")
    done = cli("conversation", *PIN, "--output-format", "json", str(write(tmp_path, spans)))
    [f] = done.json()["findings"]
    assert (f["code"], f["line"], f["variable"]) == ("M202", 2, "tools[0]"), done.out
    system = [{"role": "system", "content": POLICY}]
    tools1, tools2 = [as_openai(WEATHER), as_openai(TIME)], [as_openai(TIME), as_openai(WEATHER)]
    with_reply = ids(qwen, chatml(system + q1 + [{"role": "assistant", "content": "Sunny, 21 C."}], tools1))
    sent = ids(qwen, chatml(system + q2, tools2))
    should = ids(qwen, chatml(system + q2, tools1))
    shared, ideal = shared_prefix(with_reply, sent), shared_prefix(with_reply, should)
    first = len(ids(qwen, chatml(system + q1, tools1)))
    assert (f["shared_tokens"], f["ideal_shared_tokens"], f["prompt_tokens"]) == (shared, ideal, len(sent))
    assert f["lost_tokens"] == openai_hosted(min(ideal, first)) - openai_hosted(min(shared, first)) >= 1024


def anthropic_layout(tools, system, messages):
    """The cache-prefix layout by hand: each tool as JSON, the system text, each message's text."""
    return "\n\n".join([json.dumps(t) for t in tools] + [system] + [m["content"] for m in messages])


def test_anthropic_tool_reorder_from_the_trace_says_its_reuse_is_unknown(cli, qwen, tmp_path):
    spans, (q1, q2) = reordered("anthropic", "claude-sonnet-4-5")
    path = write(tmp_path, spans)
    done = cli("conversation", *PIN, "--output-format", "json", str(path))
    doc = done.json()
    [f] = doc["findings"]
    assert (f["code"], f["line"], f["variable"]) == ("M202", 2, "tools[0]"), done.out
    tools1 = [as_anthropic(WEATHER), as_anthropic(TIME)]
    with_reply = ids(qwen, anthropic_layout(tools1, POLICY, q1 + [{"role": "assistant", "content": "Sunny, 21 C."}]))
    sent = ids(qwen, anthropic_layout([as_anthropic(TIME), as_anthropic(WEATHER)], POLICY, q2))
    shared, ideal = shared_prefix(with_reply, sent), shared_prefix(with_reply, ids(qwen, anthropic_layout(tools1, POLICY, q2)))
    assert f["first_divergent_token"]["index"] == shared
    assert f"first divergent token {shared:,} of {len(sent):,} (ideal {ideal:,})" in f["message"]
    # no breakpoint is in the trace: what Anthropic read is not known, so no reuse figure is given
    assert "lost_tokens" not in f and "0 lost" not in f["message"]
    assert "reuse is unknown" in f["message"] and "cache_control" in f["message"]
    [conv] = doc["conversations"]
    # the JSON contract's integers stay integers; `reuse_unknown` says they are not a measurement
    assert all(isinstance(conv[k], int) for k in ("reused_tokens", "ideal_reused_tokens", "lost_tokens"))
    assert "cache_control" in conv["reuse_unknown"]
    assert conv["prompt_tokens"] == len(ids(qwen, anthropic_layout(tools1, POLICY, q1))) + len(sent)
    text = cli("conversation", *PIN, str(path)).out
    assert " 0 lost" not in text and "reuse unknown" in text, text


def test_the_operation_details_event_carries_the_request(cli, qwen, tmp_path):
    """The conventions' `gen_ai.client.inference.operation.details` event: the same content as
    the span attributes, recorded on an event."""
    spans, (q1, q2) = reordered("openai", "gpt-4.1", on_event=True)
    done = cli("conversation", *PIN, "--output-format", "json", str(write(tmp_path, spans)))
    [f] = done.json()["findings"]
    assert (f["code"], f["line"], f["variable"]) == ("M202", 2, "tools[0]"), done.out
    system = [{"role": "system", "content": POLICY}]
    sent = ids(qwen, chatml(system + q2, [as_openai(TIME), as_openai(WEATHER)]))
    assert f["prompt_tokens"] == len(sent)


def test_an_anthropic_trace_without_a_break_gives_nothing_and_no_reuse_figure(cli, tmp_path):
    spans, _ = reordered("anthropic", "claude-sonnet-4-5")
    spans[1] = turn("anthropic", "claude-sonnet-4-5", "c1", [WEATHER, TIME], POLICY,
                    [{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": "Sunny, 21 C."},
                     {"role": "user", "content": "And the time there?"}], "It is noon.", start=1)
    doc = cli("conversation", *PIN, "--output-format", "json", str(write(tmp_path, spans))).json()
    assert doc["findings"] == []
    [conv] = doc["conversations"]
    assert conv["breaks"] == 0 and "cache_control" in conv["reuse_unknown"]  # integers kept (the contract), flagged unknown


def test_the_providers_own_cache_read_count_is_given_beside_an_unknown_reuse(cli, tmp_path):
    """`gen_ai.usage.cache_read.input_tokens` (what Anthropic reported reading from its cache) is
    summed over the conversation and said beside the unknown reuse."""
    q1 = [{"role": "user", "content": "Weather in Paris?"}]
    q2 = q1 + [{"role": "assistant", "content": "Sunny, 21 C."}, {"role": "user", "content": "And the time there?"}]
    read = "gen_ai.usage.cache_read.input_tokens"
    spans = [turn("anthropic", "claude-sonnet-4-5", "c1", [WEATHER], POLICY, q1, "Sunny, 21 C.", start=0, usage={read: 0}),
             turn("anthropic", "claude-sonnet-4-5", "c1", [WEATHER], POLICY, q2, "Noon.", start=1, usage={read: 1337})]
    path = write(tmp_path, spans)
    [conv] = cli("conversation", *PIN, "--output-format", "json", str(path)).json()["conversations"]
    assert conv["reported_cache_read_tokens"] == 1337 and "cache_control" in conv["reuse_unknown"]
    text = cli("conversation", *PIN, str(path)).out
    assert "reuse unknown: " in text and "the provider reported 1,337 tokens read from its cache" in text, text
