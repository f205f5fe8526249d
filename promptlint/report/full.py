"""`full` (default): ruff-like, with a source excerpt, the token pair and the block arithmetic.

The excerpt is the finding's ``source_line``: the text that was linted (an editor buffer or
stdin, not the file on disk), cut around the finding when the line is long.
"""

from __future__ import annotations

from promptlint.base.records import ReportContext, Result
from promptlint.report.new_marks import NEW_MARK, counts_line, is_new
from promptlint.report.style import Style, shown_path

FORMAT = "full"
KIND = "human"


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
    new = " " + style(NEW_MARK, 'green', 'bold') if is_new(f) else ""  # check --baseline: not at the baseline
    head = f"{style(f'{shown_path(f.path)}:{f.line}:{f.column}:', 'bold')} {style(f.code, 'red' if f.severity == 'error' else 'yellow', 'bold')}{new} {f.message}"
    out = [head]
    out += ["  " + l for l in _excerpt(f, style)]
    t, a = f.first_divergent_token, f.arithmetic
    if t is not None and a is not None:
        out.append(
            f"  first divergent token #{t.index:,}: {_tok(t.base_text)} vs {_tok(t.variant_text)}   "
            f"(shared prefix {a.shared_tokens:,} of {a.prompt_tokens:,} tokens; ideal {a.ideal_shared_tokens:,})"
        )
    for m in f.models:  # `tokenizers`: each deployed model it hits
        out.append(f"  model {m.describe()}")
    for note in f.notes:
        out.append(f"  {note}")
    if f.cost is not None:
        out.append(f"  cost: {f.cost.describe()}")
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


def baseline_lines(b) -> list:
    """check --baseline: one line per template scenario whose blocks per request changed."""
    def blocks(m):
        return "-" if m is None else ("not rendered" if m.eligible_blocks is None else f"{m.eligible_blocks:,}")

    blocks_of = ("each model's eligible blocks per request: " + ", ".join(f"{m['name']} {m['block_size']} tokens" for m in b.models)
                 if b.models else f"eligible blocks of {b.block_size} tokens per request")
    out = [f"Baseline {b.ref} ({b.commit[:12]}): {_plural(b.count('regression'), 'regression')}, "
           f"{_plural(b.count('improvement'), 'improvement')}, {b.count('new'):,} new, {b.count('removed'):,} removed, "
           f"{b.count('unchanged'):,} unchanged ({blocks_of})."]
    for d in b.deltas:
        if d.status == "unchanged":
            continue
        m = d.current
        name = m.path + (f" ({m.template})" if m.template else "") + f" [{m.scenario}]" + (f" on {m.model}" if m.model else "")
        lost = f"; {d.lost_tokens:,} prefill tokens lost per request" if d.lost_tokens else ""
        cost = f"; {d.cost.describe()}" if d.cost is not None and d.lost_tokens else ""
        out.append(f"  {shown_path(name)}: {blocks(d.before)} -> {blocks(d.after)} blocks per request, {d.status}{lost}{cost}")
    return out


def write(result: Result, context: ReportContext, stream) -> None:
    style = Style(context.color)
    for f in sorted(result.errors + result.findings, key=lambda f: f.sort_key):
        stream.write(format_finding(f, style) + "\n\n")
    if result.baseline is not None:
        stream.write("\n".join(baseline_lines(result.baseline) + [counts_line(result)]) + "\n")
    stream.write(summary(result) + "\n")
