"""Helpers shared by the CI formats: repository-relative paths, stable fingerprints, and where a
finding sits in its file (a template stored in JSON: the JSON file's line and column).

The working directory and the CI roots come from the ``ReportContext`` the front end built
(``records.ReportContext``): nothing here asks the process."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Dict, Iterable, List, Tuple


def relative_to(path: str, root: Path, cwd: Path) -> str:
    """POSIX path of ``path`` (relative ones to ``cwd``) relative to ``root``; unchanged (as POSIX) when outside it."""
    p = Path(path)
    try:
        return (p if p.is_absolute() else cwd / p).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return p.as_posix()


def in_file(f) -> Tuple[int, int, int, int]:
    """(line, column, end line, end column) in the file itself: for a template stored in a JSON
    string, the JSON file's position of the finding; else the finding's own."""
    s = f.stored_at
    if s is not None:
        return s.line, s.column, s.end_line, s.end_column
    return f.line, f.column, f.end_line, f.end_column


def message_suffix(f) -> str:
    """For a template stored in JSON, where in the template (the annotation points into the JSON)."""
    if f.stored_at is None:
        return ""
    return f" (line {f.line}, column {f.column} of the template stored as `{f.stored_at.key}`)"


def snippet(f) -> str:
    """The source text a finding points at (its span on one line, else its line), whitespace-normalised."""
    src = f.source_line
    if src is None:
        return ""
    text = src.span(f.column, f.end_column) if f.end_line == f.line and f.end_column > f.column else src.text
    return " ".join(text.split())


def fingerprints(findings: Iterable, root: Path, cwd: Path) -> Dict[int, str]:
    """id(finding) -> a hash that survives unrelated edits.

    Built from the rule code, the repository-relative path, the variable and the source
    text at the finding (not its line number, message or token counts, which move when
    other parts of the prompt change); repeats of the same key get an occurrence number.
    """
    out: Dict[int, str] = {}
    seen: Dict[str, int] = {}
    ordered: List = sorted(findings, key=lambda f: f.sort_key)
    for f in ordered:
        key = "\x1f".join((f.code, relative_to(f.path, root, cwd), f.variable or "", snippet(f)))
        n = seen.get(key, 0)
        seen[key] = n + 1
        out[id(f)] = hashlib.sha256(f"{key}\x1f{n}".encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return out
