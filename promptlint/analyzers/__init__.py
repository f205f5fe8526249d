"""One analyzer per kind of prompt source. Each has handles(path) and lint_file(path, text, ctx).

The first analyzer whose ``handles`` accepts a path lints it; modules import lazily.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Optional

ANALYZERS = [
    "promptlint.analyzers.chat_template",  # before jinja_template: chat `.jinja` files are templates too
    "promptlint.analyzers.jinja_template",
    "promptlint.analyzers.python_source",
    "promptlint.analyzers.launch_config",
]


def analyzer_for(path: Path) -> Optional[object]:
    for name in ANALYZERS:
        module = importlib.import_module(name)
        if module.handles(path):
            return module
    return None
