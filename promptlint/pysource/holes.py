"""A Python prompt as text: its literal parts with sample values in its holes.

What the Python analyzer and the breakpoint rules measure in tokens (``prompt_text`` of a
prompt twice, with a volatile hole's two values), and the value that follows a hole which
promptlint could not evaluate (``unresolved_after``).
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from promptlint.pysource.flow import Hole, Part

_NUMBERS = ("1741944413.482113", "1741944420.917402")


def hole_values(hole: Hole) -> Tuple[str, str]:
    from promptlint.scenarios import volatile_value, volatile_variant

    if hole.sub == "number":
        return _NUMBERS
    sub = "id" if hole.sub == "process" else hole.sub  # a host name or pid: one value per process, id-like
    base = volatile_value(sub)
    return base, volatile_variant(base, sub)


def prompt_text(prompt: List[Part], changed: Optional[Hole] = None, per_request_variant: bool = False,
                next_request: bool = False) -> str:
    """The prompt's text with sample values in its holes (``changed``: that hole's second value;
    ``next_request``: every volatile and per-request hole's second value, the request after it)."""
    from promptlint.scenarios import PER_REQUEST_SAMPLES

    per_request_variant = per_request_variant or next_request
    out = []
    for p in prompt:
        if isinstance(p, str):
            out.append(p)
        elif p.kind == "volatile":
            base, variant = hole_values(p)
            out.append(variant if next_request or changed is not None and p.node is changed.node else base)
        elif p.kind == "per-request":
            out.append(PER_REQUEST_SAMPLES[1 if per_request_variant else 0])
        else:
            out.append(f"sample {p.label}")
    return "".join(out)


def unresolved_after(prompt: List[Part], hole: Hole) -> Optional[str]:
    """The first value promptlint could not evaluate that follows ``hole`` (shared material it cannot measure)."""
    seen = False
    for p in prompt:
        if isinstance(p, Hole) and p.node is hole.node:
            seen = True
        elif seen and isinstance(p, Hole) and p.kind == "static":
            return p.label
        elif seen and isinstance(p, Hole) and p.kind == "per-request":
            return None
    return None
