"""A value's kind follows how the template uses it (issue 32 family 3).

An input the template only tests (`{% if x %}`, `a if x else b`) switches text on or off; one named
like a switch (`include_`, `use_`, `is_`, ...) is configuration. Both are static unless a samples
file says otherwise, whatever other words the name has: `include_follow_up_questions` is not a
question. Read as per-request, such a switch ended the ideal shared prefix early and hid the
volatile value after it.

Templates written here in the style of RAG answer prompts and tool-calling agent prompts. Every
index and block count is recomputed here with plain Jinja and a direct `tokenizers` encode.
"""

from __future__ import annotations

import json

from jinja2 import Environment

from conftest import QWEN, shared_prefix

B = 16  # vLLM's default block size

RAG = """\
You are the research assistant of the Acme knowledge base. Answer the user's question using only the
numbered sources below, cite each claim with its source number in brackets, and say plainly when the
sources do not contain the answer. Keep answers under two hundred words and never invent sources.
{% if include_follow_up_questions %}
After the answer, suggest three short follow-up questions the user could ask next, each on its own line
starting with "Q:", and never repeat a question the user already asked in this conversation.
{% endif %}
Today's date is {{ current_date }}.

When sources disagree, prefer the most recent one and mention the disagreement. Quote numbers,
prices and deadlines exactly as the sources state them, and answer in the language of the question.
If the question is about an order, remind the user that order details are not in the sources.

Sources:
{% for doc in documents %}[{{ loop.index }}] {{ doc.title }}
{{ doc.content }}
{% endfor %}
Question: {{ question }}
"""

DOCS = [
    {"title": "Refund policy", "content": "Refunds are issued to the original payment method within 5 business days."},
    {"title": "Gift cards", "content": "Gift cards never expire and can be combined with one promotional code."},
]
OTHER_DOCS = [{"title": "Shipping times", "content": "Orders over 50 dollars ship free; express shipping takes two days."}]
RAG_SAMPLES = {  # everything but the switch is declared, so the switch is the only inferred input
    "variables": {
        "current_date": {"value": "2025-03-14", "variant": "2025-03-15", "kind": "volatile", "sub-kind": "date"},
        "documents": {"value": DOCS, "variant": OTHER_DOCS, "kind": "per-request", "sub-kind": "retrieved"},
        "question": {"value": "How long does a refund take?", "variant": "Do you ship to Canada?", "kind": "per-request", "sub-kind": "input"},
    }
}

AGENT = """\
You are Atlas, an operations agent for the Acme warehouse team. You can call the tools listed below to
look up stock levels, open tickets and schedule pickups. Call one tool at a time and wait for its result.
{{ "When a request is ambiguous, ask one clarifying question before calling any tool." if ask_clarifying_questions else "Never ask clarifying questions; make the most reasonable assumption and say which one you made." }}
Session started: {{ request_time }}

Tools:
- stock_lookup(sku): current stock of an item in every warehouse
- open_ticket(summary, priority): opens a ticket for the facilities team
- schedule_pickup(order_id, date): books a carrier pickup for an order

Answer in plain text. Report tool errors verbatim and never retry a failed tool more than twice.
Always confirm the order number before scheduling a pickup, and never schedule one on a Sunday.

Task:
{{ task }}
"""
AGENT_SAMPLES = {
    "variables": {
        "request_time": {"value": "2025-03-14 09:26:53", "variant": "2025-03-14 09:27:00", "kind": "volatile", "sub-kind": "timestamp"},
        "task": {"value": "Schedule a pickup for order 58213.", "variant": "How many tents are left in Leeds?", "kind": "per-request", "sub-kind": "input"},
    }
}


def write(tmp_path, name, template, samples):
    path = tmp_path / name
    path.write_text(template, encoding="utf-8")
    (tmp_path / (path.stem + ".samples.json")).write_text(json.dumps(samples), encoding="utf-8")
    return path


def check(cli, path):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", path, cwd=path.parent)
    assert r.code in (0, 1), r.err
    doc = r.json()
    assert doc["errors"] == []
    return doc["findings"]


def render(template, **values):
    return Environment().from_string(template).render(**values)


def values_of(samples, which):
    return {k: v[which] for k, v in samples["variables"].items()}


def expect_m101(f, qwen, template, samples, switch):
    """The finding's figures, rebuilt: the switch on (a switch is rendered on), the volatile value
    moved, and the ideal prefix ending where the per-request material starts."""
    base_values = {**values_of(samples, "value"), switch: True}
    volatile = next(k for k, v in samples["variables"].items() if v["kind"] == "volatile")
    base = render(template, **base_values)
    variant = render(template, **{**base_values, volatile: samples["variables"][volatile]["variant"]})
    other_request = render(template, **{**values_of(samples, "variant"), switch: True, volatile: base_values[volatile]})
    assert f["evidence"]["base_render"] == base
    assert f["evidence"]["variant_render"] == variant
    b = qwen.encode(base, add_special_tokens=False).ids
    v = qwen.encode(variant, add_special_tokens=False).ids
    o = qwen.encode(other_request, add_special_tokens=False).ids
    shared, ideal, p = shared_prefix(b, v), shared_prefix(b, o), len(v)
    assert f["first_divergent_token"]["index"] == shared
    assert (f["shared_tokens"], f["ideal_shared_tokens"], f["prompt_tokens"]) == (shared, ideal, p)
    assert f["eligible_blocks"] == min(shared, p - 1) // B
    assert f["ideal_eligible_blocks"] == min(ideal, p - 1) // B
    assert f["lost_blocks"] == min(ideal, p - 1) // B - min(shared, p - 1) // B
    assert f["lost_blocks"] >= 3  # the hazard is real: several blocks of instructions after the date
    return shared, ideal


def test_switch_named_with_question_words_does_not_hide_the_date_after_it(tmp_path, cli, qwen):
    """`include_follow_up_questions` (only tested, and named like a switch) before `current_date`: read
    as a per-request question it ended the ideal prefix at line 4 and the date went unreported."""
    path = write(tmp_path, "rag_answer.j2", RAG, RAG_SAMPLES)
    findings = check(cli, path)
    assert [(f["code"], f["line"], f["variable"]) for f in findings] == [("M101", 8, "current_date")]
    shared, ideal = expect_m101(findings[0], qwen, RAG, RAG_SAMPLES, "include_follow_up_questions")
    # the ideal prefix runs past the date to the sources: the switch's text is shared material
    base = render(RAG, **values_of(RAG_SAMPLES, "value"), include_follow_up_questions=True)
    ids = qwen.encode(base, add_special_tokens=False)
    assert ids.offsets[ideal - 1][1] > base.index("Sources:")
    assert ids.offsets[shared][0] < base.index("When sources disagree")


def test_input_only_tested_in_a_conditional_expression_is_static(tmp_path, cli, qwen):
    """`ask_clarifying_questions` is not switch-named, but the template only uses it as the condition of
    `a if x else b`: its words (`questions`) no longer make it per-request."""
    path = write(tmp_path, "agent.j2", AGENT, AGENT_SAMPLES)
    findings = check(cli, path)
    assert [(f["code"], f["line"], f["variable"]) for f in findings] == [("M101", 4, "request_time")]
    expect_m101(findings[0], qwen, AGENT, AGENT_SAMPLES, "ask_clarifying_questions")


def test_samples_says_why_a_switch_is_static(tmp_path, cli):
    path = write(tmp_path, "rag_answer.j2", RAG, RAG_SAMPLES)
    (tmp_path / "rag_answer.samples.json").unlink()
    agent = write(tmp_path, "agent.j2", AGENT, AGENT_SAMPLES)
    (tmp_path / "agent.samples.json").unlink()
    r = cli("samples", path, agent, cwd=tmp_path)
    assert r.code == 0, r.err
    block = r.out.split("[variables.include_follow_up_questions]")[1].split("[variables.")[0]
    assert 'kind = "static"' in block and "starts with `include`" in block
    block = r.out.split("[variables.ask_clarifying_questions]")[1].split("[variables.")[0]
    assert 'kind = "static"' in block and "only tested as a condition (line 3)" in block
    # a word-kind stays for a value the prompt prints: `question` and `task` are still per-request
    for name in ("question", "task"):
        assert 'kind = "per-request"' in r.out.split(f"[variables.{name}]")[1].split("[variables.")[0]


def test_a_samples_file_declaring_the_switch_per_request_wins(tmp_path, cli):
    """Declared kinds are not second-guessed: a switch the application flips per request hides the
    date after it again (the ideal prefix ends at the switch)."""
    samples = json.loads(json.dumps(RAG_SAMPLES))
    samples["variables"]["include_follow_up_questions"] = {"value": True, "variant": False, "kind": "per-request", "sub-kind": "input"}
    path = write(tmp_path, "rag_answer.j2", RAG, samples)
    # no M101/M204 for the date after the switch; the static instructions the declared switch now
    # precedes are M107's business (static text after per-request material), which is right here
    assert [f["code"] for f in check(cli, path) if f["code"] != "M107"] == []
