"""M104 token-boundary-merge: the first divergent token starts before the first divergent
character (BPE merged shared text with the variable part) and that costs a block. A merge that
starts inside the text both sample values open with is not the template's (common_start)."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from promptlint.base import registry
from promptlint.checks.variants import short
from promptlint.arithmetic.compare import Comparison, shared_prefix

if TYPE_CHECKING:
    from promptlint.checks.interface import Run, Sample
    from promptlint.base.records import Finding

CODES = registry.implements(__name__, "M104")


def _changing(run: "Run"):
    return [var for var in run.scenario.variables.values() if var.kind in ("per-request", "volatile")]


def plan(run: "Run") -> list:
    """The variants this check renders (prefetched and tokenized in one batch)."""
    return [{var.name: var.variant_value()} for var in _changing(run)]


def check(run: "Run") -> List["Finding"]:
    out = []
    base = run.base()
    for var in _changing(run):
        variant = run.sample(**{var.name: var.variant_value()})
        B = run.profile.block_size
        merge = boundary_merge(run, variant, block_size=B)
        if merge is None:
            continue
        shared, char, clean = merge
        opening = common_start(var.value, var.variant_value())
        if opening and base.text[char - len(opening):char] == opening and base.encoding.offsets[shared][0] >= char - len(opening):
            continue  # both samples open with the same text and BPE merged inside it: no template boundary
        cmp = Comparison(shared, len(variant.ids), clean, B)
        lost = cmp.ideal_eligible_blocks - cmp.eligible_blocks
        if lost <= 0:
            continue
        location = run.locate(char)
        tok_start = base.encoding.offsets[shared][0]
        f = run.finding(
            "M104",
            f"the text before `{var.name}` merges into its first token: the shared prefix ends at token {shared} "
            f"(character {tok_start:,}) instead of {clean} (character {char:,}): {lost} KV block{'s' if lost != 1 else ''} lost",
            location,
            variable=var.name,
            variant=variant,
            cmp=cmp,
            help=f"put a hard boundary (a newline or a space) right before `{var.name}`",
            variant_description=f"`{var.name}` changed: {short(var.value)} → {short(var.variant_value())}",
        )
        out.append(f)
    return out


def common_start(value, variant) -> str:
    """The text both sample values share where they first differ (`User: ` of "User: Can I ..." and
    "User: Do you ..."): the render diverges that far inside the value, so a merge that starts
    within it is the samples' own text merging, not the template's text merging into the value."""
    a, b = list(_texts(value)), list(_texts(variant))
    for x, y in zip(a, b):
        if x != y:
            n = 0
            while n < min(len(x), len(y)) and x[n] == y[n]:
                n += 1
            return x[:n]
    return ""


def _texts(value, depth: int = 0):
    """The scalar leaves of a sample value, as rendered text, in order."""
    if depth > 8:
        return
    if isinstance(value, dict):
        for v in value.values():
            yield from _texts(v, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _texts(v, depth + 1)
    elif value is not None:
        yield str(value)


def boundary_merge(run: "Run", variant: "Sample", block_size: Optional[int] = None) -> Optional[tuple]:
    """(token S, first divergent char, tokens of the shared text alone) when BPE merged across the boundary.

    With ``block_size``, merges that cannot cost a block are skipped before re-encoding: the shared
    text alone has at most one token per merged character, so it cannot reach the next block
    boundary when ``S + merged characters`` does not.
    """
    base = run.base()
    a, b = base.ids, variant.ids
    s = shared_prefix(a, b)
    if s >= len(a) or s >= len(base.encoding.offsets):
        return None
    char = run.first_divergent_char(variant)
    tok_start = base.encoding.offsets[s][0]
    if tok_start >= char:
        return None
    if block_size is not None:
        cap = len(variant.ids) - 1
        upper = s + (char - tok_start)
        if min(upper, cap) // block_size <= min(s, cap) // block_size:
            return None
    clean = len(run.encode_variants([base.text[:char]])[0].ids)  # the shared text alone (a window at its end)
    if clean <= s:
        return None
    return s, char, clean
