#!/usr/bin/env python3
"""Long fuzz run: promptlint must report or error cleanly on every generated template.

    PYTHONPATH=. python scripts/fuzz.py [--cases 10000] [--seed 7] [--timeout 0.5] [--suite operators]

Cases mix (1) mutations of real chat templates (tests/data/fuzz_seeds/: span deletion,
duplication, swaps, byte flips, truncation, token insertion), (2) random Jinja token
soup, (3) SSTI payloads spliced into real templates, (4) includes whose names resolve to
symlinks (to the environment, to a canary file outside the project, to a directory outside,
to /dev/zero, dangling, looping), FIFOs and plain files, from application and chat templates,
and (5) malformed LSP framing fed to the language server's reader
(``promptlint.editor.lsp_stdio.StrictStdin``). Template cases are rendered in both environments
through ``promptlint.driver.lint.lint`` (the CLI's pipeline, in-process). A case fails when
anything escapes as an exception (the CLI would print "internal error"), when an SSTI
splice is not refused, when a canary file appears, when a canary text (the outside file's
or an environment variable's) appears in any finding, or when the LSP reader forwards a
frame that is not one JSON object or answers with something that is not a JSON-RPC error.
Prints totals per outcome and E-code; exits 1 on any failure. Two more kinds: ``include`` (a fresh project whose
include resolves to a symlink out, a device, a FIFO, a loop, ...) and ``lsp`` (malformed
language-server framing), and ``filename`` (hostile file names — option syntax, bytes that are not
UTF-8 — beside a committed ``--config=evil.j2`` and a top-level device, FIFO or link out, run
through the CLI in every output format; the hazard must still be reported).

``--suite operators`` runs the operator commands' cases instead (malformed `audit` rows and KV
events, `diff`/`hashes` inputs, `tokenize --jsonl` lines): see ``scripts/fuzz_operators.py``.
"""

from __future__ import annotations

import argparse
import collections
import json
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


ENV_CANARY = "PROMPTLINT_FUZZ_ENV_CANARY"
TEXT_CANARY = "fuzz-outside-canary-5d1e"
INCLUDE_TARGETS = ["environ", "outside_file", "outside_dir", "dev_zero", "fifo", "dangling", "loop", "inside", "inside_link", "missing"]


def include_case(rng: random.Random, work: Path, n: int, payloads) -> Path:
    """A fresh project whose template includes a name resolving to a random kind of file."""
    import os

    proj = work / f"inc{n}"
    proj.mkdir()
    outside = work / "outside"
    target = rng.choice(INCLUDE_TARGETS)
    name = rng.choice(["part.j2", "env.txt", "sub/part.j2"])
    if target == "outside_dir":  # `etc -> <outside>`, included as etc/secret.txt
        name = "etc/secret.txt"
        os.symlink(outside, proj / "etc")
    link = proj / name
    link.parent.mkdir(parents=True, exist_ok=True)
    if target == "environ":
        os.symlink("/proc/self/environ", link)
    elif target == "outside_file":
        os.symlink(outside / "secret.txt", link)
    elif target == "dev_zero":
        os.symlink("/dev/zero", link)
    elif target == "fifo":
        os.mkfifo(link)
    elif target == "dangling":
        os.symlink(proj / "nowhere", link)
    elif target == "loop":
        os.symlink(link.name + ".b", link)
        os.symlink(link.name, link.parent / (link.name + ".b"))
    elif target == "inside":
        link.write_text("inside {{ x }}\n", encoding="utf-8")
    elif target == "inside_link":
        (proj / "real.j2").write_text("linked {{ x }}\n", encoding="utf-8")
        os.symlink(os.path.relpath(proj / "real.j2", link.parent), link)
    use = rng.choice([
        '{% include "NAME" %}',
        '{% set e %}{% include "NAME" %}{% endset %}{% include e %}',
        '{% set e %}{% include "NAME" %}{% endset %}{{ raise_exception(e) }}',
        '{% include ["NAME", "fallback.j2"] ignore missing %}',
        '{% extends "NAME" %}',
        '{% from "NAME" import m %}',
        '{% set e %}{% include "NAME" %}{% endset %}{{ {}[e] }}',
    ]).replace("NAME", name)
    if rng.random() < 0.5:  # a chat template: no loader at all
        text = use + "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
        path = proj / "chat.jinja"
    else:
        text = "Time {{ now }}\n" + use + "\nQ: {{ question }}\n"
        path = proj / "app.j2"
    if rng.random() < 0.2:
        text = rng.choice(payloads) + "\n" + text
    path.write_text(text, encoding="utf-8")
    return path


NAME_PARTS = [b"--config=evil", b"-x", b"--select=Q", b"--ignore=M", b"--", b"-", b"\xff", b"\x80\x81", b"\xc3",
              b" ", b"\n", b"\t", b"a", "\u00e9".encode(), "\U0001f600".encode(), b"x" * 120, b"\\", b"'", b'"', b"%", b":1:1"]
TOP_LEVEL = ["plain", "dev_zero", "fifo", "outside_file", "dangling"]


def filename_case(rng: random.Random, work: Path, n: int):
    """A fresh project whose template file has a hostile name (option syntax, bytes that are not
    UTF-8, control characters), beside a committed `--config=evil.j2` that ignores every rule and a
    top-level entry of a random kind (a device, a FIFO, a link out of the project). The CLI gets the
    names after `--`, as the pre-commit hook passes them. Returns (project, names, format)."""
    import os

    proj = work / f"name{n}"
    proj.mkdir()
    (proj / "promptlint.toml").write_text("", encoding="utf-8")
    (proj / "--config=evil.j2").write_text('ignore = ["M", "E", "PL"]\n', encoding="utf-8")
    raw = b"".join(rng.choice(NAME_PARTS) for _ in range(rng.randint(1, 4))).replace(b"/", b"_")[:200] + b".j2"
    name = os.fsdecode(raw)
    (proj / name).write_text("Current time: {{ now }}\n" + "Shared policy text. " * 40 + "\n{{ question }}\n", encoding="utf-8")
    other = rng.choice(TOP_LEVEL)
    extra = proj / "other.j2"
    if other == "dev_zero":
        os.symlink("/dev/zero", extra)
    elif other == "fifo":
        os.mkfifo(extra)
    elif other == "outside_file":
        os.symlink(work / "outside" / "secret.txt", extra)
    elif other == "dangling":
        os.symlink(proj / "nowhere", extra)
    else:
        extra.write_text("{{ question }}\n", encoding="utf-8")
    fmt = rng.choice(["full", "concise", "json", "json-lines", "github", "gitlab", "sarif"])
    return proj, ["--config=evil.j2", name, "other.j2"], fmt


def check_filename_case(proj: Path, names, fmt: str, canaries) -> str:
    """'' when the run reported the hazard in the hostile-named file and stayed well-formed."""
    import contextlib
    import io
    import os

    from promptlint.cli import main as cli_main

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(proj)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(["check", "--no-cache", "--output-format", fmt, "--", *names])
    finally:
        os.chdir(cwd)
    text = out.getvalue()
    if code != 1:
        return f"exit {code}, expected 1 (the M101 must be found): {err.getvalue()[-300:]}"
    if "internal error" in err.getvalue():
        return "internal error: " + err.getvalue()[-300:]
    if any(c in text or c in err.getvalue() for c in canaries):
        return "CANARY TEXT IN THE OUTPUT"
    if fmt in ("json", "json-lines", "gitlab", "sarif"):
        text.encode("utf-8")  # no lone surrogate
        docs = [json.loads(line) for line in text.splitlines()] if fmt == "json-lines" else [json.loads(text)]
        if "M101" not in json.dumps(docs):
            return "M101 missing from the JSON output"
    elif "M101" not in text:
        return "M101 missing from the output"
    return ""


LSP_HEADERS = [
    b"Content-Length: %d\r\n", b"Content-Length: abc\r\n", b"Content-Length: 99999999999\r\n", b"Content-Length: -1\r\n",
    b"Content-Length 12\r\n", b"Content-Type: application/vscode-jsonrpc\r\n", b"content-length:%d\n", b"\r\n",
    b"X" * 2000 + b"\r\n", b"Content-Length: \xff\xfe\r\n", b"Content-Length: %d\r\nContent-Length: 0\r\n",
]
LSP_BODIES = [
    b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}', b"{not json", b"[1, 2]", b"5", b"\xff\xfe",
    b'{"jsonrpc": "2.0", "method": "exit"}', b"[" * 100000 + b"]" * 100000, b"", b'"' + b"x" * 5000 + b'"',
]


def lsp_stream(rng: random.Random) -> bytes:
    out = []
    for _ in range(rng.randint(1, 6)):
        body = rng.choice(LSP_BODIES)
        if rng.random() < 0.3:  # a byte flip or truncation in the body
            i = rng.randrange(len(body) + 1)
            body = body[:i] + (bytes([rng.randrange(256)]) if rng.random() < 0.5 else b"") + body[i + 1 :]
        headers = b"".join(rng.choice(LSP_HEADERS) for _ in range(rng.randint(0, 3)))
        if b"%d" in headers:
            headers = headers.replace(b"%d", str(len(body) + rng.choice([0, 0, 0, -1, 1, 1000])).encode())
        out.append(headers + (b"\r\n" if rng.random() < 0.9 else b"") + body)
    return b"".join(out)


def check_lsp(data: bytes) -> str:
    """'' when the reader behaved; else what went wrong."""
    import io
    import json

    from promptlint.editor.lsp_stdio import StrictStdin

    out = io.BytesIO()
    reader = StrictStdin(io.BytesIO(data), out)
    for _ in range(1000):  # frames, as pygls reads them
        header = reader.readline()
        if not header:
            break
        if not header.startswith(b"Content-Length: "):
            return f"forwarded a bad header {header[:40]!r}"
        length = int(header.split(b":")[1])
        if reader.readline() != b"\r\n":
            return "forwarded a frame without the blank line"
        body = reader.read(length)
        if len(body) != length or not isinstance(json.loads(body), dict):
            return "forwarded a body that is not one JSON object"
    replies = out.getvalue()
    while replies:
        head, _, rest = replies.partition(b"\r\n\r\n")
        length = int(head.split(b":")[1])
        message = json.loads(rest[:length])
        if not (message.get("id", 0) is None and message["error"]["code"] in (-32700, -32600)):
            return f"answered {message!r}"
        replies = rest[length:]
    return ""


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
    import os

    if ENV_CANARY not in os.environ:  # so that /proc/self/environ of this very process holds it
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, **{ENV_CANARY: "env-canary-91b7c2"}))
    canaries = (os.environ[ENV_CANARY], TEXT_CANARY)

    from dataclasses import replace

    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint

    rng = random.Random(args.seed)
    seeds = {p.name: p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.jinja"))}
    payloads = [p.read_text(encoding="utf-8").splitlines()[2] for p in sorted(SSTI.glob("*.j2"))]
    work = Path(tempfile.mkdtemp(prefix="promptlint-fuzz-"))
    canary = work / "canary"
    (work / "outside").mkdir()
    (work / "outside" / "secret.txt").write_text(f"TOKEN={TEXT_CANARY}\n", encoding="utf-8")
    base = Settings(tokenizer=str(QWEN), render_timeout=args.timeout, root=work)
    totals = collections.Counter()
    codes = collections.Counter()
    failures = []
    slowest = (0.0, "")
    start = time.monotonic()
    for n in range(args.cases):
        if n and n % 1000 == 0:  # interim totals: a long run that is stopped still says what it saw
            print(f"[{n} cases, {time.monotonic() - start:.0f} s] crashes {totals['crash']}, failures {len(failures)}",
                  file=sys.stderr, flush=True)
        kind = rng.choices(["mutation", "soup", "ssti", "include", "lsp", "filename"], weights=[6, 3, 1, 2, 2, 1])[0]
        if kind == "filename":
            proj, names, fmt = filename_case(rng, work, n)
            try:
                problem = check_filename_case(proj, names, fmt, canaries)
            except Exception:
                failures.append((n, kind, fmt, traceback.format_exc(limit=-3), repr(names)))
                totals["crash"] += 1
                continue
            totals[kind] += 1
            totals["reported"] += 1
            if problem:
                failures.append((n, kind, fmt, problem, repr(names)))
            continue
        if kind == "lsp":
            data = lsp_stream(rng)
            try:
                problem = check_lsp(data)
            except Exception:
                failures.append((n, kind, "-", traceback.format_exc(limit=-3), repr(data[:600])))
                totals["crash"] += 1
                continue
            totals[kind] += 1
            totals["clean"] += 1
            if problem:
                failures.append((n, kind, "-", problem, repr(data[:600])))
            continue
        env = rng.choice(["jinja2", "transformers"])
        settings = replace(base, template_env=env)
        if kind == "include":  # a fresh project per case: its root is the template's directory
            path = include_case(rng, work, n, payloads)
            text = path.read_text(encoding="utf-8")
            settings = replace(settings, root=path.parent)
        else:
            if kind == "mutation":
                text = mutate(rng, rng.choice(list(seeds.values())))
            elif kind == "soup":
                text = soup(rng)
            else:
                # first line, so it always runs; the real template after it is intact
                text = rng.choice(payloads).replace("CANARY", str(canary)) + "\n" + rng.choice(list(seeds.values()))
            path = work / f"case{n % 50}.jinja"
        t0 = time.monotonic()
        try:
            if kind != "include":
                path.write_text(text, encoding="utf-8", errors="surrogatepass")
            report = lint([str(path)], settings)
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
        shown = json.dumps([f.to_dict(evidence=True) for f in report.errors + report.findings], ensure_ascii=False)
        if any(c in shown for c in canaries):
            failures.append((n, kind, env, "CANARY TEXT IN A FINDING", text))
        if canary.exists():
            failures.append((n, kind, env, "CANARY CREATED", text))
            canary.unlink()
    elapsed = time.monotonic() - start
    print(f"cases: {args.cases} in {elapsed:.0f} s (seed {args.seed}, render-timeout {args.timeout} s)")
    print("by kind: " + ", ".join(f"{k} {totals[k]}" for k in ("mutation", "soup", "ssti", "include", "lsp", "filename")))
    print(f"outcomes: clean {totals['clean']}, reported {totals['reported']}, crashes {totals['crash']}, "
          f"failures {len(failures)}")
    print("codes (cases reporting each): " + ", ".join(f"{c} {k}" for c, k in sorted(codes.items())))
    print(f"slowest case: {slowest[0]:.2f} s, {slowest[1]}")
    for n, kind, env, what, text in failures[:10]:
        print(f"\n--- failure: case {n} ({kind}, {env})\n{what}\n{text[:600]!r}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
