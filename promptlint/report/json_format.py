"""`json`: the documented machine contract (docs/output-formats.md). Extend only."""

from __future__ import annotations

import json

from promptlint import __version__


def document(result, evidence: bool = False) -> dict:
    spec = result.tokenizer
    out = {
        "version": __version__,
        "tokenizer": {
            "path": None if spec is None or spec.embedded else str(spec.path),
            "sha256": result.tokenizer_sha256,
            "embedded": bool(spec is not None and spec.embedded),
        },
        "engine": result.engine,
        "block_size": result.block_size,
        "files": result.files,
        "findings": [f.to_dict(evidence) for f in result.findings],
        "errors": [f.to_dict(evidence) for f in result.errors],
        # chat scenarios that could not be rendered (PL102 findings, listed on their own as well)
        "skipped_scenarios": [
            {"path": f.path, "line": f.line, "scenario": f.variable, "reason": f.message}
            for f in result.findings
            if f.code == "PL102"
        ],
    }
    if getattr(result, "models", None):  # `tokenizers`: the models linted against ("tokenizer" is the first's)
        out["models"] = result.models
    baseline = getattr(result, "baseline", None)
    if baseline is not None:  # check --baseline: the per-template comparison
        out["baseline"] = baseline.to_dict(result.findings + result.errors)
    return out


def write(result, stream, evidence: bool = False) -> None:
    json.dump(document(result, evidence), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
