"""Launch configurations (shell scripts, Dockerfiles, YAML): prefix caching turned off (M701).

A line scan, no parsing: the flags are unambiguous. Directory walks include these files
only when they mention one of the flags; explicit paths are always scanned.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List

from promptlint import bounded_io

from promptlint.lint import Context
from promptlint.records import Finding

SUFFIXES = (".sh", ".bash", ".zsh", ".yaml", ".yml", ".dockerfile", ".env")
FLAGS = re.compile(
    r"(?P<flag>--no-enable-prefix-caching\b|--disable-radix-cache\b|--no-prefix-caching\b)"
    r"|(?P<key>\b(?:enable[-_]prefix[-_]caching)\b[\"']?\s*[:=]\s*[\"']?(?:false|False|0)\b)"
    r"|(?P<radix>\bdisable[-_]radix[-_]cache\b[\"']?\s*[:=]\s*[\"']?(?:true|True|1)\b)"
)


def handles(path: Path) -> bool:
    name = path.name
    return path.suffix in SUFFIXES or name == "Dockerfile" or name.startswith("Dockerfile.") or name.endswith(".Dockerfile")


def mentions_flags(path: Path) -> bool:
    if not bounded_io.is_regular_file(path):
        return True  # let lint_file report it
    data = bounded_io.read_prefix(path, bounded_io.MAX_FILE_BYTES)
    return b"prefix-caching" in data or b"prefix_caching" in data or b"radix-cache" in data or b"radix_cache" in data


def lint_file(path: Path, text: str, ctx: Context) -> List[Finding]:
    from promptlint import registry

    if not ctx.is_enabled("M701"):
        return []
    rule = registry.get("M701")
    display = ctx.display(path)
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith("#") and not stripped.startswith("#!"):
            continue
        for m in FLAGS.finditer(line):
            found = m.group(0)
            out.append(Finding(
                "M701", rule.name, rule.miss_class, rule.severity,
                f"`{found.strip()}` turns the prefix cache off: every request pays the full prefill",
                display, i, m.start() + 1, i, m.end() + 1,
                help="remove it (prefix caching is on by default in vLLM V1 and SGLang)"))
    return out
