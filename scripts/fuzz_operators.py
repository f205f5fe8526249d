#!/usr/bin/env python3
"""Fuzz the operator commands: malformed `audit` rows and KV events, `diff`/`hashes` inputs
and `tokenize --jsonl` lines. Run through ``scripts/fuzz.py --suite operators``.

Each case starts from a real row or input (the fixtures in tests/data/audit, a native row with
token ids, fingerprints or checkpoints, a token-id array, a request body) and breaks it: a
field replaced by a hostile value (negative, >= 2^32 and >= 2^64 ids, floats, NaN, Infinity,
strings, nested lists, lone surrogates, deep nesting), a field deleted, or the line's bytes
corrupted (truncated, invalid UTF-8, raw line-separator characters, deep brackets). The CLI
runs in-process. A case fails when an exception escapes ("internal error"), a usage error is
not one line, `audit` exits 2 for a row problem, its JSON output does not parse, or its row
counts do not add up (read = used + skipped + failed).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import io
import json
import random
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
AUDIT = REPO / "tests" / "data" / "audit"
QWEN = REPO / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"

HOSTILE = [
    -1, 2**32, 2**32 - 1, 2**64, -(2**63), 1.5, 16.0, 0, float("nan"), float("inf"), float("-inf"), "abc", "", "12",
    "\ud800", "a\udc00b", [], {}, [[1]], [1, -2], [1.5], ["x"], None, True, False, {"a": [1, {"b": None}]},
    "x" * 5000, "0" * 16, "zz" * 8,
]


def deep(n: int) -> str:
    """A placeholder that :func:`dump` turns into n nested brackets (json.dumps cannot nest that deep)."""
    return f"__DEEP_{n}__"


def native_rows(rng: random.Random):
    ids = [rng.randrange(50) for _ in range(rng.randint(0, 70))]
    base = {"request_id": f"r{rng.randrange(10**6)}", "arrival_ts": rng.uniform(0, 100), "instance": "a",
            "tenant": rng.choice(["t1", "t2"]), "model_rev": "m", "engine": "vllm", "block_size": 16,
            "prompt_tokens": len(ids), "cached_tokens": 0}
    kind = rng.randrange(5)
    if kind == 0:
        base["token_ids"] = ids
    elif kind == 1:
        base.update(block_fp=["%016x" % rng.getrandbits(64) for _ in range(len(ids) // 16)], fp_tokens=16)
    elif kind == 2:
        base.update(checkpoints={str(n): "%016x" % rng.getrandbits(64) for n in (16, 64) if n <= len(ids)})
    elif kind == 3:
        base.update(token_ids=ids, template_inputs={"messages": [{"role": "user", "content": "q"}], "tools": [{"n": 1}]},
                    flags={"prompt_logprobs": rng.random() < 0.5})
    return base


def fixture_rows():
    rows = []
    for p in sorted(AUDIT.glob("*.jsonl")):
        rows += [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows


def paths(obj, prefix=()):
    """Every (container path) in a JSON value, for picking a field to break."""
    out = [prefix]
    if len(prefix) > 12:
        return out
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:8]):
            out += paths(v, prefix + (i,))
    return out


def break_value(rng: random.Random, obj):
    obj = copy.deepcopy(obj)
    for _ in range(rng.randint(1, 3)):
        ps = [p for p in paths(obj) if p]
        if not ps:
            break
        p = rng.choice(ps)
        parent = obj
        for k in p[:-1]:
            parent = parent[k]
        if rng.random() < 0.2 and isinstance(parent, dict):
            del parent[p[-1]]
        else:
            parent[p[-1]] = deep(rng.randint(50, 3000)) if rng.random() < 0.05 else copy.deepcopy(rng.choice(HOSTILE))
    return obj


def dump(obj, ascii_only: bool) -> bytes:
    """JSON bytes; a lone surrogate is written as the \\ud800 escape (ascii) or as the raw
    (invalid UTF-8) bytes a broken writer would leave."""
    text = json.dumps(obj, ensure_ascii=ascii_only)
    text = re.sub(r'"__DEEP_(\d+)__"', lambda m: "[" * int(m.group(1)) + "]" * int(m.group(1)), text)
    return text.encode("utf-8", "surrogatepass")


def corrupt_bytes(rng: random.Random, line: bytes) -> bytes:
    op = rng.randrange(6)
    i = rng.randrange(len(line) + 1)
    if op == 0:
        return line[:i]
    if op == 1:
        return line[:i] + bytes([rng.choice([0xFF, 0xC3, 0xED, 0x80, 0x00])]) + line[i:]
    if op == 2:  # a raw separator inside the line (valid only inside strings, which is the point)
        sep = rng.choice(["\u2028", "\u2029", "\u0085", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "\r"]).encode()
        j = line.find(b'"', i)
        return line[: j + 1] + sep + line[j + 1 :] if j >= 0 else line + sep
    if op == 3:
        return b"[" * rng.randint(500, 200_000) + line
    if op == 4:
        return b"\xef\xbb\xbf" + line
    return line.replace(b"1", b"NaN", 1)


def audit_case(rng: random.Random, work: Path, rows_pool):
    lines = []
    for _ in range(rng.randint(1, 6)):
        row = native_rows(rng) if rng.random() < 0.5 else copy.deepcopy(rng.choice(rows_pool))
        if rng.random() < 0.7:
            row = break_value(rng, row)
        line = dump(row, rng.random() < 0.5)
        if rng.random() < 0.25:
            line = corrupt_bytes(rng, line)
        lines.append(line)
    trace = work / "trace.jsonl"
    trace.write_bytes(b"\n".join(lines) + rng.choice([b"\n", b"", b"\r\n"]))
    fmt = rng.choice(["json", "full", "csv"])
    argv = ["audit", str(trace), "--output-format", fmt]
    if rng.random() < 0.2:
        ev = {"instance": "a", "seq": 1, "ts": 0.5, "events": [
            {"type": "BlockStored", "block_hashes": [1, 2], "parent_block_hash": None, "token_ids": list(range(32)),
             "block_size": 16}, {"type": "BlockRemoved", "block_hashes": [1]}]}
        if rng.random() < 0.7:
            ev = break_value(rng, ev)
        (work / "events.jsonl").write_bytes(dump(ev, True) + b"\n")
        argv += ["--kv-events", str(work / "events.jsonl")]
    if rng.random() < 0.2:
        argv += ["--capacity-blocks", str(rng.randint(1, 8)), "--capacity-curve", "16"]
    if rng.random() < 0.1:
        argv += ["--engine", rng.choice(["vllm", "openai", "anthropic", "llamacpp"])]
    return argv, fmt, rows_expected(lines)


def rows_expected(lines) -> int:
    """The fewest rows `audit` must account for: one per line of a JSONL trace; a llama.cpp
    server log makes rows per task (none required), `/slots` snapshots at least one."""
    from promptlint.audit import llamacpp

    nonblank = [ln for ln in lines if ln.strip()]
    kind = llamacpp.sniff(list(enumerate(nonblank[: llamacpp.SNIFF_LINES], 1)))
    if kind == "log":
        return 0
    if kind == "slots":
        return 1 if nonblank else 0
    return len(nonblank)


def ids_input(rng: random.Random) -> bytes:
    ids = [rng.randrange(151_000) for _ in range(rng.randint(0, 40))]
    kind = rng.randrange(5)
    if kind == 0:
        value = break_value(rng, ids) if ids else copy.deepcopy(rng.choice(HOSTILE))
    elif kind == 1:
        value = break_value(rng, {"prompt": ids if rng.random() < 0.5 else "hello world"})
    elif kind == 2:
        value = break_value(rng, {"messages": [{"role": "user", "content": "hi"}], "tools": []})
    elif kind == 3:
        value = deep(rng.randint(10, 5000))
    else:
        value = ids + [rng.choice([151_665, 10**6, 2**32, 2**64])]
    data = dump(value, rng.random() < 0.5)
    return corrupt_bytes(rng, data) if rng.random() < 0.2 else data


def diff_case(rng: random.Random, work: Path):
    a, b = work / "a.json", work / "b.json"
    a.write_bytes(ids_input(rng))
    b.write_bytes(ids_input(rng) if rng.random() < 0.7 else a.read_bytes())
    extra = ["--tokenizer", str(QWEN)] if rng.random() < 0.8 else []
    if rng.random() < 0.3:
        extra += ["--input-format", rng.choice(["auto", "text", "ids", "request"])]
    if rng.random() < 0.3:
        extra += ["--chat-template", str(REPO / "tests" / "data" / "chat_templates" / "Qwen-Qwen2.5-7B-Instruct.jinja")]
    if rng.random() < 0.5:
        return ["diff", str(a), str(b), "--engine", rng.choice(["vllm", "sglang", "llamacpp", "openai", "anthropic",
                                                                 "gemini"]), "--output-format", "json", *extra]
    return ["hashes", str(a), *extra]


def tokenize_case(rng: random.Random, work: Path):
    lines = []
    for _ in range(rng.randint(1, 4)):
        value = {"text": rng.choice(["hello", "a\u2028b", "x\x1cy", "é\u0085", "", "<|im_start|>"])}
        if rng.random() < 0.6:
            value = break_value(rng, value)
        line = dump(value, rng.random() < 0.5)
        if rng.random() < 0.3:
            line = corrupt_bytes(rng, line)
        lines.append(line)
    p = work / "in.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    return ["tokenize", "--jsonl", str(p), "--tokenizer", str(QWEN),
            "--engine", rng.choice(["vllm", "llamacpp"])]


def run_cli(argv):
    from promptlint.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


def check(argv, code, out, err, fmt=None, lines=0):
    """The failure, or None when the command answered cleanly."""
    if code not in (0, 1, 2):
        return f"exit {code}"
    if "internal error" in err or "Traceback" in err:
        return err.strip().splitlines()[-1]
    if code == 2 and len([ln for ln in err.strip().splitlines() if not ln.startswith("promptlint: note:")]) != 1:
        return f"usage error not on one line: {err!r}"
    if argv[0] != "audit":
        return None
    if code == 2 and "--kv-events" not in argv:
        return f"a row problem stopped the audit: {err.strip()}"
    if code != 2 and fmt == "json":
        try:
            rows = json.loads(out)["summary"]["rows"]
        except (ValueError, KeyError) as e:
            return f"JSON output unreadable: {e}"
        if rows["read"] != rows["used"] + rows["skipped"] + rows["failed"] or rows["read"] < lines:
            return f"row counts do not add up: {rows} for {lines} lines"
        if (code == 1) != (rows["failed"] > 0):
            return f"exit {code} with {rows['failed']} failed rows"
    return None


def run(cases: int, seed: int) -> int:
    rng = random.Random(seed)
    pool = fixture_rows()
    work = Path(tempfile.mkdtemp(prefix="promptlint-fuzz-ops-"))
    totals = collections.Counter()
    failures = []
    start = time.monotonic()
    for n in range(cases):
        kind = rng.choices(["audit", "diff", "tokenize"], weights=[6, 3, 1])[0]
        fmt, lines = None, 0
        try:
            if kind == "audit":
                argv, fmt, lines = audit_case(rng, work, pool)
            elif kind == "diff":
                argv = diff_case(rng, work)
            else:
                argv = tokenize_case(rng, work)
            code, out, err = run_cli(argv)
        except Exception:
            failures.append((n, kind, traceback.format_exc(limit=-3)))
            totals["crash"] += 1
            continue
        totals[f"{kind} exit {code}"] += 1
        problem = check(argv, code, out, err, fmt, lines)
        if problem:
            failures.append((n, kind, f"{' '.join(argv)}\n{problem}"))
    elapsed = time.monotonic() - start
    print(f"operator cases: {cases} in {elapsed:.0f} s (seed {seed})")
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())))
    print(f"failures: {len(failures)}")
    for n, kind, what in failures[:10]:
        print(f"\n--- failure: case {n} ({kind})\n{what[:1500]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    sys.exit(run(a.cases, a.seed))
