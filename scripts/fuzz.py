#!/usr/bin/env python3
"""Long fuzz run: promptlint must report or error cleanly on every generated template.

    PYTHONPATH=. python scripts/fuzz.py [--cases 10000] [--seed 7] [--timeout 0.5] [--suite operators]

Cases mix (1) mutations of real chat templates (tests/data/fuzz_seeds/: span deletion,
duplication, swaps, byte flips, truncation, token insertion), (2) random Jinja token
soup and (3) SSTI payloads spliced into real templates, each rendered in both
environments through ``promptlint.lint.lint`` (the CLI's pipeline, in-process). A case
fails when anything escapes as an exception (the CLI would print "internal error"),
when an SSTI splice is not refused, or when a canary file appears. Prints totals per
outcome and E-code; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SEEDS = REPO / "tests" / "data" / "fuzz_seeds"
SSTI = REPO / "tests" / "data" / "ssti"
QWEN = REPO / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"

SOUP = [
    "{{", "}}", "{%", "%}", "{#", "#}", "{%-", "-%}", "{{-", "-}}", " ", "\n", "x", "messages", "message", "m", "ns",
    "loop", "self", "for", "in", "endfor", "if", "else", "elif", "endif", "set", "endset", "macro", "endmacro",
    "call", "endcall", "include", "import", "from", "filter", "endfilter", "raw", "endraw", "generation",
    "endgeneration", "namespace(n=0)", "range(5)", "range(100000)", "(", ")", "[", "]", ",", ".", "|", ":", "~",
    "*", "**", "%", "+", "=", "==", "'a'", '"b"', "1", "0", "-1", "99999", "__class__", "__mro__", "__globals__",
    "cycler", "joiner", "lipsum", "attr", "format", "join", "center", "tojson", "tojson(indent=2)", "items()",
    "content", "role", "tools", "raise_exception('x')", "strftime_now('%d %b %Y')", "None", "true", "false",
    "not", "and", "or", "is", "defined", "string", "mapping", "length", "trim", "é", "\t", "\x00", "\\", "'",
]


def mutate(rng: random.Random, text: str) -> str:
    ops = rng.randint(1, 4)
    for _ in range(ops):
        n = len(text)
        op = rng.randrange(7)
        i, j = sorted((rng.randrange(n + 1), rng.randrange(n + 1)))
        if op == 0:  # delete a span
            text = text[:i] + text[j : j + 0] + text[j:] if j - i > 200 else text[:i] + text[j:]
        elif op == 1:  # duplicate a span
            text = text[:j] + text[i:j] + text[j:]
        elif op == 2:  # insert soup tokens
            text = text[:i] + "".join(rng.choice(SOUP) for _ in range(rng.randint(1, 6))) + text[i:]
        elif op == 3:  # swap two spans
            k = rng.randrange(j, n + 1)
            text = text[:i] + text[j:k] + text[i:j] + text[k:]
        elif op == 4 and n:  # flip a character
            text = text[:i] + chr(rng.choice([0x7B, 0x7D, 0x25, 0x23, 0x2D, 0x20, 0x0A, rng.randrange(32, 0x2FFF)])) + text[i + 1 :]
        elif op == 5:  # truncate
            text = text[:i]
        else:  # wrap a span in a loop/if/macro
            wrap = rng.choice(
                [("{% for _ in range(3) %}", "{% endfor %}"), ("{% if messages %}", "{% endif %}"),
                 ("{% macro q() %}", "{% endmacro %}{{ q() }}"), ("{% set s %}", "{% endset %}{{ s }}")]
            )
            text = text[:i] + wrap[0] + text[i:j] + wrap[1] + text[j:]
    return text


def soup(rng: random.Random) -> str:
    return "".join(rng.choice(SOUP) for _ in range(rng.randint(1, 60)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=0.5, help="render-timeout per render (s)")
    ap.add_argument("--suite", choices=("templates", "operators"), default="templates",
                    help="templates (default) or operators: malformed audit rows, diff/hashes inputs, "
                    "tokenize --jsonl lines (scripts/fuzz_operators.py)")
    args = ap.parse_args()
    if args.suite == "operators":
        from fuzz_operators import run

        return run(args.cases, args.seed)

    from dataclasses import replace

    from promptlint.config import Settings
    from promptlint.lint import lint

    rng = random.Random(args.seed)
    seeds = {p.name: p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.jinja"))}
    payloads = [p.read_text(encoding="utf-8").splitlines()[2] for p in sorted(SSTI.glob("*.j2"))]
    work = Path(tempfile.mkdtemp(prefix="promptlint-fuzz-"))
    canary = work / "canary"
    base = Settings(tokenizer=str(QWEN), render_timeout=args.timeout, root=work)
    totals = collections.Counter()
    codes = collections.Counter()
    failures = []
    slowest = (0.0, "")
    start = time.monotonic()
    for n in range(args.cases):
        kind = rng.choices(["mutation", "soup", "ssti"], weights=[6, 3, 1])[0]
        if kind == "mutation":
            text = mutate(rng, rng.choice(list(seeds.values())))
        elif kind == "soup":
            text = soup(rng)
        else:
            # first line, so it always runs; the real template after it is intact
            text = rng.choice(payloads).replace("CANARY", str(canary)) + "\n" + rng.choice(list(seeds.values()))
        env = rng.choice(["jinja2", "transformers"])
        path = work / f"case{n % 50}.jinja"
        t0 = time.monotonic()
        try:
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            report = lint([str(path)], replace(base, template_env=env))
        except Exception:
            failures.append((n, kind, env, traceback.format_exc(limit=-3), text))
            totals["crash"] += 1
            continue
        dt = time.monotonic() - t0
        if dt > slowest[0]:
            slowest = (dt, f"case {n} ({kind}, {env})")
        found = {f.code for f in report.errors + report.findings}
        codes.update(found)
        totals[kind] += 1
        totals["clean" if not found else "reported"] += 1
        if kind == "ssti" and "E007" not in found and not (env == "jinja2" and found & {"E004"}):
            # the payload is the first line: it must be refused (in the jinja2 env the
            # transformers-only globals are undefined variables, E004, which also stops it)
            failures.append((n, kind, env, f"SSTI splice not refused: {sorted(found)}", text))
        if canary.exists():
            failures.append((n, kind, env, "CANARY CREATED", text))
            canary.unlink()
    elapsed = time.monotonic() - start
    print(f"cases: {args.cases} in {elapsed:.0f} s (seed {args.seed}, render-timeout {args.timeout} s)")
    print("by kind: " + ", ".join(f"{k} {totals[k]}" for k in ("mutation", "soup", "ssti")))
    print(f"outcomes: clean {totals['clean']}, reported {totals['reported']}, crashes {totals['crash']}, "
          f"failures {len(failures)}")
    print("codes (cases reporting each): " + ", ".join(f"{c} {k}" for c, k in sorted(codes.items())))
    print(f"slowest case: {slowest[0]:.2f} s, {slowest[1]}")
    for n, kind, env, what, text in failures[:10]:
        print(f"\n--- failure: case {n} ({kind}, {env})\n{what}\n{text[:600]!r}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
