"""`check --add-suppressions`: a suppression comment for every remaining finding (ruff's `--add-noqa`).

For adopting promptlint on a large repository: the findings that exist today are silenced where
they are, new ones still fail. Each finding's line gets its codes added to an ignore comment
already on it, or a new one at the end of the line: `{# promptlint: ignore[M101] #}` right after
the text (no space: a comment renders nothing, and a space would change the prompt) or
`  # promptlint: ignore[M101]` in Python. A line whose end lies inside a tag or a string (the
comment would become part of it) and templates stored in JSON files get none; the caller hears
how many were skipped.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Dict, List, Set, Tuple

from promptlint.doors import bounded_io
from promptlint.driver import suppress
from promptlint.fixes import tags as jtags


def add_suppressions(result, settings=None) -> Tuple[Dict[str, int], int]:
    """({path: comments added}, findings skipped); writes the files (promptlint.fixes.fixing.write_source:
    never through a link; a refusal is ``UsageError``)."""
    from promptlint.fixes.fixing import opened, write_source

    by_path: Dict[str, Dict[int, List[str]]] = {}
    for f in result.findings:
        if f.code == suppress.UNUSED:  # a suppression cannot silence an unused suppression
            continue
        codes = by_path.setdefault(f.path, {}).setdefault(f.line, [])
        if f.code not in codes:
            codes.append(f.code)
    added: Dict[str, int] = {}
    edits: List[Tuple[Path, str]] = []
    skipped = 0
    for display, lines in sorted(by_path.items()):
        path = opened(display, settings)
        if path.suffix == ".json" or not path.is_file():
            skipped += sum(len(c) for c in lines.values())
            continue
        try:
            text = bounded_io.read_bytes(path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            skipped += sum(len(c) for c in lines.values())
            continue
        new_text, n, missed = annotate(text, lines, suppress.is_python(display), suppress.is_script(display))
        skipped += missed
        if n:
            edits.append((path, new_text))
            added[display] = n
    for path, _ in edits:  # nothing is written unless every file can be
        write_source(path, None, "", settings, "--add-suppressions")
    for path, new_text in edits:
        write_source(path, new_text, "", settings, "--add-suppressions")
    return added, skipped


def annotate(text: str, lines: Dict[int, List[str]], python: bool, script: bool = False) -> Tuple[str, int, int]:
    """(``text`` with ignore comments for ``lines`` {line: codes}, comments written, codes skipped)."""
    parts = text.split("\n")
    unsafe_ends = _script_string_lines(text) if script else _python_string_lines(text) if python else _lines_ending_in_tags(text)
    n = missed = 0
    for line, codes in sorted(lines.items()):
        i = line - 1
        if not (0 <= i < len(parts)) or line in unsafe_ends:
            missed += len(codes)
            continue
        body, cr = (parts[i][:-1], "\r") if parts[i].endswith("\r") else (parts[i], "")
        merged = body
        for code in codes:
            merged = suppress.add_code(merged, code, python, script) or merged
        todo = [c for c in codes if suppress.add_code(merged, c, python, script) != merged]
        if todo:
            comment = suppress.comment_for(", ".join(todo), python, script)
            merged += ("  " if (python or script) and merged.strip() else "") + comment
        if merged != body:
            parts[i] = merged + cr
            n += 1
    return "\n".join(parts), n, missed


def _lines_ending_in_tags(text: str) -> Set[int]:
    out: Set[int] = set()
    for tag in jtags.scan(text):
        first = text.count("\n", 0, tag.start) + 1
        last = first + text.count("\n", tag.start, tag.end)
        out.update(range(first, last))  # every line the tag spans but the one it ends on
    return out


def _script_string_lines(text: str) -> Set[int]:
    """Lines a TS/JS template literal or block comment continues past (a comment there is text)."""
    from promptlint.tssource import grammar

    out: Set[int] = set()
    tree = grammar.parser("tsx").parse(text.encode("utf-8"))
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("template_string", "comment", "string", "jsx_text") and node.start_point[0] != node.end_point[0]:
            out.update(range(node.start_point[0] + 1, node.end_point[0] + 1))
        elif node.start_point[0] != node.end_point[0]:
            stack.extend(node.children)
    return out


def _python_string_lines(text: str) -> Set[int]:
    import tokenize

    out: Set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                out.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return set(range(1, text.count("\n") + 2))  # unreadable: touch nothing
    return out
