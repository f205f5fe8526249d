"""vLLM block hashes: every vector of tests/data/vllm-hash-vectors.json, byte for byte."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from promptlint import vllm_hash as vh

DATA = json.loads((Path(__file__).parent / "data" / "vllm-hash-vectors.json").read_text(encoding="utf-8"))
VECTORS = DATA["vectors"]


def _needs(algo):
    if "cbor" in algo:
        pytest.importorskip("cbor2")
    if algo.startswith("xxhash"):
        pytest.importorskip("xxhash")


def _vector_id(v):
    parts = [v["algo"], v["tokens"], f"B{v['block_size']}", f"seed={v['seed']}"]
    if v["cache_salt"]:
        parts.append("salt")
    if v.get("lora"):
        parts.append("lora")
    return "-".join(parts)


def test_vector_file_is_complete():
    # 50 vectors over the four algorithms, as the provenance note says; guards against a truncated copy
    assert len(VECTORS) == 50
    assert {v["algo"] for v in VECTORS} == set(vh.ALGORITHMS)
    assert any(v.get("lora") for v in VECTORS)
    assert any(v["seed"] != vh.DEFAULT_SEED for v in VECTORS)
    assert any(v["cache_salt"] for v in VECTORS)


@pytest.mark.parametrize("vec", VECTORS, ids=[_vector_id(v) for v in VECTORS])
def test_vector(vec):
    _needs(vec["algo"])
    ids = DATA["token_lists"][vec["tokens"]]
    assert len(ids) == vec["num_tokens"]
    assert vh.none_hash(vec["algo"], vec["seed"]).hex() == vec["none_hash_hex"]
    got = vh.block_hashes(
        ids,
        vec["block_size"],
        vec["algo"],
        vec["seed"],
        cache_salt=vec["cache_salt"],
        lora=tuple(vec["lora"]) if vec.get("lora") else None,
    )
    assert [h.hex() for h in got] == vec["block_hashes_hex"]


def test_none_hash_default_seed_sanity_value():
    # published alongside the vectors: sha256 NONE_HASH with the default seed
    assert vh.none_hash().hex() == "066b1e8987e027138e98701c46128929378935f9b6cd1549105ae6b4f0d71198"


def test_digest_lengths():
    pytest.importorskip("xxhash")
    assert len(vh.none_hash("sha256")) == 32
    assert len(vh.none_hash("xxhash")) == 16


def test_only_full_blocks_are_hashed():
    ids = list(range(1, 38))  # 37 tokens
    assert len(vh.block_hashes(ids, 16)) == 2
    assert len(vh.block_hashes(ids, 4)) == 9
    assert vh.block_hashes(ids[:15], 16) == []


def test_chain_prefix_property():
    # a block's hash depends only on the tokens up to its end: a longer prompt with the same
    # prefix repeats the earlier hashes, and a change in block 1 changes every later hash
    ids = list(range(100, 164))
    longer = ids + [7, 8, 9, 10]
    assert vh.block_hashes(longer, 16)[:4] == vh.block_hashes(ids, 16)
    changed = ids[:20] + [0] + ids[21:]
    a, b = vh.block_hashes(ids, 16), vh.block_hashes(changed, 16)
    assert a[0] == b[0]
    assert all(x != y for x, y in zip(a[1:], b[1:]))


def test_cache_salt_only_in_first_block_keys():
    assert vh.extra_keys(0, cache_salt="s") == (("cache_salt", "s"),)
    assert vh.extra_keys(16, cache_salt="s") is None
    assert vh.extra_keys(0, cache_salt="") is None  # an empty salt is no salt
    assert vh.extra_keys(16, lora=("a", "/p"), cache_salt="s") == (("lora", "a", "/p"),)
    assert vh.extra_keys(0, lora=("a", "/p"), cache_salt="s") == (("lora", "a", "/p"), ("cache_salt", "s"))


def test_vllm_011_extra_keys_are_untagged():
    assert vh.extra_keys(0, lora_int_id=3, cache_salt="s", vllm_version="0.11") == (3, "s")
    assert vh.extra_keys(4, lora_int_id=3, cache_salt="s", vllm_version="0.11") == (3,)
    # with no extra keys and a fixed seed, 0.11 and 0.33 hash the same tuples
    ids = DATA["token_lists"]["seq_a_10"]
    assert vh.block_hashes(ids, 4, vllm_version="0.11") == vh.block_hashes(ids, 4)
    assert vh.block_hashes(ids, 4, cache_salt="x", vllm_version="0.11") != vh.block_hashes(ids, 4, cache_salt="x")
    with pytest.raises(ValueError):
        vh.block_hashes(ids, 4, "xxhash", vllm_version="0.11")


def test_fingerprints():
    ids = DATA["token_lists"]["seq_a_10"]
    hashes = vh.block_hashes(ids, 4)
    fp = vh.fingerprints(hashes, 4, [4, 8, 12])
    vec = next(v for v in VECTORS if v["algo"] == "sha256" and v["tokens"] == "seq_a_10" and v["block_size"] == 4
               and not v["cache_salt"] and not v.get("lora") and v["seed"] == vh.DEFAULT_SEED)
    assert fp == {4: vec["block_hashes_hex"][0][:16], 8: vec["block_hashes_hex"][1][:16], 12: None}
    with pytest.raises(ValueError):
        vh.fingerprints(hashes, 4, [6])


def test_missing_optional_dependency_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "cbor2", None)  # makes `import cbor2` raise ImportError
    with pytest.raises(vh.HashDependencyError) as e:
        vh.check_available("sha256_cbor")
    assert "cbor2" in str(e.value) and "\n" not in str(e.value)


def test_unknown_algorithm():
    with pytest.raises(ValueError):
        vh.hash_function("md5")
