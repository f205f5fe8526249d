"""Throughput and peak memory of `promptlint audit` on a generated trace.

Generates N requests of ~TOKENS tokens as chained fingerprints (`block_fp`, 16-token
chunks): a shared system prompt per tenant (one of 50), a conversation history that grows
by turns, and a fresh user suffix -- so the index sees both heavy sharing and a long tail
of unique blocks. Then runs the audit (in this process) and reports requests/s, blocks/s
and peak RSS.

    python benchmarks/audit_throughput.py                 # 1,000,000 x ~2,000 tokens
    python benchmarks/audit_throughput.py -n 100000 --keep /tmp/trace.jsonl
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1_000_000)
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--keep", help="write the trace here (default: a temp file, deleted)")
    ap.add_argument("--index-blocks", type=int, default=4_000_000)
    args = ap.parse_args()
    path = args.keep or tempfile.mktemp(suffix=".jsonl")
    t0 = time.time()
    if not (args.keep and os.path.exists(args.keep)):
        blocks = generate(path, args.n, args.tokens)
        print(f"generated {args.n} requests, {blocks} blocks, {os.path.getsize(path) / 1e9:.2f} GB in {time.time() - t0:.0f}s",
              flush=True)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    from promptlint.cli import main as cli

    t1 = time.time()
    with open(os.devnull, "w") as devnull:
        old = sys.stdout
        sys.stdout = devnull
        try:
            rc = cli(["audit", path, "--output-format", "full", "--index-blocks", str(args.index_blocks),
                      "--reorder-window", "0"])
        finally:
            sys.stdout = old
    dt = time.time() - t1
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"audit rc={rc}: {args.n} requests in {dt:.1f}s = {args.n / dt:,.0f} req/s, "
          f"{args.n * args.tokens / dt / 1e6:.1f} M tokens/s; peak RSS {rss / 1024:.0f} MB "
          f"(before audit {rss0 / 1024:.0f} MB); index horizon {args.index_blocks} fingerprints")
    if not args.keep:
        os.unlink(path)
    return rc


if __name__ == "__main__":
    sys.exit(main())
