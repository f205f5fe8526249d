"""`promptlint hashes INPUT`: vLLM prefix-cache block hashes of a captured prompt.

Standard library only at module level; everything else is imported inside run().
"""

from __future__ import annotations

import argparse
import json
import sys

HELP = "print the vLLM block hashes of a captured prompt (or short prefix fingerprints)"
ALGORITHMS = ("sha256", "sha256_cbor", "xxhash", "xxhash_cbor")


def add_parser(subparsers) -> argparse.ArgumentParser:
    from promptlint.commands.diff import add_input_options  # stdlib-only module, like this one

    p = subparsers.add_parser(
        "hashes",
        help=HELP,
        description=HELP[:1].upper() + HELP[1:] + ", computed as vLLM's automatic prefix caching names its blocks. "
        "Text output starts with a header line naming the tab-separated columns.",
    )
    p.add_argument("input", metavar="INPUT", help="rendered prompt (text), JSON array of token ids, or request body; - for stdin")
    add_input_options(p)
    p.add_argument("--block-size", type=int, default=16, metavar="N", help="vLLM block size (default 16)")
    p.add_argument(
        "--hash-algo", choices=ALGORITHMS, default="sha256",
        help="vLLM --prefix-caching-hash-algo (default sha256; the others need `pip install 'promptlint-kv[hashes]'`)",
    )
    p.add_argument("--cache-salt", metavar="SALT", help="the request's cache_salt (enters the first block only)")
    p.add_argument("--lora-name", metavar="NAME", help="LoRA adapter name (with --lora-path)")
    p.add_argument("--lora-path", metavar="PATH", help="LoRA adapter path as registered with the engine")
    p.add_argument("--lora-id", type=int, metavar="N", help="LoRA int id (only for --vllm-version 0.11)")
    p.add_argument(
        "--hash-seed", metavar="SEED",
        help="the engine's PYTHONHASHSEED (vLLM seeds its first-block parent hash with it; "
        "default: vLLM's fallback \"vllm-none-hash\", which the engine uses for sha256/sha256_cbor only)",
    )
    p.add_argument("--vllm-version", choices=("0.33", "0.11"), default="0.33", help="block-hash layout (default 0.33)")
    p.add_argument(
        "--checkpoints", metavar="N,N,...",
        help="print a short fingerprint of the prefix at these token counts (multiples of the block size), "
        "e.g. 16,64,256,1024",
    )
    p.add_argument("--output-format", choices=("full", "json"), default="full", help="output format (default full)")
    return p


def _parse_checkpoints(value: str, block_size: int):
    from promptlint.commands import UsageError

    out = []
    for part in value.split(","):
        part = part.strip().replace("_", "")
        if not part:
            continue
        if not part.isdigit() or int(part) <= 0:
            raise UsageError(f"--checkpoints {value!r}: {part!r} is not a positive token count; e.g. 16,64,256,1024")
        n = int(part)
        if n % block_size:
            raise UsageError(
                f"--checkpoints: {n} is not a multiple of the block size {block_size}; vLLM hashes whole blocks only"
            )
        out.append(n)
    if not out:
        raise UsageError("--checkpoints: empty list; e.g. 16,64,256,1024")
    return sorted(set(out))


def run(args) -> int:
    from promptlint.commands import UsageError
    from promptlint.operators.captured import InputError, check_vocabulary, load_side
    from promptlint.commands.diff import settings_from_args
    from promptlint.arithmetic import vllm_hash as vh

    if args.block_size < 1:
        raise UsageError(f"--block-size {args.block_size}: must be a positive number of tokens")
    if (args.lora_name is None) != (args.lora_path is None) and args.vllm_version != "0.11":
        raise UsageError("--lora-name and --lora-path go together: vLLM keys a LoRA block by (name, path)")
    if args.vllm_version == "0.11":
        if args.hash_algo not in ("sha256", "sha256_cbor"):
            raise UsageError(f"--hash-algo {args.hash_algo}: vLLM 0.11 has only sha256 and sha256_cbor")
        if args.hash_seed is None:
            raise UsageError(
                "--vllm-version 0.11 seeds its first parent hash from os.urandom unless PYTHONHASHSEED is set: "
                "pass the engine's PYTHONHASHSEED as --hash-seed"
            )
        if args.lora_name or args.lora_path:
            raise UsageError("--vllm-version 0.11 keys LoRA blocks by the adapter's int id: pass --lora-id instead")
    elif args.lora_id is not None:
        raise UsageError("--lora-id is for --vllm-version 0.11; vLLM 0.33 keys LoRA by --lora-name and --lora-path")
    checkpoints = _parse_checkpoints(args.checkpoints, args.block_size) if args.checkpoints else None
    try:
        vh.check_available(args.hash_algo)
    except vh.HashDependencyError as e:
        raise UsageError(f"--hash-algo {args.hash_algo}: {e}") from None
    seed = args.hash_seed if args.hash_seed is not None else vh.DEFAULT_SEED
    if args.hash_seed is None and args.hash_algo.startswith("xxhash"):
        print(
            "promptlint: note: vLLM seeds xxhash with a random value unless PYTHONHASHSEED is set; these hashes "
            f"use {vh.DEFAULT_SEED!r}: pass the engine's PYTHONHASHSEED as --hash-seed to match it",
            file=sys.stderr,
        )

    settings = settings_from_args(args)
    try:
        side = load_side(args.input, settings)
        if side.text is None and settings.has_tokenizer:
            check_vocabulary(side, settings.load_tokenizer())
    except InputError as e:
        raise UsageError(str(e)) from None
    lora = (args.lora_name, args.lora_path) if args.lora_name is not None else None
    hashes = vh.block_hashes(
        side.ids, args.block_size, args.hash_algo, seed,
        cache_salt=args.cache_salt, lora=lora, lora_int_id=args.lora_id, vllm_version=args.vllm_version,
    )
    if checkpoints is not None:
        _write_checkpoints(args, vh.fingerprints(hashes, args.block_size, checkpoints), len(side.ids))
    else:
        _write_hashes(args, hashes, len(side.ids), seed)
    return 0


def _write_checkpoints(args, fps, prompt_tokens: int) -> None:
    if args.output_format == "json":
        record = {
            "block_size": args.block_size,
            "hash_algo": args.hash_algo,
            "prompt_tokens": prompt_tokens,
            "checkpoints": {str(n): fp for n, fp in fps.items()},
        }
        json.dump(record, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    sys.stdout.write("tokens\tfingerprint\n")
    for n, fp in fps.items():
        sys.stdout.write(f"{n}\t{fp if fp is not None else '-'}\n")


def _write_hashes(args, hashes, prompt_tokens: int, seed) -> None:
    if args.output_format == "json":
        record = {
            "block_size": args.block_size,
            "hash_algo": args.hash_algo,
            "hashes": [h.hex() for h in hashes],
            "prompt_tokens": prompt_tokens,
            "hash_seed": seed,
            "vllm_version": args.vllm_version,
        }
        json.dump(record, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    sys.stdout.write("block\tend_token\thash\n")
    for i, h in enumerate(hashes):
        sys.stdout.write(f"{i}\t{(i + 1) * args.block_size}\t{h.hex()}\n")
    rest = prompt_tokens - len(hashes) * args.block_size
    if rest:
        print(f"promptlint: note: the last {rest} token(s) fill no whole block and have no hash", file=sys.stderr)
