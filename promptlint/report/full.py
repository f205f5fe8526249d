"""`full` (default): ruff-like, with a source excerpt, the token pair and the block arithmetic."""

from __future__ import annotations

from pathlib import Path

from promptlint.report.style import Style, use_color


def _excerpt(f, style) -> list:
    if f.path.endswith(".json"):  # a chat template inside tokenizer_config.json: lines are the template's (see notes)
        return []
    try:
        lines = Path(f.path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    if not (1 <= f.line <= len(lines)):
        return []
    text = lines[f.line - 1].expandtabs(1)
    gutter = " " * len(str(f.line))
    width = f.end_column - f.column if f.end_line == f.line and f.end_column > f.column else 1
    width = max(1, min(width, max(1, len(text) - f.column + 1)))
    return [
        f"{gutter} {style('|', 'blue')}",
        f"{style(str(f.line), 'blue')} {style('|', 'blue')} {text}",
        f"{gutter} {style('|', 'blue')} {' ' * (f.column - 1)}{style('^' * width, 'red' if f.severity == 'error' else 'yellow')}",
    ]


def _tok(text: str) -> str:
    return repr(text) if text else "(end of prompt)"


def format_finding(f, style) -> str:
    head = f"{style(f'{f.path}:{f.line}:{f.column}:', 'bold')} {style(f.code, 'red' if f.severity == 'error' else 'yellow', 'bold')} {f.message}"
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


def render(report, stream, evidence: bool = False, settings=None) -> None:
    style = Style(use_color(stream))
    items = sorted(report.errors + report.findings, key=lambda f: f.sort_key)
    for f in items:
        stream.write(format_finding(f, style) + "\n\n")
    n = len(items)
    files = report.files
    if n:
        stream.write(f"Found {n:,} finding{'s' if n != 1 else ''} in {files:,} file{'s' if files != 1 else ''}.\n")
    else:
        stream.write(f"All checks passed ({files:,} file{'s' if files != 1 else ''}).\n")
