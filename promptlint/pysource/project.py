"""The other linted modules a module imports: found on disk, read, parsed and indexed, bounded.

``Project.load(importer, "prompts", level)`` resolves an import the way Python would for a
project laid out in directories (``a.b`` -> ``a/b.py`` or ``a/b/__init__.py`` under the
importer's directory, its parents up to the project root, or ``src/``; ``from . import x``
from the importer's package) and returns that module's ``flow.Flow``. Only files inside the
project root are read (through ``kernel.read_source_bytes``: bounded, regular files, no link
leaving the root, never version-control metadata), at most ``MAX_MODULES`` per analysis; each
one read is a dependency of the linted file's cached result (``ctx.depend``), so a change to an
imported prompt module re-analyses its importers.

A parsed module (tree and index) is kept per process keyed by its path and bytes, so a project
whose modules import the same prompt module parses it once; each analysis evaluates with fresh
``Flow`` objects (their memo follows the imports of this analysis).

``owner(node)`` tells which module a syntax node belongs to, so a finding made in an imported
module is reported at that module's line.
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

MAX_MODULES = 64  # modules one analysis may load besides the linted one
_PARSED_LIMIT = 512
_PARSED: "OrderedDict[Tuple[str, str], Tuple[ast.Module, object, frozenset, str]]" = OrderedDict()

# notes that tie a finding in an imported module to the request that sends it (promptlint.lint merges on them)
SENT_NOTE = "sent by "
NOT_SEEN_NOTE = "the call that sends it is not in the linted files"


def _parsed(real: str, raw: bytes):
    """(tree, index, ids of its nodes, text) of a module's bytes, once per process; None when it does not parse."""
    from promptlint.pysource.flow import Index

    key = (real, hashlib.sha256(raw).hexdigest())
    hit = _PARSED.get(key)
    if hit is not None:
        _PARSED.move_to_end(key)
        return hit
    try:
        text = raw.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
        entry = (tree, Index(tree), frozenset(id(n) for n in ast.walk(tree)), text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeDecodeError):
        return None
    _PARSED[key] = entry
    if len(_PARSED) > _PARSED_LIMIT:
        _PARSED.popitem(last=False)
    return entry


class Project:
    """The linted module and the modules it reaches through imports, for one analysis."""

    def __init__(self, root: Path, path: Path, kind_of, depend: Optional[Callable[[Path], None]] = None,
                 display: Callable[[Path], str] = str):
        from promptlint.paths import safe_resolve

        self.root = safe_resolve(Path(root))
        self.path = safe_resolve(Path(path))
        self.kind_of = kind_of
        self.depend = depend
        self.display = display
        inside = self.path == self.root or self.root in self.path.parents
        self.limit = self.root if inside else self.path.parent  # never read above it
        self.flows: Dict[str, object] = {}  # real path -> Flow (None: not a module we can read)
        self.ids: Dict[int, frozenset] = {}  # id(Flow) -> the ids of its nodes
        self.main = None
        self.loaded = 0

    def attach(self, flow) -> None:
        """The linted module's own Flow: an import cycle back to it finds it."""
        self.main = flow
        self.flows[str(self.path)] = flow

    def owner(self, node: ast.AST):
        """The Flow of the imported module ``node`` belongs to; None for the linted module."""
        for flow in self.flows.values():
            if flow is not None and flow is not self.main and id(node) in self.ids.get(id(flow), ()):
                return flow
        return None

    def load(self, importer, module: str, level: int):
        """The Flow of ``module`` imported from ``importer`` (a Flow), or None."""
        for candidate in self._candidates(importer, module, level):
            key = str(candidate)
            if key in self.flows:
                if self.flows[key] is not None:
                    return self.flows[key]
                continue
            flow = self._read(candidate)
            self.flows[key] = flow
            if flow is not None:
                return flow
        return None

    def _candidates(self, importer, module: str, level: int):
        here = Path(getattr(importer, "real_path", None) or self.path).parent
        rel = Path(*module.split(".")) if module else None
        if level:
            base = here
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            bases, d = [], here
            while d == self.limit or self.limit in d.parents:
                bases.append(d)
                if d == d.parent:  # the file system's root
                    break
                d = d.parent
            bases.append(self.limit / "src")
        for base in bases:
            if rel is None:
                yield base / "__init__.py"
                continue
            yield base / rel.with_suffix(".py") if rel.name else base / "__init__.py"
            yield base / rel / "__init__.py"

    def _read(self, candidate: Path):
        from promptlint import kernel
        from promptlint.paths import not_read, safe_resolve
        from promptlint.pysource.flow import Flow

        if self.loaded >= MAX_MODULES or not os.path.isfile(candidate):
            return None
        real = safe_resolve(candidate)
        if not (real == self.limit or self.limit in real.parents) or not_read(candidate, self.root):
            return None
        raw = kernel.read_source_bytes(candidate)
        if not isinstance(raw, bytes):
            return None
        self.loaded += 1
        if self.depend is not None:
            self.depend(candidate)
        parsed = _parsed(str(real), raw)
        if parsed is None:
            return None
        tree, index, ids, text = parsed
        flow = Flow(index, text, self.kind_of, project=self, display=self.display(candidate))
        flow.real_path = real
        self.ids[id(flow)] = ids
        return flow
