"""M107 static-after-per-request: static instructions rendered after the per-request material.

What every request shares can only be cached when it comes before the first text that differs
between requests (the documents, the customer record, the question). Static passages after it
are recomputed on every request. Measured on the base render against the next request (every
per-request input changed): S is the first divergent token; the static lines after it (the
template's own text, each line at least ``min-passage-characters`` long or of ``min-passage-words``
words: labels and per-item
scaffolding such as `Question: ` or `## ` are not instructions) would add T tokens (the lines
encoded together) to the shared prefix if moved before it, so the ideal is S + T. Reported when T reaches ``min-static-tokens``
(a one-line trailer is not) and at least one block is gained. Application templates only: a chat
template's layout is the model's trained format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from promptlint.base import registry
from promptlint.arithmetic.compare import Comparison, shared_prefix

if TYPE_CHECKING:
    from promptlint.checks.interface import Run
    from promptlint.base.records import Finding

CODES = registry.implements(__name__, "M107")


def _next_request(run: "Run") -> dict:
    """Every per-request input changed (the variant behind the ideal shared prefix)."""
    return {v.name: v.variant_value() for v in run.scenario.of_kind("per-request")}


def plan(run: "Run") -> list:
    """The next request, prefetched with the other variants (the ideal's variant: rendered anyway)."""
    return [_next_request(run)] if run.conversation is None and run.scenario.of_kind("per-request") else []


def check(run: "Run") -> List["Finding"]:
    if run.conversation is not None:
        return []
    overrides = _next_request(run)
    if not overrides:
        return []
    data = registry.get("M107").data
    base = run.base()
    after = run.sample(**overrides)
    s = shared_prefix(base.ids, after.ids)
    first = run.first_divergent_char(after)
    minimum, words = data["min-passage-characters"], data.get("min-passage-words", 5)
    passages = []  # (offset, line text) of each static line long enough to be an instruction
    for ch in base.rendered.sourcemap.chunks:
        if ch.kind != "literal" or ch.end <= first:
            continue
        at = max(ch.start, first)
        for line in base.text[at:ch.end].split("\n"):
            if len(line.strip()) >= minimum or len(line.split()) >= words:
                passages.append((at + len(line) - len(line.lstrip()), line.strip()))
            at += len(line) + 1
    if not passages:
        return []
    static = len(run.encode_variants(["\n".join(text for _, text in passages)])[0].ids)
    cmp = Comparison(s, len(after.ids), s + static, run.profile.block_size)
    if static < data["min-static-tokens"] or cmp.lost_blocks <= 0:
        return []
    where = run.locate(passages[0][0])
    starts = run.locate(first)
    lines = sorted({run.locate(at).line for at, _ in passages})
    message = (
        f"{static:,} tokens of static text come after the per-request material (from line {starts.line}), so every request "
        f"recomputes them: {cmp.lost_blocks:,} of {cmp.ideal_eligible_blocks:,} eligible KV blocks lost"
    )
    notes = [
        f"static passages after the first per-request text: line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines[:12]))}"
        + (", ..." if len(lines) > 12 else ""),
        f"{run.profile.name}, block {cmp.block_size}: eligible {cmp.eligible_blocks:,} blocks now, "
        f"{cmp.ideal_eligible_blocks:,} with the static text before the per-request material",
    ]
    return [run.finding("M107", message, where, variant=after, cmp=cmp, help=data["help"], notes=notes,
                        variant_description="the next request: every per-request input changed")]
