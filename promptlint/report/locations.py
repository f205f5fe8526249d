"""Helpers shared by the CI formats: repository-relative paths and stable fingerprints."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple


def repo_root(env_var: Optional[str] = None) -> Path:
    """``$env_var`` (GITHUB_WORKSPACE, CI_PROJECT_DIR) if set, else the enclosing git work tree, else cwd."""
    if env_var and os.environ.get(env_var):
        return Path(os.environ[env_var]).resolve()
    cwd = Path.cwd().resolve()
    for d in [cwd, *cwd.parents]:
        if (d / ".git").exists():
            return d
    return cwd


def relative_to(path: str, root: Path) -> str:
    """POSIX path of ``path`` relative to ``root``; unchanged (as POSIX) when outside it."""
    p = Path(path)
    try:
        return (p if p.is_absolute() else Path.cwd() / p).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return p.as_posix()


def _lines(path: str) -> Tuple[str, ...]:
    try:
        return tuple(Path(path).read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return ()


def snippet(f, cache: Optional[Dict[str, Tuple[str, ...]]] = None) -> str:
    """The source text a finding points at (its span on one line, else its first line), whitespace-normalised."""
    cache = {} if cache is None else cache
    if f.path not in cache:
        cache[f.path] = _lines(f.path)
    lines = cache[f.path]
    if not (1 <= f.line <= len(lines)):
        return ""
    text = lines[f.line - 1]
    if f.end_line == f.line and f.end_column > f.column:
        text = text[f.column - 1 : f.end_column - 1]
    return " ".join(text.split())


def fingerprints(findings: Iterable, root: Path) -> Dict[int, str]:
    """id(finding) -> a hash that survives unrelated edits.

    Built from the rule code, the repository-relative path, the variable and the source
    text at the finding (not its line number, message or token counts, which move when
    other parts of the prompt change); repeats of the same key get an occurrence number.
    """
    out: Dict[int, str] = {}
    seen: Dict[str, int] = {}
    files: Dict[str, Tuple[str, ...]] = {}
    ordered: List = sorted(findings, key=lambda f: f.sort_key)
    for f in ordered:
        key = "\x1f".join((f.code, relative_to(f.path, root), f.variable or "", snippet(f, files)))
        n = seen.get(key, 0)
        seen[key] = n + 1
        out[id(f)] = hashlib.sha256(f"{key}\x1f{n}".encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return out
