"""Render a Jinja template chunk by chunk, learning which template line made each chunk.

Jinja compiles a template into a generator (``root_render_func``) that yields one
chunk per literal run or expression. After each chunk we read the line number of
the innermost generator frame that produced it and map it back to the template
line with ``Template.get_corresponding_lineno``. Includes run their own
``root_render_func`` in a plain ``for`` loop, invisible to ``gi_yieldfrom``, so
``TracedTemplate`` registers every active root generator on a stack.
"""

from __future__ import annotations

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
    name = frame.f_globals.get("name", tmpl.name)
    owner = tmpl
    if name != tmpl.name:
        try:
            owner = tmpl.environment.get_template(name)
        except Exception:
            owner = tmpl
    line = template_line(owner, frame.f_lineno)
    # The compiled statement that yielded: a string constant is literal template text.
    literal = _yields_constant(frame, tmpl.environment)
    return name, line, literal


def _yields_constant(frame, environment) -> bool:
    """Whether the compiled statement that yielded is a string constant (literal text)."""
    sources = getattr(environment, "python_sources", {})
    lines = sources.get(frame.f_code.co_filename)
    if not lines or frame.f_lineno > len(lines):
        return False
    s = lines[frame.f_lineno - 1].lstrip()
    return s.startswith("yield '") or s.startswith('yield "')


def template_line(template, code_line: int) -> int:
    """``Template.get_corresponding_lineno``, memoised per template.

    Jinja re-parses its debug-info string on every call; a render asks once per output chunk.
    """
    memo = template.__dict__.get("_promptlint_lines")
    if memo is None:
        memo = template.__dict__["_promptlint_lines"] = {}
    line = memo.get(code_line)
    if line is None:
        line = memo[code_line] = template.get_corresponding_lineno(code_line)
    return line
