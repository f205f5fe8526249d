"""The reference `tokenizers.Tokenizer` of a test tokenizer (tests/data/tokenizers/NAME, or
"embedded": promptlint's cl100k_base), parsed from its tokenizer.json once per test process.

Tests compare promptlint's compact forms and engine against it and only read it (encode, decode,
to_str, added tokens, id_to_token): the same parse each time, 0.6-1.5 s saved per use after the
first. A test that changes a tokenizer (adds tokens) parses its own."""

from __future__ import annotations

import gzip
from functools import lru_cache
from pathlib import Path

from tokenizers import Tokenizer

from conftest import DATA
from promptlint.tokenization import tokens

EMBEDDED = Path(tokens.__file__).parent.parent / "data" / "cl100k_base.tokenizer.json.gz"


def raw(name: str) -> bytes:
    if name == "embedded":
        return gzip.decompress(EMBEDDED.read_bytes())
    return (DATA / "tokenizers" / name / "tokenizer.json").read_bytes()


@lru_cache(maxsize=6)  # every test tokenizer; a parsed 150k vocabulary is ~100 MB
def reference(name: str) -> Tokenizer:
    """The tokenizer.json of ``name`` parsed by `tokenizers` itself: read it, never change it."""
    return Tokenizer.from_str(raw(name).decode("utf-8"))


def of_file(path) -> Tokenizer:
    """``reference`` of a tests/data/tokenizers/NAME/tokenizer.json path (conftest's QWEN, MISTRAL)."""
    path = Path(path)
    assert path.name == "tokenizer.json" and path.parent.parent == DATA / "tokenizers", path
    return reference(path.parent.name)
