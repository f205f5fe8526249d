"""Which pre-tokenizer llama.cpp uses for a model converted from a given tokenizer.

A GGUF names its pre-tokenizer in ``tokenizer.ggml.pre``. llama.cpp's converter
(``convert_hf_to_gguf.py``, ``get_vocab_base_pre``) chooses that name by encoding a fixed test
text (``chktxt``) with the model's tokenizer and looking up the sha256 of the token id list
(``chkhsh``) in a table; an unknown hash makes it refuse the model. llama.cpp then maps the name
to a ``LLAMA_VOCAB_PRE_TYPE_*``, whose regex list drives the split (``split.split_words``).
Both tables come from the pinned commit (``tables``).

The converter encodes with ``AutoTokenizer``, which adds BOS when ``tokenizer_config.json``
says so even if ``tokenizer.json``'s post-processor does not (DeepSeek-V3): the ids are tried
as the post-processor gives them, without special tokens, and with each special token in
front.
"""

from __future__ import annotations

import hashlib
from typing import List, NamedTuple, Optional, Tuple

from promptlint.llamacpp import tables


class PreTokenizer(NamedTuple):
    name: str  # tokenizer.ggml.pre, e.g. "qwen2", "llama-bpe"
    type: str  # LLAMA_VOCAB_PRE_TYPE_* without the prefix, e.g. "QWEN2"
    regexes: Tuple[str, ...]
    byte_encode: bool  # GPT-2 byte encoding of the words (False: SentencePiece-style BPE)
    ignore_merges: bool  # a word that is a vocabulary entry is one token, whatever the merges say


def _hash(ids) -> str:
    return hashlib.sha256(str(list(ids)).encode("utf-8")).hexdigest()


def _probe(tok, text: str, special: bool) -> List[int]:
    if hasattr(tok, "probe_ids"):  # a LoadedTokenizer: the converter's probe is not the file's encode
        return tok.probe_ids(text, add_special_tokens=special)
    return list(tok.encode(text, add_special_tokens=special).ids)


def converter_name(tok, special_ids=()) -> Optional[str]:
    """The ``tokenizer.ggml.pre`` name the converter gives ``tok`` (a ``tokens.LoadedTokenizer``, or a
    ``tokenizers.Tokenizer``), or None."""
    doc = tables.data()
    table = doc["chkhsh"]
    chktxt = doc["chktxt"]
    full, plain = _probe(tok, chktxt, True), _probe(tok, chktxt, False)
    for ids in (full, plain):
        name = table.get(_hash(ids))
        if name is not None:
            return name
    for sid in sorted(special_ids):
        name = table.get(_hash([sid] + plain))
        if name is not None:
            return name
    return None


def from_name(name: str) -> Optional[PreTokenizer]:
    """The pre-tokenizer llama.cpp's vocabulary loader sets up for ``tokenizer.ggml.pre == name``."""
    doc = tables.data()
    settings = doc["pre_names"].get(name)
    if settings is None:
        return None
    pre = doc["pre_types"][settings["type"]]
    return PreTokenizer(name, settings["type"], tuple(pre["regex"]), pre["byte_encode"], settings["ignore_merges"])


def detect(tok, special_ids=()) -> Tuple[Optional[PreTokenizer], Optional[str]]:
    """(pre-tokenizer, converter name); the name alone when llama.cpp's loader does not know it."""
    name = converter_name(tok, special_ids)
    if name is None:
        return None, None
    return from_name(name), name
