"""How much `pytest --promptlint-conversations` adds to a test suite, and how fast
`promptlint conversation` reads a large capture.

    python benchmarks/conversations.py            # 1,000 requests through the plugin; 100,000 read
    python benchmarks/conversations.py --quick    # 200 and 10,000 (a smoke test)

Rows, each a fresh subprocess (wall and CPU time of the process and its children, median of the
repetitions). Plugin off and on run as interleaved pairs (off, on, off, on, ...), so a change of
the machine's load hits both sides of a pair alike; the plugin's cost is the MEDIAN OF THE PER-PAIR
RATIOS on/off (wall, and CPU), with each pair's ratio printed so the spread shows (one untimed
"plugin on" run first writes the bytecode, under the temporary directory, as an install has it):

  plugin off   a generated suite: 10 tests, each a conversation of N/10 turns through the real
               openai SDK over httpx2.MockTransport (pytest, the plugin loaded but not asked for)
  plugin on    the same with --promptlint-conversations (recording, and the analysis at the end)
  read         `promptlint conversation` on a JSON Lines capture of M requests (conversations of
               10 turns, a system prompt of ~500 tokens), the embedded tokenizer

Only the standard library here.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SUITE = '''
import httpx2, openai, pytest
REPLY = {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Sure."}}]}

@pytest.mark.parametrize("n", range(10))
def test_conversation(n):
    client = openai.OpenAI(api_key="k", max_retries=0, http_client=httpx2.Client(
        transport=httpx2.MockTransport(lambda r: httpx2.Response(200, json=REPLY))))
    history = [{"role": "system", "content": "Be kind. " * 200}]
    for i in range(TURNS):
        history.append({"role": "user", "content": f"question {i}"})
        answer = client.chat.completions.create(model="gpt-4.1", messages=history).choices[0].message.content
        history.append({"role": "assistant", "content": answer})
'''


def timed(argv, cwd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[:4]} failed: {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median(rows):
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=5, help="pairs (plugin off/on) and read repetitions")
    ap.add_argument("--rows", choices=("all", "plugin", "read"), default="all")
    args = ap.parse_args()
    requests, captured = (200, 10_000) if args.quick else (1_000, 100_000)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # bytecode as an installed package has it (pip compiles it): written once, by an untimed
        # warm-up run, under the temporary directory (the repository is left as it is). Otherwise,
        # under PYTHONDONTWRITEBYTECODE, every "plugin on" run would compile the analysis' modules
        # (some 0.1-0.3 s) that the "plugin off" run never imports.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "bytecode")
        (work / "test_suite.py").write_text(SUITE.replace("TURNS", str(requests // 10)), encoding="utf-8")
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "promptlint.conversation.plugin"]
        load_before = os.getloadavg()
        if args.rows in ("all", "plugin"):
            timed(pytest + ["--promptlint-conversations", "test_suite.py"], work, env)  # the warm-up: not counted
            # interleaved pairs (off, on, off, on, ...): on a shared machine a load change hits both rows alike
            pairs = [(timed(pytest + ["test_suite.py"], work, env),
                      timed(pytest + ["--promptlint-conversations", "test_suite.py"], work, env)) for _ in range(args.reps)]
            off, on = median([p[0] for p in pairs]), median([p[1] for p in pairs])
            wall = [p[1][0] / p[0][0] for p in pairs]  # on/off, pair by pair
            cpu = [p[1][1] / p[0][1] for p in pairs]
            print(f"{'row':<14}{'wall s':>10}{'cpu s':>10}")
            print(f"{'plugin off':<14}{off[0]:>10.2f}{off[1]:>10.2f}   {requests:,} requests (median of {len(pairs)})")
            print(f"{'plugin on':<14}{on[0]:>10.2f}{on[1]:>10.2f}   on/off, median of {len(pairs)} pair ratios: "
                  f"wall {statistics.median(wall):.3f}, cpu {statistics.median(cpu):.3f}")
            print(f"per pair on/off: wall {', '.join(f'{r:.3f}' for r in wall)}; cpu {', '.join(f'{r:.3f}' for r in cpu)}")
        if args.rows in ("all", "read"):
            capture = work / "capture.jsonl"
            system = "You are the support bot. " + "Rule: be kind and precise. " * 40
            with capture.open("w", encoding="utf-8") as f:
                for c in range(captured // 10):
                    history = [{"role": "system", "content": system}]
                    for t in range(10):
                        history.append({"role": "user", "content": f"question {t} about order {c}"})
                        f.write(json.dumps({"conversation": f"c{c}", "model": "gpt-4.1", "messages": history}) + "\n")
                        history = history + [{"role": "assistant", "content": f"answer {t}"}]
            read = median([timed([sys.executable, "-m", "promptlint", "conversation", str(capture)], work, env)
                           for _ in range(max(1, args.reps - 1))])
            print(f"{'read':<14}{read[0]:>10.2f}{read[1]:>10.2f}   {captured:,} requests ({os.cpu_count()} CPUs)")
        load_after = os.getloadavg()
    print(f"load average (1 min) before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
