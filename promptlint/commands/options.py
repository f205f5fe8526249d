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


def add_trust_options(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--untrusted", action="store_true",
        help="read only the files git tracks (templates, includes, samples files): files CI wrote into the "
        "workspace stay unread; the default when CI or GITHUB_ACTIONS is set",
    )
    g.add_argument("--trusted", action="store_true", help="read untracked files too, even when CI is set")


def untrusted_wanted(args, environ=None) -> bool:
    """Untrusted mode: `--untrusted`, or CI (`CI`/`GITHUB_ACTIONS` set to a true-ish value) without `--trusted`."""
    import os

    if getattr(args, "untrusted", False):
        return True
    if getattr(args, "trusted", False):
        return False
    environ = os.environ if environ is None else environ
    return any((environ.get(k) or "").strip().lower() not in ("", "0", "false", "no", "off") for k in ("CI", "GITHUB_ACTIONS"))


def apply_read_policy(args, start, base) -> None:
    """In untrusted mode, limit every read inside the repository to the files git tracks
    (``bounded_io.limit_to_tracked``) before the configuration's tables, the templates, their
    includes and samples files are read; outside a git work tree, say once that nothing is limited.
    Exempt: the configuration file, promptlint's cache, a tokenizer or scenario file named on the
    command line. A work tree git cannot list is a ``UsageError`` (never "no limit")."""
    import os
    import sys
    from pathlib import Path

    from promptlint.doors import bounded_io
    from promptlint.commands import UsageError
    from promptlint.project.config import find_config
    from promptlint.project.git_tree import GitError, tracked_files
    from promptlint.doors.line_guard import one_line

    from promptlint.base.paths import based

    base = Path(base)
    config = based(args.config, base) if getattr(args, "config", None) else None
    if config is None:
        found = find_config(based(start, base) if start is not None else base)
        config = found[0] if found else None
    root = (config.parent if config is not None else base).resolve()  # where load_settings puts the root
    try:
        found_files = tracked_files(root)
    except GitError as e:
        raise UsageError(str(e)) from None
    if found_files is None:
        print(
            f"promptlint: note: untrusted mode: {one_line(root)} is not in a git work tree, so reads are not "
            "limited to tracked files (includes still stay inside the project)",
            file=sys.stderr,
        )
        return
    top, files = found_files
    exempt = [root / ".promptlint_cache"]  # promptlint's own entries
    if config is not None:
        exempt.append(config)
    for named in ("tokenizer", "scenario"):  # files the user named on the command line are trusted
        if getattr(args, named, None):
            exempt.append(os.path.abspath(based(getattr(args, named), base)))
    bounded_io.limit_to_tracked(top, files, exempt)


def settings_from_args(args, start=None, environ=None, *, base):
    """The command's Settings; ``environ``: the environment it runs in (a daemon request's), else the
    process's; ``base``: the directory its typed paths are relative to (the caller's: a daemon
    request's, or the working directory of the commands that run in the user's own process)."""
    from pathlib import Path

    from promptlint.commands import UsageError
    from promptlint.project.config import ConfigError, load_settings, parse_codes

    from promptlint.base.paths import based

    base = Path(base)
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
        begin = start or (first if first and based(first, base).exists() else None)
        if hasattr(args, "untrusted") and untrusted_wanted(args, environ):
            overrides["untrusted"] = True  # a cached result of a trusted run may have read untracked files
            apply_read_policy(args, begin, base)
        return load_settings(args.config, begin, overrides, use_cache, base=base)
    except ConfigError as e:
        raise UsageError(str(e)) from None
