"""Jinja templates embedded in YAML prompt files: an agent framework's `system_prompt: |` key, a
Semantic Kernel prompt's `template: |` (with `template_format: jinja2`), a prompt registry's
`prompt: >`.

The template is the value of the first block scalar (`|` or `>`) of a key named like a prompt
(`system_prompt`, `template`, `instructions`, ...) whose text holds Jinja syntax (not a Go template
or a GitHub Actions expression), the exact prompt key names first. Its final newline is dropped,
as Jinja's default environment drops a template's last newline. What is rendered keeps the file's lines: everything before the
block is one Jinja comment of as many lines, the block's lines lose the indentation YAML strips
(``shifts``: the columns each lost, added back to findings), everything after it is another
comment. A folded block (`>`) is read as its lines joined by spaces when rendered would need the
lines moved, so only literal blocks keep exact columns; folded ones keep lines.
Samples: Semantic Kernel's `input_variables: [{name, default}]` and a `sample:` mapping.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

_BLOCK = re.compile(r"^(?P<indent>[ ]*)(?:-[ ]+)?(?P<key>[A-Za-z_][\w.-]{0,80})[ ]*:[ ]*(?P<style>[|>])(?P<chomp>[-+]?)\d?[ ]*(?:#.*)?$")
_PROMPT_KEYS = ("system_prompt", "template", "prompt", "instructions", "system_message", "system", "user_prompt", "instruction")
_PROMPT_WORDS = ("prompt", "instruction", "template", "system", "message", "persona", "backstory", "goal", "preamble")
_NOT_JINJA = ("handlebars", "semantic-kernel", "liquid", "mustache", "f-string", "fstring")


def blocks(lines: List[str]) -> List[Tuple[str, int, int, int, str, str]]:
    """(key, header line index, first content index, end index (exclusive), style, chomp) of each block scalar."""
    out = []
    i = 0
    while i < len(lines) and len(out) < 1000:
        m = _BLOCK.match(lines[i])
        if m is None:
            i += 1
            continue
        indent = len(m.group("indent"))
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip(" ")) > indent):
            j += 1
        end = j
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        out.append((m.group("key"), i, i + 1, end, m.group("style"), m.group("chomp")))
        i = j
    return out


def embedded(source: str):
    """(masked template, shifts {line: columns}, block key, samples) or None when no block scalar
    of ``source`` holds a Jinja template."""
    lines = source.split("\n")
    fmt = re.search(r"(?m)^\s*template_format\s*:\s*['\"]?([\w-]+)", source)
    if fmt and fmt.group(1).lower() in _NOT_JINJA:
        return None
    found = prompt_blocks(source)
    if not found:
        return None
    key, header, first, end, style, chomp = found[0]
    body_lines = lines[first:end]
    indent = min((len(l) - len(l.lstrip(" ")) for l in body_lines if l.strip()), default=0)
    shifts: Dict[int, int] = {}
    out = []
    for n, line in enumerate(body_lines, start=first + 1):
        if line.strip():
            shifts[n] = indent
        out.append(line[indent:] if line.strip() else "")
    body = "\n".join(out)
    if style == ">":  # folded: single newlines become spaces (YAML), lines stay where they are
        body = re.sub(r"(?<=\S)\n(?=\S)", "{{- ' ' -}}\n", body)
    tail = ""  # YAML's final newline (clip): Jinja's default environment drops a template's last newline
    # `{#` on line 1 ... `#}` on the block's first line; the empty `if` gives that line its number
    # (Jinja marks none for text after a comment) and drops the indentation before the text
    row = "#}{%- if true -%}{%- endif -%}"
    head = "{#" + "\n" * first + row
    if first + 1 in shifts:
        shifts[first + 1] = indent - len(row)
    rest = len(lines) - end
    masked = head + body + tail + ("{#" + "\n" * max(rest - 1, 0) + "#}" if rest > 1 else "")
    return masked, shifts, key, _samples(source)


def prompt_blocks(source: str) -> list:
    """The block scalars of ``source`` that hold a Jinja prompt, the exact prompt key names first
    (`embedded` takes the first); none for a Semantic Kernel file in another template format."""
    lines = source.split("\n")
    fmt = re.search(r"(?m)^\s*template_format\s*:\s*['\"]?([\w-]+)", source)
    if fmt and fmt.group(1).lower() in _NOT_JINJA:
        return []
    jinja = [b for b in blocks(lines) if _jinja("\n".join(lines[b[2]:b[3]]))]
    if not any(_prompt_key(b[0]) for b in jinja):
        return []
    # a prompts file: its other Jinja blocks are prompts too (an agent's `task:`, `initial_plan:`, `report:`)
    found = [b for b in jinja if "\n".join(lines[b[2]:b[3]]).strip() != _ELSEWHERE]
    found.sort(key=lambda b: (b[0].lower() not in _PROMPT_KEYS, not _prompt_key(b[0]), b[1]))
    return found


def only_block(source: str, n: int) -> str:
    """``source`` with the text of every prompt block but the ``n``-th blanked (its lines kept, so each
    line keeps its number): ``embedded`` of it is that block. A file with several prompts (an agent's
    `system_prompt:` and `user_prompt:`, a list of tasks) is analysed once per block."""
    found = prompt_blocks(source)
    lines = source.split("\n")
    for i, (key, _, first, end, _, _) in enumerate(found):
        if i != n:
            keep = _ELSEWHERE if _prompt_key(key) else ""  # the file stays a prompts file
            indent = lines[first][: len(lines[first]) - len(lines[first].lstrip(" "))] or "  "
            lines[first:end] = [indent + keep if keep else ""] + [""] * (end - first - 1)
    return "\n".join(lines)


# what `only_block` leaves of another prompt-named block: marks the file as a prompts file, is no prompt
_ELSEWHERE = "{{- '' -}}"


def _prompt_key(key: str) -> bool:
    """A key named like a prompt: a CI `run: |`, an Ansible `shell: |` or a Helm ConfigMap's data
    are not prompts even when they hold `{{`."""
    return any(word in key.lower() for word in _PROMPT_WORDS)


def _jinja(text: str) -> bool:
    """Jinja syntax and not a Go template (`{{ .Values.x }}`, `{{ include ... }}`) or a GitHub
    Actions expression (`${{ github.sha }}`)."""
    if "{{" not in text and "{%" not in text:
        return False
    return not re.search(r"\$\{\{|\{\{-?\s*(?:\.|\$|include\b|template\b|toYaml\b|range\b|end\b)", text)


def _samples(source: str) -> Dict[str, object]:
    """Defaults of Semantic Kernel's `input_variables` and a top-level `sample:` mapping, read with
    the front-matter reader on the file without its block scalars (bounded, never executes)."""
    from promptlint.promptfiles.frontmatter import FrontMatterError, parse

    try:
        data = parse(source)
    except FrontMatterError:
        return {}
    out: Dict[str, object] = {}
    if not isinstance(data, dict):
        return out
    for item in data.get("input_variables") or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item.get("default") is not None:
            out[item["name"]] = item["default"]
    if isinstance(data.get("sample"), dict):
        out.update({str(k): v for k, v in data["sample"].items()})
    return out
