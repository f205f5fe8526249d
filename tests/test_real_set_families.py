"""Issue 32: the families the real-template set (tests/data/real_templates2) showed on its first run,
each on a template written here in the style of the public file that showed it.

- an input whose method the template calls (smolagents: `tool.to_tool_calling_prompt()`) gets a
  callable stand-in: the file is analysed instead of failing with E004;
- a YAML prompts file's Jinja blocks are all prompts, whatever their keys (`task:`, `initial_plan:`);
- a record looked up for the person asking (`customer_info`, `user_profile`) is per-request;
- M107 counts a short instruction sentence ("Reply with only the intent string."), not only lines of
  40 characters;
- a stand-in with a shape every real value shares (a URL) keeps it in the next request's variant;
- M201 leaves a mapping whose keys never reach the prompt (a registry iterated with `.values()`).
"""

from __future__ import annotations

import json


def _check(tmp_path, cli, name: str, text: str) -> dict:
    (tmp_path / name).write_text(text, encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "json", name, cwd=tmp_path)
    assert r.code in (0, 1), r.err
    return r.json()


def _codes(doc) -> list:
    return sorted((f["code"], f["line"]) for f in doc["findings"] if not f["code"].startswith("PL"))


AGENT = """system_prompt: |-
  You are an expert assistant who can solve any task using tool calls. You will be given a task to
  solve as best you can. To do so, you have been given access to the tools listed below, and you
  call them one at a time, reading each observation before you decide on the next action.
  {%- for tool in tools.values() %}
  - {{ tool.to_tool_calling_prompt() }}
  {%- endfor %}
  Always provide a tool call, use the right arguments, and never repeat a call you already made.
managed_agent:
  task: |-
    You're a helpful agent named '{{name}}'. You have been submitted this task by your manager.
    Task:
    {{task}}
    Give as much information as possible so that your manager has a clear understanding of the answer.
    Your final answer must contain a short version, an extremely detailed version and any context.
    Put everything in your final_answer tool: what you do not pass to it will be lost for the manager.
"""


def test_an_agent_prompts_file_is_analysed_block_by_block(tmp_path, cli):
    doc = _check(tmp_path, cli, "agent.yaml", AGENT)
    assert doc["errors"] == [] and not [f for f in doc["findings"] if f["code"].startswith("E")]
    # `task:` is a prompt of this file: the static instructions after {{task}} (line 13) start at line 14
    assert _codes(doc) == [("M107", 14)]
    # the tools are application objects: `.to_tool_calling_prompt()` renders as sample text
    notes = " ".join(f["message"] for f in doc["findings"] if f["code"] == "PL101")
    assert "`system_prompt`" in notes and "`task`" in notes


INTENT = """You are given a list of orders from a customer and a statement from the customer. Identify
the intent the customer has with their statement: product return, product exchange, general question,
product question or other. If the intent is product related, also give the order number and the item.
Answer in valid yaml with the fields intent, order_number, item and item_number, and nothing else.

The customer information and their orders:
{{customer_info}}

What is the customer's intent here?
Pick one of the five intents above.
Reply with only the intent string.
Do not explain your choice to anyone.
Never invent an order number.
Keep the order numbers exactly as given.
Use lower case for the intent.
"""


def test_a_customer_record_is_per_request_and_short_instructions_count(tmp_path, cli):
    doc = _check(tmp_path, cli, "intent.jinja2", INTENT)
    # seven short sentences after the record (lines 9-15), none of 40 characters: M107 at line 9
    assert _codes(doc) == [("M107", 9)]
    r = cli("samples", "intent.jinja2", cwd=tmp_path)
    assert 'kind = "per-request"' in r.out.split("[variables.customer_info]")[1].split("[variables")[0]


def test_a_url_stand_in_keeps_its_shape_in_the_variant():
    from promptlint.scenarios.values import per_request_variant

    from promptlint.scenarios.values import _FAMILIES

    first = _FAMILIES["url"][0]
    assert first.startswith("https://") and per_request_variant(first) == _FAMILIES["url"][1]


REGISTRY = """You are the coordinator of a team. Hand each part of the task to the member who fits it best,
and say in one sentence why you chose that member. Never do a member's work yourself, and never hand
the same part to two members. When every part is done, merge the answers into one report for the user.
Team members:
{%- for agent in managed_agents.values() %}
- {{ agent.name }}: {{ agent.description }} Takes inputs: {{ agent.inputs }}
{%- endfor %}
Settings:{% for key, value in settings.items() %} {{ key }}={{ value }}{% endfor %}
Task: {{ task }}
"""


def test_a_registry_iterated_by_values_is_not_a_key_order_hazard(tmp_path, cli):
    doc = _check(tmp_path, cli, "coordinator.j2", REGISTRY)
    # managed_agents' keys never reach the prompt (`.values()`): no M201; settings' keys do (line 8)
    assert [(f["variable"], f["line"]) for f in doc["findings"] if f["code"] == "M201"] == [("settings", 8)]
