"""The client side: find this installation's daemon for the project, forward a `check` to it,
start one when the user asked for it.

Who may use a daemon is the user's choice alone, never the repository's. By default a person
gets one: a `check` whose stdin and stdout are a terminal, or that a pre-commit hook runs, starts
one on first use (it exits after 15 idle minutes). `check --daemon`, PROMPTLINT_DAEMON=1, or
`daemon = true` in the user's own configuration file (``$XDG_CONFIG_HOME/promptlint/config.toml``,
default ``~/.config``) start one from anywhere; `daemon = false` there, PROMPTLINT_DAEMON=0 or
`--no-daemon` keep it off; a running one (`promptlint daemon start`) answers. A project configuration's `daemon = true` is ignored with a
note (a pull request could otherwise start a process that outlives the job), and in CI (`CI` or
`GITHUB_ACTIONS` set) no daemon is started or used. The daemon is started isolated
(promptlint.doors.interpreters) from outside the project, and a reply counts only when it comes from a
daemon of this installation (daemon/identity.py).

Imports only the standard library and promptlint's leaves plus `config_file.find_config` (TOML, no
jsonschema): a forwarded check never pays for jinja2, tokenizers or jsonschema.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import time
TYPE_CHECKING = False  # typing itself is not imported: ~5 ms of a forwarded check (annotations are strings)

if TYPE_CHECKING:  # _socket is imported where a connection is made: a check run in-process never needs it
    from pathlib import Path  # and pathlib where a path is built: a forwarded check never needs it
    from typing import Any, Dict, Optional, Tuple, Union
    import _socket

from promptlint.base import terminal
from promptlint.daemon import identity, protocol

DEFAULT_IDLE = 900.0  # seconds without a request before the daemon exits
START_WAIT = 30.0  # bounded wait for a starting daemon to answer


def in_ci() -> bool:
    """`CI` or `GITHUB_ACTIONS` set to anything but empty, "false" or "0"."""
    return any(os.environ.get(name, "").strip().lower() not in ("", "false", "0") for name in ("CI", "GITHUB_ACTIONS"))


def user_config_path() -> Path:
    from pathlib import Path

    return Path(_user_config_file())


def _user_config_file() -> str:
    base = os.environ.get("XDG_CONFIG_HOME", "")
    base = base if os.path.isabs(base) else os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "promptlint", "config.toml")


def user_wants_daemon() -> bool:
    """`daemon = true` in the user's configuration file (not a project's)."""
    return user_setting() is True


def user_setting() -> Optional[bool]:
    """`daemon` in the user's configuration file (not a project's): True, False, or None when the
    file or the key is absent. A file that cannot be read or says something else gets one warning
    and counts as False."""
    value, problem = _user_setting()
    if problem:
        print(f"promptlint: warning: {_printable(str(user_config_path()))}: {problem}; the daemon stays off", file=sys.stderr)
        return False
    return value


def _user_setting() -> Tuple[Optional[bool], str]:
    """(the user's `daemon` setting, "") or (None, what is wrong with the file)."""
    if not os.path.exists(_user_config_file()):
        return None, ""
    path = user_config_path()
    from promptlint.doors import bounded_io
    from promptlint.base.toml_io import kept_loads

    try:
        value = kept_loads(bounded_io.read_text(path, 1 << 16)).get("daemon")
    except (OSError, UnicodeDecodeError) as e:
        return None, f"cannot read it ({_printable(getattr(e, 'strerror', None) or type(e).__name__)})"
    except ValueError as e:
        return None, f"invalid TOML ({_printable(str(e).splitlines()[0] if str(e) else 'unreadable')}); fix it"
    if value is None or isinstance(value, bool):
        return value, ""
    return None, "`daemon` must be true or false"


def for_a_person() -> bool:
    """Whether a person is waiting for this run (the daemon's default, outside CI): stdin and stdout
    are a terminal, or a pre-commit hook runs it (pre-commit sets PRE_COMMIT=1 and pipes the
    output). A script, an editor or a build tool piping both gets no daemon it did not ask for."""
    if os.environ.get("PRE_COMMIT") == "1":
        return True
    return all(hasattr(s, "isatty") and _isatty(s) for s in (sys.stdin, sys.stdout))


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (ValueError, OSError):  # closed
        return False


def project(cwd: Optional[Path] = None) -> Tuple[Path, Optional[Path]]:
    """(root, the configuration file when it says `daemon = true`): the closest configuration file's
    directory (else cwd). A configuration that does not parse counts as none: the in-process run
    reports it."""
    from pathlib import Path

    from promptlint.project.config_file import find_config

    cwd = (cwd or Path.cwd()).resolve()
    try:
        found = find_config(cwd)
    except Exception:
        found = None
    if not found:
        return cwd, None
    return found[0].parent.resolve(), found[0] if found[1].get("daemon") is True else None


def note_project_setting(config: Path) -> None:
    """The note (once per `check`: a command forwards at most once): the project's `daemon = true`
    is ignored, and how to turn it on."""
    print(f"promptlint: note: {_printable(str(config))}: `daemon = true` in a project's configuration is ignored "
          f"(a repository cannot start processes); turn the daemon on for yourself with PROMPTLINT_DAEMON=1, "
          f"`daemon = true` in {_printable(str(user_config_path()))}, or `check --daemon`", file=sys.stderr)


def _printable(text: str) -> str:
    """Control characters (a newline in a directory name) escaped: the note stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def connect(root: Union[Path, str], timeout: float = 5.0) -> Optional[_socket.socket]:
    path = protocol.socket_file(str(root))
    if path is None:
        return None
    import _socket  # the C socket the socket module wraps: its import (selectors, enums) is ~5 ms of a forwarded check

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    sock.settimeout(None)
    return sock


def request(root: Union[Path, str], header: Dict[str, Any], body: bytes = b"") -> Optional[Tuple[Dict[str, Any], bytes, bytes]]:
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
    """Start a daemon for ``root`` (detached) and wait, bounded, until it answers; its status.

    The interpreter runs isolated, in the private run directory, importing promptlint from where
    this process did (interpreters.command): nothing under the project is ever on its path."""
    import subprocess  # only when starting one: a forwarded check does not pay for it

    from promptlint.doors import interpreters, safe_write

    path = protocol.socket_path(root, create=True)
    if path is None:
        return None
    try:
        log = safe_write.open_append(path.with_suffix(".log"), anchor=path.parent)  # in the private run directory
    except OSError:
        return None
    try:
        subprocess.Popen(
            interpreters.command("promptlint.daemon", [str(root), str(path), str(idle)]),
            cwd=str(path.parent), stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True,
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
    from promptlint.doors import bounded_io

    limit, chunks, got = bounded_io.MAX_FILE_BYTES + 1, [], 0
    while got < limit:
        chunk = sys.stdin.buffer.read(min(limit - got, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# `check`'s options that decide whether and how a run is forwarded, and those argparse answers
# itself: an argv naming any of them (or a prefix argparse would expand to one) is parsed first.
_DECIDING = ("--daemon", "--no-daemon", "--untrusted", "--trusted", "--stdin-filename", "--help", "--version")
IN_PROCESS = "in-process"  # forward_argv: the daemon was considered, none answers: run here, do not ask again
REROUTE = "reroute"  # _forward with a guessed root: no daemon there confirmed it; find the root exactly


def forward_argv(argv) -> Union[int, str, None]:
    """The `promptlint check` front door, before argparse or any command is imported (a forwarded
    check starts only this client): the daemon's exit code after printing its reply, IN_PROCESS,
    or None when the raw argv cannot decide it alone (an option above, a short option, a project
    configuration's ignored `daemon = true` that needs its note, a user configuration needing its
    warning, CI): then the parsed arguments decide (forward_check), exactly as before.
    A usage error goes to the daemon, whose parser prints the same lines the in-process one would.

    The project root is first guessed without parsing TOML (``guess_root``) and the request sent to
    that root's daemon, if one runs, marked ``verify``: the daemon answers only when the exact rule
    (``project``, which it runs on the request's directory) names its own root and no `daemon = true`;
    otherwise, and when none runs there, the root is found exactly as before (tomllib's import and
    a parse are ~10 ms of a forwarded check)."""
    if argv[:1] != ["check"] or os.environ.get("CI") or os.environ.get("GITHUB_ACTIONS"):  # CI: untrusted mode, no daemon
        return None
    for arg in argv[1:]:
        if arg == "--":
            break
        if arg.startswith("--") and any(o.startswith(arg.split("=", 1)[0]) for o in _DECIDING):
            return None
        if arg.startswith("-") and not arg.startswith("--") and arg != "-" and not (arg[:2] == "-j" and (arg[2:].isdigit() or arg == "-j")):
            return None
    setting, problem = _user_setting()
    if problem:
        return None
    if os.environ.get("PROMPTLINT_DAEMON", "") != "0":
        try:
            guess = guess_root(os.path.realpath(os.getcwd()))
        except OSError:
            guess = None
        path = protocol.socket_file(guess) if guess is not None else None
        if path is not None and os.path.exists(path):
            got = _forward(argv, guess, asked=False, setting=False, stdin=False, verify=True)
            if got != REROUTE:
                return IN_PROCESS if got is None else got
    root, configured = project()
    if configured is not None:
        return None
    got = _forward(argv, root, asked=False, setting=setting, stdin=False)
    return IN_PROCESS if got is None else got


def guess_root(cwd: str) -> str:
    """Where ``project`` would most likely say the root is, without parsing TOML: the closest
    directory, from the resolved ``cwd`` up, with a promptlint.toml or a pyproject.toml whose text
    mentions promptlint (or holds an escape, which a quoted TOML key may spell it with); else
    ``cwd``. Only a guess: the daemon that answers checks it with the exact rule (``verify``)."""
    directory = cwd
    while True:
        if os.path.lexists(os.path.join(directory, "promptlint.toml")):
            return directory
        pyproject = os.path.join(directory, "pyproject.toml")
        if os.path.lexists(pyproject) and _may_configure(pyproject):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return cwd
        directory = parent


GUESS_READ = 1 << 22  # a pyproject.toml longer than this is a candidate unread


def _may_configure(path: str) -> bool:
    """Whether a pyproject.toml could hold [tool.promptlint]. Read only when it is a regular file
    that is not a link, without waiting (O_NONBLOCK) and bounded; anything else -- a link (to a
    FIFO, a device, /proc), an unreadable or oversized file -- is a candidate the exact rule, which
    reads through promptlint's bounded reader, decides. (bounded_io itself would import pathlib.)"""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return True
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > GUESS_READ:
            return True
        chunks, got = [], 0
        while got <= GUESS_READ:
            chunk = os.read(fd, GUESS_READ + 1 - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > GUESS_READ:
            return True
        text = b"".join(chunks)
    except OSError:
        return True
    finally:
        os.close(fd)
    return b"promptlint" in text or b"\\" in text


def verified(root: Path, cwd: str) -> bool:
    """For the daemon of ``root``: whether a request from ``cwd`` sent to a guessed root is its own --
    ``project`` names ``root`` from there and no `daemon = true` (whose note the client prints)."""
    from pathlib import Path

    found, configured = project(Path(cwd))
    return configured is None and found == root


def forward_check(argv, args) -> Optional[int]:
    """Run ``promptlint check`` in this project's daemon and print its reply; None to run in-process
    (no daemon of this installation answered; --no-daemon, PROMPTLINT_DAEMON=0, or CI)."""
    root, configured = project()
    if configured is not None:
        note_project_setting(configured)
    if getattr(args, "no_daemon", False) or os.environ.get("PROMPTLINT_DAEMON", "") == "0" or in_ci():
        return None
    return _forward(argv, root, asked=getattr(args, "daemon", False), setting=user_setting(),
                    stdin=bool(getattr(args, "stdin_filename", None)))


def _forward(argv, root: Union[Path, str], asked: bool, setting: Optional[bool], stdin: bool,
             verify: bool = False) -> Union[int, str, None]:
    """The daemon's exit code after printing its reply, or None to run in-process. ``setting``: the
    user's; False turns the default off (one they start still answers). ``verify``: ``root`` is a
    guess the daemon must confirm: REROUTE when it does not (or none answers there), nothing started."""
    env = os.environ.get("PROMPTLINT_DAEMON", "")
    if env == "0":
        return None
    path = protocol.socket_file(str(root))
    autostart = not verify and (asked or env == "1" or setting is True or (setting is None and for_a_person()))
    if not autostart and (path is None or not os.path.exists(path)):
        return None  # the common case: nothing running, nothing to start
    body = b""
    if stdin:
        body = _read_stdin()
        # If the daemon does not answer after all, the in-process run reads the same bytes.
        sys.stdin = io.TextIOWrapper(io.BytesIO(body), encoding="utf-8")
    # The installation, not the full identity: the socket's name already holds it, and the daemon
    # re-takes its own code and dependency stamps per request (answering "stale" when they changed),
    # so stamping promptlint's files here as well (~4 ms) would prove nothing more.
    mine = identity.installation()
    header = {
        "op": "check",
        "argv": list(argv),
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "stdout": _stream_info(sys.stdout),
        "stderr": _stream_info(sys.stderr),
        "columns": terminal.columns(),  # the daemon wraps argparse's usage lines to it
        "identity": mine,
    }
    if verify:
        header["verify"] = True
    for attempt in range(2):
        got = request(root, header, body)
        if verify and (got is None or got[0].get("stale") or got[0].get("restart") or got[0].get("reroute")):
            return REROUTE
        if got is None or got[0].get("stale") or got[0].get("restart"):  # none running, or it exited to reload
            if not autostart or attempt or start(root) is None:
                return None
            continue
        reply, out, err = got
        if "rc" not in reply or reply.get("identity") != mine:  # refused, or not this installation's: run here
            return None
        for stream, data in ((sys.stdout, out), (sys.stderr, err)):
            stream.flush()
            stream.buffer.write(data)
            stream.buffer.flush()
        return int(reply["rc"])
    return None


def hard_exit(code) -> None:
    """Exit once stdout and stderr are flushed, without the interpreter's teardown (as mypy's
    ``hard_exit``): after a `check` it would only free every loaded tokenizer (~0.1 s for a 151k
    vocabulary) and module."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # a reader that went away (`| head`) or a closed stream: nothing more to say
    os._exit(code if isinstance(code, int) else 1)
