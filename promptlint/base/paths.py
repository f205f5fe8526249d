"""How promptlint names files: resolved, project-relative and display paths (a leaf).

Findings name a file relative to the run's base directory (the working directory of the
command's caller, passed in: a daemon serves other directories than its own) when it is inside
it; configuration globs match paths relative to the project root. Both resolve symlinks the same way, and a
symlink loop never raises.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Optional


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


def relative(path: Path, root: Path) -> str:
    """POSIX path of ``path`` relative to ``root`` (unchanged when outside it)."""
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


def escapes_root(path: Path, root: Path) -> bool:
    """A path inside the project root whose real path is outside it: a symlink (to a file, or a
    directory on the way) that a pull request can point at /proc/self/environ or /etc. Paths the
    user names outside the root are theirs and are not judged here."""
    base = _resolved_base(root)
    lexical = Path(os.path.abspath(path))
    try:
        lexical.relative_to(Path(os.path.abspath(root)))
    except ValueError:
        try:
            lexical.relative_to(base)
        except ValueError:
            return False
    try:
        safe_resolve(path).relative_to(base)
        return False
    except ValueError:
        return True


# Version-control metadata inside a checkout is not the pull request's: CI writes credentials
# there (actions/checkout keeps the job's token in .git/config), so no template, include or
# samples file may read it, whatever name or link leads to it.
VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", "_darcs"})


def vcs_metadata(real: str, roots: Iterable[str]) -> bool:
    """Whether the resolved path ``real`` lies in a version-control directory below one of the
    resolved ``roots`` (a root that is itself such a directory's parent, or deeper, counts)."""
    for root in roots:
        try:
            parts = Path(real).relative_to(root).parts
        except ValueError:
            continue
        if any(part.casefold() in VCS_DIRS for part in parts):
            return True
    return False


def not_read(path: Path, root: Path) -> Optional[str]:
    """Why a file inside the project root is not read (an E005 message), or None to read it."""
    if escapes_root(path, root):
        return "a symlink that leads outside the project root: not read; pass the target's real path to lint it"
    if vcs_metadata(str(safe_resolve(Path(path))), [str(_resolved_base(root))]):
        return "version-control metadata (it may hold the CI's credentials): never read; exclude it"
    return None
