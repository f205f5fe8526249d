"""The newcomer's app (issue 33): what a person trying promptlint on a small app sees, as ratios
of interleaved pairs in one run.

The app: 5 application templates and 2 Python modules that build prompts with the OpenAI SDK, no
tokenizer configured (the embedded cl100k_base), a git repository with a .pre-commit-config.yaml.
Each row runs, per repetition, `python -c pass` and then the command (one pair, same moment of
the machine's load), and reports the median seconds and the **median of the per-pair ratios**:
on a shared machine the load moves between repetitions, and a ratio taken within a pair moves
with it. One template is edited before each timed command (a cache miss for that file, as after
an edit); `check -- FILE` lints that file, as pre-commit passes it.

Rows (n = newcomer):
  n_off          `promptlint check -- changed.j2`, daemon off
  n_off_slow     the same with the fast tokenizer load off (PROMPTLINT_FAST_TOKENIZER=0): before issue 33
  n_off_nopyc    the same, fast load on, with no bytecode cache (PYTHONDONTWRITEBYTECODE=1 and a fresh
                 PYTHONPYCACHEPREFIX): what a source checkout in an environment that never writes .pyc files pays
  n_pinned       daemon off, a pinned 151k-vocabulary tokenizer (Qwen2.5) instead of the embedded one
  n_daemon       daemon on (PROMPTLINT_DAEMON=1; the default for a person at a terminal)
  pc_daemon      `pre-commit run --files changed.j2` with promptlint as the only hook, daemon on (the
                 default under pre-commit), paired with the same `pre-commit run` of a no-op local hook
  pc_off         the same with the daemon off (PROMPTLINT_DAEMON=0)
  lsp_*          `promptlint server`: seconds from its start to the initialize reply, and from that
                 reply to the first diagnostics of the opened template (a target in seconds)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

BUILDER = '''\
from openai import OpenAI

client = OpenAI()


def answer(question: str, customer: str, now: str) -> str:
    response = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": f"Today is {now}. You are the Acme shop assistant. Be brief and polite."},
            {"role": "user", "content": f"{customer} asks: {question}"},
        ],
    )
    return response.choices[0].message.content
'''

HOOK = """\
repos:
- repo: local
  hooks:
  - id: {id}
    name: {id}
    entry: {entry}
    language: system
    types: [text]
    files: '(\\.(j2|jinja|jinja2|prompt|py)|(^|/)(tokenizer_config\\.json|chat_template\\.jinja))$'
    require_serial: true
"""


def make_app(root: Path, app_template: Callable[[int, Path], None]) -> Path:
    """root/prompts/*.j2 (5), root/app/*.py (2), a git repository; returns the template edited per run."""
    prompts = root / "prompts"
    prompts.mkdir(parents=True)
    for i in range(5):
        app_template(i, prompts)
    (root / "app").mkdir()
    for name in ("support.py", "returns.py"):
        (root / "app" / name).write_text(BUILDER, encoding="utf-8")
    (root / "README.md").write_text("A small app.\n", encoding="utf-8")
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@example.invalid", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "app"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return prompts / "app_0001.j2"


class Pairs:
    """Interleaved pairs: ``python -c pass`` (or another yardstick), then the command."""

    def __init__(self, python: str, env: Dict[str, str], reps: int):
        self.python, self.env, self.reps = python, env, reps

    def _once(self, argv: Sequence[str], cwd: Path, env: Dict[str, str]) -> float:
        import time

        t0 = time.perf_counter()
        r = subprocess.run(list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t0
        if r.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(argv)} failed:\n{r.stderr.decode('utf-8', 'replace')[-2000:]}")
        return dt

    def run(self, argv: Sequence[str], cwd: Path, before=None, env: Optional[Dict[str, str]] = None,
            yardstick: Optional[Sequence[str]] = None) -> Dict[str, float]:
        """Median seconds of the command and of the yardstick, and the median per-pair ratio; one
        untimed warm-up first (bytecode, the OS file cache, the tokenizer's compact form)."""
        full = dict(self.env, **(env or {}))
        for key in [k for k, v in full.items() if v is None]:
            del full[key]
        stick = list(yardstick or [self.python, "-c", "pass"])
        if before:
            before()
        self._once(argv, cwd, full)
        ours, theirs = [], []
        for _ in range(self.reps):
            theirs.append(self._once(stick, cwd, full if yardstick else self.env))
            if before:
                before()
            ours.append(self._once(argv, cwd, full))
        return {"s": statistics.median(ours), "yard": statistics.median(theirs),
                "ratio": statistics.median(a / b for a, b in zip(ours, theirs))}


def rows(python: str, base_env: Dict[str, str], work: Path, reps: int, qwen: Path,
         app_template: Callable[[int, Path], None]) -> Dict[str, Dict[str, float]]:
    root = work / "newcomer"
    changed = make_app(root, app_template)
    text = changed.read_text(encoding="utf-8")
    counter = [0]

    def edit():
        counter[0] += 1
        changed.write_text(text + f"Edit number {counter[0]}.\n", encoding="utf-8")

    runtime = Path(tempfile.mkdtemp(prefix="pln"))  # short: a socket path holds 108 bytes
    os.chmod(runtime, 0o700)
    env = dict(base_env, XDG_RUNTIME_DIR=str(runtime), XDG_CACHE_HOME=str(work / "user-cache"),
               XDG_CONFIG_HOME=str(work / "user-config"), PROMPTLINT_DAEMON="0")
    pairs = Pairs(python, env, reps)
    check = [python, "-m", "promptlint", "check", "--", str(changed.relative_to(root))]
    out: Dict[str, Dict[str, float]] = _Live()
    try:
        out["n_off"] = pairs.run(check, root, edit)
        out["n_off_slow"] = pairs.run(check, root, edit, env={"PROMPTLINT_FAST_TOKENIZER": "0"})
        nopyc = Path(tempfile.mkdtemp(prefix="plnopyc"))
        out["n_off_nopyc"] = pairs.run(check, root, edit, env={"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(nopyc)})
        shutil.rmtree(nopyc, ignore_errors=True)
        out["n_daemon"] = pairs.run(check, root, edit, env={"PROMPTLINT_DAEMON": "1"})
        out.update(_pre_commit(pairs, python, root, changed, edit))
        out.update(lsp_rows(python, env, root, changed, reps))
        pinned = root / "promptlint.toml"
        shutil.copy(qwen, root / "tokenizer.json")
        import hashlib

        pin = hashlib.sha256((root / "tokenizer.json").read_bytes()).hexdigest()
        pinned.write_text(f'tokenizer = "tokenizer.json"\ntokenizer-sha256 = "{pin}"\n', encoding="utf-8")
        out["n_pinned"] = pairs.run(check, root, edit)
        pinned.unlink()
    finally:
        subprocess.run([python, "-m", "promptlint", "daemon", "stop"], cwd=root, env=env, capture_output=True)
        changed.write_text(text, encoding="utf-8")
        shutil.rmtree(runtime, ignore_errors=True)
    return out


def _pre_commit(pairs: Pairs, python: str, root: Path, changed: Path, edit) -> Dict[str, Dict[str, float]]:
    """pre-commit with promptlint as the only hook against pre-commit with a no-op hook."""
    r = subprocess.run([python, "-c", "import pre_commit"], capture_output=True)
    if r.returncode != 0:
        return {}
    configs = {"promptlint": f"{python} -m promptlint check --force-exclude --", "noop": "true"}
    for name, entry in configs.items():
        (root / f".pc-{name}.yaml").write_text(HOOK.format(id=name, entry=entry), encoding="utf-8")
    home = root.parent / "pre-commit-home"

    def run(name: str) -> List[str]:
        return [python, "-m", "pre_commit", "run", "-c", f".pc-{name}.yaml", "--files", str(changed.relative_to(root))]

    env = {"PRE_COMMIT_HOME": str(home)}
    return {
        "pc_daemon": pairs.run(run("promptlint"), root, edit, env=dict(env, PROMPTLINT_DAEMON=None), yardstick=run("noop")),
        "pc_off": pairs.run(run("promptlint"), root, edit, env=env, yardstick=run("noop")),
    }


# Starts `promptlint server`, sends initialize, then didOpen of one template; prints the seconds
# from the start to the initialize reply and from that reply to the first publishDiagnostics.
LSP_PROBE = r"""
import json, subprocess, sys, time
from pathlib import Path
path = Path(sys.argv[2]).resolve()
t0 = time.perf_counter()
p = subprocess.Popen([sys.argv[1], "-m", "promptlint", "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
def send(m):
    body = json.dumps(m).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    p.stdin.flush()
def read():
    n = 0
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("the server exited")
        if not line.strip():
            break
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    return json.loads(p.stdout.read(n))
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": path.parent.parent.as_uri(),
      "capabilities": {}}})
while read().get("id") != 1:
    pass
t1 = time.perf_counter()
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
      "uri": path.as_uri(), "languageId": "jinja", "version": 1, "text": path.read_text(encoding="utf-8")}}})
while True:
    m = read()
    if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == path.as_uri():
        break
t2 = time.perf_counter()
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
send({"jsonrpc": "2.0", "method": "exit", "params": None})
p.wait(timeout=30)
print(t1 - t0, t2 - t1)
"""


def lsp_rows(python: str, env: Dict[str, str], root: Path, changed: Path, reps: int) -> Dict[str, Dict[str, float]]:
    """The language server on the app: initialize, then the first diagnostics of an opened template."""
    r = subprocess.run([python, "-c", "import pygls"], capture_output=True, env=env)
    if r.returncode != 0:
        return {}
    inits, diags = [], []
    for i in range(reps + 1):  # the first is a warm-up
        r = subprocess.run([python, "-c", LSP_PROBE, python, str(changed)], cwd=root, env=env, capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"language server probe failed:\n{r.stderr[-2000:]}")
        if i:
            a, b = (float(x) for x in r.stdout.split())
            inits.append(a)
            diags.append(b)
    return {"lsp_init": {"s": statistics.median(inits), "yard": float("nan"), "ratio": float("nan")},
            "lsp_diag": {"s": statistics.median(diags), "yard": float("nan"), "ratio": float("nan")}}


LABELS = {
    "n_off": "(n) newcomer app: one changed template, daemon off",
    "n_off_slow": "(n) the same, tokenizer.json parsed (no fast load)",
    "n_off_nopyc": "(n) the same, no bytecode cache (.pyc never written)",
    "n_pinned": "(n) the same, pinned 151k tokenizer (Qwen2.5)",
    "n_daemon": "(n) one changed template, daemon on",
    "pc_daemon": "(p) pre-commit, promptlint hook / no-op hook, daemon on",
    "pc_off": "(p) pre-commit, promptlint hook / no-op hook, daemon off",
    "lsp_init": "(l) language server: start to initialize reply (s)",
    "lsp_diag": "(l) language server: first diagnostics after initialize (s)",
}
TARGETS = {"n_off": 12.0, "n_pinned": 15.0, "pc_daemon": 1.3, "pc_off": 2.0}
SECONDS = {"lsp_diag": 1.0}  # targets in seconds, not ratios


class _Live(dict):
    """The rows, each printed (and flushed) as it is measured: a run cut short still shows them."""

    def __setitem__(self, key, row) -> None:
        super().__setitem__(key, row)
        ratio = f", ratio {row['ratio']:.2f}" if row.get("ratio") == row.get("ratio") and "ratio" in row else ""
        print(f"  {LABELS.get(key, key)}: {row['s']:.3f} s{ratio}", flush=True)

    def update(self, other=(), **more) -> None:
        for key, row in dict(other, **more).items():
            self[key] = row


def print_rows(out: Dict[str, Dict[str, float]], quick: bool) -> None:
    print()
    print(f"{'newcomer app (interleaved pairs)':<62} {'median s':>9} {'yardstick':>9} {'ratio':>7} {'target':>7}")
    print("-" * 98)
    for key, label in LABELS.items():
        if key not in out:
            print(f"{label:<62} {'skipped':>9}  (pre-commit or pygls not importable)")
            continue
        row = out[key]
        target = TARGETS.get(key, SECONDS.get(key))
        value = row["s"] if key in SECONDS else row["ratio"]
        verdict = "" if target is None or quick else ("  yes" if value <= target else "  NO")
        tgt = f"<= {target:g}" if target else ""
        yard = f"{row['yard']:>9.3f}" if row["yard"] == row["yard"] else f"{'-':>9}"
        ratio = f"{row['ratio']:>7.2f}" if row["ratio"] == row["ratio"] else f"{'-':>7}"
        print(f"{label:<62} {row['s']:>9.3f} {yard} {ratio} {tgt:>7}{verdict}")
    print("(yardstick: `python -c pass`, for (p) the same `pre-commit run` with a no-op local hook)")
