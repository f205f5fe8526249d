"""The proof that a rebuilt tokenizer is the original: the same serialization (every component,
option, token and merge as `tokenizers` itself writes them) and the same encodings of a corpus
of hard strings; and that the engine (promptlint.fastbpe.engine) answers as the original does:
the same ids, tokens and offsets on the corpus, the same added tokens, and the same decode and
token text of every id.

The serialization is what `tokenizers` reads a tokenizer from, so two tokenizers that write the
same JSON are configured the same; the corpus checks the behaviour on the texts where
tokenizers differ most often (Unicode edge cases, long whitespace runs, digits, special-token
text with and around it), with and without the post-processor's special tokens.
"""

from __future__ import annotations

import json
import random
from typing import Dict, Iterable, List, Optional

_BASE = [
    "",
    " ",
    "Hello, world! You are a helpful assistant.",
    "You are assistant 7 of the Acme shop.\nCustomer: {{ customer_name }}\nQuestion: Where is order 10023?\n",
    "It's they'll we'd I'M YOU'RE He'S ’s 's’ ''s",
    # whitespace runs: spaces, tabs, newlines, carriage returns, mixed, Unicode spaces
    " " * 1000, "\n" * 500, "\t" * 300, "\r\n" * 200, " \n" * 300, "\n \n\t\r " * 100,
    "a" + " " * 257 + "b", "x\n\n\n\n  y", "\u00a0\u2002\u2003\u3000\u200b\u2028\u2029\ufeff x",
    # digits
    "1234567890" * 40, "3.14159 2,718 1e-10 0x1F 007", "١٢٣٤٥٦٧٨٩٠ ٣٤٥ ０１２３ ⅷ ²³ ½",
    # scripts, combining marks, normalization forms
    "héllo he\u0301llo Å Å ﬁ ﬀ ǅ İstanbul ß ẞ",
    "日本語のテキストです。中文文本。한국어 텍스트.", "ภาษาไทย हिन्दी नमस्ते বাংলা", "שלום עולם مرحبا بالعالم",
    "Ελληνικά Кириллица Ӂ ԱԲԳ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛 🀄 𓀀", "a\u0300\u0301\u0302\u0303\u0304b",
    # emoji and their sequences
    "👍👍🏽 👨‍👩‍👧‍👦 🇫🇷🇯🇵 ❤️ 1️⃣ 🏳️‍🌈",
    # control characters, private use, noncharacters
    "".join(chr(c) for c in range(0, 32)) + "\x7f\x80\x9f", "\ue000\uf8ff\U000f0000 \ufffe\uffff \ufffd",
    # code and markup
    'def f(x):\n    return {"a": [1, 2, 3]}  # comment\n\n\n', "<div class=\"x\">&amp;</div>\n```json\n{}\n```",
    "!!!??? ... --- *** ### @@@ $$$ %%% ^^^ &&& ||| ~~~",
]


def corpus(special_texts: Iterable[str]) -> List[str]:
    """The hard strings, with each added token's text alone, between words and spaces, twice in a
    row, cut short, and a deterministic mix of characters from many Unicode blocks."""
    texts = list(_BASE)
    specials = sorted(set(special_texts))
    for text in specials[:: max(1, len(specials) // 64)]:  # a thousand reserved tokens say nothing new
        texts += [text, f"a {text} b", f"x{text}{text}y", f"\n {text}\n\n", text[:-1], text[1:]]
    rnd = random.Random(20261202)
    blocks = [(0x20, 0x7e), (0xa0, 0x24f), (0x370, 0x52f), (0x590, 0x6ff), (0x900, 0x97f), (0xe00, 0xe7f),
              (0x3040, 0x30ff), (0x4e00, 0x4fff), (0xac00, 0xad00), (0x1f300, 0x1f6ff), (0x2000, 0x206f)]
    for _ in range(60):
        chars = []
        for _ in range(rnd.randrange(20, 200)):
            lo, hi = rnd.choice(blocks)
            chars.append(chr(rnd.randint(lo, hi)) if rnd.random() < 0.8 else rnd.choice(" \n\t0123456789'"))
        texts.append("".join(chars))
    # words no vocabulary holds whole (with ignore_merges a vocabulary word never reaches the
    # merges): letter runs, so that merges of every rank compete inside them
    letters = "etaoinshrdlcumwfgypbvkjxqz" * 3 + "ETAOINSHRD"
    for _ in range(60):
        texts.append(" ".join("".join(rnd.choice(letters) for _ in range(rnd.randrange(3, 12))) for _ in range(40)))
    return texts


def same_serialization(fast, original) -> bool:
    a, b = fast.to_str(), original.to_str()
    return a == b or json.loads(a) == json.loads(b)


class Answers:
    """What ``original`` answers on the corpus, asked once: the proof compares the rebuilt
    tokenizer and the engine (before and after it learns) with the same answers."""

    def __init__(self, original, texts: Optional[List[str]] = None):
        self.original = original
        self.specials = [t.content for t in original.get_added_tokens_decoder().values()]
        self._texts = list(texts) if texts is not None else None
        self._encodings: Dict[bool, list] = {}
        self._single: Optional[list] = None

    @property
    def texts(self) -> List[str]:
        if self._texts is None:
            self._texts = corpus(self.specials)
        return self._texts

    def encodings(self, special: bool) -> list:
        if special not in self._encodings:
            self._encodings[special] = _seen(self.original.encode_batch(self.texts, add_special_tokens=special))
        return self._encodings[special]

    def single(self) -> list:
        if self._single is None:
            self._single = [self.original.encode(text).ids for text in self.texts[:8]]
        return self._single


def _seen(encodings) -> list:
    return [(e.ids, e.offsets, e.tokens) for e in encodings]


def same_encodings(fast, original, texts: Optional[List[str]] = None, answers: Optional[Answers] = None) -> bool:
    """Ids, tokens and offsets of every text (the corpus when None), with and without special
    tokens, one by one and in a batch."""
    if answers is None:
        answers = Answers(original, texts)
    for special in (False, True):
        if _seen(fast.encode_batch(answers.texts, add_special_tokens=special)) != answers.encodings(special):
            return False
    return [fast.encode(text).ids for text in answers.texts[:8]] == answers.single()


def proven(fast, original, answers: Optional[Answers] = None) -> bool:
    """Whether ``fast`` is ``original``, by serialization and on the corpus (``answers``: the
    original's, when the caller has them)."""
    if not same_serialization(fast, original):
        return False
    return same_encodings(fast, original, answers=answers or Answers(original))


def engine_proven(engine, original, answers: Optional[Answers] = None) -> bool:
    """Whether ``engine`` answers everything promptlint asks of a tokenizer as ``original`` does.
    Every id's decode and token text are compared as whole lists, each side's asked in one call
    (the engine's ``decode_each`` and ``tokens_of`` are what its ``decode`` and ``id_to_token``
    answer through)."""
    answers = answers or Answers(original)
    if engine.get_added_tokens_decoder() != original.get_added_tokens_decoder():
        return False
    if not same_encodings(engine, original, answers=answers):
        return False
    # and again once the tiny model has learnt the corpus's one-token words (engine: words learnt)
    if engine.learn() and not same_encodings(engine, original, answers=answers):
        return False
    # every id up to the largest, the ids no token has included (both answer None and "")
    ids = list(range(max([original.get_vocab_size(with_added_tokens=False) - 1, *original.get_added_tokens_decoder()]) + 2))
    if engine.decode_each(ids) != original.decode_batch([[i] for i in ids], skip_special_tokens=False):
        return False
    theirs = list(map(original.id_to_token, ids))
    if engine.tokens_of(ids) != theirs:
        return False
    # and the single-id calls themselves, on a sample (the batch is what they answer through)
    sample = ids[::97]
    if [engine.decode([i], skip_special_tokens=False) for i in sample] != [original.decode([i], skip_special_tokens=False) for i in sample]:
        return False
    if [engine.id_to_token(i) for i in sample] != theirs[::97]:
        return False
    return all(engine.token_to_id(theirs[i]) == original.token_to_id(theirs[i]) for i in sample)
