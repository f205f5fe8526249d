"""Every Python interpreter promptlint starts runs isolated (``-I``).

Started with a working directory in a pull request's checkout, ``python -c ...`` or ``python -m
...`` puts that directory first on ``sys.path``: a committed ``json.py``, ``shlex.py`` or
``promptlint/`` would then run inside the job. In isolated mode neither the working directory
nor the script's directory is on ``sys.path``, and ``PYTHON*`` variables and the user's site
directory are ignored. What a child needs beyond the standard library and its installation's
site-packages it is given explicitly (`command`'s paths: the parent's own ``sys.path`` minus the
entries the working directory put there), never the working directory.

Two doors, and nothing else in the package starts an interpreter (tests/test_hostile_processes.py
checks the source): `command` for a process promptlint starts itself (the daemon), and `context`
for multiprocessing (its spawn and forkserver children and its resource tracker re-run the
interpreter with the parent's flags, which `context` makes isolated; fork starts none).
"""

from __future__ import annotations

import json
import os
import sys
from typing import List, Optional, Sequence

# Run inside the child (already isolated): put the given paths in front, then run the module as
# `python -m` would. Only the standard library is imported before the paths are in place.
_BOOTSTRAP = (
    "import json, runpy, sys\n"
    "sys.path[:0] = [p for p in json.loads(sys.argv[1]) if p not in sys.path]\n"
    "module = sys.argv[2]\n"
    "sys.argv[1:3] = []\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


def safe_path(paths: Optional[Sequence[str]] = None) -> List[str]:
    """``paths`` (default: this process's ``sys.path``) without what the working directory put there:
    ``''`` and the working directory itself (``python -m``/``-c`` insert it)."""
    cwd = os.path.realpath(os.getcwd())
    out = []
    for p in sys.path if paths is None else paths:
        if not p or not os.path.isabs(p) or os.path.realpath(p) == cwd or p in out:
            continue
        out.append(p)
    return out


def command(module: str, args: Sequence[str], paths: Optional[Sequence[str]] = None) -> List[str]:
    """argv running ``python -I`` with ``module`` as ``__main__`` and ``args`` as its arguments, the
    module importable from ``paths`` (default: `safe_path()`: the same installation this process
    runs from, also when that came from PYTHONPATH, which ``-I`` drops)."""
    paths = safe_path() if paths is None else list(paths)
    return [sys.executable, "-I", "-c", _BOOTSTRAP, json.dumps(paths), module, *args]


def context(method: Optional[str] = None):
    """``multiprocessing.get_context(method)`` whose interpreter starts are isolated.

    Spawn, forkserver and the resource tracker build their command lines from
    ``multiprocessing.util._args_from_interpreter_flags()`` (the parent's flags) and run ``python
    -c ...`` in the parent's working directory; without ``-I`` the child's first import
    (``multiprocessing`` itself) would come from there. The child gets the parent's ``sys.path``
    from the spawn preparation data, so nothing else changes."""
    import multiprocessing
    from multiprocessing import util

    flags = getattr(util, "_args_from_interpreter_flags", None)
    if flags is not None and not getattr(flags, "isolated", False):
        def isolated_flags() -> List[str]:
            args = [a for a in flags() if a not in ("-E", "-s", "-P")]  # all implied by -I
            return args if "-I" in args else [*args, "-I"]

        isolated_flags.isolated = True  # type: ignore[attr-defined]
        util._args_from_interpreter_flags = isolated_flags
    return multiprocessing.get_context(method)
