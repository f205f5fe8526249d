"""`json-lines`: one `Finding.to_dict()` object per line (errors and findings, in file order).

The objects are exactly those of the `json` format's `findings`/`errors` arrays; there is
no envelope, so a consumer can stream them.
"""

from __future__ import annotations

import json

from promptlint.base.records import ReportContext, Result

FORMAT = "json-lines"
KIND = "json"


def write(result: Result, context: ReportContext, stream) -> None:
    for f in sorted(result.errors + result.findings, key=lambda f: f.sort_key):
        stream.write(json.dumps(f.to_dict(context.evidence), ensure_ascii=False) + "\n")
