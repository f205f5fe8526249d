"""Prompt text kept in a file of the project and read by the module: ``(Path(__file__).parent / "prompts" /
"system.txt").read_text()``, ``open(os.path.join(HERE, "system.md")).read()``, ``with open(PATH) as f: TEMPLATE =
f.read()``. The path must be written with constants, ``__file__`` and the usual path calls; the file is read
like an imported module (inside the project, bounded, a dependency of the result), never a file outside it.
Prompt data files are parsed the same way (``yaml.safe_load(...)`` through promptlint's own bounded YAML
reader, ``json.load/loads``, ``tomllib.loads``): their strings, lists and mappings become the value.
``pysource.flow`` asks this module (it reaches the value classes through the Flow it is given).
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
    return _read_path(flow, target, scope)


DATA_CALLS = {"yaml.safe_load": "yaml", "yaml.load": "yaml", "yaml.full_load": "yaml", "json.load": "json",
              "json.loads": "json", "tomllib.loads": "toml", "tomllib.load": "toml", "toml.loads": "toml",
              "toml.load": "toml"}


def data(flow, node: ast.Call, name: str, ev, scope):
    """What ``yaml.safe_load(text_or_file)`` (and the JSON/TOML loaders) gives for a text that is known (a file
    of the project read above, a literal) or a file of the project opened here: a value of mappings, lists and
    strings; None when the text is not known or does not parse."""
    if not node.args:
        return None
    arg = node.args[0]
    text = None
    opened = _opened(flow, arg, scope) if flow.project is not None else None
    if opened is not None:
        text = _read_path(flow, opened, scope)
    else:
        v = ev(arg)
        if v.parts is not None and all(isinstance(p, str) for p in v.parts):
            text = "".join(v.parts)
    if text is None or len(text) > MAX_TEXT:
        return None
    try:
        kind = DATA_CALLS[name]
        if kind == "json":
            import json

            value = json.loads(text)
        elif kind == "toml":
            import tomllib

            value = tomllib.loads(text)
        else:
            from promptlint.promptfiles import frontmatter

            value = frontmatter.parse(text)
    except Exception:  # not that format (or not the subset promptlint reads): not known
        return None
    return _value(flow, value, 0)


def _value(flow, x, depth: int):
    Val = flow.Val
    if depth > 16:
        return Val(parts=["…"])  # deeper than any prompt file nests: cut
    if isinstance(x, dict):
        return Val(mapping={str(k): _value(flow, v, depth + 1) for k, v in x.items()})
    if isinstance(x, list):
        return Val(items=[_value(flow, v, depth + 1) for v in x])
    if x is None:
        return Val()
    return Val(parts=[x if isinstance(x, str) else str(x)])


def _read_path(flow, target: ast.AST, scope) -> Optional[str]:
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
