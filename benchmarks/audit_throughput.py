"""Throughput and peak memory of `promptlint audit` on a generated trace.

Generates N requests of ~TOKENS tokens as chained fingerprints (`block_fp`, 16-token
chunks): a shared system prompt per tenant (one of 50), a conversation history that grows
by turns, and a fresh user suffix -- so the index sees both heavy sharing and a long tail
of unique blocks. Then runs the audit (in this process) and reports requests/s, blocks/s
and peak RSS.

    python benchmarks/audit_throughput.py                 # 1,000,000 x ~2,000 tokens
    python benchmarks/audit_throughput.py -n 100000 --keep /tmp/trace.jsonl
    python benchmarks/audit_throughput.py -n 20000 --memory 250000,500000,1000000,4000000
    python benchmarks/audit_throughput.py -n 200000 --compare 2   # the fleet rows (derived, no token ids)

Each audit runs in a fresh process (peak RSS is that process's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def fp(prev: str, salt: int) -> str:
    return hashlib.blake2b(f"{prev}:{salt}".encode(), digest_size=8).hexdigest()


def generate(path: str, n: int, tokens: int, seed: int = 0) -> int:
    rnd = random.Random(seed)
    g = 16
    sys_chains = []
    for t in range(50):  # per-tenant system prompts of 25-50% of the prompt
        chain, prev = [], "0" * 16
        for i in range((tokens // 2 - rnd.randrange(tokens // 4)) // g):
            prev = fp(prev, t * 1_000_003 + i)
            chain.append(prev)
        sys_chains.append(chain)
    convs = {}
    total_blocks = 0
    with open(path, "w") as f:
        for i in range(n):
            tenant = rnd.randrange(50)
            conv = rnd.randrange(2000)
            base = convs.get(conv)
            if base is None or rnd.random() < 0.3:
                base = list(sys_chains[tenant])
            P = tokens + rnd.randrange(-200, 200)
            chain = base[: P // g]
            prev = chain[-1] if chain else "0" * 16
            while len(chain) < P // g:
                prev = fp(prev, rnd.getrandbits(48))
                chain.append(prev)
            convs[conv] = chain[: len(chain) - 4]
            total_blocks += len(chain)
            f.write(json.dumps({"request_id": f"r{i}", "arrival_ts": i * 0.01, "instance": f"i{conv % 8}",
                                "tenant": f"t{tenant}", "model_rev": "m", "engine": "vllm", "block_size": 16,
                                "prompt_tokens": P, "cached_tokens": rnd.randrange(0, P // 32) * 16,
                                "block_fp": chain, "fp_tokens": g}) + "\n")
    return total_blocks


def generate_derived(path: str, n: int, seed: int = 0) -> None:
    """Captured request/response pairs without token ids (the fleet test's generator, every row
    derived through the pinned Qwen2.5 chat template and tokenizer from tests/data)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import audit_fleet

    with open(path, "w") as f:
        for r in audit_fleet.rows(n, seed=seed, instances=8, tenants=20, derived_share=1.0, bad=False):
            f.write(json.dumps(r) + "\n")


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DERIVE = ["--tokenizer", os.path.join(ROOT, "tests/data/tokenizers/qwen2.5/tokenizer.json"),
          "--chat-template", os.path.join(ROOT, "tests/data/chat_templates/Qwen-Qwen2.5-7B-Instruct.jinja")]


def child(argv) -> int:
    """Run one audit in this (fresh) process; print seconds and peak RSS as JSON."""
    from promptlint.cli import main as cli

    t = time.time()
    with open(os.devnull, "w") as devnull:
        old, sys.stdout = sys.stdout, devnull
        try:
            rc = cli(["audit"] + argv)
        finally:
            sys.stdout = old
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # --workers processes (not Ray's)
    print(json.dumps({"rc": rc, "seconds": time.time() - t, "rss_mb": me.ru_maxrss / 1024,
                      "workers_rss_mb": kids.ru_maxrss / 1024, "cpu_s": me.ru_utime + me.ru_stime,
                      "workers_cpu_s": kids.ru_utime + kids.ru_stime, "load": os.getloadavg()[0]}))
    return 0


def measure(argv):
    import subprocess

    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--"] + argv, env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def compare(path: str, n: int, workers: int) -> None:
    """Rows of the fleet table: one process, --workers N, local Ray with N CPUs, same trace."""
    base = [path, "--output-format", "full"] + DERIVE  # the trace has rows logged late: default window
    rows = [("one process", ["--workers", "1"]), (f"--workers {workers}", ["--workers", str(workers)]),
            (f"Ray local ({workers} CPUs)", ["--ray", "--workers", str(workers)])]
    got = {}
    for label, extra in rows:
        m = got[label] = measure(base + extra)
        print(f"{label:<22} {m['seconds']:7.1f} s  {n / m['seconds']:7,.0f} req/s  driver RSS {m['rss_mb']:,.0f} MB"
              f"  CPU driver {m['cpu_s']:.0f} s + workers {m['workers_cpu_s']:.0f} s  load {m['load']:.1f}"
              f"  (rc {m['rc']})", flush=True)
    one, w, r = (got[label]["seconds"] for label, _ in rows)
    print(f"ratio --workers {workers} / one process = {w / one:.2f}; Ray / --workers {workers} = {r / w:.2f}")


def memory(path: str, n: int, horizons) -> None:
    """Peak RSS against --index-blocks on the block_fp trace (one process)."""
    for h in horizons:
        m = measure([path, "--output-format", "json", "--reorder-window", "0", "--workers", "1",
                     "--index-blocks", str(h)])
        print(f"--index-blocks {h:>10,}: {m['seconds']:7.1f} s  {n / m['seconds']:7,.0f} req/s  peak RSS "
              f"{m['rss_mb']:,.0f} MB", flush=True)


def main() -> int:
    if "--child" in sys.argv:
        return child(sys.argv[sys.argv.index("--") + 1:])
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1_000_000)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--keep", help="write the trace here (default: a temp file, deleted)")
    ap.add_argument("--index-blocks", type=int, help="default: the audit's default")
    ap.add_argument("--compare", type=int, metavar="WORKERS",
                    help="the fleet rows: derived trace (no token ids), one process vs --workers vs local Ray")
    ap.add_argument("--memory", metavar="H1,H2,...", help="peak RSS of one-process audits at these --index-blocks")
    args = ap.parse_args()
    path = args.keep or tempfile.mktemp(suffix=".jsonl")
    t0 = time.time()
    if not (args.keep and os.path.exists(args.keep)):
        if args.compare:
            generate_derived(path, args.n)
            print(f"generated {args.n} derived-row requests, {os.path.getsize(path) / 1e6:.0f} MB in "
                  f"{time.time() - t0:.0f}s", flush=True)
        else:
            blocks = generate(path, args.n, args.tokens)
            print(f"generated {args.n} requests, {blocks} blocks, {os.path.getsize(path) / 1e9:.2f} GB in "
                  f"{time.time() - t0:.0f}s", flush=True)
    try:
        if args.compare:
            compare(path, args.n, args.compare)
            return 0
        if args.memory:
            memory(path, args.n, [int(h) for h in args.memory.split(",")])
            return 0
        horizon = ["--index-blocks", str(args.index_blocks)] if args.index_blocks else []
        m = measure([path, "--output-format", "full", "--reorder-window", "0", "--workers", "1"] + horizon)
        dt = m["seconds"]
        print(f"audit rc={m['rc']}: {args.n} requests in {dt:.1f}s = {args.n / dt:,.0f} req/s, "
              f"{args.n * args.tokens / dt / 1e6:.1f} M tokens/s; peak RSS {m['rss_mb']:.0f} MB; "
              f"index horizon {args.index_blocks or 'default'}")
        return m["rc"]
    finally:
        if not args.keep:
            os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
