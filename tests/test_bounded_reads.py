"""Issue 15, item 2: every input is read through one bounded reader.

Attacks reproduced: a committed symlink to /dev/zero (``stat`` says 0 bytes, ``read_bytes()`` never
ends), a FIFO among the templates (``open`` blocks for a writer), ``--tokenizer /dev/zero`` (hashed
forever), and an over-sized stdin buffer. Each must become a one-line error naming the file while the
other files of the run are still reported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from integration_helpers import BAD

from promptlint.doors import bounded_io

pytestmark = pytest.mark.skipif(not Path("/dev/zero").exists() or os.name != "posix", reason="needs /dev/zero")


def _project(tmp_path: Path) -> Path:
    (tmp_path / "promptlint.toml").write_text("", encoding="utf-8")
    (tmp_path / "good.j2").write_text(BAD, encoding="utf-8")  # a real M101 that must still be reported
    return tmp_path


def _all(result):
    data = result.json()
    return data["findings"] + data["errors"]


def _by_file(result):
    return {(f["path"], f["code"]) for f in _all(result)}


def test_symlink_to_dev_zero_is_refused_and_the_other_files_are_reported(tmp_path, cli):
    root = _project(tmp_path)
    (root / "zero.j2").symlink_to("/dev/zero")
    r = cli("check", "--no-cache", "--output-format", "json", ".", cwd=root)
    assert r.code == 1, r.err
    got = _by_file(r)
    assert ("zero.j2", "E005") in got
    assert ("good.j2", "M101") in got
    msg = next(f["message"] for f in _all(r) if f["path"] == "zero.j2")
    assert "leads outside the project root" in msg  # refused before any read


def test_device_named_explicitly_is_refused_by_the_reader(tmp_path, cli):
    root = _project(tmp_path)
    r = cli("check", "--no-cache", "--output-format", "json", "/dev/zero", "good.j2", cwd=root)
    assert r.code == 1, r.err
    got = _by_file(r)
    assert ("/dev/zero", "E005") in got and ("good.j2", "M101") in got
    msg = next(f["message"] for f in _all(r) if f["path"] == "/dev/zero")
    assert "not a regular file (a device)" in msg


def test_fifo_is_refused_without_blocking(tmp_path, cli):
    root = _project(tmp_path)
    os.mkfifo(root / "pipe.j2")  # no writer: a plain open() would block forever
    r = cli("check", "--no-cache", "--output-format", "json", ".", cwd=root)
    got = _by_file(r)
    assert ("pipe.j2", "E005") in got and ("good.j2", "M101") in got
    msg = next(f["message"] for f in _all(r) if f["path"] == "pipe.j2")
    assert "a FIFO" in msg


def test_tokenizer_dev_zero_is_a_one_line_error(tmp_path, cli):
    root = _project(tmp_path)
    r = cli("check", "--no-cache", "--tokenizer", "/dev/zero", "good.j2", cwd=root)
    assert r.code == 2
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "/dev/zero" in lines[0] and "not a regular file" in lines[0], r.err


def test_reader_stops_at_the_cap_whatever_stat_says(tmp_path):
    big = tmp_path / "big.j2"
    big.write_bytes(b"x" * 101)
    with pytest.raises(bounded_io.InputRefused):
        bounded_io.read_bytes(big, limit=100)
    assert bounded_io.read_bytes(big, limit=101) == b"x" * 101
    with pytest.raises(bounded_io.InputRefused):
        bounded_io.read_bytes("/dev/zero", limit=100)  # stat says 0 bytes
    with pytest.raises(bounded_io.InputRefused):
        bounded_io.sha256_file("/dev/zero")


def test_oversized_stdin_is_refused_with_one_line(tmp_path):
    root = _project(tmp_path)
    data = b"a" * (bounded_io.MAX_FILE_BYTES + 1)
    env = {k: v for k, v in os.environ.items() if k != "PROMPTLINT_DAEMON"}
    r = subprocess.run(
        [sys.executable, "-m", "promptlint", "check", "--no-cache", "--stdin-filename", "t.j2"],
        input=data, cwd=root, capture_output=True, env=env, timeout=120,
    )
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert len(err.strip().splitlines()) == 1 and "t.j2" in err and "larger than 2,000,000 bytes" in err
