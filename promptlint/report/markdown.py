"""`markdown`: a report for pull-request comments and $GITHUB_STEP_SUMMARY (GitHub- and
GitLab-flavoured Markdown: pipe tables, <details>).

With ``--baseline``: a table of the templates whose blocks per request changed (before → after,
prefill tokens lost per request), the unchanged ones collapsed. Then the costliest findings with
their first divergent token, and every other finding in a collapsed <details>. Text from the
linted files is escaped: a template cannot inject markup into the comment, nor mention anyone
(`@user`, `@org/team`) or reference an issue (`#12`): a word joiner (U+2060) follows each `@` and
`#` in plain text (code spans are never linked). A message's own `code` spans stay code spans.
Each finding links its rule's documentation (promptlint.base.registry.doc_url) and has a `Fix` cell:
the rule's advice, and the `check --fix` command when the rule has a fix for that kind of file.
The report stays under ``CAP`` bytes (GitHub drops a step summary over 1 MiB whole): rows past it
are left out, counted in a last line.
"""

from __future__ import annotations

import re

from promptlint.base.records import ReportContext, Result
from promptlint.report.github import costliest_first
from promptlint.report.new_marks import annotate_default, annotated
from promptlint.report.style import shown

FORMAT = "markdown"
KIND = "text"

TOP = 10  # findings shown before the <details>
CAP = 900 * 1024  # bytes: GitHub refuses a step summary over 1 MiB (the whole of it)
_JOINER = "\u2060"  # WORD JOINER: invisible, and `@\u2060name` is no mention (`#\u206012` no reference)
ANNOTATIONS_PER_LEVEL = 10  # GitHub shows at most 10 error and 10 warning annotations per step
_PUNCT = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~&])")


def text(s: str) -> str:
    """Plain text in a table cell: every Markdown-significant character escaped, on one line."""
    return _escaped(" ".join(str(s).split()))


def _escaped(s: str) -> str:
    escaped = _PUNCT.sub(r"\\\1", shown(s))
    return escaped.replace("@", "@" + _JOINER).replace("#", "#" + _JOINER)


def code(s: str) -> str:
    """A code span in a table cell (a backtick fence longer than any run inside; pipes escaped)."""
    s = shown(" ".join(str(s).splitlines())) or " "
    fence = "`" * (max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s.replace('|', chr(92) + '|')}{pad}{fence}"


# a code span as CommonMark reads one: a backtick run closed by a run of the same length
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def prose(s: str) -> str:
    """A message in a table cell: its `code` spans as code spans, the rest as escaped ``text``
    (escaping the backticks instead would show them literally, `\\``, around plain words)."""
    s = " ".join(str(s).split())
    out, pos = [], 0
    for m in _SPAN.finditer(s):
        out += [_escaped(s[pos:m.start()]), code(m.group(2))]
        pos = m.end()
    out.append(_escaped(s[pos:]))
    return "".join(out)


def rule_link(rule_code: str) -> str:
    """The rule code as a link to its documentation (the one link form: promptlint.base.registry)."""
    from promptlint.base import registry

    return f"[{code(rule_code)}]({registry.doc_url(rule_code)})" if rule_code in registry.known_codes() else code(rule_code)


def _fix_cell(f) -> str:
    """The rule's advice for this finding, and the command that applies its fix when there is one."""
    from promptlint.base import registry

    rule = registry.lookup(f.code)
    # the kind of source a fix is declared for, as `check --fix` decides it (promptlint.fixes.fixing)
    kind = "python" if f.path.endswith((".py", ".pyi")) else "template"
    safety = rule.fix_safety(kind) if rule is not None and f.stored_at is None else None
    command = {"safe": code("promptlint check --fix"), "unsafe": code("promptlint check --fix --unsafe-fixes")}.get(safety)
    parts = [prose(f.help)] if f.help else []
    if command:
        parts.append(f"{'safe' if safety == 'safe' else 'unsafe'} fix: {command}")
    return "; ".join(parts) or "—"


def tokenizer_label(sha256, embedded_name=None) -> str:
    """A tokenizer's label: the first 12 digits of its sha256; the embedded one by its whole name
    (``embedded_name``), with its digits when the run loaded it (a warm run only names it)."""
    sha256 = str(sha256 or "")
    if sha256.startswith("embedded:"):
        return code(sha256[len("embedded:"):])
    if embedded_name:
        return code(embedded_name) + (f" ({code(sha256[:12])})" if sha256 else "")
    return code(sha256[:12]) if sha256 else "embedded"


def _embedded_name(spec):
    return spec.display if spec is not None and spec.embedded else None


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


class _FindingRow(str):
    """A table line that shows one finding (the cap counts the ones it leaves out)."""


def _table(header, align, rows, kind=str) -> list:
    return [_row(header), _row(align), *(kind(_row(r)) for r in rows)]


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _blocks(m) -> str:
    if m is None:
        return "—"
    return "not rendered" if m.eligible_blocks is None else f"{m.eligible_blocks:,}"


def _signed(n) -> str:
    return "—" if n is None else (f"+{n:,}" if n > 0 else f"−{-n:,}" if n < 0 else "0")


def _number(n) -> str:
    return "—" if n is None else (f"−{-n:,}" if n < 0 else f"{n:,}")


_STATUS = {"regression": "🔴 regression", "improvement": "🟢 improvement", "new": "🆕 new", "removed": "➖ removed",
           "unchanged": "unchanged"}


def _money(c) -> str:
    """A cost cell: dollars and/or GPU-seconds a day (negative: saved)."""
    if c is None:
        return "—"
    parts = []
    if c.usd_per_day is not None:
        parts.append(("−" if c.usd_per_day < 0 else "") + f"\\${abs(c.usd_per_day):,.2f}/day")  # \$: not TeX math on GitHub
    if c.gpu_seconds_per_day is not None:
        parts.append(("−" if c.gpu_seconds_per_day < 0 else "") + f"{abs(c.gpu_seconds_per_day):,.1f} GPU-s/day")
    return ", ".join(parts) or "—"


def _template_rows(deltas, priced: bool, models: bool = False) -> list:
    rows = []
    for d in deltas:
        m = d.current
        name = m.path + (f" ({m.template})" if m.template else "")
        rows.append([code(name), text(m.scenario)] + ([text(f"{m.model} (blocks of {m.block_size})")] if models else [])
                    + [f"{_blocks(d.before)} → {_blocks(d.after)}", _signed(d.delta_blocks),
                       _number(d.lost_tokens), _STATUS[d.status]] + ([_money(d.cost)] if priced else []))
    return rows


def _baseline_section(b) -> list:
    models = bool(b.models)  # `tokenizers`: a row per model
    out = [f"**Baseline** {code(b.ref)} ({code(b.commit[:12])}): "
           + ", ".join([_plural(b.count("regression"), "regression"), _plural(b.count("improvement"), "improvement"),
                        f"{b.count('new'):,} new", f"{b.count('removed'):,} removed", f"{b.count('unchanged'):,} unchanged"])
           + ("; each model's eligible KV blocks per request." if models
              else f"; eligible KV blocks of {b.block_size} tokens per request."), ""]
    priced = any(d.cost is not None for d in b.deltas)
    header = ["Template", "Scenario"] + (["Model"] if models else []) + [
        "Blocks per request", "Change", "Prefill tokens lost per request", "Status"]
    align = ["---", "---"] + (["---"] if models else []) + ["---:", "---:", "---:", "---"]
    if priced:
        header, align = header + ["Cost"], align + ["---:"]
    changed = [d for d in b.deltas if d.status != "unchanged"]
    same = [d for d in b.deltas if d.status == "unchanged"]
    if changed:
        out += _table(header, align, _template_rows(changed, priced, models)) + [""]
    else:
        out += ["No template's blocks per request changed.", ""]
    if same:
        out += ["<details>", f"<summary>{_plural(len(same), 'unchanged template scenario')}</summary>", ""]
        out += _table(header, align, _template_rows(same, priced, models)) + ["", "</details>", ""]
    return out


def _model_cell(m) -> str:
    t, a = m.first_divergent_token, m.arithmetic
    return text(m.model) + ("" if t is None or a is None else f": #{t.index:,}, {a.lost_blocks:,} of {a.ideal_eligible_blocks:,}")


def _finding_rows(findings, with_baseline: bool, priced: bool = False, models: bool = False) -> list:
    rows = []
    for f in findings:
        t, a = f.first_divergent_token, f.arithmetic
        token = "—" if t is None else f"#{t.index:,}: {code(repr(t.base_text))} vs {code(repr(t.variant_text))}"
        lost = "—" if a is None else f"{a.lost_blocks:,} of {a.ideal_eligible_blocks:,}"
        row = [rule_link(f.code), code(f"{f.path}:{f.line}:{f.column}"), prose(f.message), _fix_cell(f), token, lost]
        if models:
            row.append("; ".join(_model_cell(m) for m in f.models) or "—")
        if priced:
            row += ["—" if f.cost is None else f"{f.cost.tokens_per_request:,}", _money(f.cost)]
        if with_baseline:
            row.append("**new**" if f.baseline == "new" else text(f.baseline or ""))
        rows.append(row)
    return rows


def _left_out(findings) -> int:
    """Findings past GitHub's 10 annotations of their level (errors, warnings; notices are not limited)."""
    counts = {}
    for f in findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    return sum(max(0, n - ANNOTATIONS_PER_LEVEL) for level, n in counts.items() if level in ("error", "warning"))


def _findings_section(result, with_baseline: bool, annotate=None) -> list:
    items = sorted(result.errors + result.findings, key=costliest_first)  # the order of the annotations
    if not items:
        return [f"No findings ({_plural(result.files, 'file')} checked)."]
    new = sum(1 for f in items if f.baseline == "new")
    head = f"### {_plural(len(items), 'finding')}" + (f" ({new:,} new)" if with_baseline else "")
    out = [head, "", f"In {_plural(len({f.path for f in items}), 'file')} of {result.files:,} checked; costliest first.", ""]
    priced = any(f.cost is not None for f in items)
    models = any(f.models for f in items)
    header = ["Rule", "Where", "Message", "Fix", "First divergent token", "Blocks lost"]
    align = ["---"] * 4 + ["---", "---:"]
    if models:  # `tokenizers`: each model's first divergent token and blocks lost
        header, align = header + ["Models"], align + ["---"]
    if priced:
        header, align = header + ["Tokens per request", "Cost"], align + ["---:", "---:"]
    if with_baseline:
        header, align = header + ["Baseline"], align + ["---"]
    out += _table(header, align, _finding_rows(items[:TOP], with_baseline, priced, models), _FindingRow) + [""]
    rest = items[TOP:]
    if rest:
        out += ["<details>", f"<summary>{_plural(len(rest), 'more finding')}</summary>", ""]
        out += _table(header, align, _finding_rows(rest, with_baseline, priced, models), _FindingRow) + ["", "</details>", ""]
    annotated_items = annotated(items, annotate_default(result, annotate))  # what the `github` format annotates
    left = _left_out(annotated_items)
    if left:
        out += [f"GitHub shows at most {ANNOTATIONS_PER_LEVEL} error and {ANNOTATIONS_PER_LEVEL} warning annotations per "
                f"step: {_plural(left, 'finding')} above {'has' if left == 1 else 'have'} no annotation.", ""]
    existing = len(items) - len(annotated_items)
    if existing:
        out += [f"{_plural(existing, 'existing finding')} above {'has' if existing == 1 else 'have'} no annotation: "
                "with a baseline only new findings are annotated (`--annotate all` annotates every one).", ""]
    return out


def write(result: Result, context: ReportContext, stream) -> None:
    """``context.annotate``: the run's --annotate, so the report counts the findings left without an annotation."""
    baseline = result.baseline
    lines = ["## promptlint: prompt-cache report", ""]
    if result.models:  # `tokenizers`: every deployed model
        lines.append("Models: " + ", ".join(
            f"{text(m.name)} ({text(m.engine)}, blocks of {m.block_size} tokens; tokenizer "
            + tokenizer_label(m.sha256, None if m.path else "embedded") + ")" for m in result.models) + ".")
    else:
        lines.append(f"{text(result.engine)}, blocks of {result.block_size} tokens; tokenizer "
                     + tokenizer_label(result.tokenizer_sha256, _embedded_name(result.tokenizer)) + ".")
    lines.append("")
    if baseline is not None:
        lines += _baseline_section(baseline)
    lines += _findings_section(result, baseline is not None, context.annotate)
    stream.write("\n".join(capped(lines)).rstrip("\n") + "\n")


def _size(line: str) -> int:
    return len(line.encode("utf-8", "replace")) + 1


def capped(lines: list, cap: int = CAP) -> list:
    """``lines``, or as many as fit in ``cap`` bytes with every <details> they open closed and a last
    line counting the findings left out."""
    if sum(map(_size, lines)) <= cap:
        return lines
    budget = cap - 1024  # room for the closing tags and the last line
    out, used, opened = [], 0, 0
    for i, line in enumerate(lines):
        if used + _size(line) > budget:
            break
        out.append(line)
        used += _size(line)
        opened += (line == "<details>") - (line == "</details>")
    left = sum(1 for line in lines[i:] if isinstance(line, _FindingRow))
    out.append("")
    for _ in range(max(opened, 0)):
        out += ["</details>", ""]
    out.append(f"**{_plural(left, 'more finding')}** not shown: this report is capped at {cap // 1024:,} KiB "
               "(GitHub drops a step summary over 1 MiB); the other output formats have them all.")
    return out
