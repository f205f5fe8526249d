"""Which files to lint: expand paths and directories, apply include/exclude globs.

What a directory walk takes is the analyzers' business: ``discover`` is given an object that
answers ``walk_takes(path)`` and ``owned_directory(path)`` (the analyzer registry,
``promptlint.analyzers``, passed in by the driver) and never imports an analyzer.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Iterable, List, Optional, Protocol, Sequence, Tuple

from promptlint.base.paths import RealPaths, display_path, escapes_root, relative, safe_resolve  # noqa: F401 - re-exported

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", ".promptlint_cache"}


class FileKinds(Protocol):
    """What discovery asks about the files it meets (implemented by ``promptlint.analyzers``)."""

    def walk_takes(self, path: Path) -> bool: ...

    def owned_directory(self, path: Path): ...  # an OwnedDirectory (files, subdirs) or None


def _matches(rel: str, globs: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    for g in globs:
        g = g.rstrip("/")
        if fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(name, g) or rel.startswith(g + "/"):
            return True
        if g.startswith("**/") and fnmatch.fnmatch(rel, g[3:]):
            return True
    return False


def discover(
    paths: Sequence[str],
    root: Path,
    templates: Sequence[str],
    exclude: Sequence[str],
    force_exclude: bool = False,
    kinds: Optional[FileKinds] = None,
    real: Optional[RealPaths] = None,
    base: Optional[Path] = None,
) -> Tuple[List[Path], List[Tuple[str, str]]]:
    """(files to lint, (path, reason) for paths that cannot be walked or do not exist).

    Explicit files are always taken unless force_exclude; a directory walk takes what ``kinds``
    (the analyzer registry) takes. ``real``: the run's memo of resolved directories. ``base``: the
    directory the front end joined typed paths to (problems name a path as typed)."""
    from promptlint.base.paths import typed

    shown = (lambda p: typed(p, base)) if base is not None else str
    if kinds is None:
        raise TypeError("discover() needs kinds: the analyzer registry (promptlint.analyzers)")
    real = real if real is not None else RealPaths()

    def excluded(f: Path) -> bool:  # nothing to resolve when nothing is excluded
        return bool(exclude) and _matches(relative(f, root, real), exclude)
    files: List[Path] = []
    problems: List[Tuple[str, str]] = []
    if not paths:
        if templates:
            for pattern in templates:
                files.extend(sorted(_glob_files(root, pattern, problems)))
            files = [f for f in files if not excluded(f)]
            return _unique(files), problems
        paths = ["." if base is None else str(base)]  # the run's directory, never this process's
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for f, owned in _walk(p, kinds, problems, shown):
                if (owned or kinds.walk_takes(f) and readable(f)) and not excluded(f):
                    files.append(f)
        elif p.exists() or p.is_symlink():  # devices and FIFOs too: the reader refuses them by name
            if force_exclude and excluded(p):
                continue
            files.append(p)
        else:
            problems.append((shown(raw), f"no such file or directory: {shown(raw)}"))
    return _unique(files), problems


def readable(path: Path) -> bool:
    """Whether the read policy lets a walk take ``path`` (untrusted mode: files git tracks only)."""
    from promptlint.doors.bounded_io import readable as allowed

    return allowed(path)


def _walk(directory: Path, kinds: FileKinds, problems: List[Tuple[str, str]], shown=str) -> Iterable[Tuple[Path, bool]]:
    """(path, True) for a directory an analyzer owns (the target itself), (path, False) for each file
    the listing holds (what it said is not a directory: no stat per file to ask again)."""

    def unreadable(e: OSError) -> None:  # else os.walk skips the directory silently
        problems.append((shown(e.filename or directory), f"cannot read the directory: {e.strerror or e}; fix its permissions or exclude it"))

    for dirpath, dirnames, filenames in _walk_tree(str(directory), unreadable):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        owned = kinds.owned_directory(Path(dirpath))
        if owned is not None:  # the directory is the target; the files it owns are not linted separately
            yield Path(dirpath), True
            dirnames[:] = [d for d in dirnames if d not in owned.subdirs]
        here = Path(dirpath)
        for name in sorted(filenames):
            if owned is not None and name in owned.files:
                continue
            yield here / name, False


def _glob_files(root: Path, pattern: str, problems: List[Tuple[str, str]]) -> List[Path]:
    """The regular files ``root.glob(pattern)`` finds. pathlib recurses once per directory level
    for `**` and ``is_file()`` raises for a path too long to stat: a tree a pull request commits
    deep enough is an E005 naming the pattern (with what was found before it), not a crash."""
    from promptlint.doors.bounded_io import is_regular_file

    found: List[Path] = []
    try:
        for p in root.glob(pattern):
            if is_regular_file(p):
                found.append(p)
    except (OSError, RecursionError) as e:
        why = "the directory tree is too deep" if isinstance(e, RecursionError) else (e.strerror or str(e))
        problems.append((pattern, f"cannot expand the `templates` pattern `{pattern}`: {why}; narrow the pattern or remove that directory"))
    return found


def _walk_tree(top: str, onerror) -> Iterable[Tuple[str, List[str], List[str]]]:
    """``os.walk(top, onerror=onerror, followlinks=False)``, top-down, without recursion: os.walk
    recurses once per level, and a pull request can commit 1,900 nested one-letter directories
    (a path git checks out) to make it raise RecursionError. Prune by editing the yielded list."""
    stack = [top]
    while stack:
        dirpath = stack.pop()
        dirnames: List[str] = []
        filenames: List[str] = []
        links: set = set()
        try:
            with os.scandir(dirpath) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()  # as os.walk: a link to a directory is listed as one...
                        if is_dir and entry.is_symlink():
                            links.add(entry.name)
                    except OSError:
                        is_dir = False
                    (dirnames if is_dir else filenames).append(entry.name)
        except OSError as e:
            onerror(e)
            continue
        yield dirpath, dirnames, filenames
        # ...but never entered (followlinks=False)
        stack.extend(os.path.join(dirpath, d) for d in reversed(dirnames) if d not in links)


def _unique(files: List[Path]) -> List[Path]:
    seen = set()
    out = []
    for f in files:
        key = os.path.normcase(os.path.abspath(f))
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def is_excluded(path: Path, root: Path, exclude: Sequence[str]) -> bool:
    """Whether the configured ``exclude`` globs match ``path`` (what --force-exclude applies)."""
    return _matches(relative(path, root), exclude)
