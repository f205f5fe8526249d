"""Safe fixes as libcst codemods: they change ordering and serialization only.

- ``sort-keys``: ``json.dumps(x)`` -> ``json.dumps(x, sort_keys=True)`` (an explicit
  ``sort_keys=False`` becomes ``True``; a call with ``**kwargs`` is not touched);
- ``sorted``: an iterated set / listing ``s`` -> ``sorted(s)`` (same elements, stable order;
  the elements must be orderable, as strings and paths are).

Targets are located by the source range the analysis reported; libcst keeps every other
byte of the file (comments, formatting) as it was.
"""

from __future__ import annotations

from typing import List, NamedTuple, Sequence, Tuple


class Target(NamedTuple):
    kind: str  # "sort-keys" | "sorted"
    line: int  # 1-based
    column: int  # 0-based, characters
    end_line: int
    end_column: int
    code: str


def apply(text: str, targets: Sequence[Target]) -> Tuple[str, List[Target]]:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    by_start = {}
    for t in targets:
        by_start.setdefault((t.line, t.column), []).append(t)
    applied: List[Target] = []

    class Fixer(cst.CSTTransformer):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def on_leave(self, original, updated):
            if not isinstance(original, cst.BaseExpression):
                return updated
            pos = self.get_metadata(PositionProvider, original, None)
            if pos is None:
                return updated
            for t in by_start.get((pos.start.line, pos.start.column), []):
                if t in applied:
                    continue
                if t.kind == "sort-keys" and isinstance(updated, cst.Call):
                    new = _sort_keys(updated)
                    if new is not None:
                        applied.append(t)
                        updated = new
                elif t.kind == "sorted" and (pos.end.line, pos.end.column) == (t.end_line, t.end_column):
                    applied.append(t)
                    updated = cst.Call(func=cst.Name("sorted"), args=[cst.Arg(value=updated)])
            return updated

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return text, []
    new = MetadataWrapper(module, unsafe_skip_copy=True).visit(Fixer())
    return new.code, applied


def _sort_keys(call):
    import libcst as cst

    if any(a.star == "**" for a in call.args):
        return None
    args = list(call.args)
    for i, a in enumerate(args):
        if a.keyword is not None and a.keyword.value == "sort_keys":
            args[i] = a.with_changes(value=cst.Name("True"))
            return call.with_changes(args=args)
    eq = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    new_arg = cst.Arg(value=cst.Name("True"), keyword=cst.Name("sort_keys"), equal=eq)
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:
        # keep a trailing comma (multi-line call): the new argument goes after it, with one of its own
        new_arg = new_arg.with_changes(comma=args[-1].comma)
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(new_arg)
    return call.with_changes(args=args)
