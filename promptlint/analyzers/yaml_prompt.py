"""Jinja templates embedded in YAML prompt files (`*.yaml`, `*.yml`): an agent framework's
`system_prompt: |`, a Semantic Kernel prompt's `template: |` (promptfiles/yaml_prompts.py).

A walk takes a YAML file whose bytes hold `{{` or `{%`; an explicit one is linted when a block
scalar of it holds Jinja syntax. Every such block is analysed, each as its own template. The template is analysed as an application template
(analyzers/jinja_template.py: its render keeps the file's lines); findings' columns get the
YAML indentation back.
"""

from __future__ import annotations

import dataclasses

from pathlib import Path
from typing import List

from promptlint.doors import bounded_io
from promptlint.analyzers.files import Files
from promptlint.analysis.kernel import Context
from promptlint.base.records import Finding

FILES = Files(suffixes=(".yaml", ".yml"), markers=(b"{{", b"{%"), never_infix=".samples.")


def handles(path: Path) -> bool:
    if not FILES.matches_name(path) or not bounded_io.is_regular_file(path):
        return False
    from promptlint.promptfiles.yaml_prompts import embedded

    try:
        head = bounded_io.read_prefix(path, 400_000).decode("utf-8", "replace")
    except OSError:
        return False
    return embedded(head) is not None


def lint_file(path: Path, text: str, ctx: Context) -> List[Finding]:
    """Every prompt block of the file, each analysed as its own template at its own lines (the
    other blocks blanked); a finding two blocks share (a file-wide note) is kept once."""
    from promptlint.analyzers import jinja_template, launch_config
    from promptlint.promptfiles.yaml_prompts import only_block, prompt_blocks

    count = len(prompt_blocks(text))
    texts = [text] if count <= 1 else [only_block(text, n) for n in range(count)]
    findings: List[Finding] = []
    notes = {}  # (path, line, column) -> the file notes (PL101) of every block, as one finding
    for one in texts:
        for f in _restore_columns(path, one, ctx, jinja_template.lint_file(path, one, ctx)):
            if f.code != "PL101":
                if f not in findings:
                    findings.append(f)
                continue
            at = (f.path, f.line, f.column)
            if at not in notes:
                notes[at] = f
                findings.append(f)
                continue
            parts = notes[at].message.split("; ")
            merged = dataclasses.replace(notes[at], message="; ".join(parts + [p for p in f.message.split("; ") if p not in parts]))
            findings[findings.index(notes[at])] = notes[at] = merged
    return findings + launch_config.lint_file(path, text, ctx)  # the same file may start a server too (M701)


def measure(path: Path, text: str, ctx: Context) -> list:
    from promptlint.analyzers import jinja_template

    return jinja_template.measure(path, text, ctx)


def _restore_columns(path: Path, text: str, ctx: Context, findings: List[Finding]) -> List[Finding]:
    """The columns YAML's indentation had before the template was cut out of it."""
    from promptlint.promptfiles.yaml_prompts import embedded

    found = embedded(text)
    if found is None:
        return findings
    shifts = found[1]
    display = ctx.display(path)

    def restored(f: Finding) -> Finding:
        if f.path != display:
            return f
        column, end_column = f.column, f.end_column
        if f.line in shifts and column:
            column = max(1, column + shifts[f.line])
        if f.end_line in shifts and end_column:
            end_column = max(1, end_column + shifts[f.end_line])
        return dataclasses.replace(f, column=column, end_column=end_column)

    return [restored(f) for f in findings]
