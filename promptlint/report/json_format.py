"""`json`: the documented machine contract (docs/output-formats.md). Extend only."""

from __future__ import annotations

import json

from promptlint import __version__
from promptlint.base.records import ReportContext, Result

FORMAT = "json"
KIND = "json"


def write(result: Result, context: ReportContext, stream) -> None:
    """The document is ``Result.to_dict`` (records.py): the one place its fields and their order are written."""
    json.dump(result.to_dict(__version__, context.evidence), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
