"""Issue 22 on the corpus: one finding per tool list (M202), M204's cause and severity, the reply as
the model emits it, vLLM's content-format detection.

Every index is checked against renders made here with transformers' own `apply_chat_template`
(the independent renderer) and a plain `tokenizers` encode, never against promptlint's arithmetic.
"""

from __future__ import annotations

import copy
import re

import pytest

from chat_helpers import TEMPLATES, model_dir, plain_tokenizer
from hf_tokenizers import hf_tokenizer
from promptlint.chat.scenarios import TOOLS, builtin_requests
from promptlint.checks.history_not_prefix_stable import NEXT_USER, REASONING, REPLY
from promptlint.project.config import Settings
from promptlint.driver.lint import lint

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("findings")


def _findings(template, workdir, code, **settings):
    d = model_dir(template, workdir)
    report = lint([str(d)], Settings(select=(code,), **settings), use_cache=False)
    assert report.errors == []
    return d, [f for f in report.findings if f.code == code]


def _hf(template, d):
    """transformers' tokenizer over the same tokenizer.json, with the template's special tokens and the
    template as its chat template (one parse per file and test process: tests/hf_tokenizers.py)."""
    return hf_tokenizer(d / "tokenizer.json", template, (TEMPLATES / template).read_text(encoding="utf-8"))


def _render(hf, messages, tools=None, add_generation_prompt=True):
    return hf.apply_chat_template(copy.deepcopy(messages), tools=copy.deepcopy(tools), tokenize=False,
                                  add_generation_prompt=add_generation_prompt)


def _ids(d, text):
    """A plain `tokenizers` encode. Each tokenizer file is parsed once per test process (a 150k
    vocabulary parses in 0.5-2 s; tests/chat_helpers.py), not once per encode: a `tokenizers`
    Tokenizer is not changed by encoding, so a later test gets the object a fresh parse would give."""
    return plain_tokenizer(d / "tokenizer.json").encode(text, add_special_tokens=False)


def _shared(a, b):
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return i


def _line_of(template, pattern, after=None):
    """1-based line of the first line matching ``pattern`` (below the first line matching ``after``)."""
    lines = (TEMPLATES / template).read_text(encoding="utf-8").splitlines()
    start = next(i for i, l in enumerate(lines) if re.search(after, l)) if after else 0
    return next(i + 1 for i in range(start, len(lines)) if re.search(pattern, lines[i]))


# ----------------------------------------------------------------- one finding per tool list


@pytest.mark.parametrize("frontend", ["transformers", "vllm"])
@pytest.mark.parametrize("template", ["Qwen-Qwen2.5-7B-Instruct.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja"])
def test_one_finding_per_tool_list(template, frontend, workdir):
    d = model_dir(template, workdir)
    report = lint([str(d)], Settings(select=("M201", "M202"), frontend=frontend), use_cache=False)
    assert [f.code for f in report.findings] == ["M202"]
    (f,) = report.findings
    assert "order and key order must be canonical" in f.message and "sort_keys=true" not in (f.help or "")
    variants = [n for n in f.notes if n.startswith("variant: ")]
    assert len(variants) == 2 and any("tools reversed" in v for v in variants)


def test_m202_transformers_reports_the_key_order_variant_at_its_direct_index(workdir):
    """transformers passes every key as the client built it: the reversed keys split first."""
    template = "Qwen-Qwen2.5-7B-Instruct.jinja"
    d, (f,) = _findings(template, workdir, "M202")
    hf = _hf(template, d)
    messages = builtin_requests()["tools"].messages

    def reverse(v):
        if isinstance(v, dict):
            return {k: reverse(v[k]) for k in reversed(list(v))}
        return [reverse(x) for x in v] if isinstance(v, list) else v

    base = _ids(d, _render(hf, messages, TOOLS)).ids
    keys = _ids(d, _render(hf, messages, reverse(TOOLS))).ids
    order = _ids(d, _render(hf, messages, list(reversed(TOOLS)))).ids
    assert _shared(base, keys) < _shared(base, order)
    assert f.variant_description.startswith("keys inserted in reverse order at every depth (get_weather: type, function")
    assert f.first_divergent_token.index == _shared(base, keys)


def test_m202_vllm_varies_only_the_keys_inside_parameters(workdir):
    template = "Qwen-Qwen2.5-7B-Instruct.jinja"
    d, (f,) = _findings(template, workdir, "M202", frontend="vllm")
    (keys,) = [n for n in f.notes if n.startswith("variant: keys")]
    assert "inside `parameters`" in keys and "get_weather: type, properties, required → required, properties, type" in keys
    assert "type, function" not in keys
    # the tool order splits first here; its index from a direct render of the reversed list
    hf = _hf(template, d)
    messages = builtin_requests()["tools"].messages
    base = _ids(d, _render(hf, messages, TOOLS)).ids
    order = _ids(d, _render(hf, messages, list(reversed(TOOLS)))).ids
    assert f.variant_description.startswith("tools reversed") and f.first_divergent_token.index == _shared(base, order)


# ----------------------------------------------------------------- M204 causes


def _turns(hf, name, reply):
    req = builtin_requests()[name]
    prompt = _render(hf, req.messages, req.tools)
    grown = req.messages + [reply, {"role": "user", "content": NEXT_USER}]
    return prompt, _render(hf, grown, req.tools)


def _by_cause(found, cause):
    return [f for f in found if f.cause == cause]


def test_m204_hermes_loop_last_newline_is_a_warning_at_the_branch(workdir):
    template = "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja"
    d, found = _findings(template, workdir, "M204")
    (f,) = _by_cause(found, "loop-last")
    assert f.severity == "warning" and f.to_dict()["cause"] == "loop-last"
    hf = _hf(template, d)
    prompt, after = _turns(hf, "tool-round-trip", {"role": "assistant", "content": REPLY})
    a, b = _ids(d, prompt).ids, _ids(d, after).ids
    assert f.first_divergent_token.index == _shared(a, b) < len(a)
    # the tool result's closing tag gets its newline only when it is not the last message
    assert "</tool_response><|im_end|>" in prompt and "</tool_response>\n<|im_end|>" in after
    assert any(f"template line {_line_of(template, r'if not loop.last', after=r'tool_response')}:" in n for n in f.notes)
    assert "loop.last" in f.help


def test_m204_deepseek_indentation_is_whitespace_at_the_set_line(workdir):
    template = "vllm-tool_chat_template_deepseekv3.jinja"
    d, found = _findings(template, workdir, "M204")
    line = _line_of(template, r"set content = message\['content'\]")
    (f,) = [f for f in _by_cause(found, "whitespace") if any(f"template line {line}:" in n for n in f.notes)]
    assert f.severity == "warning"
    hf = _hf(template, d)
    prompt, after = _turns(hf, "system-user", {"role": "assistant", "content": REPLY})
    a, b = _ids(d, prompt).ids, _ids(d, after).ids
    assert f.first_divergent_token.index == _shared(a, b)
    assert after[len(prompt) - 1 :].startswith("            " + REPLY[:10])  # the indentation of the next line


@pytest.mark.parametrize(
    "template", ["Qwen-Qwen3-0.6B.jinja", "Qwen-QwQ-32B.jinja", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"]
)
def test_m204_reasoning_stripped_is_info_with_the_cost(template, workdir):
    d, found = _findings(template, workdir, "M204")
    assert found and all(f.cause == "reasoning-stripped" and f.severity == "info" for f in found)
    f = min(found, key=lambda f: f.first_divergent_token.index)
    hf = _hf(template, d)
    req = builtin_requests()["system-user"]
    prompt_ids = _ids(d, _render(hf, req.messages)).ids
    if template.startswith("Qwen-Qwen3"):  # the reasoning field: the divergence is the first generated token
        assert f.first_divergent_token.index == len(prompt_ids)
    else:  # `<think>\n` ends the generation prompt and is never rendered again
        history = _ids(d, _turns(hf, "system-user", {"role": "assistant", "content": f"<think>\n{REASONING}\n</think>\n\n{REPLY}"})[1]).ids
        assert f.first_divergent_token.index == _shared(prompt_ids, history) < len(prompt_ids)
    cost = next(n for n in f.notes if n.startswith("cost:"))
    cached = f.evidence["prompt_tokens"] + f.evidence["generated_tokens"]
    assert f"{cached - f.first_divergent_token.index:,} tokens per turn" in cost


def test_m204_mistral_tools_before_last_user_is_format_by_design(workdir):
    d, found = _findings("mistralai-Mistral-Nemo-Instruct-2407.jinja", workdir, "M204")
    (f,) = [f for f in found if f.first_divergent_token.base_text == "[AVAILABLE_TOOLS]"]
    assert f.cause == "format-by-design" and f.severity == "info" and f.first_divergent_token.index == 1


# ----------------------------------------------------------------- the reply as the model emits it


def test_m204_sentencepiece_separator_space_is_not_generated(workdir):
    """mistral_official writes `" " + content` after `[/INST]`: the model emits `▁Order`, history
    re-renders `▁` `▁Order`; the split is at the first reply token."""
    template = "vllm-tool_chat_template_mistral_official.jinja"
    d, found = _findings(template, workdir, "M204")
    hf = _hf(template, d)
    prompt, after = _turns(hf, "no-system", {"role": "assistant", "content": REPLY})
    a = _ids(d, prompt).ids
    b = _ids(d, after)
    assert b.ids[: len(a)] == a and b.tokens[len(a)] == "▁"
    (f,) = [f for f in found if f.first_divergent_token.index == len(a)]
    assert f.cause == "whitespace" and f.severity == "warning"
    line = _line_of(template, re.escape('" " + message["content"]'))
    assert any(f"template line {line}:" in n for n in f.notes)


def test_reasoning_field_is_an_attribute_access_not_a_substring():
    from promptlint.checks.history_not_prefix_stable import default_reply, reasoning_field

    named = "{%- set reasoning_mode = '/think' %}{{ reasoning_mode }}{% for m in messages %}{{ m.content }}{% endfor %}"
    assert reasoning_field(named) is None and "reasoning_content" not in default_reply(named)
    assert reasoning_field("{{ messages[0]['reasoning'] }}") == "reasoning"
    assert reasoning_field("{% for m in messages %}{{ m.reasoning_content }}{% endfor %}") == "reasoning_content"


# ----------------------------------------------------------------- vLLM content format


def test_vllm_content_format_follows_vllms_detection():
    from promptlint.chat.request import _cached_format

    def fmt(name):
        return _cached_format((TEMPLATES / name).read_text(encoding="utf-8"))

    # a loop over a variable assigned from message.content is not a loop over content for vLLM
    assert fmt("vllm-tool_chat_template_mistral_official.jinja") == "string"
    assert fmt("Mistral-Small-3.2-24B-Instruct-2506.jinja") == "openai"  # `for block in message['content']`
    assert fmt("Qwen-Qwen3-0.6B.jinja") == "string"


@pytest.mark.parametrize(
    "template", ["vllm-tool_chat_template_mistral_official.jinja", "Mistral-Small-3.2-24B-Instruct-2506.jinja",
                 "mistralai-Mistral-Nemo-Instruct-2407.jinja", "unsloth-mistral-Devstral-Small-2507.jinja"]
)
def test_mistral_templates_render_under_vllm(template, workdir):
    d = model_dir(template, workdir)
    report = lint([str(d)], Settings(frontend="vllm"), use_cache=False)
    assert [e.code for e in report.errors] == [] and not [f for f in report.findings if f.code == "E002"]


# A template written here in the style of SmolLM3's reasoning mode: `/think` (the default) renders the
# assistant's content as the client sends it; `/no_think` renders an empty think block of its own.
# "reasoning" appears only in the name `reasoning_mode`: no reasoning field is read, so the model's
# in-band `<think>…</think>` output is what is cached, and a client may send it back or drop it.
SMOL_STYLE = """{%- if enable_thinking is not defined %}{% set enable_thinking = true %}{% endif %}
{%- set reasoning_mode = "/think" if enable_thinking else "/no_think" %}
{{- "<|im_start|>system\\nReasoning Mode: " + reasoning_mode + "\\n\\n" }}
{%- if messages[0].role == "system" %}{{ messages[0].content + "\\n" }}{% endif %}
{{- "<|im_end|>\\n" }}
{%- for message in messages %}
{%- set content = message.content if message.content is string else "" %}
{%- if message.role == "user" %}{{ "<|im_start|>user\\n" + content + "<|im_end|>\\n" }}
{%- elif message.role == "assistant" %}
{%- if reasoning_mode == "/think" %}{{ "<|im_start|>assistant\\n" + content.lstrip("\\n") + "<|im_end|>\\n" }}
{%- else %}{{ "<|im_start|>assistant\\n" + "<think>\\n\\n</think>\\n" + content.lstrip("\\n") + "<|im_end|>\\n" }}
{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{%- if reasoning_mode == "/think" %}{{ "<|im_start|>assistant\\n" }}{% else %}{{ "<|im_start|>assistant\\n" + "<think>\\n\\n</think>\\n" }}{% endif %}
{%- endif %}
"""


def test_m204_think_style_reasoning_the_client_drops_is_modelled(tmp_path):
    """The model emits `<think>…</think>` in the content; sent back, history is append-only; dropped
    (what most clients do), turn N+1 diverges at the first generated token. The worse is reported."""
    import json

    from conftest import QWEN
    from promptlint.checks.history_not_prefix_stable import default_reply, reasoning_field

    assert reasoning_field(SMOL_STYLE) is None  # `reasoning_mode` is a name, not a message field
    assert default_reply(SMOL_STYLE)["content"].startswith("<think>\n")
    d = tmp_path / "smol-style"
    d.mkdir()
    (d / "tokenizer.json").symlink_to(QWEN)
    (d / "tokenizer_config.json").write_text(json.dumps(
        {"chat_template": SMOL_STYLE, "eos_token": "<|im_end|>", "tokenizer_class": "PreTrainedTokenizerFast"}))
    report = lint([str(d)], Settings(select=("M204",)), use_cache=False)
    assert report.errors == []
    found = report.findings
    assert found and all(f.cause == "reasoning-stripped" and f.severity == "info" for f in found)

    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(QWEN), eos_token="<|im_end|>")
    hf.chat_template = SMOL_STYLE
    req = builtin_requests()["system-user"]
    prompt = _render(hf, req.messages)
    emitted = f"<think>\n{REASONING}\n</think>\n\n{REPLY}"
    kept = _render(hf, req.messages + [{"role": "assistant", "content": emitted}, {"role": "user", "content": NEXT_USER}])
    dropped = _render(hf, req.messages + [{"role": "assistant", "content": REPLY}, {"role": "user", "content": NEXT_USER}])
    tok = plain_tokenizer(QWEN)
    p = tok.encode(prompt, add_special_tokens=False).ids
    generated = tok.encode(prompt + emitted, add_special_tokens=False).ids  # the model's tokens in context
    assert generated[: len(p)] == p
    assert _shared(generated, tok.encode(kept, add_special_tokens=False).ids) == len(generated)  # sent back: append-only
    split = _shared(generated, tok.encode(dropped, add_special_tokens=False).ids)
    assert split == len(p)  # dropped: the first generated token (`<think>`) is not in turn N+1
    f = min(found, key=lambda f: f.first_divergent_token.index)
    assert f.first_divergent_token.index == split
    assert f.evidence["generated_tokens"] == len(generated) - len(p)


# ----------------------------------------------------------------- every corpus template

from chat_helpers import template_names  # noqa: E402

# M204 on each corpus template under the defaults (transformers 5.x frontend, built-in scenarios):
# (cause, severity) of every finding. The model's design is `info`; template bugs are `warning`.
M204_CAUSES = {
    "Mistral-Small-3.2-24B-Instruct-2506.jinja": [("format-by-design", "info")],
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": [("loop-last", "warning")],
    "Qwen-QwQ-32B.jinja": [("reasoning-stripped", "info")],
    "Qwen-Qwen3-0.6B.jinja": [("reasoning-stripped", "info")],
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja": [("reasoning-stripped", "info")] * 2,
    # the reasoning scenario, and the tools scenario grown as an agent loop (a tool call's reasoning dropped)
    "deepseek-ai-DeepSeek-V3.1.jinja": [("reasoning-stripped", "info")] * 2,
    "mistralai-Mistral-Nemo-Instruct-2407.jinja": [("format-by-design", "info")] * 2,
    "openai-gpt-oss-120b.jinja": [("reasoning-stripped", "info")],
    "vllm-tool_chat_template_deepseekv3.jinja": [("whitespace", "warning")] * 2,
    "vllm-tool_chat_template_mistral_official.jinja": [("format-by-design", "info")] * 2 + [("whitespace", "warning")],
}


@pytest.mark.parametrize("template", template_names())
def test_m204_cause_and_severity_of_every_corpus_finding(template, workdir):
    d = model_dir(template, workdir)
    report = lint([str(d)], Settings(select=("M204",)), use_cache=False)
    found = [f for f in report.findings if f.code == "M204"]
    assert sorted((f.cause, f.severity) for f in found) == sorted(M204_CAUSES.get(template, []))
    for f in found:
        assert f"({f.cause})" in f.message and f.to_dict()["cause"] == f.cause
        if f.severity == "warning":  # a template bug: located at the line responsible, named in a note
            assert any(n.startswith(f"template line {f.line}:") for n in f.notes), f.notes
        else:  # the model's design: the cost is stated as the re-prefill of the previous answer
            assert any(n.startswith("cost: the previous answer is prefilled again on every turn") for n in f.notes)


@pytest.mark.parametrize("frontend", ["transformers", "vllm"])
def test_no_corpus_chat_template_reports_two_findings_for_one_tool_list(frontend, workdir):
    """Tool order and key order are one M202 on chat templates; M201 never fires there."""
    renders_tools = 0
    for template in template_names():
        report = lint([str(model_dir(template, workdir))], Settings(select=("M201", "M202"), frontend=frontend), use_cache=False)
        codes = [f.code for f in report.findings]
        assert "M201" not in codes and codes.count("M202") <= 1, (template, codes)
        renders_tools += codes.count("M202")
    assert renders_tools >= 15  # most corpus templates render the tool list verbatim
