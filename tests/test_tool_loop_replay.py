"""Issue 32, family 7: tool-call turns replayed. An agent loop sends the model's tool call and the
tool's result back in the next request; a chat template that renders the past call otherwise than
the call the model emitted (its arguments, its id, its opening tag left out) loses the call's
tokens on every step of the loop (M204, the variant "one step of a tool loop").

Templates are in tests/data/tool_loop/ (PROVENANCE.md: the public formats they follow); the
corpus templates that render a past call as they render the final one stay clean.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import DATA

LOOP = DATA / "tool_loop"
QWEN = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"
MISTRAL = DATA / "tokenizers" / "mistral-v3-spm" / "tokenizer.json"
VARIANT = "the conversation grown by one step of a tool loop: + assistant tool call + tool result (2 → 4 messages)"
LLAMA_SPECIALS = ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"]


def _m204(cli, tmp_path: Path, template: Path, tokenizer: Path) -> list:
    (tmp_path / template.name).write_text(template.read_text(encoding="utf-8"), encoding="utf-8")
    r = cli("check", "--tokenizer", tokenizer, "--no-cache", "--output-format", "json", template.name, cwd=tmp_path)
    return [f for f in r.json()["findings"] if f["code"] == "M204"]


def _llama_tokenizer(tmp_path: Path) -> Path:
    """Qwen2.5's BPE with Llama 3's control tokens as special tokens (Llama 3's own may not be copied).
    Cut to Qwen2.5's first 4,000 ids (tests/small_tokenizers.py): the finding is about a special
    token the past call loses, which the cut tokenizer has as the full one does (same line, cause,
    variant and divergent token asserted); a 151k vocabulary would only add seconds of parsing."""
    from tokenizers import AddedToken, Tokenizer

    from small_tokenizers import mini_qwen

    tok = Tokenizer.from_str(mini_qwen())
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in LLAMA_SPECIALS])
    out = tmp_path / "llama-stand-in.json"
    tok.save(str(out))
    return out


def _render(template: str, messages, tools, add_generation_prompt: bool) -> str:
    """transformers' way: a sandboxed environment, trim_blocks/lstrip_blocks, tojson in insertion order."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = lambda x, indent=None: json.dumps(x, ensure_ascii=False, indent=indent)
    return env.from_string(template).render(messages=messages, tools=tools, add_generation_prompt=add_generation_prompt,
                                            bos_token="", eos_token="")


def test_a_past_call_without_its_arguments_loses_the_call(tmp_path, cli):
    found = _m204(cli, tmp_path, LOOP / "qwen_hermes_history_args.jinja", QWEN)
    assert [(f["line"], f["cause"], f["variant"]) for f in found] == [(19, "loop-last", VARIANT)]
    # independently: the built-in tools request (promptlint's inputs, our own render and encode)
    from promptlint.chat.scenarios import SYSTEM, TOOLS, USER_WEATHER
    from reference_tokenizers import of_file

    template = (LOOP / "qwen_hermes_history_args.jinja").read_text(encoding="utf-8")
    turn = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER_WEATHER}]
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "call7f3c9", "type": "function", "function": {
        "name": "get_weather", "arguments": json.dumps({"location": {"city": "Paris"}})}}]}
    result = {"role": "tool", "tool_call_id": "call7f3c9", "name": "get_weather", "content": "{}"}
    prompt = _render(template, turn, TOOLS, True)
    emitted = _render(template, turn + [call], TOOLS, False)[len(prompt):]
    generated = emitted[: emitted.index("<|im_end|>")]  # the stop token is never cached
    after = _render(template, turn + [call, result], TOOLS, True)
    tok = of_file(QWEN)  # `tokenizers`' own parse, once per test process
    a = tok.encode(prompt + generated, add_special_tokens=False).ids
    b = tok.encode(after, add_special_tokens=False).ids
    shared = next(i for i in range(min(len(a), len(b))) if a[i] != b[i])
    assert found[0]["shared_tokens"] == shared
    assert shared > len(tok.encode(prompt, add_special_tokens=False).ids)  # inside the emitted call


def test_a_past_call_without_its_python_tag_loses_the_call(tmp_path, cli):
    found = _m204(cli, tmp_path, LOOP / "llama31_python_tag_last_only.jinja", _llama_tokenizer(tmp_path))
    assert [(f["line"], f["cause"], f["variant"]) for f in found] == [(18, "loop-last", VARIANT)]
    assert found[0]["first_divergent_token"]["base_text"] == "<|python_tag|>"


def test_a_past_call_without_its_id_loses_the_call(tmp_path, cli):
    found = _m204(cli, tmp_path, LOOP / "mistral_history_ids_dropped.jinja", MISTRAL)
    assert [(f["line"], f["variant"]) for f in found] == [(14, VARIANT)]


@pytest.mark.parametrize("name,tokenizer", [
    ("Qwen-Qwen2.5-7B-Instruct.jinja", QWEN),
    ("vllm-tool_chat_template_mistral_official.jinja", MISTRAL),
])
def test_templates_that_render_a_past_call_as_emitted_stay_clean(name, tokenizer, tmp_path, cli):
    found = _m204(cli, tmp_path, DATA / "chat_templates" / name, tokenizer)
    assert [f for f in found if "tool loop" in f["variant"]] == []
