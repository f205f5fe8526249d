"""The llama.cpp encoder's rewritten tokenizer kept in the user cache as a compact form of its own:
a second cold build serializes, rewrites and parses nothing, and encodes as the first did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptlint import fastbpe
from promptlint.tokenization import engine_tokenize, tokens

DATA = Path(__file__).resolve().parent / "data"
QWEN = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"
VECTORS = json.loads((DATA / "llamacpp-tokenize-vectors.json").read_text(encoding="utf-8"))["cases"]
MORE = ["</s> struck <|im_end|> and <|endoftext|>", "e\u0301 \u212b caf\u00e9", "x = 12345678 ;; \n\n\n    indented", "\u1c89's"]


def _state(enc):
    return (enc.exact, enc._merges_differ, enc._specials, enc.promoted, enc._prefix_ids, enc._suffix_ids, enc.notes,
            enc.pre)


def _encodings(enc):
    out = []
    for text in [c["text"] for c in VECTORS] + MORE:
        for special in (False, True):
            e = enc.encode(text, add_special_tokens=special)
            out.append((e.ids, e.offsets))
    return out


@pytest.mark.real_tokenizer_parse  # the encoder is built here, not taken from the suite's memo
def test_the_second_cold_build_loads_the_kept_rewrite_and_a_damaged_one_is_rebuilt(tmp_path, monkeypatch):
    qwen = tokens.load(tokens.resolve(str(QWEN)))  # its own form from the suite's store
    real = tokens.LoadedTokenizer.serialized
    forms = tmp_path / "forms"
    monkeypatch.setenv("PROMPTLINT_FAST_TOKENIZER_DIR", str(forms))  # an empty user cache from here on
    first = engine_tokenize._build_llamacpp(qwen)  # a cold run: serialize, rewrite, parse; then keep it
    kept = sorted(forms.glob("*.bpe"))
    assert len(kept) == 1
    assert [c["server"] for c in VECTORS] == [first.encode(c["text"]).ids for c in VECTORS]  # llama.cpp's own ids

    def rebuilt(self):
        raise AssertionError("the pinned tokenizer was serialized again")

    monkeypatch.setattr(tokens.LoadedTokenizer, "serialized", rebuilt)
    loads = fastbpe.loaded_count()
    second = engine_tokenize._build_llamacpp(qwen)  # the next cold run: loads the kept form
    assert fastbpe.loaded_count() == loads + 1
    assert type(second._tok).__name__ == "FastTokenizer"  # no Rust BPE model built for it
    assert _state(second) == _state(first)
    expected = _encodings(first)
    assert _encodings(second) == expected

    # a damaged kept form (its checksum no longer matches) is rebuilt from the pinned tokenizer, silently
    (kept,) = forms.glob("*.bpe")
    blob = kept.read_bytes()
    kept.write_bytes(blob[:-100] + bytes(100))  # the checksum no longer matches
    serialized = []
    monkeypatch.setattr(tokens.LoadedTokenizer, "serialized", lambda self: serialized.append(1) or real(self))
    again = engine_tokenize._build_llamacpp(qwen)
    assert serialized == [1] and type(again._tok).__name__ == "Tokenizer"
    assert _state(again) == _state(first) and _encodings(again) == expected
    assert kept.read_bytes() == blob  # written again, whole
