"""The llama.cpp profile splits text as llama.cpp itself does, with llama.cpp's own Unicode tables.

Where the vectors come from (nothing here is computed by the code under test):

- ``data/llamacpp-unicode16-vectors.json.gz``: token ids from llama.cpp's own C++ code at commit
  0c1e570 (the copy vendored in the llama-cpp-python 0.3.36 sdist). libllama was built from that
  tree; ``scripts/llamacpp_vectors/tokenize.cpp`` calls ``llama_tokenize(vocab, text,
  add_special=false, parse_special=true)`` on vocab-only GGUFs written by the same tree's
  ``convert_hf_to_gguf.py`` from the test tokenizers (so the GGUF's ``tokenizer.ggml.pre``, recorded
  as ``gguf_pre``, is the converter's own choice). The texts are every code point that llama.cpp's
  ``unicode-data.cpp`` marks UNDEFINED while ``tokenizers`` 0.23's regex engine knows it (Unicode
  16.0: 5,185, of which the 4,382 in ``letters_or_digits`` are letters or digits there), each
  followed by ``'s``, ``[x``, ``<a`` and ``<think>``. The same build reproduces the 29 ids recorded
  from a live llama-server (``data/llamacpp-tokenize-vectors.json``).
- ``data/llamacpp-split-vectors.json.gz``: llama.cpp's ``unicode_regex_split`` itself (its
  ``src/unicode.cpp`` and ``src/unicode-data.cpp`` compiled with g++ and a small driver,
  ``scripts/llamacpp_vectors/split.cpp``) on 600 seeded random texts, for every
  ``LLAMA_VOCAB_PRE_TYPE``.

``scripts/llamacpp_vectors/make_vectors.py`` rebuilds both files from the llama.cpp tree.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from promptlint import fastbpe
from promptlint.tokenization import tokens
from promptlint.tokenization.engine_tokenize import CAUSE_SPLIT, engine_encoder, tokenization_differences
from promptlint.llamacpp import pretype, split, tables

DATA = Path(__file__).resolve().parent / "data"
UNICODE16 = json.loads(gzip.decompress((DATA / "llamacpp-unicode16-vectors.json.gz").read_bytes()))
SPLITS = json.loads(gzip.decompress((DATA / "llamacpp-split-vectors.json.gz").read_bytes()))
COMMIT = "0c1e57098bba43ac29e6e3b677cdceebdd22334f"

# vectors' tokenizer name -> tokenizer file (None: promptlint's embedded cl100k_base)
TOKENIZERS = {
    "qwen2.5": DATA / "tokenizers/qwen2.5/tokenizer.json",
    "deepseek-v3": DATA / "tokenizers/deepseek-v3/tokenizer.json",
    "mistral-nemo-tekken": DATA / "tokenizers/mistral-nemo-tekken/tokenizer.json",
    "gpt-oss-o200k-harmony": DATA / "tokenizers/gpt-oss-o200k-harmony/tokenizer.json",
    "cl100k_base (embedded)": None,
}
_LOADED = {}


def _tok(name):
    if name not in _LOADED:
        path = TOKENIZERS[name]
        _LOADED[name] = tokens.load(tokens.resolve(str(path) if path else None))
    return _LOADED[name]


def _encoder(tok):
    """The llama.cpp encoder of ``tok`` as a run's first build makes it: the rewrite parsed and used.
    Keeping that rewrite as a compact form for a later run (a second proof of a 100-200k vocabulary,
    3-8 s each, and a kept form the other test worker may or may not load first) is
    tests/test_llamacpp_kept_rewrite.py's subject; here it is left out, so each vector is checked
    against the same encoder in every run."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(fastbpe.ENV, "0")
        return engine_encoder(tok, "llamacpp")


def test_vectors_are_the_issue_set():
    assert UNICODE16["llama_cpp_commit"] == COMMIT == tables.commit()
    assert UNICODE16["suffixes"] == ["'s", "[x", "<a", "<think>"]
    letters = set(UNICODE16["letters_or_digits"])
    assert len(letters) == 4382 and letters <= set(UNICODE16["codepoints"])
    assert 0x1C89 in letters and 0x1CCF0 in letters  # the issue's examples: a letter and a digit in Unicode 16
    assert set(UNICODE16["tokenizers"]) == set(TOKENIZERS)


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_unicode16_code_points_tokenize_as_llamacpp(name):
    vec = UNICODE16["tokenizers"][name]
    enc = _encoder(_tok(name))
    assert enc.exact and enc.pre is not None
    texts = [chr(c) + s for c in UNICODE16["codepoints"] for s in UNICODE16["suffixes"]]
    assert len(texts) == len(vec["ids"]) == 5185 * 4
    got = [e.ids for e in enc.encode_batch(texts)]  # one batch: each text's ids as encode gives them
    assert len(got) == len(texts)
    wrong = [(f"U+{ord(t[0]):04X}", t, g, want) for t, g, want in zip(texts, got, vec["ids"]) if g != want]
    assert not wrong, f"{len(wrong)} of {len(texts)} differ; the first: {wrong[0]}"
    some = texts[:: len(texts) // 40]  # and encode itself, one text at a time
    assert [enc.encode(t).ids for t in some] == [got[texts.index(t)] for t in some]


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_pre_tokenizer_is_the_converters_choice(name):
    """promptlint picks the pre-tokenizer llama.cpp's converter wrote into the GGUF (same hash table)."""
    enc = _encoder(_tok(name))
    assert enc.pre.name == UNICODE16["tokenizers"][name]["gguf_pre"]
    assert enc.notes == []


def test_the_issue_example():
    qwen = _tok("qwen2.5")
    enc = _encoder(qwen)
    assert enc.encode("\u1c89's").ids == [128233, 231, 6, 82]  # llama-server's ids (issue 20)
    a, b = enc.encode("\u1c89's one").ids, enc.encode("\u1c89's two").ids
    shared = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert (shared, len(b)) == (4, 5)  # the server reuses 4 of 5
    (d,) = tokenization_differences("\u1c89's one", qwen, "llamacpp")
    assert d.cause == CAUSE_SPLIT and d.engine_ids == (6, 82) and d.pinned_ids == (594,)


@pytest.mark.parametrize("pre_type", sorted(SPLITS["words"]))
def test_split_matches_llamacpps_unicode_regex_split(pre_type):
    """Word boundaries from llama.cpp's compiled unicode_regex_split, for every pre-tokenizer type."""
    regexes = tables.data()["pre_types"][pre_type]["regex"]
    for text, want in zip(SPLITS["texts"], SPLITS["words"][pre_type]):
        if isinstance(want, str):  # "ERR ...": llama.cpp rejects the regex list
            with pytest.raises(split.SplitError):
                split.split_words(text, regexes)
            continue
        lengths, pos = [], 0
        for n in split.split_words(text, regexes):
            lengths.append(len(text[pos:pos + n].encode("utf-8")))
            pos += n
        assert lengths == want, repr(text)


def test_tables_hold_llamacpps_categories():
    flags = tables.codepoint_flags()
    assert flags.of_char("\u1c89") & tables.MASK_CATEGORIES == tables.UNDEFINED  # Unicode 16 letter
    assert flags.of_char("\U0001CCF0") & tables.MASK_CATEGORIES == tables.UNDEFINED  # Unicode 16 digit
    assert flags.of_char("A") & tables.LETTER and flags.of_char("\u00b5") & tables.LETTER
    assert flags.of_char("7") & tables.NUMBER and flags.of_char("\u0661") & tables.NUMBER
    assert flags.of_char("\u0301") & tables.ACCENT_MARK
    for ws in " \t\n\x0b\x0c\r\x85\xa0\u1680\u2028\u2029\u3000":
        assert flags.of_char(ws) & tables.WHITESPACE, repr(ws)
    assert not flags.of_char("\x1c") & tables.WHITESPACE  # Python's isspace() says yes; llama.cpp no
    assert flags.tolower(ord("S")) == ord("s") and flags.tolower(0x212A) == ord("k")  # KELVIN SIGN


def _ascii_texts(n, seed):
    rng = random.Random(seed)
    alphabet = "abcXYZsStTmMdDrReEvVlL'0123456789 \t\r\n.,!?-_/\\()[]{}<>\"#$%&*+=@^`|~:;"
    pieces = list(alphabet) + ["  ", "\n\n", "'s", "'LL", " 123456", "    x", "a1b2", "CamelCase"]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 30))) for _ in range(n)]


@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_ascii_text_needs_no_engine_tokenization(name):
    """The fast path of tokenization_differences: ASCII text encodes alike under both."""
    tok = _tok(name)
    enc = _encoder(tok)
    texts = _ascii_texts(400, seed=len(name))
    for text in texts:
        if enc.control_texts_in(text):
            continue
        assert enc.encode(text).ids == tok.encode(text).ids, repr(text)
        assert not enc.may_differ(text)


def test_unrecognized_pre_tokenizer_is_flagged(tmp_path):
    """A byte-level BPE tokenizer the converter does not know: not exact, and said so."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    from promptlint.tokenization.engine_tokenize import _BYTE_TO_UNICODE

    vocab = {c: i for i, c in enumerate(_BYTE_TO_UNICODE.values())}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    loaded = tokens.load(tokens.resolve(str(path)))
    assert pretype.converter_name(loaded._tok) is None
    enc = engine_encoder(loaded, "llamacpp")
    assert not enc.exact and enc.pre is None
    assert any("does not recognize" in n for n in enc.notes)


def test_ignore_merges_follows_llamacpp(tmp_path, monkeypatch):
    """llama.cpp's qwen2 type does not ignore merges; Qwen's tokenizer.json does. A vocabulary word
    that merges cannot build is then one token for `tokenizers` and several for llama.cpp, also in
    ASCII text (no fast path)."""
    data = json.loads((DATA / "tokenizers/qwen2.5/tokenizer.json").read_text(encoding="utf-8"))
    word = "\u0120Harbour"  # " Harbour", not in the converter's test text
    wid = data["model"]["vocab"][word]
    building = [m for m in data["model"]["merges"] if "".join(m.split(" ") if isinstance(m, str) else m) == word]
    assert building
    for m in building:
        data["model"]["merges"].remove(m)
    assert data["model"]["ignore_merges"] is True
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    # A run's first load and first build use what they have just parsed, and only then prove and keep
    # compact forms for a later run (tests/test_fastbpe.py, tests/test_llamacpp_kept_rewrite.py). This
    # one-off tokenizer has no later run: the keeping (two proofs of a 151k vocabulary, 5-10 s) is left
    # out; the tokenizer and the encoder below are the same objects either way.
    monkeypatch.setenv("PROMPTLINT_FAST_TOKENIZER", "0")
    tok = tokens.load(tokens.resolve(str(path)))
    enc = engine_encoder(tok, "llamacpp")
    assert enc.pre.name == "qwen2" and enc.pre.ignore_merges is False
    assert tok.encode("to Harbour Road").ids[1] == wid  # the whole word, as tokenizers does
    ids = enc.encode("to Harbour Road").ids
    assert wid not in ids and len(ids) > len(tok.encode("to Harbour Road").ids)
    assert enc.may_differ("to Harbour Road") and not enc.may_differ("to the Road")
    (d,) = tokenization_differences("to Harbour Road", tok, "llamacpp")
    assert d.pinned_ids == (wid,) and d.cause == "other"


def test_tables_ship_in_the_wheel():
    """The package and its generated data file are in pyproject's package list and package data."""
    import fnmatch

    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    root = Path(__file__).resolve().parent.parent
    conf = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "promptlint.llamacpp" in conf["packages"]
    assert any(fnmatch.fnmatch(tables.DATA_FILE, g) for g in conf["package-data"]["promptlint.data"])
    assert (root / "promptlint" / "data" / tables.DATA_FILE).is_file()


def test_padding_entries_are_plain_text():
    """A GGUF padded to 151,936 rows has `[PAD151700]` typed UNUSED: llama.cpp does not match it.
    Ids recorded with the same libllama build and a vocab-only Qwen2.5 GGUF of 151,936 entries
    (scripts/llamacpp_vectors/tokenize.cpp)."""
    enc = _encoder(_tok("qwen2.5"))
    assert enc.encode("[PAD151700]").ids == [42347, 1808, 16, 20, 16, 22, 15, 15, 60]
    assert enc.encode("x [PAD151700] y").ids == [87, 508, 43818, 16, 20, 16, 22, 15, 15, 60, 379]
