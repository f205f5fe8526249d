"""Fixes for templates, each proven by re-measuring before it is written.

One module per kind of fix proposes candidate rewrites of a template's source for one finding
(``propose(source, finding, run) -> (proposals, reason)``); ``verify`` renders and re-checks
each candidate; ``templates.fix_text`` applies the first that is proven, finding by finding.
The CLI (`check --fix`, `fixing.py`) and the language server's code actions call the same code.

Safety is the rule file's (`[fix]` in rules/<CODE>.toml, as ruff has it): a *safe* fix leaves
the rendered text unchanged up to an order the rule already calls free (sorted JSON keys); an
*unsafe* one changes what the model sees (a moved line, a changed tool order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

SAFE, UNSAFE = "safe", "unsafe"

# code -> the module (under promptlint.fixes) that proposes its template fixes
PROPOSERS = {
    "M101": "move_volatile",
    "M102": "drop_bos",
    "M201": "sort_keys",
    "M202": "sort_order",
    "M203": "sort_order",
}


@dataclass
class Proposal:
    """One candidate: the whole fixed source, and what the edit does in words."""

    code: str
    text: str
    title: str  # "move line 1 (`now`) to before line 14"
    keeps_lines: bool = False  # a move: the fixed render must have the same lines, reordered
    # a move: the source without the moved span. Its ideal is what the shared material can reach
    # (the span's own tokens were counted as shared in the finding's ideal, and cannot stay so)
    without_span: Optional[str] = None
    # the fix's own measure of eligible blocks per request, (fixed run, original run) -> blocks;
    # default: the variants the finding's check renders
    measure: Optional[Callable] = None
    # a move that also adds a token boundary: the text whose render must keep the original lines
    # (the same move without the boundary; the boundary itself splits one line in two)
    lines_text: Optional[str] = None


@dataclass
class Outcome:
    """What happened to one finding's fix."""

    code: str
    path: str  # display path
    line: int
    column: int
    variable: Optional[str]
    safety: str
    applied: bool
    title: str = ""
    before: Optional[int] = None  # eligible blocks per request with the finding
    after: Optional[int] = None  # with the fix
    reason: str = ""  # why it was not applied
    text: Optional[str] = None  # the source with this fix (and the ones before it) applied

    def summary(self) -> str:
        if self.applied:
            won = f": {self.before:,} → {self.after:,} eligible blocks per request" if self.before is not None and self.after is not None else ""
            return f"{self.code} fixed in {self.path}{won} ({self.title})"
        return f"{self.code} in {self.path}:{self.line}:{self.column}: not applied: {self.reason}"


def safety(code: str, source_kind: str = "template") -> Optional[str]:
    from promptlint.base import registry

    rule = registry.lookup(code)
    return rule.fix_safety(source_kind) if rule is not None else None
