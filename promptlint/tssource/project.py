"""The linted TS/JS modules a file imports: resolved, parsed and indexed once per run, bounded.

A relative specifier (``./prompts``, ``../lib/tools.js``) resolves like TypeScript's bundler
resolution: the path itself, with each source suffix, ``.js`` written for a ``.ts`` file, or the
directory's ``index``. Package imports (``openai``, ``ai``) are never read, nor is a module whose
real path is outside the project root (a ``../../`` climb or a symlink a pull request points
elsewhere: repository content is untrusted, docs/security.md). At most
``MAX_MODULES`` modules per linted file, each read through ``bounded_io`` (size-capped) and
recorded as a dependency of the file's cached result.

A module's tree and index are kept per process, keyed by its path and bytes (``parsed``): the
modules an agent project's files share (prompts, tools) are parsed and indexed once per run, or
once per daemon while they do not change; each analysis evaluates with fresh ``Flow`` objects.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Dict, Iterator, Optional, Tuple

from promptlint.doors import bounded_io
from promptlint.tssource.grammar import SUFFIXES

MAX_MODULES = 48
_PARSED_LIMIT = 512
_PARSED: "OrderedDict[Tuple[str, bytes], Tuple[object, object]]" = OrderedDict()


def parsed(path: Path, source: bytes, keep: bool = True):
    """(tree, ``ModuleIndex``) of a module's bytes, once per process (the index is read-only after it is
    built). ``keep=False`` (a linted file: the result cache answers for it unchanged) uses a kept one
    but does not keep its own, so a large run does not push the shared modules out."""
    from promptlint.tssource import grammar
    from promptlint.tssource.index import ModuleIndex

    key = (str(path), hashlib.sha256(source).digest())
    hit = _PARSED.get(key)
    if hit is not None:
        _PARSED.move_to_end(key)
        return hit
    tree = grammar.parse(path, source)
    hit = (tree, ModuleIndex(tree.root_node))
    if not keep:
        return hit
    _PARSED[key] = hit
    if len(_PARSED) > _PARSED_LIMIT:
        _PARSED.popitem(last=False)
    return hit


class Project:
    def __init__(self, kind_of, depend: Callable[[Path], None], roots=(), display: Optional[Callable[[Path], str]] = None):
        self._display = display or str  # how findings name a file (the run's: kernel.Context.display)
        self._roots = [_real(str(r)) for r in roots]  # an import is read only under one of these
        self._kind_of = kind_of
        self._depend = depend
        self._flows: Dict[str, Optional[object]] = {}
        self._configs: Dict[Path, Optional[tuple]] = {}
        self._found: Dict[Tuple[str, str], Optional[Path]] = {}  # (importer's directory, specifier) -> module

    def add(self, path: Path, flow) -> None:
        self._flows[str(path)] = flow

    def by_display(self, display: str):
        """The loaded module shown as ``display`` in findings, or None."""
        return next((f for f in self._flows.values() if f is not None and f.path == display), None)

    def resolve(self, importer: str, spec: str) -> Optional[Path]:
        if spec.startswith("."):
            return self._candidate(Path(importer).parent / spec)
        for base in self._aliased(importer, spec):
            found = self._candidate(base)
            if found is not None:
                return found
        return None

    def _aliased(self, importer: str, spec: str):
        """Where a path alias points (``@/lib/x`` with tsconfig ``paths``: ``{"@/*": ["./src/*"]}``);
        without a tsconfig/jsconfig, ``@/`` and ``~/`` name the project root or its ``src``."""
        config = self._config(Path(importer).parent)
        if config is not None:
            directory, base_url, paths = config
            for pattern, targets in paths.items():
                prefix = pattern[:-1] if pattern.endswith("*") else pattern
                if spec == pattern or pattern.endswith("*") and spec.startswith(prefix):
                    rest = spec[len(prefix):] if pattern.endswith("*") else ""
                    for t in targets if isinstance(targets, list) else []:
                        if isinstance(t, str):
                            yield (directory / base_url / t.replace("*", rest, 1))
            return
        if spec.startswith(("@/", "~/")):
            package = self._package_root(Path(importer).parent)
            for root in ([package] if package is not None else []) + [Path(r) for r in self._roots]:
                yield root / spec[2:]
                yield root / "src" / spec[2:]

    def _package_root(self, directory: Path) -> Optional[Path]:
        """The nearest directory holding a package.json (a JS project's root), inside the roots."""
        while self._inside(directory):
            if bounded_io.is_regular_file(directory / "package.json"):
                return directory
            if directory.parent == directory:
                break
            directory = directory.parent
        return None

    def _config(self, directory: Path):
        """(directory, baseUrl, paths) of the nearest tsconfig.json/jsconfig.json inside the roots."""
        if directory in self._configs:
            return self._configs[directory]
        found = None
        for name in ("tsconfig.json", "jsconfig.json"):
            path = directory / name
            if bounded_io.is_regular_file(path) and self._inside(path):
                found = _read_config(path)
                break
        if found is None and self._inside(directory.parent) and directory.parent != directory:
            found = self._config(directory.parent)
        self._configs[directory] = found
        return found

    def _candidate(self, base: Path) -> Optional[Path]:
        for c in _candidates(os.path.normpath(base)):  # `src/agent/../lib/x`: one name per module in findings
            if bounded_io.is_regular_file(c):
                return c if self._inside(c) else None
        return None

    def _inside(self, path: Path) -> bool:
        real = os.path.realpath(path)
        return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self._roots)

    def flow(self, importer: str, spec: str):
        key = (os.path.dirname(importer), spec)
        if key not in self._found:  # a package (`openai`) is asked about at each of its names' uses
            self._found[key] = self.resolve(importer, spec)
        path = self._found[key]
        if path is None:
            return None
        key = str(path)
        if key not in self._flows:
            if len(self._flows) >= MAX_MODULES:
                return None
            self._flows[key] = None  # an import cycle sees the module as unknown
            self._flows[key] = self._load(path)
        return self._flows[key]

    def _load(self, path: Path):
        from promptlint.tssource.flow import Flow

        try:
            source = bounded_io.read_bytes(path)
        except (OSError, ValueError):
            return None
        self._depend(path)
        return Flow(self._display(path), parsed(path, source)[1], self._kind_of, self, str(path), source)

    def exported(self, importer: str, spec: str, name: str, depth: int):
        """The value ``name`` has in the module ``spec`` names (None: not a linted module, or unknown)."""
        other = self.flow(importer, spec)
        if other is None:
            return None
        node = other.index.exports.get(name)
        if node is None and "module.exports" in other.index.exports:
            v = other.ev(other.index.exports["module.exports"], 0, None, depth)
            return (v.mapping or {}).get(name) if name != "default" else v
        if node is None:
            for module, inner, alias in other.index.reexports:
                if alias == name or inner is None:
                    v = self.exported(other.fs_path, module, inner or name, depth + 1)
                    if v is not None:
                        return v
            return None
        if node.type == "identifier":  # `export const tools = []`: what the module has made of it by its end
            from promptlint.tssource.values import text

            key = (node.id, -1)  # once per module and name, as `Flow.ev` keeps a value
            if key not in other._memo:
                other._memo[key] = other._binding(0, text(node), 1 << 60, depth, {})
            if other._memo[key] is not None:
                return other._memo[key]
        return other.ev(node, 0, None, depth)

    def exported_node(self, importer: str, spec: str, name: str):
        """(flow, the node an export names: ``export const x = ...``'s name, a ``module.exports`` member),
        or None."""
        other = self.flow(importer, spec)
        if other is None:
            return None
        node = other.index.exports.get(name)
        if node is None and "module.exports" in other.index.exports:
            whole = other.index.exports["module.exports"]
            node = whole if name == "default" else _member_of(whole, name)
        return (other, node) if node is not None else None

    def exported_function(self, importer: str, spec: str, name: str, depth: int):
        other = self.flow(importer, spec)
        if other is None:
            return None
        node = other.index.exports.get(name)
        if node is None and "module.exports" in other.index.exports:
            whole = other.index.exports["module.exports"]  # `import f from "./f.cjs"`: `module.exports = function`
            node = whole if name == "default" else _member_of(whole, name)
        if node is None:
            for module, inner, alias in other.index.reexports:
                if alias == name or inner is None:
                    found = self.exported_function(other.fs_path, module, inner or name, depth + 1)
                    if found is not None:
                        return found
            return None
        if node.type in ("identifier", "shorthand_property_identifier"):
            return other.function_of(node, 0, depth)
        return other.function_of(node, 0, depth) if node.type in ("arrow_function", "function_expression", "function") else None


def _candidates(base: str) -> Iterator[Path]:
    """The files a relative specifier may name, most likely first, made one at a time (most imports
    are found by the first or second)."""
    root, suffix = os.path.splitext(base)
    if suffix in SUFFIXES:
        yield Path(base)
    for s in SUFFIXES:
        yield Path(base + s)
    if suffix in (".js", ".mjs", ".cjs", ".jsx"):  # ESM TypeScript writes `./x.js` for `./x.ts`
        for s in (".ts", ".tsx", ".mts", ".cts"):
            yield Path(root + s)
    for s in SUFFIXES:
        yield Path(base) / ("index" + s)


@functools.lru_cache(maxsize=256)
def _real(path: str) -> str:
    """A root's real path (the same few roots for every file of a run)."""
    return os.path.realpath(path)




def _member_of(obj, name: str):
    """The node ``name`` is bound to in ``module.exports = { name, other: fn }``, or None."""
    from promptlint.tssource.values import text

    if obj is None or obj.type != "object":
        return None
    for c in obj.named_children:
        if c.type == "shorthand_property_identifier" and text(c) == name:
            return c
        if c.type == "pair" and text(c.child_by_field_name("key")).strip("'\"") == name:
            return c.child_by_field_name("value")
    return None


def _read_config(path: Path):
    """A tsconfig's ``compilerOptions.paths`` (JSON with comments and trailing commas), or None."""
    import json
    import re

    try:
        raw = bounded_io.read_bytes(path, 256 * 1024).decode("utf-8", "replace")
    except OSError:
        return None
    raw = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", raw, flags=re.S)
    raw = re.sub(r",\s*([}\]])", r"\1", raw)
    try:
        options = json.loads(raw).get("compilerOptions") or {}
    except (ValueError, AttributeError):
        return None
    paths = options.get("paths")
    if not isinstance(paths, dict):
        return None
    base = options.get("baseUrl", ".")
    return path.parent, base if isinstance(base, str) else ".", paths
