"""Reporters: turn a lint result (plain records) into text. One module per format.

A reporter only formats: ``write(result, stream, evidence=False)`` prints what the result and
its findings carry (the linted source lines, the block size, the positions), and opens no file.
"""

from __future__ import annotations

import importlib

FORMATS = {
    "full": "promptlint.report.full",
    "concise": "promptlint.report.concise",
    "json": "promptlint.report.json_format",
    "json-lines": "promptlint.report.json_lines",
    "github": "promptlint.report.github",
    "gitlab": "promptlint.report.gitlab",
    "sarif": "promptlint.report.sarif",
    "markdown": "promptlint.report.markdown",
    "rdjson": "promptlint.report.rdjson",
}


def get(name: str):
    return importlib.import_module(FORMATS[name])
