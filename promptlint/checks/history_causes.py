"""Why a conversation does not grow as a prefix (M204's `cause`), and where in the template.

Input: ``cached`` (turn N's prompt text + the text the model generated) and ``after`` (turn
N+1's prompt text), whose first differing character is ``c``. The causes, tried in this order:

- ``reasoning-stripped``: the reply's reasoning is in the cached text, not in turn N+1 (or the
  generation prompt opens a `<think>` block the history never renders). The model's design.
- ``turn-dropped``: the reply's content is generated but turn N+1 does not render it at all.
- ``format-by-design`` / ``moved-block``: the text at ``c`` reappears later in turn N+1, moved by
  at least the length of the inserted reply (every turn inserts at least that before the
  last user message; a delimiter found a few characters on is not a move). A block that
  starts with a control token or carries the system message or the tools is the model's
  format (Mistral's `[AVAILABLE_TOOLS]` and system prompt before the last user message);
  any other moving text is a template bug.
- ``loop-last``: the differing character comes from a template line inside a branch on
  `loop.last` (the last message renders differently from the same message in history).
- ``whitespace``: the two sides differ only in whitespace at ``c``.
- ``other``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, FrozenSet, List, Optional, Tuple

BY_DESIGN = ("reasoning-stripped", "format-by-design")
CAUSES = ("reasoning-stripped", "format-by-design", "whitespace", "turn-dropped", "loop-last", "moved-block", "other")
_PROBE = 40  # characters compared when looking for a moved or dropped segment


@dataclass
class Cause:
    """Why turn N+1's render does not extend turn N's, and where."""

    name: str
    side: str = "cached"  # whose render holds the responsible text: "cached" | "after"
    offset: int = 0  # the responsible character in that side's text
    detail: str = ""  # the whitespace that differs; the generation prompt that opens the reasoning
    moved_to: int = 0  # a moved block: where turn N+1 renders the text at ``offset``
    texts: Tuple[str, str] = ("", "")  # loop-last: the differing text in turn N and in turn N+1 (escaped)


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def classify(
    cached: str,
    after: str,
    prompt_len: int,
    reply_content: str,
    reasoning: Optional[str],
    next_user: str,
    generation_prompt: str,
    specials: List[str],
    system: str,
    tool_names: List[str],
    loop_last_line: Any,
) -> Cause:
    """The cause of the first difference between ``cached`` and ``after``.

    ``loop_last_line(side, offset)`` says whether that side's character comes from a template
    line under a `loop.last` branch (the caller knows the renders' source maps)."""
    c = common_prefix(cached, after)
    if reasoning and reasoning[:_PROBE] in cached and reasoning[:_PROBE] not in after:
        return Cause("reasoning-stripped", "cached", cached.find(reasoning[:_PROBE]))
    if c <= prompt_len and "<think>" in generation_prompt and reasoning:
        return Cause("reasoning-stripped", "cached", c, generation_prompt)
    probe = reply_content[:_PROBE]
    if probe and cached.find(probe, prompt_len) >= 0 and probe not in after:
        return Cause("turn-dropped", "cached", cached.find(probe, prompt_len))
    segment = cached[c : c + _PROBE]
    if segment.strip():
        at = after.find(segment, c + 1)
        if at >= c + len(reply_content):
            by_design = any(s and segment.startswith(s) for s in specials) or (
                bool(system) and system[:_PROBE] in cached[c : c + len(system) + _PROBE]
            ) or any(n and n in cached[c : c + 200] for n in tool_names)
            return Cause("format-by-design" if by_design else "moved-block", "cached", c, moved_to=at)
    for side, text in (("after", after), ("cached", cached)):
        if c < len(text) and loop_last_line(side, c):
            return Cause("loop-last", side, c, texts=(_esc(cached[c : c + 12]), _esc(after[c : c + 12])))
    a_rest, b_rest = cached[c:], after[c:]
    a_bare, b_bare = _no_space(a_rest[: 4 * _PROBE]), _no_space(b_rest[: 4 * _PROBE])
    n = min(len(a_bare), len(b_bare), _PROBE)
    if (a_rest[:1].isspace() or b_rest[:1].isspace()) and a_bare[:n] == b_bare[:n]:
        side, text = ("after", b_rest) if b_rest[:1].isspace() else ("cached", a_rest)
        ws = text[: len(text) - len(text.lstrip())]
        return Cause("whitespace", side, c, ws)
    return Cause("other", "cached", c)


def show(text: Optional[str], limit: int = 40) -> str:
    """Text for a message or note: newlines escaped, cut to ``limit`` characters."""
    if text is None:
        return "(end)"
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _esc(text: str) -> str:
    return text.replace("\n", "\\n")


def _no_space(text: str) -> str:
    return "".join(text.split())


def chunk_line(sourcemap, offset: int) -> Optional[Tuple[str, int]]:
    """(template, line) of the render chunk holding ``offset``: the line a literal starts on, which
    stays right for whitespace a source map cannot pin to a column (trim_blocks, lstrip_blocks)."""
    chunks = [ch for ch in sourcemap.chunks if ch.start <= offset < ch.end]
    if not chunks:
        return None
    return chunks[-1].template, chunks[-1].line


@lru_cache(maxsize=32)
def parse(template_text: str):
    """The template's Jinja AST (None when it does not parse), once per template text."""
    from promptlint.render.environments import make_environment

    try:
        return make_environment("transformers").parse(template_text)
    except Exception:
        return None


@lru_cache(maxsize=32)
def nodes_of(template_text: str) -> tuple:
    """Every node of the template's AST in ``find_all``'s order (depth first, each before its
    children), gathered in one walk: the checks' questions about a template filter this instead of
    each walking the tree through Jinja's nested generators. Empty when it does not parse."""
    from jinja2 import nodes

    ast = parse(template_text)
    if ast is None:
        return ()
    out = []

    def children(node) -> list:
        found = []
        for name in node.fields:  # as Node.iter_child_nodes: fields in order, nodes and lists of nodes
            value = getattr(node, name, None)
            if isinstance(value, nodes.Node):
                found.append(value)
            elif isinstance(value, list):
                found += [v for v in value if isinstance(v, nodes.Node)]
        return found

    stack = children(ast)[::-1]
    while stack:
        node = stack.pop()
        out.append(node)
        stack += children(node)[::-1]
    return tuple(out)


@lru_cache(maxsize=32)
def loop_last_lines(template_text: str) -> FrozenSet[int]:
    """Template lines inside an `if` (or inline `x if … else y`) whose test reads `loop.last`."""
    from jinja2 import nodes

    ast = parse(template_text)
    if ast is None:
        return frozenset()
    lines = set()

    def reads_last(test) -> bool:
        return any(g.attr == "last" and isinstance(g.node, nodes.Name) and g.node.name == "loop" for g in test.find_all(nodes.Getattr)) or (
            isinstance(test, nodes.Getattr) and test.attr == "last" and isinstance(test.node, nodes.Name) and test.node.name == "loop"
        )

    every = nodes_of(template_text)
    for node in [n for n in every if isinstance(n, nodes.If)] + [n for n in every if isinstance(n, nodes.CondExpr)]:
        if not reads_last(node.test):
            continue
        # a multi-line string literal ends below the line it starts on
        end = max([(n.lineno or 0) + (n.value.count("\n") if isinstance(n, nodes.Const) and isinstance(n.value, str) else 0)
                   for n in node.find_all(nodes.Node)] + [node.lineno])
        lines.update(range(node.lineno, end + 1))
    return frozenset(lines)


def first_line_of(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""

