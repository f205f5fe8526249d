"""`json`: the documented machine contract (docs/output-formats.md). Extend only."""

from __future__ import annotations

import json

from promptlint import __version__


def document(report, settings, evidence: bool = False) -> dict:
    spec = report.tokenizer
    return {
        "version": __version__,
        "tokenizer": {
            "path": None if spec is None or spec.embedded else str(spec.path),
            "sha256": report.tokenizer_sha256,
            "embedded": bool(spec is not None and spec.embedded),
        },
        "engine": settings.engine,
        "block_size": _block_size(settings),
        "files": report.files,
        "findings": [f.to_dict(evidence) for f in report.findings],
        "errors": [f.to_dict(evidence) for f in report.errors],
        # chat scenarios that could not be rendered (PL102 findings, listed on their own as well)
        "skipped_scenarios": [
            {"path": f.path, "line": f.line, "scenario": f.variable, "reason": f.message}
            for f in report.findings
            if f.code == "PL102"
        ],
    }


def _block_size(settings) -> int:
    from promptlint.compare import engine_profile

    return engine_profile(settings.engine, settings.block_size).block_size


def render(report, stream, evidence: bool = False, settings=None) -> None:
    json.dump(document(report, settings, evidence), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
