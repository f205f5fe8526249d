"""`concise`: one line per finding, `path:line:col: CODE message`; with ``--baseline`` a new
finding reads `CODE [new] message`, and the baseline's summary lines follow the findings."""

from __future__ import annotations

from promptlint.base.records import ReportContext, Result

FORMAT = "concise"
KIND = "human"


def line(f) -> str:
    from promptlint.report.new_marks import mark
    from promptlint.report.style import shown_path

    return f"{shown_path(f.path)}:{f.line}:{f.column}: {f.code}{mark(f)} {f.message}"


def write(result: Result, context: ReportContext, stream) -> None:
    for f in sorted(result.errors + result.findings, key=lambda f: f.sort_key):
        stream.write(line(f) + "\n")
    if result.baseline is not None:  # why the run passes or fails
        from promptlint.report.full import baseline_lines
        from promptlint.report.new_marks import counts_line

        stream.write("\n".join(baseline_lines(result.baseline) + [counts_line(result)]) + "\n")
