"""M102's scan of a render's ids (checks/duplicated_special_token.find_duplicate) judges each special
token against the previous token that is not whitespace, found by walking back from it: the text of
a token is looked at only between special tokens, never for every token of a long render. The
answer is the one of a scan that decodes every token (kept here as the reference), on renders with
the real Mistral tokenizer.
"""

from __future__ import annotations

import random

from conftest import MISTRAL
from promptlint.checks.duplicated_special_token import find_duplicate, sequence_tokens
from promptlint.tokenization.tokens import load, resolve


def reference(tokenizer, ids, specials):
    """The scan as it was written first: every token decoded."""
    bos, eos = sequence_tokens(tokenizer, specials)
    last, prev = {}, -1
    for i, t in enumerate(ids):
        if t in specials:
            if i > 0 and ids[i - 1] == t:
                return i - 1, i, "adjacent"
            if t in last and (t in bos or t in eos) and prev == last[t]:
                return last[t], i, "whitespace"
            if t in bos and t in last and (prev < 0 or ids[prev] not in specials):
                return last[t], i, "after text"
            last[t] = i
            prev = i
        elif tokenizer.token_text(t).strip():
            prev = i
    return None


class Counting:
    """The tokenizer, counting the token texts asked for."""

    def __init__(self, tok):
        self.tok, self.asked = tok, 0
        self.special_tokens = getattr(tok, "special_tokens", {})

    def token_text(self, t):
        self.asked += 1
        return self.tok.token_text(t)

    def encode(self, text, add_special_tokens=False):
        return self.tok.encode(text, add_special_tokens=add_special_tokens)


def _setup():
    tok = load(resolve(str(MISTRAL)))
    specials = {i: t for t, i in tok.added_tokens(special_only=True).items()}
    return tok, specials


PIECES = ["<s>", "</s>", "[INST]", "[/INST]", " Hello there.", "\n", "  ", "\n\n", " The tent kept us dry.", "Review:", " "]


def test_same_answer_as_decoding_every_token():
    tok, specials = _setup()
    rnd = random.Random(7)
    answers = set()
    for _ in range(300):
        text = "".join(rnd.choice(PIECES) for _ in range(rnd.randrange(1, 14)))
        ids = tok.encode(text, add_special_tokens=rnd.random() < 0.5).ids
        found = find_duplicate(tok, ids, specials)
        assert found == reference(tok, ids, specials), text
        answers.add(found[2] if found else None)
    assert answers == {None, "adjacent", "whitespace", "after text"}  # every case met


def test_a_long_render_is_not_decoded_token_by_token():
    tok, specials = _setup()
    text = "<s>[INST] " + " ".join(["The tent kept us dry through a week of rain."] * 200) + " [/INST]"
    ids = tok.encode(text, add_special_tokens=False).ids
    counting = Counting(tok)
    assert find_duplicate(counting, ids, specials) is None
    assert len(ids) > 2000
    assert counting.asked < 10  # the token before each special token, not each of the 2,000
