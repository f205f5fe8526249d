"""`gitlab`: a GitLab Code Quality report (a JSON array of Code Climate issues).

Paths are relative to $CI_PROJECT_DIR (else the git work tree); fingerprints are the
same stable hashes as SARIF's partialFingerprints. A template stored in tokenizer_config.json
is placed at the JSON file's line and column; the description says where in the template.
With ``--baseline`` a new finding's description reads `CODE [new] message` (GitLab compares
fingerprints with the target branch's report itself; the mark says what promptlint's baseline saw).
"""

from __future__ import annotations

import json

from promptlint.base.records import ReportContext, Result
from promptlint.report.locations import fingerprints, in_file, message_suffix, relative_to
from promptlint.report.new_marks import mark

FORMAT = "gitlab"
KIND = "json"
ROOT = "CI_PROJECT_DIR"  # paths are relative to it when set (ReportContext.ci_roots), else the git work tree

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def issue(f, root, cwd, fingerprint: str) -> dict:
    line, column, end_line, end_column = in_file(f)
    return {
        "type": "issue",
        "check_name": f.code,
        "description": f"{f.code}{mark(f)} {f.message}{message_suffix(f)}",
        "categories": ["Performance"] if f.code.startswith("M") else ["Bug Risk"],
        "severity": SEVERITY.get(f.severity, "minor"),
        "fingerprint": fingerprint,
        "location": {
            "path": relative_to(f.path, root, cwd),
            "positions": {
                "begin": {"line": line, "column": column},
                "end": {"line": end_line, "column": end_column},
            },
        },
    }


def issues(result: Result, context: ReportContext) -> list:
    root = context.root(ROOT)
    items = sorted(result.errors + result.findings, key=lambda f: f.sort_key)
    prints = fingerprints(items, root, context.cwd)
    return [issue(f, root, context.cwd, prints[id(f)]) for f in items]


def write(result: Result, context: ReportContext, stream) -> None:
    json.dump(issues(result, context), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
