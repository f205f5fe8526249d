"""M101: move the span that renders the volatile value to just before the first per-request input.

The span is the smallest self-contained piece of source around the first tag that reads the
value: its whole line(s), or, when that tag sits inside a block, the whole top-level block
(`{% if now %}…{% endif %}`) — never a piece that would cut a control structure. It goes,
whole lines with their own newlines, before the line where the first per-request input is
rendered (or the top-level block containing it), else to the end of the template.

Whitespace control travels with the lines (`trim_blocks` and `lstrip_blocks` are line-local);
a `-` that strips the newline before the span would strip a different one at the destination,
so a second candidate drops it. The verifier keeps a candidate only when the fixed render has
exactly the original render's lines (none glued, none split, none lost). Unsafe: the model
reads the value later in the prompt.

At its new place the value can merge with the text before it into one token (`Trace: ` + `a1…`
is ` a1` under a Llama-3 or Qwen pre-tokenizer) and, when that token crosses a block edge, the
move trades the M101 for an M104. Each move therefore has a last-resort twin that carries a hard
boundary: a newline (or, for a tag that opens its line, a space) right before the value's tag.
The twin is proven like any move, its lines checked on the same move without the boundary.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from promptlint.fixes import Proposal, tags as jtags


def propose(source: str, finding, run) -> Tuple[List[Proposal], Optional[str]]:
    name = finding.variable
    if not name:
        return [], "the finding names no input"
    tags = jtags.scan(source)
    ref = jtags.source_name(name)
    refs = [i for i, t in enumerate(tags) if jtags.references(t, source, ref)]
    field = _field_reads(name)
    if field is not None:  # a field of a record (`user.last_login_at`): the tag that reads that field
        refs = [i for i in refs if field.search(tags[i].body(source))]
    if not refs:
        return [], f"`{name}` is rendered by an included template: fix it there"
    span = _span(source, tags, refs[0])
    if span is None:
        return [], f"the tag that renders `{name}` is inside a block that is not closed in this file"
    start, end = span
    per_request = {v.name for v in run.scenario.of_kind("per-request")}

    def renders(t, n: str) -> bool:  # the record holding the value is not another input the span renders
        body = t.body(source)
        if field is not None and n == ref:
            body = field.sub("", body)
        return jtags.references_text(body, n)

    inside = sorted(n for n in per_request if any(renders(t, n) for t in tags if t.kind != "comment" and start <= t.start < end))
    if inside:
        return [], f"the span that renders `{name}` also renders the per-request input `{inside[0]}`"
    first_line = source.count("\n", 0, start) + 1
    last_line = first_line + source.count("\n", start, end - 1)
    what = f"line {first_line}" if first_line == last_line else f"lines {first_line}-{last_line}"
    out, bounded = [], []
    without = source[:start] + source[end:]
    for dest in _destinations(source, tags, end, per_request):
        if dest == len(source):
            to = "the end of the template"
        else:
            to = f"before line {source.count(chr(10), 0, dest) + 1}"
        title = f"move {what} (`{name}`) to {to}"
        for moved in _candidates(source, tags, start, end):
            plain = _move(source, start, end, dest, moved)
            out.append(Proposal(finding.code, plain, title, keeps_lines=True, without_span=without))
            for mark, words in _boundaries(moved, ref, field):
                bounded.append(Proposal(finding.code, _move(source, start, end, dest, mark), f"{title}, {words} before `{name}`",
                                        keeps_lines=True, without_span=without, lines_text=plain))
    out += bounded  # tried only when every plain move was refused
    if not out:
        return [], f"`{name}` already comes right before the per-request input"
    return out, None


def _boundaries(moved: str, ref: str, field) -> List[Tuple[str, str]]:
    """The span ``moved`` with a hard token boundary right before the first tag that renders the
    value, and its words: a newline in place of the blanks between the line's text and the tag,
    or a space before a tag that opens its line. None when the tag strips the text before it (`{{-`)."""
    tags = jtags.scan(moved)
    tag = next((t for t in tags if t.kind == "expr" and jtags.references(t, moved, ref)
                and (field is None or field.search(t.body(moved)))), None)
    if tag is None or tag.left == "-":
        return []
    line = jtags.line_start(moved, tag.start)
    before = moved[line : tag.start]
    if not before.strip():
        return [(moved[: tag.start] + " " + moved[tag.start :], "with a space")]
    text = before.rstrip(" \t")
    return [(moved[: line + len(text)] + "\n" + moved[tag.start :], "with a line break")]


def _field_reads(name: str):
    """For a field variable (`user.last_login_at`, `meta.generated_at`), a pattern of the source's reads
    of that field (`user.last_login_at`, `user["last_login_at"]`); None for an input itself."""
    import re

    from promptlint.scenarios.model import Variable

    path = Variable(name, None).path
    if not path:
        return None
    parts = [re.escape(path[0])] + [rf"(?:\s*\.\s*{re.escape(p)}\b|\s*\[\s*(['\"]){re.escape(p)}\{i + 1}\s*\])" for i, p in enumerate(path[1:])]
    return re.compile(r"\b" + "".join(parts))


def _span(source: str, tags, index: int) -> Optional[Tuple[int, int]]:
    """(start, end) of the whole lines holding tag ``index`` and every top-level construct that a tag
    on those lines belongs to (widened until no block crosses the edges); None for an unclosed block."""
    start, end = jtags.line_start(source, tags[index].start), jtags.line_end(source, tags[index].end - 1)
    while True:
        lo, hi = start, end
        for i, t in enumerate(tags):
            if t.end <= start or t.start >= end:
                continue
            opener = jtags.enclosing_opener(tags, i)
            if opener is None and t.opens:
                opener = i
            if opener is None:
                lo, hi = min(lo, t.start), max(hi, t.end)
                continue
            close = jtags.matching_end(tags, opener)
            if close is None:
                return None
            lo, hi = min(lo, tags[opener].start), max(hi, tags[close].end)
        new = (jtags.line_start(source, lo), jtags.line_end(source, hi - 1))
        if new == (start, end):
            return start, end
        start, end = new


def _destinations(source: str, tags, after: int, per_request) -> List[int]:
    """Where the span may go, best first: the start of the line where the first per-request input
    after ``after`` is rendered (its top-level construct's first line); just after that construct
    (the value's first tokens, which do not change, may otherwise cross a block boundary and keep
    the finding); the end of the source."""
    out = []
    for i, t in enumerate(tags):
        if t.start < after or not any(jtags.references(t, source, n) for n in per_request):
            continue
        opener = jtags.enclosing_opener(tags, i)
        at = tags[opener].start if opener is not None else t.start
        out.append(max(after, jtags.line_start(source, at)))
        close = jtags.matching_end(tags, opener) if opener is not None else i
        if close is not None:
            out.append(jtags.line_end(source, tags[close].end - 1))
        break
    out.append(len(source))
    return [d for n, d in enumerate(out) if d > after and d not in out[:n]]


def _candidates(source: str, tags, start: int, end: int) -> List[str]:
    """The span's text as it is, and without a leading `-` that strips the newline before it."""
    moved = source[start:end]
    out = [moved]
    first = next((t for t in tags if start <= t.start < end), None)
    if first is not None and first.left == "-" and not source[start : first.start].strip():
        at = first.start - start + 2
        out.append(moved[:at] + moved[at + 1 :])
    return out


def _move(source: str, start: int, end: int, dest: int, moved: str) -> str:
    if not moved.endswith("\n"):
        moved += "\n"
    head, middle, tail = source[:start], source[end:dest], source[dest:]
    if dest == len(source) and middle and not middle.endswith("\n"):
        middle += "\n"
        moved = moved[:-1]  # the file kept its missing final newline
    return head + middle + moved + tail
