"""`full` (default): ruff-like, with a source excerpt, the token pair and the block arithmetic.

The excerpt is the finding's ``source_line``: the text that was linted (an editor buffer or
stdin, not the file on disk), cut around the finding when the line is long.
"""

from __future__ import annotations

from promptlint.report.style import Style, shown_path, use_color


def _excerpt(f, style) -> list:
    src = f.source_line
    if src is None:
        return []
    text = ("…" if src.start_column > 1 else "") + src.text + ("…" if src.cut_end else "")
    shift = 1 if src.start_column > 1 else 0  # the leading ellipsis
    text = text.expandtabs(1)
    column = f.column - src.start_column + 1 + shift
    gutter = " " * len(str(f.line))
    width = f.end_column - f.column if f.end_line == f.line and f.end_column > f.column else 1
    width = max(1, min(width, max(1, len(text) - column + 1)))
    return [
        f"{gutter} {style('|', 'blue')}",
        f"{style(str(f.line), 'blue')} {style('|', 'blue')} {text}",
        f"{gutter} {style('|', 'blue')} {' ' * (column - 1)}{style('^' * width, 'red' if f.severity == 'error' else 'yellow')}",
    ]


def _tok(text: str) -> str:
    return repr(text) if text else "(end of prompt)"


def format_finding(f, style) -> str:
    head = f"{style(f'{shown_path(f.path)}:{f.line}:{f.column}:', 'bold')} {style(f.code, 'red' if f.severity == 'error' else 'yellow', 'bold')} {f.message}"
    out = [head]
    out += ["  " + l for l in _excerpt(f, style)]
    t, a = f.first_divergent_token, f.arithmetic
    if t is not None and a is not None:
        out.append(
            f"  first divergent token #{t.index:,}: {_tok(t.base_text)} vs {_tok(t.variant_text)}   "
            f"(shared prefix {a.shared_tokens:,} of {a.prompt_tokens:,} tokens; ideal {a.ideal_shared_tokens:,})"
        )
    for note in f.notes:
        out.append(f"  {note}")
    if f.help:
        out.append(f"  {style('help', 'cyan', 'bold')}: {f.help}")
    return "\n".join(out)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' if n != 1 else ''}"


def summary(result) -> str:
    """The last line: findings and the files they are in, out of the files checked."""
    items = result.errors + result.findings
    if not items:
        return f"All checks passed ({_plural(result.files, 'file')})."
    with_findings = len({f.path for f in items})
    return f"Found {_plural(len(items), 'finding')} in {_plural(with_findings, 'file')} ({result.files:,} checked)."


def write(result, stream, evidence: bool = False) -> None:
    style = Style(use_color(stream))
    for f in sorted(result.errors + result.findings, key=lambda f: f.sort_key):
        stream.write(format_finding(f, style) + "\n\n")
    stream.write(summary(result) + "\n")
