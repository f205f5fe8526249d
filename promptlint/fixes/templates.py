"""Fix one template file, finding by finding, each fix proven before the next is tried.

Findings are fixed in source order on the text as the earlier fixes left it (proposals find
their targets by the finding's input name, not by a position the earlier edits moved). A fix
whose safety is not allowed (`unsafe` without `--unsafe-fixes`) is reported as such and not
tried; a fix that cannot be proven is reported with the verifier's reason.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from promptlint.fixes import PROPOSERS, SAFE, UNSAFE, Outcome, safety
from promptlint.base.records import Finding


# the proposers by full name (named, not an f-string over promptlint.fixes: fixes.chat calls this module)
PROPOSER_MODULES = ("promptlint.fixes.move_volatile", "promptlint.fixes.drop_bos", "promptlint.fixes.sort_keys",
                    "promptlint.fixes.sort_order")


def fixable(finding: Finding) -> bool:
    """A rule with a template fix, on a finding that is not a note (an order the samples file pins)."""
    return finding.code in PROPOSERS and safety(finding.code) is not None and finding.severity != "info"


def fix_text(
    path: Path, display: str, text: str, findings: Sequence[Finding], settings, unsafe: bool = False,
    only: Optional[Finding] = None, subject=None, unsafe_why: Optional[str] = None,
) -> Tuple[str, List[Outcome]]:
    """(the fixed text, one outcome per fixable finding). ``only``: fix just that finding (editors).
    ``subject``: how candidate texts are linted and run (default: as an application template);
    ``unsafe_why``: every fix is unsafe, for this reason (a chat template: the model's prompt format)."""
    from promptlint.fixes.verify import Subject, key, verify

    targets = [f for f in findings if fixable(f) and f.path == display and (only is None or f is only)]
    if not targets:
        return text, []
    subject = subject or Subject(path, display, settings)
    current, current_findings = text, list(findings)
    outcomes: List[Outcome] = []
    for f in sorted(targets, key=lambda f: (f.line, f.column, f.code)):
        kind = UNSAFE if unsafe_why else safety(f.code)
        out = Outcome(f.code, display, f.line, f.column, f.variable, kind, False)  # as the user saw it
        if current != text:  # an earlier fix moved things: take this finding as the fixed text reports it
            f = next((g for g in current_findings if key(g) == key(f)), None) or f
        out.before = _per_request(f)
        outcomes.append(out)
        if kind != SAFE and not unsafe:
            out.reason = f"an unsafe fix ({unsafe_why or 'the model would see different text'}): --unsafe-fixes applies it"
            continue
        run = subject.run(current, f.variable)
        if isinstance(run, list):
            out.reason = f"the template does not load ({run[0].message})"
            continue
        module = importlib.import_module(next(m for m in PROPOSER_MODULES if m.rsplit(".", 1)[1] == PROPOSERS[f.code]))
        try:
            proposals, reason = module.propose(current, f, run)
        except Exception as e:  # a proposer's bug must not cost the user the other fixes
            proposals, reason = [], f"internal error while proposing the fix ({type(e).__name__}: {e})"
        out.reason = reason or ""
        for proposal in proposals:
            verdict = verify(subject, current_findings, f, proposal, run)
            if verdict.ok:
                current, current_findings = proposal.text, verdict.findings
                title = f"{proposal.title}; unsafe: {unsafe_why}" if unsafe_why else proposal.title
                out.applied, out.title, out.after, out.reason, out.text = True, title, verdict.after, "", current
                break
            out.reason = verdict.reason
        if not out.applied and not out.reason:
            out.reason = "no candidate edit"
    return current, outcomes


def _per_request(f: Finding) -> Optional[int]:
    a = f.arithmetic
    return None if a is None else min(a.eligible_blocks, a.ideal_eligible_blocks)
