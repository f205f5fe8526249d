"""Helpers for the integration tests (formats, suppression, pre-commit, LSP); no fixtures here."""

from __future__ import annotations

import io
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent
QWEN = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"

SHARED = (
    "You are the support assistant for Acme Corporation. Answer questions about orders, shipping and "
    "returns politely and precisely. Always cite the relevant policy section. Never invent order numbers."
)
BAD = f"Current time: {{{{ now }}}}\n{SHARED}\nQuestion: {{{{ question }}}}\n"
GOOD = f"{SHARED}\nQuestion: {{{{ question }}}}\nCurrent time: {{{{ now }}}}\n"


def run_cli(capsys, monkeypatch, cwd, *args, stdin=None):
    """`promptlint ARGS` in-process in ``cwd``: (exit code, stdout, stderr)."""
    from promptlint.cli import main

    monkeypatch.chdir(cwd)
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def in_process_cli(args):
    """(exit code, stdout, stderr) of one in-process CLI run (no fixtures: usable inside Hypothesis)."""
    import contextlib

    from promptlint.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()
