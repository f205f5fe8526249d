"""Families the flow did not follow before issue 29's third round, each closed in general and tested with
variants in a two- or three-module project (prompts.py builds, client.py sends):

- values through containers: a list or dict of prompt parts or of objects iterated by a comprehension or a
  loop, joined, indexed by a variable (a mode switch), its ``.values()``/``.items()``; objects made in a loop;
  a string grown with ``+=`` in a loop over known items (unrolled, in order);
- assignments in the arms of an ``if``/``try``/``match`` (and either arm of a conditional expression): each
  may be the value, so a volatile arm is found whatever its place in the source;
- ``repr()``, ``!r`` and a dataclass's generated repr of an object of the linted files;
- ``string.Template(...).substitute``/``safe_substitute`` and ``str.format_map``;
- a host name (``socket.gethostname()``): one value per replica, measured like a process id;
- pydantic-ai's ``@agent.system_prompt`` functions, in any module: the agent's own prompt, then each
  registered function's text in source order, as one system prompt;
- a module that only hands work to its project (``Bot().answer(q)``, ``answer(question)``) linted alone:
  the hazard is followed into the module that makes it and reported there;
- order findings where the collection's place was not known: a string grown in a loop over a set, a
  ``documents=`` list built from one.

M101 figures are computed here from the test's own render (blocks joined by a blank line, the documented
samples): S = the first divergent token, lost = floor(min(ideal, P - 1) / B) - floor(min(S, P - 1) / B).
M203 figures likewise with the three documented stand-in items in order and reversed (docs/python.md).
Every family has clean counter-examples.
"""

from __future__ import annotations

import sys

import pytest

from test_agent_call_shapes import DAY, POLICY, QUESTION, TS, line_of, m101_figures
from test_project_flow import EPOCH, PS, check, project, where
from test_project_flow_orders import ITEMS, figures

ID = ("7f3c9a2e-4b1d-4e8a-9c6f-2d5e8b1a0c34", "c1a9e4d2-8f3b-4a7c-b5e6-9d0f1e2a3b4c")  # the documented id samples

SENDER = '''
    import anthropic

    from prompts import system_prompt

    client = anthropic.Anthropic()


    def ask(question):
        return client.messages.create(model="claude-sonnet-4-5", max_tokens=200, system=system_prompt(),
                                      messages=[{"role": "user", "content": question}])
    '''


def assert_m101_in(tok, findings, files, where_, needle, system, samples):
    """One M101 in ``where_`` at the line of ``needle``, with the figures of ``system`` (``{}``: the volatile
    value) followed by the user's question."""
    src = files[where_]
    assert [(f.code, f.path.rsplit("/", 1)[-1], f.line) for f in findings] == [("M101", where_, line_of(src, needle))]
    base = system.format(samples[0]) + "\n\n" + QUESTION[0]
    variant = system.format(samples[1]) + "\n\n" + QUESTION[0]
    other = system.format(samples[0]) + "\n\n" + QUESTION[1]
    s, lost = m101_figures(tok, base, variant, other)
    f = findings[0]
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == lost and lost > 20


# ----------------------------------------------------------------------------- containers

CONTAINERS = {
    "comprehension over objects": ('''
        from datetime import datetime

        POLICY = {PS}


        class Section:
            def __init__(self, title, body):
                self.title = title
                self.body = body

            def render(self):
                return f"## {{self.title}}\\n{{self.body}}"


        def sections():
            return [Section("Clock", f"{{datetime.now()}}"), Section("Policy", POLICY)]


        def system_prompt():
            return "\\n\\n".join(s.render() for s in sections())
        ''', "datetime.now()", "## Clock\n{}\n\n## Policy\n" + POLICY, TS),
    "dict values joined": ('''
        import time

        POLICY = {PS}


        def system_prompt():
            parts = {{"clock": "Epoch " + str(time.time()), "policy": POLICY}}
            return "\\n".join(parts.values())
        ''', "time.time()", "Epoch {}\n" + POLICY, EPOCH),
    "dict items formatted": ('''
        from datetime import date

        POLICY = {PS}


        def system_prompt():
            fields = {{"Date": str(date.today()), "Policy": POLICY}}
            return "\\n".join(f"{{k}}: {{v}}" for k, v in fields.items())
        ''', "date.today()", "Date: {}\nPolicy: " + POLICY, DAY),
    "indexed by a mode": ('''
        from datetime import date

        POLICY = {PS}
        PROMPTS = {{"support": f"Today is {{date.today()}}.\\n" + POLICY, "sales": POLICY}}


        def system_prompt(mode="sales"):
            return PROMPTS[mode]
        ''', "date.today()", "Today is {}.\n" + POLICY, DAY),
    "objects made in a loop": ('''
        from datetime import date

        POLICY = {PS}


        class Part:
            def __init__(self, text):
                self.text = text


        def system_prompt():
            parts = []
            for body in (f"Today: {{date.today()}}", POLICY):
                parts.append(Part(body))
            return "\\n".join(p.text for p in parts)
        ''', "date.today()", "Today: {}\n" + POLICY, DAY),
    "string grown in a loop": ('''
        from datetime import datetime

        POLICY = {PS}


        def system_prompt():
            text = ""
            for piece in [f"Now {{datetime.now()}}", POLICY]:
                text += piece + "\\n"
            return text
        ''', "datetime.now()", "Now {}\n" + POLICY + "\n", TS),
}


@pytest.mark.parametrize("style", sorted(CONTAINERS))
def test_values_through_containers(tmp_path, qwen, style):
    source, needle, system, samples = CONTAINERS[style]
    files = project(tmp_path, {"prompts.py": source.format(PS=PS), "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", needle, system, samples)


def test_message_objects_turned_into_dicts(tmp_path, qwen):
    files = project(tmp_path, {"msgs.py": f'''
        from dataclasses import dataclass
        from datetime import datetime

        POLICY = {PS}


        @dataclass
        class Msg:
            role: str
            content: str

            def to_dict(self):
                return {{"role": self.role, "content": self.content}}


        def build(question):
            msgs = [Msg("system", f"Time: {{datetime.now()}}\\n" + POLICY), Msg("user", question)]
            return [m.to_dict() for m in msgs]
        ''', "client.py": '''
        from openai import OpenAI

        from msgs import build

        client = OpenAI()


        def ask(question):
            return client.chat.completions.create(model="gpt-4o", messages=build(question))
        '''})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "msgs.py", "datetime.now()", "Time: {}\n" + POLICY, TS)


CLEAN_CONTAINERS = {
    "static parts joined": '''
        RULES = ["Be kind.", "Be brief."]


        def system_prompt():
            return "\\n".join(f"{{i}}. {{r}}" for i, r in enumerate(RULES)) + "\\n" + {PS}
        ''',
    "modes all static": '''
        PROMPTS = {{"support": "Support.\\n" + {PS}, "sales": "Sales.\\n" + {PS}}}


        def system_prompt(mode="sales"):
            return PROMPTS[mode]
        ''',
    "loop over sorted set": '''
        def system_prompt(tags=("x", "y")):
            text = {PS} + "\\n"
            for t in sorted(set(tags)):
                text += f"- {{t}}\\n"
            return text
        ''',
    "the date last": '''
        from datetime import date


        def system_prompt():
            parts = [{PS}, f"Today: {{date.today()}}"]
            return "\\n".join(p for p in parts)
        ''',
}


@pytest.mark.parametrize("style", sorted(CLEAN_CONTAINERS))
def test_containers_of_stable_parts_are_clean(tmp_path, style):
    project(tmp_path, {"prompts.py": CLEAN_CONTAINERS[style].format(PS=PS), "client.py": SENDER})
    assert check(tmp_path, "client.py") == []


# ----------------------------------------------------------------------------- branches

BRANCHES = {
    "if/else, the volatile arm first": '''
        from datetime import date

        POLICY = {PS}


        def system_prompt(mode="plain"):
            if mode == "dated":
                head = f"Today is {{date.today()}}.\\n"
            elif mode == "team":
                head = "Team support.\\n"
            else:
                head = ""
            return head + POLICY
        ''',
    "try/except, the volatile arm first": '''
        from datetime import date

        POLICY = {PS}


        def system_prompt():
            try:
                head = f"Today is {{date.today()}}.\\n"
            except ValueError:
                head = ""
            return head + POLICY
        ''',
    "conditional expression, the volatile arm second": '''
        from datetime import date

        POLICY = {PS}


        def system_prompt(dated=False):
            head = "" if not dated else f"Today is {{date.today()}}.\\n"
            return head + POLICY
        ''',
}
if sys.version_info >= (3, 10):
    BRANCHES["match"] = '''
        from datetime import date

        POLICY = {PS}


        def system_prompt(mode="plain"):
            match mode:
                case "dated":
                    head = f"Today is {{date.today()}}.\\n"
                case _:
                    head = "Support.\\n"
            return head + POLICY
        '''


@pytest.mark.parametrize("style", sorted(BRANCHES))
def test_every_arm_may_be_the_value(tmp_path, qwen, style):
    files = project(tmp_path, {"prompts.py": BRANCHES[style].format(PS=PS), "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", "date.today()", "Today is {}.\n" + POLICY, DAY)


def test_an_assignment_after_the_if_hides_both_arms(tmp_path):
    project(tmp_path, {"prompts.py": f'''
        from datetime import date


        def system_prompt(dated=False):
            if dated:
                head = f"Today is {{date.today()}}.\\n"
            else:
                head = "Support.\\n"
            head = "Nordwind support.\\n"
            return head + {PS}
        ''', "client.py": SENDER})
    assert check(tmp_path, "client.py") == []


# ----------------------------------------------------------------------------- repr

REPRS = {
    "!r": 'f"{Ctx()!r}\\n"',
    "repr()": 'repr(Ctx()) + "\\n"',
    "str() falls back to __repr__": 'str(Ctx()) + "\\n"',
    "{!r} in str.format": '"{!r}\\n".format(Ctx())',
}


@pytest.mark.parametrize("style", sorted(REPRS))
def test_an_object_rendered_by_its_repr(tmp_path, qwen, style):
    files = project(tmp_path, {"prompts.py": f'''
        from datetime import datetime


        class Ctx:
            def __repr__(self):
                return f"Ctx(at={{datetime.now()}})"


        def system_prompt():
            return {REPRS[style]} + {PS}
        ''', "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", "datetime.now()", "Ctx(at={})\n" + POLICY, TS)


def test_a_dataclass_repr_holds_its_fields(tmp_path, qwen):
    files = project(tmp_path, {"prompts.py": f'''
        from dataclasses import dataclass, field
        from datetime import date


        @dataclass
        class Session:
            team: str
            day: str = field(default_factory=lambda: str(date.today()))


        def system_prompt():
            return f"{{Session('core')!r}}\\n" + {PS}
        ''', "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", "date.today()",
                   "Session(team='core', day='{}')\n" + POLICY, DAY)


def test_a_dataclass_of_constants_rendered_is_clean(tmp_path):
    project(tmp_path, {"prompts.py": f'''
        from dataclasses import dataclass


        @dataclass
        class Cfg:
            team: str = "core"


        def system_prompt():
            return f"{{Cfg()!r}} {{Cfg()}}\\n" + {PS}
        ''', "client.py": SENDER})
    assert check(tmp_path, "client.py") == []


# ----------------------------------------------------------------------------- templates and format_map

SUBSTITUTIONS = {
    "Template.substitute": ('from string import Template\n\nT = Template("Today is $day.\\n" + {PS})\n\n\n'
                            'def system_prompt():\n    return T.substitute(day=date.today())\n'),
    "Template.safe_substitute(mapping)": ('import string\n\n\ndef system_prompt():\n'
                                          '    return string.Template("Today is ${{day}}.\\n" + {PS}).safe_substitute({{"day": date.today()}})\n'),
    "str.format_map": ('def system_prompt():\n'
                       '    return ("Today is {{day}}.\\n" + {PS}).format_map({{"day": date.today()}})\n'),
}


@pytest.mark.parametrize("style", sorted(SUBSTITUTIONS))
def test_substituted_templates(tmp_path, qwen, style):
    source = "from datetime import date\n" + SUBSTITUTIONS[style].format(PS=PS)
    files = project(tmp_path, {"prompts.py": source, "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", "date.today()", "Today is {}.\n" + POLICY, DAY)


def test_a_template_with_the_date_after_the_question_is_clean(tmp_path):
    project(tmp_path, {"bot.py": f'''
        from datetime import date
        from string import Template

        import anthropic

        client = anthropic.Anthropic()
        USER = Template("$question\\n(asked on $day)")


        def answer(question):
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=100, system={PS},
                messages=[{{"role": "user", "content": USER.substitute(question=question, day=date.today())}}])
        '''})
    assert check(tmp_path, "bot.py") == []


# ----------------------------------------------------------------------------- host names

def test_a_host_name_is_one_value_per_replica(tmp_path, qwen):
    files = project(tmp_path, {"prompts.py": f'''
        import socket


        def system_prompt():
            return f"Served by {{socket.gethostname()}}.\\n" + {PS}
        ''', "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", "gethostname", "Served by {}.\n" + POLICY, ID)


def test_environment_configuration_is_static(tmp_path):
    project(tmp_path, {"prompts.py": f'''
        import os

        REGION = os.environ.get("REGION", "eu")


        def system_prompt():
            return f"Region {{REGION}}, team {{os.getenv('TEAM', 'core')}}, {{os.environ['TIER']}}.\\n" + {PS}
        ''', "client.py": SENDER})
    assert check(tmp_path, "client.py") == []


# ----------------------------------------------------------------------------- pydantic-ai decorators

def test_decorated_system_prompts_are_one_prompt_in_registration_order(tmp_path, qwen):
    files = project(tmp_path, {"agent.py": '''
        from pydantic_ai import Agent

        agent = Agent("openai:gpt-4o")
        ''', "prompts.py": f'''
        from datetime import date

        from agent import agent


        @agent.system_prompt
        def add_date() -> str:
            return f"Today is {{date.today()}}."


        @agent.system_prompt
        def policy() -> str:
            return {PS}
        '''})
    findings = check(tmp_path, "prompts.py")
    assert where(findings) == [("M101", "prompts.py", line_of(files["prompts.py"], "date.today()"))]
    s, lost = m101_figures(qwen, f"Today is {DAY[0]}.\n\n{POLICY}", f"Today is {DAY[1]}.\n\n{POLICY}")
    assert findings[0].first_divergent_token.index == s and findings[0].arithmetic.lost_blocks == lost and lost > 20


def test_a_decorated_date_after_the_agents_own_prompt_is_clean(tmp_path):
    project(tmp_path, {"agent.py": f'''
        from pydantic_ai import Agent

        agent = Agent("openai:gpt-4o", system_prompt={PS})
        ''', "prompts.py": '''
        from datetime import date

        from agent import agent


        @agent.system_prompt
        def add_date() -> str:
            return f"Today is {date.today()}."
        '''})
    assert check(tmp_path, "prompts.py") == []


# ----------------------------------------------------------------------------- a module that only hands work on

BOT = {
    "prompts.py": f'''
        from datetime import date


        def build_prompt():
            return f"Today is {{date.today()}}.\\n" + {PS}
        ''',
    "bot.py": '''
        import anthropic

        from prompts import build_prompt


        class Bot:
            def __init__(self, model="claude-sonnet-4-5"):
                self.client = anthropic.Anthropic()
                self.model = model

            def answer(self, question):
                return self.client.messages.create(model=self.model, max_tokens=100, system=build_prompt(),
                                                   messages=[{"role": "user", "content": question}])


        def answer(question):
            return Bot().answer(question)
        ''',
}

CALLERS = {
    "Bot().answer(question)": "from bot import Bot\n\n\ndef main(question):\n    return Bot().answer(question)\n",
    "a module-level object": "from bot import Bot\n\nbot = Bot()\n\n\ndef handle(q):\n    return bot.answer(q)\n",
    "a function that hands on": "from bot import answer\n\n\ndef handle(question):\n    return answer(question)\n",
    "a module attribute": "import bot\n\n\ndef handle(req):\n    return bot.answer(req.message)\n",
    "a script's literal": 'from bot import Bot\n\nif __name__ == "__main__":\n    print(Bot().answer("Where is my order?"))\n',
}


@pytest.mark.parametrize("style", sorted(CALLERS))
def test_linting_the_caller_alone_follows_into_its_project(tmp_path, style):
    files = project(tmp_path, {**BOT, "main.py": CALLERS[style]})
    findings = check(tmp_path, "main.py")
    assert where(findings) == [("M101", "prompts.py", line_of(files["prompts.py"], "date.today()"))]
    assert any(n.startswith("sent by `self.client.messages.create(...)` at ") and n.endswith("bot.py:12")
               for n in findings[0].notes)


def test_a_caller_of_a_stable_prompt_is_clean(tmp_path):
    project(tmp_path, {**BOT, "prompts.py": f"def build_prompt():\n    return {PS}\n",
                       "main.py": CALLERS["Bot().answer(question)"]})
    assert check(tmp_path, "main.py") == []


# ----------------------------------------------------------------------------- order figures where the place was unknown

def test_a_string_grown_over_a_set_is_measured(tmp_path, qwen):
    files = project(tmp_path, {"prompts.py": f'''
        def system_prompt(tags=("billing", "returns")):
            text = "Topics:\\n"
            for t in set(tags):
                text += f"- {{t}}\\n"
            return text + {PS}
        ''', "client.py": SENDER})
    findings = check(tmp_path, "client.py")
    assert where(findings) == [("M203", "prompts.py", line_of(files["prompts.py"], "for t in set(tags)"))]
    render = lambda items, q: "Topics:\n" + "".join(items) + POLICY + "\n\n" + q  # noqa: E731
    s, lost, ideal = figures(qwen, render(ITEMS, QUESTION[0]), render(ITEMS[::-1], QUESTION[0]), render(ITEMS, QUESTION[1]))
    f = findings[0]
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == lost and f.arithmetic.ideal_eligible_blocks == ideal and lost > 20


def test_documents_from_a_set_are_measured_after_the_system_prompt(tmp_path, qwen):
    files = project(tmp_path, {"rag.py": f'''
        from openai import OpenAI

        client = OpenAI()


        def ask(question, docs):
            return client.chat.completions.create(
                model="command-r", messages=[{{"role": "system", "content": {PS}}}, {{"role": "user", "content": question}}],
                documents=[{{"text": d}} for d in set(docs)])
        '''})
    findings = check(tmp_path, "rag.py")
    assert where(findings) == [("M203", "rag.py", line_of(files["rag.py"], "for d in set(docs)"))]
    render = lambda items, q: POLICY + "\n\n" + "\n\n".join(items) + "\n\n" + q  # noqa: E731
    s, lost, ideal = figures(qwen, render(ITEMS, QUESTION[0]), render(ITEMS[::-1], QUESTION[0]), render(ITEMS, QUESTION[1]))
    f = findings[0]
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == lost and f.arithmetic.ideal_eligible_blocks == ideal and lost >= 1


# ----------------------------------------------------------------------------- few-shot examples in a random order

FEW_SHOT = {
    "random.shuffle in place": "shots = list(EXAMPLES)\n    random.shuffle(shots)\n    return \"\\n\\n\".join(shots)",
    "random.sample joined": "return \"\\n\\n\".join(random.sample(EXAMPLES, 2))",
}


@pytest.mark.parametrize("style", sorted(FEW_SHOT))
def test_few_shot_examples_in_a_random_order(tmp_path, qwen, style):
    body = FEW_SHOT[style]
    files = project(tmp_path, {"prompts.py": (
        "import random\n\nEXAMPLES = [\"Q: a\\nA: b\", \"Q: c\\nA: d\", \"Q: e\\nA: f\"]\n\n\n"
        f"def examples():\n    {body}\n\n\ndef system_prompt():\n    return examples() + \"\\n\" + {PS}\n"),
        "client.py": SENDER})
    needle = "random.shuffle" if "shuffle" in style else "random.sample"
    # the order is one random value: measured with the documented number samples in its place
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", needle, "{}\n" + POLICY, EPOCH)


def test_sorted_few_shot_examples_are_clean(tmp_path):
    project(tmp_path, {"prompts.py": (
        "EXAMPLES = {\"Q: a\\nA: b\", \"Q: c\\nA: d\"}\n\n\n"
        f"def system_prompt():\n    return \"\\n\\n\".join(sorted(EXAMPLES)) + \"\\n\" + {PS}\n"), "client.py": SENDER})
    assert check(tmp_path, "client.py") == []


# ----------------------------------------------------------------------------- LangChain prompt templates filled later

TEMPLATES = {
    "(prompt | llm).invoke(variables)": (
        'prompt = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", "{question}")])\n'
        'chain = prompt | ChatOpenAI(model="gpt-4o")\n\n\n'
        'def answer(question):\n    return chain.invoke({"question": question, "today": str(date.today())})\n'),
    "llm.invoke(prompt.format_messages(...))": (
        'prompt = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", "{question}")])\n'
        'llm = ChatOpenAI(model="gpt-4o")\n\n\n'
        'def answer(question):\n    return llm.invoke(prompt.format_messages(today=date.today(), question=question))\n'),
    "prompt.partial(...) then a chain": (
        'prompt = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", "{question}")]).partial(\n'
        '    today=str(date.today()))\nllm = ChatOpenAI(model="gpt-4o")\n\n\n'
        'def answer(question):\n    return (prompt | llm).invoke({"question": question})\n'),
}


@pytest.mark.parametrize("style", sorted(TEMPLATES))
def test_a_langchain_template_filled_with_a_clock(tmp_path, qwen, style):
    source = ("from datetime import date\n\nfrom langchain_core.prompts import ChatPromptTemplate\n"
              "from langchain_openai import ChatOpenAI\n\n"
              f"SYSTEM = \"Today is {{today}}.\\n\" + {PS}\n" + TEMPLATES[style])
    files = project(tmp_path, {"chain.py": source})
    assert_m101_in(qwen, check(tmp_path, "chain.py"), files, "chain.py", "date.today()", "Today is {}.\n" + POLICY, DAY)


def test_a_langchain_template_with_only_the_question_is_clean(tmp_path):
    project(tmp_path, {"chain.py": (
        "from datetime import date\n\nfrom langchain_core.prompts import ChatPromptTemplate\n"
        "from langchain_openai import ChatOpenAI\n\n"
        f"prompt = ChatPromptTemplate.from_messages([(\"system\", {PS}), (\"human\", \"{{question}} (asked {{day}})\")])\n"
        "chain = prompt | ChatOpenAI(model=\"gpt-4o\")\n\n\n"
        "def answer(question):\n    return chain.invoke({\"question\": question, \"day\": str(date.today())})\n")})
    assert check(tmp_path, "chain.py") == []


# ----------------------------------------------------------------------------- more ways to pick and assemble parts

PICKS = {
    "a class attribute through the class": (
        "class Prompts:\n    SYSTEM = f\"Today is {date.today()}.\\n\" + POLICY\n\n\n"
        "def system_prompt():\n    return Prompts.SYSTEM\n"),
    "an enum member's value": (
        "from enum import Enum\n\n\nclass Prompt(str, Enum):\n    SUPPORT = f\"Today is {date.today()}.\\n\" + POLICY\n"
        "    SALES = \"Sales.\"\n\n\ndef system_prompt():\n    return Prompt.SUPPORT.value\n"),
    "dict.get with a variable key": (
        "PROMPTS = {\"support\": f\"Today is {date.today()}.\\n\" + POLICY}\n\n\n"
        "def system_prompt(mode=\"other\"):\n    return PROMPTS.get(mode, POLICY)\n"),
    "filter(None, parts) joined": (
        "def system_prompt(extra=None):\n    return \"\\n\".join(filter(None, [f\"Today is {date.today()}.\", extra, POLICY]))\n"),
    "map(lambda, parts) joined": (
        "def system_prompt():\n    return \"\\n\".join(map(lambda p: p.strip(), [f\" Today is {date.today()}. \", POLICY]))\n"),
    "io.StringIO writes": (
        "import io\n\n\ndef system_prompt():\n    buf = io.StringIO()\n    buf.write(f\"Today is {date.today()}.\\n\")\n"
        "    buf.write(POLICY)\n    return buf.getvalue()\n"),
}


@pytest.mark.parametrize("style", sorted(PICKS))
def test_parts_picked_and_assembled(tmp_path, qwen, style):
    source = f"from datetime import date\n\nPOLICY = {PS}\n\n" + PICKS[style]
    files = project(tmp_path, {"prompts.py": source, "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", "date.today()", "Today is {}.\n" + POLICY, DAY)


def test_a_static_class_attribute_and_a_known_key_are_clean(tmp_path):
    project(tmp_path, {"prompts.py": (
        f"from datetime import date\n\nPOLICY = {PS}\nPROMPTS = {{\"support\": POLICY, \"dated\": f\"Today is {{date.today()}}.\"}}\n\n\n"
        "class Prompts:\n    SYSTEM = POLICY\n\n\n"
        "def system_prompt():\n    return Prompts.SYSTEM + PROMPTS.get(\"support\", \"\")\n"), "client.py": SENDER})
    assert check(tmp_path, "client.py") == []


# ----------------------------------------------------------------------------- a function picked from a table

DISPATCH = {
    "BUILDERS[mode]()": "def system_prompt(mode=\"sales\"):\n    return BUILDERS[mode]()\n",
    "BUILDERS.get(mode, default) bound, then called": (
        "def system_prompt(mode=\"sales\"):\n    build = BUILDERS.get(mode, sales)\n    return build()\n"),
}


@pytest.mark.parametrize("style", sorted(DISPATCH))
def test_a_builder_picked_from_a_table(tmp_path, qwen, style):
    source = (f"from datetime import date\n\nPOLICY = {PS}\n\n\ndef support():\n"
              "    return f\"Today is {date.today()}.\\n\" + POLICY\n\n\ndef sales():\n    return POLICY\n\n\n"
              "BUILDERS = {\"support\": support, \"sales\": sales}\n\n\n" + DISPATCH[style])
    files = project(tmp_path, {"prompts.py": source, "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", "date.today()", "Today is {}.\n" + POLICY, DAY)


def test_a_table_of_static_builders_is_clean(tmp_path):
    project(tmp_path, {"prompts.py": (
        f"POLICY = {PS}\n\n\ndef support():\n    return \"Support.\\n\" + POLICY\n\n\ndef sales():\n    return POLICY\n\n\n"
        "BUILDERS = {\"support\": support, \"sales\": sales}\n\n\ndef system_prompt(mode=\"sales\"):\n    return BUILDERS[mode]()\n"),
        "client.py": SENDER})
    assert check(tmp_path, "client.py") == []


def test_a_method_of_an_object_picked_from_a_table(tmp_path, qwen):
    files = project(tmp_path, {"agents.py": f'''
        from datetime import date

        POLICY = {PS}


        class Sales:
            def system(self):
                return POLICY


        class Support:
            def system(self):
                return f"Today is {{date.today()}}.\\n" + POLICY


        AGENTS = {{"sales": Sales(), "support": Support()}}
        ''', "prompts.py": '''
        from agents import AGENTS


        def system_prompt(mode="sales"):
            return AGENTS[mode].system()
        ''', "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "agents.py", "date.today()", "Today is {}.\n" + POLICY, DAY)
