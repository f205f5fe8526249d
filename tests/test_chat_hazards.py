"""Issue 4 on the corpus: M102, M201, M202, M204 on real chat templates.

Token indices are checked against a plain `tokenizers` encode of the evidence renders, not
against promptlint's own arithmetic.
"""

from __future__ import annotations

import pytest

from chat_helpers import model_dir, plain_tokenizer
from promptlint.project.config import Settings
from promptlint.driver.lint import lint


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("hazards")


def _findings(template, workdir, code, **settings):
    d = model_dir(template, workdir)
    report = lint([str(d)], Settings(select=(code,), **settings))
    assert report.errors == []
    return d, [f for f in report.findings if f.code == code]


def _direct(d, f):
    """(first divergent index, token A, token B) from a direct encode of both renders (`tokenizers`' own
    parse of the file, once per test process: tests/chat_helpers.py)."""
    tok = plain_tokenizer(d / "tokenizer.json")
    special = f.evidence["add_special_tokens"]
    a = tok.encode(f.evidence["base_render"], add_special_tokens=special)
    b = tok.encode(f.evidence["variant_render"], add_special_tokens=special)
    i = 0
    while i < min(len(a.ids), len(b.ids)) and a.ids[i] == b.ids[i]:
        i += 1
    return i, a.tokens[i], b.tokens[i]


# ----------------------------------------------------------------- M204


def test_m204_mistral_nemo_tools_diverge_at_token_1(workdir):
    d, found = _findings("mistralai-Mistral-Nemo-Instruct-2407.jinja", workdir, "M204")
    (f,) = [f for f in found if f.first_divergent_token.base_text == "[AVAILABLE_TOOLS]"]
    assert _direct(d, f) == (1, "[AVAILABLE_TOOLS]", "[INST]")
    assert f.first_divergent_token.index == 1 and f.first_divergent_token.variant_text == "[INST]"
    assert f.arithmetic.eligible_blocks == 0 and f.arithmetic.lost_blocks == f.arithmetic.ideal_eligible_blocks > 20
    assert f.cause == "format-by-design" and any("moves down the prompt every turn" in n for n in f.notes)


@pytest.mark.parametrize(
    "template,cause",
    [
        ("Qwen-Qwen3-0.6B.jinja", "strips the reasoning of earlier turns from history"),
        ("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "generation prompt"),
        ("Qwen-QwQ-32B.jinja", "generation prompt"),
    ],
)
def test_m204_reasoning_templates(template, cause, workdir):
    d, found = _findings(template, workdir, "M204")
    assert found
    f = found[0]
    index, a, b = _direct(d, f)
    assert f.first_divergent_token.index == index and f.arithmetic.lost_blocks > 0
    assert "with reasoning" in f.variant_description
    assert any(cause in n for n in f.notes), f.notes


def test_m204_qwen3_divergence_is_the_dropped_think_block(workdir):
    d, (f, *_) = _findings("Qwen-Qwen3-0.6B.jinja", workdir, "M204")
    index, a, b = _direct(d, f)
    base = f.evidence["base_render"]
    assert base[f.first_divergent_token.char_offset :].startswith("<think>")
    assert index == f.evidence["prompt_tokens"]  # the first generated token: the reasoning itself


def test_m204_qwen25_appends_only(workdir):
    assert _findings("Qwen-Qwen2.5-7B-Instruct.jinja", workdir, "M204")[1] == []
    assert _findings("meta-llama-Llama-3.1-8B-Instruct.jinja", workdir, "M204")[1] == []


# ----------------------------------------------------------------- M202, M201


@pytest.mark.parametrize("template", ["meta-llama-Llama-3.1-8B-Instruct.jinja", "Qwen-Qwen2.5-7B-Instruct.jinja"])
def test_m202_tool_order(template, workdir):
    """Behind vLLM the envelope's keys are the server's: the tool order is the larger loss."""
    d, (f,) = _findings(template, workdir, "M202", frontend="vllm")
    assert f.variant_description == "tools reversed: get_weather, plan_route → plan_route, get_weather"
    assert f.first_divergent_token.index == _direct(d, f)[0] and f.arithmetic.lost_blocks > 0


@pytest.mark.parametrize("template", ["Qwen-Qwen2.5-7B-Instruct.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja"])
def test_m202_tool_key_order_with_hf_tojson(template, workdir):
    """transformers passes every key as built: the key-order variant is one of M202's two variants, never M201."""
    d, (f,) = _findings(template, workdir, "M202")
    assert f.variable == "tools" and any(n.startswith("variant: keys inserted in reverse order") for n in f.notes)
    assert f.first_divergent_token.index == _direct(d, f)[0]
    assert _findings(template, workdir, "M201")[1] == []


# ----------------------------------------------------------------- M102


@pytest.mark.parametrize("template", ["meta-llama-Llama-3.1-8B-Instruct.jinja", "vllm-tool_chat_template_mistral_official.jinja"])
def test_m102_completions_path_only(template, workdir):
    d, found = _findings(template, workdir, "M102", serving="completions")
    (f,) = found
    tok = plain_tokenizer(d / "tokenizer.json")
    text = f.evidence["base_render"]
    bos = tok.token_to_id(f.message.split("`")[1])
    completions = tok.encode(text, add_special_tokens=True).ids
    chat = tok.encode(text, add_special_tokens=False).ids
    assert completions[:2] == [bos, bos] and chat[0] == bos and chat[1] != bos
    assert f.first_divergent_token.index == 1 and f.arithmetic.eligible_blocks == 0
    assert "completions path" in f.message and "share 0 blocks" in " ".join(f.notes)
    assert _findings(template, workdir, "M102", serving="chat")[1] == []
