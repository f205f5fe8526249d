"""How long a re-check takes after one file of a multi-module Python agent project changes, in one
process (the tokenizer parsed once, as the daemon and the LSP hold it):

    python benchmarks/python_project.py [--modules 40] [--reps 3]

The project is laid out as agent code is: prompt modules (a system message with the time, returned to a
caller), agent classes that import them, client modules that make the call. A client's analysis reads the
modules it imports (pysource.project); a change to a prompt module re-analyses it and its importers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

POLICY = json.dumps("You are the support agent of Nordwind Outdoor. Never invent order numbers. " * 30)


def make_project(root: Path, modules: int) -> None:
    """modules // 4 prompt modules and as many agent classes; the rest are clients."""
    app = root / "app"
    app.mkdir(parents=True)
    (app / "__init__.py").write_text("")
    n = max(1, modules // 4)
    for i in range(n):
        (app / f"prompts_{i}.py").write_text(
            f"from datetime import datetime\n\nPOLICY_{i} = {POLICY}\n\n\n"
            f"def build_system_{i}(user):\n"
            f"    return [{{\"role\": \"system\", \"content\": f\"Time: {{datetime.now()}}\\n\" + POLICY_{i}}}]\n")
        (app / f"agent_{i}.py").write_text(
            f"from app.prompts_{i} import build_system_{i}\n\n\nclass Agent{i}:\n"
            f"    def __init__(self, client, model=\"gpt-4o\"):\n        self.client = client\n        self.model = model\n\n"
            f"    def messages(self, question):\n        msgs = build_system_{i}(\"u\")\n"
            f"        msgs.append({{\"role\": \"user\", \"content\": question}})\n        return msgs\n")
    for j in range(modules - 2 * n):
        i = j % n
        (app / f"client_{j}.py").write_text(
            f"from openai import OpenAI\n\nfrom app.agent_{i} import Agent{i}\n\nclient = OpenAI()\nagent = Agent{i}(client)\n\n\n"
            f"def answer(question):\n    return client.chat.completions.create(model=agent.model, messages=agent.messages(question))\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", type=int, default=40)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()

    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint

    tokenizer = Path(__file__).resolve().parent.parent / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root, args.modules)
        os.chdir(root)

        def check() -> float:
            start = time.perf_counter()
            lint(["."], Settings(tokenizer=str(tokenizer), root=root))
            return time.perf_counter() - start

        print(f"cold: {check():.3f} s   warm: {check():.3f} s")
        for name in ("app/client_3.py", "app/prompts_1.py"):
            times = []
            for k in range(args.reps):
                with open(name, "a", encoding="utf-8") as fh:
                    fh.write(f"# change {k}\n")
                times.append(check())
            print(f"{name} changed: median {statistics.median(times):.3f} s, max {max(times):.3f} s ({args.reps} reps)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
