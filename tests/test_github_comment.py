"""The Action's sticky pull-request comment (promptlint/github_comment.py) against a local stand-in for
GitHub's REST API: one comment, found again by its marker and edited, never duplicated; a read-only
token (a pull request from a fork) is explained in the step summary and is not an error."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from promptlint import github_comment

pytestmark = pytest.mark.slow  # a real end-to-end run (docs/architecture.md, "Tests")

TOKEN = "ghs_commentCanary000111222"


class FakeGitHub:
    """Issue comments of one repository, in memory; ``refuse`` answers every write with that status."""

    def __init__(self, refuse=None):
        self.comments = [{"id": 7, "body": "an unrelated comment"}]
        self.calls = []
        self.refuse = refuse
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self):
                return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

            def do_GET(self):
                fake.calls.append(("GET", self.path, self.headers.get("Authorization")))
                self._send(200, fake.comments if "page=1" in self.path else [])

            def do_POST(self):
                fake.calls.append(("POST", self.path, self.headers.get("Authorization")))
                if fake.refuse:
                    return self._send(fake.refuse, {"message": "Resource not accessible by integration"})
                c = {"id": 100 + len(fake.comments), "body": self._body()["body"]}
                fake.comments.append(c)
                self._send(201, c)

            def do_PATCH(self):
                fake.calls.append(("PATCH", self.path, self.headers.get("Authorization")))
                cid = int(self.path.rsplit("/", 1)[1])
                [c] = [c for c in fake.comments if c["id"] == cid]
                c["body"] = self._body()["body"]
                self._send(200, c)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()


@pytest.fixture
def github(tmp_path, monkeypatch):
    fakes = []

    def make(refuse=None):
        fake = FakeGitHub(refuse)
        fakes.append(fake)
        event = tmp_path / "event.json"
        event.write_text(json.dumps({"pull_request": {"number": 42}}), encoding="utf-8")
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.setenv("GITHUB_REPOSITORY", "octo/app")
        monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
        return fake

    yield make
    for f in fakes:
        f.close()


def test_one_comment_created_then_edited_never_duplicated(github, tmp_path, capsys):
    fake = github()
    report = tmp_path / "report.md"
    report.write_text("## promptlint: prompt-cache report\n\n1 finding\n", encoding="utf-8")
    assert github_comment.main([str(report)]) == 0
    report.write_text("## promptlint: prompt-cache report\n\nNo findings.\n", encoding="utf-8")
    assert github_comment.main([str(report)]) == 0
    ours = [c for c in fake.comments if c["body"].startswith(github_comment.MARKER)]
    assert len(ours) == 1 and ours[0]["body"].endswith("No findings.\n") and ours[0]["id"] == 101
    assert [(m, p.split("?")[0]) for m, p, _ in fake.calls] == [
        ("GET", "/repos/octo/app/issues/42/comments"), ("POST", "/repos/octo/app/issues/42/comments"),
        ("GET", "/repos/octo/app/issues/42/comments"), ("PATCH", "/repos/octo/app/issues/comments/101")]
    assert all(auth == f"Bearer {TOKEN}" for _, _, auth in fake.calls)
    out = capsys.readouterr()
    assert "created" in out.out and "updated" in out.out and TOKEN not in out.out + out.err


def test_a_read_only_token_is_explained_in_the_summary_not_an_error(github, tmp_path, capsys):
    github(refuse=403)
    report = tmp_path / "report.md"
    report.write_text("## report\n", encoding="utf-8")
    (tmp_path / "summary.md").write_text("## report\n", encoding="utf-8")
    assert github_comment.main([str(report)]) == 0
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## report\n") and "could not comment on pull request #42 (HTTP 403" in summary
    assert "forks" in summary and TOKEN not in capsys.readouterr().out


def test_a_report_longer_than_a_comment_is_cut_at_a_line_with_a_pointer_to_the_summary():
    body = github_comment.body_of("| row |\n" * 20_000)  # 160,000 characters
    assert len(body) < 65_536 and body.startswith(github_comment.MARKER)
    assert body.endswith("the whole report is in the job's step summary._\n")
    assert "| row |\n\n_The report" in body  # cut after a whole line


def test_outside_a_pull_request_nothing_is_sent(github, tmp_path, monkeypatch):
    fake = github()
    (tmp_path / "push.json").write_text(json.dumps({"ref": "refs/heads/main"}), encoding="utf-8")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "push.json"))
    report = tmp_path / "report.md"
    report.write_text("x\n", encoding="utf-8")
    assert github_comment.main([str(report)]) == 0 and fake.calls == []


def test_the_action_comments_through_its_run_step(github, tmp_path):
    """The Action with `comment: true`: the run step posts the markdown report it wrote."""
    from test_action import CLEAN, STAMP_FIRST, git, repo, run_step
    import installation

    fake = github()
    python = str(installation.make(tmp_path / "inst"))
    root = repo(tmp_path, CLEAN)
    (root / "prompts" / "support.j2").write_text(STAMP_FIRST, encoding="utf-8")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "the pull request")
    runner = tmp_path / "runner"
    runner.mkdir()
    done, summary, outputs = run_step("run", {"python": python, "args": "prompts", "comment": "true"}, {"event": {}}, root, runner)
    assert done.returncode == 1, done.stderr
    [ours] = [c for c in fake.comments if c["body"].startswith(github_comment.MARKER)]
    assert ours["body"][len(github_comment.MARKER) + 1:] == (runner / "promptlint-report.md").read_text(encoding="utf-8")
    assert "M101" in ours["body"] and outputs["markdown"] == str(runner / "promptlint-report.md")
