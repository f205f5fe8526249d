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
    ("promptlint.checks.m2_order", ("M201", "M202", "M203")),
]


def enabled_checks(is_enabled) -> List:
    out = []
    for module, codes in CHECKS:
        if any(is_enabled(c) for c in codes):
            out.append(importlib.import_module(module))
    return out


def codes() -> Sequence[str]:
    return [c for _, cs in CHECKS for c in cs]
