"""M204 on application templates (issue 14 item 6): the conversation grown by one turn.

Templates written here in the style of RAG chat and agent prompts. Turn N is the template's render
with the values the test states; turn N+1 the same with the history grown by the previous question
and an answer and every other per-request input changed. Each index and block count is checked
against renders made here with plain Jinja and a direct `tokenizers` encode, never against
promptlint's own arithmetic.
"""

from __future__ import annotations

import copy
import json

from jinja2 import Environment

from conftest import DATA, QWEN, shared_prefix
from test_inference import RAG  # rag_chat.j2's inferred inputs, as that test states them

B = 16  # vLLM's default block size
ANSWER = "Yes, its seams are taped and the fly is rated to 3,000 mm."  # the answer the grown turn carries

SYSTEM = (
    "You are the support assistant for Acme Outdoor Gear. Answer questions about orders, shipping and returns "
    "politely and precisely, and cite the policy you rely on.\n"
    "Policies: refunds within 30 days of delivery; free shipping on orders over 50 dollars; gift cards never expire.\n"
)
HISTORY_LOOP = "{% for m in history %}{{ m.role | capitalize }}: {{ m.content }}\n{% endfor %}"
EXCERPTS = "Relevant excerpts:\n{{ context }}\n"
QUESTION = "User: {{ question }}\nAssistant:"

HISTORY = [
    {"role": "user", "content": "Can I change the delivery address of order 58213?"},
    {"role": "assistant", "content": "Yes, until the parcel leaves the warehouse; I can redirect it for you."},
    {"role": "user", "content": "Please send it to 12 Harbour Road, Portsmouth."},
    {"role": "assistant", "content": "Done: order 58213 now ships to 12 Harbour Road, Portsmouth."},
]
VALUES = {
    "history": HISTORY,
    "context": "Orders can be redirected until they leave the warehouse. Redirected parcels keep their delivery estimate.",
    "question": "How long does a refund take?",
}
NEXT = {  # turn N+1: the previous question and an answer appended, the other per-request inputs changed
    "history": HISTORY + [{"role": "user", "content": VALUES["question"]}, {"role": "assistant", "content": ANSWER}],
    "context": "Refunds are issued to the original payment method within 5 business days of receiving the item.",
    "question": "Do you ship to Canada?",
}
SAMPLES = {
    "variables": {
        "history": {"value": HISTORY, "kind": "per-request", "sub-kind": "history"},
        "context": {"value": VALUES["context"], "kind": "per-request", "sub-kind": "retrieved", "variant": NEXT["context"]},
        "question": {"value": VALUES["question"], "kind": "per-request", "sub-kind": "input", "variant": NEXT["question"]},
    }
}


def write(tmp_path, name, template, samples=SAMPLES):
    path = tmp_path / name
    path.write_text(template, encoding="utf-8")
    if samples is not None:
        (tmp_path / (path.stem + ".samples.json")).write_text(json.dumps(samples), encoding="utf-8")
    return path


def check(cli, path, *extra):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", *extra, path, cwd=path.parent)
    assert r.code in (0, 1), r.err
    doc = r.json()
    assert doc["errors"] == []
    return [f for f in doc["findings"] if f["code"] == "M204"]


def render(template, values):
    return Environment().from_string(template).render(**values)


def end_of_history(text, history):
    """Character offset just after the last history message in the test's own render."""
    return max(text.index(m["content"]) + len(m["content"]) for m in history)


def expected(qwen, template, values, grown):
    """(S, ideal S, P, lost blocks) from the test's own renders of turn N and turn N+1."""
    base, after = render(template, values), render(template, grown)
    enc = qwen.encode(base, add_special_tokens=False)
    b, a = enc.ids, qwen.encode(after, add_special_tokens=False).ids
    end = end_of_history(base, values["history"])
    ideal = sum(1 for _, e in enc.offsets if e <= end)  # turn N's tokens up to the end of its history
    s, p = shared_prefix(b, a), len(a)
    return base, after, s, ideal, p, min(ideal, p - 1) // B - min(s, p - 1) // B


def test_history_rendered_append_only_is_not_reported(tmp_path, cli):
    # the newest request rendered as the history renders it, the excerpts in the system part: turn
    # N+1 extends turn N's whole prompt and the reply (issue 32 family 4's clean form)
    template = SYSTEM + EXCERPTS + HISTORY_LOOP + QUESTION
    samples = copy.deepcopy(SAMPLES)
    samples["variables"]["context"]["kind"] = "static"  # the same excerpts every turn (a fixed handbook)
    assert check(cli, write(tmp_path, "support_chat.j2", template, samples)) == []


def test_excerpts_appended_to_the_newest_request_break_the_prefix_at_it(tmp_path, cli, qwen):
    """Issue 32 family 4: the history comes back unchanged, but turn N's request (its excerpts and
    question) is not rendered back as sent: the engine holds turn N's whole prompt plus the reply,
    so turn N+1 diverges at the excerpts on every turn. Missed when only the history was compared."""
    template = SYSTEM + HISTORY_LOOP + EXCERPTS + QUESTION  # per-request text after the history
    for samples in (SAMPLES, None):  # declared, and zero-config (`history`, `context`, `question` by name)
        (f,) = check(cli, write(tmp_path, "support_chat.j2", template, samples))
        assert f["cause"] == "current-turn" and (f["line"], f["column"]) == (4, 13)  # `Relevant excerpts:`
        base, after = f["evidence"]["base_render"], f["evidence"]["variant_render"]
        if samples is not None:
            assert base == render(template, VALUES) + ANSWER and after == render(template, NEXT)
        prompt = base[: -len(ANSWER)]
        cached = qwen.encode(prompt, add_special_tokens=False).ids + qwen.encode(ANSWER, add_special_tokens=False).ids
        a = qwen.encode(after, add_special_tokens=False).ids
        s = shared_prefix(cached, a)
        assert prompt[len(qwen.decode(cached[:s])):].startswith("Re")  # the excerpts' first token
        assert f["first_divergent_token"]["index"] == s == f["shared_tokens"]
        assert f["ideal_shared_tokens"] == len(cached) and f["prompt_tokens"] == len(a)
        assert f["lost_blocks"] == min(len(cached), len(a) - 1) // B - min(s, len(a) - 1) // B >= 1
        (tmp_path / "support_chat.samples.json").unlink(missing_ok=True)


def test_retrieved_context_before_history_is_reported_at_its_line(tmp_path, cli, qwen):
    template = SYSTEM + EXCERPTS + HISTORY_LOOP + QUESTION
    (f,) = check(cli, write(tmp_path, "rag_chat.j2", template))
    assert (f["cause"], f["severity"], f["variable"], f["line"]) == ("changed-input", "warning", "context", 4)
    base, after, s, ideal, p, lost = expected(qwen, template, VALUES, NEXT)
    assert f["evidence"]["base_render"] == base and f["evidence"]["variant_render"] == after
    assert f["first_divergent_token"]["index"] == s
    assert (f["shared_tokens"], f["ideal_shared_tokens"], f["prompt_tokens"]) == (s, ideal, p)
    assert f["lost_blocks"] == lost >= 3  # the whole history, recomputed on every turn
    assert "render `context` after the conversation history" in f["help"]


def test_loop_last_branch_in_history_is_reported_at_the_branch(tmp_path, cli, qwen):
    loop = (
        "{% for m in history %}\n"
        "{% if loop.last %}(latest) {% endif %}{{ m.role | capitalize }}: {{ m.content }}\n"
        "{% endfor %}"
    )
    template = SYSTEM + loop + QUESTION
    (f,) = check(cli, write(tmp_path, "latest_marked.j2", template))
    assert (f["cause"], f["severity"], f["line"]) == ("loop-last", "warning", 4)
    assert f.get("variable") is None
    base, after, s, ideal, p, lost = expected(qwen, template, VALUES, NEXT)
    assert f["evidence"]["variant_render"] == after
    assert f["first_divergent_token"]["index"] == s
    assert base[len(qwen.decode(qwen.encode(base, add_special_tokens=False).ids[:s])):].startswith("(latest)")
    assert f["lost_blocks"] == lost >= 1
    assert any(n.startswith("template line 4: `{% if loop.last %}") for n in f["notes"])


def test_text_computed_from_the_history_before_it_is_history_derived(tmp_path, cli, qwen):
    template = SYSTEM + "Conversation so far ({{ history | length }} messages):\n" + HISTORY_LOOP + QUESTION
    (f,) = check(cli, write(tmp_path, "counted.j2", template))
    assert (f["cause"], f["severity"], f["line"]) == ("history-derived", "warning", 3)
    base, after, s, ideal, p, lost = expected(qwen, template, VALUES, NEXT)
    assert f["first_divergent_token"]["index"] == s
    assert (f["first_divergent_token"]["base_text"], f["first_divergent_token"]["variant_text"]) == ("4", "6")
    assert f["lost_blocks"] == lost >= 3


def test_a_summary_input_before_history_is_named(tmp_path, cli, qwen):
    """A running summary of the conversation changes every turn: rendered first, it moves the history."""
    template = SYSTEM + "Summary of the conversation: {{ conversation_summary }}\n" + HISTORY_LOOP + QUESTION
    summary = {"value": "The customer redirected order 58213.", "kind": "per-request",
               "variant": "The customer redirected order 58213 and asked about refunds."}
    samples = copy.deepcopy(SAMPLES)
    samples["variables"]["conversation_summary"] = summary
    (f,) = check(cli, write(tmp_path, "summarised.j2", template, samples))
    assert (f["cause"], f["variable"], f["line"]) == ("changed-input", "conversation_summary", 3)
    values = {**VALUES, "conversation_summary": summary["value"]}
    grown = {**NEXT, "conversation_summary": summary["variant"]}
    _, _, s, _, _, lost = expected(qwen, template, values, grown)
    assert f["first_divergent_token"]["index"] == s and f["lost_blocks"] == lost >= 3


def test_a_timestamp_before_history_is_one_finding(tmp_path, cli, qwen):
    """M101 reports a timestamp that changes on every request; M204 keeps it fixed (one finding per
    hazard) and reports it only when M101 is not selected."""
    template = "Current time: {{ now }}\n" + SYSTEM + HISTORY_LOOP + QUESTION
    samples = copy.deepcopy(SAMPLES)
    samples["variables"]["now"] = {"value": "2025-03-14T09:26:53", "kind": "volatile", "sub-kind": "timestamp",
                                   "variant": "2025-03-14T09:27:40"}
    path = write(tmp_path, "stamped.j2", template, samples)
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", path, cwd=tmp_path)
    codes = [f["code"] for f in r.json()["findings"]]
    assert codes == ["M101"]
    (f,) = check(cli, path, "--select", "M204")
    assert (f["cause"], f["variable"], f["line"]) == ("changed-input", "now", 1)
    values = {**VALUES, "now": "2025-03-14T09:26:53"}
    grown = {**NEXT, "now": "2025-03-14T09:27:40"}
    _, _, s, _, _, lost = expected(qwen, template, values, grown)
    assert f["first_divergent_token"]["index"] == s and f["lost_blocks"] == lost


def test_zero_config_rag_chat_reports_the_documents_before_the_history(tmp_path, cli, qwen):
    """The issue's example: retrieved context rendered before the chat history loop, no samples file.
    Each record holds one exchange, so the history grows by one record."""
    template = (DATA / "app_templates" / "rag_chat.j2").read_text(encoding="utf-8")
    path = write(tmp_path, "rag_chat.j2", template, samples=None)
    (f,) = check(cli, path)
    assert (f["cause"], f["variable"], f["line"]) == ("changed-input", "retrieved_documents", 6)
    base = render(template, RAG)
    assert f["evidence"]["base_render"] == base
    grown = copy.deepcopy(RAG["chat_history"]) + [{"inputs": {"question": RAG["question"]}, "outputs": {"answer": ANSWER}}]
    after = f["evidence"]["variant_render"]
    assert "Customer: How do I reset my password?\nAssistant: " + ANSWER in after
    # the timestamp stays fixed (M101 reports it); the documents and the question change
    assert "Today is 2025-03-14 09:26:53." in after and "gift-cards.md" not in after
    enc = qwen.encode(base, add_special_tokens=False)
    b, a = enc.ids, qwen.encode(after, add_special_tokens=False).ids
    end = max(base.index(r["outputs"]["answer"]) + len(r["outputs"]["answer"]) for r in RAG["chat_history"])
    ideal = sum(1 for _, e in enc.offsets if e <= end)
    s, p = shared_prefix(b, a), len(a)
    assert f["first_divergent_token"]["index"] == s and f["ideal_shared_tokens"] == ideal
    assert f["lost_blocks"] == min(ideal, p - 1) // B - min(s, p - 1) // B >= 5
    assert "`chat_history` 2 → 3 items" in f["variant"] and len(grown) == 3
