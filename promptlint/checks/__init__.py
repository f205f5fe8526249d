"""Rule implementations. Each module exposes ``CODES`` and ``check(run) -> list[Finding]``.

Modules are imported only when one of their codes is enabled.
"""

from __future__ import annotations

import importlib
from typing import List, Sequence, Tuple

# (module, codes it can report), in the order they run
CHECKS: List[Tuple[str, Tuple[str, ...]]] = [
    ("promptlint.checks.m101_volatile", ("M101",)),
    ("promptlint.checks.m1_tokens", ("M102", "M103", "M104")),
    ("promptlint.checks.m105_engine", ("M105",)),
    ("promptlint.checks.m2_order", ("M201", "M202", "M203")),
    ("promptlint.checks.m204_history", ("M204",)),
]


def short(value, limit: int = 40) -> str:
    """A value in a few characters, for variant descriptions."""
    from datetime import datetime

    if isinstance(value, datetime):
        text = value.isoformat(sep=" ")
    elif isinstance(value, str):
        text = repr(value)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(f, described: str) -> None:
    """Record a comparison finding's variant in words (JSON `variant`, and a note)."""
    f.variant_description = described
    f.notes.insert(0, f"variant: {described}")


def enabled_checks(is_enabled) -> List:
    out = []
    for module, codes in CHECKS:
        if any(is_enabled(c) for c in codes):
            out.append(importlib.import_module(module))
    return out


def codes() -> Sequence[str]:
    return [c for _, cs in CHECKS for c in cs]


def collapse(findings: List) -> List:
    """One finding per first divergent token: when several variants of a template diverge at the
    same token, keep the earliest cause (by position, then code) and mention the others."""
    keep, by_token = [], {}
    for f in sorted(findings, key=lambda f: (f.line, f.column, f.code)):
        t = f.first_divergent_token
        if t is None or f.severity == "error":
            keep.append(f)
            continue
        key = (f.path, t.index)
        if key in by_token:
            first = by_token[key]
            what = f.variant_description or (f"`{f.variable}` changed" if f.variable else f.name)
            first.notes.append(f"also diverges at this token: {f.code} {f.name} ({what})")
            continue
        by_token[key] = f
        keep.append(f)
    return keep
