"""`github`: GitHub Actions workflow commands, one annotation per finding.

    ::warning file=prompts/a.j2,line=1,col=15,endLine=1,endColumn=24,title=promptlint (M101)::message

Escaping follows @actions/core: in the message `%`, CR and LF are percent-encoded; in
property values also `:` and `,`. Severity: error -> error, warning -> warning,
info -> notice. Costliest first (GitHub shows 10 error and 10 warning annotations per step). Paths are relative to $GITHUB_WORKSPACE (else the git work tree). A template
stored in tokenizer_config.json is annotated at the JSON file's line and column; the message
says where in the template.

With ``--baseline``: a new finding's title and message say `new`; only new findings are
annotated unless ``--annotate all``; after the annotations, plain log lines give the baseline's
summary (the regressions that fail the step) and how many existing findings were not annotated.
"""

from __future__ import annotations

from promptlint.base.records import ReportContext, Result
from promptlint.report.locations import in_file, message_suffix, relative_to
from promptlint.report.new_marks import annotate_default, annotated, counts_line, mark
from promptlint.report.style import shown

FORMAT = "github"
KIND = "text"
ROOT = "GITHUB_WORKSPACE"  # paths are relative to it when set (ReportContext.ci_roots), else the git work tree

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    # line breaks are the workflow command's own escapes; any other control character (ESC in a
    # file name from a pull request) is written out, so it cannot colour or rewrite the job's log
    return shown(s, keep="\r\n").replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(f, root, cwd) -> str:
    level = LEVELS.get(f.severity, "warning")
    line, column, end_line, end_column = in_file(f)
    props = [
        ("file", relative_to(f.path, root, cwd)),
        ("line", str(line)),
        ("col", str(column)),
        ("endLine", str(end_line)),
        ("endColumn", str(end_column)),
        ("title", f"promptlint ({f.code}" + (f", {f.baseline})" if f.baseline else ")")),
    ]
    message = f"{f.code}{mark(f)} {f.message}{message_suffix(f)}"
    for m in f.models:  # `tokenizers`: each deployed model it hits
        message += f"\nmodel {m.describe()}"
    if f.cost is not None:  # [tool.promptlint.cost]
        message += f"\ncost: {f.cost.describe()}"
    if f.help:
        message += f"\nhelp: {f.help}"
    params = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{level} {params}::{escape_data(message)}"


def costliest_first(f):
    """GitHub shows the first 10 error and 10 warning annotations of a step: files that cannot be
    analysed first, then the findings that lose the most tokens, then path order."""
    return (not f.code.startswith("E"), -(f.arithmetic.lost_tokens if f.arithmetic is not None else 0), f.sort_key)


def write(result: Result, context: ReportContext, stream) -> None:
    """``context.annotate``: "all" or "new" (--annotate; default: "new" with a baseline, else "all")."""
    root = context.root(ROOT)
    # a workflow command on purpose: stdout's line guard (promptlint/doors/line_guard.py) neutralises
    # every other line that starts with `::`; a report file has no guard and takes plain lines
    command = getattr(stream, "write_command", None) or stream.write
    items = sorted(result.errors + result.findings, key=costliest_first)
    shown = annotated(items, annotate_default(result, context.annotate))
    for f in shown:
        command(annotation(f, root, context.cwd) + "\n")
    if result.baseline is None:
        return
    from promptlint.report.full import baseline_lines

    # plain log lines (never commands): why the step passes or fails
    lines = baseline_lines(result.baseline) + [counts_line(result)]
    left = len(items) - len(shown)
    if left:
        lines.append(f"{left:,} existing finding{'s' if left != 1 else ''} not annotated (--annotate all annotates them).")
    stream.write("\n".join(lines) + "\n")
