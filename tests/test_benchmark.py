"""benchmarks/run.py --quick runs end to end and prints every row, so the benchmark cannot rot.
No assertions on time: the full run's figures are in docs/performance.md."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO
import pytest

pytestmark = pytest.mark.slow  # a real end-to-end run (docs/architecture.md, "Tests")

ROWS = [
    "bare `python -c pass`",
    "tokenizer load only",
    "(a) cold:",
    "(a) its whole process tree",  # the tree-peak path (--quick leaves out the (f) and (g) trees)
    "(b) warm: nothing changed",
    "(c) one application template changed",
    "(c) in a process holding the tokenizer",
    "(c) one template changed, daemon running",
    "(b) nothing changed, daemon running",
    "(a) cold, every variant encoded whole",
    "(d) floor:",
    "(d1) floor for (c):",
    "(a') cold, the 2 chat templates only",
    "(b') warm, the 2 chat templates only",
    "(e) transformers",
    "(f) scale: 10 app templates, cold",
    "(f) scale, every variant encoded whole",
    "(g) models/: 2 dirs, 1 distinct tokenizer, cold",
    "(g0) parse the 1 distinct tokenizer once",
    "(py) Python agent project: one prompt module changed",
    "(py) the same, daemon running",
]
NEWCOMER = [
    "(n) newcomer app: one changed template, daemon off",
    "(n) the same, tokenizer.json parsed (no fast load)",
    "(n) the same, no bytecode cache (.pyc never written)",
    "(n) the same, pinned 151k tokenizer (Qwen2.5)",
    "(n) one changed template, daemon on",
    "(p) pre-commit, promptlint hook / no-op hook, daemon on",
    "(p) pre-commit, promptlint hook / no-op hook, daemon off",
    "(l) language server: start to initialize reply (s)",
    "(l) language server: first diagnostics after initialize (s)",
]
RATIOS = ["warm / bare python", "one changed / its floor (d1)", "cold / floor (d)", "transformers (e) / promptlint cold",
          "scale (f) seconds", "scale (f) peak MiB", "tokenizer load / one changed (c)",
          "models (g) cold / parse distinct once (g0)", "models (g) peak MiB",
          "one changed, daemon running / bare python", "warm, daemon running / bare python",
          "  the same, interleaved pairs",  # the daemon rows' targets, judged on pairs
          "cold with windows / cold with full encodes (a)", "cold with windows / cold with full encodes (f)"]


def test_quick_benchmark_prints_the_table(tmp_path):
    env = dict(os.environ, PROMPTLINT_BENCH_TRANSFORMERS_PYTHON=sys.executable)
    r = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick", "--keep", str(tmp_path / "bench")],
        capture_output=True, text=True, env=env, timeout=300,  # a hang guard, not a speed check (shared CI machines)
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for row in ROWS + RATIOS:
        hits = [line for line in lines if line.startswith(row)]
        assert hits, f"no row {row!r} in:\n{r.stdout}"
        if "(e)" not in row:  # (e) is "skipped" (ratios "n/a") where transformers is not installed
            assert any(ch.isdigit() for ch in hits[0][54:]), hits[0]
    assert "4 application templates, 2 chat templates" in r.stdout


def test_quick_newcomer_rows_print_their_pairs(tmp_path):
    """The newcomer's app and pre-commit rows (benchmarks/newcomer.py), one pair each; the daemon
    they start runs in the benchmark's private runtime directory and is stopped at the end."""
    r = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick", "--only", "newcomer", "--keep", str(tmp_path / "bench")],
        capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for row in NEWCOMER:
        hits = [line for line in lines if line.startswith(row)]
        assert hits, f"no row {row!r} in:\n{r.stdout}"
        assert float(hits[0][len(row):].split()[0]) > 0, hits[0]  # seconds; the pair rows add the yardstick and the ratio
