"""What 1,000 TypeScript files cost over 1,000 Python files of the same prompt builder (issue 30's
speed row: at most 0.5 s more).

    python benchmarks/ts_parse.py [--files 1000] [--reps 3]

Both sets are generated: one agent module per file (an SDK client, a policy constant, a helper that
builds the system prompt with a timestamp, a function that sends it), the TypeScript one with types.
Three rows, best of ``--reps``: the parser alone (tree-sitter vs ``ast.parse``), the front end up to
the candidate findings (``tssource`` vs ``pysource``, no tokenizer), and ``promptlint check`` on
each directory in a fresh process (tokenizer load and token figures included, result cache off).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

POLICY = ("You are the support assistant for Acme Corporation. Answer questions about orders, shipping and "
          "returns politely and precisely. Always cite the relevant policy section.")

TS = '''import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic();
const POLICY_{i} = "{policy}";

interface Ctx {{ tenant: string; plan: "free" | "pro" }}

function systemPrompt(ctx: Ctx): string {{
  const now = new Date().toISOString();
  return `Now: ${{now}}\\n${{POLICY_{i}}}\\nTenant: ${{ctx.tenant}} (${{ctx.plan}})`;
}}

export async function answer{i}(ctx: Ctx, question: string) {{
  const response = await client.messages.create({{
    model: "claude-sonnet-4-5",
    max_tokens: 512,
    system: systemPrompt(ctx),
    messages: [{{ role: "user", content: question }}],
  }});
  return response.content;
}}
'''

PY = '''from datetime import datetime

import anthropic

client = anthropic.Anthropic()
POLICY_{i} = "{policy}"


def system_prompt(ctx: dict) -> str:
    now = datetime.now().isoformat()
    return f"Now: {{now}}\\n{{POLICY_{i}}}\\nTenant: {{ctx['tenant']}} ({{ctx['plan']}})"


def answer{i}(ctx: dict, question: str):
    response = client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=512,
        system=system_prompt(ctx),
        messages=[{{"role": "user", "content": question}}],
    )
    return response.content
'''


def generate(directory: Path, n: int):
    (directory / "ts").mkdir(parents=True)
    (directory / "py").mkdir(parents=True)
    for i in range(n):
        (directory / "ts" / f"agent{i}.ts").write_text(TS.format(i=i, policy=POLICY), encoding="utf-8")
        (directory / "py" / f"agent{i}.py").write_text(PY.format(i=i, policy=POLICY), encoding="utf-8")


def best(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()

    import ast

    from promptlint.analyzers import python_source, ts_source
    from promptlint.project.config import Settings
    from promptlint.analysis.kernel import Context
    from promptlint.tssource import grammar

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        generate(d, args.files)
        ts_files = sorted((d / "ts").iterdir())
        py_files = sorted((d / "py").iterdir())
        ts_src = [p.read_bytes() for p in ts_files]
        py_src = [p.read_text(encoding="utf-8") for p in py_files]
        grammar.parser("typescript")  # the grammar loads once per process: not part of a file's cost

        parse_ts = best(lambda: [grammar.parse(p, s) for p, s in zip(ts_files, ts_src)], args.reps)
        parse_py = best(lambda: [ast.parse(s) for s in py_src], args.reps)
        ctx = Context(settings=Settings(root=d), tokenizer=lambda: None, is_enabled=lambda code: True)
        scan_ts = best(lambda: [ts_source.scan(p, s, p.name, ctx) for p, s in zip(ts_files, ts_src)], args.reps)
        scan_py = best(lambda: [python_source.scan(p, s, p.name) for p, s in zip(py_files, py_src)], args.reps)

        tok = ROOT / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"
        env = dict(os.environ, PYTHONPATH=str(ROOT))

        def check(which: str):
            def run():
                subprocess.run([sys.executable, "-m", "promptlint", "check", "--no-cache", "--output-format", "concise",
                                "--tokenizer", str(tok), str(d / which)], cwd=d, env=env, capture_output=True, check=False)
            return run

        check_ts = best(check("ts"), args.reps)
        check_py = best(check("py"), args.reps)

    n = args.files
    print(f"{n:,} files each, best of {args.reps}")
    print(f"{'':28}{'TypeScript':>12}{'Python':>12}{'difference':>12}")
    for label, a, b in (("parse only", parse_ts, parse_py), ("front end (no tokenizer)", scan_ts, scan_py),
                        ("promptlint check (process)", check_ts, check_py)):
        print(f"{label:28}{a:>11.2f}s{b:>11.2f}s{a - b:>+11.2f}s")


if __name__ == "__main__":
    main()
