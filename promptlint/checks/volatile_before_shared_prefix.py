"""M101 volatile-before-shared-prefix: a per-request-changing value precedes shared material.

The template check is ``check(run)``; the Python analyzer measures the prompts it finds in
code with the same figures (promptlint.arithmetic.figures) and words its findings with the functions
below, so an M101 reads the same wherever it was found. The wording is the rule file's
``[data.wording]`` table (rules/M101.toml).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from promptlint.base import registry
from promptlint.checks.variants import short
from promptlint.arithmetic.compare import changed_end
from promptlint.arithmetic.figures import blocks

if TYPE_CHECKING:
    from promptlint.checks.interface import Run
    from promptlint.arithmetic.compare import Comparison
    from promptlint.base.records import Finding

CODES = registry.implements(__name__, "M101")


def _wording() -> dict:
    return registry.get("M101").data["wording"]


def cadence(sub_kind: Optional[str]) -> str:
    """How often a value of this sub-kind changes, in words."""
    table = _wording()["cadence"]
    return table.get(sub_kind or "", table["default"])


def message(variable: str, sub_kind: Optional[str], cmp: "Comparison") -> str:
    return _wording()["message"].format(
        variable=variable, cadence=cadence(sub_kind), lost_blocks=cmp.lost_blocks, ideal_eligible_blocks=cmp.ideal_eligible_blocks
    )


def not_measured_message(variable: str, sub_kind: Optional[str], unknown: str) -> str:
    """The value precedes text promptlint cannot evaluate, so the loss is not measured (Python)."""
    return _wording()["not-measured"].format(variable=variable, cadence=cadence(sub_kind), unknown=unknown)


def help_text(variable: str, sub_kind: Optional[str], suggest_coarser: bool = True) -> str:
    w = _wording()
    coarser = w["coarser"] if suggest_coarser and (sub_kind or "") in w["coarser-for"] else ""
    return w["help"].format(variable=variable, coarser=coarser)


def eligible_note(variable: str, cmp: "Comparison", engine: str) -> str:
    return _wording()["eligible"].format(
        engine=engine, block_size=cmp.block_size, eligible=blocks(cmp.eligible_blocks), variable=variable,
        ideal_eligible_blocks=cmp.ideal_eligible_blocks,
    )


def precedes_shared(base_ids, variant_ids, cmp: "Comparison") -> bool:
    """Whether blocks are lost and at least one full block of shared text follows the value before
    the ideal divergence (the first per-request input, or the end of the prompt).

    With less, the value already sits where the rule's fix would put it: the loss is at most the
    block it shares with the text around it, and whether that block is lost depends only on where
    block boundaries fall (docs/rules/M101.md, "What it does").
    """
    if cmp.lost_blocks <= 0:
        return False
    # with no per-request input the ideal is the whole prompt: the base's end, in the base's
    # positions like the value's end (the variant's length differs by the value's)
    ideal = len(base_ids) if cmp.ideal_shared >= cmp.prompt_len else cmp.ideal_shared
    return ideal - changed_end(base_ids, variant_ids, cmp.shared) >= cmp.block_size


# ---------------------------------------------------------------------------- the template check


def plan(run: "Run") -> list:
    """The variants this check renders (prefetched and tokenized in one batch)."""
    return [{var.name: var.variant_value()} for var in run.scenario.of_kind("volatile")]


def measure(run: "Run", var) -> Tuple[Any, "Comparison"]:
    """``var``'s next-request variant and its comparison: M101 reports it when blocks are lost."""
    variant = run.sample(**{var.name: var.variant_value()})
    return variant, run.compare(variant)


def reports(run: "Run", var) -> bool:
    """Whether M101 reports ``var`` in this run (other checks leave that hazard to it)."""
    if not run.enabled("M101"):
        return False
    variant, cmp = measure(run, var)
    return precedes_shared(run.base().ids, variant.ids, cmp)


def check(run: "Run") -> List["Finding"]:
    findings = []
    for var in run.scenario.of_kind("volatile"):
        variant, cmp = measure(run, var)
        if not precedes_shared(run.base().ids, variant.ids, cmp):
            continue
        when = "the next day" if var.sub_kind == "date" else "on the next request"
        f = run.finding(
            "M101",
            message(var.name, var.sub_kind, cmp),
            run.locate_change(var, variant),
            variable=var.name,
            variant=variant,
            cmp=cmp,
            help=help_text(var.name, var.sub_kind),
            notes=[eligible_note(var.name, cmp, run.profile.name)],
            variant_description=f"`{var.name}` {when}: {short(var.value)} → {short(var.variant_value())}",
        )
        findings.append(f)
    return findings
