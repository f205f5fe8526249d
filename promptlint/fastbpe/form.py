"""The compact form of a BPE tokenizer.json: what promptlint needs to tokenize exactly as
`tokenizers` does without parsing megabytes of JSON or building the Rust BPE model.

`Tokenizer.from_str` spends most of its time deserializing the merges, and building
`tokenizers.models.BPE` from Python objects still converts them one by one (~0.4 s for
cl100k's 233k merges). The form holds the tables in the layout each user reads directly:

- shell: the file's JSON with the vocabulary and merges emptied (normalizer, pre-tokenizer,
  post-processor, decoder, model options, added tokens), a few kilobytes;
- tiny: the same with a vocabulary of the 256 byte-level characters and the added tokens at
  their own ids, and no merges: `tokenizers` builds it in milliseconds, and it normalizes,
  splits out added tokens and pre-tokenizes exactly as the file does (promptlint.fastbpe.engine
  merges its byte tokens);
- table and starts: token texts in id order, NUL-separated, and where each starts (uint32);
- keys and vals: the merge table sorted by pair, ``left << 32 | right`` -> ``rank << 32 |
  new id`` (uint64, binary searched in place: nothing is built at load);
- vhash: ``crc32(token) << 32 | id`` sorted, the vocabulary's lookup without a dict.

Layout: MAGIC, the CRC-32 of the rest, then the rest: one header line (JSON: the source
tokenizer.json's sha256 and size, the `tokenizers` version it was proven with, the vetting list,
the part sizes, the engine's verdict) and the parts. A form whose checksum, sizes, source or
`tokenizers` version does not match is never used.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zlib
from array import array
from itertools import accumulate, islice, repeat
from operator import and_, eq, rshift
from typing import Dict, List, Optional, Sequence, Tuple

MAGIC = b"promptlint-bpe 2\n"
PARTS = ("shell", "tiny", "table", "starts", "keys", "vals", "vhash")
_WIDTH = {"starts": 4, "keys": 8, "vals": 8, "vhash": 8}
_MASK64 = (1 << 64) - 1
MODEL_OPTIONS = ("dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk",
                 "byte_fallback", "ignore_merges")


def byte_alphabet() -> List[str]:
    """GPT-2's byte-level alphabet: the character standing for each byte 0..255 (tokenizers'
    ByteLevel pre-tokenizer and decoder use the same table). A new list each call, made once per
    process (a cold run's first decode asks for it)."""
    if not _ALPHABET:
        keep = {*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)}
        chars, extra = {}, 0
        for b in range(256):
            if b in keep:
                chars[b] = chr(b)
            else:
                chars[b] = chr(256 + extra)
                extra += 1
        _ALPHABET.extend(chars[b] for b in range(256))
    return list(_ALPHABET)


_ALPHABET: List[str] = []


class Parts:
    """A compact form read back: the header and views of its parts (nothing copied or split
    until asked for)."""

    def __init__(self, header: Dict, views: Dict[str, memoryview]):
        self.header, self.views = header, views
        self._shell: Optional[Dict] = None
        self._vocab: Optional[List[str]] = None

    @property
    def source_sha256(self) -> str:
        return self.header["source_sha256"]

    @property
    def source_bytes(self) -> int:
        return int(self.header["source_bytes"])

    @property
    def shell(self) -> Dict:
        if self._shell is None:
            self._shell = json.loads(bytes(self.views["shell"]))
        return self._shell

    @property
    def vocab(self) -> List[str]:
        """Token texts in id order (split once, when the Rust model is built from the form)."""
        if self._vocab is None:
            self._vocab = bytes(self.views["table"]).decode("utf-8").split("\0")
        return self._vocab

    def merges(self) -> List[Tuple[str, str]]:
        """The merges in rank order, as pairs of token texts (one pass over the tables: building
        the Rust model from the form converts them all). IndexError: ranks that are not 0..n-1."""
        vocab, keys, vals = self.vocab, self.views["keys"], self.views["vals"]
        out: List = [None] * len(keys)
        for key, val in zip(keys, vals):
            out[val >> 32] = (vocab[key >> 32], vocab[key & 0xFFFFFFFF])
        return out


def tokenizers_version() -> str:
    from promptlint.fastbpe import native  # the extension alone: a cold run needs no more of the package

    return native.module().__version__


def vetting_list() -> str:
    """Which list of known regexes a form was vetted against (a form stands for a vetted file only
    under the same list)."""
    from promptlint.tokenization.tokenizer_vetting import KNOWN_PATTERNS

    return hashlib.sha256("\0".join(sorted(KNOWN_PATTERNS)).encode("utf-8")).hexdigest()[:16]


def ineligible(data: Dict) -> Optional[str]:
    """Why this parsed tokenizer.json cannot have a compact form (None: it can). Only a
    deterministic BPE model whose regexes are the known families' (promptlint.tokenization.tokenizer_vetting:
    the proof runs them), with a dense vocabulary, no repeated merge and no truncation or padding."""
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


def _tiny(data: Dict) -> Dict:
    """The shell with a model that knows only the byte-level characters (at their ids in the
    file's vocabulary, where it has them) and the added tokens (at theirs), and merges nothing."""
    vocab = data["model"]["vocab"]
    small = {c: vocab[c] for c in byte_alphabet() if c in vocab}
    for t in data.get("added_tokens") or []:
        small[t["content"]] = t["id"]
    return dict(data, model=dict(data["model"], vocab=small, merges=[], ignore_merges=False, dropout=None))


def _pairs(merges: list) -> List[Sequence[str]]:
    """The merges as (left, right) pairs: today's files write each as a two-item list, taken as
    they are (unpacking one of another length raises, as below); older ones as "left right"."""
    if all(type(merge) is list for merge in merges):
        return merges
    out: List[Sequence[str]] = []
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


def _little(values: array) -> bytes:
    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _merge_table(vocab: Dict[str, int], pairs: List[Sequence[str]]) -> Tuple[array, array]:
    """keys and vals: ``left << 32 | right`` -> ``rank << 32 | new id``, sorted by key. KeyError: a
    merge of an unknown token, which tokenizers refuses too."""
    # each entry key << 64 | val in one int, sorted once and split: 10-20% less than a dict keyed by
    # the pairs (whose hashes, the keys' low bits, are the right ids: they collide) sorted and looked
    # up again; most of what is left is the three vocabulary lookups per merge
    entries = sorted([(vocab[a] << 32 | vocab[b]) << 64 | rank << 32 | vocab[a + b] for rank, (a, b) in enumerate(pairs)])
    keys = array("Q", map(rshift, entries, repeat(64)))
    if not any(map(eq, keys, islice(keys, 1, None))):
        return keys, array("Q", map(and_, entries, repeat(_MASK64)))
    # a repeated pair keeps its last rank, as tokenizers' map does (and the rebuilt model is then refused)
    merge_map: Dict[int, int] = dict(zip([vocab[a] << 32 | vocab[b] for a, b in pairs],
                                         [rank << 32 | vocab[a + b] for rank, (a, b) in enumerate(pairs)]))
    keys = array("Q", sorted(merge_map))
    return keys, array("Q", map(merge_map.__getitem__, keys))


def encode(data: Dict, source_sha256: str, source_bytes: int, engine: Optional[Dict] = None,
           extra: Optional[Dict] = None) -> bytes:
    """The compact form of an eligible parsed tokenizer.json (``ineligible(data)`` is None), with
    the engine's verdict (``engine``: what promptlint.fastbpe.engine was proven with, None: not)
    and what its maker records about it (``extra``: plain JSON, under the same checksum)."""
    vocab = data["model"]["vocab"]
    tokens = [""] * len(vocab)
    for token, i in vocab.items():
        tokens[i] = token
    table = "\0".join(tokens).encode("utf-8")
    encoded = [t.encode("utf-8") for t in tokens]
    starts = array("I", [0])
    starts.extend(accumulate(len(t) + 1 for t in encoded))
    keys, vals = _merge_table(vocab, _pairs(data["model"]["merges"]))
    crcs = list(map(zlib.crc32, encoded))
    vhash = array("Q", sorted([crc << 32 | i for i, crc in enumerate(crcs)]))
    body = {
        "shell": json.dumps(_shell(data), ensure_ascii=False).encode("utf-8"),
        "tiny": json.dumps(_tiny(data), ensure_ascii=False).encode("utf-8"),
        "table": table, "starts": _little(starts), "keys": _little(keys), "vals": _little(vals), "vhash": _little(vhash),
    }
    header = {"source_sha256": source_sha256, "source_bytes": source_bytes, "tokenizers": tokenizers_version(),
              "vetting": vetting_list(), "sizes": [len(body[p]) for p in PARTS], "engine": engine}
    if extra is not None:
        header["extra"] = extra
    rest = json.dumps(header).encode("utf-8") + b"\n" + b"".join(body[p] for p in PARTS)
    return MAGIC + zlib.crc32(rest).to_bytes(4, "little") + rest


def checksum(blob) -> Optional[int]:
    """The CRC-32 a form's bytes say they have (None: not a form)."""
    start = len(MAGIC) + 4
    if blob[:len(MAGIC)] != MAGIC or len(blob) < start:
        return None
    return int.from_bytes(blob[len(MAGIC):start], "little")


def decode(blob, verified: bool = False) -> Optional[Parts]:
    """The parts of a compact form (``bytes``, or a read-only ``mmap`` of its file: the parts are
    views of it), or None when it is not one or its checksum or sizes do not match (a truncated,
    corrupted or edited file). ``verified``: these very bytes had their checksum computed and
    matched before (promptlint.fastbpe.store keeps that per file state): not computed again."""
    start = len(MAGIC) + 4
    said = checksum(blob)
    if said is None or (not verified and zlib.crc32(memoryview(blob)[start:]) != said):
        return None
    try:
        end = blob.find(b"\n", start)
        if end < 0:
            return None
        header = json.loads(blob[start:end])
        sizes = [int(n) for n in header["sizes"]]
        body = memoryview(blob)[end + 1:]
        if len(sizes) != len(PARTS) or len(body) != sum(sizes) or min(sizes) < 0:
            return None
        views, at = {}, 0
        for name, size in zip(PARTS, sizes):
            view = body[at:at + size]
            at += size
            if name in _WIDTH:
                if size % _WIDTH[name]:
                    return None
                view = _native(view, "I" if _WIDTH[name] == 4 else "Q")
            views[name] = view
        if len(views["keys"]) != len(views["vals"]) or len(views["starts"]) != len(views["vhash"]) + 1:
            return None
        str(header["source_sha256"]), int(header["source_bytes"])
        return Parts(header, views)
    except (ValueError, KeyError, TypeError):
        return None


def _native(view: memoryview, code: str):
    """A little-endian table as indexable integers: the bytes themselves on a little-endian
    machine (memoryview.cast: no copy), a swapped copy elsewhere."""
    if sys.byteorder == "little":
        return view.cast("B").cast(code)
    values = array(code)
    values.frombytes(view)
    values.byteswap()
    return values


def build(parts: Parts, model=None):
    """A `tokenizers.Tokenizer` from the parts: the BPE model from the tables (or ``model``, one
    built from these parts before: shared, not copied), every other component from the shell, the
    added tokens in id order (tokenizers numbers a new one after the largest id it holds). Raises on
    anything tokenizers refuses (an old version without an option, a merge of an unknown id)."""
    from tokenizers import AddedToken, Tokenizer

    tok = Tokenizer(model if model is not None else _model(parts))
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


def _model(parts: Parts):
    from tokenizers.models import BPE

    vocab_list = parts.vocab
    m = parts.shell["model"]
    options = {k: m[k] for k in MODEL_OPTIONS if m.get(k) is not None}
    return BPE(dict(zip(vocab_list, range(len(vocab_list)))), parts.merges(), **options)


def _add(tok, run: List) -> None:
    if run:
        (tok.add_special_tokens if run[0].special else tok.add_tokens)(run)
