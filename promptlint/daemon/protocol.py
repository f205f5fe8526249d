"""Frames on the daemon's socket, and where that socket lives.

A message is a sequence of frames, each a 4-byte big-endian length and that many bytes. A
request: a JSON header, then the stdin bytes. A reply: a JSON header, then stdout and stderr
bytes. Every read is bounded, so a confused peer cannot make either side allocate without limit.
"""

from __future__ import annotations

import os
import stat
import struct

from promptlint.base.digest import sha256  # not hashlib: OpenSSL's load is a forwarded check's cost
from promptlint.daemon import wire  # not json: its import (re, enum) is a forwarded check's cost

TYPE_CHECKING = False  # typing itself is not imported: ~5 ms of a forwarded check (annotations are strings)

if TYPE_CHECKING:  # socket and pathlib are imported where used: a forwarded check needs neither
    from pathlib import Path
    from typing import Any, Dict, Optional
    import socket

MAX_HEADER = 1 << 20
MAX_BODY = 256 * 1024 * 1024  # a reply carries a whole report (evidence JSON can be large)
_LEN = struct.Struct(">I")


class ProtocolError(Exception):
    """The peer closed early or sent something that is not a frame."""


def send(sock: socket.socket, *frames: bytes) -> None:
    sock.sendall(b"".join(_LEN.pack(len(f)) + f for f in frames))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise ProtocolError("connection closed mid-message")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv(sock: socket.socket, limit: int = MAX_BODY) -> bytes:
    (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
    if n > limit:
        raise ProtocolError(f"frame of {n} bytes exceeds {limit}")
    return _recv_exact(sock, n)


def send_json(sock: socket.socket, header: Dict[str, Any], *frames: bytes) -> None:
    send(sock, wire.dumps(header).encode("utf-8"), *frames)


def recv_json(sock: socket.socket) -> Dict[str, Any]:
    try:
        value = wire.loads(recv(sock, MAX_HEADER).decode("utf-8"))
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError; nesting 500,000 deep fits in a header
        raise ProtocolError(f"bad header: {e}") from None
    if not isinstance(value, dict):
        raise ProtocolError("header is not an object")
    return value


def run_dir(create: bool = False) -> Optional[Path]:
    """A directory only this user can enter: $XDG_RUNTIME_DIR/promptlint, else
    $XDG_CACHE_HOME/promptlint/run (~/.cache). None when it cannot be made private, or (unless
    ``create``: only starting a daemon makes it) does not exist yet."""
    from pathlib import Path

    found = _run_dir(create)
    return None if found is None else Path(found)


def _run_dir(create: bool = False) -> Optional[str]:
    """``run_dir`` as a string, in os.path terms: the forwarding client never imports pathlib
    (with urllib.parse and ipaddress, ~5 ms of a forwarded check)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        anchor = runtime
        base = os.path.join(anchor, "promptlint")
    else:
        cache = os.environ.get("XDG_CACHE_HOME")
        anchor = cache if cache and os.path.isabs(cache) else os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(anchor, "promptlint", "run")
    try:
        if create:
            from pathlib import Path

            from promptlint.doors import safe_write

            safe_write.make_dirs(Path(base), anchor=Path(anchor), mode=0o700)
        st = os.lstat(base)
    except OSError:
        return None
    # Someone else's directory, a symlink, or one others can enter: no daemon rather than a shared one.
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return base


def socket_path(root: Path, create: bool = False) -> Optional[Path]:
    """One socket per project root and installation (identity.installation_key): a client of another
    virtualenv or pre-commit environment never connects to this installation's daemon."""
    from pathlib import Path

    found = socket_file(str(root), create)
    return None if found is None else Path(found)


def socket_file(root: str, create: bool = False) -> Optional[str]:
    """``socket_path`` as a string (the forwarding client's)."""
    from promptlint.daemon.identity import installation_key

    base = _run_dir(create)
    if base is None:
        return None
    name = sha256(os.fsencode(root) + b"\0" + installation_key().encode()).hexdigest()[:24]
    path = os.path.join(base, f"{name}.sock")
    return path if len(os.fsencode(path)) < 100 else None  # sun_path holds 108 bytes


def peer_uid(sock: socket.socket) -> Optional[int]:
    """The connecting process's uid (Linux SO_PEERCRED), None where the OS does not say."""
    import socket

    if not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]
