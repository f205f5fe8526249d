"""Options several commands share (tokenizer, engine, configuration, chat profile), and the
settings they resolve to. Standard library only at module level, like every command module."""

from __future__ import annotations

import argparse


def add_common_tokenizer_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", metavar="PATH", help="tokenizer.json, or a model directory holding one")
    p.add_argument("--tokenizer-sha256", metavar="HEX", help="expected sha256 of tokenizer.json (pin)")
    p.add_argument("--engine", choices=["vllm", "sglang", "llamacpp"], help="engine profile for the figures (default vllm)")
    p.add_argument("--block-size", type=int, metavar="N", help="KV block/page size in tokens (vllm default 16)")
    p.add_argument("--config", metavar="FILE", help="use this pyproject.toml or promptlint.toml")


def add_chat_options(p: argparse.ArgumentParser, serving: bool = True) -> None:
    p.add_argument(
        "--frontend", choices=["transformers", "vllm", "llamacpp"],
        help="chat templates: how messages reach the template (default transformers; llamacpp under --engine llamacpp)",
    )
    p.add_argument("--transformers", type=int, choices=[4, 5], help="chat templates: transformers major version semantics (default 5)")
    if serving:
        p.add_argument("--serving", choices=["chat", "completions"], help="chat endpoint (default) or a pre-rendered prompt sent to completions")


def settings_from_args(args, start=None):
    from pathlib import Path

    from promptlint.commands import UsageError
    from promptlint.config import ConfigError, load_settings, parse_codes

    first = Path(args.paths[0]) if getattr(args, "paths", None) else None
    overrides = {
        "tokenizer": args.tokenizer,
        "tokenizer_sha256": args.tokenizer_sha256,
        "engine": args.engine,
        "block_size": args.block_size,
    }
    if args.block_size is not None and args.block_size < 1:
        raise UsageError("--block-size must be a positive number of tokens")
    try:
        for key in ("select", "ignore"):
            if hasattr(args, key):
                overrides[key] = parse_codes(getattr(args, key))
        if getattr(args, "template_env", None):
            overrides["template_env"] = args.template_env
        for key in ("frontend", "transformers", "serving"):
            if getattr(args, key, None) is not None:
                overrides[key] = getattr(args, key)
        use_cache = not getattr(args, "no_cache", False)
        return load_settings(args.config, start or (first if first and first.exists() else None), overrides, use_cache)
    except ConfigError as e:
        raise UsageError(str(e)) from None
