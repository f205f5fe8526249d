"""Issue 32 family 1: a bare chat template is recognised by what it does and analysed as one.

- it walks the messages through a name bound to them (`{% set loop_messages = messages %}`, as
  the Llama 2 / Mistral / vLLM example templates do) and is a chat template, not an application
  template: `strftime_now` and `raise_exception` are Hugging Face's, not application stand-ins;
- a `.j2`/`.jinja2` file that walks the messages and reads `add_generation_prompt` is one too;
- without tokenizer_config.json, `bos_token`/`eos_token` come from the tokenizer or the template's
  model family, a notice says what was assumed, and no built-in scenario is lost to an undefined
  token.

The templates are written here in the style of the serving projects' example templates (vLLM's
`examples/*.jinja`, ChatML as Qwen 2.5 writes it); renders are rebuilt with plain Jinja in a
sandbox as transformers does, token figures from a direct `tokenizers` encode.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from jinja2.sandbox import ImmutableSandboxedEnvironment

from conftest import MISTRAL, QWEN, shared_prefix

NOW = datetime(2025, 3, 14, 9, 26, 53)  # the documented clock of the chat scenarios; the next request is 7 s later

CHATML_ALIAS = """\
{%- set loop_messages = messages %}
{%- set current_time = strftime_now("%A %d %B %Y, %H:%M") %}
{{- '<|im_start|>system\\nYou are Orbit, the research assistant of the Helios lab. You answer from the lab notebook and cite entries by their id. The current time is ' + current_time + '.' }}
{%- if tools %}
    {{- '\\n\\n# Tools\\n\\n<tools>' }}
    {%- for tool in tools %}{{- '\\n' + tool | tojson }}{%- endfor %}
    {{- '\\n</tools>' }}
{%- endif %}
{{- '<|im_end|>\\n' }}
{%- for message in loop_messages %}
    {%- if message.role in ['system', 'user', 'assistant'] %}
        {{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' }}
    {%- elif message.role == 'tool' %}
        {{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response><|im_end|>\\n' }}
    {%- else %}
        {{- raise_exception('Unknown role: ' + message.role) }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

# Mistral v0.1 style, walked through an alias: BOS once, EOS after each assistant turn
MISTRAL_ALIAS = """\
{%- set conversation = messages %}
{{- bos_token }}
{%- for message in conversation %}
    {%- if message['role'] == 'user' %}
        {{- '[INST] ' + message['content'] + ' [/INST]' }}
    {%- elif message['role'] == 'assistant' %}
        {{- ' ' + message['content'] + eos_token }}
    {%- elif message['role'] == 'system' %}
        {{- '[INST] ' + message['content'] + ' [/INST] Understood.' + eos_token }}
    {%- endif %}
{%- endfor %}
"""


def check(cli, *args, cwd):
    r = cli("check", "--output-format", "json", "--no-cache", "--evidence", *args, cwd=cwd)
    assert r.code in (0, 1), r.err
    return r.json(), r.err


def hf_render(src, now, **kwargs):
    """The template as transformers renders it (sandbox, trim_blocks/lstrip_blocks, its globals)."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["strftime_now"] = lambda fmt: now.strftime(fmt)
    env.globals["raise_exception"] = lambda message: (_ for _ in ()).throw(ValueError(message))
    return env.from_string(src).render(**kwargs)


def test_an_aliased_chatml_template_is_a_chat_template_with_the_clock_at_its_line(tmp_path, cli, qwen):
    (tmp_path / "orbit_chatml.jinja").write_text(CHATML_ALIAS)
    doc, err = check(cli, "--tokenizer", QWEN, "orbit_chatml.jinja", cwd=tmp_path)
    assert doc["errors"] == [] and doc["skipped_scenarios"] == []
    # no application stand-in: strftime_now and raise_exception are the chat renderer's
    assert not [f for f in doc["findings"] if f["code"] in ("PL101", "E004")]
    (m101,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert (m101["line"], m101["column"]) == (2, 24) and m101["variable"] == "strftime_now"

    # independently: the header the template writes before any message, now and 7 s later
    head = hf_render(CHATML_ALIAS, NOW, messages=[], tools=None, add_generation_prompt=False)
    later = hf_render(CHATML_ALIAS, NOW + timedelta(seconds=7), messages=[], tools=None, add_generation_prompt=False)
    assert "Friday 14 March 2025, 09:26." in head and "09:27." in later
    assert m101["evidence"]["base_render"].startswith(head)
    s = shared_prefix(qwen.encode(head).ids, qwen.encode(later).ids)
    assert m101["first_divergent_token"]["index"] == s == m101["shared_tokens"]
    assert m101["first_divergent_token"]["base_text"] == "6" and m101["first_divergent_token"]["variant_text"] == "7"


def test_the_same_template_as_j2_is_a_chat_template_and_the_clock_after_the_history_is_clean(tmp_path, cli):
    (tmp_path / "orbit.j2").write_text(CHATML_ALIAS)
    doc, _ = check(cli, "--tokenizer", QWEN, "orbit.j2", cwd=tmp_path)
    assert [(f["code"], f["line"], f["column"]) for f in doc["findings"] if f["code"] in ("M101", "PL101")] == [("M101", 2, 24)]

    # counter-example: the same template with the time after the conversation (in the generation
    # prompt, as a note to the assistant): the shared prefix is not broken, no M101
    moved = CHATML_ALIAS.replace(" The current time is ' + current_time + '.'", "'").replace(
        "{{- '<|im_start|>assistant\\n' }}", "{{- '<|im_start|>assistant\\n(' + current_time + ') ' }}")
    assert moved.count("current_time") == 2
    (tmp_path / "moved.jinja").write_text(moved)
    doc, _ = check(cli, "--tokenizer", QWEN, "moved.jinja", cwd=tmp_path)
    assert doc["errors"] == [] and doc["skipped_scenarios"] == []
    assert [f["code"] for f in doc["findings"] if f["code"] in ("M101", "PL101", "E004")] == []


def test_an_application_template_with_a_history_loop_stays_an_application_template(tmp_path, cli):
    # no add_generation_prompt: a `.j2` that renders a history list is the application's own prompt
    src = (
        "You are the helpdesk assistant of Northwind. Answer from the knowledge base.\n"
        "{% for m in history %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
        "user: {{ question }}\n"
    )
    (tmp_path / "helpdesk.j2").write_text(src)
    doc, _ = check(cli, "--tokenizer", QWEN, "helpdesk.j2", cwd=tmp_path)
    assert doc["errors"] == [] and "skipped_scenarios" in doc and doc["skipped_scenarios"] == []
    assert [f for f in doc["findings"] if f["code"] == "PL102"] == []  # no built-in chat scenario ran


def test_without_tokenizer_config_the_family_tokens_are_assumed_and_said(tmp_path, cli, mistral):
    (tmp_path / "mistral_alias.jinja").write_text(MISTRAL_ALIAS)
    # the embedded tokenizer names no BOS/EOS: the template's markers ([INST]) name the family
    doc, err = check(cli, "mistral_alias.jinja", cwd=tmp_path)
    assert doc["errors"] == [] and doc["skipped_scenarios"] == []
    assert "assumed `bos_token` = '<s>', `eos_token` = '</s>'" in err and "mistral_alias.jinja" in err

    # with the pinned SentencePiece tokenizer, its own BOS/EOS: nothing assumed, BOS at token 0
    doc, err = check(cli, "--tokenizer", MISTRAL, "mistral_alias.jinja", cwd=tmp_path)
    assert doc["errors"] == [] and doc["skipped_scenarios"] == [] and "assumed" not in err
    rendered = [f["evidence"]["base_render"] for f in doc["findings"] if f.get("evidence", {}).get("base_render")]
    assert all(r.startswith("<s>[INST] ") for r in rendered)
    # a per-turn EOS format: no duplicated special token (the reply's re-rendered leading space is
    # this Mistral v0.1 shape's real M204, tested elsewhere)
    assert [f["code"] for f in doc["findings"] if f["code"] in ("M102", "E004", "PL101")] == []
    expected = hf_render(MISTRAL_ALIAS, NOW, messages=[{"role": "user", "content": "Hi"}], bos_token="<s>", eos_token="</s>")
    assert mistral.encode(expected, add_special_tokens=False).ids[0] == mistral.token_to_id("<s>")


def test_render_and_check_agree_on_bos_for_a_bare_template_with_a_tokenizer(tmp_path, cli, mistral):
    """Issue 32 family 8: `render` gives a bare template the BOS `check` gives it (from tokenizer.json)."""
    import json

    (tmp_path / "mistral_alias.jinja").write_text(MISTRAL_ALIAS)
    messages = [{"role": "user", "content": "Hi there"}]
    (tmp_path / "scenario.json").write_text(json.dumps({"messages": messages}))
    r = cli("render", "--scenario", "scenario.json", "--tokenizer", MISTRAL, "--output-format", "json", "mistral_alias.jinja", cwd=tmp_path)
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    expected = hf_render(MISTRAL_ALIAS, NOW, messages=messages, bos_token="<s>", eos_token="</s>")
    assert doc["render"] == expected == "<s>[INST] Hi there [/INST]"
    assert doc["token_ids"][0] == mistral.token_to_id("<s>")
    # check renders the same prompt for the same conversation (its samples file): its M204 evidence
    # (the reply's re-rendered leading space) starts with it
    (tmp_path / "mistral_alias.samples.json").write_text(json.dumps({"messages": messages, "add_generation_prompt": True}))
    found, err = check(cli, "--tokenizer", MISTRAL, "mistral_alias.jinja", cwd=tmp_path)
    assert found["errors"] == [] and "assumed" not in err
    (f,) = [f for f in found["findings"] if f["code"] == "M204"]
    assert f["evidence"]["base_render"].startswith(doc["render"])
