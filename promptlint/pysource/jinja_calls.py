"""Jinja templates rendered from Python: ``jinja2.Template(src).render(now=datetime.now())``,
``Environment(...).from_string(src)``, ``env.get_template("name.j2")`` from a loader directory of the project.

The template's text (a literal, a constant of the linted files, or a file in the project) is parsed, never
run: its output is laid out as text parts and the values given to ``render`` in their places, so a volatile
value keeps its position in the prompt. ``if`` arms may each be the text (the one holding a volatile value
is measured, as ``flow.merge`` does); a ``for`` loop's body is laid out once, its repeats unknown.
``pysource.flow`` asks this module (it imports no other module of the package and reaches the value
classes through the Flow it is given).
"""

from __future__ import annotations

import ast
import os
from typing import Dict, List, Optional

# the Jinja names that make a template from a source text
TEMPLATE_CALLS = ("jinja2.Template", "jinja2.environment.Template")
SOURCE_METHODS = ("from_string",)
FILE_METHODS = ("get_template",)
RENDER_METHODS = ("render", "render_async")
MAX_SOURCE = 200_000  # characters of template text laid out (larger ones stay one unknown value)
# filters that keep their value's text (or, for a volatile one, its volatility): laid out as the value
KEEP_FILTERS = {"trim", "e", "escape", "safe", "string", "striptags", "default", "d", "indent"}


# Haystack's prompt builders hold a Jinja template (``template=``) and render it in ``.run(**values)``, which
# returns {"prompt": text} (ChatPromptBuilder: its messages' text is not laid out here)
BUILDERS = ("PromptBuilder",)


def uses_jinja(flow) -> bool:
    imports = flow.__dict__.get("_uses_jinja")
    if imports is None:
        imports = flow.__dict__["_uses_jinja"] = any(
            spec[0].split(".")[0] in ("jinja2", "haystack") for spec in flow.index.imports.values())
    return imports


def template(flow, node: ast.Call, name: Optional[str], method: Optional[str], ev, scope) -> Optional[object]:
    """A Jinja template made here, as a value holding its source text (``node``: the call, so ``render``
    knows it); None for any other call."""
    builder = (name or "").rsplit(".", 1)[-1] in BUILDERS
    if name not in TEMPLATE_CALLS and method not in SOURCE_METHODS + FILE_METHODS and not builder or not uses_jinja(flow):
        return None
    keys = ("template",) if builder else ("source", "name")
    arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in keys), None)
    if arg is None:
        return None
    Val = flow.Val
    if method in FILE_METHODS:
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            return None
        text = _template_file(flow, arg.value)
        return Val(parts=[text], node=node) if text is not None else None
    src = ev(arg)
    return Val(parts=src.parts, hazards=list(src.hazards), names=src.names, node=node)


def is_template(flow, v) -> bool:
    node = v.node
    if not isinstance(node, ast.Call) or v.parts is None:
        return False
    method = node.func.attr if isinstance(node.func, ast.Attribute) else None
    name = flow.name_of(node.func) or ""
    return name in TEMPLATE_CALLS or method in SOURCE_METHODS + FILE_METHODS or name.rsplit(".", 1)[-1] in BUILDERS


def is_builder(flow, v) -> bool:
    return isinstance(v.node, ast.Call) and (flow.name_of(v.node.func) or "").rsplit(".", 1)[-1] in BUILDERS


def render(flow, node: ast.Call, receiver, ev) -> object:
    """``template.render(mapping, **values)``: the template's output with the values in place."""
    values: Dict[str, object] = {}
    out = flow.Val(parts=[])
    for a in node.args[:1]:
        m = ev(a)
        out.add(m)
        values.update(m.mapping or {})
    for k in node.keywords:
        x = ev(k.value)
        out.add(x)
        if k.arg:
            values[k.arg] = x
        elif x.mapping is not None:
            values.update(x.mapping)
    parts = receiver.parts
    if not all(isinstance(p, str) for p in parts) or sum(len(p) for p in parts) > MAX_SOURCE:
        return flow.opaque(node).add(out)
    tree = _parse("".join(parts))
    if tree is None:  # a template Jinja cannot parse: one unknown value
        return flow.opaque(node).add(out)
    laid = _Layout(flow, node, values).template(tree)
    out.parts = [p for p in laid if p != ""]
    return out.add(*values.values())


def _parse(source: str):
    if source.endswith("\n"):  # Jinja drops one trailing newline (keep_trailing_newline=False)
        source = source[:-1]
    try:
        import jinja2

        return jinja2.Environment().parse(source)
    except Exception:
        return None


MAX_INCLUDES = 4  # nesting of {% include %}/{% extends %} followed (a cycle stops there)


class _Layout:
    def __init__(self, flow, node: ast.Call, values: Dict[str, object]):
        self.flow = flow
        self.node = node
        self.values = dict(values)
        self.blocks: Dict[str, list] = {}  # {% block name %} -> the body a child template gives it
        self.nesting = 0

    def template(self, tree) -> list:
        """A parsed template's output; ``{% extends "base.j2" %}``: the parent's, with the child's blocks in place
        of its own (the child's text outside blocks is not output, as in Jinja)."""
        from jinja2 import nodes

        parent = next((n for n in tree.body if isinstance(n, nodes.Extends)), None)
        if parent is None:
            return self.body(tree.body)
        loaded = self.load(parent.template)
        if loaded is None:
            return self.unknown("the template it extends")
        for b in tree.find_all(nodes.Block):
            self.blocks.setdefault(b.name, b.body)  # the innermost child's block wins
        self.nesting += 1
        try:
            return self.template(loaded)
        finally:
            self.nesting -= 1

    def load(self, name_node):
        """The parsed template a constant name of the same loader names (``{% include "header.j2" %}``), else None."""
        from jinja2 import nodes

        if not isinstance(name_node, nodes.Const) or not isinstance(name_node.value, str) or self.nesting >= MAX_INCLUDES:
            return None
        text = _template_file(self.flow, name_node.value)
        return _parse(text) if text is not None else None

    def unknown(self, label: str) -> list:
        return [self.flow.Hole("static", label, self.node)]

    def body(self, stmts) -> list:
        from jinja2 import nodes

        parts: list = []
        for n in stmts:
            if isinstance(n, nodes.Output):
                for child in n.nodes:
                    parts += [child.data] if isinstance(child, nodes.TemplateData) else self.expr(child)
            elif isinstance(n, nodes.If):
                arms = [n.body] + [e.body for e in n.elif_] + [n.else_]
                vals = [self.flow.Val(parts=self.body(arm)) for arm in arms]
                parts += self.flow.merge(vals).parts or []
            elif isinstance(n, nodes.For):
                saved = dict(self.values)
                for t in n.target.find_all(nodes.Name):
                    self.values[t.name] = self.flow.Val(parts=self.unknown(t.name))
                inner = self.body(n.body)
                self.values = saved
                volatile = any(isinstance(p, self.flow.Hole) and p.kind == "volatile" for p in inner)
                parts += inner if volatile else self.unknown("a loop of the template")
            elif isinstance(n, nodes.Assign) and isinstance(n.target, nodes.Name):
                self.values[n.target.name] = self.flow.Val(parts=self.expr(n.node))
            elif isinstance(n, nodes.Include):  # the included template's output, with this context's values
                loaded = self.load(n.template)
                if loaded is None:
                    parts += [] if n.ignore_missing else self.unknown("an included template")
                    continue
                self.nesting += 1
                try:
                    parts += self.body(loaded.body)
                finally:
                    self.nesting -= 1
            elif isinstance(n, nodes.Block):
                parts += self.body(self.blocks.get(n.name, n.body))
            elif hasattr(n, "body") and isinstance(getattr(n, "body"), list):  # with, block, filter, scope
                parts += self.body(n.body)
            else:
                parts += self.unknown(type(n).__name__.lower())
        return [p for p in parts if p != ""]

    def expr(self, e) -> list:
        from jinja2 import nodes

        if isinstance(e, nodes.Const):
            return [str(e.value)] if e.value is not None else []
        if isinstance(e, nodes.Name):
            v = self.values.get(e.name)
            if v is None or v.parts is None:
                return self.unknown(e.name)
            return list(self.flow.as_text(v, self.node, None, 0).parts or self.unknown(e.name))
        if isinstance(e, nodes.Concat):
            return [p for c in e.nodes for p in self.expr(c)]
        if isinstance(e, nodes.CondExpr):
            vals = [self.flow.Val(parts=self.expr(x)) for x in (e.expr1, e.expr2) if x is not None]
            return self.flow.merge(vals).parts or []
        if isinstance(e, nodes.Filter) and e.name in KEEP_FILTERS and e.node is not None:
            return self.expr(e.node)
        # a method, an attribute, another filter: volatile when a value it is made of is
        for name in e.find_all(nodes.Name):
            v = self.values.get(name.name)
            for p in (v.parts or []) if v is not None else []:
                if isinstance(p, self.flow.Hole) and p.kind == "volatile":
                    return [self.flow.Hole("volatile", p.label, p.node, p.sub)]
        return self.unknown(type(e).__name__.lower())


def _template_file(flow, name: str) -> Optional[str]:
    """The text of ``name`` under a loader directory the module names (``FileSystemLoader("prompts")``,
    ``FileSystemLoader(Path(__file__).parent / "prompts")``, ``PackageLoader("app", "templates")``),
    looked up next to the module and at the project's root; None when not found in the project."""
    project = flow.project
    here = getattr(flow, "real_path", None)
    if project is None or here is None or ".." in name.split("/"):
        return None
    dirs: List[str] = []
    for call, _ in flow.index.calls:
        loader = (flow.name_of(call.func) or "").rsplit(".", 1)[-1]
        if loader in ("FileSystemLoader", "PackageLoader"):
            consts = [n.value for a in call.args[(1 if loader == "PackageLoader" else 0):] for n in ast.walk(a)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            dirs.append(os.path.join(*consts) if consts else "")
    dirs = dirs or [""]
    module_dir = os.path.dirname(str(here))
    for d in dirs:
        for base in (module_dir, os.path.dirname(module_dir), str(project.root)):
            raw = project.read_file(os.path.join(base, d, name))
            if raw is not None:
                return raw.decode("utf-8", "replace")
    return None
