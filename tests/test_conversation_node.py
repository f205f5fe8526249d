"""`promptlint conversation` on captures the official JS SDKs made (tests/data/conversations_node:
openai 6.49.0 and @anthropic-ai/sdk 1.15.0 against a local fake server, recorded as HAR 1.2 by the
server and as OTLP JSON; README.md there says how). Each family is found at its request and field,
with token figures computed here from the raw bodies: the documented framings written out by hand
(ChatML for Chat Completions, the cache-prefix layout for Anthropic: blocks joined by a blank
line), encoded with the Qwen tokenizer, and the providers' rules as formulas."""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import pytest

from conftest import DATA, QWEN, shared_prefix
from conversation_sdk import chatml

NODE = DATA / "conversations_node"
PIN = ["--tokenizer", str(QWEN), "--tokenizer-sha256", hashlib.sha256(QWEN.read_bytes()).hexdigest()]


def openai_hosted(shared: int, minimum: int = 1024, step: int = 128) -> int:
    """OpenAI's documented rule: nothing under 1,024 tokens, then 128-token steps."""
    return 0 if shared < minimum else minimum + (shared - minimum) // step * step


def analyse(cli, name):
    done = cli("conversation", *PIN, "--output-format", "json", str(NODE / name))
    return done, done.json()


def har_entries(name):
    return json.loads((NODE / name).read_text(encoding="utf-8"))["log"]["entries"]


def body(entry):
    return json.loads(entry["request"]["postData"]["text"])


def streamed_text(entry):
    """The reply text, read here from the raw event stream or JSON (independently of the reader)."""
    text = entry["response"]["content"]["text"]
    if entry["response"]["content"]["mimeType"] == "application/json":
        doc = json.loads(text)
        return doc["choices"][0]["message"]["content"] if "choices" in doc else doc["content"][0]["text"]
    out = ""
    for line in text.splitlines():
        if line.startswith("data: {"):
            event = json.loads(line[6:])
            delta = (event.get("choices") or [{}])[0].get("delta") or event.get("delta") or {}
            out += delta.get("content") or delta.get("text") or ""
    return out


def ids(qwen, text):
    return qwen.encode(text, add_special_tokens=False).ids


# ----------------------------------------------------------------------------- OpenAI, HAR


def openai_figures(qwen, entries, n):
    """(shared, ideal, prompt, lost) of request n (1-based) against request n-1 plus its reply."""
    prev, cur = body(entries[n - 2]), body(entries[n - 1])
    reply = {"role": "assistant", "content": streamed_text(entries[n - 2])}
    with_reply = ids(qwen, chatml(prev["messages"] + [reply], prev.get("tools")))
    sent = ids(qwen, chatml(cur["messages"], cur.get("tools")))
    ideal_messages = prev["messages"] + [reply] + cur["messages"][len(prev["messages"]) + 1:]
    ideal = ids(qwen, chatml(ideal_messages, prev.get("tools")))
    s, s_ideal = shared_prefix(with_reply, sent), shared_prefix(with_reply, ideal)
    p_prev = len(ids(qwen, chatml(prev["messages"], prev.get("tools"))))
    return s, s_ideal, len(sent), openai_hosted(min(s_ideal, p_prev)) - openai_hosted(min(s, p_prev))


def test_openai_har_each_family_at_its_request_and_field_with_hand_computed_tokens(cli, qwen):
    done, doc = analyse(cli, "openai.har")
    entries = har_entries("openai.har")
    found = [(f["code"], f["line"], f.get("cause"), f["variable"]) for f in doc["findings"]]
    # pages: clean 1-3, clock 4-5, tools-reordered 6-7, history-rewritten 8-10, expired 11-12
    assert found == [("M101", 5, None, "messages[0]"), ("M202", 7, None, "tools[0]"),
                     ("M204", 10, "tool-result-replaced", "messages[4]")], done.out
    for f in doc["findings"]:
        s, s_ideal, prompt, lost = openai_figures(qwen, entries, f["line"])
        assert (f["shared_tokens"], f["ideal_shared_tokens"], f["prompt_tokens"], f["lost_tokens"]) == (s, s_ideal, prompt, lost)
        assert f["first_divergent_token"]["index"] == s and lost > 0
    names = [c["conversation"] for c in doc["conversations"]]
    assert names == ["openai-clean", "openai-clock", "openai-tools-reordered", "openai-history-rewritten", "openai-expired"]


def test_openai_har_clean_conversation_with_streamed_turns_reuses_every_previous_prompt(cli, qwen):
    """Turns 1-2 were streamed: the reply the SDK assembled is what turn 2 sends back, so the
    conversation is clean, and each turn reuses the whole previous prompt under OpenAI's rule."""
    done, doc = analyse(cli, "openai.har")
    entries = har_entries("openai.har")[:3]
    assert [body(e).get("stream") for e in entries] == [True, True, None]
    assert body(entries[1])["messages"][2]["content"] == streamed_text(entries[0]) == "Answer 1: it ships today."
    prompts = [len(ids(qwen, chatml(body(e)["messages"], body(e)["tools"]))) for e in entries]
    clean = doc["conversations"][0]
    assert (clean["breaks"], clean["lost_tokens"]) == (0, 0)
    assert clean["reused_tokens"] == openai_hosted(prompts[0]) + openai_hosted(prompts[1]) > 0


def test_a_streamed_reply_in_a_har_file_is_assembled_for_the_next_turn(cli):
    from promptlint.conversation import readers

    capture = readers.read(str(NODE / "openai.har"))
    first = capture.requests[0].reply
    assert first["choices"][0]["message"] == {"role": "assistant", "content": "Answer 1: it ships today."}
    anthropic = readers.read(str(NODE / "anthropic.har")).requests[0].reply
    assert (anthropic["role"], anthropic["content"]) == ("assistant", [{"type": "text", "text": "Noted 1."}])


def test_openai_har_gap_past_the_lifetime_is_expiry_not_the_clock_hazard(cli):
    done, doc = analyse(cli, "openai.har")
    entries = har_entries("openai.har")
    t = [dt.datetime.fromisoformat(e["startedDateTime"].replace("Z", "+00:00")).timestamp() for e in entries[10:12]]
    assert t[1] - t[0] == 720  # 12 minutes, past the 10 minutes assumed for OpenAI
    assert not [f for f in doc["findings"] if f["line"] == 12]  # the clock changed too, but nothing was cached by then
    expired = doc["conversations"][4]
    assert (expired["conversation"], expired["reused_tokens"], expired["lost_tokens"]) == ("openai-expired", 0, 0)
    [e] = expired["expired"]
    assert (e["request"], e["gap_seconds"], e["lifetime_seconds"]) == (12, 720.0, 600.0)
    assert e["lifetime"].startswith("10 minutes (OpenAI")
    assert all(c["expired"] == [] for c in doc["conversations"][:4])  # 2 s apart


# ----------------------------------------------------------------------------- Anthropic, HAR


def layout(b, reply=None):
    """The cache-prefix layout by hand: tools as JSON, system text, message texts, blank lines between."""
    parts = [json.dumps(t) for t in b.get("tools", [])] + [blk["text"] for blk in b["system"]]
    for m in b["messages"] + ([reply] if reply else []):
        parts += [blk["text"] for blk in m["content"]]
    return "\n\n".join(parts)


def test_anthropic_har_each_family_at_its_request_and_field_with_hand_computed_tokens(cli, qwen):
    done, doc = analyse(cli, "anthropic.har")
    entries = har_entries("anthropic.har")
    found = [(f["code"], f["line"], f.get("cause"), f["variable"]) for f in doc["findings"]]
    # pages: clean 1-3, cache-control-dropped 4-5, clock 6-7, tools-reordered 8-9, history-rewritten 10-12, expired 13-14
    assert found == [("M204", 5, "cache-control-dropped", "cache_control"), ("M101", 7, None, "system"),
                     ("M202", 9, None, "tools[0]"), ("M204", 12, "message-rewritten", "messages[1]")], done.out
    for f in doc["findings"]:
        prev, cur = body(entries[f["line"] - 2]), body(entries[f["line"] - 1])
        reply = {"role": "assistant", "content": [{"type": "text", "text": streamed_text(entries[f["line"] - 2])}]}
        # a field break is measured against the previous request plus its reply; a lost breakpoint
        # (the prefix intact) against the previous prompt, which is what a hosted API cached
        base = layout(prev) if f.get("cause") == "cache-control-dropped" else layout(prev, reply)
        assert f["shared_tokens"] == shared_prefix(ids(qwen, base), ids(qwen, layout(cur)))
        assert f["prompt_tokens"] == len(ids(qwen, layout(cur)))
    # turn 1 of each two-turn conversation wrote entries at its breakpoints: the system block and
    # the user block (tools + system [+ question]; tokens of that text encoded alone). Anthropic
    # caches whole blocks: an entry is read when its blocks come back unchanged, i.e. the request's
    # text starts with the entry's text and a block boundary. Turn 2 should have read the longest
    # (in the request it should have sent: turn 1, its reply, the new question; for the dropped
    # breakpoint, in the request it did send) and reads none.
    for f in doc["findings"][:3]:
        first, second = body(entries[f["line"] - 2]), body(entries[f["line"] - 1])
        reply = {"role": "assistant", "content": [{"type": "text", "text": streamed_text(entries[f["line"] - 2])}]}
        should = second if f.get("cause") == "cache-control-dropped" else dict(
            first, messages=first["messages"] + [reply] + second["messages"][2:])
        assert f["lost_tokens"] == read(qwen, entries_of(first), layout(should)) >= 1024
    clean = doc["conversations"][0]
    assert (clean["conversation"], clean["breaks"], clean["lost_tokens"]) == ("anthropic-clean", 0, 0)
    # each of turns 2-3 reads the longest entry an earlier turn wrote (at the system block or at
    # its newest user block)
    turns = [body(e) for e in entries[:3]]
    written = entries_of(turns[0])
    reused = 0
    for before, after in zip(turns, turns[1:]):
        written += entries_of(before)
        reused += read(qwen, written, layout(after))
    assert clean["reused_tokens"] == reused > 2 * 1024


def entries_of(b):
    """The texts the breakpoints of an all-text Anthropic body close: the system block, then each
    user block that carries cache_control (tools first, as the layout orders them)."""
    head = "".join(json.dumps(t) + "\n\n" for t in b.get("tools", [])) + b["system"][0]["text"]
    out = [head] if "cache_control" in b["system"][0] else []
    for k, m in enumerate(b["messages"]):
        if any("cache_control" in blk for blk in m["content"]):
            out.append(layout(dict(b, messages=b["messages"][:k + 1])))
    return out


def read(qwen, written, text):
    """Anthropic's rule by hand: the longest written entry whose blocks the request repeats."""
    held = [len(ids(qwen, w)) for w in written if text == w or text.startswith(w + "\n\n")]
    return max([t for t in held if t >= 1024], default=0)


def test_anthropic_har_gap_past_five_minutes_is_expiry(cli):
    done, doc = analyse(cli, "anthropic.har")
    expired = doc["conversations"][5]
    [e] = expired["expired"]
    # 400 s between HAR entries 13 and 14; no ttl on the breakpoints: Anthropic's default 5 minutes
    assert (expired["conversation"], e["request"], e["gap_seconds"], e["lifetime_seconds"]) == ("anthropic-expired", 14, 400.0, 300.0)
    assert e["lifetime"] == "5m (anthropic: the default, no ttl on the breakpoints)"
    assert (expired["reused_tokens"], expired["lost_tokens"]) == (0, 0)


# ----------------------------------------------------------------------------- OTLP (the same conversations)


def test_otlp_from_the_js_sdks_finds_the_families_the_semantic_conventions_carry(cli, qwen):
    done, doc = analyse(cli, "traces.json")
    found = [(f["code"], f["line"], f.get("cause"), f["variable"]) for f in doc["findings"]]
    # OpenAI spans first (their simulated start times are earlier), then the Anthropic SDK's own
    # spans; no cache_control and no Anthropic tool definitions in the conventions: those two
    # families are HAR-only (README)
    assert found == [("M101", 5, None, "messages[0]"), ("M202", 7, None, "tools[0]"),
                     ("M204", 10, "tool-result-replaced", "messages[4]"),
                     ("M101", 19, None, "system"), ("M204", 24, "message-rewritten", "messages[1]")], done.out
    entries = har_entries("openai.har")
    for f in doc["findings"][:2]:  # text-only turns: the semantic-convention body renders as the HAR body
        s, s_ideal, prompt, lost = openai_figures(qwen, entries, f["line"])
        assert (f["shared_tokens"], f["ideal_shared_tokens"], f["prompt_tokens"], f["lost_tokens"]) == (s, s_ideal, prompt, lost)
    openai_expired = doc["conversations"][4]
    assert [(e["request"], e["gap_seconds"]) for e in openai_expired["expired"]] == [(12, 720.0)]
    anthropic_clean = doc["conversations"][5]
    assert (anthropic_clean["requests"], anthropic_clean["breaks"]) == (3, 0)
    # the Anthropic spans carry no breakpoint: what was read is unknown, not 0 (no token fields)
    for f in doc["findings"][3:]:
        assert "lost_tokens" not in f and "reuse is unknown" in f["message"], f["message"]
    for c in doc["conversations"][5:]:
        assert isinstance(c["reused_tokens"], int) and isinstance(c["lost_tokens"], int)  # the contract's types
        assert "cache_control" in c["reuse_unknown"]
