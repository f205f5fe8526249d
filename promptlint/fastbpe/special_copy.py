"""A copy of the engine (promptlint.fastbpe.engine) with more special tokens, in milliseconds.

The copy of the embedded tokenizer that keeps a chat template's turn markers whole
(promptlint.chat.special) was a full parse of its JSON with the texts added. Here it is the same
engine: the merge tables (and the merges already memoised) are shared; only the small
`tokenizers` tokenizer that normalizes, splits out added tokens and pre-tokenizes is rebuilt
from the form's tiny JSON, and the texts are added to it by `tokenizers` itself
(``add_special_tokens``, exactly the call the parsed copy gets), so which text matches where
(longest first, before normalization) is `tokenizers`' own.

The one thing the tiny tokenizer cannot know is the id a text gets: `AddedVocabulary` gives a
text the id the tokenizer already has for it (an added token's, else the model vocabulary's),
else the next one after the largest added id (or the vocabulary's size). The tiny model holds
neither the vocabulary nor its size, so ``assigned_ids`` works the ids out over the form's tables
and they are put in the tiny vocabulary first, where `tokenizers` then finds them. That rule is
checked against the running `tokenizers` on a small tokenizer before it is trusted
(``rule_holds``); when it does not hold, or an id would collide, there is no fast copy (None)
and the caller parses, as before. tests/test_special_copy.py proves the copies identical to
the parsed ones.
"""

from __future__ import annotations

import json
from typing import Callable, Dict, List, Optional, Sequence


def assigned_ids(texts: Sequence[str], added: Dict[str, int], vocab_id: Callable[[str], Optional[int]],
                 vocab_size: int) -> Dict[str, int]:
    """The ids ``Tokenizer.add_special_tokens(texts)`` gives, in order, on a tokenizer whose added
    tokens are ``added`` (text -> id) and whose model has ``vocab_size`` entries, ``vocab_id``
    answering its ``token_to_id``."""
    known = dict(added)
    out: Dict[str, int] = {}
    for text in texts:
        if not text:
            continue  # tokenizers ignores an empty text
        found = known.get(text)
        if found is None:
            found = vocab_id(text)
        if found is None:
            top = max(known.values(), default=None)
            found = vocab_size if top is None else (top + 1 if top >= vocab_size or vocab_size == 0 else vocab_size)
        known[text] = out[text] = found
    return out


def rule_holds() -> bool:
    """Whether the running `tokenizers` numbers added tokens as ``assigned_ids`` says, on a small
    tokenizer with each case: a text already added, one in the vocabulary, new ones after an added
    id past the vocabulary and after one inside it (a few milliseconds)."""
    from tokenizers import Tokenizer
    from tokenizers.models import BPE

    vocab = {c: i for i, c in enumerate("abcdefgh")}
    texts = ["<x>", "<y>", "b", "bc"]
    for first in ([], ["<x>"], ["c"]):
        tok = Tokenizer(BPE(dict(vocab), []))
        added: Dict[str, int] = {}
        for batch in (first, texts):
            tok.add_special_tokens(added_tokens(batch))
            added.update(assigned_ids(batch, added, vocab.get, len(vocab)))
            if any(tok.token_to_id(t) != i for t, i in added.items()):
                return False
    return True


def tiny_with(tiny_json: bytes, texts: Sequence[str], vocab_id: Callable[[str], Optional[int]], vocab_size: int):
    """The tiny tokenizer of a form (``tiny_json``) with ``texts`` added as special tokens at the
    ids the full tokenizer gives them; None when that cannot be vouched for."""
    from tokenizers import AddedToken, Tokenizer

    data = json.loads(tiny_json)
    added = {t["content"]: t["id"] for t in data.get("added_tokens") or []}
    ids = assigned_ids(texts, added, vocab_id, vocab_size)
    small: Dict[str, int] = data["model"]["vocab"]
    taken = {i: t for t, i in small.items()}
    for text, i in ids.items():
        if small.get(text, i) != i or taken.get(i, text) != text:
            return None  # the tiny vocabulary has this text or id otherwise: not a case the rule covers
        small[text] = i
        taken[i] = text
    tok = Tokenizer.from_str(json.dumps(data, ensure_ascii=False))
    tok.add_special_tokens(added_tokens(texts))
    if any(tok.token_to_id(t) != i for t, i in ids.items()):
        return None
    return tok


def added_tokens(texts: Sequence[str]) -> List:
    """The tokens a chat template's special texts are added as (promptlint.tokenization.tokens
    adds the same to a parsed copy)."""
    from tokenizers import AddedToken

    return [AddedToken(t, special=True, normalized=False) for t in texts]
