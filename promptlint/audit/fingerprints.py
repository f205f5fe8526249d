"""Keyed, chained fingerprints of token chunks, and digests of template inputs.

``fp_i = H_key(fp_{i-1} || tokens[g*i : g*(i+1)])`` with H = BLAKE2b-64 keyed by a local
secret. A fingerprint names a whole prefix, so two requests share their first k chunks
exactly when their k-th fingerprints are equal. Without the key nobody can test a guessed
prompt against a fingerprint, which is why the key stays local (see docs/audit.md).

Fingerprints are 16-character lowercase hex strings: the form accepted in `block_fp`,
`checkpoints` and produced by :func:`chain_hex`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from typing import Any, Dict, Iterable, List, Optional, Sequence

CHECKPOINT_TOKENS = (16, 64, 256, 1024)
DEFAULT_CHUNK = 16
ROOT = "0" * 16  # parent of the first chunk


def new_key() -> bytes:
    """A fresh random key: fingerprints are only comparable within one run."""
    return os.urandom(32)


def load_key(path: Optional[str]) -> bytes:
    """Key from a file (raw bytes, at most 64 used), or a fresh random key when no path."""
    if not path:
        return new_key()
    from promptlint.doors import bounded_io

    data = b""
    with bounded_io.open_stream(path) as f:
        while len(data) < 64:  # what is used: a key file is never read further (a pipe may give less per read)
            more = f.read(64 - len(data))
            if not more:
                break
            data += more
    if len(data) < 16:
        raise ValueError(f"{path}: fingerprint key must be at least 16 bytes")
    return data[:64]


def _chunk_bytes(chunk: Sequence[int]) -> bytes:
    a = array("I", chunk)
    if sys.byteorder == "big":  # fingerprints must not depend on the machine
        a.byteswap()
    return a.tobytes()


def chain_hex(token_ids: Sequence[int], chunk: int, key: bytes, partial: bool = False,
              parent: str = ROOT) -> List[str]:
    """Chained fingerprints of the full ``chunk``-token chunks (and the partial tail if asked)."""
    out: List[str] = []
    prev = bytes.fromhex(parent)
    n = len(token_ids)
    end = n if partial else n - n % chunk
    for start in range(0, end, chunk):
        h = hashlib.blake2b(prev, digest_size=8, key=key)
        h.update(_chunk_bytes(token_ids[start : start + chunk]))
        prev = h.digest()
        out.append(prev.hex())
    return out


def chain_ids_hex(ids: Iterable[Any], key: bytes) -> List[str]:
    """Chain per-block ids (Mooncake/Alibaba ``hash_ids``, not chained themselves)."""
    out: List[str] = []
    prev = bytes.fromhex(ROOT)
    for x in ids:
        h = hashlib.blake2b(prev, digest_size=8, key=key)
        h.update(str(x).encode("utf-8", "surrogatepass"))  # opaque ids: any string is data
        prev = h.digest()
        out.append(prev.hex())
    return out


def checkpoints_hex(token_ids: Sequence[int], key: bytes, chunk: int = DEFAULT_CHUNK) -> Dict[str, str]:
    """Fingerprints of the first 16/64/256/1024 tokens (those the prompt has): the chain
    fingerprints at those positions, so checkpoint rows can be compared with full rows."""
    fps = chain_hex(token_ids[: max(CHECKPOINT_TOKENS)], chunk, key)
    return {str(n): fps[n // chunk - 1] for n in CHECKPOINT_TOKENS if n <= len(token_ids) and n % chunk == 0}


def normalise_fp(x: Any) -> str:
    if isinstance(x, int):
        return "%016x" % (x & 0xFFFFFFFFFFFFFFFF)
    return x


# --- template inputs -------------------------------------------------------------------

_ORDER_FREE_KEYS = ("tools", "functions", "documents")


def _tool_name(t: Any) -> str:
    if isinstance(t, dict):
        fn = t.get("function") if isinstance(t.get("function"), dict) else t
        return str(fn.get("name", "")) + json.dumps(t, sort_keys=True, default=str)
    return json.dumps(t, sort_keys=True, default=str)


def canonical(inputs: Any) -> Any:
    """Canonical form of captured template inputs: tools/functions/documents in a stable
    order (by name, then content). JSON keys are sorted when the digest is taken. Message
    order is kept: conversation order is content, not serialization."""
    if not isinstance(inputs, dict):
        return inputs
    out = dict(inputs)
    for k in _ORDER_FREE_KEYS:
        if isinstance(out.get(k), list):
            out[k] = sorted(out[k], key=_tool_name)
    return out


def digest(obj: Any, key: bytes, sort_keys: bool) -> str:
    text = json.dumps(obj, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False, default=str)
    # surrogatepass: a lone surrogate in logged inputs (a UTF-16 string cut mid-pair) is data, not an error
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8, key=key).hexdigest()


def template_digests(inputs: Any, key: bytes) -> Dict[str, str]:
    """Raw digest (as serialized: key order kept) and canonical digest (sorted keys, stable tools)."""
    return {"raw": digest(inputs, key, sort_keys=False), "canonical": digest(canonical(inputs), key, sort_keys=True)}
