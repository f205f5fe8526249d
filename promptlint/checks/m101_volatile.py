"""M101 volatile-before-shared-prefix: a per-request-changing value precedes shared material."""

from __future__ import annotations

from typing import List

from promptlint.checks import describe, short
from promptlint.records import Finding

CODES = ("M101",)

_CADENCE = {"date": "changes daily", None: "changes on every request"}


def plan(run) -> list:
    """The variants this check renders (prefetched and tokenized in one batch)."""
    return [{var.name: var.variant_value()} for var in run.scenario.of_kind("volatile")]


def check(run) -> List[Finding]:
    findings = []
    for var in run.scenario.of_kind("volatile"):
        variant = run.sample(**{var.name: var.variant_value()})
        cmp = run.compare(variant)
        if cmp.lost_blocks <= 0:
            continue
        location = run.locate_change(var, variant)
        cadence = _CADENCE.get(var.sub_kind, _CADENCE[None])
        message = (
            f"`{var.name}` {cadence} and precedes the shared prompt: "
            f"{cmp.lost_blocks:,} of {cmp.ideal_eligible_blocks:,} eligible KV blocks lost"
        )
        profile = run.profile
        notes = [
            f"{profile.name}, block {cmp.block_size}: eligible {_blocks(cmp.eligible_blocks)} now, "
            f"{cmp.ideal_eligible_blocks:,} if `{var.name}` came after the shared material"
        ]
        coarser = "" if var.sub_kind == "date" else ", or make it coarser (date, not time)" if var.sub_kind in (None, "timestamp", "time") else ""
        f = run.finding(
            "M101",
            message,
            location,
            variable=var.name,
            variant=variant,
            cmp=cmp,
            help=f"move `{var.name}` after the shared material{coarser}",
            notes=notes,
        )
        when = "the next day" if var.sub_kind == "date" else "on the next request"
        describe(f, f"`{var.name}` {when}: {short(var.value)} → {short(var.variant_value())}")
        findings.append(f)
    return findings


def _blocks(n: int) -> str:
    return f"{n:,} block" if n == 1 else f"{n:,} blocks"
