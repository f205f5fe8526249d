"""Where promptlint's own code and rule files are, and a stamp of them (size and mtime of each):
standard library only, so the daemon's forwarding client can stamp what it would run without
importing the registry or the cache."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from promptlint.base.digest import sha256


@lru_cache(maxsize=None)
def rules_dir() -> Path:
    """The rule files: ``promptlint/_rules`` in a wheel, else the checkout's ``rules/`` beside the
    package (an editable install elsewhere maps ``promptlint._rules`` to its own checkout, which
    must not shadow the rules of the code that is running). A constant of the process, resolved
    once: each finding's rule is looked up through it (two realpaths a call: 4% of a cold run)."""
    here = Path(__file__).resolve().parent.parent
    try:
        import promptlint._rules as packaged

        packaged_dir = Path(packaged.__file__).resolve().parent
        if packaged_dir.parent == here:
            return packaged_dir
    except ImportError:  # a source checkout that is not installed
        pass
    return here.parent / "rules"


_STAMP: list = []  # the stamp this process last took (code_stamp(fresh=False) answers it)


def code_stamp(fresh: bool = True) -> str:
    """Size and mtime of promptlint's own files and rules, hashed: one pass of scandir, ~2x
    os.walk + stat. ``fresh`` reads them afresh (the daemon and its client take it per request);
    otherwise the stamp this process last took is answered, so the result cache and the templates'
    code cache of one run share one pass (a scan of ~150 files: 1.5-2 ms of a one-template check)."""
    if fresh or not _STAMP:
        parts: list = []
        for root in (Path(__file__).parent.parent, rules_dir()):
            _stamp_tree(str(root), parts)
        _STAMP[:] = [sha256("\n".join(sorted(parts)).encode("utf-8")).hexdigest()]
    return _STAMP[0]


def _stamp_tree(directory: str, parts: list) -> None:
    """As os.walk (links to directories not entered, unreadable directories skipped) with each
    code file's ``path:size:mtime_ns``."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir():
            if not entry.is_symlink() and entry.name != "__pycache__":
                _stamp_tree(entry.path, parts)
        elif entry.name.endswith((".py", ".toml", ".json")):
            st = entry.stat()
            parts.append(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}")
