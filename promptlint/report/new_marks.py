"""New vs existing, the same in every format (``check --baseline``): which findings are new, the
mark the text formats put after the code, and which findings get a GitHub annotation.

A finding's ``baseline`` is "new" or "existing" (promptlint.base.measurements.mark_findings); without a
baseline it is None and nothing here changes a report.
"""

from __future__ import annotations

from typing import List, Optional

NEW_MARK = "[new]"  # after the rule code: `path:1:9: M101 [new] message`
ANNOTATE = ("all", "new")


def is_new(f) -> bool:
    return f.baseline == "new"


def mark(f) -> str:
    """" [new]" for a finding the baseline does not have, else ""."""
    return f" {NEW_MARK}" if is_new(f) else ""


def annotate_default(result, annotate: Optional[str]) -> str:
    """`--annotate`: as given, else "new" when a baseline is in effect (the PR gate: only what the
    change brought), else "all"."""
    if annotate:
        return annotate
    return "new" if result.baseline is not None else "all"


def annotated(findings: List, annotate: str) -> List:
    """The findings that get an annotation: all, or only the new ones (``annotate == "new"``)."""
    return [f for f in findings if annotate == "all" or f.baseline != "existing"]


def counts_line(result) -> Optional[str]:
    """``N new, M existing, K fixed since REF``: None without a baseline."""
    b = result.baseline
    if b is None:
        return None
    marks = [f.baseline for f in result.errors + result.findings]
    return (f"Findings against the baseline {b.ref} ({b.commit[:12]}): {marks.count('new'):,} new, "
            f"{marks.count('existing'):,} existing, {b.fixed_findings:,} fixed.")
