"""M102 for special tokens that are doubled but not adjacent (issue 32 family 6).

A BOS the template writes after a newline, with the BOS the completions path prepends before it;
a few-shot turn reopened with BOS after text no EOS closed; an EOS written after the last turn and
again at the end. Chat formats that close every turn with EOS and open the next with BOS (Llama 2)
stay clean. Templates written here in the style of Llama-2/Mistral completions prompts and chat
templates; token indexes and blocks are recomputed with the real Mistral tokenizer.
"""

from __future__ import annotations

import json

from jinja2 import Environment

from conftest import MISTRAL, shared_prefix

B = 16

RETURNS = """\
{# Returns assistant prompt, sent pre-rendered to /v1/completions #}
<s>[INST] <<SYS>>
You are the returns assistant of Acme Outdoor Gear. Answer questions about returns, exchanges and refunds
politely and precisely, quote the policy section you rely on, and never promise a refund the policy
does not allow. Refunds go to the original payment method within 5 business days of receiving the item.
<</SYS>>

{{ question }} [/INST]
"""
QUESTION = "Can I return a tent I have already used once?"

FEW_SHOT = """\
<s>[INST] Classify the sentiment of each product review as positive or negative, one word only.
Review: The tent kept us dry through a week of rain in the Lake District. [/INST] positive
<s>[INST] Review: The zip broke on the second night and support never answered. [/INST] negative
<s>[INST] Review: {{ review }} [/INST]
"""


def check(cli, tmp_path, name, template, *args, samples=None):
    (tmp_path / name).write_text(template, encoding="utf-8")
    if samples is not None:
        (tmp_path / (name.rsplit(".", 1)[0] + ".samples.json")).write_text(json.dumps(samples), encoding="utf-8")
    r = cli("check", "--tokenizer", MISTRAL, "--output-format", "json", "--no-cache", "--evidence", *args, name, cwd=tmp_path)
    assert r.code in (0, 1), r.err
    doc = r.json()
    assert doc["errors"] == []
    return [f for f in doc["findings"] if f["code"] == "M102"]


def test_bos_after_a_newline_plus_the_completions_bos(tmp_path, cli, mistral):
    samples = {"variables": {"question": {"value": QUESTION, "kind": "per-request", "sub-kind": "input"}}}
    (f,) = check(cli, tmp_path, "returns.j2", RETURNS, "--serving", "completions", samples=samples)
    text = Environment().from_string(RETURNS).render(question=QUESTION)
    assert text.startswith("\n<s>[INST]")  # the comment leaves its newline before the template's BOS
    served = mistral.encode(text, add_special_tokens=True)
    chat = mistral.encode(text, add_special_tokens=False).ids
    bos = mistral.token_to_id("<s>")
    # the served ids: the post-processor's BOS, whitespace only, then the template's BOS
    second = served.ids.index(bos, 1)
    assert served.ids[0] == bos and all(not mistral.decode([t]).strip() for t in served.ids[1:second])
    assert second > 1  # not adjacent: main's M102 missed it
    assert (f["line"], f["column"]) == (2, 1)
    assert f"duplicated special token `<s>` at token {second}" in f["message"]
    assert "after whitespace" in f["message"]
    p = len(served.ids)
    shared = shared_prefix(served.ids, chat)
    assert shared == 0  # chat-endpoint traffic starts with the newline, not with BOS
    assert (f["shared_tokens"], f["prompt_tokens"]) == (shared, p)
    assert f["eligible_blocks"] == min(shared, p - 1) // B == 0
    assert f["lost_blocks"] == (p - 1) // B - 0
    assert f["lost_blocks"] >= 4


def test_bos_again_on_the_chat_path_after_whitespace(tmp_path, cli, mistral):
    """Served as it is (no BOS added), the template writes BOS, a newline, and BOS again (its header
    include opens with its own)."""
    (tmp_path / "persona.j2").write_text(
        "<s>[INST] You are the returns assistant of Acme Outdoor Gear. Be brief and quote the policy.\n", encoding="utf-8"
    )
    main = "<s>\n{% include 'persona.j2' %}{{ question }} [/INST]\n"
    samples = {"variables": {"question": {"value": QUESTION, "kind": "per-request", "sub-kind": "input"}}}
    (f,) = check(cli, tmp_path, "returns.j2", main, samples=samples)
    text = Environment().from_string(main.replace("{% include 'persona.j2' %}", (tmp_path / "persona.j2").read_text())).render(question=QUESTION)
    ids = mistral.encode(text, add_special_tokens=False).ids
    bos = mistral.token_to_id("<s>")
    first = ids.index(bos)
    second = ids.index(bos, first + 1)
    assert second - first > 1 and all(not mistral.decode([t]).strip() for t in ids[first + 1:second])
    assert f"duplicated special token `<s>` at token {second}" in f["message"]
    assert "only whitespace between" in f["message"]
    assert (f["path"].rsplit("/", 1)[-1], f["line"], f["column"]) == ("persona.j2", 1, 1)  # the include's own BOS


def test_few_shot_turn_reopened_after_text_and_closed_turns(tmp_path, cli, mistral):
    """Llama-2 few-shot prompts: each example is `<s>[INST] q [/INST] a</s>`. Reopening one with `<s>`
    right after the previous answer (no `</s>`) is a second BOS inside one sequence, reported at
    its own line; closing each with `</s>` is clean."""
    samples = {"variables": {"review": {"value": "Great stove, boils water in three minutes.", "kind": "per-request", "sub-kind": "input"}}}
    (f,) = check(cli, tmp_path, "reviews.j2", FEW_SHOT, samples=samples)
    text = Environment().from_string(FEW_SHOT).render(review="Great stove, boils water in three minutes.")
    ids = mistral.encode(text, add_special_tokens=False).ids
    bos = mistral.token_to_id("<s>")
    second = ids.index(bos, 1)
    assert (f["line"], f["column"]) == (3, 1)
    assert f"duplicated special token `<s>` at token {second}" in f["message"]
    assert "after text" in f["message"]

    closed = FEW_SHOT.replace(" positive\n", " positive</s>\n").replace(" negative\n", " negative</s>\n")
    assert closed.count("</s>\n<s>") == 2
    assert check(cli, tmp_path, "reviews_closed.j2", closed, samples=samples) == []
