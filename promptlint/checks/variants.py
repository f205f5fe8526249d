"""How checks describe the controlled change behind a comparison finding, in words."""

from __future__ import annotations


def short(value, limit: int = 40) -> str:
    """A value in a few characters, for variant descriptions."""
    from datetime import datetime

    text = value.isoformat(sep=" ") if isinstance(value, datetime) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(f, described: str) -> None:
    """Record a comparison finding's variant in words (JSON `variant`, and a note)."""
    f.variant_description = described
    f.notes.insert(0, f"variant: {described}")
