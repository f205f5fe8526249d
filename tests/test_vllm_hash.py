"""vLLM block hashes: every vector of tests/data/vllm-hash-vectors.json, byte for byte."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from promptlint.arithmetic import vllm_hash as vh

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


# --- `promptlint hashes` ------------------------------------------------------------------------

from promptlint.cli import main  # noqa: E402

QWEN = Path(__file__).parent / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"


def _vec(algo="sha256", tokens="seq_c_37", block_size=4, salt=None, lora=False):
    return next(
        v for v in VECTORS
        if v["algo"] == algo and v["tokens"] == tokens and v["block_size"] == block_size
        and v["cache_salt"] == salt and bool(v.get("lora")) == lora and v["seed"] == vh.DEFAULT_SEED
    )


def _ids_file(tmp_path, name):
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(DATA["token_lists"][name]))
    return str(p)


def _run(capsys, *argv):
    rc = main(["hashes", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_json_matches_vector(tmp_path, capsys):
    v = _vec(salt="my-salt")
    rc, out, _ = _run(capsys, _ids_file(tmp_path, "seq_c_37"), "--block-size", "4", "--cache-salt", "my-salt",
                      "--output-format", "json")
    assert rc == 0
    r = json.loads(out)
    assert (r["block_size"], r["hash_algo"], r["hashes"]) == (4, "sha256", v["block_hashes_hex"])


def test_cli_lora_matches_vector(tmp_path, capsys):
    v = next(v for v in VECTORS if v.get("lora"))
    rc, out, _ = _run(capsys, _ids_file(tmp_path, v["tokens"]), "--block-size", str(v["block_size"]),
                      "--lora-name", v["lora"][0], "--lora-path", v["lora"][1], "--output-format", "json")
    assert rc == 0 and json.loads(out)["hashes"] == v["block_hashes_hex"]


def test_cli_seed_matches_vector(tmp_path, capsys):
    v = next(v for v in VECTORS if v["seed"] == "0")
    rc, out, _ = _run(capsys, _ids_file(tmp_path, v["tokens"]), "--block-size", str(v["block_size"]),
                      "--hash-seed", "0", "--output-format", "json")
    assert rc == 0 and json.loads(out)["hashes"] == v["block_hashes_hex"]


def test_cli_xxhash_notes_the_random_engine_seed(tmp_path, capsys):
    pytest.importorskip("xxhash")
    v = _vec("xxhash", block_size=16)
    rc, out, err = _run(capsys, _ids_file(tmp_path, "seq_c_37"), "--hash-algo", "xxhash", "--output-format", "json")
    assert rc == 0 and json.loads(out)["hashes"] == v["block_hashes_hex"]
    assert "PYTHONHASHSEED" in err


def test_cli_full_output_lines(tmp_path, capsys):
    v = _vec(block_size=16)
    rc, out, err = _run(capsys, _ids_file(tmp_path, "seq_c_37"))
    assert rc == 0
    assert out.splitlines() == ["block\tend_token\thash", f"0\t16\t{v['block_hashes_hex'][0]}",
                                f"1\t32\t{v['block_hashes_hex'][1]}"]
    assert "last 5 token(s)" in err


def test_cli_checkpoints(tmp_path, capsys):
    v = _vec(block_size=4)
    rc, out, _ = _run(capsys, _ids_file(tmp_path, "seq_c_37"), "--block-size", "4", "--checkpoints", "8,36,40",
                      "--output-format", "json")
    assert rc == 0
    r = json.loads(out)
    assert r["checkpoints"] == {"8": v["block_hashes_hex"][1][:16], "36": v["block_hashes_hex"][8][:16], "40": None}


def test_cli_text_input_hashes_the_tokenizer_ids(tmp_path, capsys):
    from tokenizers import Tokenizer

    text = "<|im_start|>system\nYou are a careful assistant who answers in one sentence.<|im_end|>\n" * 3
    p = tmp_path / "prompt.txt"
    p.write_text(text)
    ids = Tokenizer.from_file(str(QWEN)).encode(text, add_special_tokens=False).ids
    rc, out, _ = _run(capsys, str(p), "--tokenizer", str(QWEN), "--output-format", "json")
    assert rc == 0
    r = json.loads(out)
    assert r["prompt_tokens"] == len(ids) and len(r["hashes"]) == len(ids) // 16
    assert r["hashes"] == [h.hex() for h in vh.block_hashes(ids, 16)]


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--checkpoints", "10"], "not a multiple of the block size 16"),
        (["--checkpoints", "x"], "not a positive token count"),
        (["--lora-name", "a"], "--lora-name and --lora-path go together"),
        (["--vllm-version", "0.11"], "pass the engine's PYTHONHASHSEED as --hash-seed"),
        (["--vllm-version", "0.11", "--hash-seed", "0", "--hash-algo", "xxhash"], "only sha256 and sha256_cbor"),
        (["--lora-id", "3"], "--lora-id is for --vllm-version 0.11"),
        (["--block-size", "0"], "must be a positive number"),
    ],
)
def test_cli_usage_errors_are_one_line(tmp_path, capsys, argv, needle):
    rc, out, err = _run(capsys, _ids_file(tmp_path, "seq_a_10"), *argv)
    assert rc == 2 and out == ""
    assert needle in err and err.count("\n") == 1


def test_cli_missing_optional_dependency(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "xxhash", None)
    rc, _, err = _run(capsys, _ids_file(tmp_path, "seq_a_10"), "--hash-algo", "xxhash")
    assert rc == 2 and "promptlint-kv[hashes]" in err and err.count("\n") == 1
