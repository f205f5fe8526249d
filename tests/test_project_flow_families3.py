"""The families the third unseen set (test_project_flow_unseen3.py) missed on its first run, closed in general:

- a method of a volatile value is still volatile (``datetime.now().astimezone()``, ``arrow.utcnow().to(...)``,
  ``random.Random().choice(...)``): only text methods with a known meaning (``strftime``, ``date``, ...) were
  followed before, anything else gave an unknown, static value;
- an agent's prompt given as a callable (openai-agents ``Agent(instructions=fn)``, LangGraph
  ``create_react_agent(..., prompt=fn)``, a lambda), defined here or in another module: the prompt is what the
  callable returns;
- a dict built by a comprehension over an unordered collection (``{k: SPECS[k] for k in set(SPECS) - off}``)
  is reported at the comprehension's loop, whose ``sorted(...)`` fixes it, not where the dict is iterated
  later (sorting the dict's values cannot).

M101 figures are computed here as in test_project_flow_containers (the documented samples, blocks joined by
a blank line). Each family has clean counter-examples.
"""

from __future__ import annotations

import pytest

from test_agent_call_shapes import POLICY, TS, line_of, m101_figures
from test_project_flow import PS, check, project, where
from test_project_flow_containers import SENDER, assert_m101_in

# ----------------------------------------------------------------------------- methods of volatile values

METHODS = {
    "astimezone().strftime": 'datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")',
    "astimezone(tz)": "datetime.now().astimezone(timezone.utc)",
    "replace then astimezone": "datetime.now().replace(microsecond=0).astimezone()",
}


@pytest.mark.parametrize("style", sorted(METHODS))
def test_a_method_of_a_volatile_value_is_volatile(tmp_path, qwen, style):
    files = project(tmp_path, {"prompts.py": (
        "from datetime import datetime, timezone\n\n\ndef system_prompt():\n"
        f"    stamp = {METHODS[style]}\n    return f\"Local time: {{stamp}}\\n\" + {PS}\n"), "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", "stamp = ", "Local time: {}\n" + POLICY, TS)


def test_a_random_generators_choice_is_volatile(tmp_path):
    files = project(tmp_path, {"prompts.py": (
        "import random\n\nOPENERS = [\"Hi!\", \"Hello!\", \"Welcome!\"]\n\n\ndef system_prompt():\n"
        f"    return random.Random().choice(OPENERS) + \"\\n\" + {PS}\n"), "client.py": SENDER})
    assert where(check(tmp_path, "client.py")) == [("M101", "prompts.py", line_of(files["prompts.py"], "random.Random()"))]


def test_a_method_of_a_volatile_value_after_the_question_is_clean(tmp_path):
    project(tmp_path, {"bot.py": f'''
        from datetime import datetime

        import anthropic

        client = anthropic.Anthropic()


        def ask(question):
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system={PS}, messages=[
                {{"role": "user", "content": question + f" (sent {{datetime.now().astimezone():%H:%M}})"}}])
        '''})
    assert check(tmp_path, "bot.py") == []


# ----------------------------------------------------------------------------- a prompt given as a callable

CALLABLE_PROMPT = '''
    from datetime import datetime

    POLICY = {PS}


    def support_instructions(ctx, agent):
        return f"Session opened {{datetime.now():%Y-%m-%d %H:%M:%S}}.\\n" + POLICY
    '''

CALLERS = {
    "openai-agents instructions=<imported function>": (
        "from agents import Agent\n\nfrom prompts import support_instructions\n\n"
        "support = Agent(name=\"Support\", model=\"gpt-4.1-mini\", instructions=support_instructions)\n"),
    "LangGraph prompt=<module attribute>": (
        "from langgraph.prebuilt import create_react_agent\n\nimport prompts\n\n\ndef build(model, tools):\n"
        "    return create_react_agent(model, tools, prompt=prompts.support_instructions)\n"),
    "instructions=<lambda>": (
        "from agents import Agent\n\nfrom prompts import support_instructions\n\n"
        "support = Agent(name=\"Support\", instructions=lambda ctx, agent: support_instructions(ctx, agent))\n"),
}


@pytest.mark.parametrize("style", sorted(CALLERS))
def test_an_agent_prompt_given_as_a_callable(tmp_path, qwen, style):
    files = project(tmp_path, {"prompts.py": CALLABLE_PROMPT.format(PS=PS), "support.py": CALLERS[style]})
    findings = check(tmp_path, "support.py")
    assert where(findings) == [("M101", "prompts.py", line_of(files["prompts.py"], "datetime.now()"))]
    system = "Session opened {}.\n" + POLICY
    s, lost = m101_figures(qwen, system.format(TS[0]), system.format(TS[1]))
    assert findings[0].first_divergent_token.index == s and findings[0].arithmetic.lost_blocks == lost and lost > 20


def test_a_callable_prompt_with_the_customer_after_the_policy_is_clean(tmp_path):
    project(tmp_path, {"prompts.py": f'''
        POLICY = {PS}


        def support_instructions(ctx, agent):
            return POLICY + f"\\nThe customer is {{ctx.context.name}}."
        ''', "support.py": CALLERS["openai-agents instructions=<imported function>"]})
    assert check(tmp_path, "support.py") == []


def test_a_string_constant_passed_as_instructions_is_not_called(tmp_path):
    project(tmp_path, {"prompts.py": f"support_instructions = {PS}\n", "support.py": CALLERS[
        "openai-agents instructions=<imported function>"]})
    assert check(tmp_path, "support.py") == []


# ----------------------------------------------------------------------------- a dict built over an unordered collection

TABLES = {
    "set difference": ("def active(disabled=()):\n"
                       "    chosen = {name: SPECS[name] for name in set(SPECS) - set(disabled)}\n"
                       "    return list(chosen.values())\n", "set(SPECS) - set(disabled)"),
    "keys() & set": ("def active(enabled=(\"search\",)):\n"
                     "    chosen = {name: SPECS[name] for name in SPECS.keys() & set(enabled)}\n"
                     "    return [spec for spec in chosen.values()]\n", "SPECS.keys() & set(enabled)"),
    "set-typed parameter": ("def active(enabled: set[str] = frozenset()):\n"
                            "    chosen = {name: SPECS[name] for name in enabled}\n"
                            "    return list(chosen.values())\n", "for name in enabled"),
}

SPECS = '''SPECS = {
    "search": {"name": "search", "description": "Search the catalogue.", "input_schema": {"type": "object"}},
    "orders": {"name": "orders", "description": "Look up an order.", "input_schema": {"type": "object"}},
}


'''

TOOL_SENDER = f'''
    import anthropic

    from tools import active

    client = anthropic.Anthropic()


    def ask(question):
        return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system={PS}, tools=active(),
                                      messages=[{{"role": "user", "content": question}}])
    '''


@pytest.mark.parametrize("style", sorted(TABLES))
def test_a_dict_built_over_an_unordered_collection_is_reported_at_its_loop(tmp_path, style):
    body, needle = TABLES[style]
    files = project(tmp_path, {"tools.py": SPECS + body, "client.py": TOOL_SENDER})
    findings = check(tmp_path, "client.py")
    assert where(findings) == [("M202", "tools.py", line_of(files["tools.py"], needle))]
    iterated = needle.split(" in ")[-1]
    assert findings[0].help == f"iterate `sorted({iterated})`"


def test_a_dict_built_over_a_sorted_collection_is_clean(tmp_path):
    project(tmp_path, {"tools.py": SPECS + (
        "def active(disabled=()):\n    chosen = {name: SPECS[name] for name in sorted(set(SPECS) - set(disabled))}\n"
        "    return list(chosen.values())\n"), "client.py": TOOL_SENDER})
    assert check(tmp_path, "client.py") == []


def test_a_dict_built_over_a_set_and_only_looked_up_is_clean(tmp_path):
    project(tmp_path, {"tools.py": SPECS + (
        "def active(disabled=()):\n    chosen = {name: SPECS[name] for name in set(SPECS) - set(disabled)}\n"
        "    return [chosen[\"search\"]]\n"), "client.py": TOOL_SENDER})
    assert check(tmp_path, "client.py") == []
