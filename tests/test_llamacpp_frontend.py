"""`--frontend llamacpp`: llama-server's own handling of chat requests (llama.cpp 0c1e570).

Two kinds of evidence:

- expected renders written out by hand from the server's format as its source documents it
  (``common/chat.cpp``: a tool is ``{"type": "function", "function": {"name", "description",
  "parameters"}}`` with ``description`` ``""`` when missing and nothing else; tool-call
  arguments are serialized compactly and parsed back to objects only for templates that read
  them; text parts are joined with ``\\n`` for templates that read content as a string);
- ``data/llamacpp-render-vectors.json``: prompts produced by llama.cpp's own server code
  (``oaicompat_chat_params_parse`` from ``tools/server/server-common.cpp``, with
  ``common/chat.cpp`` and llama.cpp's Jinja engine, compiled from the llama-cpp-python 0.3.36
  sdist by ``scripts/llamacpp_vectors/make_render_vectors.py``), for every corpus template and a
  set of request bodies, with the capabilities llama.cpp derived for each template.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from promptlint.chat.llamacpp import patch_source
from promptlint.chat.llamacpp_caps import template_caps
from promptlint.chat.request import ChatProfile, ChatRequest
from promptlint.chat.run import ChatTemplate
from promptlint.chat.source import load_source
from promptlint.render import RenderError

DATA = Path(__file__).resolve().parent / "data"
TEMPLATES = DATA / "chat_templates"
NOW = datetime(2026, 3, 4, 12, 0)

QWEN_HEAD = (
    "<|im_start|>system\nYou are helpful.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
)
QWEN_TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
    "</tool_call><|im_end|>\n"
)
SYSTEM = {"role": "system", "content": "You are helpful."}
USER = {"role": "user", "content": "Where is order 7?"}
PARAMS = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


def _chat(template: str, frontend: str = "llamacpp", special=None) -> ChatTemplate:
    source = load_source(TEMPLATES / template)
    meta = json.loads((TEMPLATES / "meta.json").read_text(encoding="utf-8"))["templates"][template]
    source.special_tokens = special if special is not None else {
        k: meta[m] for k, m in (("bos_token", "bos"), ("eos_token", "eos")) if meta.get(m)
    }
    return ChatTemplate(source, ChatProfile(frontend=frontend))


def _render(template: str, request: ChatRequest, frontend: str = "llamacpp") -> str:
    return _chat(template, frontend).render(request, NOW)[0].text


def _tool_line(name, description, parameters):
    return json.dumps({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})


def _small_qwen_model(tmp_path: Path):
    """A model directory with Qwen2.5's chat template over Qwen2.5's tokenizer cut to its first 4,000
    ids (tests/small_tokenizers.py: the same pre-tokenizer, added tokens and flags), and that tokenizer
    parsed by `tokenizers` for the expected ids. The commands' llama.cpp path (frontend render, the
    rewritten tokenizer, the encoder) is the one a 151k vocabulary takes, and the ids are compared with
    a direct encode of the hand-written render as before: only the seconds of rewriting and proving a
    151k vocabulary go."""
    from tokenizers import Tokenizer

    from small_tokenizers import mini_qwen

    d = tmp_path / "qwen-small"
    d.mkdir()
    (d / "tokenizer.json").write_text(mini_qwen(), encoding="utf-8")
    config = {"chat_template": (TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text(encoding="utf-8"),
              "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "tokenizer_class": "PreTrainedTokenizerFast"}
    (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return d, Tokenizer.from_str(mini_qwen())


# ----------------------------------------------------------------- tools


def test_tool_without_description_gets_an_empty_one():
    tools = [{"type": "function", "function": {"name": "track_order", "parameters": PARAMS}}]
    text = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, USER], tools=tools))
    assert text.startswith(QWEN_HEAD + _tool_line("track_order", "", PARAMS) + QWEN_TOOLS_TAIL)
    # vLLM's server dumps the pydantic model instead: null description, null strict
    vllm = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, USER], tools=tools), "vllm")
    assert '"description": null' in vllm and '"strict": null' in vllm


def test_tool_with_strict_and_extra_keys_keeps_name_description_parameters():
    tool = {"type": "function", "x-vendor": 1, "function": {"strict": True, "name": "cancel", "description": "Cancel it.",
                                                           "parameters": PARAMS, "examples": ["x"]}}
    text = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, USER], tools=[tool]))
    assert text.startswith(QWEN_HEAD + _tool_line("cancel", "Cancel it.", PARAMS) + QWEN_TOOLS_TAIL)
    assert "strict" not in text and "x-vendor" not in text and "examples" not in text


def test_tool_without_parameters_gets_an_empty_object():
    text = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, USER], tools=[{"type": "function", "function": {"name": "ping"}}]))
    assert QWEN_HEAD + _tool_line("ping", "", {}) + QWEN_TOOLS_TAIL in text


def test_empty_tools_list_means_no_tools():
    with_empty = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, USER], tools=[]))
    assert with_empty == _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, USER]))
    assert "<tools>" not in with_empty


@pytest.mark.parametrize("bad, needle", [
    ({"type": "retrieval"}, "Unsupported tool type"),
    ({"type": "function"}, "Missing tool function"),
    ({"type": "function", "function": {"name": "x", "description": None}}, "'description' must be a string"),
])
def test_invalid_tools_are_the_servers_errors(bad, needle):
    with pytest.raises(RenderError, match=needle):
        _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, USER], tools=[bad]))


# ----------------------------------------------------------------- tool calls


def _history(arguments):
    call = {"id": "call_1", "type": "function", "function": {"name": "track_order", "arguments": arguments}}
    return [SYSTEM, USER, {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "shipped"}]


ARGS = {"order_id": "7", "detail": {"level": "full"}}


def test_tool_call_arguments_string_and_object_render_alike_where_the_template_reads_them():
    """Qwen2.5 reads the arguments (`tool_call.arguments | tojson`): llama.cpp parses strings back to objects."""
    assert template_caps(patch_source((TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text())).supports_object_arguments
    as_object = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest(_history(ARGS)))
    as_string = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest(_history(json.dumps(ARGS, indent=4))))
    expected = '<|im_start|>assistant\n<tool_call>\n{"name": "track_order", "arguments": ' + json.dumps(ARGS) + "}\n</tool_call><|im_end|>\n"
    assert expected in as_object and as_object == as_string


def test_tool_call_object_arguments_become_a_compact_string_where_the_template_prints_them():
    """DeepSeek-V3.1 prints `tool['function']['arguments']` as text: llama.cpp keeps a string, and
    serializes an object compactly (nlohmann json::dump)."""
    tpl = "deepseek-ai-DeepSeek-V3.1.jinja"
    caps = template_caps(patch_source((TEMPLATES / tpl).read_text()))
    assert caps.supports_tool_calls and not caps.supports_object_arguments
    as_object = _render(tpl, ChatRequest(_history(ARGS)))
    assert '{"order_id":"7","detail":{"level":"full"}}' in as_object
    as_string = _render(tpl, ChatRequest(_history(json.dumps(ARGS, indent=2))))
    assert json.dumps(ARGS, indent=2) in as_string


def test_invalid_string_arguments_are_an_error_where_the_template_reads_them():
    with pytest.raises(RenderError, match="Failed to parse tool call arguments as JSON"):
        _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest(_history("order=7")))


def test_tool_call_without_arguments_is_an_error():
    msgs = _history(ARGS)
    del msgs[2]["tool_calls"][0]["function"]["arguments"]
    with pytest.raises(RenderError, match="arguments"):
        _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest(msgs))


# ----------------------------------------------------------------- content parts, roles, prompts


def test_content_parts_are_joined_with_newlines_for_string_templates():
    parts = [{"type": "text", "text": "First part."}, {"type": "text", "text": "Second part."}]
    text = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, {"role": "user", "content": parts}]))
    assert "<|im_start|>user\nFirst part.\nSecond part.<|im_end|>\n<|im_start|>assistant\n" in text


def test_image_parts_are_refused_without_a_projector():
    img = [{"type": "image_url", "image_url": {"url": "data:,"}}]
    with pytest.raises(RenderError, match="image input is not supported"):
        _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([{"role": "user", "content": img}]))


def test_add_generation_prompt_defaults_to_true_and_can_be_turned_off():
    on = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, USER]))
    off = _render("Qwen-Qwen2.5-7B-Instruct.jinja", ChatRequest([SYSTEM, USER], add_generation_prompt=False))
    assert on == off + "<|im_start|>assistant\n"


def test_trailing_assistant_message_is_continued():
    req = ChatRequest([SYSTEM, USER, {"role": "assistant", "content": "Order 7 is"}])
    assert _render("Qwen-Qwen2.5-7B-Instruct.jinja", req) == (
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWhere is order 7?<|im_end|>\n"
        "<|im_start|>assistant\nOrder 7 is"
    )
    req.add_generation_prompt = True  # the prefill turns it off itself
    assert _render("Qwen-Qwen2.5-7B-Instruct.jinja", req).endswith("<|im_start|>assistant\nOrder 7 is")
    req.add_generation_prompt, req.continue_final_message = None, True  # explicit: add_generation_prompt defaults to true
    with pytest.raises(RenderError, match="Cannot set both add_generation_prompt and continue_final_message"):
        _render("Qwen-Qwen2.5-7B-Instruct.jinja", req)


def test_system_message_merged_when_the_template_never_reads_it():
    """Gemma 2 raises on a system role before reading it: llama.cpp prepends the system text to the next message."""
    text = _render("google-gemma-2-2b-it.jinja", ChatRequest([SYSTEM, USER]))
    assert text == "<bos><start_of_turn>user\nYou are helpful.\nWhere is order 7?<end_of_turn>\n<start_of_turn>model\n"


def test_unknown_message_keys_are_dropped_and_dates_are_the_servers():
    msgs = [dict(SYSTEM, metadata={"x": 1}), USER]
    prepared = _chat("meta-llama-Llama-3.1-8B-Instruct.jinja").render(ChatRequest(msgs), NOW)
    text, variables = prepared[0].text, prepared[2].variables
    assert variables["messages"][0] == {"role": "system", "content": "You are helpful."}
    assert variables["date_string"] == "04 Mar 2026" and variables["datetime"] == "Mar 04 2026"
    assert "Today Date: 04 Mar 2026" in text  # not the template's default "26 Jul 2024"
    assert "pad_token" not in variables and variables["enable_thinking"] is True


# ----------------------------------------------------------------- the commands


def test_diff_under_engine_llamacpp_renders_bodies_as_llama_server(tmp_path, capsys):
    """The issue's case: tools without a description. Under --engine llamacpp `diff` uses the
    llama.cpp frontend by default; P is the length of the hand-written server render."""
    from promptlint.cli import main

    d, tok = _small_qwen_model(tmp_path)
    tools = [{"type": "function", "function": {"name": "track_order", "parameters": PARAMS}}]
    body = {"model": "m", "messages": [SYSTEM, USER], "tools": tools}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(body), encoding="utf-8")
    b.write_text(json.dumps(dict(body, messages=[SYSTEM, {"role": "user", "content": "Where is order 8?"}])), encoding="utf-8")
    expected = (QWEN_HEAD + _tool_line("track_order", "", PARAMS) + QWEN_TOOLS_TAIL
                + "<|im_start|>user\nWhere is order 8?<|im_end|>\n<|im_start|>assistant\n")
    assert expected.isascii()  # ASCII: llama.cpp's ids are tokenizers' ids here (tests/test_llamacpp_unicode.py)
    want = tok.encode(expected, add_special_tokens=False).ids
    results = {}
    for extra in ([], ["--frontend", "vllm"]):
        assert main(["diff", str(a), str(b), "--tokenizer", str(d), "--engine", "llamacpp", "--output-format", "json", *extra]) == 0
        results[tuple(extra)] = json.loads(capsys.readouterr().out)
    r = results[()]
    assert r["prompt_tokens"] == len(want)
    assert r["shared_tokens"] == next(i for i, (x, y) in enumerate(zip(want, tok.encode(expected.replace("8?", "7?")).ids)) if x != y)
    assert results[("--frontend", "vllm")]["prompt_tokens"] > len(want)  # null description and strict


def test_config_engine_llamacpp_defaults_the_frontend(tmp_path):
    from promptlint.project.config import load_settings

    (tmp_path / "promptlint.toml").write_text('engine = "llamacpp"\n', encoding="utf-8")
    assert load_settings(start=tmp_path).frontend == "llamacpp"
    assert load_settings(start=tmp_path, overrides={"frontend": "vllm"}).frontend == "vllm"
    (tmp_path / "promptlint.toml").write_text('engine = "llamacpp"\nfrontend = "transformers"\n', encoding="utf-8")
    assert load_settings(start=tmp_path).frontend == "transformers"
    (tmp_path / "promptlint.toml").write_text('engine = "vllm"\n', encoding="utf-8")
    assert load_settings(start=tmp_path).frontend == "transformers"


def test_render_command_uses_the_llamacpp_frontend(tmp_path, capsys):
    from promptlint.cli import main

    d, _ = _small_qwen_model(tmp_path)  # the render is the template's: a 151k vocabulary would add only its proofs
    scenario = tmp_path / "s.json"
    tools = [{"type": "function", "function": {"name": "track_order", "strict": True, "parameters": PARAMS}}]
    scenario.write_text(json.dumps({"messages": [SYSTEM, USER], "tools": tools}), encoding="utf-8")
    assert main(["render", str(d), "--scenario", str(scenario), "--engine", "llamacpp", "--output-format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["render"].startswith(QWEN_HEAD + _tool_line("track_order", "", PARAMS) + QWEN_TOOLS_TAIL)
    assert out["render"].endswith("<|im_start|>assistant\n")  # add_generation_prompt defaults to true


# ----------------------------------------------------------------- against llama.cpp's own server code

import gzip  # noqa: E402

VECTORS = json.loads(gzip.decompress((DATA / "llamacpp-render-vectors.json.gz").read_bytes()))
RECORDED = datetime.strptime(VECTORS["date_utc"], "%Y-%m-%d").replace(hour=12)
CASES = [(t, b) for t in sorted(VECTORS["templates"]) for b in VECTORS["bodies"]]
# llama.cpp's own Jinja engine differs from Jinja2 here: Cohere's Command R+ template reads an attribute of
# a missing attribute, which llama.cpp treats as undefined and Jinja2 (as transformers) refuses.
ENGINE_DIFFERENCES = {"CohereForAI-c4ai-command-r-plus-tool_use.jinja"}


_CHATS = {}


def _request(body) -> ChatRequest:
    return ChatRequest(
        messages=json.loads(json.dumps(body["messages"])),
        tools=body.get("tools"),
        add_generation_prompt=body.get("add_generation_prompt"),
        continue_final_message=body.get("continue_final_message", False),
        kwargs=dict(body.get("chat_template_kwargs") or {}),
    )


@pytest.mark.parametrize("template, body", CASES, ids=[f"{t[:28]}-{b}" for t, b in CASES])
def test_renders_as_llama_server(template, body):
    from promptlint.chat.llamacpp import specialized_handler

    rec = VECTORS["templates"][template]
    want = rec["prompts"][body]
    src = (TEMPLATES / template).read_text(encoding="utf-8")
    handler = specialized_handler(patch_source(src))
    if handler not in (None, "GPT-OSS"):
        pytest.skip(f"llama.cpp renders this template with its {handler} handler (not modelled; a note says so)")
    raised = want.startswith("ERR") and "Jinja Exception:" in want  # the template's own raise_exception
    if want.startswith("ERR") and "While executing" in want and not raised:
        pytest.skip("llama.cpp's own Jinja engine fails on this template: " + want.splitlines()[-1][:120])
    if template not in _CHATS:  # one compile per template
        source = load_source(TEMPLATES / template)
        source.special_tokens = {k: v for k, v in (("bos_token", rec["bos_token"]), ("eos_token", rec["eos_token"])) if v}
        _CHATS[template] = ChatTemplate(source, ChatProfile(frontend="llamacpp"))
    chat = _CHATS[template]
    try:
        got = chat.render(_request(VECTORS["bodies"][body]), RECORDED)[0].text
    except RenderError as e:
        got = "ERR " + e.message
    if want.startswith("ERR "):
        assert got.startswith("ERR "), got[:200]
        return
    if got.startswith("ERR ") and "llama.cpp places the reasoning tags" in got:
        # refused, not guessed: llama.cpp continues a reasoning template's message with tags it finds itself
        assert body in ("prefill", "prefill-with-generation-prompt", "continue-final-message")
        return
    if template in ENGINE_DIFFERENCES and got.startswith("ERR ") and "undefined" in got:
        pytest.xfail("Jinja engine difference (see ENGINE_DIFFERENCES)")
    assert got == want


@pytest.mark.parametrize("template", sorted(VECTORS["templates"]))
def test_template_capabilities_as_llama_cpp_derives_them(template):
    want = VECTORS["templates"][template]["caps"]
    if all(p.startswith("ERR") for p in VECTORS["templates"][template]["prompts"].values()):
        pytest.skip("llama.cpp's own Jinja engine cannot run this template at all")
    caps = template_caps(patch_source((TEMPLATES / template).read_text(encoding="utf-8")))
    assert {k: want[k] for k in caps.__dataclass_fields__} == caps.__dict__


def test_audit_derivation_under_llamacpp(tmp_path):
    """`audit` re-renders captured requests: under --engine llamacpp as llama-server does."""
    from promptlint.audit.derive import make_deriver

    d, tok = _small_qwen_model(tmp_path)
    tools = [{"type": "function", "function": {"name": "track_order", "parameters": PARAMS}}]
    expected = QWEN_HEAD + _tool_line("track_order", "", PARAMS) + QWEN_TOOLS_TAIL + (
        "<|im_start|>user\nWhere is order 7?<|im_end|>\n<|im_start|>assistant\n"
    )
    want = tok.encode(expected, add_special_tokens=False).ids
    derive = make_deriver(str(d / "tokenizer.json"), str(d), engine="llamacpp")
    assert derive({"messages": [SYSTEM, USER], "tools": tools}) == want
    vllm = make_deriver(str(d / "tokenizer.json"), str(d))({"messages": [SYSTEM, USER], "tools": tools})
    assert len(vllm) > len(want)  # vLLM's null description and strict
