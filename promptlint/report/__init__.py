"""Reporters: turn a lint Report (plain records) into text. One module per format."""

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
}


def get(name: str):
    return importlib.import_module(FORMATS[name])
