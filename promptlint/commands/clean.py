"""`promptlint clean`: remove the result cache (.promptlint_cache/) of the project.

Only what the cache wrote is removed (promptlint.project.cache.clean): a link is never followed, and a file
promptlint did not write is left where it is, with one line saying so.
"""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("clean", help="remove the result cache", description="Remove .promptlint_cache/ at the project root.")
    p.add_argument("--config", metavar="FILE", help="the project's pyproject.toml or promptlint.toml")


def run(args) -> int:
    import sys
    from pathlib import Path

    from promptlint.project.cache import DIR_NAME, clean
    from promptlint.commands import UsageError
    from promptlint.project.config import ConfigError, find_config
    from promptlint.doors.safe_write import WriteRefused

    try:
        if args.config:
            root = Path(args.config).resolve().parent
        else:
            found = find_config(Path.cwd())
            root = found[0].parent if found else Path.cwd()
    except ConfigError as e:
        raise UsageError(str(e)) from None
    try:
        cleaned = clean(root)
    except WriteRefused as e:
        raise UsageError(str(e)) from None
    top = root / DIR_NAME
    if not cleaned.found:
        print(f"no cache at {top}")
    elif cleaned.left:
        n = len(cleaned.left)
        print(f"removed the cache files in {top}")
        print(f"promptlint: note: left {n:,} entr{'ies' if n != 1 else 'y'} promptlint did not write in {top} "
              f"(e.g. {cleaned.left[0]}); remove {'them' if n != 1 else 'it'} yourself", file=sys.stderr)
    else:
        print(f"removed {top}")
    return 0
