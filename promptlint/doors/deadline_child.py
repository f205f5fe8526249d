"""Work that a native library could hang or crash on, in a forked child under a wall-clock deadline.

An unvetted tokenizer's regex runs inside one native call that neither a signal handler nor a
render limit can interrupt, and a Rust panic in it is a ``BaseException``. ``run(items, work,
deadline_s)`` forks one child that calls ``work(item)`` for each item in turn and sends each
result back as soon as it has it (pickled, length-prefixed, over a pipe); the parent waits at
most ``deadline_s`` for each one. At the deadline the child is killed: the item it was on and
every later one come back as ``Expired``; a child that dies (a signal, out of memory) leaves
``Died``. What ``work`` raises comes back as ``Failed`` (its type and message: always
picklable). ``finish()``, when given, runs in the child after the last item and its result is
the generator's return value (``None`` when the child did not get there).

Needs ``os.fork`` (POSIX); ``available()`` says whether it is there. Standard library only.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import time
from dataclasses import dataclass
from typing import Any, Callable, Generator, Optional, Sequence, Tuple

_HEADER = struct.Struct("<Q")


@dataclass(frozen=True)
class Expired:
    """The child did not answer within the deadline (killed)."""

    seconds: float


@dataclass(frozen=True)
class Died:
    """The child ended before answering (a signal, out of memory)."""

    how: str


@dataclass(frozen=True)
class Failed:
    """``work(item)`` raised: the exception's type name and first line."""

    kind: str
    message: str


def available() -> bool:
    return hasattr(os, "fork")


def run(items: Sequence[Any], work: Callable[[Any], Any], deadline_s: float, setup: Optional[Callable[[], None]] = None,
        finish: Optional[Callable[[], Any]] = None, quiet: bool = False) -> Generator[Tuple[int, Any], None, Any]:
    """Yield ``(index, result)`` for every item, in order; see the module docstring. ``quiet``:
    nothing the child's native code writes to stderr reaches the user's."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        os.close(read_fd)
        _child(items, work, write_fd, setup, finish, quiet)
    os.close(write_fd)
    reader = _Frames(read_fd)
    done = 0
    tail = None
    try:
        while done < len(items):
            frame = reader.next(deadline_s)
            if isinstance(frame, (Expired, Died)):
                for k in range(done, len(items)):
                    yield k, frame
                return None
            _, value = frame
            yield done, value
            done += 1
        frame = reader.next(deadline_s)
        if not isinstance(frame, (Expired, Died)):
            tail = frame[1]
        return tail
    finally:
        os.close(read_fd)
        _reap(pid)


def _child(items, work, write_fd: int, setup, finish, quiet: bool) -> None:
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # ^C ends the child with the parent, no traceback
        if quiet:  # stderr becomes a descriptor that takes no writes (they fail; nothing is opened for writing)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 2)
            os.close(devnull)
        if setup is not None:
            setup()
        for item in items:
            try:
                value = work(item)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as e:  # a native panic included: the parent gets a picklable record
                value = _failed(e)
            _send(write_fd, ("item", value))
        _send(write_fd, ("end", finish() if finish is not None else None))
    except BaseException:
        code = 1
    finally:
        os._exit(code)  # never the parent's atexit handlers, buffers or finally blocks


def _failed(e: BaseException) -> Failed:
    text = str(e).strip().splitlines()
    return Failed(type(e).__name__, text[0][:2000] if text else "")


def _send(fd: int, message) -> None:
    try:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # noqa: BLE001 - a result that does not pickle is this item's failure, not the child's
        data = pickle.dumps((message[0], _failed(e)), protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


class _Frames:
    """Length-prefixed pickles read from a pipe, each within its own deadline."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer = bytearray()

    def next(self, deadline_s: float):
        deadline = time.monotonic() + deadline_s
        need = _HEADER.size
        size = None
        while True:
            if size is None and len(self.buffer) >= need:
                size = _HEADER.unpack_from(self.buffer)[0]
                need = _HEADER.size + size
            if size is not None and len(self.buffer) >= need:
                data = bytes(self.buffer[_HEADER.size:need])
                del self.buffer[:need]
                return pickle.loads(data)
            left = deadline - time.monotonic()
            if left <= 0:
                return Expired(deadline_s)
            try:
                ready, _, _ = select.select([self.fd], [], [], left)
            except InterruptedError:
                continue
            if not ready:
                return Expired(deadline_s)
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return Died("the process ended without answering")
            self.buffer += chunk


def _reap(pid: int) -> None:
    """Kill the child if it still runs, and collect it (no zombie)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError):
        pass
