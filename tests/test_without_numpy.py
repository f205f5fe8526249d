"""Every path runs without numpy, which is not a dependency: `tokenizers` >= 0.23 reads
pre-tokenized input through numpy and panics when it is missing (the llama.cpp engine's path did).
The runs block numpy in a subprocess, as a plain `pip install .` leaves it absent."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO
import pytest

pytestmark = pytest.mark.slow  # a real end-to-end run (docs/architecture.md, "Tests")

BLOCK = "import sys; sys.modules['numpy'] = None\nfrom promptlint.cli import main\nraise SystemExit(main(sys.argv[1:]))\n"


def run(*args, cwd):
    return subprocess.run([sys.executable, "-c", BLOCK, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_llamacpp_engine_without_numpy_gives_the_ids_of_the_engine(tmp_path, qwen):
    text = "Hello world, it's 2026!\n  indented   spaces\n"
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    tok = REPO / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"
    done = run("tokenize", "--engine", "llamacpp", "--tokenizer", tok, "--output-format", "json", "t.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    ids = json.loads(done.stdout)["token_ids"]
    # ASCII text: llama.cpp's split of the Qwen2 regex and tokenizers' agree, so the ids are tokenizers' own
    assert ids == qwen.encode(text, add_special_tokens=False).ids


def test_check_with_the_llamacpp_engine_without_numpy(tmp_path):
    # non-ASCII text: the engine's own split is used (tokenizers' Unicode tables may differ from llama.cpp's)
    (tmp_path / "t.j2").write_text("Zeit: {{ now }}\n" + "Grüße aus München, schön dass Sie da sind. " * 20
                                   + "\nFrage: {{ question }}\n", encoding="utf-8")
    done = run("check", "--engine", "llamacpp", "--no-cache", "--output-format", "concise",
               "--tokenizer", REPO / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json", "t.j2", cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "t.j2:1:7: M101" in done.stdout and "Traceback" not in done.stderr
