"""`concise`: one line per finding, `path:line:col: CODE message`."""

from __future__ import annotations


def line(f) -> str:
    from promptlint.report.style import shown_path

    return f"{shown_path(f.path)}:{f.line}:{f.column}: {f.code} {f.message}"


def write(result, stream, evidence: bool = False) -> None:
    for f in sorted(result.errors + result.findings, key=lambda f: f.sort_key):
        stream.write(line(f) + "\n")
