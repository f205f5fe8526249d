"""Which installation a daemon belongs to, so that a client is only ever answered by its own.

- `installation_key()`: promptlint's package directory, its version, the interpreter and its
  environment. It names the socket (protocol.socket_path), so a client of another virtualenv or of
  pre-commit's pinned environment never finds this daemon: it starts or uses its own.
- `identity()`: the installation plus stamps of what the daemon has loaded: promptlint's own files
  (`base.code_files.code_stamp`), and the version, location and files of jinja2 and tokenizers. A client
  sends its identity with every request; the daemon answers only when it equals the identity it
  started with, and re-takes its own per request: when its dependencies changed on disk it says
  so ("stale") and exits, and the client runs in-process or starts a fresh daemon.

Computed without importing jinja2 or tokenizers (the forwarding client stays light): `find_spec`
locates a package without running it; in the daemon, where they are imported, it returns the
loaded module's spec, so both sides describe what they would run.
"""

from __future__ import annotations

import os
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself is not imported: ~5 ms of a forwarded check (annotations are strings)
    from typing import Any, Dict, Optional

import promptlint
from promptlint import __version__
from promptlint.base.digest import sha256  # not hashlib: OpenSSL's load is a forwarded check's cost
from promptlint.daemon import wire  # not json: its import (re, enum) is a forwarded check's cost

DEPENDENCIES = ("jinja2", "tokenizers")


def installation() -> Dict[str, str]:
    """The interpreter as what it runs, not as it was spelled: `python -m promptlint` and the
    `promptlint` script (`#!.../bin/python3`) of one environment share a daemon, and the environment
    (``sys.prefix``) keeps two virtualenvs of one base interpreter apart."""
    interpreter = sys.executable
    return {
        "promptlint": os.path.dirname(os.path.realpath(promptlint.__file__)),
        "version": __version__,
        "python": os.path.realpath(interpreter) if interpreter else "",
        "prefix": sys.prefix,
        "python_version": sys.version,
    }


def installation_key() -> str:
    return sha256(wire.dumps(dict(sorted(installation().items()))).encode("utf-8")).hexdigest()[:16]


def identity() -> Dict[str, Any]:
    """The installation and fresh stamps of every file a check runs (re-read on each call)."""
    from promptlint.base.code_files import code_stamp  # what cache.code_stamp(fresh=True) computes, without the cache's imports

    return {**installation(), "code": code_stamp(), **{name: dependency(name) for name in DEPENDENCIES}}


def dependency(name: str) -> Optional[Dict[str, Any]]:
    """Where ``name`` is imported from, its distribution's version, and the size and mtime of its
    files (an upgrade in place rewrites them); None when it is not installed."""
    import importlib.util  # only the daemon re-takes the full identity; a forwarding client never does

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    origin = os.path.realpath(spec.origin)
    where = os.path.dirname(origin) if spec.submodule_search_locations else origin
    files = []
    try:
        names = sorted(os.listdir(where)) if os.path.isdir(where) else [""]
        for entry in names:
            path = os.path.join(where, entry) if entry else where
            st = os.stat(path)
            if os.path.isfile(path):
                files.append(f"{entry}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        pass
    return {"path": where, "version": _version(name, where), "files": sha256("\n".join(files).encode()).hexdigest()}


def _version(name: str, where: str) -> Optional[str]:
    """The version in the name of the distribution's metadata directory beside the package
    (``jinja2-3.1.6.dist-info``): importlib.metadata would cost the client ~30 ms of imports."""
    try:
        entries = os.listdir(os.path.dirname(where))
    except OSError:
        return None
    for entry in sorted(entries):
        stem, _, kind = entry.rpartition(".")
        dist, _, version = stem.partition("-")
        if kind in ("dist-info", "egg-info") and dist.lower().replace("-", "_") == name.lower():
            return version or None
    return None
