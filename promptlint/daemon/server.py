"""The daemon process: accepts `check` requests on a private Unix socket and runs each in its one
resident ``Workspace`` (promptlint.driver.workspace: the tokenizers it parsed stay in its pool,
within the pool's budget) through ``cli.serve_check``: the request's argv, its stdin and stream
settings, its environment and working directory as a console, so the reply is byte for byte what
the client would have printed. The request's environment is read by the check's front end from the
console (colour, CI roots, PROMPTLINT_*: the Workspace's options), never installed in this
process's, so no request is refused for the environment it brings. Nothing of the process is
swapped: the request's working directory is the base its typed paths are joined to and its
findings named relative to (``Settings.base``); the daemon stays in its own directory.

Requests run one at a time; a second client waits in the listen queue. The daemon exits when idle, when asked, and when
promptlint's code, jinja2 or tokenizers (daemon/identity.py), the project's configuration or its
tokenizer changed since it started: per request (it answers "stale", and the client runs
in-process or starts a fresh daemon) and between requests (checked every `RECHECK` seconds). It
answers only a client of its own installation.

It was started isolated (``python -I``, promptlint.doors.interpreters) in its private run directory;
nothing of a client's directory is ever on ``sys.path``.
"""

from __future__ import annotations

import io
import os
import socket
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from promptlint.doors import safe_write
from promptlint.daemon import client, identity, protocol
from promptlint.daemon.protocol import ProtocolError

REQUEST_TIMEOUT = 60.0  # a client that connects must send its request within this
RECHECK = 30.0  # between requests, how often the daemon looks whether its installation changed


def _stat(path: Path) -> Optional[Tuple[int, int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def stamp(root: Path) -> Tuple:
    """What the daemon's loaded state depends on in the project (its installation: identity.py):
    every configuration file that could apply under ``root`` (one appearing counts too), and the
    configured tokenizer file."""
    from promptlint.project.config import find_config

    configs = [(str(d / n), _stat(d / n)) for d in (root, *root.parents) for n in ("promptlint.toml", "pyproject.toml")]
    tokenizer = None
    try:
        found = find_config(root)
    except Exception:
        found = None
    if found and isinstance(found[1].get("tokenizer"), str):
        path = found[0].parent / found[1]["tokenizer"]
        tokenizer = _stat(path / "tokenizer.json" if path.is_dir() else path)
    return tuple(configs), tokenizer


class _Stream(io.TextIOWrapper):
    """A captured standard stream that answers isatty() as the client's stream does (colour)."""

    def __init__(self, info: Dict[str, Any]):
        super().__init__(io.BytesIO(), encoding=info.get("encoding") or "utf-8", errors=info.get("errors") or "strict")
        self._tty = bool(info.get("tty"))

    def isatty(self) -> bool:
        return self._tty

    def captured(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()


def run_check(workspace, header: Dict[str, Any], stdin: bytes) -> Tuple[int, bytes, bytes]:
    """One request in the resident ``workspace``: (exit code, stdout bytes, stderr bytes)."""
    from promptlint import cli
    from promptlint.commands.check import Console
    from promptlint.doors.line_guard import LineGuard

    out, err = _Stream(header.get("stdout", {})), _Stream(header.get("stderr", {}))
    env = {str(k): str(v) for k, v in header.get("env", {}).items()}
    # the request's environment and working directory travel with it: the check reads them from
    # the console (colour, CI roots, PROMPTLINT_*), never from this process
    console = Console(LineGuard(out), LineGuard(err), io.BytesIO(stdin), environ=env, cwd=header["cwd"])
    try:  # the request's directory is the console's: its paths are joined to it, never chdir'd into
        columns = header.get("columns")
        rc = cli.serve_check(list(header["argv"]), console, workspace, env, columns if isinstance(columns, int) else None)
    except BaseException:  # PROMPTLINT_DEBUG=1 re-raises: print what Python would have
        err.write(traceback.format_exc())
        rc = 1
    for stream in (console.out, console.err):
        stream.finish_line()
    return rc, out.captured(), err.captured()


def _inside(cwd: str, root: Path) -> bool:
    try:
        Path(cwd).resolve().relative_to(root)
    except (ValueError, OSError):
        return False
    return True


class Daemon:
    def __init__(self, root: Path, path: Path, idle: float):
        self.root, self.path, self.idle = root, path, idle
        self.started = time.time()
        self.requests = 0
        self.stamp = stamp(root)
        self.identity = identity.identity()
        self.installation = identity.installation()  # what a client sends and gets back (client._forward)
        self.last = time.monotonic()
        self.listener: Optional[socket.socket] = None
        self.workspace = None  # the resident Workspace (made in main, after the bind)

    def bind(self) -> bool:
        if self.path.exists() or self.path.is_symlink():
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(self.path))
                return False  # another daemon answers for this root
            except OSError:
                safe_write.remove(self.path, anchor=self.path.parent, kinds=("socket", "link", "file"))  # stale: its daemon was killed
            finally:
                probe.close()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is created 0600
        try:
            sock.bind(str(self.path))
        except OSError:
            sock.close()
            return False
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(16)
        self.listener = sock
        self.inode = os.stat(self.path).st_ino
        return True

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None
            try:
                if os.stat(self.path).st_ino == self.inode:  # never remove a successor's socket
                    safe_write.remove(self.path, anchor=self.path.parent, kinds=("socket",))
            except OSError:
                pass

    def serve(self) -> None:
        assert self.listener is not None
        self.listener.settimeout(min(self.idle, RECHECK))
        while self.listener is not None:
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:
                if time.monotonic() - self.last >= self.idle or self.stale():
                    return  # idle, or its installation changed under it: no request will be answered
                continue
            with conn:
                try:
                    self.handle(conn)
                except (OSError, ProtocolError) as e:
                    print(f"promptlint daemon: dropped a request: {e}", file=sys.stderr, flush=True)
            self.last = time.monotonic()

    def stale(self) -> bool:
        return identity.identity() != self.identity

    def handle(self, conn: socket.socket) -> None:
        uid = protocol.peer_uid(conn)
        if uid is not None and uid != os.getuid():
            return  # another user's process: say nothing
        conn.settimeout(REQUEST_TIMEOUT)
        header = protocol.recv_json(conn)
        op = header.get("op")
        if op == "status":
            protocol.send_json(conn, self.status())
        elif op == "stop":
            self.close()
            protocol.send_json(conn, {"stopped": os.getpid()})
        elif op == "check":
            body = protocol.recv(conn)
            argv, env = header.get("argv"), header.get("env", {})
            if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and isinstance(env, dict)):
                protocol.send_json(conn, {"refused": "`argv` must be a list of strings and `env` an object"})
                return
            if not isinstance(header.get("cwd"), str) or not _inside(header["cwd"], self.root):
                protocol.send_json(conn, {"refused": f"{header.get('cwd')!r} is outside {self.root}"})
                return
            if self.stale():
                self.close()  # gone before the client starts a successor
                protocol.send_json(conn, {"stale": "promptlint, jinja2 or tokenizers changed since the daemon started"})
                return
            if stamp(self.root) != self.stamp:
                self.close()
                protocol.send_json(conn, {"restart": True})
                return
            if header.get("identity") != self.installation:
                protocol.send_json(conn, {"refused": "a client of another installation of promptlint"})
                return
            if header.get("verify") and not client.verified(self.root, header["cwd"]):
                # the client guessed this root without parsing TOML; the exact rule names another
                # root (or a `daemon = true` whose note it prints): it finds the root itself
                protocol.send_json(conn, {"reroute": True})
                return
            conn.settimeout(None)
            if self.workspace is not None and self.workspace.memo is not None:
                self.workspace.memo.hold()  # the run manifest is written after the reply (driver/resident.py)
            rc, out, err = run_check(self.workspace, header, body)
            self.requests += 1
            try:
                protocol.send_json(conn, {"rc": rc, "identity": self.installation}, out, err)
            finally:  # the held writes, once the client has its answer
                self.flush()
        else:
            protocol.send_json(conn, {"refused": f"unknown op {op!r}"})

    def flush(self) -> None:
        if self.workspace is None or self.workspace.memo is None:
            return
        try:
            self.workspace.memo.flush()
        except Exception as e:  # the next request's check flushes again; say why in the daemon's log
            print(f"promptlint daemon: a deferred write failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)

    def status(self) -> Dict[str, Any]:
        pool = self.workspace.pool if self.workspace is not None else None
        return {"pid": os.getpid(), "root": str(self.root), "uptime": round(time.time() - self.started, 1),
                "requests": self.requests, "idle_timeout": self.idle, "parses": pool.parses if pool else 0,
                "tokenizers_held": pool.held() if pool else 0, "identity": self.identity}


def main(argv: List[str]) -> int:
    root, path, idle = Path(argv[0]).resolve(), Path(argv[1]), float(argv[2])
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    daemon = Daemon(root, path, idle)
    if not daemon.bind():
        return 0
    try:
        from promptlint.project.config import Settings
        from promptlint.driver.workspace import Workspace

        # resident: its pool keeps what it parsed (LRU, within the budget) for the next request, and
        # it analyses in this process, where they are; each request brings its own settings
        daemon.workspace = Workspace(Settings(root=root), resident=True)
        daemon.serve()
    finally:
        daemon.close()
    return 0
