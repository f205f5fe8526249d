"""How promptlint names files: resolved, project-relative and display paths (a leaf).

Findings name a file relative to the run's base directory (the working directory of the
command's caller, passed in: a daemon serves other directories than its own) when it is inside
it; configuration globs match paths relative to the project root. Both resolve symlinks the same way, and a
symlink loop never raises.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Dict, Iterable, Optional, Tuple


def safe_resolve(path: Path) -> Path:
    """``path.resolve()``, or its absolute form when a symlink loop makes resolving fail."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # RuntimeError: "Symlink loop" before Python 3.13
        return Path(os.path.abspath(path))


_BASES: dict = {}


def _resolved_base(path: Path) -> Path:
    """``safe_resolve`` of a base directory (project root, working directory), memoised by its
    spelling and the directory's identity: relative() and display_path() run per file and per finding."""
    if not os.path.isabs(path):  # a relative spelling names different directories in different runs
        return safe_resolve(Path(path))
    try:
        st = os.stat(path)
        key = (os.fspath(path), st.st_dev, st.st_ino)
    except OSError:
        return safe_resolve(Path(path))
    if key not in _BASES:
        if len(_BASES) > 64:
            _BASES.clear()
        _BASES[key] = safe_resolve(Path(path))
    return _BASES[key]


class RealPaths:
    """``safe_resolve`` for the many files of one run, each directory resolved once.

    A walk meets every file of a project; resolving each one costs an lstat per component of its
    path. A file that is not itself a link resolves to its directory's real path joined with its
    name, so one lstat of the file and a memo of its directory give the same answer. A path with a
    ``..`` component (resolved physically, not lexically) or a link is resolved in full. Make one per
    run: a directory may be replaced by a link between runs of a resident process."""

    def __init__(self):
        self._dirs: Dict[str, str] = {}
        self._bases: Dict[str, Tuple[str, str]] = {}

    def real(self, path) -> str:
        name = os.fspath(path)
        if ".." in name.split(os.sep):
            return str(safe_resolve(Path(name)))
        full = os.path.abspath(name)
        try:
            if stat.S_ISLNK(os.lstat(full).st_mode):
                return str(safe_resolve(Path(full)))
        except (OSError, ValueError):
            return str(safe_resolve(Path(full)))
        directory, leaf = os.path.split(full)
        known = self._dirs.get(directory)
        if known is None:
            known = self._dirs[directory] = str(safe_resolve(Path(directory)))
        return os.path.join(known, leaf) if leaf else known

    def base(self, root) -> Tuple[str, str]:
        """(absolute spelling, resolved path) of a base directory (the project root), once per run:
        ``not_read`` asks for every file."""
        key = os.fspath(root)
        found = self._bases.get(key)
        if found is None:
            found = self._bases[key] = (os.path.abspath(key), str(_resolved_base(Path(key))))
        return found


def _inside(real: str, base: str) -> Optional[str]:
    """``real`` relative to ``base`` as a POSIX path (both resolved strings), or None when outside."""
    if real == base:
        return "."
    prefix = base if base.endswith(os.sep) else base + os.sep
    if real.startswith(prefix):
        rel = real[len(prefix):]
        if os.sep == "/" and rel and "//" not in rel and not rel.endswith("/") and "." not in rel.split("/"):
            return rel  # already what Path(rel).as_posix() gives (this runs per file and per finding)
        return Path(rel).as_posix()
    return None


def relative(path: Path, root: Path, real: Optional[RealPaths] = None) -> str:
    """POSIX path of ``path`` relative to ``root`` (unchanged when outside it). ``real``: the run's
    memo of resolved directories."""
    if real is not None:
        inside = _inside(real.real(path), str(_resolved_base(root)))
        return inside if inside is not None else Path(path).as_posix()
    try:
        return safe_resolve(path).relative_to(_resolved_base(root)).as_posix()
    except ValueError:
        return path.as_posix()


def display_path(path: Path, base: Path) -> str:
    """How findings name a file: relative to the run's ``base`` directory (absolute) when it is
    inside it; else as the user typed it: the front end joined a typed relative path to ``base``
    (``base/../x.j2``), so that prefix comes off again; an absolute path stays as it is."""
    try:
        return str(safe_resolve(Path(path)).relative_to(_resolved_base(Path(base))))
    except ValueError:
        return typed(path, base)


def typed(path: Path, base: Path) -> str:
    """``path`` as the user spelled it: without the ``base`` the front end joined it to."""
    text, prefix = os.fspath(path), os.fspath(base).rstrip(os.sep) + os.sep
    if text == prefix.rstrip(os.sep) or text == prefix:
        return "."  # the base itself: what `check` with no paths walks
    return text[len(prefix):] if text.startswith(prefix) else text


def based(raw, base: Path) -> Path:
    """A path the user typed, opened against the run's ``base`` directory (lexically: ``..`` is
    kept, so ``typed`` gives the spelling back); an absolute path is itself."""
    return Path(base) / raw


def escapes_root(path: Path, root: Path, real: Optional[str] = None, bases: Optional[Tuple[str, str]] = None) -> bool:
    """A path inside the project root whose real path is outside it: a symlink (to a file, or a
    directory on the way) that a pull request can point at /proc/self/environ or /etc. Paths the
    user names outside the root are theirs and are not judged here. ``real``: the path's resolved
    form when the caller has it; ``bases``: the root's (absolute, resolved) spellings (RealPaths.base)."""
    spelled, base = bases if bases is not None else (os.path.abspath(root), str(_resolved_base(root)))
    lexical = os.path.abspath(path)
    if not _starts(lexical, spelled) and not _starts(lexical, base):
        return False
    resolved = real if real is not None else str(safe_resolve(Path(path)))
    return not _starts(resolved, base)


def _starts(real: str, base: str) -> bool:
    """``_inside(real, base) is not None``, without building the relative path."""
    return real == base or real.startswith(base if base.endswith(os.sep) else base + os.sep)


# Version-control metadata inside a checkout is not the pull request's: CI writes credentials
# there (actions/checkout keeps the job's token in .git/config), so no template, include or
# samples file may read it, whatever name or link leads to it.
VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", "_darcs"})


def vcs_metadata(real: str, roots: Iterable[str]) -> bool:
    """Whether the resolved path ``real`` lies in a version-control directory below one of the
    resolved ``roots`` (a root that is itself such a directory's parent, or deeper, counts)."""
    for root in roots:
        rel = _inside(real, root)
        if rel is None:
            continue
        if any(part.casefold() in VCS_DIRS for part in rel.split("/")):
            return True
    return False


def not_read(path: Path, root: Path, real: Optional[RealPaths] = None) -> Optional[str]:
    """Why a file inside the project root is not read (an E005 message), or None to read it.
    ``real``: the run's memo of resolved directories (the path is resolved once, not twice)."""
    resolved = real.real(path) if real is not None else str(safe_resolve(Path(path)))
    bases = real.base(root) if real is not None else (os.path.abspath(root), str(_resolved_base(root)))
    if escapes_root(path, root, resolved, bases):
        return "a symlink that leads outside the project root: not read; pass the target's real path to lint it"
    if vcs_metadata(resolved, [bases[1]]):
        return "version-control metadata (it may hold the CI's credentials): never read; exclude it"
    return None
