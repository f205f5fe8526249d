"""The client side: find this project's daemon, forward a `check` to it, start one when asked.

Imports only the standard library and promptlint's leaves plus `config.find_config` (TOML, no
jsonschema): a forwarded check never pays for jinja2, tokenizers or jsonschema.
"""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from promptlint import safe_write
from promptlint.daemon import protocol

DEFAULT_IDLE = 900.0  # seconds without a request before the daemon exits
START_WAIT = 30.0  # bounded wait for a starting daemon to answer
IN_DAEMON = False  # set by the server: a request it runs is never forwarded again


def project(cwd: Optional[Path] = None) -> Tuple[Path, bool]:
    """(root, wants a daemon): the closest configuration file's directory (else cwd), and whether
    it says `daemon = true`. A configuration that does not parse counts as no: the in-process run
    reports it."""
    from promptlint.config import find_config

    cwd = (cwd or Path.cwd()).resolve()
    try:
        found = find_config(cwd)
    except Exception:
        found = None
    if not found:
        return cwd, False
    return found[0].parent.resolve(), found[1].get("daemon") is True


def connect(root: Path, timeout: float = 5.0) -> Optional[socket.socket]:
    path = protocol.socket_path(root)
    if path is None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    sock.settimeout(None)
    return sock


def request(root: Path, header: Dict[str, Any], body: bytes = b"") -> Optional[Tuple[Dict[str, Any], bytes, bytes]]:
    """One round trip; None when no daemon answers it completely."""
    sock = connect(root)
    if sock is None:
        return None
    try:
        protocol.send_json(sock, header, body)
        reply = protocol.recv_json(sock)
        out = protocol.recv(sock) if "rc" in reply else b""
        err = protocol.recv(sock) if "rc" in reply else b""
        return reply, out, err
    except (OSError, protocol.ProtocolError):
        return None
    finally:
        sock.close()


def status(root: Path) -> Optional[Dict[str, Any]]:
    got = request(root, {"op": "status"})
    return got[0] if got and "pid" in got[0] else None


def start(root: Path, idle: float = DEFAULT_IDLE) -> Optional[Dict[str, Any]]:
    """Start a daemon for ``root`` (detached) and wait, bounded, until it answers; its status."""
    path = protocol.socket_path(root, create=True)
    if path is None:
        return None
    try:
        log = safe_write.open_append(path.with_suffix(".log"), anchor=path.parent)  # in the private run directory
    except OSError:
        return None
    try:
        subprocess.Popen(
            [sys.executable, "-m", "promptlint.daemon", str(root), str(path), str(idle)],
            cwd=str(root), stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
        )
    finally:
        log.close()
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        got = status(root)
        if got:
            return got
        time.sleep(0.05)
    return None


def stop(root: Path) -> bool:
    """Ask the daemon to exit and wait (bounded) until its socket is gone."""
    if request(root, {"op": "stop"}) is None:
        return False
    path = protocol.socket_path(root)
    deadline = time.monotonic() + START_WAIT
    while path is not None and path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


def _stream_info(stream) -> Dict[str, Any]:
    return {
        "encoding": getattr(stream, "encoding", None) or "utf-8",
        "errors": getattr(stream, "errors", None) or "strict",
        "tty": bool(hasattr(stream, "isatty") and stream.isatty()),
    }


def _read_stdin() -> bytes:
    """Up to one byte more than promptlint reads (bounded_io), so the daemon refuses an oversized
    buffer with the same message the in-process run gives."""
    from promptlint import bounded_io

    limit, chunks, got = bounded_io.MAX_FILE_BYTES + 1, [], 0
    while got < limit:
        chunk = sys.stdin.buffer.read(min(limit - got, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def forward_check(argv, args) -> Optional[int]:
    """Run ``promptlint check`` in this project's daemon and print its reply; None to run in-process
    (no daemon answered, or --no-daemon / PROMPTLINT_DAEMON=0)."""
    env = os.environ.get("PROMPTLINT_DAEMON", "")
    if IN_DAEMON or getattr(args, "no_daemon", False) or env == "0":
        return None
    root, wanted = project()
    autostart = env == "1" or (env == "" and wanted)
    body = b""
    if getattr(args, "stdin_filename", None):
        body = _read_stdin()
        # If the daemon does not answer after all, the in-process run reads the same bytes.
        sys.stdin = io.TextIOWrapper(io.BytesIO(body), encoding="utf-8")
    header = {
        "op": "check",
        "argv": list(argv),
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "stdout": _stream_info(sys.stdout),
        "stderr": _stream_info(sys.stderr),
    }
    for attempt in range(2):
        got = request(root, header, body)
        if got is None or got[0].get("restart"):  # none running, or it exited to reload itself
            if not autostart or attempt or start(root) is None:
                return None
            continue
        reply, out, err = got
        if "rc" not in reply:  # refused (cwd outside its root): run here
            return None
        for stream, data in ((sys.stdout, out), (sys.stderr, err)):
            stream.flush()
            stream.buffer.write(data)
            stream.buffer.flush()
        return int(reply["rc"])
    return None
