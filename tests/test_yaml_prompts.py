"""Issue 32 family 10: Jinja templates embedded in YAML prompt files are analysed.

An agent framework's `system_prompt: |` with a macro and a custom filter, and a Semantic Kernel
prompt (`template: |`, `template_format: jinja2`, `input_variables` with defaults): the template
is the block scalar's text as YAML reads it (indentation removed), findings point at the YAML
file's own line and column, the render is rebuilt here with plain Jinja and encoded with the real
Qwen2.5 tokenizer. A SK prompt in Handlebars is not Jinja and is left alone.
"""

from __future__ import annotations

from jinja2 import Environment

from conftest import QWEN, shared_prefix

AGENT = """\
name: researcher
description: Finds and summarises sources for a research question.
model: gpt-4o
system_prompt: |
  {% macro rules(items) -%}
  {% for r in items %}- {{ r }}
  {% endfor %}
  {%- endmacro %}
  You are Atlas, a research agent. Session started {{ started_at | humanize_time }}.
  Find primary sources, summarise them faithfully and cite every claim with its URL.
  Never fabricate a citation; if a source cannot be fetched, say so and move on.
  Prefer peer-reviewed papers and official documentation over blog posts and forums.
  Write the final answer in markdown with a short summary first and a numbered list of sources last.
  {{ rules(["Quote numbers exactly.", "Name the publication year of each source."]) }}
max_turns: 12
"""
STARTED_LINE = 9  # `  You are Atlas, ... {{ started_at | humanize_time }}.`

SK = """\
name: ChatBot
template_format: jinja2
description: A concierge that answers from the booking record.
input_variables:
  - name: trace_id
    description: the request's trace id
    default: 0b8e2d1c-55aa-4c3e-9f41-7d2a1e6b9c10
  - name: request
    description: the traveller's message
    default: Can I add a checked bag to my booking?
template: |
  <message role="system">You are the travel concierge of Contoso Air. Trace {{ trace_id }}.
  Quote fares exactly as the booking tool returns them and never promise an upgrade.
  Baggage policy: one cabin bag of up to 8 kg and one personal item; checked bags depend on the fare family.
  Loyalty: points post 72 hours after the flight; expired points cannot be reinstated.</message>
  <message role="user">{{ request }}</message>
execution_settings:
  default:
    temperature: 0.2
"""


def check(cli, path, cwd):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", path, cwd=cwd)
    assert r.code in (0, 1), r.err
    return r.json()


def test_an_agent_system_prompt_with_a_macro_and_a_custom_filter(tmp_path, cli, qwen):
    (tmp_path / "researcher.yaml").write_text(AGENT)
    doc = check(cli, "researcher.yaml", tmp_path)
    assert doc["errors"] == []
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    line = AGENT.split("\n")[STARTED_LINE - 1]
    assert (f["line"], f["column"]) == (STARTED_LINE, line.index("{{ started_at") + 1)
    assert f["end_column"] == line.index("}}.") + 3
    # the template as YAML reads it; the unknown filter returns its input (the PL101 stand-in)
    block = "\n".join(l[2:] for l in AGENT.split("\n")[4:14]) + "\n"
    env = Environment()
    env.filters["humanize_time"] = lambda v: v

    def render(started):
        return env.from_string(block).render(started_at=started)

    base = render("2025-03-14 09:26:53")
    assert f["evidence"]["base_render"] == base and "name: researcher" not in base
    later = render("2025-03-14 09:27:00")
    s = shared_prefix(qwen.encode(base).ids, qwen.encode(later).ids)
    assert f["first_divergent_token"]["index"] == s and f["prompt_tokens"] == len(qwen.encode(base).ids)


def test_a_semantic_kernel_yaml_prompt_uses_its_defaults_and_message_elements(tmp_path, cli, qwen):
    (tmp_path / "chatbot.yaml").write_text(SK)
    doc = check(cli, "chatbot.yaml", tmp_path)
    assert doc["errors"] == []
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    line = SK.split("\n")[11]
    assert (f["line"], f["column"], f["variable"]) == (12, line.index("{{ trace_id") + 1, "trace_id")
    base = f["evidence"]["base_render"]
    assert base.startswith("<|im_start|>system\nYou are the travel concierge of Contoso Air. Trace 0b8e2d1c-55aa")
    assert base.endswith("<|im_start|>user\nCan I add a checked bag to my booking?<|im_end|>\n<|im_start|>assistant\n")
    b, v = qwen.encode(base).ids, qwen.encode(f["evidence"]["variant_render"]).ids
    assert f["first_divergent_token"]["index"] == shared_prefix(b, v)

    r = cli("samples", "chatbot.yaml", cwd=tmp_path)
    assert r.code == 0 and 'value = "Can I add a checked bag to my booking?"' in r.out


def test_handlebars_and_plain_yaml_are_left_alone(tmp_path, cli):
    (tmp_path / "hb.yaml").write_text(SK.replace("jinja2", "handlebars"))
    (tmp_path / "config.yaml").write_text("name: x\nretries: 3\nprompt: |\n  Be brief.\n")
    (tmp_path / "ci.yml").write_text("jobs:\n  lint:\n    steps:\n      - run: |\n          echo ${{ github.sha }}\n")
    (tmp_path / "helm.yaml").write_text("data:\n  system_prompt: |\n    You are {{ .Values.agentName }}.\n")
    from promptlint.analyzers import yaml_prompt

    for name in ("hb.yaml", "config.yaml", "ci.yml", "helm.yaml"):
        assert not yaml_prompt.handles(tmp_path / name), name
    clean = AGENT.replace(" Session started {{ started_at | humanize_time }}.", "")
    (tmp_path / "clean.yaml").write_text(clean)
    doc = check(cli, ".", tmp_path)
    assert [f["path"] for f in doc["findings"] if f["severity"] != "info"] == []
    assert doc["errors"] == []
