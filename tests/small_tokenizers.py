"""A small real tokenizer for tests about loading, forms, regexes and deadlines, not about a
vocabulary: Qwen2.5's tokenizer.json (tests/data/tokenizers/qwen2.5) cut to its first ``n`` vocabulary
ids and the merges among them, its added tokens renumbered after them. Everything else (NFC
normalizer, Split + ByteLevel pre-tokenizer, post-processor, decoder, added-token flags) is the
file's own, so `tokenizers` parses it the same way and the compact form accepts it as a byte-level
BPE of a known family; it parses, forms and proves in milliseconds instead of seconds."""

from __future__ import annotations

import json
from functools import lru_cache

from conftest import QWEN


@lru_cache(maxsize=4)
def mini_qwen(n: int = 4000) -> str:
    data = json.loads(QWEN.read_text(encoding="utf-8"))
    model = data["model"]
    vocab = {token: i for token, i in model["vocab"].items() if i < n}
    model["vocab"] = vocab
    model["merges"] = [m for m in model["merges"] if m[0] in vocab and m[1] in vocab and m[0] + m[1] in vocab]
    for k, added in enumerate(data["added_tokens"]):
        added["id"] = len(vocab) + k
    return json.dumps(data, ensure_ascii=False)
