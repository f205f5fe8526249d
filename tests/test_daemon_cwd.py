"""A daemon request carries its working directory; the daemon never enters it (issue 28).

The daemon serves `check` for clients in any directory of its project. Each request's typed paths
(arguments, `--stdin-filename`, `--report-file`, `--config`, `--tokenizer`) are the client's, so
the front end joins them to the request's directory (``Console.cwd`` -> ``Settings.base``) and
names findings relative to it, as the client's own process would. Here the request is served by
``daemon.server.run_check`` in this process with ``os.chdir`` made to fail, and compared byte for
byte with a real in-process run (a subprocess started in that directory).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

TIMEOUT = 180

# (directory below the project, argv): a subdirectory with `../` paths, the project root, a template
# outside the subdirectory (named `../common/ts.j2` in the output), a relative --config and
# --tokenizer, --stdin-filename, and report files written relative to the client's directory
REQUESTS = [
    ("prompts", ["check", "--no-cache", "support_timestamp.j2", "../common/ts.j2",
                 "--report-file", "json=../out/sub.json", "--report-file", "sarif=local.sarif"]),
    ("prompts", ["check", "--no-cache", "--config", "../pyproject.toml", "--output-format", "json", "../prompts"]),
    ("prompts", ["check", "--no-cache", "--tokenizer", "../tokenizer/tokenizer.json", "--output-format", "concise",
                 "agent_request_id.j2", "../common"]),
    ("prompts", ["check", "--no-cache", "--stdin-filename", "../common/typed.j2", "--output-format", "json"]),
    ("prompts", ["check", "--no-cache", "missing.j2", "../nowhere/x.j2", "../common/bin.j2"]),
    ("prompts", ["check", "--no-cache", "--diff", "--unsafe-fixes", "../common/ts.j2"]),
    ("prompts", ["check", "--no-cache", "--fix", "--unsafe-fixes", "../common/ts.j2", "support_timestamp.j2"]),
    ("prompts", ["check", "--no-cache", "--show-inferred", "../prompts/agent_request_id.j2"]),
    (".", ["check", "--no-cache", "--report-file", "json=out/root.json"]),
    (".", ["check", "--no-cache", "common/ts.j2", "--output-format", "github"]),
]
REPORTS = ["out/sub.json", "prompts/local.sarif", "out/root.json"]
FIXED = ["common/ts.j2", "prompts/support_timestamp.j2"]  # what --fix rewrites: put back after each run
STDIN = (REPO / "examples" / "prompts" / "support_timestamp.j2").read_bytes()  # an M101 at line 1


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root)
    (root / "common").mkdir()
    shutil.copy(root / "prompts" / "support_timestamp.j2", root / "common" / "ts.j2")
    (root / "common" / "bin.j2").write_bytes(b"a\0b")  # an E005 read error, named as typed
    (root / "out").mkdir()
    return root


def _env():
    import promptlint

    # the checkout under test (the one imported here) in the reference run too
    e = dict(os.environ, PYTHONPATH=str(Path(promptlint.__file__).resolve().parent.parent), NO_COLOR="1")
    for name in ("PROMPTLINT_DAEMON", "CI", "GITHUB_ACTIONS", "FORCE_COLOR"):
        e.pop(name, None)
    return e


def _reports(root: Path):
    """The report files' bytes, then removed (each run writes them afresh); the fixed templates'
    bytes, then restored."""
    out = {}
    for name in FIXED:
        p, original = root / name, (REPO / "examples" / "prompts" / "support_timestamp.j2").read_bytes()
        if p.read_bytes() != original:
            out[name] = p.read_bytes()
            p.write_bytes(original)
    for name in REPORTS:
        p = root / name
        if p.exists():
            out[name] = p.read_bytes()
            p.unlink()
    return out


def _in_process(root: Path, where: str, argv):
    r = subprocess.run([sys.executable, "-m", "promptlint", *argv[:1], "--no-daemon", *argv[1:]], cwd=root / where,
                       input=STDIN, capture_output=True, env=_env(), timeout=TIMEOUT)
    return r.returncode, r.stdout, r.stderr


def test_a_request_is_served_from_its_directory_without_entering_it(project, monkeypatch):
    from promptlint.daemon.server import run_check
    from promptlint.driver.workspace import Workspace
    from promptlint.project.config import Settings

    expected = [(_in_process(project, where, argv), _reports(project)) for where, argv in REQUESTS]
    # what the in-process runs printed: the subdirectory's findings named as typed, `../` kept
    first = expected[0][0][1].decode()
    assert "support_timestamp.j2:" in first and "../common/ts.j2:" in first and "prompts/" not in first
    assert set(expected[0][1]) == {"out/sub.json", "prompts/local.sarif"} and set(expected[8][1]) == {"out/root.json"}
    assert set(expected[6][1]) == set(FIXED)  # --fix rewrote both, named as typed
    assert b"Fixed 2 findings (M101 ../common/ts.j2:1:15, M101 support_timestamp.j2:1:15)" in expected[6][0][1]
    assert b"--- a/../common/ts.j2" in expected[5][0][1]  # as typed
    assert b"inferred samples for agent_request_id.j2" in expected[7][0][1]
    assert b"../nowhere/x.j2" in expected[4][0][1] and b"missing.j2" in expected[4][0][1]
    assert b"../common/bin.j2:1:1: E005 binary file" in expected[4][0][1]
    assert b'"../common/typed.j2"' in expected[3][0][1]

    def refuse(*a, **k):
        raise AssertionError("the daemon changed its working directory")

    own = os.getcwd()
    monkeypatch.setattr(os, "chdir", refuse)
    monkeypatch.setattr(os, "fchdir", refuse)
    workspace = Workspace(Settings(root=project), resident=True)
    env = _env()
    for (where, argv), (answer, reports) in zip(REQUESTS, expected):
        header = {"argv": argv, "cwd": str(project / where), "env": env, "stdout": {"encoding": "utf-8"},
                  "stderr": {"encoding": "utf-8"}}
        served = run_check(workspace, header, STDIN)
        assert served == answer, (where, argv)
        assert _reports(project) == reports, (where, argv)
        assert os.getcwd() == own
