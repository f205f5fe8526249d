"""`promptlint diff` of hosted-API request bodies: rendered in the order the provider builds the
cached prefix (tools -> system -> messages), not through a chat template.

The expected render is written out here by hand; token counts and the first divergent token
come from a direct `tokenizers` encode of it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptlint.cli import main

QWEN = Path(__file__).parent / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"

TOOLS = [
    {"name": "get_weather", "description": "Current weather for a city.",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "get_forecast", "description": "Five-day forecast for a city.",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
     "cache_control": {"type": "ephemeral"}},
]
SYSTEM = "You are WeatherBot. Answer in one short paragraph and always name the city you looked up."


def anthropic_body(day: str) -> dict:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "tools": TOOLS,
        "system": [
            {"type": "text", "text": SYSTEM},
            {"type": "text", "text": f"Today is {day}.", "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [
            {"role": "user", "content": "Will it rain in Lyon tomorrow?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "tu_1", "name": "get_forecast", "input": {"city": "Lyon", "days": 2}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "Rain 80%, 14C"}]},
        ],
    }


def expected_anthropic(day: str) -> str:
    tools = [json.dumps({k: v for k, v in t.items() if k != "cache_control"}, ensure_ascii=False) for t in TOOLS]
    tool_use = json.dumps({"type": "tool_use", "id": "tu_1", "name": "get_forecast", "input": {"city": "Lyon", "days": 2}})
    return "\n\n".join(tools + [SYSTEM, f"Today is {day}.", "Will it rain in Lyon tomorrow?", tool_use, "Rain 80%, 14C"])


@pytest.fixture(scope="module")
def tok():
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(QWEN))


def diff_json(capsys, a, b, *extra):
    rc = main(["diff", str(a), str(b), "--tokenizer", str(QWEN), "--output-format", "json", *extra])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out), err


def test_anthropic_body_renders_tools_system_messages_in_order(tmp_path, tok):
    from promptlint.operators.captured import Settings, load_side

    p = tmp_path / "a.json"
    p.write_text(json.dumps(anthropic_body("2026-11-30")), encoding="utf-8")
    side = load_side(str(p), Settings(tokenizer=str(QWEN), quiet=True))
    want = expected_anthropic("2026-11-30")
    assert side.text == want
    assert side.text.index('"name": "get_weather"') < side.text.index('"name": "get_forecast"') < side.text.index(SYSTEM)
    assert side.text.index(SYSTEM) < side.text.index("Will it rain")
    assert side.ids == tok.encode(want, add_special_tokens=False).ids
    assert len(side.ids) > 100  # tools and system are no longer dropped


def test_anthropic_bodies_diverge_at_the_date(tmp_path, capsys, tok):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(anthropic_body("2026-11-30")), encoding="utf-8")
    b.write_text(json.dumps(anthropic_body("2026-12-01")), encoding="utf-8")
    r, err = diff_json(capsys, a, b)
    x = tok.encode(expected_anthropic("2026-11-30"), add_special_tokens=False).ids
    y = tok.encode(expected_anthropic("2026-12-01"), add_special_tokens=False).ids
    s = next(i for i, (u, v) in enumerate(zip(x, y)) if u != v)
    assert r["shared_tokens"] == s and r["prompt_tokens"] == len(y)
    assert (r["first_divergent_token"]["base_id"], r["first_divergent_token"]["variant_id"]) == (x[s], y[s])
    assert r["base"]["kind"] == "request"


def test_bedrock_converse_body(tmp_path, capsys, tok):
    spec = {"name": "lookup", "description": "Search the handbook.", "inputSchema": {"json": {"type": "object"}}}

    def body(question):
        return {
            "modelId": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "toolConfig": {"tools": [{"toolSpec": spec}, {"cachePoint": {"type": "default"}}]},
            "system": [{"text": "You answer questions about the employee handbook."}, {"cachePoint": {"type": "default"}}],
            "messages": [{"role": "user", "content": [{"text": question}]}],
            "inferenceConfig": {"maxTokens": 300},
        }

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(body("How many vacation days do I get?")), encoding="utf-8")
    b.write_text(json.dumps(body("Who approves expenses?")), encoding="utf-8")
    r, _ = diff_json(capsys, a, b)
    head = json.dumps(spec) + "\n\nYou answer questions about the employee handbook.\n\n"
    x = tok.encode(head + "How many vacation days do I get?", add_special_tokens=False).ids
    y = tok.encode(head + "Who approves expenses?", add_special_tokens=False).ids
    s = next(i for i, (u, v) in enumerate(zip(x, y)) if u != v)
    assert r["shared_tokens"] == s and r["base_prompt_tokens"] == len(x) and r["variant_prompt_tokens"] == len(y)
    assert s >= len(tok.encode(head, add_special_tokens=False).ids) - 1  # the tools and system are shared


def test_openai_responses_and_gemini_bodies(tmp_path):
    from promptlint.operators.captured import Settings, load_side

    settings = Settings(tokenizer=str(QWEN), quiet=True)
    responses = {"model": "gpt-4.1", "instructions": "Be brief.",
                 "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
                           {"type": "function_call_output", "call_id": "c1", "output": "42"}]}
    gemini = {"systemInstruction": {"parts": [{"text": "Be brief."}]},
              "contents": [{"role": "user", "parts": [{"text": "Hi"}, {"text": "there"}]}]}
    for name, body, want in (("r.json", responses, "Be brief.\n\nHi\n\n42"), ("g.json", gemini, "Be brief.\n\nHi\n\nthere")):
        p = tmp_path / name
        p.write_text(json.dumps(body), encoding="utf-8")
        assert load_side(str(p), settings).text == want


def test_malformed_anthropic_body_is_one_line_error(tmp_path, capsys):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"model": "claude-sonnet-4-5", "system": 5, "messages": []}), encoding="utf-8")
    rc = main(["diff", str(p), str(p), "--tokenizer", str(QWEN)])
    _, err = capsys.readouterr()
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "bad.json: `system` must be a string or an array of content blocks" in err


def test_openai_chat_body_is_not_read_as_a_hosted_body(tmp_path, capsys):
    """A Chat Completions body takes the chat-completions path (its approximate framing without a
    chat template, docs/operators.md), not a hosted API's cache-order rendering."""
    p = tmp_path / "chat.json"
    p.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}), encoding="utf-8")
    rc = main(["diff", str(p), str(p), "--tokenizer", str(QWEN), "--output-format", "json"])
    out, err = capsys.readouterr()
    assert rc == 0 and json.loads(out)["chat_framing"]["name"] == "chatml" and "request body, rendered" not in err
