"""The import graph of a package, read from its source (never imported), for tests/test_architecture.py.

Every ``import`` and ``from ... import`` counts wherever it stands (module top, function body,
``if TYPE_CHECKING`` block), relative imports included; so do ``importlib.import_module``
calls, string constants that name one of the package's modules (the registries' lists of
module names), and f-strings whose constant prefix names a package (``f"pkg.commands.{name}"``,
``f"{__name__}.{name}"``: an edge to every module under that prefix).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """One tree per distinct source text per process, whatever file name it is asked with: the
    architecture tests walk the same files many times, read-only (each whole-package parse costs
    about a second of CPU)."""
    try:
        return _tree(source)
    except SyntaxError:
        return ast.parse(source, filename)  # the error names the file


@functools.lru_cache(maxsize=None)
def _tree(source: str) -> ast.Module:
    return ast.parse(source)


_WALKS: Dict[int, Tuple[ast.AST, Tuple[ast.AST, ...]]] = {}


def walk(tree) -> Tuple[ast.AST, ...]:
    """``ast.walk(tree)`` as a tuple, made once per tree (a source text is parsed first): a scan of
    the whole package repeats the walk's ~1 s of generator steps for every test otherwise. The trees
    are read-only; the memo holds each tree, so its id stays its own."""
    if isinstance(tree, str):
        tree = parse(tree)
    hit = _WALKS.get(id(tree))
    if hit is None or hit[0] is not tree:
        hit = _WALKS[id(tree)] = (tree, tuple(ast.walk(tree)))
    return hit[1]


def modules(root: Path, package: str) -> Dict[str, Path]:
    """Dotted name -> file, for every .py file of ``root`` (the package's directory)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, known: Dict[str, Path]) -> Optional[str]:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _prefix(node: ast.JoinedStr, module: str) -> Optional[str]:
    """The constant start of an f-string (``__name__`` taken as the module's own name)."""
    text = ""
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            text += part.value
        elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and part.value.id == "__name__":
            text += module
        else:
            break
    return text or None


def edges(root: Path, package: str) -> Dict[str, Set[str]]:
    known = modules(root, package)
    out: Dict[str, Set[str]] = {}
    for module, path in known.items():
        is_package = path.name == "__init__.py"
        targets: Set[str] = set()
        for node in walk(parse(path.read_text(encoding="utf-8"), str(path))):
            names: List[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:  # `from pkg import submodule` depends on the submodule alone
                    sub = f"{source}.{alias.name}"
                    names.append(sub if sub in known else source)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
                names = [node.value]  # import_module("pkg.x"), or a registry's list of module names
            elif isinstance(node, ast.JoinedStr):
                prefix = _prefix(node, module)
                if prefix and prefix.endswith(".") and prefix[:-1] in known:
                    names = [m for m in known if m.startswith(prefix)]
            for name in names:
                if name == package or name.startswith(package + "."):
                    target = _resolve(name, known)
                    if target and target != module:
                        targets.add(target)
        out[module] = targets
    return out


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _under(module: str, prefixes: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def forbidden(graph: Dict[str, Set[str]], rules: Iterable[Tuple[Tuple[str, ...], Tuple[str, ...], str]]) -> List[str]:
    """Every edge from a module under a rule's sources to one under its targets, with the reason."""
    out = []
    for sources, targets, why in rules:
        for module in sorted(graph):
            if not _under(module, sources):
                continue
            for target in sorted(graph[module]):
                if _under(target, targets) and not _under(target, sources):
                    out.append(f"{module} -> {target}: {why}")
    return out
