"""`promptlint clean`: remove the result cache (.promptlint_cache/) of the project."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("clean", help="remove the result cache", description="Remove .promptlint_cache/ at the project root.")
    p.add_argument("--config", metavar="FILE", help="the project's pyproject.toml or promptlint.toml")


def run(args) -> int:
    from pathlib import Path

    from promptlint.cache import DIR_NAME, clean
    from promptlint.commands import UsageError
    from promptlint.config import ConfigError, find_config

    try:
        if args.config:
            root = Path(args.config).resolve().parent
        else:
            found = find_config(Path.cwd())
            root = found[0].parent if found else Path.cwd()
    except ConfigError as e:
        raise UsageError(str(e)) from None
    removed = clean(root)
    print(f"removed {root / DIR_NAME}" if removed else f"no cache at {root / DIR_NAME}")
    return 0
