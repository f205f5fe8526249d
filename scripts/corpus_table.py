"""Which rules fire on which corpus chat template: a Markdown table for docs/chat-templates.md.

Builds a model directory per template in a temporary directory (the template's tokenizer, or the
tests' stand-in, plus a tokenizer_config.json: `tests/chat_helpers.py`), runs
`promptlint check --output-format json` on each, once on the chat endpoint (the default) and once
with `--serving completions`, and prints one row per template. A cell lists where the rule fires:
`✓` on both paths, `completions` only on the completions path.

    python scripts/corpus_table.py [extra promptlint check arguments]
    python scripts/corpus_table.py --findings [extra arguments]   # each finding: code, cause, severity

With `--findings`, one row per template lists every finding of the chat path (code, M204's
cause, severity, line and first divergent token) instead of the rule matrix.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from chat_helpers import META, model_dir, template_names, tokenizer_name  # noqa: E402

CODES = ["M101", "M102", "M103", "M104", "M105", "M201", "M202", "M203", "M204"]


def check_json(directory: Path, extra) -> dict:
    cmd = [sys.executable, "-m", "promptlint", "check", "--output-format", "json", *extra, str(directory)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    if r.returncode not in (0, 1):
        raise SystemExit(f"{directory.name}: promptlint exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def codes_for(directory: Path, extra) -> set:
    doc = check_json(directory, extra)
    return {f["code"] for f in doc["findings"] + doc["errors"]}


def findings_table(argv) -> int:
    print("| template | findings (code, cause, severity, line, first divergent token) |")
    print("|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in template_names():
            doc = check_json(model_dir(name, Path(tmp)), argv)
            cells = []
            for f in sorted(doc["findings"] + doc["errors"], key=lambda f: (f["code"], f.get("line") or 0)):
                cause = f" {f['cause']}" if f.get("cause") else ""
                token = (f.get("first_divergent_token") or {}).get("index")
                cells.append(f"{f['code']}{cause} ({f['severity']}, line {f.get('line')}{'' if token is None else f', token {token}'})")
            print(f"| {name.replace('.jinja', '')} | {'; '.join(cells) or '—'} |")
    return 0


def main(argv) -> int:
    if argv[:1] == ["--findings"]:
        return findings_table(argv[1:])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in template_names():
            d = model_dir(name, Path(tmp))
            chat = codes_for(d, argv)
            completions = codes_for(d, [*argv, "--serving", "completions"])
            rows.append((name, chat, completions))
    codes = CODES + sorted({c for _, a, b in rows for c in a | b} - set(CODES))
    print("| template | tokenizer | " + " | ".join(codes) + " |")
    print("|---|---|" + "---|" * len(codes))
    for name, chat, completions in rows:
        tok = tokenizer_name(name)
        if tok != META[name]["corpus_tokenizer"] or not META[name].get("tokenizer_is_exact_fit"):
            tok += " (stand-in)"
        cells = []
        for c in codes:
            if c in chat and c in completions:
                cells.append("✓")
            elif c in completions:
                cells.append("completions")
            elif c in chat:
                cells.append("chat only")
            else:
                cells.append("")
        print(f"| {name.replace('.jinja', '')} | {tok} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
