"""`promptlint conversation`: conversations the real openai and anthropic SDKs sent (over
httpx2.MockTransport, tests/conversation_sdk.py), each family of break found at the right
request and field with token figures computed here independently (the documented framing written
out by hand, encoded with the Qwen tokenizer, and the providers' rules as formulas)."""

from __future__ import annotations

import hashlib
import json

import pytest

from conftest import QWEN, shared_prefix
from conversation_sdk import (OPENAI_REPLY, Wire, anthropic_client, anthropic_reply, chatml, openai_client,
                              openai_reply)

PIN = ["--tokenizer", str(QWEN), "--tokenizer-sha256", hashlib.sha256(QWEN.read_bytes()).hexdigest()]
POLICY = "".join(f"Rule {i}: answer in full sentences and cite the order number when there is one.\n" for i in range(80))
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                           "required": ["city"]}}}
CLOCK = {"type": "function", "function": {"name": "get_time", "description": "Time in a city",
                                          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}


def openai_hosted(shared: int, minimum: int = 1024, step: int = 128) -> int:
    """OpenAI's documented rule: nothing under 1,024 tokens, then 128-token steps."""
    return 0 if shared < minimum else minimum + (shared - minimum) // step * step


def run(cli, tmp_path, wire, *extra):
    done = cli("conversation", *PIN, "--output-format", "json", *extra, wire.write(tmp_path / "capture.jsonl"))
    return done, (done.json() if done.out.strip() else None)


def ids(qwen, text):
    return qwen.encode(text, add_special_tokens=False).ids


# ----------------------------------------------------------------------------- OpenAI Chat Completions


def test_a_clock_in_the_system_prompt_is_m101_at_the_second_request_with_openais_figures(cli, tmp_path, qwen):
    wire = Wire([openai_reply(), openai_reply()])
    client = openai_client(wire)
    first = [{"role": "system", "content": f"The time is 2026-12-01 10:00:01.\n{POLICY}"}, {"role": "user", "content": "hi"}]
    client.chat.completions.create(model="gpt-4.1", messages=first)
    second = [{"role": "system", "content": f"The time is 2026-12-01 10:00:09.\n{POLICY}"}, {"role": "user", "content": "hi"},
              {"role": "assistant", "content": OPENAI_REPLY}, {"role": "user", "content": "and my order?"}]
    client.chat.completions.create(model="gpt-4.1", messages=second)

    done, doc = run(cli, tmp_path, wire)
    assert done.code == 1, done.err
    [f] = doc["findings"]
    assert (f["code"], f["line"], f["variable"]) == ("M101", 2, "messages[0]")
    assert "'10:00:01' -> '10:00:09'" in f["message"]
    # independently: turn 1 plus its reply against turn 2, and the request the client should have sent
    with_reply = ids(qwen, chatml(first + [second[2]]))
    sent = ids(qwen, chatml(second))
    ideal = ids(qwen, chatml(first + second[2:]))
    s, s_ideal, p_prev = shared_prefix(with_reply, sent), shared_prefix(with_reply, ideal), len(ids(qwen, chatml(first)))
    assert s < 30 < 1024 < s_ideal  # the clock sits in the first line
    assert (f["shared_tokens"], f["ideal_shared_tokens"], f["prompt_tokens"]) == (s, s_ideal, len(sent))
    assert f["lost_tokens"] == openai_hosted(min(s_ideal, p_prev)) - openai_hosted(min(s, p_prev)) > 0
    assert f["first_divergent_token"]["index"] == s
    [conv] = doc["conversations"]
    assert conv["lost_tokens"] == f["lost_tokens"] and conv["requests"] == 2 and doc["approximate"] is False


def test_tools_reordered_is_m202_and_a_rekeyed_schema_m201_at_the_tool(cli, tmp_path):
    wire = Wire([openai_reply()] * 3)
    client = openai_client(wire)
    history = [{"role": "user", "content": "weather?"}]
    client.chat.completions.create(model="gpt-4.1", messages=history, tools=[WEATHER, CLOCK])
    history += [{"role": "assistant", "content": OPENAI_REPLY}, {"role": "user", "content": "time?"}]
    client.chat.completions.create(model="gpt-4.1", messages=history, tools=[CLOCK, WEATHER])
    rekeyed = json.loads(json.dumps(CLOCK))
    rekeyed["function"]["parameters"] = {"properties": {"city": {"type": "string"}}, "type": "object"}
    history += [{"role": "assistant", "content": OPENAI_REPLY}, {"role": "user", "content": "again"}]
    client.chat.completions.create(model="gpt-4.1", messages=history, tools=[rekeyed, WEATHER])

    done, doc = run(cli, tmp_path, wire)
    found = [(f["code"], f["line"], f["variable"]) for f in doc["findings"]]
    assert found == [("M202", 2, "tools[0]"), ("M201", 3, "tools[0]")], done.err


def test_envelope_key_order_and_replies_sent_back_as_received_are_clean(cli, tmp_path):
    """The SDK's own message object sent back (its keys in the SDK's order, null fields, a tool
    call), tool results appended, the system prompt stable: nothing to report."""
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}
    wire = Wire([openai_reply(None, tool_calls=[call]), openai_reply(), openai_reply()])
    client = openai_client(wire)
    history = [{"role": "system", "content": POLICY}, {"role": "user", "content": "weather in Oslo?"}]
    message = client.chat.completions.create(model="gpt-4.1", messages=history, tools=[WEATHER]).choices[0].message
    history += [message.model_dump(exclude_none=False), {"role": "tool", "tool_call_id": "call_1", "content": "4 C"}]
    message = client.chat.completions.create(model="gpt-4.1", messages=history, tools=[WEATHER]).choices[0].message
    history += [{"content": message.content, "role": "assistant"}, {"role": "user", "content": "thanks"}]
    client.chat.completions.create(model="gpt-4.1", messages=history, tools=[WEATHER])

    done, doc = run(cli, tmp_path, wire)
    assert (done.code, doc["findings"]) == (0, []), done.out
    [conv] = doc["conversations"]
    assert conv["lost_tokens"] == 0 and conv["reused_tokens"] > 0 and conv["breaks"] == 0


@pytest.mark.parametrize("family", ["tool-result-replaced", "reasoning-dropped", "compaction", "reply-rewritten",
                                    "model-changed"])
def test_history_rewrites_are_m204_with_their_cause_at_the_message(cli, tmp_path, family):
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}
    wire = Wire([openai_reply(None, tool_calls=[call]), openai_reply(), openai_reply()])
    client = openai_client(wire)
    history = [{"role": "system", "content": POLICY}, {"role": "user", "content": "weather in Oslo?"},
               {"role": "assistant", "content": None, "tool_calls": [call]}]
    history.append({"role": "tool", "tool_call_id": "call_1", "content": "4 C, light snow, wind 5 m/s"})
    if family == "reasoning-dropped":
        history[2]["reasoning_content"] = "The user wants the weather; call the tool."
    client.chat.completions.create(model="gpt-4.1", messages=history, tools=[WEATHER])
    later = json.loads(json.dumps(history)) + [{"role": "assistant", "content": OPENAI_REPLY},
                                               {"role": "user", "content": "and tomorrow?"}]
    model, where = "gpt-4.1", None
    if family == "tool-result-replaced":
        later[3]["content"], where = "(result elided)", "messages[3]"
    elif family == "reasoning-dropped":
        del later[2]["reasoning_content"]
        where = "messages[2]"
    elif family == "compaction":
        later = [later[0], {"role": "user", "content": "Summary: the user asked for Oslo's weather."}, later[-1]]
        where = "messages[1]"
    elif family == "reply-rewritten":
        later[4]["content"], where = OPENAI_REPLY.upper(), "messages[4]"
    else:
        model, where = "gpt-4.1-mini", "model"
    client.chat.completions.create(model=model, messages=later, tools=[WEATHER])

    done, doc = run(cli, tmp_path, wire)
    [f] = doc["findings"]
    assert (f["code"], f["line"], f["cause"], f["variable"]) == ("M204", 2, family, where), done.out


# ----------------------------------------------------------------------------- Anthropic Messages

SYSTEM = [{"type": "text", "text": POLICY, "cache_control": {"type": "ephemeral"}}]


def anthropic_turns(cli, tmp_path, sends, replies=None):
    wire = Wire(replies or [anthropic_reply([{"type": "text", "text": "Noted."}])] * len(sends))
    client = anthropic_client(wire)
    for kwargs in sends:
        client.messages.create(model="claude-sonnet-4-5", max_tokens=100, **kwargs)
    return run(cli, tmp_path, wire)


def user(text, cache=False):
    block = {"type": "text", "text": text}
    if cache:
        block["cache_control"] = {"type": "ephemeral"}
    return {"role": "user", "content": [block]}


def layout(blocks):
    """Anthropic's prefix order as the layout renders it: blocks joined by a blank line."""
    return "\n\n".join(blocks)


def test_anthropic_clean_conversation_reads_its_breakpoint_and_reports_nothing(cli, tmp_path, qwen):
    reply = [{"type": "text", "text": "Noted.", "citations": None}]
    sends = [dict(system=SYSTEM, messages=[user("one", cache=True)]),
             dict(system=SYSTEM, messages=[user("one"), {"role": "assistant", "content": reply}, user("two", cache=True)])]
    done, doc = anthropic_turns(cli, tmp_path, sends, [anthropic_reply(reply)] * 2)
    assert (done.code, doc["findings"]) == (0, []), done.out
    # request 1 wrote entries at the system block and at "one"; request 2 shares both and reads the longer
    entry = len(ids(qwen, layout([POLICY, "one"])))
    assert doc["conversations"][0]["reused_tokens"] == entry >= 1024


def test_anthropic_dropped_cache_control_is_found_at_the_request_that_dropped_it(cli, tmp_path, qwen):
    system_plain = [{"type": "text", "text": POLICY}]
    sends = [dict(system=SYSTEM, messages=[user("one")]),
             dict(system=system_plain, messages=[user("one"), {"role": "assistant", "content": "Noted."}, user("two")])]
    done, doc = anthropic_turns(cli, tmp_path, sends)
    [f] = doc["findings"]
    assert (f["code"], f["line"], f["cause"], f["variable"]) == ("M204", 2, "cache-control-dropped", "cache_control")
    assert (f["lost_tokens"], f["block_size"]) == (len(ids(qwen, POLICY)), 1)


def test_anthropic_breakpoints_over_the_cap_and_under_the_minimum(cli, tmp_path):
    five = [user(f"part {i}", cache=True) for i in range(5)]
    short = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    sends = [dict(system=SYSTEM, messages=five[:4]), dict(system=short, messages=[user("hi")])]
    done, doc = anthropic_turns(cli, tmp_path, sends)
    codes = sorted((f["code"], f["line"]) for f in doc["findings"])
    assert ("M704", 1) in codes and ("M703", 2) in codes, done.out  # 5 breakpoints (system + 4); "Be brief." < 1,024


def test_anthropic_tools_added_and_an_id_in_the_system_prompt(cli, tmp_path):
    tool = {"name": "lookup", "description": "Find an order", "input_schema": {"type": "object", "properties": {}}}
    other = {"name": "refund", "description": "Refund an order", "input_schema": {"type": "object", "properties": {}}}
    sends = [dict(system=SYSTEM, tools=[tool], messages=[user("one")]),
             dict(system=SYSTEM, tools=[tool, other], messages=[user("one"), {"role": "assistant", "content": "Noted."},
                                                               user("two")]),
             dict(system=[{"type": "text", "text": "request 7f3e9a2c-1b4d-4e8f-9a6b-2c3d4e5f6a7b\n" + POLICY}],
                  tools=[tool, other], messages=[user("three")])]
    done, doc = anthropic_turns(cli, tmp_path, sends)
    found = [(f["code"], f["line"], f.get("cause"), f["variable"]) for f in doc["findings"]]
    assert found == [("M204", 2, "tools-added", "tools[1]"), ("M101", 3, None, "system")], done.out


# ----------------------------------------------------------------------------- captures: HAR, OTLP, bad records


def _har(bodies, secret):
    entries = [{"pageref": "page_1", "request": {"method": "GET", "url": "https://shop.example/", "headers": []},
                "response": {"status": 200, "content": {"text": "<html>"}}}]
    for body in bodies:
        entries.append({"pageref": "page_1", "request": {
            "method": "POST", "url": "https://api.openai.com/v1/chat/completions?key=" + secret,
            "headers": [{"name": "Authorization", "value": "Bearer " + secret}],
            "postData": {"mimeType": "application/json", "text": json.dumps(body)}},
            "response": {"status": 200, "content": {"mimeType": "application/json", "text": json.dumps(openai_reply())}}})
    entries.append({"pageref": "page_1", "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                                                     "postData": {"text": "not json"}}})
    return {"log": {"version": "1.2", "creator": {"name": "test"}, "pages": [{"id": "page_1"}], "entries": entries}}


def test_a_har_capture_finds_the_break_and_never_prints_its_secret(cli, tmp_path):
    secret = "sk-live-CANARY-0123456789abcdef"
    first = {"model": "gpt-4.1", "messages": [{"role": "system", "content": POLICY}, {"role": "user", "content": "hi"}],
             "tools": [WEATHER, CLOCK]}
    second = dict(first, tools=[CLOCK, WEATHER],
                  messages=first["messages"] + [{"role": "assistant", "content": OPENAI_REPLY}, {"role": "user", "content": "x"}])
    path = tmp_path / "app.har"
    path.write_text(json.dumps(_har([first, second], secret)), encoding="utf-8")
    for fmt in ("full", "json", "sarif"):
        done = cli("conversation", *PIN, "--output-format", fmt, path)
        assert secret not in done.out + done.err and "Bearer" not in done.out + done.err
        assert done.code == 1 and "M202" in done.out
    assert "entry 4: no JSON request body" in done.err and "1 record skipped, 2 analysed" in done.err
    f = cli("conversation", *PIN, "--output-format", "json", path).json()["findings"][0]
    assert (f["line"], f["variable"]) == (2, "tools[0]")


def test_an_otlp_trace_with_genai_messages_finds_the_rewritten_message(cli, tmp_path):
    def span(trace, messages):
        attrs = [{"key": "gen_ai.provider.name", "value": {"stringValue": "openai"}},
                 {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4.1"}},
                 {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
                     [{"role": r, "parts": [{"type": "text", "content": c}]} for r, c in messages])}}]
        return {"traceId": trace, "spanId": "01", "name": "chat gpt-4.1", "attributes": attrs}

    turns = [[("system", POLICY), ("user", "hi")],
             [("system", POLICY), ("user", "hi"), ("assistant", "Sure."), ("user", "next")],
             [("system", POLICY), ("user", "HI"), ("assistant", "Sure."), ("user", "next"), ("assistant", "ok"), ("user", "z")]]
    doc = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": [
        span("a1", t) for t in turns] + [{"traceId": "a1", "spanId": "09", "name": "GET /"}]}]}]}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    done = cli("conversation", *PIN, "--output-format", "json", path)
    [f] = done.json()["findings"]
    assert (f["code"], f["line"], f["cause"], f["variable"]) == ("M204", 3, "message-rewritten", "messages[1]"), done.err


def test_bad_records_are_one_line_each_and_a_file_without_requests_is_an_error(cli, tmp_path):
    path = tmp_path / "mixed.jsonl"
    good = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
    path.write_text("\n".join([json.dumps(good), "{oops", json.dumps({"model": "x"}), "[1, 2]",
                               json.dumps({"messages": "hi"}), json.dumps(good)]) + "\n", encoding="utf-8")
    done = cli("conversation", *PIN, path)
    assert done.code == 0, done.err
    assert [l.split(": ", 2)[1] for l in done.err.splitlines()[:4]] == [f"{path}:{n}" for n in (2, 3, 4, 5)]
    assert "4 records skipped, 2 analysed" in done.err and "Traceback" not in done.err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("{oops\n", encoding="utf-8")
    done = cli("conversation", *PIN, empty)
    assert done.code == 2 and "no request bodies" in done.err and len(done.err.strip().splitlines()) == 3


def test_without_a_tokenizer_the_figures_say_approximate_and_a_wrong_pin_is_refused(cli, tmp_path):
    wire = Wire([openai_reply()])
    openai_client(wire).chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
    path = wire.write(tmp_path / "one.jsonl")
    done = cli("conversation", path)
    assert done.code == 0 and "approximate: embedded tokenizer" in done.out
    done = cli("conversation", "--tokenizer", QWEN, "--tokenizer-sha256", "0" * 64, path)
    assert done.code == 2 and "sha256" in done.err and len(done.err.strip().splitlines()) == 1


def test_the_conversation_cost_uses_the_dated_price_table(cli, tmp_path):
    wire = Wire([openai_reply(), openai_reply()])
    client = openai_client(wire)
    first = [{"role": "system", "content": POLICY}, {"role": "user", "content": "hi"}]
    client.chat.completions.create(model="gpt-4.1", messages=first)
    client.chat.completions.create(model="gpt-4.1", messages=first + [{"role": "assistant", "content": OPENAI_REPLY},
                                                                      {"role": "user", "content": "more"}])
    done, doc = run(cli, tmp_path, wire)
    [conv] = doc["conversations"]
    # gpt-4.1 in data/hosted-prices.json (2025-10): $2.00 input, $0.50 cached per million tokens
    expected = ((conv["prompt_tokens"] - conv["reused_tokens"]) * 2.0 + conv["reused_tokens"] * 0.5) / 1e6
    assert conv["usd"] == round(expected, 6) and conv["reused_tokens"] > 0 and conv["lost_usd"] == 0
    assert "gpt-4.1, prices as of 2025-10" in conv["priced_as"]


# ----------------------------------------------------------------------------- other shapes and rules


def test_openai_responses_reasoning_items_not_sent_back_are_reasoning_dropped(cli, tmp_path):
    reply = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5", "status": "completed",
             "output": [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
                        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                         "content": [{"type": "output_text", "text": "It ships today.", "annotations": []}]}]}
    wire = Wire([reply, reply])
    client = openai_client(wire)
    first = [{"role": "user", "content": "Where is order 1042?"}]
    client.responses.create(model="gpt-5", instructions=POLICY, input=first)
    answer = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": "It ships today.", "annotations": []}]}
    client.responses.create(model="gpt-5", instructions=POLICY, input=first + [answer, {"role": "user", "content": "ok"}])
    done, doc = run(cli, tmp_path, wire)
    [f] = doc["findings"]
    assert (f["code"], f["line"], f["cause"], f["variable"]) == ("M204", 2, "reasoning-dropped", "input[1]"), done.out


def test_gemini_system_instruction_with_a_date_is_m101(cli, tmp_path):
    def body(day, contents):
        return {"model": "gemini-2.5-flash", "systemInstruction": {"parts": [{"text": f"Today is 2026-12-{day}.\n{POLICY}"}]},
                "contents": contents}

    first = [{"role": "user", "parts": [{"text": "hi"}]}]
    later = first + [{"role": "model", "parts": [{"text": "Hello."}]}, {"role": "user", "parts": [{"text": "more"}]}]
    path = tmp_path / "gemini.jsonl"
    path.write_text(json.dumps(body("01", first)) + "\n" + json.dumps(body("02", later)) + "\n", encoding="utf-8")
    done = cli("conversation", *PIN, "--output-format", "json", path)
    [f] = done.json()["findings"]
    assert (f["code"], f["line"], f["variable"]) == ("M101", 2, "system"), done.err
    assert done.json()["conversations"][0]["provider"] == "gemini"


def test_a_self_hosted_engine_counts_full_blocks(cli, tmp_path, qwen):
    """vLLM: floor(min(S, P-1)/16)*16 reused, before and without the replaced tool result."""
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    first = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "weather?"},
             {"role": "assistant", "content": None, "tool_calls": [call]},
             {"role": "tool", "tool_call_id": "call_1", "content": "4 C. " + POLICY}]
    later = json.loads(json.dumps(first)) + [{"role": "assistant", "content": "Cold."}, {"role": "user", "content": "ok"}]
    later[3]["content"] = "(elided)"
    path = tmp_path / "vllm.jsonl"
    path.write_text("\n".join(json.dumps({"model": "qwen", "messages": m}) for m in (first, later)) + "\n", encoding="utf-8")
    done = cli("conversation", *PIN, "--provider", "vllm", "--output-format", "json", path)
    [f] = done.json()["findings"]

    def blocks(s, p):
        return min(s, p - 1) // 16 * 16

    sent = ids(qwen, chatml(later))
    prev = ids(qwen, chatml(first))
    ideal = ids(qwen, chatml(first + later[4:]))
    s, s_ideal = shared_prefix(prev, sent), shared_prefix(prev, ideal)
    assert (f["cause"], f["variable"], f["block_size"]) == ("tool-result-replaced", "messages[3]", 16)
    assert f["lost_tokens"] == blocks(s_ideal, len(sent)) - blocks(s, len(sent)) > 0


def test_a_dated_table_older_than_the_maximum_age_is_a_note(cli, tmp_path):
    wire = Wire([openai_reply()])
    openai_client(wire).chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
    path = wire.write(tmp_path / "one.jsonl")
    done = cli("conversation", *PIN, "--table-max-age", "0", path)
    assert "note: the openai prices table is dated 2025-10, older than --table-max-age" in done.out
    assert "gemini" not in done.out  # only the tables the report used
    done = cli("conversation", *PIN, "--table-max-age", "100000", path)
    assert "note:" not in done.out


def test_a_chat_template_renders_the_requests_when_given(cli, tmp_path, qwen):
    """Qwen2.5's own template (its default system prompt when none is sent): the figures are the
    template's ChatML, written out here by hand."""
    from conftest import DATA

    template = DATA / "chat_templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"
    default = {"role": "system", "content": "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."}
    first = [{"role": "user", "content": "Order 1042: " + POLICY}]
    second = [{"role": "user", "content": "Order 1043: " + POLICY}, {"role": "assistant", "content": OPENAI_REPLY},
              {"role": "user", "content": "ok"}]
    path = tmp_path / "qwen.jsonl"
    path.write_text("\n".join(json.dumps({"session": "q", "model": "qwen", "messages": m}) for m in (first, second)) + "\n",
                    encoding="utf-8")
    done = cli("conversation", *PIN, "--chat-template", template, "--provider", "vllm", "--output-format", "json", path)
    [f] = done.json()["findings"]
    sent = ids(qwen, chatml([default] + second))
    prev = ids(qwen, chatml([default] + first))
    assert (f["cause"], f["variable"], f["prompt_tokens"]) == ("message-rewritten", "messages[0]", len(sent)), done.err
    assert f["shared_tokens"] == shared_prefix(prev, sent)


def test_a_large_capture_in_worker_processes_gives_the_same_report(cli, tmp_path):
    """2,000 requests (the threshold for workers): 200 conversations of 10 turns, every 7th with a
    clock in its system prompt; two workers and one process print the same report."""
    path = tmp_path / "large.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for c in range(200):
            history = []
            for t in range(10):
                stamp = f"10:00:{t:02d}" if c % 7 == 0 else "10:00:00"
                history.append({"role": "user", "content": f"question {t}"})
                f.write(json.dumps({"conversation": f"c{c}", "model": "gpt-4.1",
                                    "messages": [{"role": "system", "content": f"Now {stamp}."}] + history}) + "\n")
                history.append({"role": "assistant", "content": f"answer {t}"})
    one = cli("conversation", *PIN, "--jobs", "1", "--output-format", "json", path)
    two = cli("conversation", *PIN, "--jobs", "2", "--output-format", "json", path)
    assert one.out == two.out and one.code == two.code == 1
    findings = one.json()["findings"]
    assert len(findings) == 29 * 9 and {f["code"] for f in findings} == {"M101"}  # c0, c7, ..., c196: 9 breaks each


@pytest.mark.parametrize("turns, lost", [(9, False), (12, True)])
def test_anthropic_a_breakpoint_moved_beyond_the_lookback_reads_nothing(cli, tmp_path, qwen, turns, lost):
    """Request 1 writes an entry at the system block (block 0); request 2 keeps one breakpoint, on
    its last block: 2*turns + 1 blocks after it. Within 20 blocks it reads the entry, beyond not."""
    history = []
    for t in range(turns):
        history += [user(f"q{t}"), {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}]
    sends = [dict(system=SYSTEM, messages=[user("q0")]),
             dict(system=[{"type": "text", "text": POLICY}], messages=history[:1] + history[1:] + [user("last", cache=True)])]
    done, doc = anthropic_turns(cli, tmp_path, sends)
    entry = len(ids(qwen, POLICY))
    if lost:
        [f] = doc["findings"]
        assert (f["cause"], f["line"], f["lost_tokens"]) == ("breakpoint-beyond-lookback", 2, entry), done.out
    else:
        assert doc["findings"] == [] and doc["conversations"][0]["reused_tokens"] == entry, done.out
