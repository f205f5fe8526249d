"""Conversations of one application open alike (the same system prompt and tools): each
conversation's first request is encoded against the previous conversation's first request,
only the window where their texts differ tokenized. The ids must be the whole encode's: checked
against `tokenizers` encoding the framing written out by hand (tests/conversation_sdk.chatml),
with the pinned Qwen tokenizer (its chat markers are added tokens) and with the embedded
cl100k_base (the markers are plain text: line starts are the only anchors)."""

from __future__ import annotations

import gzip
import hashlib

import pytest

from conftest import QWEN
from conversation_sdk import chatml

POLICY = "".join(f"Rule {i}: answer in full sentences and cite the order number when there is one.\n" for i in range(40))
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {
    "order": {"type": "string"}}}}}]
# first questions: plain, one that changes the system prompt's last line, non-ASCII, one with tools,
# one that repeats the previous opening exactly, one whose system prompt is another text entirely
OPENINGS = [
    ([{"role": "system", "content": POLICY}, {"role": "user", "content": "where is order 1?"}], None),
    ([{"role": "system", "content": POLICY}, {"role": "user", "content": "where is order 22?"}], None),
    ([{"role": "system", "content": POLICY + "Today is 2025-01-02."}, {"role": "user", "content": "order 3"}], None),
    ([{"role": "system", "content": POLICY}, {"role": "user", "content": "où est la commande 4 ? 中文 ✓"}], None),
    ([{"role": "system", "content": POLICY}, {"role": "user", "content": "order 5, with a tool"}], TOOLS),
    ([{"role": "system", "content": POLICY}, {"role": "user", "content": "order 5, with a tool"}], TOOLS),
    ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "where is order 1?"}], None),
]


def _requests():
    from promptlint.conversation.capture import Request

    out = []
    for k, (messages, tools) in enumerate(OPENINGS):
        body = {"model": "gpt-4.1", "messages": messages, **({"tools": tools} if tools else {})}
        out.append(Request(k + 1, body, "capture.jsonl", k + 1, f"c{k}", None, "openai"))
    return out


def _tables():
    from types import SimpleNamespace

    from promptlint.commands.conversation import _tables

    return _tables(SimpleNamespace(cache_minimums=None, price_table=None, provider_rules=None, table_max_age=365))


def _embedded():
    from tokenizers import Tokenizer

    from promptlint.tokenization import tokens

    return Tokenizer.from_str(gzip.decompress(tokens._EMBEDDED_FILE.read_bytes()).decode("utf-8"))


@pytest.mark.parametrize("which", ["qwen", "embedded"])
def test_each_opening_has_the_ids_of_a_whole_encode(which, qwen):
    from promptlint.conversation import analysis
    from promptlint.operators.captured import Settings

    settings = (Settings(tokenizer=str(QWEN), tokenizer_sha256=hashlib.sha256(QWEN.read_bytes()).hexdigest(), quiet=True)
                if which == "qwen" else Settings(quiet=True))
    tok, reference, tables = settings.load_tokenizer(), qwen if which == "qwen" else _embedded(), _tables()
    opening = None
    for req, (messages, tools) in zip(_requests(), OPENINGS):
        conv = analysis.analyse(req.conversation, [req], settings, tok, tables, opening=opening)
        by_hand = chatml(messages, tools)
        whole = reference.encode(by_hand, add_special_tokens=False)
        assert conv.opening.text == by_hand
        assert conv.opening.ids == whole.ids
        assert conv.opening.offsets == [tuple(o) for o in whole.offsets]
        assert conv.rows[0].prompt_tokens == len(whole.ids)
        opening = conv.opening


def test_only_where_an_opening_differs_from_the_one_before_is_tokenized(monkeypatch):
    """The characters the tokenizer is given: the first opening whole, then for each later one
    at most the text from the line where it starts to differ (its user turn, or the system
    prompt's last line) to its end, where every opening used to be encoded whole."""
    from promptlint.commands.conversation import analyse_requests
    from promptlint.operators.captured import Settings

    settings = Settings(quiet=True)
    tok = settings.load_tokenizer()
    encoded = []
    real = tok.encode
    monkeypatch.setattr(tok, "encode", lambda text, add_special_tokens=False: encoded.append(text) or real(text, add_special_tokens))
    _, summary = analyse_requests(_requests(), settings, tok, _tables())
    texts = [chatml(m, t) for m, t in OPENINGS]
    # independent figures: each conversation's prompt tokens, from a whole encode
    reference = _embedded()
    assert [t["prompt_tokens"] for t in summary] == [len(reference.encode(x, add_special_tokens=False).ids) for x in texts]
    assert encoded[0] == texts[0]
    # by hand, from the first character where each opening differs from the one before: back to
    # the start of the line before (the anchor's token must end before the difference), then to
    # the end; the repeated opening (5 after 4) is not encoded at all
    bound = 0
    for before, text in zip(texts, texts[1:]):
        first = next((i for i, (x, y) in enumerate(zip(before, text)) if x != y), min(len(before), len(text)))
        if before == text:
            continue
        bound += len(text) - (text.rfind("\n", 0, max(0, text.rfind("\n", 0, first))) + 1)
    assert sum(len(t) for t in encoded[1:]) <= bound
    assert sum(len(t) for t in encoded) < sum(len(t) for t in texts) / 2
