"""`rdjson`: reviewdog's Diagnostic Format, one `DiagnosticResult` JSON document
(https://github.com/reviewdog/reviewdog/tree/master/proto/rdf), for `reviewdog -f=rdjson`.

Positions follow the format: 1-based lines, columns counted in UTF-8 **bytes** (the finding's
code-point columns converted with the linted line's text), end exclusive. A range that ends on
another line, or whose end falls past the part of a long line the finding keeps, has no `end`
(reviewdog reads a zero-length range at the start). A template stored in JSON points into the JSON
file (``stored_at``), whose line text the finding does not carry: its columns there are code
points, the same as bytes on an ASCII line. With ``--baseline`` a new finding's message starts
with `[new]` (reviewdog also filters by the diff itself). No `suggestions`: promptlint proves each
fix by re-checking the template (`check --fix`), which a replacement text cannot carry.
"""

from __future__ import annotations

import json

from promptlint.base.records import ReportContext, Result
from promptlint.report.locations import in_file, message_suffix
from promptlint.report.new_marks import NEW_MARK, is_new

FORMAT = "rdjson"
KIND = "json"

SEVERITIES = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}


def _range(f) -> dict:
    line, column, end_line, end_column = in_file(f)
    src = f.source_line if f.stored_at is None else None
    if f.stored_at is not None:  # the JSON file's code-point columns (its line text is not carried)
        start, end = column, end_column if end_line == line else None
    elif src is None:
        start, end = column, None  # no text (a file that could not be read): the column as given
    else:
        start = src.byte_column(column) or column
        end = src.byte_column(end_column) if end_line == line else None
    out = {"start": {"line": line, "column": start}}
    if end is not None and end >= start:
        out["end"] = {"line": end_line, "column": end}
    return out


def _diagnostic(f) -> dict:
    from promptlint.base import registry

    text = f"{NEW_MARK} " if is_new(f) else ""
    text += f.message + message_suffix(f) + (f"\nhelp: {f.help}" if f.help else "")
    return {
        "message": text,
        # as the finding names it (relative to the working directory when inside it): reviewdog
        # resolves a relative path from where it runs, as it does for any linter's text output
        "location": {"path": f.path, "range": _range(f)},
        "severity": SEVERITIES.get(f.severity, "WARNING"),
        "code": {"value": f.code, "url": registry.doc_url(f.code)},
    }


def document(result: Result) -> dict:
    items = sorted(result.errors + result.findings, key=lambda f: f.sort_key)
    return {"source": {"name": "promptlint"}, "diagnostics": [_diagnostic(f) for f in items]}


def write(result: Result, context: ReportContext, stream) -> None:
    json.dump(document(result), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
