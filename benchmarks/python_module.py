"""How long promptlint's Python analysis takes on a 2,000-line prompt-building module, as a ratio to
parsing the same module with libcst alone (the floor: the analysis walks libcst's tree).

    python benchmarks/python_module.py [--lines 2000] [--reps 5]

The module is the one tests/test_python_rules.py checks for findings (generated_module); the test
asserts what is found, this script measures how fast (a test asserts behaviour, a benchmark speed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()

    import libcst
    from test_python_rules import generated_module

    from promptlint.analyzers import python_source
    from promptlint.project.config import Settings
    from promptlint.analysis.kernel import Context, TokenizerProvider, rule_filter as _enabled, tokenizer_spec

    source = generated_module(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.py"
        path.write_text(source, encoding="utf-8")
        settings = Settings(root=Path(tmp))
        provider = TokenizerProvider(tokenizer_spec(settings))
        provider()  # loaded once per run in real use: not what this measures
        ctx = Context(settings, provider, _enabled(settings))
        analysis, parse = [], []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            findings = python_source.lint_file(path, source, ctx)
            analysis.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            libcst.parse_module(source)
            parse.append(time.perf_counter() - t0)
    a, p = statistics.median(analysis), statistics.median(parse)
    print(f"{source.count(chr(10)):,}-line module: {len(findings)} findings")
    print(f"analysis {a * 1000:.0f} ms, libcst parse {p * 1000:.0f} ms (medians of {args.reps})")
    print(f"analysis / parse = {a / p:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
