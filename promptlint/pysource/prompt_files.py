"""Prompt text kept in a file of the project and read by the module: ``(Path(__file__).parent / "prompts" /
"system.txt").read_text()``, ``open(os.path.join(HERE, "system.md")).read()``, ``with open(PATH) as f: TEMPLATE =
f.read()``. The path must be written with constants, ``__file__`` and the usual path calls; the file is read
like an imported module (inside the project, bounded, a dependency of the result), never a file outside it.
``pysource.flow`` asks this module; it imports no other module of the package.
"""

from __future__ import annotations

import ast
import os
from typing import Optional

MAX_TEXT = 200_000  # characters of a prompt file taken as text (a larger one stays an unknown value)
MAX_STEPS = 8  # names followed from a path expression to its constants


def read(flow, node: ast.Call, method: str, scope) -> Optional[str]:
    """The text ``node`` reads (``path.read_text()``, ``open(path).read()``, ``f.read()`` of a file opened by
    ``with open(path) as f``), when the path is a file of the project; None otherwise."""
    if flow.project is None or node.args and method == "read":
        return None
    target = node.func.value
    if method == "read":
        target = _opened(flow, target, scope)
        if target is None:
            return None
    path = path_of(flow, target, scope, 0)
    if path is None:
        return None
    here = os.path.dirname(str(getattr(flow, "real_path", "") or ""))
    candidates = [path] if os.path.isabs(path) else [os.path.join(here, path), os.path.join(str(flow.project.root), path)]
    for candidate in candidates:
        raw = flow.project.read_file(candidate)
        if raw is not None:
            text = raw.decode("utf-8", "replace")
            return text if len(text) <= MAX_TEXT else None
    return None


def _opened(flow, node: ast.AST, scope) -> Optional[ast.AST]:
    """The path an ``open(...)`` call opens: the call itself, or the one a name is bound to (``with``/``=``)."""
    if isinstance(node, ast.Name):
        local = flow.index.bindings.get((flow.index.sid(scope), node.id)) if scope is not None else None
        entries = local or flow.index.bindings.get((0, node.id)) or []
        values = [e.value for e in entries if e.kind == "assign"]
        node = values[-1] if values else node
    if isinstance(node, ast.Call) and (flow.name_of(node.func) or "") in ("open", "io.open", "codecs.open") and node.args:
        return node.args[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "open":
        return node.func.value  # `Path(...).open()`
    return None


def path_of(flow, node: ast.AST, scope, steps: int) -> Optional[str]:
    """The path a path expression names, when it is made of constants, ``__file__``, ``Path(...)``, ``/``,
    ``.parent``, ``.joinpath(...)``, ``os.path.join/dirname/abspath/realpath`` and names bound to those."""
    if steps > MAX_STEPS:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        if node.id == "__file__":
            return str(getattr(flow, "real_path", "") or "") or None
        local = flow.index.bindings.get((flow.index.sid(scope), node.id)) if scope is not None else None
        entries, where = (local, scope) if local else (flow.index.bindings.get((0, node.id)) or [], None)
        values = [e.value for e in entries if e.kind == "assign"]
        return path_of(flow, values[-1], where, steps + 1) if values else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        a, b = path_of(flow, node.left, scope, steps + 1), path_of(flow, node.right, scope, steps + 1)
        return os.path.join(a, b) if a is not None and b is not None else None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        a = path_of(flow, node.value, scope, steps + 1)
        return os.path.dirname(a) if a is not None else None
    if isinstance(node, ast.Call):
        name = flow.name_of(node.func) or ""
        f = node.func
        if name in ("Path", "pathlib.Path", "PurePath", "pathlib.PurePath") and len(node.args) >= 1:
            parts = [path_of(flow, a, scope, steps + 1) for a in node.args]
            return os.path.join(*parts) if all(p is not None for p in parts) else None
        if name in ("os.path.join",) and node.args:
            parts = [path_of(flow, a, scope, steps + 1) for a in node.args]
            return os.path.join(*parts) if all(p is not None for p in parts) else None
        if name in ("os.path.dirname",) and len(node.args) == 1:
            a = path_of(flow, node.args[0], scope, steps + 1)
            return os.path.dirname(a) if a is not None else None
        if name in ("os.path.abspath", "os.path.realpath", "os.path.normpath", "str", "os.fspath") and len(node.args) == 1:
            return path_of(flow, node.args[0], scope, steps + 1)
        if isinstance(f, ast.Attribute) and f.attr in ("resolve", "absolute", "expanduser") and not node.args:
            return path_of(flow, f.value, scope, steps + 1)
        if isinstance(f, ast.Attribute) and f.attr == "joinpath":
            parts = [path_of(flow, a, scope, steps + 1) for a in [f.value] + list(node.args)]
            return os.path.join(*parts) if all(p is not None for p in parts) else None
    return None
