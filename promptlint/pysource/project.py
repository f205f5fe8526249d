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
``Flow`` objects (their memo follows the imports of this analysis). A resident process (daemon,
language server) also keeps the linted modules' trees (``keep_linted``): after one module changes,
the re-check of its importers parses that module alone. Bounded by count and by source characters
(a tree and its index take ~60 bytes per character).

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
_PARSED_CHARS = 2_000_000  # source characters of the kept trees (~120 MB of trees and indexes at most)
_PARSED: "OrderedDict[Tuple[str, str], Tuple[ast.Module, object, frozenset, str]]" = OrderedDict()

# notes that tie a finding in an imported module to the request that sends it (promptlint.driver.lint merges on them)
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
        entry = (tree, Index(tree), _NodeIds(tree), text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeDecodeError):
        return None
    _keep(key, entry)
    return entry


def _keep(key: Tuple[str, str], entry) -> None:
    _PARSED[key] = entry
    chars = sum(len(e[3]) for e in _PARSED.values())  # at most 512 lengths: microseconds beside a parse
    while len(_PARSED) > 1 and (len(_PARSED) > _PARSED_LIMIT or chars > _PARSED_CHARS):
        _, old = _PARSED.popitem(last=False)
        chars -= len(old[3])


def keep_linted(real: str, text: str, tree: ast.Module):
    """A resident process keeps the tree of a module it linted (its text as analysed, the BOM off),
    for the next request's importers and re-check; returns its index (made once, for the scan)."""
    from promptlint.pysource.flow import Index

    key = (real, hashlib.sha256(text.encode("utf-8")).hexdigest())
    entry = (tree, Index(tree), _NodeIds(tree), text)
    _keep(key, entry)
    return entry[1]


def parsed_text(real: str, text: str):
    """(tree, index) of a linted module's text (its BOM already taken off) when an importer's analysis
    parsed the same bytes already; None otherwise. Only looked up: keeping every linted module's tree
    would hold a whole package's trees in memory, and the collector's passes over them cost more than
    the parses saved."""
    hit = _PARSED.get((real, hashlib.sha256(text.encode("utf-8")).hexdigest()))
    return (hit[0], hit[1]) if hit is not None else None


class _NodeIds:
    """The ids of a tree's nodes, computed on the first question (most analyses report nothing in an
    imported module, and never ask)."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.ids: Optional[frozenset] = None

    def __contains__(self, key: int) -> bool:
        if self.ids is None:
            self.ids = frozenset(id(n) for n in ast.walk(self.tree))
        return key in self.ids


class Project:
    """The linted module and the modules it reaches through imports, for one analysis."""

    def __init__(self, root: Path, path: Path, kind_of, depend: Optional[Callable[[Path], None]] = None,
                 display: Callable[[Path], str] = str, buffers: Optional[Dict[str, str]] = None,
                 reads: Optional[Dict[tuple, object]] = None):
        """``buffers``: unsaved texts by absolute path (an editor's, a fix under proof), read before the disk.
        ``reads``: the run's memo of what each candidate module path came to (kernel.Context.module_reads):
        one run's analyses share it as they share the run's buffers and its resolved directories."""
        from promptlint.base.paths import safe_resolve

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
        self._found: Dict[tuple, object] = {}  # (importer's directory, module, level, need) -> Flow or None
        self._bytes: Dict[str, Optional[bytes]] = {}  # candidate path -> its bytes (None: not read)
        self.buffers = buffers or {}
        self.reads = reads if reads is not None else {}
        self._within = (str(self.root), str(self.limit))  # what a read's verdict depends on besides the path

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

    def load(self, importer, module: str, level: int, need: Optional[Tuple[bytes, ...]] = None):
        """The Flow of ``module`` imported from ``importer`` (a Flow), or None. ``need``: the module is parsed
        only when its bytes hold one of these (else None, and it is not parsed for this purpose)."""
        here = str(getattr(importer, "real_path", None) or self.path)
        key = (os.path.dirname(here), module, level, need)
        if key not in self._found:
            self._found[key] = self._load(importer, module, level, need)
        return self._found[key]

    def _load(self, importer, module: str, level: int, need):
        for candidate in self._candidates(importer, module, level):
            if candidate in self.flows:
                if self.flows[candidate] is not None:
                    return self.flows[candidate]
                continue
            raw = self._raw(candidate)
            if raw is None:
                self.flows[candidate] = None
                continue
            if need and not any(m in raw for m in need):
                return None  # found, and not what the caller looks for: not parsed
            flow = self._flow(candidate, raw)
            self.flows[candidate] = flow
            if flow is not None:
                return flow
        return None

    def _candidates(self, importer, module: str, level: int):
        """Where ``module`` may be, as os.path strings (pathlib costs on a module with many imports)."""
        here = os.path.dirname(str(getattr(importer, "real_path", None) or self.path))
        rel = os.path.join(*module.split(".")) if module else ""
        limit = str(self.limit)
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            bases, d = [], here
            while d == limit or d.startswith(limit.rstrip(os.sep) + os.sep):
                bases.append(d)
                parent = os.path.dirname(d)
                if parent == d:  # the file system's root
                    break
                d = parent
            bases.append(os.path.join(limit, "src"))
        for base in bases:
            if not rel:
                yield os.path.join(base, "__init__.py")
                continue
            yield os.path.join(base, rel + ".py")
            yield os.path.join(base, rel, "__init__.py")

    def _raw(self, candidate: str) -> Optional[bytes]:
        """The bytes of a module file inside the limit (read once per run, a dependency of each analysis
        that reads it), or None."""
        if candidate in self._bytes:
            return self._bytes[candidate]
        self._bytes[candidate] = None
        if self.loaded >= MAX_MODULES:
            return None
        key = (*self._within, candidate)
        if key not in self.reads:
            self.reads[key] = self._read(candidate)
        raw, real = self.reads[key]
        if raw is None:
            return None
        self.loaded += 1
        if self.depend is not None:
            self.depend(Path(candidate))
        self._bytes[candidate] = raw
        return raw

    def _read(self, candidate: str) -> Tuple[Optional[bytes], Optional[Path]]:
        """(bytes, real path) of a module file inside the limit and not excluded; (None, None) otherwise."""
        from promptlint.analysis import kernel
        from promptlint.base.paths import not_read, safe_resolve

        if not os.path.isfile(candidate):
            return None, None
        real = safe_resolve(Path(candidate))
        if not (real == self.limit or self.limit in real.parents) or not_read(Path(candidate), self.root):
            return None, None
        buffered = self.buffers.get(os.path.abspath(candidate))
        raw = buffered.encode("utf-8") if buffered is not None else kernel.read_source_bytes(Path(candidate))
        return (raw, real) if isinstance(raw, bytes) else (None, None)

    def read_file(self, path: str) -> Optional[bytes]:
        """The bytes of another file of the project the analysis reads (a Jinja template a module renders),
        on the same terms as a module's: inside the limit, not excluded, a dependency of the result."""
        return self._raw(os.path.normpath(path))

    def _flow(self, candidate: str, raw: bytes):
        from promptlint.pysource.flow import Flow

        real = self.reads[(*self._within, candidate)][1]  # resolved when it was read
        parsed = _parsed(str(real), raw)
        if parsed is None:
            return None
        tree, index, ids, text = parsed
        flow = Flow(index, text, self.kind_of, project=self, display=self.display(Path(candidate)))
        flow.real_path = real
        self.ids[id(flow)] = ids
        return flow
