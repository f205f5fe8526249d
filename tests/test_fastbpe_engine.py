"""The engine that tokenizes from the compact form without building the Rust BPE model
(promptlint.fastbpe.engine): the same ids, tokens and offsets as `tokenizers` for the embedded
tokenizer and every byte-level tokenizer in tests/data, HF's merge rule on hand-made tables, the
real tokenizer built only when something the engine lacks is asked for, and `tokenizers` used
for a tokenizer the engine cannot stand for."""

from __future__ import annotations

import gzip
import hashlib
import json
from array import array
from pathlib import Path

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

from conftest import DATA
from reference_tokenizers import reference
from small_tokenizers import mini_qwen
from promptlint import fastbpe
from promptlint.fastbpe import engine, form, proof, store
from promptlint.pools.tokenizers import active as active_pool
from promptlint.tokenization import tokens, window_encode

pytestmark = pytest.mark.real_tokenizer_parse  # about loading itself: no memo of parses

EMBEDDED = Path(tokens.__file__).parent.parent / "data" / "cl100k_base.tokenizer.json.gz"
BYTE_LEVEL = ["deepseek-v3", "gpt-oss-o200k-harmony", "mistral-nemo-tekken", "qwen2.5"]

# Written here, not taken from promptlint's corpus: texts where a BPE engine slips most often.
HARD = [
    "", " ", "  ", " " * 1001, "\n" * 77 + "x", "a\t\t\t\t b", "\r\n\r\n  \r\n", "x" + " " * 64 + "y",
    "1234567890123", "0.5 -7e3 ١٢٣ ０１ ½", "e\u0301 é Å Å ﬁ İ ß ǅ", "👨‍👩‍👧‍👦🇯🇵👍🏽 ❤️",
    "\x00\x07\x1b[0m \x7f\x85 \ufeff\u200d\u2028", "日本語の文。한국어 ภาษาไทย हिन्दी عربى", "𝔘𝔫𝔦 \ue000 \uffff \U0010fffd",
    "It's they'LL we’d DON'T", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "abcabcabc" * 20,
    "<|endoftext|> <|im_start|>user\nhi<|im_end|>", "<s>[INST] x [/INST]</s>", "<｜begin▁of▁sentence｜>x",
    "<|start|>assistant<|channel|>final<|message|>ok<|end|>", "Current time: 2025-03-14 09:26:53\nYou are",
]


def _raw(name: str) -> bytes:
    if name == "embedded":
        return gzip.decompress(EMBEDDED.read_bytes())
    return (DATA / "tokenizers" / name / "tokenizer.json").read_bytes()


def _engine_of(name: str):
    """The engine as a run loads it: from the shipped form, or the form its first load wrote."""
    if name == "embedded":
        parts = store.packaged()
    else:
        path = DATA / "tokenizers" / name / "tokenizer.json"
        sha = tokens.tokenizer_file_sha256(path)
        active_pool().release(sha)
        tokens.load(tokens.resolve(str(path), sha))  # writes the form on the first load
        active_pool().release(sha)
        parts = store.user_form(sha)
    assert parts is not None and parts.header["engine"], name
    return engine.build(parts)


@pytest.mark.parametrize("name", ["embedded"] + BYTE_LEVEL)
def test_the_engine_gives_what_tokenizers_gives(name):
    original = reference(name)
    fast = _engine_of(name)
    specials = [t.content for t in original.get_added_tokens_decoder().values()][:40]
    texts = HARD + specials + [f"a {s}{s}b\n" for s in specials]
    for special in (False, True):
        mine = fast.encode_batch(texts, add_special_tokens=special)
        for text, a in zip(texts, mine):
            b = original.encode(text, add_special_tokens=special)
            assert (a.ids, a.offsets, a.tokens) == (b.ids, b.offsets, b.tokens), (name, text[:40])
            for i in a.ids[:50]:
                assert fast.decode([i], skip_special_tokens=False) == original.decode([i], skip_special_tokens=False)
                assert fast.id_to_token(i) == original.id_to_token(i)
    assert fast.get_added_tokens_decoder() == original.get_added_tokens_decoder()
    assert fast._real is None  # all of it without the Rust BPE model


def _tiny_tokenizer(vocab_extra, merges, ignore_merges=False) -> Tokenizer:
    """A byte-level BPE over the 256 byte characters plus ``vocab_extra``, with ``merges``."""
    alphabet = form.byte_alphabet()
    vocab = {c: i for i, c in enumerate(alphabet)}
    for token in vocab_extra:
        vocab[token] = len(vocab)
    tok = Tokenizer(models.BPE(vocab, merges, ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def _engine_for(tok: Tokenizer):
    text = tok.to_str()
    data = json.loads(text)
    assert form.ineligible(data) is None and engine.refusal(data) is None
    return engine.build(form.decode(form.encode(data, "0" * 64, len(text), engine.verdict_for(data))))


def test_lowest_rank_first_then_leftmost():
    """merges: (b,c) rank 0, (a,b) rank 1, (a,bc) rank 2, (a,a) rank 3. 'abc': (b,c) merges before
    (a,b) though it is to the right, then (a,bc): one token 'abc'. 'aaa': two equal (a,a) pairs,
    the leftmost merges: 'aa','a'. 'aaaa': 'aa','aa'. 'abcab': 'abc','ab'."""
    tok = _tiny_tokenizer(["bc", "ab", "abc", "aa"], [("b", "c"), ("a", "b"), ("a", "bc"), ("a", "a")])
    fast = _engine_for(tok)
    assert fast.encode("abc").tokens == ["abc"]
    assert fast.encode("aaa").tokens == ["aa", "a"]
    assert fast.encode("aaaa").tokens == ["aa", "aa"]
    assert fast.encode("abcab").tokens == ["abc", "ab"]
    long = "a" * 101 + "bc"  # past the scan: the heap path, same rule: (b,c), then the last a with bc
    assert fast.encode(long).tokens == ["aa"] * 50 + ["abc"]  # (rank 2) before any (a,a) (rank 3)
    for text in ("abc", "aaa", "aaaa", "abcab", long, "cab" * 40):
        assert fast.encode(text).ids == tok.encode(text).ids
        assert fast.encode(text).offsets == tok.encode(text).offsets


def test_ignore_merges_takes_a_vocabulary_word_whole():
    """'abc' is in the vocabulary but the merges build 'ab','c' (no (ab,c) merge): with
    ignore_merges the whole word is its entry, without it the merges' result."""
    extra, merges = ["ab", "abc"], [("a", "b")]
    for ignore, expected in ((True, ["abc"]), (False, ["ab", "c"])):
        tok = _tiny_tokenizer(extra, merges, ignore_merges=ignore)
        fast = _engine_for(tok)
        assert fast.encode("abc").tokens == expected == tok.encode("abc").tokens


def test_a_multibyte_character_split_across_tokens_keeps_the_character_span():
    """'é' is two bytes (c3 a9) and no merge joins them: two tokens, both with the character's
    offsets (0, 1), as tokenizers reports them."""
    tok = _tiny_tokenizer([], [])
    enc = _engine_for(tok).encode("é")
    assert enc.offsets == [(0, 1), (0, 1)] == tok.encode("é").offsets
    assert len(enc.ids) == 2


def test_the_proof_refuses_an_engine_with_a_wrong_merge_table():
    """Qwen2.5's merge of 'Ġ' and 't' (rank 5) moved last in the engine's table: ' thexq' (no
    vocabulary word) then merges 'h'+'e' before 'Ġ'+'t' and ends 'Ġth','ex','q' where Qwen2.5
    gives 'Ġthe','x','q'. Both halves of the proof must refuse it: the engine's answers on the
    corpus, and the Rust model built from the same table (its serialization). On Qwen2.5 cut to
    its first 4,000 ids (tests/small_tokenizers.py), which keeps those merges and words."""
    raw = mini_qwen().encode("utf-8")
    original = Tokenizer.from_str(raw.decode("utf-8"))
    data = json.loads(raw)
    merges = data["model"]["merges"]
    assert merges.index(["Ġ", "t"]) == 5
    merges.append(merges.pop(5))
    parts = form.decode(form.encode(data, "0" * 64, len(raw), engine.verdict_for(data)))
    wrong = engine.build(parts)
    assert original.encode(" thexq").tokens == ["Ġthe", "x", "q"]
    assert wrong.encode(" thexq").tokens == ["Ġth", "ex", "q"]
    assert not proof.engine_proven(wrong, original)  # the corpus's letter runs meet it
    assert not proof.proven(form.build(parts), original)  # and the table itself, serialized by tokenizers


def _mini_parts():
    raw = mini_qwen()
    data = json.loads(raw)
    return Tokenizer.from_str(raw), form.decode(form.encode(data, "0" * 64, len(raw), engine.verdict_for(data)))


def _with(parts, **views):
    """``parts`` with some of the engine's tables replaced: a wrong form that passed its checksum."""
    return form.Parts(parts.header, dict(parts.views, **views))


def _ranks_swapped(parts, vocab, first, second):
    """The engine's merge table with the ranks of two merges swapped (each keeps its new id)."""
    keys, vals = list(parts.views["keys"]), array("Q", parts.views["vals"])
    a, b = (keys.index(vocab[left] << 32 | vocab[right]) for left, right in (first, second))
    vals[a], vals[b] = (vals[b] >> 32) << 32 | (vals[a] & 0xFFFFFFFF), (vals[a] >> 32) << 32 | (vals[b] & 0xFFFFFFFF)
    return _with(parts, vals=memoryview(vals))


def _added_renamed(parts, old, new):
    """The engine's tiny tokenizer with one added token's text changed (same length, same id)."""
    tiny = json.loads(bytes(parts.views["tiny"]))
    for t in tiny["added_tokens"]:
        if t["content"] == old:
            t["content"] = new
    return _with(parts, tiny=memoryview(json.dumps(tiny, ensure_ascii=False).encode("utf-8")))


@pytest.mark.parametrize("wrong", ["ranks of two merges swapped", "an added token changed"])
def test_the_proof_refuses_a_wrong_engine(wrong):
    """On Qwen2.5 cut to its first 4,000 ids: the same form proven as it is, refused with the
    ranks of 'Ġ t' (5) and 'h e' (186) swapped in the engine's merge table, or with <|im_end|>
    renamed in its tiny tokenizer."""
    original, parts = _mini_parts()
    vocab = json.loads(mini_qwen())["model"]["vocab"]
    assert proof.engine_proven(engine.build(parts), original)
    if wrong.startswith("ranks"):
        bad = _ranks_swapped(parts, vocab, ("Ġ", "t"), ("h", "e"))
    else:
        bad = _added_renamed(parts, "<|im_end|>", "<|im_fin|>")
    assert not proof.engine_proven(engine.build(bad), original)


def test_the_proof_compares_every_ids_decode_and_token_text():
    """One vocabulary entry of Qwen2.5 changed in the engine's table (its last letter), for an id
    the proof's corpus never meets: the corpus encodings still agree, so only the comparison of
    every id's decode and token text can tell, and it does. The engine's single-id answers come
    from the same tables (``tokens_of``, ``decode_each``) that the proof compares in one call."""
    original = reference("qwen2.5")
    parts = _engine_of("qwen2.5")._parts
    answers = proof.Answers(original)
    met = {i for special in (False, True) for ids, _, _ in answers.encodings(special) for i in ids}
    starts = parts.views["starts"]
    i = max(i for i in range(len(starts) - 1) if i not in met and original.id_to_token(i)[-1] in "abcdefghijklmnoprstuvwxyz")
    table = bytearray(parts.views["table"])
    table[starts[i + 1] - 2] = ord("q")  # the byte before the token's NUL
    wrong = engine.build(_with(parts, table=memoryview(bytes(table))))
    assert wrong.id_to_token(i) == wrong.tokens_of([i])[0] == original.id_to_token(i)[:-1] + "q"
    assert wrong.decode([i], skip_special_tokens=False) == original.decode([i], skip_special_tokens=False)[:-1] + "q"
    assert proof.same_encodings(wrong, original, answers=answers)  # the corpus does not meet it
    assert not proof.engine_proven(wrong, original, answers)


class _Counted:
    """A tokenizer that counts the calls made to it (the proof's questions)."""

    def __init__(self, tok):
        self._tok, self.calls = tok, {}

    def __getattr__(self, name):
        method = getattr(self._tok, name)

        def counted(*args, **kwargs):
            self.calls[name] = self.calls.get(name, 0) + 1
            return method(*args, **kwargs)
        return counted


def test_the_proof_asks_every_id_at_once_and_the_corpus_once(monkeypatch):
    """Building a proven form asks each side for every id's decode and token text in one call
    (a single-id call only for a sample: ~1 in 97), and the original for its corpus encodings once
    for both proofs (the rebuilt tokenizer and the engine, before and after it learns)."""
    raw = mini_qwen()
    original = _Counted(Tokenizer.from_str(raw))
    asked = {"decode": 0, "id_to_token": 0}
    for name in asked:
        real = getattr(engine.FastTokenizer, name)
        monkeypatch.setattr(engine.FastTokenizer, name,
                            lambda self, *a, _real=real, _name=name, **k: asked.__setitem__(_name, asked[_name] + 1) or _real(self, *a, **k))
    blob, reason = fastbpe.proven_form("0" * 64, raw, original)
    assert reason is None and form.decode(blob).header["engine"]
    ids = max(original.get_vocab_size(with_added_tokens=True), 4000) + 1
    assert 0 < asked["decode"] <= ids // 97 + 1 and 0 < asked["id_to_token"] <= ids // 97 + 1
    assert original.calls["decode_batch"] == 1 and original.calls.get("decode", 0) <= ids // 97 + 1
    assert original.calls["encode_batch"] == 2  # with and without special tokens, once


def _trimming() -> str:
    tok = _tiny_tokenizer(["ab"], [("a", "b")])
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    return tok.to_str()


@pytest.mark.parametrize("source, reason", [
    (lambda: _raw("mistral-v3-spm").decode("utf-8"), "byte fallback or subword affixes"),
    (_trimming, "a post-processor that trims or rewrites offsets"),
])
def test_a_tokenizer_the_engine_cannot_stand_for_is_tokenized_by_tokenizers(tmp_path, monkeypatch, source, reason):
    """The form is written without the engine; a load builds the real tokenizer from it."""
    text = source()
    assert engine.refusal(json.loads(text)) == reason
    monkeypatch.setenv(store.DIR_ENV, str(tmp_path / "forms"))
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    want = Tokenizer.from_str(text).encode(" ab  ab", add_special_tokens=False).ids  # one parse for both loads
    for _ in range(2):  # the first load writes the form, the second loads from it
        tok = tokens.load(tokens.resolve(str(path), sha))
        assert type(tok._tok).__name__ == "Tokenizer"
        assert tok.encode(" ab  ab").ids == want
        active_pool().release(sha)
    assert store.user_form(sha).header["engine"] is None


def test_a_cold_run_on_the_embedded_tokenizer_builds_no_rust_model(cli, tmp_path):
    """A one-template check on the embedded tokenizer: loaded, encoded (windows too), a finding's
    figures and token texts worded, without the Rust BPE model ever being built."""
    policy = "Answer questions about orders, returns and invoices in two or three sentences, and cite the help article."
    (tmp_path / "p.j2").write_text("Current time: {{ now }}\nYou are the Acme assistant. " * 3 + policy + "\n{{ question }}\n",
                                   encoding="utf-8")  # the policy: over a block of shared text after the last `now`
    sha = tokens.embedded_sha256()
    active_pool().release(sha)
    r = cli("check", "--no-cache", "--output-format", "json", str(tmp_path / "p.j2"))
    assert r.code == 1 and [f["code"] for f in r.json()["findings"]] == ["M101"]
    tok = tokens.load(tokens.resolve(None))
    assert isinstance(tok._tok, engine.FastTokenizer) and tok._tok._real is None
    base = "Current time: 09:26\nYou are the Acme assistant.\n"
    enc = tok.encode(base)
    variants = window_encode.encode_variants(tok, base, enc, [base.replace("26", "27")], False)
    assert variants[0].ids == reference("embedded").encode(base.replace("26", "27")).ids
    assert tok._tok._real is None
    active_pool().release(sha)


def test_what_the_engine_lacks_comes_from_the_real_tokenizer_built_from_the_form():
    fast = _engine_of("embedded")
    original = reference("embedded")
    assert json.loads(fast.to_str()) == json.loads(original.to_str())
    assert fast._real is not None


def test_switched_off_no_engine(monkeypatch):
    monkeypatch.setenv(fastbpe.ENV, "0")
    sha = tokens.embedded_sha256()
    active_pool().release(sha)
    tok = tokens.load(tokens.resolve(None))
    assert type(tok._tok).__name__ == "Tokenizer"
    active_pool().release(sha)


def test_past_the_switch_volume_the_real_model_encodes_the_same(monkeypatch):
    """After ``_SWITCH_CHARS`` characters merged in Python, a process builds the Rust model once
    and encodes with it: the same ids, offsets and tokens as before the switch, and as tokenizers."""
    monkeypatch.setattr(engine, "_SWITCH_CHARS", 2_000)
    monkeypatch.setattr(engine, "_CHARS_PER_ENTRY", 0)  # the floor alone decides here
    fast = _engine_of("embedded")
    original = reference("embedded")
    text = "Current time: 2025-03-14 09:26:53\nYou are the Acme assistant. Be brief. " * 10  # 740 characters
    before = fast.encode(text)  # 740 merged in Python
    assert fast._real is None
    fast.encode_batch([text, text])  # 2,220 > 2,000: from here on the real model
    assert fast._real is not None
    after = fast.encode(text)
    want = original.encode(text)
    for got in (before, after):
        assert (got.ids, got.offsets, got.tokens) == (want.ids, want.offsets, want.tokens)


def test_a_cold_run_workers_share_of_characters_builds_no_model():
    """Building the Rust model from the form costs about what merging 2 characters per merge costs
    in Python (1.8 s for Qwen2.5 on the two-core machine, as much as parsing its tokenizer.json), so a
    process switches only after 4 characters per merge: Qwen2.5's tokenizer.json holds 294,166 merges,
    so 1,176,664 characters. A worker of the benchmark's cold run (60 application and 20 chat
    templates, Qwen2.5) merges ~0.53-0.60 M characters: it used to build the model at 400,000 and
    encode the little left with it (+30% CPU for the run); now it builds nothing, and neither does
    the driver's plan of that share before the fork."""
    merges = len(json.loads(_raw("qwen2.5"))["model"]["merges"])
    assert merges == 294_166
    fast = _engine_of("qwen2.5")
    fast.expect(600_000)  # what the driver plans for each worker, before forking
    assert fast._real is None
    text = "You are the Acme shop's assistant. Answer in the customer's language, briefly and politely. " * 60
    original = reference("qwen2.5")
    n = 0
    while n < 600_000:
        got = fast.encode(text, add_special_tokens=False)
        n += len(text)
    assert fast._real is None  # merged in Python all the way
    want = original.encode(text, add_special_tokens=False)
    assert (got.ids, got.offsets) == (want.ids, want.offsets)
    assert fast.switch_chars() == 4 * merges


def test_a_special_token_copy_counts_its_volume_with_the_original_and_wraps_its_model(monkeypatch):
    """A chat template's copy with its turn markers as special tokens (with_special_tokens) merges
    in the same process as the original: its characters count toward the one switch volume, and
    once the original has the Rust model (built before the fork, or past the switch) the copy
    encodes with that model, wrapped with its own added tokens, instead of merging in Python or
    building a second model. Ids, offsets and tokens are the parsed tokenizer's with the same texts added."""
    from tokenizers import AddedToken

    monkeypatch.setattr(engine, "_SWITCH_CHARS", 2_000)
    monkeypatch.setattr(engine, "_CHARS_PER_ENTRY", 0)  # the floor alone decides here
    fast = _engine_of("embedded")
    copy = fast.with_special_tokens(["<|im_start|>", "<|im_end|>"])
    assert copy is not None
    text = "<|im_start|>user\nWhere is my order 10023? It left on 2025-03-14 09:26:53.<|im_end|>\n" * 10  # 840 characters
    fast.encode(text)  # 840 through the original
    copy.encode(text)  # 1,680 in this process: both still merge in Python
    assert fast._real is None and copy._real is None
    copy.encode(text)  # 2,520 > 2,000: the switch, counted over both
    assert fast._real is not None and copy._real is not None
    built = []
    real_model = form._model
    monkeypatch.setattr(form, "_model", lambda parts: built.append(1) or real_model(parts))
    second = fast.with_special_tokens(["<|im_sep|>"])
    got = second.encode("a<|im_sep|>b " * 300)  # past the switch: the original's model, wrapped
    assert second._real is not None and built == []
    parsed = Tokenizer.from_str(_raw("embedded").decode("utf-8"))
    parsed.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<|im_start|>", "<|im_end|>")])
    want = parsed.encode(text)
    again = copy.encode(text)
    assert (again.ids, again.offsets, again.tokens) == (want.ids, want.offsets, want.tokens)
    parsed2 = Tokenizer.from_str(_raw("embedded").decode("utf-8"))
    parsed2.add_special_tokens([AddedToken("<|im_sep|>", special=True, normalized=False)])
    want2 = parsed2.encode("a<|im_sep|>b " * 300)
    assert (got.ids, got.offsets, got.tokens) == (want2.ids, want2.offsets, want2.tokens)


@pytest.mark.parametrize("name", ["embedded"] + BYTE_LEVEL)
def test_words_learnt_come_back_whole_from_tokenizers_and_change_nothing(name, monkeypatch):
    """Once the tiny model has learnt the one-token words merged so far, a text made of them comes
    back from `tokenizers` already merged (as many tokens as the real model gives, not one per
    byte), and every encoding is still the original's."""
    monkeypatch.setattr(engine, "_LEARN_FIRST", 8)
    original = reference(name)
    fast = _engine_of(name)
    prose = "The customer asked where the parcel is. The parcel is with the carrier, and the order is late.\n"
    specials = [t.content for t in original.get_added_tokens_decoder().values()][:40]
    texts = [prose] + HARD + specials + [f"a {s}{s}b\n" for s in specials] + [prose * 3]
    before = len(fast._tiny.encode(prose, add_special_tokens=False).ids)
    assert before == len(prose.encode("utf-8"))  # nothing learnt yet: one token per byte
    for special in (False, True):
        mine = fast.encode_batch(texts, add_special_tokens=special) + [fast.encode(t, special) for t in texts]
        for text, a in zip(texts + texts, mine):
            b = original.encode(text, add_special_tokens=special)
            assert (a.ids, a.offsets, a.tokens) == (b.ids, b.offsets, b.tokens), (name, text[:40])
    assert fast._learning and fast._taught > 0
    assert len(fast._tiny.encode(prose, add_special_tokens=False).ids) == len(original.encode(prose, add_special_tokens=False).ids)
    assert fast._real is None


def test_a_learnt_model_that_encodes_differently_is_dropped(monkeypatch):
    """A word taught with the wrong token (a broken table, say) changes the text just encoded: the
    rebuilt model is not adopted and the engine learns nothing more."""
    fast = _engine_of("qwen2.5")
    text = "The parcel is with the carrier.\n"
    right = fast.encode(text, add_special_tokens=False)
    fast._learnt["Ġparcel"] = 0  # not what the merges give
    assert fast._learn(text, False, right) is False
    assert not fast._learning and fast._taught == 0
    assert fast.encode(text, add_special_tokens=False).ids == right.ids
    assert len(fast._tiny.encode(text, add_special_tokens=False).ids) == len(text)  # the byte model again
