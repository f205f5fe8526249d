"""Computed includes: `{% include policy_filename %}`, where the template name is an input.

The input gets a file name as its value, from the first that gives one:

1. the samples file's ``include-choices`` (``policy_filename = ["policy_returns.j2", ...]``);
2. the template itself: a literal default (`{% set t = t or "default.j2" %}`,
   `t | default("default.j2")`, `t if t else "default.j2"`);
3. the templates beside the includer whose name the input's name matches: every word of the
   name but the generic ones (`filename`, `template`, `path`, ...) starts a word of the file's
   name (`policy_filename` -> `policy_returns.j2`, `policy_shipping.j2`).

Otherwise the include renders as empty (``EMPTY``, a name only promptlint's loader knows) and the
analyzer says so in one note. A name in a list (`{% include [tenant_header, "generic.j2"] %}`)
with no choice is left alone: Jinja falls through to the next name, as it does in production.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from promptlint.render.loader import UNRESOLVED_INCLUDE as EMPTY  # the loader serves it as an empty template
_TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2", ".prompt")  # application templates (analyzers.jinja_template)
_GENERIC = {"file", "filename", "name", "template", "tpl", "path", "partial", "include", "fragment", "j2", "jinja", "prompt"}


class IncludeInputs(dict):
    """input name -> literal file names the template gives it (possibly none); ``listed`` holds
    inputs that appear only inside a list of alternatives."""

    def __init__(self):
        super().__init__()
        self.listed = set()
        self.lines: Dict[str, tuple] = {}  # input -> (template name, line) of its first use


def include_inputs(asts: Iterable) -> IncludeInputs:
    """Every input used as an include/import/extends name in ``asts`` (a TemplateSet)."""
    from jinja2 import nodes

    out = IncludeInputs()
    names = list(getattr(asts, "names", [])) or [None] * len(asts)
    for tname, ast in zip(names, asts):
        assigned: Dict[str, List] = {}
        for a in ast.find_all(nodes.Assign):
            if isinstance(a.target, nodes.Name):
                assigned.setdefault(a.target.name, []).append(a.node)
        for node in ast.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
            target = node.template
            alone = not isinstance(target, (nodes.List, nodes.Tuple))
            for expr in target.items if not alone else [target]:
                names, literals = _names_and_literals(expr, assigned, set())
                for n in names:
                    out.lines.setdefault(n, (tname, node.lineno))
                    known = out.setdefault(n, [])
                    known += [lit for lit in literals if lit not in known]
                    if alone:
                        out.listed.discard(n)
                    elif not known:
                        out.listed.add(n)
    return out


def _names_and_literals(expr, assigned, seen):
    """Input names an include expression reads, and the literal file names it may take."""
    from jinja2 import nodes

    names, literals = [], []
    if isinstance(expr, nodes.Const) and isinstance(expr.value, str):
        literals.append(expr.value)
    elif isinstance(expr, nodes.Name):
        if expr.name in assigned and expr.name not in seen:  # `{% set t = t or "x.j2" %}`
            seen.add(expr.name)
            for value in assigned[expr.name]:
                n, lit = _names_and_literals(value, assigned, seen)
                names += n
                literals += lit
            if expr.name not in names and any(isinstance(v, nodes.Const) for v in assigned[expr.name]):
                return names, literals  # a plain constant: no input
        if expr.name not in names:
            names.append(expr.name)
    elif isinstance(expr, (nodes.Or, nodes.And)):
        for side in (expr.left, expr.right):
            n, lit = _names_and_literals(side, assigned, seen)
            names += n
            literals += lit
    elif isinstance(expr, nodes.CondExpr):
        for side in (expr.expr1, expr.expr2):
            if side is not None:
                n, lit = _names_and_literals(side, assigned, seen)
                names += n
                literals += lit
    elif isinstance(expr, nodes.Filter) and expr.name in ("default", "d") and expr.node is not None:
        names, literals = _names_and_literals(expr.node, assigned, seen)
        for arg in expr.args[:1]:
            if isinstance(arg, nodes.Const) and isinstance(arg.value, str):
                literals.append(arg.value)
    return [n for i, n in enumerate(names) if n not in names[:i]], literals


def beside(name: str, includer: Path, templates: Iterable[str]) -> List[str]:
    """File names in the includer's directory the input ``name`` can stand for (sorted)."""
    from promptlint.scenarios.names import name_words

    words = [w for w in name_words(name) if w not in _GENERIC]
    if not words:
        return []
    out = []
    try:
        entries = sorted(os.listdir(includer.parent))
    except OSError:
        return []
    for entry in entries:
        if entry == includer.name or not any(entry.endswith(ext) for ext in templates):
            continue
        stem_words = name_words(entry.rsplit(".", 1)[0])
        if all(any(sw.startswith(w) for sw in stem_words) for w in words):
            out.append(entry)
    return out


def resolve(scenario, asts, includer: Path, choices: Optional[Dict[str, List[str]]] = None) -> List[str]:
    """Give every include input of ``asts`` its file name in ``scenario``; the inputs rendered as
    empty are returned as (name, template, line), for the analyzer's note."""
    from promptlint.scenarios.model import Variable

    unresolved = []
    found = include_inputs(asts)
    for name, literals in found.items():
        var = scenario.variables.get(name)
        if var is not None and var.declared:
            continue  # the samples file gives its value
        declared = (choices or {}).get(name)
        if declared:
            options, why = list(declared), "the samples file's include-choices"
        elif literals:
            options, why = literals, "the template's own default"
        else:
            options = beside(name, includer, _TEMPLATE_SUFFIXES)
            why = "the templates beside the includer its name matches"
        if not options:
            if name in found.listed:
                continue
            unresolved.append((name,) + found.lines.get(name, (None, 1)))
            options, why = [EMPTY], "no file found: rendered as empty"
        listed = ", ".join(o for o in options if o != EMPTY)
        scenario.variables[name] = Variable(
            name,
            options[0],
            "static",
            None,
            None,
            False,
            why=(f"static: an include name; {why}" + (f" ({listed})" if listed else ""),),
        )
        scenario.include_choices[name] = options
    return unresolved
