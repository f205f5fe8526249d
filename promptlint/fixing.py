"""`check --fix` / `--diff`: ask each file's analyzer for its safe fixes.

Only findings that survived selection, per-file ignores and suppression comments (the
lint result's findings) are fixed. An analyzer offers fixes with
``fix(path, text, display, findings) -> (new_text, fixed_findings)``.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Dict, List, Tuple

from promptlint import bounded_io
from promptlint.records import Finding


def apply_fixes(result, write: bool) -> Tuple[List[Finding], List[str]]:
    """(fixed findings, unified diffs); writes the files when ``write``."""
    from promptlint.analyzers import analyzer_for

    by_path: Dict[str, List[Finding]] = {}
    for f in result.findings:
        by_path.setdefault(f.path, []).append(f)
    fixed: List[Finding] = []
    diffs: List[str] = []
    for display, findings in sorted(by_path.items()):
        path = Path(display)
        analyzer = analyzer_for(path)
        if analyzer is None or not hasattr(analyzer, "fix") or not path.is_file():
            continue
        try:
            text = bounded_io.read_bytes(path).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        except (OSError, UnicodeDecodeError):
            continue
        new_text, done = analyzer.fix(path, text, display, findings)
        if not done or new_text == text:
            continue
        fixed.extend(done)
        if write:
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(new_text)
        else:
            diffs.append("".join(difflib.unified_diff(
                text.splitlines(keepends=True), new_text.splitlines(keepends=True), *_labels(display))))
    return fixed, diffs


def _labels(display: str) -> Tuple[str, str]:
    if Path(display).is_absolute():
        return display, display
    return f"a/{display}", f"b/{display}"
