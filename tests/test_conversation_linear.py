"""The analysis is linear in a conversation's history: a request that repeats the previous one's
messages as sent has only its new messages framed and compared (the JSON text of the history is
compared once), and the text it gets is the whole framing's. Checked on a long conversation with
a tool change, a rewritten message and an envelope sent back with its keys in another order, against
the framing written out by hand (tests/conversation_sdk.chatml) and the Qwen tokenizer."""

from __future__ import annotations

import hashlib

import pytest

from conftest import QWEN
from conversation_sdk import chatml

TURNS = 60
POLICY = "".join(f"Rule {i}: answer in full sentences and cite the order number when there is one.\n" for i in range(40))
TOOL = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}


def conversation(rewrite_at=None, tools_from=None, reorder_at=None):
    """Request bodies of one chat conversation: each turn the previous messages, the reply, a question."""
    history = [{"role": "system", "content": POLICY}]
    bodies = []
    for t in range(TURNS):
        history = history + [{"role": "user", "content": f"question {t}"}]
        if t == rewrite_at:
            history[2] = {"role": "assistant", "content": "(a summary)"}
        if t == reorder_at:  # the reply sent back with its envelope keys in another order: not a break
            history[4] = {"content": history[4]["content"], "role": "assistant"}
        body = {"model": "gpt-4.1", "messages": history}
        if tools_from is not None and t >= tools_from:
            body["tools"] = [TOOL]
        bodies.append(body)
        history = history + [{"role": "assistant", "content": f"answer {t}"}]
    return bodies


def requests(bodies):
    from promptlint.conversation.capture import Request

    reply = lambda t: {"choices": [{"message": {"role": "assistant", "content": f"answer {t}"}}]}
    return [Request(t + 1, b, "capture.jsonl", t + 1, "c", reply(t), "openai") for t, b in enumerate(bodies)]


@pytest.fixture(scope="module")
def pinned():
    from types import SimpleNamespace

    from promptlint.commands.conversation import _tables
    from promptlint.operators.captured import Settings

    settings = Settings(tokenizer=str(QWEN), tokenizer_sha256=hashlib.sha256(QWEN.read_bytes()).hexdigest(), quiet=True)
    tables = _tables(SimpleNamespace(cache_minimums=None, price_table=None, provider_rules=None, table_max_age=365))
    return settings, settings.load_tokenizer(), tables


def test_each_message_of_a_clean_conversation_is_framed_once(pinned, monkeypatch):
    from promptlint.conversation import analysis
    from promptlint.operators import chat_framing

    framed = []
    real = chat_framing._message
    monkeypatch.setattr(chat_framing, "_message", lambda m, i: framed.append(i) or real(m, i))
    settings, tok, tables = pinned
    conv = analysis.analyse("c", requests(conversation()), settings, tok, tables)
    assert [r.broke for r in conv.rows] == [None] * TURNS
    # the first request frames its system message and question; each later one its two new
    # messages (the reply sent back, the question): 2 * TURNS, where re-framing every history
    # would be sum(2t + 2) = TURNS * (TURNS + 1)
    assert len(framed) == 2 * TURNS


@pytest.mark.parametrize("case", ["clean", "tools", "rewrite", "envelope"])
def test_the_text_framed_from_the_previous_request_is_the_whole_framing(pinned, qwen, case):
    from promptlint.conversation import analysis
    from promptlint.conversation.render import render

    settings, tok, tables = pinned
    bodies = conversation(**{"clean": {}, "tools": {"tools_from": 30}, "rewrite": {"rewrite_at": 40},
                             "envelope": {"reorder_at": 20}}[case])
    base = None
    for body in bodies:
        cur = render(body, "chat", settings, tok, base)
        by_hand = chatml(body["messages"], body.get("tools"))
        assert cur.text == by_hand
        assert cur.ids == qwen.encode(by_hand, add_special_tokens=False).ids
        base = cur
    conv = analysis.analyse("c", requests(bodies), settings, tok, tables)
    broke = [(r.request.index, r.broke.family, r.broke.field) for r in conv.rows if r.broke is not None]
    assert broke == {"clean": [], "envelope": [], "tools": [(31, "tools-added", "tools[0]")],
                     "rewrite": [(41, "message-rewritten", "messages[2]")]}[case]
