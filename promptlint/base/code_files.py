"""Where promptlint's own code and rule files are, and a stamp of them (size and mtime of each):
standard library only, so the daemon's forwarding client can stamp what it would run without
importing the registry or the cache."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def rules_dir() -> Path:
    """The rule files: ``promptlint/_rules`` in a wheel, else the checkout's ``rules/`` beside the
    package (an editable install elsewhere maps ``promptlint._rules`` to its own checkout, which
    must not shadow the rules of the code that is running)."""
    here = Path(__file__).resolve().parent.parent
    try:
        import promptlint._rules as packaged

        packaged_dir = Path(packaged.__file__).resolve().parent
        if packaged_dir.parent == here:
            return packaged_dir
    except ImportError:  # a source checkout that is not installed
        pass
    return here.parent / "rules"


def code_stamp() -> str:
    """Size and mtime of promptlint's own files and rules, hashed (read afresh on each call)."""
    parts = []
    for root in (Path(__file__).parent.parent, rules_dir()):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for name in filenames:
                if name.endswith((".py", ".toml", ".json")):
                    st = os.stat(os.path.join(dirpath, name))
                    parts.append(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(sorted(parts)).encode("utf-8")).hexdigest()
