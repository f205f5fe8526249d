"""tree-sitter's grammars for TypeScript, TSX and JavaScript, loaded once, on first use.

A file that does not parse is reported at tree-sitter's first ERROR or MISSING node: tree-sitter
always returns a tree, so "does not parse" means the tree holds an error node.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, NamedTuple, Optional, Tuple

SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_PARSERS: Dict[str, object] = {}


def dialect(path: Path) -> str:
    """Which grammar reads a file: ``tsx`` (TSX), ``typescript`` or ``javascript`` (JSX included)."""
    suffix = path.suffix.lower()
    if suffix == ".tsx":
        return "tsx"
    if suffix in (".ts", ".mts", ".cts"):
        return "typescript"
    return "javascript"


def parser(name: str):
    p = _PARSERS.get(name)
    if p is None:
        from tree_sitter import Language, Parser

        if name == "javascript":
            import tree_sitter_javascript as grammar

            lang = Language(grammar.language())
        else:
            import tree_sitter_typescript as grammar

            lang = Language(grammar.language_tsx() if name == "tsx" else grammar.language_typescript())
        p = _PARSERS[name] = Parser(lang)
    return p


class SyntaxProblem(NamedTuple):
    line: int  # 1-based
    column: int  # 0-based UTF-8 byte column
    what: str


def parse(path: Path, source: bytes):
    """The tree of ``source`` in the grammar of ``path``'s suffix."""
    return parser(dialect(path)).parse(source)


def first_error(tree) -> Optional[SyntaxProblem]:
    """The first ERROR or MISSING node of a tree, in source order, or None."""
    root = tree.root_node
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            return SyntaxProblem(node.start_point[0] + 1, node.start_point[1], f"missing `{node.type}`")
        if node.type == "ERROR":
            inner = next((c for c in node.children if c.has_error or c.is_missing), None)
            if inner is not None:  # the innermost error is where the grammar gave up
                stack.append(inner)
                continue
            text = node.text.decode("utf-8", "replace").split("\n", 1)[0][:30] if node.text else ""
            return SyntaxProblem(node.start_point[0] + 1, node.start_point[1],
                                 f"unexpected `{text}`" if text else "unexpected input")
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return SyntaxProblem(1, 0, "invalid syntax")


def point(node) -> Tuple[int, int]:
    return node.start_point[0] + 1, node.start_point[1]
