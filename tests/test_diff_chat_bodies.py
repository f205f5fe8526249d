"""`promptlint diff` of two OpenAI Chat Completions bodies without a chat template: the field-by-field
comparison (which message, which field, where inside it), and token figures on the documented
approximate ChatML framing (docs/operators.md) — the test writes that framing out by hand and
encodes it with `tokenizers` directly; no figure comes from promptlint."""

from __future__ import annotations

import copy
import json

import pytest

from conftest import QWEN, shared_prefix

TOOL = {"type": "function", "function": {"name": "get_order", "description": "Look an order up by its number",
                                         "parameters": {"type": "object", "properties": {"order": {"type": "string"},
                                                                                         "email": {"type": "string"}}}}}
SYSTEM = "You are the support assistant of a shop. " * 6
BODY = {
    "model": "qwen2.5-7b-instruct",
    "messages": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Where is my order 4417?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": "{\"order\": \"4417\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "shipped on Monday"},
    ],
    "tools": [TOOL],
    "temperature": 0.2,
}


def framed(body) -> str:
    """The documented framing, written out for these bodies (tools first, one turn per message)."""
    out = "<|im_start|>system\n# Tools\n" + "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in body["tools"]) + "<|im_end|>\n"
    for m in body["messages"]:
        lines = [m["content"]] if m.get("content") is not None else []
        lines += [json.dumps({"name": c["function"]["name"], "arguments": c["function"]["arguments"]}) for c in m.get("tool_calls", [])]
        out += f"<|im_start|>{m['role']}" + (f" name={m['name']}" if "name" in m else "") + "\n" + "\n".join(lines) + "<|im_end|>\n"
    return out + "<|im_start|>assistant\n"


def run_diff(cli, tmp_path, a, b, *args):
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a), encoding="utf-8")
    pb.write_text(json.dumps(b), encoding="utf-8")
    return cli("diff", pa, pb, "--tokenizer", QWEN, *args)


def variant_with(change):
    b = copy.deepcopy(BODY)
    change(b)
    return b


def test_token_figures_on_the_documented_framing(cli, tmp_path, qwen):
    b = variant_with(lambda b: b["messages"][3].update(content="shipped on Tuesday"))
    r = run_diff(cli, tmp_path, BODY, b, "--output-format", "json")
    assert r.code == 0, r.err
    doc = r.json()
    x, y = qwen.encode(framed(BODY), add_special_tokens=False).ids, qwen.encode(framed(b), add_special_tokens=False).ids
    s = shared_prefix(x, y)
    assert (doc["shared_tokens"], doc["base_prompt_tokens"], doc["prompt_tokens"]) == (s, len(x), len(y))
    assert doc["eligible_blocks"] == min(s, len(y) - 1) // 16
    assert doc["first_divergent_token"]["base_id"] == x[s] and doc["first_divergent_token"]["variant_id"] == y[s]
    assert doc["chat_framing"] == {"name": "chatml", "approximate": True, "sides": ["base", "variant"],
                                   "docs": "docs/operators.md#chat-completions-bodies-without-a-chat-template"}
    assert doc["request_fields"]["first_difference"] == {
        "path": "messages[3].content", "field": "content", "what": "text differs at character 11",
        "base": "Monday", "variant": "Tuesday", "message": 3, "tool": None, "in_prompt": True}
    assert len(doc["request_fields"]["differences"]) == 1
    assert "approximate ChatML framing" in r.err


@pytest.mark.parametrize("change, first", [
    (lambda b: b["messages"][1].update(role="developer"),
     ("messages[1].role", "role", 1, None, "text differs at character 0", "user", "developer")),
    (lambda b: b["messages"][1].update(name="ana"),
     ("messages[1].name", "name", 1, None, "only in the variant", None, "ana")),
    (lambda b: b["messages"][2]["tool_calls"][0]["function"].update(arguments="{\"order\": \"4418\"}"),
     ("messages[2].tool_calls[0].function.arguments", "tool_calls", 2, None, "text differs at character 14", "7\"}", "8\"}")),
    (lambda b: b["tools"][0]["function"]["parameters"].update(properties={"email": {"type": "string"}, "order": {"type": "string"}}),
     ("tools[0].function.parameters.properties", "tool schema", None, 0, "same keys in another order", '["order", "email"]', '["email", "order"]')),
    (lambda b: b["tools"][0]["function"].update(description="Find an order"),
     ("tools[0].function.description", "tool description", None, 0, "text differs at character 0", "Look an order up by its number", "Find an order")),
    (lambda b: b["messages"].append({"role": "user", "content": "thanks"}),
     ("messages[4]", "message", 4, None, "only in the variant", None, '{"role": "user", "content": "thanks"}')),
    (lambda b: b.update(model="qwen2.5-14b-instruct"),
     ("model", "model", None, None, "text differs at character 8", "7b-instruct", "14b-instruct")),
])
def test_the_first_differing_field(cli, tmp_path, change, first):
    r = run_diff(cli, tmp_path, BODY, variant_with(change), "--output-format", "json")
    assert r.code == 0, r.err
    got = r.json()["request_fields"]["first_difference"]
    assert (got["path"], got["field"], got["message"], got["tool"], got["what"], got["base"], got["variant"]) == first


def test_sampling_parameters_differ_outside_the_prompt(cli, tmp_path):
    """Only `temperature` differs: the framed prompts are identical, the field is named and marked
    as not reaching the prompt; the model name is listed first when it differs too."""
    b = variant_with(lambda b: b.update(temperature=0.7))
    r = run_diff(cli, tmp_path, BODY, b, "--output-format", "json")
    doc = r.json()
    assert doc["identical"] is True
    assert doc["request_fields"]["differences"] == [{"path": "temperature", "field": "temperature", "what": "value differs",
                                                     "base": "0.2", "variant": "0.7", "message": None, "tool": None,
                                                     "in_prompt": False}]
    both = variant_with(lambda b: b.update(temperature=0.7, model="other"))
    fields = run_diff(cli, tmp_path, BODY, both, "--output-format", "json").json()["request_fields"]["differences"]
    assert [d["path"] for d in fields] == ["model", "temperature"]


def test_full_output_says_approximate_and_names_the_field(cli, tmp_path):
    b = variant_with(lambda b: b["messages"][1].update(content="Where is my order 4418?"))
    r = run_diff(cli, tmp_path, BODY, b)
    assert r.code == 0, r.err
    assert "chat framing: approximate (chatml, no chat template given; docs/operators.md)" in r.out
    assert ('request fields: 1 field differs; first: messages[1].content (message 1, content): text differs at '
            'character 21: "7?" vs "8?"') in r.out


def test_a_body_with_a_bad_field_is_one_line(cli, tmp_path):
    bad = variant_with(lambda b: b["messages"][1].update(role=7))
    r = run_diff(cli, tmp_path, BODY, bad)
    assert r.code == 2 and "Traceback" not in r.err
    *notes, error = r.err.splitlines()
    assert all(n.startswith("promptlint: note: ") for n in notes)  # A (well formed) was read first
    assert error.endswith("b.json: not a usable chat-completions request body: `messages[1].role` must be a string")


def test_hashes_still_needs_the_chat_template(cli, tmp_path):
    """Block hashes of an approximate text would look exact: `hashes` keeps refusing."""
    p = tmp_path / "a.json"
    p.write_text(json.dumps(BODY), encoding="utf-8")
    r = cli("hashes", p, "--tokenizer", QWEN)
    assert r.code == 2 and "needs the chat template: pass --chat-template" in r.err


@pytest.mark.parametrize("body, note", [
    (BODY, "approximate ChatML framing"),
    ({"model": "claude-sonnet-4-5", "system": SYSTEM, "messages": [{"role": "user", "content": "hi"}]},
     "an Anthropic Messages request body, rendered as its text"),
])
def test_the_rendering_note_is_said_in_every_run(cli, tmp_path, body, note):
    """Once per run, not once per process: a second run in the same process (the daemon, an
    editor integration) says it again."""
    for _ in range(2):
        r = run_diff(cli, tmp_path, body, body)
        assert r.code == 0 and r.err.count(note) == 1, r.err
