"""llama.cpp's tables, read from package data generated from its source.

``promptlint/data/llamacpp-tables.json.gz`` is written by ``scripts/gen_llamacpp_tables.py``
from llama.cpp commit 0c1e570 (the copy vendored in llama-cpp-python 0.3.36): the code point
flags of ``src/unicode-data.cpp`` (an older Unicode database than ``tokenizers`` uses: every
code point assigned since is UNDEFINED), the whitespace set and lowercase map, the
pre-tokenizer regex lists of ``src/llama-vocab.cpp`` and the converter's pre-tokenizer hashes.
Loaded once, on first use.
"""

from __future__ import annotations

import bisect
import gzip
import json
from functools import lru_cache
from importlib import resources
from typing import Dict, List

DATA_FILE = "llamacpp-tables.json.gz"

# unicode.h, unicode_cpt_flags (checked against the generated table when it is loaded)
UNDEFINED = 0x0001
NUMBER = 0x0002
LETTER = 0x0004
SEPARATOR = 0x0008
ACCENT_MARK = 0x0010
PUNCTUATION = 0x0020
SYMBOL = 0x0040
CONTROL = 0x0080
MASK_CATEGORIES = 0x00FF
WHITESPACE = 0x0100
MAX_CODEPOINTS = 0x110000


@lru_cache(maxsize=None)
def data() -> dict:
    raw = resources.files("promptlint.data").joinpath(DATA_FILE).read_bytes()
    doc = json.loads(gzip.decompress(raw).decode("utf-8"))
    bits = doc["collapse"]["flag_bits"]
    expected = {"UNDEFINED": UNDEFINED, "NUMBER": NUMBER, "LETTER": LETTER, "SEPARATOR": SEPARATOR,
                "ACCENT_MARK": ACCENT_MARK, "PUNCTUATION": PUNCTUATION, "SYMBOL": SYMBOL,
                "CONTROL": CONTROL, "MASK_CATEGORIES": MASK_CATEGORIES, "WHITESPACE": WHITESPACE}
    if any(bits.get(k) != v for k, v in expected.items()):  # pragma: no cover - regenerated from another llama.cpp
        raise RuntimeError(f"{DATA_FILE}: unicode_cpt_flags bits changed; update promptlint.llamacpp.tables")
    return doc


def commit() -> str:
    return data()["llama_cpp_commit"]


class CodepointFlags:
    """``unicode_cpt_flags_from_cpt`` (category bits | WHITESPACE) and ``unicode_tolower``."""

    def __init__(self, doc: dict):
        ranges = doc["flag_ranges"]  # [start, flags]; each range runs to the next start
        self._starts: List[int] = [r[0] for r in ranges]
        self._flags: List[int] = [r[1] for r in ranges]
        self._whitespace = frozenset(doc["whitespace"])
        self._lower: Dict[int, int] = {a: b for a, b in doc["lowercase"]}
        self._cache: Dict[str, int] = {}
        for c in range(128):
            self._cache[chr(c)] = self._compute(c)

    def _compute(self, cpt: int) -> int:
        if cpt >= MAX_CODEPOINTS:
            return UNDEFINED
        flags = self._flags[bisect.bisect_right(self._starts, cpt) - 1]
        if cpt in self._whitespace:
            flags |= WHITESPACE
        return flags

    def of_char(self, ch: str) -> int:
        f = self._cache.get(ch)
        if f is None:
            f = self._cache[ch] = self._compute(ord(ch))
        return f

    def of_text(self, text: str) -> List[int]:
        get = self._cache.get
        out = [get(ch) for ch in text]
        if None in out:
            out = [self.of_char(ch) for ch in text]
        return out

    def tolower(self, cpt: int) -> int:
        return self._lower.get(cpt, cpt)


@lru_cache(maxsize=None)
def codepoint_flags() -> CodepointFlags:
    return CodepointFlags(data())
