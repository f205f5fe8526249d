"""vLLM-compatible prefix-cache block hashes (automatic prefix caching, v1 engine).

vLLM names every *full* block of ``block_size`` tokens by a hash chained over all
earlier blocks (vLLM 0.33.0 ``vllm/v1/core/kv_cache_utils.py::hash_block_tokens``)::

    h_0 = H((NONE_HASH, tuple(ids[0:B]),  extra_keys_0))
    h_i = H((h_{i-1},   tuple(ids[iB:(i+1)B]), extra_keys_i))
    NONE_HASH = H(seed)      # seed: PYTHONHASHSEED, else "vllm-none-hash"

``H`` is one of (``vllm/utils/hashing.py``):

- ``sha256``:      sha256(pickle.dumps(obj, protocol=5)).digest()        (32 bytes, the default)
- ``sha256_cbor``: sha256(cbor2.dumps(obj, canonical=True)).digest()     (32 bytes)
- ``xxhash``:      xxh3_128(pickle.dumps(obj, protocol=5)).digest()      (16 bytes)
- ``xxhash_cbor``: xxh3_128(cbor2.dumps(obj, canonical=True)).digest()   (16 bytes)

``extra_keys`` is ``None`` when empty, else a tuple ordered LoRA, multimodal, cache salt,
prompt embeds. Supported here: ``("lora", name, path)`` on every block and
``("cache_salt", salt)`` on the first block only. Multimodal and prompt-embeds keys are not
modelled (text prompts only).

vLLM takes ``HIGHEST_PROTOCOL``, which is 5 on every CPython since 3.8; protocol 5 is pinned
here so a future protocol bump in the interpreter running promptlint cannot change the bytes.

vLLM 0.11 (``vllm_version="0.11"``) differed: the extra keys were untagged (the bare
``lora_int_id`` and the bare salt string), and NONE_HASH was ``os.urandom(32)`` unless
PYTHONHASHSEED was set, so a seed is required to reproduce it; only sha256 and sha256_cbor
existed. That layout is implemented from the release notes of the reference, not checked
against vectors.

``cbor2`` and ``xxhash`` are optional dependencies (``pip install promptlint-kv[hashes]``),
imported only when their algorithm is asked for.
"""

from __future__ import annotations

import hashlib
import pickle
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

ALGORITHMS = ("sha256", "sha256_cbor", "xxhash", "xxhash_cbor")
DEFAULT_ALGORITHM = "sha256"
DEFAULT_SEED = "vllm-none-hash"  # vLLM's DEFAULT_NONE_HASH_SEED (used when PYTHONHASHSEED is unset)
VLLM_VERSIONS = ("0.33", "0.11")
DEFAULT_VLLM_VERSION = "0.33"
PICKLE_PROTOCOL = 5

HashFn = Callable[[Any], bytes]


class HashDependencyError(Exception):
    """An optional package needed for the chosen algorithm is missing (one-line message)."""


def _pickle(obj: Any) -> bytes:
    return pickle.dumps(obj, protocol=PICKLE_PROTOCOL)


def _cbor(obj: Any) -> bytes:
    try:
        import cbor2
    except ImportError:
        raise HashDependencyError(
            "the cbor hash algorithms need the `cbor2` package; install it with "
            "`pip install 'promptlint-kv[hashes]'`"
        ) from None
    return cbor2.dumps(obj, canonical=True)


def _xxh3_128(data: bytes) -> bytes:
    try:
        import xxhash
    except ImportError:
        raise HashDependencyError(
            "the xxhash algorithms need the `xxhash` package; install it with "
            "`pip install 'promptlint-kv[hashes]'`"
        ) from None
    return xxhash.xxh3_128_digest(data)


def hash_function(algo: str) -> HashFn:
    """The object -> digest function vLLM uses for ``--prefix-caching-hash-algo algo``."""
    if algo == "sha256":
        return lambda obj: hashlib.sha256(_pickle(obj)).digest()
    if algo == "sha256_cbor":
        return lambda obj: hashlib.sha256(_cbor(obj)).digest()
    if algo == "xxhash":
        return lambda obj: _xxh3_128(_pickle(obj))
    if algo == "xxhash_cbor":
        return lambda obj: _xxh3_128(_cbor(obj))
    raise ValueError(f"unknown hash algorithm {algo!r}; choose one of {', '.join(ALGORITHMS)}")


def check_available(algo: str) -> None:
    """Raise HashDependencyError now (not mid-way) if ``algo`` needs a missing package."""
    hash_function(algo)(None)


def none_hash(algo: str = DEFAULT_ALGORITHM, seed: str = DEFAULT_SEED) -> bytes:
    """The parent hash of the first block: ``H(seed)`` with ``seed`` a str."""
    return hash_function(algo)(seed)


def extra_keys(
    start_token_idx: int,
    *,
    lora: Optional[Tuple[str, str]] = None,
    lora_int_id: Optional[int] = None,
    cache_salt: Optional[str] = None,
    vllm_version: str = DEFAULT_VLLM_VERSION,
) -> Optional[tuple]:
    """Extra keys of the block starting at ``start_token_idx`` (``None`` when there are none)."""
    keys: List[Any] = []
    if vllm_version == "0.11":
        if lora_int_id is not None:
            keys.append(lora_int_id)
        if start_token_idx == 0 and cache_salt:
            keys.append(cache_salt)
    else:
        if lora is not None:
            keys.append(("lora", lora[0], lora[1]))
        if start_token_idx == 0 and cache_salt:
            keys.append(("cache_salt", cache_salt))
    return tuple(keys) if keys else None


def block_hashes(
    ids: Sequence[int],
    block_size: int = 16,
    algo: str = DEFAULT_ALGORITHM,
    seed: str = DEFAULT_SEED,
    *,
    cache_salt: Optional[str] = None,
    lora: Optional[Tuple[str, str]] = None,
    lora_int_id: Optional[int] = None,
    vllm_version: str = DEFAULT_VLLM_VERSION,
) -> List[bytes]:
    """Chained hashes of every full block of ``ids`` (a trailing partial block has none)."""
    if block_size < 1:
        raise ValueError("block size must be >= 1")
    if vllm_version not in VLLM_VERSIONS:
        raise ValueError(f"unsupported vLLM version {vllm_version!r}; choose one of {', '.join(VLLM_VERSIONS)}")
    if vllm_version == "0.11" and algo not in ("sha256", "sha256_cbor"):
        raise ValueError(f"vLLM 0.11 has no {algo!r} algorithm; use sha256 or sha256_cbor")
    h = hash_function(algo)
    parent = h(seed)
    out: List[bytes] = []
    for start in range(0, len(ids) // block_size * block_size, block_size):
        block = tuple(int(t) for t in ids[start : start + block_size])
        keys = extra_keys(
            start, lora=lora, lora_int_id=lora_int_id, cache_salt=cache_salt, vllm_version=vllm_version
        )
        parent = h((parent, block, keys))
        out.append(parent)
    return out


FINGERPRINT_HEX = 16  # 64 bits: enough to join log lines, too short to be a useful block id


def fingerprints(
    hashes: Sequence[bytes], block_size: int, checkpoints: Sequence[int], hex_chars: int = FINGERPRINT_HEX
) -> Dict[int, Optional[str]]:
    """Short fingerprint of the prefix at each checkpoint (a token count, a multiple of B).

    The fingerprint at N tokens is the leading ``hex_chars`` of the chained hash of the block
    that ends at token N, so it covers every token (and the salt/LoRA keys) before N. ``None``
    when the prompt has fewer than N tokens.
    """
    out: Dict[int, Optional[str]] = {}
    for n in checkpoints:
        if n <= 0 or n % block_size:
            raise ValueError(f"checkpoint {n} is not a positive multiple of the block size {block_size}")
        k = n // block_size
        out[n] = hashes[k - 1].hex()[:hex_chars] if k <= len(hashes) else None
    return out
