"""Render a Jinja template chunk by chunk, learning which template line made each chunk.

Jinja compiles a template into a generator (``root_render_func``) that yields one
chunk per literal run or expression. After each chunk we read the line number of
the innermost generator frame that produced it and map it back to the template
line with ``Template.get_corresponding_lineno``. Includes run their own
``root_render_func`` in a plain ``for`` loop, invisible to ``gi_yieldfrom``, so
``TracedTemplate`` registers every active root generator on a stack.
"""

from __future__ import annotations

import bisect
import threading
from typing import Iterator, List, Optional, Tuple

from jinja2 import Template

_state = threading.local()


def _active() -> Optional[List]:
    return getattr(_state, "stack", None)


class TracedTemplate(Template):
    @classmethod
    def _from_namespace(cls, environment, namespace, globals):
        t = super()._from_namespace(environment, namespace, globals)
        inner = t.root_render_func

        def root_render_func(context):
            stack = _active()
            gen = inner(context)
            if stack is None:
                yield from gen
                return
            stack.append((t, gen))
            try:
                for event in gen:
                    yield event
            finally:
                stack.pop()

        t.root_render_func = root_render_func
        return t


def traced_chunks(template: TracedTemplate, context) -> Iterator[Tuple[str, str, int, bool]]:
    """Yield (chunk, template_name, template_line, is_literal) for one render."""
    stack: List = []
    _state.stack = stack
    try:
        for chunk in template.root_render_func(context):
            name, line, literal = _where(stack)
            yield chunk, name if name is not None else (template.name or "<string>"), line, literal
    finally:
        _state.stack = None


def _where(stack) -> Tuple[Optional[str], int, bool]:
    if not stack:
        return None, 0, True
    tmpl, gen = stack[-1]
    while getattr(gen, "gi_yieldfrom", None) is not None:  # blocks: `yield from blocks[...]`
        gen = gen.gi_yieldfrom
    frame = getattr(gen, "gi_frame", None)
    if frame is None:
        return tmpl.name, 0, True
    # the answer is the same every time a template's compiled code yields at this instruction
    # (a loop's body yields at the same place on every pass): worked out once per environment,
    # again only if the Python source recorded under the code's file name was replaced since
    env = tmpl.environment
    code = frame.f_code
    python = getattr(env, "python_sources", {}).get(code.co_filename)
    memo = env.__dict__.setdefault("_promptlint_where", {})
    key = (id(code), frame.f_lasti, id(tmpl))
    known = memo.get(key)
    if known is not None and known[0] is code and known[1] is tmpl and known[2] is python:
        return known[3]
    where = _frame_where(tmpl, frame)
    memo[key] = (code, tmpl, python, where)
    return where


def _frame_where(tmpl, frame) -> Tuple[Optional[str], int, bool]:
    name = frame.f_globals.get("name", tmpl.name)
    owner = tmpl
    if name != tmpl.name:
        try:
            owner = tmpl.environment.get_template(name)
        except Exception:
            owner = tmpl
    code_line = frame_line(frame, tmpl.environment)
    line = template_line(owner, code_line)
    # The compiled statement that yielded: a string constant is literal template text.
    literal = _yields_constant(frame, code_line, tmpl.environment)
    return name, line, literal


def frame_line(frame, environment) -> int:
    """``frame.f_lineno`` in O(log n).

    CPython computes ``f_lineno`` by walking the code object's line table from its start: one
    lookup per output chunk in a template compiled to one long generator was quadratic (a
    2,000-line template took 17 s). The table is decoded once per code object, kept on the
    environment (keyed by id: hashing a code object hashes its whole bytecode).
    """
    code = frame.f_code
    tables = environment.__dict__.setdefault("_promptlint_line_tables", {})
    entry = tables.get(id(code))
    if entry is None or entry[0] is not code:
        starts, lines = [], []
        for start, _end, lineno in code.co_lines():
            if lineno is not None:
                starts.append(start)
                lines.append(lineno)
        entry = tables[id(code)] = (code, starts, lines)
    _, starts, lines = entry
    i = bisect.bisect_right(starts, frame.f_lasti) - 1
    return lines[i] if i >= 0 else frame.f_lineno


def _yields_constant(frame, code_line: int, environment) -> bool:
    """Whether the compiled statement that yielded is a string constant (literal text)."""
    sources = getattr(environment, "python_sources", {})
    lines = sources.get(frame.f_code.co_filename)
    if not lines or code_line > len(lines):
        return False
    s = lines[code_line - 1].lstrip()
    return s.startswith("yield '") or s.startswith('yield "')


def template_line(template, code_line: int) -> int:
    """``Template.get_corresponding_lineno`` in O(log n).

    Jinja re-parses the template's whole debug-info string on every call; a render asks once
    per output chunk, which made a 2,000-line template quadratic. The table is parsed once per
    template (its code lines ascend: the generator appends them as it writes).
    """
    table = template.__dict__.get("_promptlint_lines")
    if table is None:
        pairs = template.debug_info
        code_lines = [c for _, c in pairs]
        if any(a > b for a, b in zip(code_lines, code_lines[1:])):  # never seen; Jinja's own scan then
            return template.get_corresponding_lineno(code_line)
        table = template.__dict__["_promptlint_lines"] = (code_lines, [t for t, _ in pairs])
    code_lines, template_lines = table
    i = bisect.bisect_right(code_lines, code_line) - 1
    return template_lines[i] if i >= 0 else 1
