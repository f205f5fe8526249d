"""Fixes of a Python hazard made in one module and sent from another (``Finding.sent_by``), proven.

`check --fix` on ``rag.py`` reports an unordered listing at the line of ``kb.py`` that makes it; the fix
(``sorted(...)`` around the iterated listing) goes there. ``kb.py`` analysed alone has no request, so
its own analyzer cannot find the hazard again: ``python_source.fix_sent`` analyses the sending modules
with the fixed text in place of the file. The fixed text is kept only when a re-check of the sending
modules and the file (``lint`` with both as buffers, no cache) no longer reports the finding and reports
nothing that the same check of the original text did not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from promptlint.base.records import Finding


def fix(analyzer, path: Path, display: str, text: str, findings: Sequence[Finding], settings) -> Tuple[str, List[Finding]]:
    """(the proven text, the findings it fixes); ``text`` and [] when nothing is proven."""
    candidates = [f for f in findings if f.sent_by]
    if not candidates or settings is None or not hasattr(analyzer, "fix_sent"):
        return text, []
    new_text, fixed = analyzer.fix_sent(path, text, display, candidates, settings)
    if not fixed or new_text == text:
        return text, []
    senders = sorted({s.path for f in fixed for s in f.sent_by})
    before = _check(path, text, senders, settings)
    after = _check(path, new_text, senders, settings)
    if before is None or after is None:
        return text, []
    if any(_place(g) == _place(f) for f in fixed for g in after):
        return text, []  # still reported where it was fixed
    known = {_key(g) for g in before}
    if any(_key(g) not in known for g in after):
        return text, []  # the edit would add a finding
    return new_text, list(fixed)


def _check(path: Path, text: str, senders: Sequence[str], settings):
    """Everything `check` reports for the senders and the file, ``text`` in place of the file."""
    from promptlint.driver.lint import lint
    from promptlint.analysis import kernel

    buffers: Dict[str, str] = {str(path): text}
    for s in senders:
        source = kernel.read_source(Path(s))
        if not isinstance(source, str):
            return None
        buffers.setdefault(s, source)
    result = lint([], settings, overrides=buffers, use_cache=False)
    if any(e.code.startswith("E") for e in result.errors):
        return None
    return result.findings


def _place(f: Finding) -> tuple:
    return (f.code, str(Path(f.path).absolute()), f.line, f.column)


def _key(f: Finding) -> tuple:
    return (f.code, str(Path(f.path).absolute()), f.line, f.variable)
