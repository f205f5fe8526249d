"""How checks describe the controlled change behind a comparison finding, in words (the
finding's ``variant_description``, which ``kernel.finding`` makes its first note too)."""

from __future__ import annotations


def short(value, limit: int = 40) -> str:
    """A value in a few characters, for variant descriptions."""
    from datetime import datetime

    text = value.isoformat(sep=" ") if isinstance(value, datetime) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"

