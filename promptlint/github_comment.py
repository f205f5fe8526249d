"""The Action's sticky pull-request comment: one comment per pull request, updated, never duplicated.

    python -I -m promptlint.github_comment REPORT.md

Reads the markdown report a `check` wrote and puts it in a comment on the pull request the workflow
runs for (``GITHUB_EVENT_PATH``), through the REST API (``GITHUB_API_URL``, ``GITHUB_REPOSITORY``,
the token in ``GITHUB_TOKEN``). The comment is found again by a hidden marker, so every run edits
the same one. A token that may not write (a pull request from a fork: GitHub gives it a read-only
token) is not an error: the report is already in the step summary, and a line there says why no
comment was made. Always exits 0 unless the arguments are wrong: a comment is a convenience, the
check's exit code is the gate. The token is sent only to the API and never printed.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional

from promptlint.doors import bounded_io, safe_write

MARKER = "<!-- promptlint:sticky-report -->"
MAX_BODY = 65_000  # GitHub refuses a comment body over 65,536 characters
PAGES = 20  # comments looked at: 100 per page


class _Api:
    def __init__(self, base: str, repo: str, token: str) -> None:
        self.base, self.repo, self.token = base.rstrip("/"), repo, token

    def call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        req = urllib.request.Request(f"{self.base}/repos/{self.repo}{path}", data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json", "User-Agent": "promptlint"})
        with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the API base the runner names
            raw = resp.read(16 * 1024 * 1024)
        return json.loads(raw) if raw else None


def body_of(report: str) -> str:
    """The comment's text: the marker, then the report, cut below GitHub's limit at a line break."""
    text = MARKER + "\n" + report
    if len(text) <= MAX_BODY:
        return text
    note = "\n\n_The report is longer than a comment can be: the whole report is in the job's step summary._\n"
    cut = text.rfind("\n", 0, MAX_BODY - len(note))
    return text[:cut] + note


def pull_request_number(event_path: str) -> Optional[int]:
    try:
        event = json.loads(bounded_io.read_text(event_path, 16 * 1024 * 1024))
    except (OSError, ValueError):
        return None
    pr = event.get("pull_request") if isinstance(event, dict) else None
    number = pr.get("number") if isinstance(pr, dict) else None
    return number if isinstance(number, int) else None


def post(api: _Api, number: int, body: str) -> str:
    """Edit the comment that carries the marker, else make one; 'updated' or 'created'."""
    for page in range(1, PAGES + 1):
        comments: List[Dict[str, Any]] = api.call("GET", f"/issues/{number}/comments?per_page=100&page={page}") or []
        for c in comments:
            if isinstance(c, dict) and str(c.get("body", "")).startswith(MARKER):
                api.call("PATCH", f"/issues/comments/{c['id']}", {"body": body})
                return "updated"
        if len(comments) < 100:
            break
    api.call("POST", f"/issues/{number}/comments", {"body": body})
    return "created"


def _say_in_summary(text: str) -> None:
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if not summary:
        return
    try:
        old = bounded_io.read_text(summary, 64 * 1024 * 1024) if os.path.exists(summary) else ""
        safe_write.write_text(summary, old + "\n" + text + "\n")
    except OSError:
        pass


def main(argv: List[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m promptlint.github_comment REPORT.md", file=sys.stderr)
        return 2
    number = pull_request_number(os.environ.get("GITHUB_EVENT_PATH", ""))
    if number is None:
        print("promptlint: no pull request in this event: no comment made")
        return 0
    try:
        report = bounded_io.read_text(argv[0], 8 * 1024 * 1024)
    except (OSError, UnicodeDecodeError) as e:
        print(f"promptlint: no comment made: the report {argv[0]} cannot be read ({type(e).__name__})")
        return 0
    api = _Api(os.environ.get("GITHUB_API_URL") or "https://api.github.com", os.environ.get("GITHUB_REPOSITORY", ""),
               os.environ.get("GITHUB_TOKEN", ""))
    try:
        done = post(api, number, body_of(report))
    except urllib.error.HTTPError as e:
        if e.code in (401, 403, 404):  # a fork's read-only token, or comments not allowed
            why = (f"promptlint could not comment on pull request #{number} (HTTP {e.code}: the token may not write; "
                   "pull requests from forks get a read-only token): the report is in this step summary.")
            print(why)
            _say_in_summary(f"> {why}")
            return 0
        print(f"promptlint: no comment made (HTTP {e.code})")
        return 0
    except (urllib.error.URLError, OSError, ValueError) as e:
        print(f"promptlint: no comment made ({type(e).__name__})")
        return 0
    print(f"promptlint: {done} the report comment on pull request #{number}")
    return 0


if __name__ == "__main__":
    from promptlint.doors import line_guard

    with line_guard.guarded():
        raise SystemExit(main(sys.argv[1:]))
