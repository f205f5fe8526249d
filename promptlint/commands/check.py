"""`promptlint check [PATH ...]`: lint templates for prefix-cache hazards."""

from __future__ import annotations

import argparse
import sys


def add_common_tokenizer_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", metavar="PATH", help="tokenizer.json, or a model directory holding one")
    p.add_argument("--tokenizer-sha256", metavar="HEX", help="expected sha256 of tokenizer.json (pin)")
    p.add_argument("--engine", choices=["vllm", "sglang", "llamacpp"], help="engine profile for the figures (default vllm)")
    p.add_argument("--block-size", type=int, metavar="N", help="KV block/page size in tokens (vllm default 16)")
    p.add_argument("--config", metavar="FILE", help="use this pyproject.toml or promptlint.toml")


def add_chat_options(p: argparse.ArgumentParser, serving: bool = True) -> None:
    p.add_argument("--frontend", choices=["transformers", "vllm"], help="chat templates: how messages reach the template (default transformers)")
    p.add_argument("--transformers", type=int, choices=[4, 5], help="chat templates: transformers major version semantics (default 5)")
    if serving:
        p.add_argument("--serving", choices=["chat", "completions"], help="chat endpoint (default) or a pre-rendered prompt sent to completions")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        help="lint prompt templates for prefix-cache hazards",
        description="Render templates with sample inputs, tokenize them with the pinned tokenizer, "
        "compare controlled variants and report what breaks the KV prefix cache.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: configured templates, else .)")
    add_common_tokenizer_options(p)
    p.add_argument("--output-format", choices=["full", "concise", "json"], default=None, help="default: full")
    p.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to enable (e.g. M1,E)")
    p.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to disable")
    p.add_argument("--template-env", choices=["jinja2", "transformers"], help="Jinja environment for application templates")
    add_chat_options(p)
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--evidence", action="store_true", help="put both renders of each comparison into the JSON output")
    p.add_argument("--force-exclude", action="store_true", help="apply `exclude` to paths given explicitly too")


def settings_from_args(args, start=None):
    from pathlib import Path

    from promptlint.cli import UsageError
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
        return load_settings(args.config, start or (first if first and first.exists() else None), overrides)
    except ConfigError as e:
        raise UsageError(str(e)) from None


def run(args) -> int:
    from promptlint.cli import EXIT_FINDINGS, EXIT_OK, UsageError
    from promptlint.lint import lint
    from promptlint.report import get
    from promptlint.tokens import TokenizerError

    settings = settings_from_args(args)
    try:
        report = lint(args.paths, settings, force_exclude=args.force_exclude)
    except TokenizerError as e:
        raise UsageError(str(e)) from None
    fmt = args.output_format or "full"
    get(fmt).render(report, sys.stdout, evidence=args.evidence, settings=settings)
    for notice in report.notices:
        print(f"promptlint: note: {notice}", file=sys.stderr)
    if args.exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if (report.findings or report.errors) else EXIT_OK
