"""Prove a candidate fix before it is written: parse, render every scenario, re-check, re-measure.

A candidate is applied only when, linted as the same file (same samples file, settings and
tokenizer): it loads and renders (no E finding), the finding it targets is gone, no finding
appears that was not there before, and the variants of the targeted input now share at least
the eligible blocks the finding called ideal. A move must also keep the render's lines (the
same lines, in another order: whitespace control kept). The blocks per request before and
after are what the output reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Tuple

from promptlint.analysis import kernel
from promptlint.base.records import Finding


class Subject:
    """One template file under repair: lints and measures candidate texts *as that file*."""

    def __init__(self, path: Path, display: str, settings):
        self.path = path
        self.display = display
        self.settings = settings
        spec = kernel.tokenizer_spec(settings)
        self.ctx = kernel.Context(settings, kernel.TokenizerProvider(spec), kernel.rule_filter(settings))

    def findings(self, text: str) -> List[Finding]:
        """Everything `check` reports for ``text`` (selection, per-file ignores, suppressions applied)."""
        from promptlint.driver.lint import lint

        result = lint([], self.settings, overrides={str(self.path): text}, use_cache=False)
        return result.findings + result.errors

    def run(self, text: str, variable: Optional[str] = None):
        """The TemplateRun of ``text``, or a list of E findings when it does not load (``variable``:
        the input to measure; a chat template picks a scenario that has it)."""
        from promptlint.analyzers.jinja_template import prepare

        return prepare(self.path, text, self.ctx)


@dataclass
class Verdict:
    ok: bool
    reason: str = ""
    after: Optional[int] = None  # eligible blocks per request with the fix
    findings: List[Finding] = field(default_factory=list)  # the fixed text's findings


def key(f: Finding) -> Tuple:
    return (f.code, f.path, f.variable)


def verify(subject: Subject, before: List[Finding], finding: Finding, proposal, original_run) -> Verdict:
    found = subject.findings(proposal.text)
    broken = [f for f in found if f.code.startswith("E")]
    if broken:
        return Verdict(False, f"the fixed template does not render ({broken[0].code}: {broken[0].message})")
    if any(key(f) == key(finding) for f in found):
        return Verdict(False, f"{finding.code} still fires for `{finding.variable}` after the edit ({proposal.title})")
    known = {key(f) for f in before}
    new = [f for f in found if key(f) not in known]
    if new:
        return Verdict(False, f"the edit would add {new[0].code} ({new[0].message})")
    run = subject.run(proposal.text, finding.variable)
    if isinstance(run, list):
        return Verdict(False, f"the fixed template does not load ({run[0].message})")
    if getattr(proposal, "keeps_lines", False) and not same_lines(original_run, _lines_run(subject, proposal, run)):
        return Verdict(False, "moving the span would glue or split rendered lines (whitespace control)")
    if finding.arithmetic is None:  # nothing was measured (a token doubled in the render itself)
        return Verdict(True, findings=found)
    if proposal.measure is not None:  # a fix with its own measure (M102: against chat-endpoint traffic)
        after = proposal.measure(run, original_run)
    else:
        after = measure(run, finding.code, finding.variable)
    if after is None:
        return Verdict(False, f"`{finding.variable}` can no longer be varied in the fixed template")
    ideal = finding.arithmetic.ideal_eligible_blocks if finding.arithmetic else None
    if ideal is not None and proposal.without_span is not None:
        ideal = min(ideal, _ideal_without(subject, proposal.without_span, ideal, finding.variable))
    if ideal is not None and after < ideal:
        return Verdict(False, f"the fixed render shares {after:,} eligible blocks per request, short of the ideal {ideal:,}")
    before = finding.arithmetic.eligible_blocks if finding.arithmetic else None
    if before is not None and after <= min(before, finding.arithmetic.ideal_eligible_blocks):
        return Verdict(False, f"the edit wins no block back ({before:,} → {after:,} eligible blocks per request): "
                              "the span carries the shared text with it")
    return Verdict(True, after=after, findings=found)


def _lines_run(subject: Subject, proposal, run):
    """The run whose lines a move must keep: the proposal's own, or the same move without its boundary."""
    text = getattr(proposal, "lines_text", None)
    if text is None:
        return run
    plain = subject.run(text)
    return run if isinstance(plain, list) else plain


def _ideal_without(subject: Subject, text: str, default: int, variable: Optional[str]) -> int:
    """The ideal eligible blocks of ``text`` (the template without the moved span)."""
    from promptlint.render import RenderError

    run = subject.run(text, variable)
    if isinstance(run, list):
        return default
    try:
        plans = run.plan_ideal()
        variant = run.sample(**plans[0]) if plans else run.base()
        return run.compare(variant).ideal_eligible_blocks
    except RenderError:
        return default


def same_lines(a, b) -> bool:
    """The two runs' base renders have the same lines (as a multiset) and differ in order only."""
    x, y = a.base().text, b.base().text
    return x != y and sorted(x.split("\n")) == sorted(y.split("\n"))


def measure(run, code: str, variable: Optional[str]) -> Optional[int]:
    """Eligible blocks per request in ``run`` across the variants ``code``'s check renders for
    ``variable``: the worst variant's shared blocks, capped by what per-request input allows."""
    import re

    from promptlint import checks

    module = next((m for m in checks.template_checks() if code in m.CODES), None)
    if module is None or not hasattr(module, "plan"):
        return None
    root = re.match(r"[^.\[]*", variable or "").group(0)  # a mapping inside an input (M201 `guest.profile`)
    plans = [p for p in module.plan(run) if variable in p or root in p]
    if not plans:
        return None
    worst = None
    for overrides in plans:
        cmp = run.compare(run.sample(**overrides))
        blocks = min(cmp.eligible_blocks, cmp.ideal_eligible_blocks)
        worst = blocks if worst is None else min(worst, blocks)
    return worst
