"""`promptlint rule CODE`: print a rule's documentation (`--all` lists every rule)."""

from __future__ import annotations

import sys


def add_parser(sub) -> None:
    p = sub.add_parser("rule", help="show a rule's documentation", description="Print the documentation of a rule.")
    p.add_argument("code", nargs="?", metavar="CODE", help="rule code or name, e.g. M101 or volatile-before-shared-prefix")
    p.add_argument("--all", action="store_true", help="list every rule")


def run(args) -> int:
    from promptlint.base import registry
    from promptlint.commands import UsageError

    if args.all or not args.code:
        for rule in registry.all_rules().values():
            print(f"{rule.code:6} {rule.name:36} {rule.miss_class:3} {rule.short_summary}")
        return 0
    rule = registry.lookup(args.code)
    if rule is None:
        raise UsageError(f"unknown rule {args.code!r}; `promptlint rule --all` lists them")
    sys.stdout.write(rule.markdown())
    return 0
