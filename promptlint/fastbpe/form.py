"""The compact form of a BPE tokenizer.json: what `tokenizers` needs to rebuild the same tokenizer
without parsing megabytes of JSON.

`Tokenizer.from_str` spends most of its time deserializing the merges (serde's untagged
enum for the two spellings of a merge buffers every entry); the vocabulary and merges are
stored here as NUL-separated token texts in id order and merge pairs as little-endian uint32
ids, and `tokenizers.models.BPE` is built from them directly. Everything else (normalizer,
pre-tokenizer, post-processor, decoder, the model's options, the added tokens) is the file's
own JSON with the two big tables emptied: the "shell", a few kilobytes.

Layout: MAGIC, the sha256 of the rest, then the rest: one header line (JSON: the source
tokenizer.json's sha256 and size, the `tokenizers` version it was proven with, the three part
sizes) and the three parts. A form whose digest, source or `tokenizers` version does not match
is never used.
"""

from __future__ import annotations

import hashlib
import json
import sys
from array import array
from typing import Dict, List, Optional, Tuple

MAGIC = b"promptlint-bpe 1\n"
MODEL_OPTIONS = ("dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk",
                 "byte_fallback", "ignore_merges")


class Parts:
    """A compact form read back: header fields, the shell (dict), token texts in id order, merge ids."""

    def __init__(self, header: Dict, shell: Dict, vocab: List[str], merges: array):
        self.header, self.shell, self.vocab, self.merges = header, shell, vocab, merges

    @property
    def source_sha256(self) -> str:
        return self.header["source_sha256"]

    @property
    def source_bytes(self) -> int:
        return int(self.header["source_bytes"])


def tokenizers_version() -> str:
    import tokenizers

    return tokenizers.__version__


def vetting_list() -> str:
    """Which list of known regexes a form was vetted against (a form stands for a vetted file only
    under the same list)."""
    from promptlint.tokenization.tokenizer_vetting import KNOWN_PATTERNS

    return hashlib.sha256("\0".join(sorted(KNOWN_PATTERNS)).encode("utf-8")).hexdigest()[:16]


def ineligible(data: Dict) -> Optional[str]:
    """Why this parsed tokenizer.json cannot have a compact form (None: it can). Only a
    deterministic BPE model whose regexes are the known families' (promptlint.tokenization.tokenizer_vetting:
    the proof runs them), with a dense vocabulary and no truncation or padding."""
    from promptlint.tokenization.tokenizer_vetting import unknown_patterns

    model = data.get("model")
    if not isinstance(model, dict) or model.get("type") != "BPE":
        return "not a BPE model"
    if model.get("dropout") not in (None, 0, 0.0):
        return "BPE dropout is random"
    if data.get("truncation") is not None or data.get("padding") is not None:
        return "truncation or padding"
    vocab, merges = model.get("vocab"), model.get("merges")
    if not isinstance(vocab, dict) or not isinstance(merges, list) or not vocab:
        return "no vocabulary"
    if sorted(vocab.values()) != list(range(len(vocab))):
        return "vocabulary ids are not 0..n-1"
    if any("\0" in token for token in vocab):
        return "a token holds NUL"
    if unknown_patterns(json.dumps(_shell(data))):
        return "regexes outside the known families"
    return None


def _shell(data: Dict) -> Dict:
    return dict(data, model=dict(data["model"], vocab={}, merges=[]))


def _pairs(merges: list) -> List[Tuple[str, str]]:
    out = []
    for merge in merges:
        if isinstance(merge, str):
            a, sep, b = merge.partition(" ")
            if not sep:
                raise ValueError("a merge without a space")
            out.append((a, b))
        else:
            a, b = merge
            out.append((a, b))
    return out


def encode(data: Dict, source_sha256: str, source_bytes: int) -> bytes:
    """The compact form of an eligible parsed tokenizer.json (``ineligible(data)`` is None)."""
    vocab = data["model"]["vocab"]
    tokens = [""] * len(vocab)
    for token, i in vocab.items():
        tokens[i] = token
    # KeyError: a merge of an unknown token, which tokenizers refuses too
    ids = array("I", [vocab[t] for pair in _pairs(data["model"]["merges"]) for t in pair])
    if sys.byteorder != "little":
        ids.byteswap()
    shell = json.dumps(_shell(data), ensure_ascii=False).encode("utf-8")
    table = "\0".join(tokens).encode("utf-8")
    merges = ids.tobytes()
    header = {"source_sha256": source_sha256, "source_bytes": source_bytes, "tokenizers": tokenizers_version(),
              "vetting": vetting_list(), "sizes": [len(shell), len(table), len(merges)]}
    rest = json.dumps(header).encode("utf-8") + b"\n" + shell + table + merges
    return MAGIC + hashlib.sha256(rest).digest() + rest


def decode(blob: bytes) -> Optional[Parts]:
    """The parts of a compact form, or None when it is not one or its digest does not match (a
    truncated, corrupted or edited file)."""
    start = len(MAGIC) + 32
    if not blob.startswith(MAGIC) or len(blob) < start or hashlib.sha256(blob[start:]).digest() != blob[len(MAGIC):start]:
        return None
    try:
        end = blob.index(b"\n", start)
        header = json.loads(blob[start:end])
        a, b, c = (int(n) for n in header["sizes"])
        body = memoryview(blob)[end + 1:]
        if len(body) != a + b + c or c % 8:
            return None
        shell = json.loads(bytes(body[:a]))
        vocab = bytes(body[a:a + b]).decode("utf-8").split("\0")
        merges = array("I")
        merges.frombytes(body[a + b:])
        if sys.byteorder != "little":
            merges.byteswap()
        str(header["source_sha256"]), int(header["source_bytes"])
        return Parts(header, shell, vocab, merges)
    except (ValueError, KeyError, TypeError):
        return None


def build(parts: Parts):
    """A `tokenizers.Tokenizer` from the parts: the BPE model from the tables, every other
    component from the shell, the added tokens in id order (tokenizers numbers a new one after
    the largest id it holds). Raises on anything tokenizers refuses (an old version without an
    option, a merge of an unknown id)."""
    from tokenizers import AddedToken, Tokenizer
    from tokenizers.models import BPE

    vocab_list = parts.vocab
    token = vocab_list.__getitem__
    merges = list(zip(map(token, parts.merges[0::2]), map(token, parts.merges[1::2])))
    m = parts.shell["model"]
    options = {k: m[k] for k in MODEL_OPTIONS if m.get(k) is not None}
    tok = Tokenizer(BPE(dict(zip(vocab_list, range(len(vocab_list)))), merges, **options))
    skeleton = Tokenizer.from_str(json.dumps(dict(parts.shell, added_tokens=[])))
    for name in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        component = getattr(skeleton, name)
        if component is not None:
            setattr(tok, name, component)
    run: List = []
    for t in sorted(parts.shell.get("added_tokens") or [], key=lambda t: t["id"]):
        added = AddedToken(t["content"], single_word=t.get("single_word", False), lstrip=t.get("lstrip", False),
                           rstrip=t.get("rstrip", False), normalized=t.get("normalized", True), special=t.get("special", False))
        if run and run[-1].special != added.special:
            _add(tok, run)
            run = []
        run.append(added)
    _add(tok, run)
    return tok


def _add(tok, run: List) -> None:
    if run:
        (tok.add_special_tokens if run[0].special else tok.add_tokens)(run)
