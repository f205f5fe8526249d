"""Run every command the way a plain install runs it, and fail on any traceback.

    python scripts/plain_install_smoke.py /path/to/venv/bin/promptlint

`.ci/run` calls this with a venv that has only `pip install` of the built wheel (no extras, so no
numpy, pytest or pyarrow): each documented command on `examples/` (check with every engine and
chat frontend, render, tokenize, diff, hashes, samples, rule, audit without `--ray`, clean) must end
with its documented exit status and never print a traceback, a Rust panic or an "internal error".
It runs in a copy of `examples/` in a temp directory, so the checkout is not written.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHAT = REPO / "tests" / "data" / "chat_templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"
BAD = ("Traceback (most recent call last)", "internal error", "panicked at", "PanicException")


def main(argv) -> int:
    promptlint = argv[1] if len(argv) > 1 else shutil.which("promptlint")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "examples"
        shutil.copytree(REPO / "examples", work)
        # a byte-level BPE tokenizer (Qwen2.5's): llama.cpp's own pre-tokenizer split runs for it
        tok = "qwen/tokenizer.json"
        (work / "qwen").mkdir()
        shutil.copy(REPO / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json", work / tok)
        shutil.copy(CHAT, work / "chat.jinja")
        (work / "a.txt").write_text("You are a helpful assistant.\nToday: Grüße, 2026-12-02.\n" * 4, encoding="utf-8")
        (work / "b.txt").write_text("You are a helpful assistant.\nToday: Grüße, 2026-12-03.\n" * 4, encoding="utf-8")
        (work / "scenario.json").write_text(json.dumps({"variables": {"now": "2026-12-02T10:00:00Z", "question": "Hi?"}}),
                                            encoding="utf-8")
        (work / "chat.json").write_text(json.dumps({"messages": [{"role": "user", "content": "Grüße!"}]}), encoding="utf-8")
        # the other front ends a plain install carries: TypeScript (tree-sitter), a Prompty file, captures
        (work / "agent").mkdir()
        (work / "agent" / "agent.ts").write_text(
            'import Anthropic from "@anthropic-ai/sdk";\nconst client = new Anthropic();\n'
            'const POLICY = "Answer from the policy. ".repeat(60);\n'
            'export async function ask(q: string) {\n  return client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 512,\n'
            '    system: `Now: ${new Date().toISOString()}\\n${POLICY}`, messages: [{ role: "user", content: q }] });\n}\n',
            encoding="utf-8")
        (work / "support.prompty").write_text(
            "---\nname: support\nsample:\n  now: 2026-12-02T10:00:00Z\n  question: Hi?\n---\nsystem:\n"
            "It is {{now}}.\n" + "Answer from the policy only. " * 40 + "\n\nuser:\n{{question}}\n", encoding="utf-8")
        policy = "Answer from the policy only. " * 80
        (work / "capture.jsonl").write_text("".join(json.dumps({
            "conversation": "c1", "model": "gpt-4.1",
            "messages": [{"role": "system", "content": f"Time {t}. {policy}"}, {"role": "user", "content": "Hi?"}]}) + "\n"
            for t in ("10:00:01", "10:00:09")), encoding="utf-8")
        runs = [(["check", "--no-cache", "--engine", e], {1}) for e in ("vllm", "sglang", "llamacpp")]
        runs += [(["check", "--no-cache", "agent/agent.ts"], {1}), (["check", "--no-cache", "support.prompty"], {1}),
                 (["samples", "support.prompty"], {0}), (["conversation", "capture.jsonl"], {1})]
        # the templates again under the BPE tokenizer: a project of its own (examples/ pins Mistral's)
        shutil.copytree(work / "prompts", work / "bpe" / "prompts")
        (work / "bpe" / "promptlint.toml").write_text('tokenizer = "../qwen/tokenizer.json"\n', encoding="utf-8")
        runs += [(["check", "--no-cache", "--engine", e, "--config", "bpe/promptlint.toml", "bpe/prompts"], {1})
                 for e in ("vllm", "llamacpp")]
        runs += [(["check", "--no-cache", "--frontend", f, "--tokenizer", tok, "chat.jinja"], {0, 1})
                 for f in ("transformers", "vllm", "llamacpp")]
        runs += [
            (["check", "--output-format", "sarif"], {1}),
            (["render", "--scenario", "scenario.json", "prompts/support_timestamp.j2"], {0}),
            (["render", "--scenario", "chat.json", "--tokenizer", tok, "--engine", "llamacpp", "chat.jinja"], {0}),
            (["tokenize", "a.txt"], {0}),
            (["tokenize", "--engine", "llamacpp", "--tokenizer", tok, "a.txt"], {0}),
            (["diff", "a.txt", "b.txt"], {0}),
            (["diff", "--engine", "llamacpp", "--tokenizer", tok, "a.txt", "b.txt"], {0}),
            (["hashes", "--tokenizer", tok, "a.txt"], {0}),
            (["samples", "prompts/support_timestamp.j2"], {0}),
            (["rule", "M101"], {0}),
            (["audit", "audit/trace.jsonl", "--scrape-before", "audit/before.prom", "--scrape-after", "audit/after.prom"], {0}),
            (["clean"], {0}),
        ]
        failed = 0
        for args, codes in runs:
            done = subprocess.run([promptlint, *args], cwd=work, capture_output=True, text=True, timeout=600)
            text = done.stdout + done.stderr
            bad = [b for b in BAD if b in text]
            ok = done.returncode in codes and not bad
            print(f"{'ok ' if ok else 'FAIL'} exit {done.returncode}: promptlint {' '.join(args)}")
            if not ok:
                failed += 1
                print(text[-3000:])
    print(f"plain install: {len(runs) - failed} of {len(runs)} commands ran as documented")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
