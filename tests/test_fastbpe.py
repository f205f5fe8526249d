"""The fast-loading form of a tokenizer (promptlint.fastbpe): the same ids as `tokenizers` parsing
the tokenizer.json, for the embedded tokenizer and every tokenizer in tests/data, on a corpus of
hard strings; used only when proven, rebuilt when its file is corrupted or changed, never
formed for a tokenizer whose model it cannot rebuild."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from conftest import DATA
from reference_tokenizers import reference
from small_tokenizers import mini_qwen
from promptlint import fastbpe
from promptlint.tokenization import tokens
from promptlint.fastbpe import engine, form, proof, store
from promptlint.pools.tokenizers import active as active_pool

EMBEDDED = Path(tokens.__file__).parent.parent / "data" / "cl100k_base.tokenizer.json.gz"
pytestmark = pytest.mark.real_tokenizer_parse  # about loading itself: no memo of parses

CORPUS_TOKENIZERS = sorted(p.parent.name for p in (DATA / "tokenizers").glob("*/tokenizer.json"))

# Written here, not taken from promptlint's corpus: texts where tokenizers differ most often.
HARD = [
    "", " " * 700, "\n\n\n \t \r\n" * 40, "a" + " " * 300 + "b", "1234567890" * 30, "٣٤٥ ０１２ ½ ²",
    "e\u0301 é Å Å ﬁ İ ß", "👨‍👩‍👧‍👦 🇯🇵 👍🏽", "\x00\x01\x1f\x7f \ufeff\u200b\u2028", "日本語 한국어 ภาษาไทย हिन्दी",
    "It's THEY'LL we’d", "<|endoftext|> <|im_start|>user\nhi<|im_end|>", "<s>[INST] x [/INST]</s>",
    "<｜begin▁of▁sentence｜><｜User｜>", "<|start|>assistant<|channel|>final<|message|>", "𝔘𝔫𝔦 \ue000 \uffff",
]


def _json(name: str) -> bytes:
    if name == "embedded":
        return gzip.decompress(EMBEDDED.read_bytes())
    return (DATA / "tokenizers" / name / "tokenizer.json").read_bytes()


def _fast(raw: bytes):
    data = json.loads(raw)
    assert form.ineligible(data) is None
    return form.build(form.decode(form.encode(data, hashlib.sha256(raw).hexdigest(), len(raw))))


@pytest.mark.parametrize("name", ["embedded"] + CORPUS_TOKENIZERS)
def test_the_fast_form_gives_the_ids_tokenizers_gives(name):
    raw = _json(name)
    original = reference(name)
    fast = _fast(raw)
    specials = [t.content for t in original.get_added_tokens_decoder().values()][:50]
    texts = HARD + specials + [f"x {s}{s} y" for s in specials]
    for special in (False, True):
        for text in texts:
            a, b = fast.encode(text, add_special_tokens=special), original.encode(text, add_special_tokens=special)
            assert (a.ids, a.offsets) == (b.ids, b.offsets), (name, text)
    assert fast.get_added_tokens_decoder() == original.get_added_tokens_decoder()
    assert fast.decode(original.encode(HARD[7]).ids) == original.decode(original.encode(HARD[7]).ids)
    assert proof.proven(fast, original)


def test_a_form_that_is_not_the_tokenizer_is_not_proven():
    """Two merges swapped (the first two: runs of spaces, which the corpus has): a different
    tokenizer, which the proof must refuse."""
    raw = mini_qwen().encode("utf-8")
    original = Tokenizer.from_str(raw.decode("utf-8"))
    data = json.loads(raw)
    assert proof.proven(form.build(form.decode(form.encode(data, "0" * 64, len(raw)))), original)  # unchanged: proven
    merges = data["model"]["merges"]
    merges[0], merges[1] = merges[1], merges[0]
    changed = form.build(form.decode(form.encode(data, "0" * 64, len(raw))))
    assert not proof.proven(changed, original)


def _wordpiece() -> str:
    tok = Tokenizer(models.WordPiece({"[UNK]": 0, "hello": 1, "world": 2, "##s": 3}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return tok.to_str()


def _unigram() -> str:
    return Tokenizer(models.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -0.5)], 0)).to_str()


def _unknown_regex() -> str:
    data = json.loads(mini_qwen())
    data["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"\p{L}+|\s+|."
    return json.dumps(data)


@pytest.mark.parametrize("make, reason", [
    (_wordpiece, "not a BPE model"),
    (_unigram, "not a BPE model"),
    (_unknown_regex, "regexes outside the known families"),
])
def test_a_tokenizer_it_cannot_prove_is_parsed_by_tokenizers(tmp_path, make, reason):
    text = make()
    assert form.ineligible(json.loads(text)) == reason
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    tok = tokens.load(tokens.resolve(str(path), sha))  # pinned: its regex may run here
    built, loaded = fastbpe.built_count(), fastbpe.loaded_count()
    assert tok.encode("hello worlds").ids == Tokenizer.from_str(text).encode("hello worlds").ids
    assert not Path(store.path_of(sha)).exists()
    assert Path(store.path_of(sha, ".unfit")).read_text(encoding="utf-8").splitlines()[1] == reason
    active_pool().release(sha)
    tokens.load(tokens.resolve(str(path), sha))  # the note: not attempted again, parsed again
    assert (fastbpe.built_count(), fastbpe.loaded_count()) == (built, loaded)
    active_pool().release(sha)


@pytest.fixture()
def own_forms(tmp_path, monkeypatch):
    """A directory of forms of this test's own (not the session's)."""
    d = tmp_path / "forms"
    d.mkdir()
    monkeypatch.setenv(store.DIR_ENV, str(d))
    return d


@pytest.fixture()
def small(tmp_path):
    """A small byte-level BPE of Qwen2.5's family (tests/small_tokenizers.py): the store's
    mechanics below do not depend on the vocabulary's size, and its form is proven in a fraction
    of the 151k vocabulary's time."""
    path = tmp_path / "small" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(mini_qwen(), encoding="utf-8")
    return path


def _load(path: Path):
    sha = tokens.tokenizer_file_sha256(path)
    active_pool().release(sha)
    tok = tokens.load(tokens.resolve(str(path)))
    active_pool().release(sha)
    return sha, tok


def test_the_first_load_writes_the_form_and_the_next_uses_it(own_forms, small):
    """On Qwen2.5's file cut to 4,000 ids (the write and the reuse do not depend on the vocabulary's
    size; Qwen2.5's own 151k form is built and proven by the corpus tests through the same store)."""
    built, loaded = fastbpe.built_count(), fastbpe.loaded_count()
    sha, first = _load(small)
    assert (fastbpe.built_count(), fastbpe.loaded_count()) == (built + 1, loaded)
    assert (own_forms / f"{sha}.bpe").is_file()
    _, second = _load(small)
    assert (fastbpe.built_count(), fastbpe.loaded_count()) == (built + 1, loaded + 1)
    text = "Where is order 10023?  <|im_start|>user\n日本語\n\n"
    assert second.encode(text).ids == first.encode(text).ids == Tokenizer.from_file(str(small)).encode(text).ids
    assert 4001 in first.encode(text).ids  # <|im_start|> one token, renumbered after the 4,000 ids kept


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "another tokenizer's form"])
def test_a_corrupted_or_changed_form_is_detected_and_rebuilt(own_forms, small, damage):
    sha, _ = _load(small)
    path = own_forms / f"{sha}.bpe"
    blob = path.read_bytes()
    if damage == "flip a byte":
        at = len(blob) - 1000  # inside the merge table: a wrong merge, if it were used
        path.write_bytes(blob[:at] + bytes([blob[at] ^ 1]) + blob[at + 1:])
    elif damage == "truncate":
        path.write_bytes(blob[: len(blob) // 2])
    else:  # intact (its digest holds) but the form of the embedded tokenizer: its source sha256 differs
        path.write_bytes(store.PACKAGED.read_bytes())
    assert form.decode(path.read_bytes()) is None or form.decode(path.read_bytes()).source_sha256 != sha
    built, loaded = fastbpe.built_count(), fastbpe.loaded_count()
    _, tok = _load(small)
    assert (fastbpe.built_count(), fastbpe.loaded_count()) == (built + 1, loaded)  # parsed, rebuilt, not used
    assert path.read_bytes() == blob
    text = "<|im_start|>system\nok"
    assert tok.encode(text).ids == Tokenizer.from_file(str(small)).encode(text).ids
    assert tok.encode(text).ids[0] == 4001  # <|im_start|>, renumbered after the 4,000 ids kept


def _rewrite_header(path: Path, **changes) -> None:
    """The form at ``path`` with header fields changed and its checksum made to match (intact,
    as far as the checksum can tell)."""
    import zlib

    blob = path.read_bytes()
    rest = blob[len(form.MAGIC) + 4:]
    header = dict(form.decode(blob).header, **changes)
    rest = json.dumps(header).encode() + rest[rest.index(b"\n"):]
    path.write_bytes(form.MAGIC + zlib.crc32(rest).to_bytes(4, "little") + rest)


def test_a_form_proven_with_another_tokenizers_version_is_not_used(own_forms, small):
    sha, _ = _load(small)
    path = own_forms / f"{sha}.bpe"
    _rewrite_header(path, tokenizers="0.0.1")
    assert form.decode(path.read_bytes()).header["tokenizers"] == "0.0.1"
    loaded = fastbpe.loaded_count()
    _load(small)
    assert fastbpe.loaded_count() == loaded
    assert form.decode(path.read_bytes()).header["tokenizers"] == form.tokenizers_version()


def test_the_shipped_form_is_the_embedded_tokenizer():
    raw = gzip.decompress(EMBEDDED.read_bytes())
    parts = store.packaged()
    assert parts is not None
    assert parts.source_sha256 == hashlib.sha256(raw).hexdigest() == tokens.embedded_sha256()
    assert parts.source_bytes == len(raw)
    if parts.header["tokenizers"] != form.tokenizers_version():
        pytest.skip("the shipped form was proven with another tokenizers version: scripts/build_fast_tokenizer.py")
    original = reference("embedded")
    assert proof.proven(form.build(parts), original)
    assert parts.header["engine"] == {"ignore_merges": True, "decoder": "ByteLevel"}  # cold runs build no Rust model
    assert proof.engine_proven(engine.build(parts), original)


def test_switched_off_the_tokenizer_json_is_parsed(own_forms, small, monkeypatch):
    monkeypatch.setenv(fastbpe.ENV, "0")
    built, loaded = fastbpe.built_count(), fastbpe.loaded_count()
    sha, tok = _load(small)
    assert (fastbpe.built_count(), fastbpe.loaded_count()) == (built, loaded)
    assert not any(own_forms.iterdir())
    assert tok.encode("hi there").ids == [71, 72, 1052]  # 'h' 'i' ' there': "hi" (6023) is past the 4,000 ids kept


def test_an_unpinned_tokenizer_with_a_proven_form_is_not_read_again_to_be_vetted(own_forms, small, monkeypatch):
    """A form is written only for a tokenizer whose regexes are all known: its presence vets the
    file without reading and scanning its megabytes; without one (or vetted against another list
    of known regexes) the file is scanned."""
    from promptlint.tokenization import tokenizer_vetting

    sha, _ = _load(small)
    scanned = []
    monkeypatch.setattr(tokenizer_vetting, "unknown_patterns", lambda text: scanned.append(len(text)) or [])
    spec = tokens.TokenizerSpec(small, None, vet=True)  # a model directory's own, unpinned
    monkeypatch.setattr(tokens, "_VETTING", {})
    assert tokens.needs_deadline(spec, sha) is False and scanned == []
    path = own_forms / f"{sha}.bpe"
    _rewrite_header(path, vetting="another list")
    monkeypatch.setattr(tokens, "_VETTING", {})
    monkeypatch.setattr(store, "_KEPT", {})  # the form read ahead by the first check: read the file again
    assert tokens.needs_deadline(spec, sha) is False and scanned == [len(small.read_text(encoding="utf-8"))]
