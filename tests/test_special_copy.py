"""The special-token copy of a tokenizer (a chat template's turn markers kept whole on the embedded
tokenizer: promptlint.chat.special) made from the fast engine in milliseconds
(promptlint.fastbpe.special_copy) is the copy the JSON re-parse made: the same added tokens at
the same ids, the same ids, offsets and tokens on the hard-string corpus and on texts with the
special texts against words, whitespace and each other, overlapping ones, ones already in the
vocabulary or already added, and the normalizer's interaction; a tokenizer the engine does not
serve is still re-parsed."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from conftest import DATA
from promptlint.fastbpe import engine, proof, special_copy
from promptlint.fastbpe.special_copy import added_tokens, assigned_ids
from promptlint.pools.tokenizers import active as active_pool
from promptlint.tokenization import tokens

pytestmark = pytest.mark.real_tokenizer_parse  # about building tokenizers: no memo of parses

EMBEDDED = Path(tokens.__file__).parent.parent / "data" / "cl100k_base.tokenizer.json.gz"
BYTE_LEVEL = ["deepseek-v3", "gpt-oss-o200k-harmony", "mistral-nemo-tekken", "qwen2.5"]

# chat markers of the families promptlint.chat.special names, and the hard cases
MARKERS = ["<|im_start|>", "<|im_end|>", "<start_of_turn>", "<end_of_turn>", "<|start_header_id|>", "<|eot_id|>",
           "[INST]", "[/INST]", "<s>", "</s>", "<｜User｜>", "<｜Assistant｜>", "<|start|>", "<|channel|>", "<|message|>"]
OVERLAP = ["<|im", "<|im_start|>", "<|im_start|>x", "<|im_start|><|im_end|>"]  # one a prefix of another
PLAIN = ["hello", "!", " the", "\n\n", "é"]  # texts a vocabulary may hold as normal tokens (byte-level or not)


def _raw(name: str) -> str:
    if name == "embedded":
        return gzip.decompress(EMBEDDED.read_bytes()).decode("utf-8")
    return (DATA / "tokenizers" / name / "tokenizer.json").read_text(encoding="utf-8")


def _loaded(name: str) -> tokens.LoadedTokenizer:
    """The tokenizer as a run loads it (the engine, from the shipped form or the one its first load wrote)."""
    if name == "embedded":  # a fresh one: a copy shares its original's volume and Rust model (an earlier test's)
        active_pool().release(tokens.embedded_sha256())
        return tokens.load(tokens.resolve(None))
    path = DATA / "tokenizers" / name / "tokenizer.json"
    sha = tokens.tokenizer_file_sha256(path)
    active_pool().release(sha)
    tokens.load(tokens.resolve(str(path), sha))  # writes the form on the first load
    active_pool().release(sha)
    return tokens.load(tokens.resolve(str(path), sha))


def _parsed_copy(raw: str, texts, parsed=None):
    """What the copy was before: the tokenizer.json re-parsed (``parsed``: a fresh parse of ``raw``
    nothing has changed yet, used instead of parsing again), the texts added."""
    slow = Tokenizer.from_str(raw) if parsed is None else parsed
    slow.add_special_tokens(added_tokens(texts))
    return slow


def _texts_for(raw_tok: Tokenizer):
    added = [t.content for t in raw_tok.get_added_tokens_decoder().values()]
    in_vocab = [raw_tok.id_to_token(i) for i in (0, 1, 300, 1000, 5000)]  # normal tokens, as the vocabulary writes them
    return sorted(set(MARKERS + OVERLAP + PLAIN + added[:3] + in_vocab))


def _mixes(texts):
    """Each text against words, whitespace, itself and every other text."""
    out = []
    for a in texts:
        out += [a, f"word{a}word", f" {a} ", f"\n{a}\n\n", f"{a}{a}", f"\t{a}x{a} y", a[:-1], a[1:]]
        out += [f"{a}{b}" for b in texts] + [f"{a} {b}\n" for b in texts[::3]]
    return out


def _same(fast, slow, texts):
    assert fast.get_added_tokens_decoder() == slow.get_added_tokens_decoder()
    for text in texts:
        assert fast.token_to_id(text) == slow.token_to_id(text), text
    for special in (False, True):
        corpus = proof.corpus(texts) + _mixes(texts)
        mine = fast.encode_batch(corpus, add_special_tokens=special)
        theirs = slow.encode_batch(corpus, add_special_tokens=special)
        for text, a, b in zip(corpus, mine, theirs):
            assert (a.ids, a.offsets, a.tokens) == (b.ids, b.offsets, b.tokens), text[:60]
    new = sorted(set(slow.get_added_tokens_decoder()) - set(range(slow.get_vocab_size(with_added_tokens=False))))
    for i in new + [max(new) + 1]:
        assert fast.decode([i], skip_special_tokens=False) == slow.decode([i], skip_special_tokens=False)
        assert fast.id_to_token(i) == slow.id_to_token(i)


@pytest.mark.parametrize("name", ["embedded"] + BYTE_LEVEL)
def test_the_engines_copy_is_the_parsed_copy(name):
    raw = _raw(name)
    base = _loaded(name)
    assert isinstance(base._tok, engine.FastTokenizer), name
    parsed = Tokenizer.from_str(raw)  # one parse (1-1.5 s for these vocabularies), read, then made the parsed copy
    texts = _texts_for(parsed)
    before = base._tok.get_added_tokens_decoder()
    copy = base.with_special_texts(texts, lambda: pytest.fail("the fast copy parses nothing"))
    assert isinstance(copy._tok, engine.FastTokenizer)
    slow = _parsed_copy(raw, texts, parsed)  # _same only reads it
    _same(copy._tok, slow, texts)
    assert copy._tok._real is None  # all of it without building the Rust BPE model
    assert base._tok.get_added_tokens_decoder() == before  # the base is unchanged
    assert copy._tok.real().to_str() == slow.to_str()  # what it builds when it must: the same


def test_the_ids_of_the_new_tokens_are_known_ones():
    """cl100k_base: a vocabulary of 100,256 entries, added tokens up to <|endofprompt|> = 100276.
    New texts are numbered from 100277 in the order given; one already added keeps its id; one in
    the vocabulary (`hello`, 15339) gets the vocabulary's id; ` the` is not a vocabulary entry
    (the byte-level vocabulary writes it `Ġthe`: 279)."""
    base = _loaded("embedded")
    texts = sorted(["<|im_start|>", "<|im_end|>", "<|endoftext|>", "hello", " the", "Ġthe"])
    copy = base.with_special_texts(texts, lambda: pytest.fail("parsed"))
    assert copy.added_tokens(special_only=True) == {
        **base.added_tokens(special_only=True), " the": 100277, "<|im_end|>": 100278, "<|im_start|>": 100279,
        "hello": 15339, "Ġthe": 279}
    assert copy.encode("<|im_start|>user\nhello<|im_end|>").ids[:1] == [100279]
    assert base.encode("<|im_start|>").ids != [100279]


def test_a_copy_of_a_copy_adds_in_order():
    base = _loaded("embedded")
    first = base.with_special_texts(["<b>"], lambda: pytest.fail("parsed"))
    second = first.with_special_texts(["<a>", "<b>"], lambda: pytest.fail("parsed"))
    slow = _parsed_copy(_raw("embedded"), ["<b>"])
    slow.add_special_tokens(added_tokens(["<a>", "<b>"]))
    assert second.token_to_id("<b>") == 100277 and second.token_to_id("<a>") == 100278
    _same(second._tok, slow, ["<a>", "<b>"])


def test_a_normalizing_tokenizer_matches_special_texts_before_normalizing():
    """qwen2.5 normalizes to NFC; a special text is added unnormalized, as the parsed copy adds it:
    the decomposed marker matches only decomposed text, the composed only composed."""
    raw = _raw("qwen2.5")
    texts = ["<|caf\u00e9|>", "<|cafe\u0301|>", "\u212b"]  # composed, decomposed; the Angstrom sign NFC makes Å
    copy = _loaded("qwen2.5").with_special_texts(texts, lambda: pytest.fail("parsed"))
    slow = _parsed_copy(raw, texts)
    _same(copy._tok, slow, texts)
    composed, decomposed = copy.token_to_id(texts[0]), copy.token_to_id(texts[1])
    assert composed != decomposed
    assert copy.encode("x<|cafe\u0301|>y").ids[1] == decomposed
    assert copy.encode("x<|caf\u00e9|>y").ids[1] == composed
    assert copy.encode("\u00c5").ids != [copy.token_to_id("\u212b")]  # Å itself is no special token


def test_a_tokenizer_the_engine_does_not_serve_is_parsed():
    """mistral-v3-spm (no byte-level pre-tokenizer: no engine) gets the parsed copy, as before."""
    raw = _raw("mistral-v3-spm")
    base = _loaded("mistral-v3-spm")
    assert not isinstance(base._tok, engine.FastTokenizer)
    asked = []
    copy = base.with_special_texts(["<|im_start|>"], lambda: asked.append(1) or raw)
    assert asked == [1] and isinstance(copy._tok, Tokenizer)
    assert copy.encode("a<|im_start|>b").ids == _parsed_copy(raw, ["<|im_start|>"]).encode("a<|im_start|>b", add_special_tokens=False).ids


def test_the_numbering_rule_by_hand():
    """tokenizers' AddedVocabulary: an added text keeps its id, a vocabulary text gets the
    vocabulary's, a new one the vocabulary's size when no added id is past it, else the largest + 1."""
    vocab = {"a": 0, "b": 1, "c": 2, "d": 3}
    assert assigned_ids(["<x>", "b", "<y>"], {}, vocab.get, 4) == {"<x>": 4, "b": 1, "<y>": 5}
    assert assigned_ids(["<y>", "<x>"], {"<x>": 9}, vocab.get, 4) == {"<y>": 10, "<x>": 9}
    assert assigned_ids(["<y>"], {"c": 2}, vocab.get, 4) == {"<y>": 4}
    assert assigned_ids(["", "<y>"], {}, vocab.get, 4) == {"<y>": 4}
    assert special_copy.rule_holds()  # the running tokenizers numbers so


def test_no_copy_is_vouched_for_when_an_id_would_collide():
    """The tiny vocabulary (the 256 byte-level characters, the added tokens) already has the id the
    rule gives a text for another text, or the text at another id: no fast copy (the caller parses)."""
    from promptlint.fastbpe import store

    tiny = bytes(store.packaged().views["tiny"])
    size = 100256
    assert special_copy.tiny_with(tiny, ["<new>"], lambda t: 0, size) is None  # id 0 is "!"
    assert special_copy.tiny_with(tiny, ["!"], lambda t: 5, size) is None  # "!" is 0 there
    assert special_copy.tiny_with(tiny, ["<new>"], lambda t: None, size).token_to_id("<new>") == 100277


def test_a_chat_template_on_the_embedded_tokenizer_gets_the_engines_copy(tmp_path):
    from promptlint.chat.special import atomic

    base = _loaded("embedded")
    load = atomic(lambda: base, ["<|im_start|>", "<|im_end|>"])
    copy = load()
    assert isinstance(copy._tok, engine.FastTokenizer) and copy._tok._real is None
    assert copy.encode("<|im_start|>user\nhi<|im_end|>").ids[0] == 100278
    assert active_pool().copies[("<|im_end|>", "<|im_start|>")] is copy  # the pool owns it
