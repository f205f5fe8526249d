"""`concise`: one line per finding, `path:line:col: CODE message`."""

from __future__ import annotations


def line(f) -> str:
    return f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}"


def render(report, stream, evidence: bool = False, settings=None) -> None:
    for f in sorted(report.errors + report.findings, key=lambda f: f.sort_key):
        stream.write(line(f) + "\n")
