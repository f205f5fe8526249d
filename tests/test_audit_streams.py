"""Operator inputs of any size (traces, KV events, scrapes, the fingerprint key) are read from
regular files or pipes only: a device would read forever (/dev/zero) and a directory never parses."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "audit"
TRACE = DATA / "anthropic_messages.jsonl"


def _audit(*args: str, cwd: Path):
    return subprocess.run([sys.executable, "-m", "promptlint", "audit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("args, what", [
    (["/dev/zero"], "cannot read the trace (a device, not a file or a pipe); check the path"),
    ([str(TRACE), "--kv-events", "/dev/zero"], "cannot read the KV events (a device, not a file or a pipe); check the path"),
    ([str(TRACE), "--scrape-before", "/dev/zero", "--scrape-after", "/dev/zero"], "cannot read the scrape (a device, not a file or a pipe)"),
    ([str(TRACE), "--fp-key", "/dev/zero"], "cannot use as fingerprint key (a device, not a file or a pipe); give a file of >= 16 random bytes"),
])
def test_a_device_is_refused_with_one_line(tmp_path, args, what):
    r = _audit(*args, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == f"promptlint: error: /dev/zero: {what}"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_pipe_is_read_as_the_file_it_carries(tmp_path):
    """`audit <(zcat trace.jsonl.gz)` hands promptlint a pipe: it reads it as it reads the file."""
    from_file = _audit(str(TRACE), cwd=tmp_path)
    fifo = tmp_path / "trace.jsonl"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as w:
            w.write(TRACE.read_bytes())

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        from_pipe = _audit(str(fifo), cwd=tmp_path)
    finally:
        writer.join(timeout=60)
    assert from_file.returncode == from_pipe.returncode == 0, from_pipe.stderr
    assert "audited 1 requests, 2050 prompt tokens" in from_file.stdout
    assert from_pipe.stdout == from_file.stdout
