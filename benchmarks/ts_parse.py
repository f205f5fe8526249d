"""What 1,000 TypeScript files cost over 1,000 Python files of the same prompt builders (issue 30's
speed row: at most 0.5 s more), and what a changed `.ts` file costs in a 200-file project.

    python benchmarks/ts_parse.py [--files 1000] [--reps 3] [--changed-files 200]

Two generated shapes, each in TypeScript and as its Python twin:

- flat: one agent module per file (an SDK client, a policy constant, a helper that builds the
  system prompt with a timestamp, a function that sends it);
- project (``benchmarks/ts_project.py``): shared prompt and tool modules, one agent class in four
  files importing them and a utility module, utility modules that name no SDK (a walk skips them).

Rows, best of ``--reps`` (each process-level row in a fresh process): the parser alone
(tree-sitter vs ``ast.parse``), the front end up to the candidate findings (``tssource`` vs
``pysource``, no tokenizer; for the project: the files a walk takes, imports followed, first pass
and again in the same process), and ``promptlint check`` on each directory (tokenizer load and
token figures included, result cache off). Then the changed file: in a ``--changed-files``
project with its cache warm, one agent module is edited before each `promptlint check -- FILE`
(as pre-commit passes it; the embedded tokenizer), daemon off and on, as the median of
interleaved pairs with `python -c pass` (benchmarks/newcomer.py's ratios: the speed issue's
target for one changed file is 12 with the daemon off).
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
sys.path.insert(0, str(ROOT / "benchmarks"))
LOAD = f"{os.getloadavg()[0]:.2f}"

from ts_project import generate as generate_project  # noqa: E402

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


def best_pair(fa, fb, reps: int):
    """(best of ``fa``, best of ``fb``), their runs interleaved: on a shared machine the load moves
    between repetitions, and alternating gives both the same moments."""
    a, b = [], []
    for _ in range(reps):
        a.append(best(fa, 1))
        b.append(best(fb, 1))
    return min(a), min(b)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--changed-files", type=int, default=200, help="files in the changed-file project (0: skip those rows)")
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

        parse_ts, parse_py = best_pair(lambda: [grammar.parse(p, s) for p, s in zip(ts_files, ts_src)],
                                       lambda: [ast.parse(s) for s in py_src], args.reps)
        ctx = Context(settings=Settings(root=d), tokenizer=lambda: None, is_enabled=lambda code: True)
        scan_ts, scan_py = best_pair(lambda: [ts_source.scan(p, s, p.name, ctx) for p, s in zip(ts_files, ts_src)],
                                     lambda: [python_source.scan(p, s, p.name, ctx) for p, s in zip(py_files, py_src)],
                                     args.reps)  # with ctx both follow imports, as `check` does

        tok = ROOT / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"
        env = dict(os.environ, PYTHONPATH=str(ROOT))

        def check(which: str):
            def run():
                subprocess.run([sys.executable, "-m", "promptlint", "check", "--no-cache", "--output-format", "concise",
                                "--tokenizer", str(tok), str(d / which)], cwd=d, env=env, capture_output=True, check=False)
            return run

        check_ts, check_py = best_pair(check("ts"), check("py"), args.reps)

        project = project_rows(d / "project", args.files, args.reps, ctx, tok, env)
        # --changed-files 0: no changed-file project, so none of its rows
        changed = changed_rows(d / "changed", args.changed_files, args.reps, env) if args.changed_files > 0 else []

    n = args.files
    print(f"load average at the start: {LOAD}; at the end: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    print(f"{n:,} files each, best of {args.reps}")
    print(f"{'':40}{'TypeScript':>12}{'Python':>12}{'difference':>12}")
    rows = [("flat: parse only", parse_ts, parse_py), ("flat: front end (no tokenizer)", scan_ts, scan_py),
            ("flat: promptlint check (process)", check_ts, check_py)] + project
    for label, a, b in rows:
        print(f"{label:40}{a:>11.2f}s{b:>11.2f}s{a - b:>+11.2f}s")
    if not changed:
        return
    print(f"\none agent module changed in a {args.changed_files}-file project, `check -- FILE`, median of {args.reps} "
          "pairs with `python -c pass`")
    print(f"{'':40}{'seconds':>12}{'ratio':>12}{'target':>12}")
    for label, row, target in changed:
        print(f"{label:40}{row['s']:>11.2f}s{row['ratio']:>12.2f}{target:>12}")


def project_rows(root: Path, n: int, reps: int, ctx, tok: Path, env):
    """The project shape: the walk's files through each front end, and `promptlint check`."""
    from promptlint.analyzers import python_source, ts_source
    from promptlint.analysis.kernel import Context
    from promptlint.project.config import Settings

    generate_project(root, n)
    ctx = Context(settings=Settings(root=root), tokenizer=lambda: None, is_enabled=lambda code: True)
    ts_files = [p for p in sorted((root / "ts").rglob("*.ts")) if ts_source.FILES.walk_takes(p)]
    py_files = [p for p in sorted((root / "py").rglob("*.py")) if python_source.FILES.walk_takes(p)]
    ts_src = [p.read_bytes() for p in ts_files]
    py_src = [p.read_text(encoding="utf-8") for p in py_files]

    def scan_ts():
        return [ts_source.scan(p, s, p.name, ctx) for p, s in zip(ts_files, ts_src)]

    def scan_py():
        return [python_source.scan(p, s, p.name, ctx) for p, s in zip(py_files, py_src)]

    first_ts, first_py = best_pair(scan_ts, scan_py, 1)  # the shared modules parsed here, then kept for the process
    again_ts, again_py = best_pair(scan_ts, scan_py, reps)

    def check(which: str):
        def run():
            subprocess.run([sys.executable, "-m", "promptlint", "check", "--no-cache", "--output-format", "concise",
                            "--tokenizer", str(tok), str(root / which)], cwd=root, env=env, capture_output=True, check=False)
        return run

    label = f"project ({len(ts_files)} of {n} taken)"
    return [(f"{label}: front end, first", first_ts, first_py), (f"{label}: front end, again", again_ts, again_py),
            (f"{label}: promptlint check",) + best_pair(check("ts"), check("py"), reps)]


def changed_rows(root: Path, n: int, reps: int, env):
    """One agent module edited before each `check -- FILE` in a project whose cache is warm."""
    import shutil

    from newcomer import Pairs

    generate_project(root, n)
    runtime = Path(tempfile.mkdtemp(prefix="plts"))  # short: a socket path holds 108 bytes
    os.chmod(runtime, 0o700)
    env = dict(env, XDG_RUNTIME_DIR=str(runtime), XDG_CACHE_HOME=str(root / "user-cache"), PROMPTLINT_DAEMON="0")
    pairs = Pairs(sys.executable, env, reps)
    out = []
    try:
        for lang in ("ts", "py"):
            base = root / lang
            changed = base / "agents" / f"agent0.{lang}"
            text, counter = changed.read_text(encoding="utf-8"), [0]
            comment = "//" if lang == "ts" else "#"

            def edit(changed=changed, text=text, counter=counter, comment=comment):
                counter[0] += 1
                changed.write_text(text + f"{comment} edit {counter[0]}\n", encoding="utf-8")

            subprocess.run([sys.executable, "-m", "promptlint", "check", "."], cwd=base, env=env, capture_output=True)
            check = [sys.executable, "-m", "promptlint", "check", "--", str(changed.relative_to(base))]
            name = "TypeScript" if lang == "ts" else "Python"
            out.append((f"{name}, daemon off", pairs.run(check, base, edit), "<= 12"))
            out.append((f"{name}, daemon on", pairs.run(check, base, edit, env={"PROMPTLINT_DAEMON": "1"}), ""))
            subprocess.run([sys.executable, "-m", "promptlint", "daemon", "stop"], cwd=base, env=env, capture_output=True)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    return out


if __name__ == "__main__":
    main()
