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
    p.add_argument(
        "--frontend", choices=["transformers", "vllm", "llamacpp"],
        help="chat templates: how messages reach the template (default transformers; llamacpp under --engine llamacpp)",
    )
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
    from promptlint.report import FORMATS  # stdlib-only module: a name table

    p.add_argument("--output-format", choices=list(FORMATS), default=None, help="default: full")
    p.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="lint the text read from stdin as if it were the file PATH (for editors); takes no PATH arguments",
    )
    p.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to enable (e.g. M1,E)")
    p.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to disable")
    p.add_argument("--template-env", choices=["jinja2", "transformers"], help="Jinja environment for application templates")
    add_chat_options(p)
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--evidence", action="store_true", help="put both renders of each comparison into the JSON output")
    p.add_argument("--force-exclude", action="store_true", help="apply `exclude` to paths given explicitly too")
    p.add_argument("--no-cache", action="store_true", help="ignore and do not write the result cache (.promptlint_cache/)")
    p.add_argument("--fix", action="store_true", help="apply safe fixes (Python: sort_keys=True, sorted(...)) and report what remains")
    p.add_argument("--diff", action="store_true", help="print the safe fixes as a unified diff instead of writing them; exit 1 if any")


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
        use_cache = not getattr(args, "no_cache", False)
        return load_settings(args.config, start or (first if first and first.exists() else None), overrides, use_cache)
    except ConfigError as e:
        raise UsageError(str(e)) from None


def run(args) -> int:
    from promptlint.cli import EXIT_FINDINGS, EXIT_OK, UsageError
    from promptlint.lint import lint
    from promptlint.report import get
    from promptlint.tokens import TokenizerError

    stdin_name = getattr(args, "stdin_filename", None)
    overrides = None
    if stdin_name:
        from pathlib import Path

        if args.paths:
            raise UsageError("--stdin-filename lints stdin only: give no PATH arguments")
        settings = settings_from_args(args, start=Path(stdin_name))
        try:
            text = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError("stdin is not UTF-8 text") from None
        overrides = {str(Path(stdin_name)): text}
        if args.force_exclude:
            from promptlint.discovery import is_excluded

            if is_excluded(Path(stdin_name), settings.root, settings.exclude):
                overrides = {}  # excluded: lint nothing, as ruff does
    else:
        settings = settings_from_args(args)
    try:
        if overrides == {}:
            from promptlint.lint import Report, tokenizer_spec

            report = Report(tokenizer=tokenizer_spec(settings))
        else:
            report = lint(
                args.paths, settings, force_exclude=args.force_exclude, overrides=overrides, use_cache=not args.no_cache
            )
    except TokenizerError as e:
        raise UsageError(str(e)) from None
    fmt = args.output_format or "full"
    fixed = []
    if getattr(args, "fix", False) or getattr(args, "diff", False):
        from promptlint.fixing import apply_fixes

        fixed, diffs = apply_fixes(report, write=not args.diff)
        if args.diff:
            sys.stdout.write("".join(diffs))
            n = len(fixed)
            print(f"Would fix {n:,} finding{'s' if n != 1 else ''}." if n else "No fixes available.", file=sys.stderr)
            return EXIT_FINDINGS if diffs and not args.exit_zero else EXIT_OK
        if fixed:  # report what remains after the rewrite
            report = lint(args.paths, settings, force_exclude=args.force_exclude, use_cache=not args.no_cache)
    get(fmt).render(report, sys.stdout, evidence=args.evidence, settings=settings)
    if fixed:
        n = len(fixed)
        where = ", ".join(f"{f.code} {f.path}:{f.line}:{f.column}" for f in fixed[:5]) + (", ..." if n > 5 else "")
        print(f"Fixed {n:,} finding{'s' if n != 1 else ''} ({where}).", file=sys.stderr if fmt == "json" else sys.stdout)
    for notice in report.notices:
        print(f"promptlint: note: {notice}", file=sys.stderr)
    if args.exit_zero:
        return EXIT_OK
    # Notes (severity "info", e.g. an order the samples file declares pinned) never fail a run.
    failing = [f for f in report.findings + report.errors if f.severity != "info"]
    return EXIT_FINDINGS if failing else EXIT_OK
