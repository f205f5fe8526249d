"""Chat templates: sources, transformers 4.x/5.x and vLLM semantics, check and render (no transformers needed)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from datetime import datetime
from pathlib import Path

import pytest

from chat_helpers import TEMPLATES, model_dir
from promptlint.chat.frontends import prepare
from promptlint.chat.request import ChatProfile, ChatRequest, detect_content_format
from promptlint.chat.run import ChatTemplate
from promptlint.chat.scenarios import builtin_requests
from promptlint.chat.source import load_source
from promptlint.project.config import Settings
from promptlint.driver.lint import lint
from promptlint.render import RenderError
from promptlint.render.environments import make_environment

NOW = datetime(2025, 3, 14, 9, 26, 53)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("chat")


def _check(path, **settings):
    return lint([str(path)], Settings(**settings))


def _chat(text, **profile):
    d = {"bos_token": "<s>", "eos_token": {"content": "</s>", "special": True}}
    return ChatTemplate(_source(text, d), ChatProfile(**profile))


def _source(text, config):
    from promptlint.chat.source import ChatSource, special_tokens_of

    return ChatSource(Path("t.jinja"), {"default": text}, special_tokens_of(config), list(config.get("additional_special_tokens", [])))


# ----------------------------------------------------------------- sources


def test_tokenizer_config_named_templates_pick_tool_use(tmp_path):
    cfg = {
        "bos_token": {"content": "<s>"},
        "chat_template": [{"name": "default", "template": "D{{ bos_token }}"}, {"name": "tool_use", "template": "T{{ tools | length }}"}],
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(cfg))
    chat = ChatTemplate(load_source(tmp_path / "tokenizer_config.json"))
    msgs = [{"role": "user", "content": "hi"}]
    assert chat.render(ChatRequest(msgs), NOW)[0].text == "D<s>"
    assert chat.render(ChatRequest(msgs, tools=[{"a": 1}]), NOW)[0].text == "T1"


def test_model_dir_prefers_chat_template_jinja(workdir):
    d = model_dir("Qwen-Qwen2.5-7B-Instruct.jinja", workdir / "jinja", as_config=False)
    src = load_source(d)
    assert src.path.name == "chat_template.jinja" and src.model_dir == d
    assert src.special_tokens["eos_token"] == "<|im_end|>"


def test_discovery_lints_a_model_dir_once(workdir):
    d = model_dir("meta-llama-Llama-3.1-8B-Instruct.jinja", workdir)
    report = _check(d.parent, select=("M101",))
    llama = [p for p in report.findings + report.errors if "Llama-3.1" in p.path]
    assert report.files >= 1 and llama == []


# ----------------------------------------------------------------- M101


def test_llama_3_2_reports_m101_at_strftime_now(workdir):
    d = model_dir("meta-llama-Llama-3.2-3B-Instruct.jinja", workdir)
    report = _check(d, select=("M101",))
    assert report.errors == []
    (f,) = report.findings
    assert f.code == "M101" and f.variable == "strftime_now"
    assert f.path.endswith("tokenizer_config.json")
    line = (TEMPLATES / "meta-llama-Llama-3.2-3B-Instruct.jinja").read_text().splitlines()[f.line - 1]
    assert "strftime_now" in line and line[f.column - 1 :].startswith("strftime_now")
    assert any("within the chat template" in n for n in f.notes)
    a = f.arithmetic
    assert a.block_size == 16 and a.shared_tokens < a.ideal_shared_tokens
    assert a.eligible_blocks == min(a.shared_tokens, a.prompt_tokens - 1) // 16
    assert a.ideal_eligible_blocks == min(a.ideal_shared_tokens, a.prompt_tokens - 1) // 16
    assert a.lost_blocks == a.ideal_eligible_blocks - a.eligible_blocks > 0
    assert "daily" in f.message


@pytest.mark.parametrize(
    "template",
    ["Mistral-Small-3.2-24B-Instruct-2506.jinja", "ibm-granite-granite-3.3-2B-Instruct.jinja", "openai-gpt-oss-120b.jinja"],
)
def test_todays_date_templates_report_m101(template, workdir):
    (f,) = _check(model_dir(template, workdir), select=("M101",)).findings
    line = (TEMPLATES / template).read_text().splitlines()[f.line - 1]
    assert f.code == "M101" and line[f.column - 1 :].startswith("strftime_now") and f.arithmetic.lost_blocks > 0


def test_llama_3_1_default_date_string_is_constant(workdir):
    d = model_dir("meta-llama-Llama-3.1-8B-Instruct.jinja", workdir)
    report = _check(d, select=("M101",))
    assert report.findings == [] and report.errors == []


def test_llama_3_1_date_string_declared_volatile(workdir, tmp_path):
    d = model_dir("meta-llama-Llama-3.1-8B-Instruct.jinja", tmp_path)
    samples = {
        "messages": [{"role": "system", "content": builtin_requests()["system-user"].messages[0]["content"]}, {"role": "user", "content": "Hi"}],
        "add_generation_prompt": True,
        "variables": {"date_string": {"value": "14 Mar 2025", "kind": "volatile", "sub-kind": "date", "variant": "15 Mar 2025"}},
    }
    (d / "chat_template.samples.json").write_text(json.dumps(samples))
    (f,) = _check(d, select=("M101",)).findings
    assert f.code == "M101" and f.variable == "date_string"


def test_refused_builtin_scenarios_are_notes_not_errors(workdir):
    d = model_dir("google-gemma-2-2b-it.jinja", workdir)
    report = _check(d)
    assert report.errors == []
    # each refused scenario is an info note (PL102), never an error, and it is cached with the findings
    assert {f.code for f in report.findings} == {"PL102"} and all(f.severity == "info" for f in report.findings)
    assert all("System role not supported" in f.message for f in report.findings)


def test_standalone_jinja_is_a_chat_template(tmp_path):
    (tmp_path / "mine.jinja").write_text((TEMPLATES / "openai-gpt-oss-120b.jinja").read_text())
    report = _check(tmp_path / "mine.jinja", select=("M101",))
    assert [f.code for f in report.findings] == ["M101"]
    assert report.findings[0].variable == "strftime_now"


# ----------------------------------------------------------------- transformers 5.x vs 4.x


def test_5x_drops_none_keys_and_aliases_reasoning():
    text = "{% for m in messages %}{{ m.keys() | list | join(',') }};{% endfor %}"
    req = ChatRequest([{"role": "assistant", "content": None, "reasoning": "r"}])
    assert _chat(text).render(req, NOW)[0].text == "thinking,role,reasoning,reasoning_content;"
    assert _chat(text, transformers=4).render(req, NOW)[0].text == "role,content,reasoning;"


def test_4x_passes_additional_special_tokens_5x_does_not():
    src = _source("{{ additional_special_tokens is defined }}", {"additional_special_tokens": ["<x>"]})
    req = ChatRequest([{"role": "user", "content": "hi"}])
    assert ChatTemplate(src, ChatProfile(transformers=4)).render(req, NOW)[0].text == "True"
    assert ChatTemplate(src, ChatProfile(transformers=5)).render(req, NOW)[0].text == "False"


def test_5x_namespace_rejects_underscore_names():
    req = ChatRequest([{"role": "user", "content": "hi"}])
    with pytest.raises(RenderError) as info:
        _chat("{% set ns = namespace(_x=1) %}{{ ns._x }}").render(req, NOW)
    assert info.value.code == "E007"
    assert _chat("{% set ns = namespace(_x=1) %}ok", transformers=4).render(req, NOW)[0].text == "ok"


def test_hf_tojson_keeps_order_and_does_not_escape():
    req = ChatRequest([{"role": "user", "content": "<b>&é"}], kwargs={"x": {"b": 1, "a": 2}})
    out = _chat("{{ messages[0].content | tojson }} {{ x | tojson }} {{ x | tojson(indent=2) }} {{ x | tojson(sort_keys=true) }}").render(req, NOW)
    assert out[0].text == '"<b>&é" {"b": 1, "a": 2} {\n  "b": 1,\n  "a": 2\n} {"a": 2, "b": 1}'


def test_continue_final_message_cuts_at_the_sentinel():
    text = "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}"
    req = ChatRequest([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "The answer is"}], continue_final_message=True)
    assert _chat(text).render(req, NOW)[0].text == "<user>hi</user><assistant>The answer is"
    req.add_generation_prompt = True
    with pytest.raises(RenderError):
        _chat(text).render(req, NOW)


def test_raise_exception_message_is_the_e002_message():
    with pytest.raises(RenderError) as info:
        _chat("{{ raise_exception('tools are required') }}").render(ChatRequest([{"role": "user", "content": "x"}]), NOW)
    assert info.value.code == "E002" and "tools are required" in info.value.message and info.value.line == 1


# ----------------------------------------------------------------- vLLM frontend


def _vars(request, text="{{ messages }}", **profile):
    src = _source(text, {"bos_token": "<s>"})
    env = make_environment("transformers")
    from jinja2 import meta

    undeclared = frozenset(meta.find_undeclared_variables(env.parse(text)))
    return prepare(request, src, text, undeclared, ChatProfile(frontend="vllm", **profile))


def test_vllm_defaults_tools_and_arguments():
    req = builtin_requests()["tool-round-trip"]
    req.add_generation_prompt = None
    req.kwargs = {"enable_thinking": False, "unknown_flag": 1}
    p = _vars(req, "{{ enable_thinking }}{% for m in messages %}{{ m.content }}{% endfor %}")
    v = p.variables
    assert v["add_generation_prompt"] is True
    assert v["tools"][0]["function"]["strict"] is None and list(v["tools"][0]["function"])[:4] == ["name", "description", "parameters", "strict"]
    call = v["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert call == {"location": {"city": "Paris", "country": "FR"}, "unit": "celsius"}
    assert v["messages"][2]["content"] == ""  # None content -> "" (string content format)
    assert "unknown_flag" not in v and v["enable_thinking"] is False
    assert any("unknown_flag" in n for n in p.notes)


def test_vllm_developer_role_mapping():
    req = ChatRequest([{"role": "system", "content": "A"}, {"role": "developer", "content": "B"}, {"role": "user", "content": "q"}])
    msgs = _vars(req).variables["messages"]
    assert [m["role"] for m in msgs] == ["system", "user"] and msgs[0]["content"] == "A\n\nB"
    msgs = _vars(req, "{% if m == 'developer' %}{% endif %}{{ messages }}").variables["messages"]
    assert [m["role"] for m in msgs] == ["system", "developer", "user"]


def test_vllm_content_format_detection():
    env = make_environment("transformers")
    assert detect_content_format(env.parse("{% for m in messages %}{{ m['content'] }}{% endfor %}")) == "string"
    openai = "{% for m in messages %}{% for part in m['content'] %}{{ part.text }}{% endfor %}{% endfor %}"
    assert detect_content_format(env.parse(openai)) == "openai"
    req = ChatRequest([{"role": "user", "content": "hi"}])
    assert _vars(req, openai).variables["messages"][0]["content"] == [{"type": "text", "text": "hi"}]


# ----------------------------------------------------------------- serving path, render command


def test_completions_serving_double_bos(workdir):
    d = model_dir("vllm-tool_chat_template_mistral_official.jinja", workdir)
    from promptlint.tokenization.tokens import load, resolve

    tok = load(resolve(str(d)))
    chat = ChatTemplate(load_source(d))
    text = chat.render(builtin_requests()["system-user"], NOW)[0].text
    assert text.startswith("<s>")
    bos = tok.added_tokens()["<s>"]
    assert tok.encode(text, add_special_tokens=False).ids[0] == bos
    assert tok.encode(text, add_special_tokens=True).ids[:2] == [bos, bos]


def _render_cli(*argv):
    from promptlint.cli import main

    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = main(["render", *map(str, argv)])
    return rc, buf.getvalue()


def test_render_command_text_shows_token_boundaries(workdir, tmp_path):
    d = model_dir("Qwen-Qwen2.5-7B-Instruct.jinja", workdir)
    scen = tmp_path / "s.toml"
    scen.write_text('add_generation_prompt = true\nnow = "2025-03-14T09:00:00"\n[[messages]]\nrole = "user"\ncontent = "Hello there"\n')
    rc, out = _render_cli(d, "--scenario", scen)
    assert rc == 0
    rc, js = _render_cli(d, "--scenario", scen, "--output-format", "json")
    data = json.loads(js)
    assert out[:-1].replace("|", "") == data["render"].replace("|", "")
    assert out.count("|") == len(data["token_ids"]) - 1 + data["render"].count("|")
    assert data["add_special_tokens"] is False
