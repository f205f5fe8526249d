"""Every byte promptlint reads from a file or a stream goes through here: regular files only, and
never more than a cap.

Files come from untrusted pull requests. ``stat`` cannot be trusted for the size (a symlink to
``/dev/zero`` says 0 bytes and never ends), and ``open`` on a FIFO blocks until a writer appears. So a
file is opened non-blocking, checked with ``fstat`` on the open descriptor (no race with a swap after
a path check), and read in chunks that stop one byte past the cap whatever its size claimed to be.
"""

from __future__ import annotations

import contextvars
import os
import stat
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself is not imported: ~5 ms of a forwarded check (annotations are strings)
    from typing import BinaryIO, Optional, Union

MAX_FILE_BYTES = 2_000_000  # templates, samples, configuration, captured prompts, editor buffers
MAX_TOKENIZER_BYTES = 256 * 1024 * 1024  # the largest real tokenizer.json files are ~35 MB
MAX_INPUT_BYTES = 64 * 1024 * 1024  # captured prompts and request bodies for diff, hashes, tokenize
_CHUNK = 1 << 20


class InputRefused(OSError):
    """A file that is not read: not a regular file, or larger than the cap. ``str()`` is the reason,
    written to follow the file name (``f"{path}: {e}"``)."""


class NotTracked(InputRefused):
    """A file of the repository that git does not track, in untrusted mode (``limit_to_tracked``)."""


NOT_TRACKED = "not tracked by git; refused in untrusted mode (files CI writes into the workspace are not read)"


class _Tracked:
    """Untrusted mode: inside the repository ``top`` only the files git tracks (real paths) are read,
    and what ``exempt`` names (promptlint's own cache, a tokenizer the user named on the command line)."""

    def __init__(self, top: str, files, exempt=()):
        self.top = top
        self.files = frozenset(files)
        self.exempt = tuple(exempt)

    def allows(self, path: Union[str, Path]) -> bool:
        real = os.path.realpath(path)
        if not _under(real, self.top) or real in self.files:
            return True
        return any(real == e or _under(real, e) for e in self.exempt)


def _under(real: str, directory: str) -> bool:
    try:
        return os.path.commonpath([real, directory]) == directory
    except ValueError:  # different drives (Windows)
        return False


# The read policy of the command in progress: a context variable, so that what sets it (untrusted
# mode, promptlint.commands.options) lasts as long as the context the command runs in (cli runs
# each command in a context of its own, and a Workspace installs the policy it was made under for
# its checks); forked workers inherit it.
_POLICY: "contextvars.ContextVar[Optional[_Tracked]]" = contextvars.ContextVar("promptlint_read_policy", default=None)


def limit_to_tracked(top: Union[str, Path], files, exempt=()) -> None:
    """From now on (in this context), a read of a file inside ``top`` that is not in ``files`` (real
    paths of the files git tracks) raises ``NotTracked``; ``exempt`` (real paths: files or directories) stay readable."""
    _POLICY.set(_Tracked(os.path.realpath(top), files, [os.path.realpath(e) for e in exempt]))


def unrestricted() -> None:
    """Drop the read policy of this context."""
    _POLICY.set(None)


def current_policy():
    """The read policy in force (None: unrestricted); a Workspace keeps it for its checks."""
    return _POLICY.get()


class policy_installed:
    """``with policy_installed(policy):`` reads follow ``policy`` until the block ends, then the one before."""

    def __init__(self, policy):
        self.policy = policy

    def __enter__(self):
        self.token = _POLICY.set(self.policy)
        return self.policy

    def __exit__(self, *exc) -> bool:
        _POLICY.reset(self.token)
        return False


def readable(path: Union[str, Path]) -> bool:
    """Whether the read policy lets ``path`` be read (a directory walk skips what it refuses)."""
    policy = _POLICY.get()
    return policy is None or policy.allows(path)


def _open_regular(path: Union[str, Path], dir_fd: Optional[int] = None) -> int:
    fd, mode = _open_nonblocking(path, dir_fd)
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InputRefused(f"not a regular file ({kind(mode)}); promptlint reads regular files only")
    return fd


def _open_nonblocking(path: Union[str, Path], dir_fd: Optional[int] = None):
    """(descriptor, mode): opened without waiting for a FIFO's writer, the mode from the open
    descriptor (no race with a swap after a path check). With ``dir_fd`` (a directory reached
    without links, promptlint.doors.safe_write.parent_of), ``path`` is a name in it and a link is not
    followed."""
    if dir_fd is None and not readable(path):  # dir_fd reads are the cache's own files
        raise NotTracked(NOT_TRACKED)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if dir_fd is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        return fd, os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise


def kind(mode: int) -> str:
    """What a file of this mode is, in words ("a directory", "a FIFO", ...), for messages."""
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def read_stream(stream: BinaryIO, limit: int = MAX_FILE_BYTES, what: str = "input", first: int = _CHUNK) -> bytes:
    """At most ``limit`` bytes from an open stream (stdin, a socket buffer); more is refused.
    ``first``: the size of the first read (a file's expected size and one byte: its bytes in one
    buffer, not chunks joined into a copy)."""
    parts = []
    size = 0
    want = max(first, 1)
    while True:
        chunk = stream.read(min(want, limit + 1 - size))
        want = _CHUNK
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            raise InputRefused(f"{what} is larger than {limit:,} bytes")


def read_bytes(path: Union[str, Path], limit: int = MAX_FILE_BYTES, dir_fd: Optional[int] = None) -> bytes:
    """The file's bytes; ``InputRefused`` for a device, FIFO, socket or a file over ``limit``;
    ``OSError`` as ``open`` raises it (ELOOP for a link with ``dir_fd``)."""
    fd = _open_regular(path, dir_fd)
    expected = os.fstat(fd).st_size  # a hint only: the read still stops one byte past ``limit``
    with os.fdopen(fd, "rb") as f:
        try:
            return read_stream(f, limit, "file", first=expected + 1)
        except InputRefused:
            raise InputRefused(f"file is larger than {limit:,} bytes; exclude it or split it") from None


def map_bytes(path: Union[str, Path], limit: int = MAX_TOKENIZER_BYTES):
    """(the file's bytes mapped read-only, the open descriptor's ``fstat``): an ``mmap``, indexable
    and sliceable as bytes and a buffer for ``memoryview``, for a large file of promptlint's own
    that is read in parts (a tokenizer's compact form: copying 5.7 MB into a fresh buffer cost more
    than everything read from it); refused as ``read_bytes`` refuses. The size is the descriptor's,
    checked against ``limit`` before mapping: a regular file's size is what it holds. Only for files
    written whole and replaced, never rewritten in place (the user cache through safe_write, the
    package's data): a mapping of a file cut short under it would fault."""
    import mmap

    fd = _open_regular(path)
    try:
        st = os.fstat(fd)
        if st.st_size > limit:
            raise InputRefused(f"file is larger than {limit:,} bytes; exclude it or split it")
        if st.st_size == 0:  # mmap refuses an empty file
            return b"", st
        return mmap.mmap(fd, st.st_size, access=mmap.ACCESS_READ), st
    finally:
        os.close(fd)


def open_stream(path: Union[str, Path]) -> BinaryIO:
    """A binary stream over an operator's input that may be any size (a trace, KV events, a
    scrape): a regular file or a pipe (``<(zcat trace.gz)``), never a directory, device or socket,
    which would read forever (``/dev/zero``) or never answer. ``OSError`` names why (``strerror``)."""
    import errno

    fd, mode = _open_nonblocking(path)
    try:
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise OSError(errno.EINVAL, f"{kind(mode)}, not a file or a pipe", str(path))
        if getattr(os, "O_NONBLOCK", 0):  # POSIX: reads wait for a pipe's writer again
            import fcntl

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except OSError:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_prefix(path: Union[str, Path], size: int) -> bytes:
    """The first ``size`` bytes of a regular file (content sniffing); b"" for anything else."""
    try:
        fd = _open_regular(path)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as f:
        try:
            return f.read(size)
        except OSError:
            return b""


def read_text(path: Union[str, Path], limit: int = MAX_FILE_BYTES, errors: str = "strict") -> str:
    """The file's UTF-8 text (``UnicodeDecodeError`` when it is not, unless ``errors`` says so)."""
    return read_bytes(path, limit).decode("utf-8", errors)


def sha256_file(path: Union[str, Path], limit: int = MAX_TOKENIZER_BYTES) -> str:
    """sha256 of a regular file of at most ``limit`` bytes, streamed."""
    import hashlib  # here: the daemon's forwarding client reads through this module and hashes no file

    h = hashlib.sha256()
    fd = _open_regular(path)
    size = 0
    with os.fdopen(fd, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            size += len(chunk)
            if size > limit:
                raise InputRefused(f"file is larger than {limit:,} bytes")
            h.update(chunk)
    return h.hexdigest()


def is_regular_file(path: Union[str, Path]) -> bool:
    """True for a regular file (after symlinks); never opens it, never raises (``Path.is_file``
    raises for a name too long, ENAMETOOLONG, or a directory that cannot be searched). A file the
    read policy refuses (untracked, in untrusted mode) is not one: lookups do not see it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode) and readable(path)
    except (OSError, ValueError):
        return False


def is_directory(path: Union[str, Path]) -> bool:
    """True for a directory (after symlinks); never raises, as ``is_regular_file``."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
