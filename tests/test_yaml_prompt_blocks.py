"""Issue 32, family 10: every prompt block of a YAML prompt file is analysed, each at its own lines.

An agent file with a `user_prompt:` and a `summary_prompt:`, or a registry with a list of
`- name: … template: |` items, holds several templates; only the first was analysed, so a hazard
in any other block was never reported. Each block is now linted as its own template (the other
blocks blanked, every line kept), and the file notes of all blocks are one PL101.
"""

from __future__ import annotations

AGENT = """name: travel-agent
model: gpt-4o
system_prompt: |
  You are the travel agent of Contoso Travel. Help customers plan trips, compare fares and explain
  the fare rules exactly as written. Never book anything without an explicit confirmation.
user_prompt: |
  Request received at {{ now }}.
  Follow the booking checklist: confirm names as on the passport, the dates, the airports and the
  fare class; read back the total price with taxes; ask for explicit confirmation before booking.
  Customer request: {{ request }}
summary_prompt: |
  Trace {{ trace_id }}
  Summarise the conversation for the agent handing over the case: the customer's goal, what was
  offered, what was accepted and what is still open. Keep it under five sentences and use plain words.
  Conversation: {{ conversation }}
"""

REGISTRY = """prompts:
  - name: classify
    template: |
      Classify the support ticket into billing, shipping, returns or other. Answer with the label only,
      in lower case, and nothing else. When two labels fit, pick the one the customer asks about first.
      Ticket: {{ ticket }}
  - name: reply
    template: |
      Today is {{ current_date }}.
      Write a short, friendly reply to the support ticket below. Thank the customer, answer the question
      with the policy as written and close with the agent's first name. Never promise a refund.
      Ticket: {{ ticket }}
"""


def _findings(tmp_path, cli, name, text):
    (tmp_path / name).write_text(text, encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "json", name, cwd=tmp_path)
    return r.json()["findings"]


def test_each_block_of_an_agent_file_is_reported_at_its_lines(tmp_path, cli):
    found = _findings(tmp_path, cli, "agent.yaml", AGENT)
    # `{{ now }}` is on file line 7 (column 23 = 2 spaces of YAML indentation + len("Request received at ") + 1), `{{ trace_id }}` on line 12
    assert sorted((f["code"], f["line"], f["column"], f["variable"]) for f in found if f["code"] != "PL101") == [
        ("M101", 7, 23, "now"), ("M101", 12, 9, "trace_id")]
    notes = [f["message"] for f in found if f["code"] == "PL101"]
    assert len(notes) == 1 and "`user_prompt`" in notes[0] and "`summary_prompt`" in notes[0]


def test_a_list_of_templates_is_analysed_item_by_item(tmp_path, cli):
    found = _findings(tmp_path, cli, "prompts.yaml", REGISTRY)
    # the first item is clean (the ticket comes last); the second opens with the date (line 9, column 16 = 6 spaces + len("Today is ") + 1)
    assert [(f["code"], f["line"], f["column"], f["variable"]) for f in found if f["code"] != "PL101"] == [
        ("M101", 9, 16, "current_date")]
