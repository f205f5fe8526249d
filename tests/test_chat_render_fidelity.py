"""`promptlint render` for Qwen2.5 with tools equals transformers' apply_chat_template byte for byte."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never the hub: tokenizers are built from local files
transformers = pytest.importorskip("transformers")

from chat_helpers import model_dir  # noqa: E402
from promptlint.chat.scenarios import TOOLS  # noqa: E402


def test_render_qwen25_with_tools_matches_transformers(tmp_path):
    from transformers import PreTrainedTokenizerFast

    from promptlint.cli import main

    d = model_dir("Qwen-Qwen2.5-7B-Instruct.jinja", tmp_path)
    scenario = {
        "messages": [{"role": "user", "content": "What's the weather in Paris? Answer in °C, <please>."}],
        "tools": TOOLS,
        "add_generation_prompt": True,
    }
    (tmp_path / "s.json").write_text(json.dumps(scenario, ensure_ascii=False), encoding="utf-8")
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["render", str(d), "--scenario", str(tmp_path / "s.json"), "--output-format", "json"]) == 0
    out = json.loads(buf.getvalue())
    config = json.loads((d / "tokenizer_config.json").read_text(encoding="utf-8"))
    tok = PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json"), eos_token=config["eos_token"], pad_token=config["pad_token"])
    tok.chat_template = config["chat_template"]
    expected = tok.apply_chat_template(scenario["messages"], tools=scenario["tools"], add_generation_prompt=True, tokenize=False)
    assert out["render"] == expected
    assert out["token_ids"] == tok.encode(expected, add_special_tokens=False)
    assert out["add_special_tokens"] is False
