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

    monkeypatch.setenv("PROMPTLINT_JOBS", "1")  # observed in this process (forked workers: tests/test_parallel.py)
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

    import os

    out, err = io.StringIO(), io.StringIO()
    saved = os.environ.get("PROMPTLINT_JOBS")
    os.environ["PROMPTLINT_JOBS"] = "1"  # one process: a fuzz case is small, forking would dominate it
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:
                code = e.code
    finally:
        if saved is None:
            os.environ.pop("PROMPTLINT_JOBS", None)
        else:
            os.environ["PROMPTLINT_JOBS"] = saved
    return code, out.getvalue(), err.getvalue()
