"""Every file promptlint writes, renames or deletes goes through here, and never through a link a
pull request committed.

A pull request can commit a symlink anywhere in the project (`.promptlint_cache/<version>/entries
-> ~/.ssh`, `promptlint.sarif -> .git/config`, `reports -> /usr/local/bin`), and opening by path
follows every one of them. So a write names an *anchor* directory and walks the path below it one
component at a time from a directory descriptor: each directory is opened with
O_NOFOLLOW|O_DIRECTORY (a missing one made with ``mkdir(dir_fd=)`` when the caller asks), the
content goes to a fresh temporary file in the final directory (O_CREAT|O_EXCL|O_NOFOLLOW) and is
renamed over the name (``os.replace`` between directory descriptors: atomic, and a rename replaces a
directory entry, never what a link points to). Refused, with ``WriteRefused`` (one line naming the
path and what to do): a link at any component below the anchor, a target that is a link (the user
would not get what they think: the link replaced, or its target written), a target that is not a
regular file, and a regular file with other hard links (another name would keep the old bytes).

The anchor (``locate``): the caller's fixed directory when it has one (the cache: the project
root); else the deepest of the working directory and the caller's ``within`` directories (the
project root) that contains the path lexically; else the path's own directory. Links at or above
the anchor are the user's (a home reached through a link, a directory they named) and are followed;
links below it may be the repository's and are not.

Deleting walks the same way: ``remove`` unlinks one directory entry of the kinds the caller names
(a regular file; a link entry or a socket when asked), never what a link points to; ``walk`` lists a
tree without descending into links. Standard library only. Where the OS has no directory
descriptors (Windows) each component is checked with ``lstat`` before the path is used, which is
weaker only against a swap while promptlint runs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import IO, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

PathLike = Union[str, "os.PathLike[str]"]
TEMP_PREFIX = ".promptlint-tmp-"  # a write's temporary file, renamed over the target when complete

_FDS = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _O_CLOEXEC
_LOOP = {errno.ELOOP, errno.ENOTDIR, errno.EMLINK}  # what opening a link with O_NOFOLLOW raises (EMLINK: BSD)


class WriteRefused(OSError):
    """A path promptlint does not write or delete through; ``str()`` is one line that starts with
    the offending path and says what to do."""


# ---------------------------------------------------------------------------- where a write goes


def locate(path: PathLike, anchor: Optional[PathLike] = None, within: Iterable[PathLike] = (),
           cwd: Optional[PathLike] = None) -> Tuple[str, List[str]]:
    """(anchor directory, components of ``path`` below it); the last component is the file's name.
    Lexical (``..`` folds against the name before it, as ``os.path.abspath`` does): a folded
    component is never opened, so it cannot lead anywhere. ``cwd``: the directory a relative
    ``path`` is the caller's from (a daemon request's; absolute), itself a candidate anchor."""
    target = os.path.abspath(os.path.join(os.fspath(cwd), os.fspath(path)) if cwd is not None else os.fspath(path))
    if anchor is not None:
        base = os.path.abspath(os.fspath(anchor))
        if not _below(target, base):
            raise WriteRefused(f"{path}: not below {base}; promptlint writes there only")
    else:
        candidates = set() if cwd is None else {os.path.abspath(os.fspath(cwd))}  # the caller's, never this process's
        for d in within:
            candidates |= {os.path.abspath(os.fspath(d)), os.path.realpath(os.fspath(d))}
        containing = [c for c in candidates if _below(target, c)]
        base = max(containing, key=len) if containing else os.path.dirname(target)
    return base, os.path.relpath(target, base).split(os.sep)


def _below(path: str, base: str) -> bool:
    try:
        return path != base and os.path.commonpath([path, base]) == base
    except ValueError:  # different drives
        return False


class _Dir:
    """A directory reached without following a link below the anchor: a descriptor (``fd``), or
    on systems without them a path whose every component was checked with ``lstat``."""

    def __init__(self, fd: Optional[int], path: str):
        self.fd, self.path = fd, path

    def at(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)

    def lstat(self, name: str) -> Optional[os.stat_result]:
        try:
            return os.stat(self.at(name), dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _refusal(path: str, st: Optional[os.stat_result], anchor: str, final: bool, relative: Optional[str]) -> WriteRefused:
    shown = os.path.relpath(path, relative) if relative else path  # as the user named it (relative to their directory)
    if st is not None and stat.S_ISLNK(st.st_mode):
        if final:
            return WriteRefused(f"{shown} is a symlink; promptlint does not write through links: "
                                "remove the link or name the real file")
        return WriteRefused(f"{shown} is a symlink; promptlint follows no link below {anchor}: "
                            "remove the link or name a path without one")
    kind = describe(st.st_mode) if st is not None else "not there"
    if final:
        return WriteRefused(f"{shown} is {kind}, not a regular file; choose another path")
    return WriteRefused(f"{shown} is {kind}, not a directory; choose another path")


def describe(mode: int) -> str:
    from promptlint.doors.bounded_io import kind

    return kind(mode)


def _open_dirs(anchor: str, parts: Sequence[str], create: bool, mode: int = 0o777, relative: Optional[str] = None) -> _Dir:
    """The directory ``anchor/parts...``, each component opened without following a link (made
    when missing and ``create``; the anchor too, as the user named it). ``relative``: refusals
    show paths relative to this directory (the user's)."""
    if create:
        os.makedirs(anchor, mode=mode, exist_ok=True)
    current = _Dir(os.open(anchor, _O_DIR) if _FDS else None, anchor)
    shown = anchor
    try:
        for part in parts:
            shown = os.path.join(shown, part)
            current = _enter(current, part, shown, anchor, create, mode, relative)
    except BaseException:
        current.close()
        raise
    return current


def _enter(parent: _Dir, part: str, shown: str, anchor: str, create: bool, mode: int, relative: Optional[str]) -> _Dir:
    for attempt in (0, 1):
        if _FDS:
            try:
                fd = os.open(part, _O_DIR | _O_NOFOLLOW, dir_fd=parent.fd)
            except FileNotFoundError:
                fd = None
            except OSError as e:
                if e.errno in _LOOP:
                    raise _refusal(shown, parent.lstat(part), anchor, False, relative) from None
                raise
            if fd is not None:
                parent.close()
                return _Dir(fd, shown)
        else:
            st = parent.lstat(part)
            if st is not None:
                if not stat.S_ISDIR(st.st_mode) or getattr(st, "st_file_attributes", 0) & 0x400:  # a junction
                    raise _refusal(shown, st, anchor, False, relative)
                return _Dir(None, shown)
        if not create or attempt:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), shown)
        try:
            os.mkdir(parent.at(part), mode, dir_fd=parent.fd)
        except FileExistsError:
            pass  # made meanwhile (another run): open it as it is
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _parent(path: PathLike, anchor, within, create: bool = False, mode: int = 0o777,
            cwd: Optional[PathLike] = None) -> Iterator[Tuple[_Dir, str, str]]:
    base, parts = locate(path, anchor, within, cwd)
    relative = None if os.path.isabs(os.fspath(path)) else (os.fspath(cwd) if cwd is not None else os.curdir)
    d = _open_dirs(base, parts[:-1], create, mode, relative)
    try:
        yield d, parts[-1], base
    finally:
        d.close()


def _check_target(d: _Dir, name: str, shown: str, anchor: str) -> Optional[os.stat_result]:
    """The existing target's lstat (None when there is none), or the refusal."""
    st = d.lstat(name)
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise _refusal(shown, st, anchor, True, None)
    if st.st_nlink > 1:
        raise WriteRefused(f"{shown} has {st.st_nlink} hard links; promptlint does not replace a file other names "
                           "share: remove the other links or choose another path")
    if not os.access(d.at(name), os.W_OK, dir_fd=d.fd):  # a read-only file stays read-only, as open() would keep it
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), shown)
    return st


# ---------------------------------------------------------------------------- writing


def check_target(path: PathLike, anchor: Optional[PathLike] = None, within: Iterable[PathLike] = (),
                 cwd: Optional[PathLike] = None) -> None:
    """Raise what writing ``path`` would raise before any content exists (``WriteRefused``, or the
    ``OSError`` of a missing directory), so a command refuses before it does its work."""
    with _parent(path, anchor, within, cwd=cwd) as (d, name, base):
        _check_target(d, name, str(path), base)


@contextlib.contextmanager
def replacing(path: PathLike, *, anchor: Optional[PathLike] = None, within: Iterable[PathLike] = (),
              parents: bool = False, private: bool = False, binary: bool = False, encoding: str = "utf-8",
              errors: str = "strict", newline: Optional[str] = None, cwd: Optional[PathLike] = None) -> Iterator[IO]:
    """A file object whose content replaces ``path`` when the block ends without an exception
    (nothing changes otherwise). ``parents``: make missing directories below the anchor;
    ``private``: mode 0600 (0700 directories), else an existing file keeps its permission bits
    and a new one gets 0666 less the umask. ``cwd``: the caller's directory, which a relative
    ``path`` is named from (a daemon request's); messages name the path as given."""
    with _parent(path, anchor, within, parents, 0o700 if private else 0o777, cwd) as (d, name, base):
        old = _check_target(d, name, str(path), base)
        tmp, fd = _temp(d, 0o600 if private else 0o666)
        try:
            if old is not None and not private and hasattr(os, "fchmod"):
                os.fchmod(fd, stat.S_IMODE(old.st_mode) & 0o777)  # a fixed script stays executable
            f = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, errors=errors, newline=newline)
        except BaseException:
            os.close(fd)
            _discard(d, tmp)
            raise
        try:
            with f:
                yield f
            _check_target(d, name, str(path), base)  # again: nothing to lose by looking twice
            os.replace(d.at(tmp), d.at(name), src_dir_fd=d.fd, dst_dir_fd=d.fd)
        except BaseException:
            _discard(d, tmp)
            raise


def _temp(d: _Dir, mode: int) -> Tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_BINARY", 0)
    while True:
        name = TEMP_PREFIX + os.urandom(8).hex()
        try:
            return name, os.open(d.at(name), flags, mode, dir_fd=d.fd)
        except FileExistsError:
            continue


def _discard(d: _Dir, name: str) -> None:
    try:
        os.unlink(d.at(name), dir_fd=d.fd)
    except OSError:
        pass


def write_text(path: PathLike, text: str, **options) -> None:
    """``path``'s content becomes ``text`` (options as ``replacing``)."""
    with replacing(path, **options) as f:
        f.write(text)


def write_bytes(path: PathLike, data: bytes, **options) -> None:
    with replacing(path, binary=True, **options) as f:
        f.write(data)


def create(path: PathLike, data: bytes, *, anchor: PathLike, parents: bool = True, private: bool = True) -> None:
    """A new file (``FileExistsError`` when the name is taken, even by a link): exporting a tree
    into a fresh directory."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_BINARY", 0)
    with _parent(path, anchor, (), parents) as (d, name, _base):
        fd = os.open(d.at(name), flags, 0o600 if private else 0o666, dir_fd=d.fd)
        with os.fdopen(fd, "wb") as f:
            f.write(data)


def open_append(path: PathLike, *, anchor: PathLike) -> IO[bytes]:
    """A binary file object appending to ``path`` (made 0600 when missing): a log."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_BINARY", 0)
    with _parent(path, anchor, ()) as (d, name, base):
        _check_target(d, name, str(path), base)
        fd = os.open(d.at(name), flags, 0o600, dir_fd=d.fd)
        return os.fdopen(fd, "ab")


def symlink(link: str, path: PathLike, *, anchor: PathLike, parents: bool = True) -> None:
    """A link at ``path`` whose text is ``link`` (the caller decided where it may lead)."""
    with _parent(path, anchor, (), parents) as (d, name, _base):
        os.symlink(link, d.at(name), dir_fd=d.fd)


def make_dirs(path: PathLike, *, anchor: PathLike, mode: int = 0o777) -> None:
    """``path`` and every missing directory between it and ``anchor``, none through a link."""
    base, parts = locate(path, anchor)
    _open_dirs(base, parts, True, mode).close()


@contextlib.contextmanager
def temporary_directory(prefix: str) -> Iterator[Path]:
    """A fresh private directory, removed with everything in it afterwards (links inside are
    removed, never followed: ``shutil.rmtree`` works from descriptors where the OS has them)."""
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield Path(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------- reading and deleting


@contextlib.contextmanager
def parent_of(path: PathLike, *, anchor: PathLike) -> Iterator[Tuple[Optional[int], str]]:
    """(directory descriptor or None, name to open in it) for reading ``path`` with no link
    followed below ``anchor`` (``bounded_io.read_bytes(name, dir_fd=...)`` adds O_NOFOLLOW)."""
    with _parent(path, anchor, ()) as (d, name, _base):
        yield d.fd, d.at(name)


def lstat(path: PathLike, *, anchor: PathLike) -> Optional[os.stat_result]:
    """The entry's own stat (a link is not followed), None when there is none (or no way to it)."""
    try:
        with _parent(path, anchor, ()) as (d, name, _base):
            return d.lstat(name)
    except (FileNotFoundError, WriteRefused):
        return None


_KINDS = {"file": stat.S_ISREG, "link": stat.S_ISLNK, "socket": stat.S_ISSOCK}


def remove(path: PathLike, *, anchor: Optional[PathLike] = None, within: Iterable[PathLike] = (),
           kinds: Sequence[str] = ("file",)) -> bool:
    """Unlink the entry ``path`` if it is one of ``kinds`` ("file", "link", "socket"); True when
    removed, False when there was none. A link is removed as an entry: its target is untouched."""
    with _parent(path, anchor, within) as (d, name, base):
        st = d.lstat(name)
        if st is None:
            return False
        if not any(_KINDS[k](st.st_mode) for k in kinds):
            raise WriteRefused(f"{path} is {describe(st.st_mode)}; not removed")
        try:
            os.unlink(d.at(name), dir_fd=d.fd)
        except FileNotFoundError:
            return False
        return True


def remove_all(top: PathLike, rels: Iterable[str], *, anchor: PathLike) -> int:
    """Remove each regular file ``top/rel`` (``rel`` as ``walk`` gives it), each directory on the
    way opened once; how many were removed. One that is not there, or is no longer a regular file,
    is skipped."""
    base, top_parts = locate(top, anchor)
    by_parent = {}
    for rel in rels:
        *parent, name = rel.split("/")
        by_parent.setdefault(tuple(top_parts + parent), []).append(name)
    removed = 0
    for parent, names in by_parent.items():
        try:
            d = _open_dirs(base, parent, False)
        except OSError:
            continue
        try:
            for name in names:
                st = d.lstat(name)
                if st is not None and stat.S_ISREG(st.st_mode):
                    try:
                        os.unlink(d.at(name), dir_fd=d.fd)
                        removed += 1
                    except OSError:
                        pass
        finally:
            d.close()
    return removed


def remove_dir(path: PathLike, *, anchor: PathLike) -> bool:
    """Remove ``path`` when it is an empty directory (not a link); True when removed."""
    with _parent(path, anchor, ()) as (d, name, _base):
        st = d.lstat(name)
        if st is None or not stat.S_ISDIR(st.st_mode):
            return False
        try:
            os.rmdir(d.at(name), dir_fd=d.fd)
        except OSError:  # not empty
            return False
        return True


def walk(top: PathLike, *, anchor: PathLike) -> Iterator[Tuple[str, os.stat_result]]:
    """(path relative to ``top`` with "/" separators, lstat) of every entry below ``top``, parents
    before children; a link is listed, never entered. Nothing when ``top`` is missing or is
    reached through a link."""
    base, parts = locate(top, anchor)
    try:
        d = _open_dirs(base, parts, False)
    except (FileNotFoundError, WriteRefused):
        return
    try:
        if d.fd is not None:
            for dirpath, dirnames, filenames, dfd in os.fwalk(".", dir_fd=d.fd, follow_symlinks=False):
                yield from _entries(dirpath, dirnames + filenames, lambda n: os.stat(n, dir_fd=dfd, follow_symlinks=False))
        else:
            for dirpath, dirnames, filenames in os.walk(d.path, followlinks=False):
                rel = os.path.relpath(dirpath, d.path)
                yield from _entries(rel, dirnames + filenames, lambda n: os.lstat(os.path.join(dirpath, n)))
    finally:
        d.close()


def _entries(dirpath: str, names: List[str], lstat_of) -> Iterator[Tuple[str, os.stat_result]]:
    rel = dirpath.replace(os.sep, "/")
    rel = rel[2:] if rel.startswith("./") else rel
    prefix = "" if rel in (".", "") else rel + "/"
    for name in names:
        try:
            yield prefix + name, lstat_of(name)
        except OSError:
            continue
