"""The ``ReportContext`` of a command: what a reporter may know of the process it runs in.

The reporters (promptlint/report) read neither the environment nor the working directory; the
front end reads them here once and hands the result to every format it writes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Optional

from promptlint.base.records import ReportContext

# The CI variables naming the repository's checkout, which a format reports paths against
# (the github and sarif formats: GITHUB_WORKSPACE; gitlab: CI_PROJECT_DIR).
CI_ROOTS = ("GITHUB_WORKSPACE", "CI_PROJECT_DIR")


def git_root(cwd: Path) -> Path:
    """The git work tree enclosing ``cwd``, else ``cwd`` (resolved)."""
    here = cwd.resolve()
    for d in [here, *here.parents]:
        if (d / ".git").exists():
            return d
    return here


def from_process(stream, annotate: Optional[str] = None, evidence: bool = False,
                 environ: Optional[Mapping[str, str]] = None, cwd: Optional[Path] = None) -> ReportContext:
    """The context of a report written to ``stream`` by this process (``environ``, ``cwd``: this
    process's unless given)."""
    from promptlint.report.style import use_color

    environ = os.environ if environ is None else environ
    cwd = Path.cwd() if cwd is None else cwd
    return ReportContext(
        cwd=cwd,
        git_root=git_root(cwd),
        ci_roots={name: Path(environ[name]).resolve() for name in CI_ROOTS if environ.get(name)},
        color=use_color(stream, environ),
        annotate=annotate,
        evidence=evidence,
    )
