"""Launch configurations (shell scripts, Dockerfiles, YAML): prefix caching turned off (M701).

A line scan, no parsing: the flags are unambiguous. Directory walks include these files
only when they mention one of the flags; explicit paths are always scanned.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from promptlint.analysis import kernel
from promptlint.analyzers.files import Files
from promptlint.checks import prefix_caching_disabled as m701
from promptlint.base.records import Finding

SUFFIXES = (".sh", ".bash", ".zsh", ".yaml", ".yml", ".dockerfile", ".env")
FILES = Files(
    suffixes=SUFFIXES,
    names=("Dockerfile",),
    name_patterns=("Dockerfile.*", "*.Dockerfile"),
    markers=m701.MARKERS,
)


def handles(path: Path) -> bool:
    return FILES.matches_name(path)


def lint_file(path: Path, text: str, ctx: kernel.Context) -> List[Finding]:
    if not ctx.is_enabled("M701"):
        return []
    display = ctx.display(path)
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith("#") and not stripped.startswith("#!"):
            continue
        for m in m701.FLAGS.finditer(line):
            out.append(kernel.finding(
                "M701", display, m701.message(m.group(0).strip()), i, m.start() + 1, i, m.end() + 1, help=m701.help_text()))
    return out


def measure(path: Path, text: str, ctx: kernel.Context) -> list:
    """No rows: a launch flag is not a prompt, it turns the engine's cache off for every prompt
    (M701), so ``check --baseline`` compares its findings, not blocks per request."""
    return []
