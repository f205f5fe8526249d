"""`sarif`: SARIF 2.1.0 for GitHub code scanning (and any SARIF viewer).

Every rule ships with its documentation as `help.text`/`help.markdown`, and `helpUri` when
the rule documentation link (promptlint.base.registry.DOCS_URL) is an absolute URL: SARIF requires
one there and GitHub's upload rejects anything else. Each result has a
repository-relative `artifactLocation.uri` (base `%SRCROOT%`), a region (1-based,
columns in Unicode code points, end column exclusive), a level, a stable
`partialFingerprints["promptlint/v1"]`, and the token arithmetic in `properties`. A
template stored in tokenizer_config.json gets the JSON file's region; the message says where
in the template. With ``--baseline`` each result has a `baselineState`: `new`, or `unchanged`
for a finding the baseline has too. Findings of the baseline that are gone are counted in the
run's properties, not listed as `absent` results: `baselineState` is not among the SARIF
properties GitHub code scanning documents reading, so an uploaded `absent` result would open an
alert at a place the change fixed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from promptlint import __version__
from promptlint.base.records import ReportContext, Result
from promptlint.report.locations import fingerprints, in_file, message_suffix, relative_to

FORMAT = "sarif"
KIND = "json"
ROOT = "GITHUB_WORKSPACE"  # %SRCROOT%: it when set (ReportContext.ci_roots), else the git work tree

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT_KEY = "promptlint/v1"
BASELINE_STATES = {"new": "new", "existing": "unchanged"}  # a finding's baseline mark -> baselineState


def _rule(rule) -> dict:
    from promptlint.base.registry import is_absolute_url

    url = rule.doc_url
    markdown = rule.markdown() + f"\nDocumentation: {url} (`promptlint rule {rule.code}` prints it).\n"
    short = rule.short_summary
    out = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": rule.summary or short},
        "help": {"text": markdown, "markdown": markdown},
        "defaultConfiguration": {"level": LEVELS.get(rule.severity, "warning")},
        "properties": {"tags": ["promptlint", f"miss-class/{rule.miss_class}"], "precision": "high"},
    }
    if is_absolute_url(url):
        out["helpUri"] = url
    return out


def _location(f, root: Path, cwd: Path) -> dict:
    line, column, end_line, end_column = in_file(f)
    return _physical(f.path, line, column, end_line, end_column, root, cwd)


def _physical(path: str, line: int, column: int, end_line: int, end_column: int, root: Path, cwd: Path) -> dict:
    rel = relative_to(path, root, cwd)
    # file names are bytes on POSIX: percent-encode those bytes (a name that is not UTF-8 arrives
    # here with surrogate escapes, which str-quoting cannot encode)
    raw = os.fsencode(rel)
    if Path(rel).is_absolute():
        artifact = {"uri": "file://" + quote(raw, safe="/")}
    else:
        artifact = {"uri": quote(raw, safe="/"), "uriBaseId": "%SRCROOT%"}
    region = {"startLine": line, "startColumn": column, "endLine": max(end_line, line)}
    if end_column >= 1:
        region["endColumn"] = end_column
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _related(f, root: Path, cwd: Path) -> list:
    """A Python hazard made in one module and sent from another: each sending call, as a related location."""
    out = []
    for i, s in enumerate(f.sent_by):
        loc = _physical(s.path, s.line, s.column, s.line, 0, root, cwd)
        loc.update({"id": i, "message": {"text": f"sent by `{s.call}`"}})
        out.append(loc)
    return out


# The JSON record's own fields that SARIF already carries elsewhere (rule, message, location, sending calls).
_NOT_PROPERTIES = ("code", "message", "path", "line", "column", "end_line", "end_column", "evidence", "sent_by")


def _properties(f) -> dict:
    """The finding's JSON record (token arithmetic included) minus what SARIF says elsewhere."""
    return {k: v for k, v in f.to_dict().items() if k not in _NOT_PROPERTIES}


def _baseline_properties(result) -> dict:
    """check --baseline: the revision compared with and the findings by state (`fixed`: gone since)."""
    b = result.baseline
    if b is None:
        return {}
    marks = [f.baseline for f in result.errors + result.findings]
    return {"baseline": {"ref": b.ref, "commit": b.commit, "new": marks.count("new"),
                         "unchanged": marks.count("existing"), "fixed": b.fixed_findings}}


def document(result: Result, context: ReportContext) -> dict:
    from promptlint.base import registry

    rules = list(registry.all_rules().values())
    index = {r.code: i for i, r in enumerate(rules)}
    root = context.root(ROOT)
    items = sorted(result.errors + result.findings, key=lambda f: f.sort_key)
    prints = fingerprints(items, root, context.cwd)
    results = []
    for f in items:
        text = f.message + message_suffix(f) + (f"\nhelp: {f.help}" if f.help else "")
        entry = {
            "ruleId": f.code,
            "level": LEVELS.get(f.severity, "warning"),
            "message": {"text": text},
            "locations": [_location(f, root, context.cwd)],
            "partialFingerprints": {FINGERPRINT_KEY: prints[id(f)]},
            "properties": _properties(f),
        }
        related = _related(f, root, context.cwd)
        if related:
            entry["relatedLocations"] = related
        if f.code in index:
            entry["ruleIndex"] = index[f.code]
        if f.baseline in BASELINE_STATES:  # check --baseline
            entry["baselineState"] = BASELINE_STATES[f.baseline]
        results.append(entry)
    run = {
        "tool": {
            "driver": {
                "name": "promptlint",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule(r) for r in rules],
            }
        },
        "automationDetails": {"id": "promptlint/"},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "note", "message": {"text": n}} for n in result.notices
                ],
            }
        ],
        "results": results,
        "properties": {"engine": result.engine, "tokenizer_sha256": result.tokenizer_sha256,
                       **({"models": [m.to_dict() for m in result.models]} if result.models else {}),
                       **_baseline_properties(result)},
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def write(result: Result, context: ReportContext, stream) -> None:
    json.dump(document(result, context), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
