"""`gitlab`: a GitLab Code Quality report (a JSON array of Code Climate issues).

Paths are relative to $CI_PROJECT_DIR (else the git work tree); fingerprints are the
same stable hashes as SARIF's partialFingerprints.
"""

from __future__ import annotations

import json

from promptlint.report.locations import fingerprints, relative_to, repo_root

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def issues(report) -> list:
    root = repo_root("CI_PROJECT_DIR")
    items = sorted(report.errors + report.findings, key=lambda f: f.sort_key)
    prints = fingerprints(items, root)
    return [
        {
            "type": "issue",
            "check_name": f.code,
            "description": f"{f.code} {f.message}",
            "categories": ["Performance"] if f.code.startswith("M") else ["Bug Risk"],
            "severity": SEVERITY.get(f.severity, "minor"),
            "fingerprint": prints[id(f)],
            "location": {
                "path": relative_to(f.path, root),
                "positions": {
                    "begin": {"line": f.line, "column": f.column},
                    "end": {"line": f.end_line, "column": f.end_column},
                },
            },
        }
        for f in items
    ]


def render(report, stream, evidence: bool = False, settings=None) -> None:
    json.dump(issues(report), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
