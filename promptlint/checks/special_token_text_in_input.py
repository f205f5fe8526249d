"""M103 special-token-text-in-input: a per-request sample value contains the text of a special
token, and the pinned tokenizer encodes it as the control token (a prompt-injection path)."""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from promptlint.base import registry
from promptlint.checks.variants import short

if TYPE_CHECKING:
    from promptlint.checks.interface import Run
    from promptlint.base.records import Finding

CODES = registry.implements(__name__, "M103")


def check(run: "Run") -> List["Finding"]:
    specials = run.tokenizer.added_tokens(special_only=True)
    if not specials:
        return []
    out = []
    for name, value in run.text_inputs():
        for text in _strings(value):
            hits = [t for t in specials if t and t in text]
            if not hits:
                continue
            token = max(hits, key=len)
            tid = specials[token]
            if tid not in run.tokenizer.encode(text, add_special_tokens=False).ids:
                continue  # the tokenizer does not match it as a control token
            defused = _replace_deep(value, token, _defuse(token))
            variant = run.sample(**{name: defused})
            cmp = run.compare(variant)
            location = run.locate(run.first_divergent_char(variant))
            f = run.finding(
                "M103",
                f"per-request input `{name}` contains `{token}`, which the tokenizer encodes as control token {tid}, not text",
                location,
                variable=name,
                variant=variant,
                cmp=cmp,
                help="strip or escape special-token text in user input before rendering (or encode with split_special_tokens)",
                notes=["a prompt-injection path: user text can close the turn or forge a role"],
                variant_description=f"`{name}` with `{token}` defused to text: {short(text)} → "
                f"{short(_replace_deep(text, token, _defuse(token)))}",
            )
            out.append(f)
            break
    return out


def _defuse(token: str) -> str:
    """The token's text, changed so the tokenizer cannot match it as the control token."""
    return token.replace("<", "< ").replace("[", "[ ")


def _strings(value) -> List[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _replace_deep(value, old: str, new: str):
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: _replace_deep(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_deep(v, old, new) for v in value]
    return value
