"""Rule implementations, one module per code or documented family, named for what it checks.

A module registers itself under its codes (``CODES = registry.implements(__name__, "M101")``).
Those with ``check(run)`` are the template checks: every template and chat-template run goes
through them, in the order of their first code, and a module is imported only while finding
out which ones exist (module tops import the standard library and promptlint's kernel only).
What a run offers a check is the ``Run`` protocol in ``interface.py``.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Dict, List, Tuple

_CHECKS: List = []


def template_checks() -> List:
    """Every module of this package that has ``check(run)``, by first code."""
    if not _CHECKS:
        modules = [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)]
        _CHECKS.extend(sorted((m for m in modules if hasattr(m, "check")), key=lambda m: m.CODES))
    return _CHECKS


def enabled_checks(is_enabled) -> List:
    """The template checks with at least one enabled code."""
    return [m for m in template_checks() if any(is_enabled(c) for c in m.CODES)]


def collapse(findings: List) -> List:
    """One finding per first divergent token: when several variants of a template diverge at the
    same token, keep the earliest cause (by position, then code) and mention the others."""
    keep: List = []
    by_token: Dict[Tuple, int] = {}  # (path, token, growth) -> its finding's index in keep
    also: Dict[int, List[str]] = {}  # index in keep -> the notes naming the causes it stands for
    for f in sorted(findings, key=lambda f: (f.line, f.column, f.code)):
        t = f.first_divergent_token
        if t is None or f.severity == "error":
            keep.append(f)
            continue
        # a conversation-growth finding (M204: the one with a `cause`) compares turn N with turn
        # N+1, not two versions of one request: another hazard, even at the same token
        key = (f.path, t.index, f.cause is not None)
        if key in by_token:
            what = f.variant_description or (f"`{f.variable}` changed" if f.variable else f.name)
            also.setdefault(by_token[key], []).append(f"also diverges at this token: {f.code} {f.name} ({what})")
            continue
        by_token[key] = len(keep)
        keep.append(f)
    for i, notes in also.items():  # the kept finding's copy that names the others (findings are frozen)
        keep[i] = dataclasses.replace(keep[i], notes=keep[i].notes + tuple(notes))
    return keep
