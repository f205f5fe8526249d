"""Is `promptlint check --output-format json` byte-identical before and after a refactor?

    python scripts/compare_json_output.py record BASELINE_DIR    # on the unmodified code
    python scripts/compare_json_output.py compare BASELINE_DIR   # after the change: diff against it
    python scripts/compare_json_output.py record BEFORE --checkout /path/to/main   # any checkout
    python scripts/compare_json_output.py diff BEFORE AFTER      # two recorded directories

Each run lints, in a fresh temporary workspace and with `--no-cache`:

- ``examples``: a copy of examples/ (its own [tool.promptlint], the pinned Mistral tokenizer),
  plain and with ``--evidence``;
- ``chat-templates``: a copy of the tests/data/chat_templates corpus (bare `.jinja` chat
  templates; the embedded tokenizer), on the chat endpoint, and with the Qwen2.5 tokenizer on the
  completions path through vLLM's frontend;
- ``bench``: the repository benchmarks/run.py generates (application templates with includes and
  samples files, model directories holding tokenizer_config.json chat templates, Qwen2.5);
- ``cases``: every `[[cases]]` entry of every rules/*.toml file written out as the rule tests do
  (templates, Python files, model directories for chat cases), one `check` per case.

The JSON documents are compared byte for byte after one normalisation: the temporary workspace
and the checkouts' paths (the one run, and this one, whose test data is linted) are replaced by
``<WORK>`` and ``<REPO>`` (the tokenizer's absolute path is part of the document). The other formats (full, concise, github, gitlab, sarif, json-lines, markdown, rdjson) of the bench
repository and the examples are recorded too and their differences are listed, not judged (unless
``--strict``: a refactor that must not change any report): they are where deliberate reporting fixes show. A target with no baseline (a rule case added since) is
listed as new. Exit 0 when every JSON document is identical (``--allow`` names targets whose
differences are expected; ``--without-field`` drops a field a change adds before comparing),
1 otherwise.

Only the standard library here; promptlint runs as a subprocess with PYTHONPATH set to the
checkout given by ``--checkout`` (default: this one).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
QWEN = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"
OTHER_FORMATS = ("full", "concise", "github", "gitlab", "sarif", "json-lines", "markdown", "rdjson")


def _bench_module():
    spec = importlib.util.spec_from_file_location("promptlint_bench_run", REPO / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _toml(path: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------ workspaces


def build_workspace(work: Path, apps: int, chats: int) -> List[Tuple[str, Path, List[str], Sequence[str]]]:
    """Create the inputs under ``work``; return (name, cwd, check arguments, formats) per target."""
    targets: List[Tuple[str, Path, List[str], Sequence[str]]] = []
    shutil.copytree(REPO / "examples", work / "examples")
    targets.append(("examples", work, ["examples"], ("json",) + OTHER_FORMATS))
    targets.append(("examples-evidence", work, ["--evidence", "examples"], ("json",)))

    chat = work / "chat" / "chat_templates"
    chat.mkdir(parents=True)
    for f in sorted((DATA / "chat_templates").glob("*.jinja")):
        shutil.copy(f, chat / f.name)
    targets.append(("chat-templates", work / "chat", ["chat_templates"], ("json",)))
    targets.append((
        "chat-templates-completions-vllm", work / "chat",
        ["--tokenizer", str(QWEN), "--serving", "completions", "--frontend", "vllm", "chat_templates"], ("json",),
    ))

    targets += _models_and_baseline(work)

    bench = work / "bench"
    _bench_module().make_repo(bench, apps, chats)
    targets.append(("bench", bench, [], ("json",) + OTHER_FORMATS))

    for name, cwd, args in rule_cases(work / "cases"):
        targets.append((name, cwd, args, ("json",)))
    return targets


def _models_and_baseline(work: Path) -> List[Tuple[str, Path, List[str], Sequence[str]]]:
    """examples/ linted for two deployed models at once (`tokenizers`), and against a git revision
    (`--baseline`: a commit of examples/, then a template made worse), with one model and with two."""
    models = work / "models"
    shutil.copytree(REPO / "examples", models)
    config = (models / "pyproject.toml").read_text(encoding="utf-8")
    config = "\n".join(line for line in config.splitlines() if not line.startswith(("tokenizer =", "tokenizer-sha256")))
    # a copy inside the tree, named relatively: the `models-baseline` target commits this tree, and an
    # absolute path would make its commit id (which the reports print) depend on where the checkout is
    (models / "qwen").mkdir()
    shutil.copyfile(QWEN, models / "qwen" / "tokenizer.json")
    config += '\n[tool.promptlint.tokenizers]\nmistral = "tokenizer/tokenizer.json"\nqwen = { path = "qwen/tokenizer.json", block-size = 32 }\n'
    (models / "pyproject.toml").write_text(config, encoding="utf-8")
    out = [("models", models, [], ("json",) + OTHER_FORMATS)]
    for name, source in (("baseline", REPO / "examples"), ("models-baseline", models)):
        repo = work / name
        shutil.copytree(source, repo)
        git = ["git", "-c", "user.name=compare", "-c", "user.email=compare@example.invalid", "-c", "commit.gpgsign=false"]
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(git + ["-C", str(repo), "add", "-A"], check=True)
        fixed = dict(os.environ, GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
        subprocess.run(git + ["-C", str(repo), "commit", "-q", "-m", "base"], check=True, env=fixed)  # the same commit id each time
        clean = repo / "prompts" / "support_clean.j2"
        clean.write_text("Now: {{ now }}\n" + clean.read_text(encoding="utf-8"), encoding="utf-8")
        out.append((name, repo, ["--baseline", "HEAD", "--fail-on", "any"], ("json",) + OTHER_FORMATS))
    return out


def rule_cases(root: Path):
    """Every rule case as files on disk, laid out as tests/test_rule_cases.py and test_python_rules.py do."""
    for toml in sorted((REPO / "rules").glob("*.toml")):
        rule = _toml(toml)
        for case in rule.get("cases", []):
            name = f"case-{rule['code']}-{case['name']}"
            d = root / name
            d.mkdir(parents=True)
            tok = DATA / "tokenizers" / case.get("tokenizer", "qwen2.5") / "tokenizer.json"
            args = list(case.get("args", []))
            if "python" in case:
                (d / "case.py").write_text(case["python"], encoding="utf-8")
                yield name, d, ["--tokenizer", str(QWEN), "--evidence", *args, "case.py"]
            elif "chat" in case:
                model = d / "model"
                model.mkdir()
                os.symlink(tok, model / "tokenizer.json")
                config = {**case["chat"], "chat_template": case["template"]}
                (model / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
                if "samples" in case:
                    (model / "chat_template.samples.json").write_text(json.dumps(case["samples"]), encoding="utf-8")
                yield name, d, ["--evidence", *args, "model"]
            elif "template" in case:
                filename = case.get("filename", "case.j2")
                (d / filename).write_text(case["template"], encoding="utf-8")
                if "samples" in case:
                    stem = filename.rsplit(".", 1)[0]
                    (d / f"{stem}.samples.json").write_text(json.dumps(case["samples"]), encoding="utf-8")
                yield name, d, ["--tokenizer", str(tok), "--evidence", *args, filename]


# ------------------------------------------------------------------------------ running


def run_all(out: Path, checkout: Path, apps: int, chats: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(checkout), TOKENIZERS_PARALLELISM="false", NO_COLOR="1")
    for var in ("PROMPTLINT_DEBUG", "FORCE_COLOR", "GITHUB_WORKSPACE", "CI_PROJECT_DIR"):
        env.pop(var, None)
    with tempfile.TemporaryDirectory(prefix="promptlint-compare-") as tmp:
        work = Path(tmp).resolve()
        targets = build_workspace(work, apps, chats)
        for name, cwd, args, formats in targets:
            for fmt in formats:
                cmd = [sys.executable, "-m", "promptlint", "check", "--output-format", fmt, "--no-cache", *args]
                r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
                if r.returncode not in (0, 1):
                    raise SystemExit(f"{name} ({fmt}): promptlint exited {r.returncode}:\n{r.stderr}")
                text = r.stdout.replace(str(work), "<WORK>")
                for repo in {str(checkout.resolve()), str(REPO)}:  # the code run, and this checkout's test data
                    text = text.replace(repo, "<REPO>")
                # a computed name's id is keyed with a secret of the process (render/shown.py): new each run
                text = re.sub(r"characters, id [0-9a-f]{8}\)", "characters, id <ID>)", text)
                suffix = "json" if fmt == "json" else f"{fmt}.txt"
                (out / f"{name}.{suffix}").write_text(text, encoding="utf-8")
            print(f"  {name}", file=sys.stderr, flush=True)


def _without(text: str, fields: Sequence[str]) -> str:
    """The JSON document with ``fields`` removed from every finding, written as the json format writes."""
    doc = json.loads(text)
    for f in doc.get("findings", []) + doc.get("errors", []):
        for name in fields:
            f.pop(name, None)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def compare(baseline: Path, current: Path, allow: Sequence[str], without: Sequence[str] = (), strict: bool = False) -> int:
    failed = 0
    new, same, expected = [], 0, []
    for path in sorted(current.iterdir()):
        old = baseline / path.name
        if not old.exists():
            new.append(path.name)
            continue
        a, b = old.read_text(encoding="utf-8"), path.read_text(encoding="utf-8")
        if without and path.name.endswith(".json") and a != b:
            b = _without(b, without)
        if a == b:
            same += 1
            continue
        target = path.name.split(".")[0]
        is_json = path.name.endswith(".json")
        diff = list(difflib.unified_diff(a.splitlines(), b.splitlines(), f"baseline/{path.name}", f"now/{path.name}", lineterm="", n=1))
        if (is_json or strict) and target not in allow:
            failed += 1
            print(f"DIFFERS ({'json' if is_json else 'other format, --strict'}): {path.name}")
        else:
            expected.append(path.name)
            print(f"differs ({'json, allowed' if is_json else 'other format'}): {path.name}")
        print("\n".join("    " + line for line in diff[:60]) + ("\n    ..." if len(diff) > 60 else ""))
    missing = sorted(p.name for p in baseline.iterdir() if not (current / p.name).exists())
    print(f"\n{same} identical; {failed} JSON documents differ; {len(expected)} expected/other-format differences; "
          f"{len(new)} new (no baseline): {', '.join(new) or '-'}; missing now: {', '.join(missing) or '-'}")
    return 1 if failed or missing else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["record", "compare", "diff"])
    ap.add_argument("baseline", help="directory of the recorded outputs")
    ap.add_argument("other", nargs="?", help="diff: the second recorded directory")
    ap.add_argument("--checkout", default=str(REPO), help="the promptlint checkout to run (default: this one)")
    ap.add_argument("--apps", type=int, default=12, help="application templates in the bench repository (default 12)")
    ap.add_argument("--chats", type=int, default=22, help="chat templates in the bench repository (default 22: all)")
    ap.add_argument("--allow", action="append", default=[], metavar="TARGET",
                    help="a target whose JSON may differ (an expected change); repeatable")
    ap.add_argument("--without-field", action="append", default=[], metavar="NAME",
                    help="compare: drop this field (one the change adds) from the current findings first; repeatable")
    ap.add_argument("--strict", action="store_true", help="compare: every format must be identical, not only JSON")
    ap.add_argument("--keep", metavar="DIR", help="compare: keep the current outputs here")
    args = ap.parse_args(argv)
    baseline = Path(args.baseline)
    checkout = Path(args.checkout)
    if args.action == "diff":
        if not args.other:
            ap.error("diff compares two recorded directories: BASELINE OTHER")
        return compare(baseline, Path(args.other), args.allow, args.without_field)
    if args.action == "record":
        run_all(baseline, checkout, args.apps, args.chats)
        print(f"recorded {len(list(baseline.iterdir()))} outputs in {baseline}", file=sys.stderr)
        return 0
    current = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="promptlint-compare-now-"))
    run_all(current, checkout, args.apps, args.chats)
    return compare(baseline, current, args.allow, args.without_field, args.strict)


if __name__ == "__main__":
    sys.exit(main())
