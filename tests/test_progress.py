"""Issue 18 item 6: a progress bar on stderr for `check` and `audit`, only when stderr is a
terminal and the output is for people. The terminal is a real pseudo-terminal (os.openpty);
the command runs in its own process, as a user starts it."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

import pytest

from conftest import DATA, QWEN, REPO

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")

TEMPLATE = "Time: {{ now }}\nYou are the support agent of the Acme outdoor shop. Be concise.\nQ: {{ question }}\n"


def _env():
    env = dict(os.environ)
    env.pop("PROMPTLINT_NO_PROGRESS", None)
    env["PROMPTLINT_DAEMON"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def run(args, cwd: Path, tty: bool, env=None):
    """(exit code, stdout, stderr) of `python -m promptlint ARGS`, stderr on a pty when ``tty``."""
    cmd = [sys.executable, "-m", "promptlint", *map(str, args)]
    if not tty:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env or _env(), timeout=300)
        return r.returncode, r.stdout, r.stderr
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    out_file = tempfile.TemporaryFile()  # not a pipe: a long report must not block the process
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=out_file, stderr=slave, env=env or _env())
    os.close(slave)
    err = b""
    while True:  # drain the terminal while the process runs (a full pty would block it)
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                chunk = b""
            if not chunk:
                break
            err += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=300)
    out_file.seek(0)
    out = out_file.read().decode()
    out_file.close()
    os.close(master)
    return proc.returncode, out, err.decode("utf-8", "replace")


@pytest.fixture
def project(tmp_path):
    for name in ("a.j2", "b.j2", "c.j2"):
        (tmp_path / name).write_text(TEMPLATE, encoding="utf-8")
    return tmp_path


def test_check_shows_a_bar_on_a_terminal_and_the_report_is_unchanged(project):
    args = ["check", "--tokenizer", QWEN, "--no-cache", "a.j2", "b.j2", "c.j2"]
    code, out, err = run(args, project, tty=True)
    assert code == 1, err
    assert "checking" in err and "3/3" in err  # tqdm's counter of the three files
    piped = run(args, project, tty=False)
    assert piped[0] == 1 and piped[1] == out  # the report on stdout is the same
    assert "checking" not in piped[2]


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "markdown"])
def test_machine_formats_get_no_bar_even_on_a_terminal(project, fmt):
    code, out, err = run(["check", "--tokenizer", QWEN, "--no-cache", "--output-format", fmt, "a.j2", "b.j2"], project, tty=True)
    assert code == 1 and out
    assert "checking" not in err and "2/2" not in err


def test_no_bar_when_turned_off(project):
    env = _env()
    env["PROMPTLINT_NO_PROGRESS"] = "1"
    code, out, err = run(["check", "--tokenizer", QWEN, "--no-cache", "a.j2"], project, tty=True, env=env)
    assert code == 1 and "checking" not in err


def test_audit_shows_a_bar_of_the_trace_bytes_on_a_terminal(tmp_path):
    trace = DATA / "audit" / "mooncake_trace.jsonl"
    size = trace.stat().st_size
    code, out, err = run(["audit", trace], tmp_path, tty=True)
    assert code == 0, err
    assert "auditing:" in err and f"0.00/{size} " in err  # the total: the trace file's bytes
    code, out, err = run(["audit", trace, "--output-format", "json"], tmp_path, tty=True)
    assert code == 0 and "auditing" not in err
    code, out, err = run(["audit", trace], tmp_path, tty=False)
    assert code == 0 and "auditing" not in err
