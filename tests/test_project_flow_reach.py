"""Families of agent code the Python flow did not follow at the last stop, each closed in general, with a
clean counter-example per family:

- containers: a long list of known items (over the 32 followed one by one) iterated, joined or grown in a
  loop keeps its volatile item in place; an iterable of unknown items is one unknown item of its kind, so the
  known parts around it keep their places (and an unknown history is not a hazard by itself);
- loops inside loops over known items, followed item by item;
- an object picked from a table (of objects, or of classes made on the spot) whose own method sends;
- ``getattr(obj, "name")`` with a constant name;
- a LangChain chain imported from another module (template, model and chain each in its own module);
- Jinja rendered from Python: ``jinja2.Template(src)``, ``Environment().from_string(src)``,
  ``env.get_template(name)`` of a file in the project, Haystack's ``PromptBuilder(template=...).run(...)``: the
  value's place in the rendered text matters;
- the SDK method called through a function value: ``functools.partial(client.messages.create, ...)`` (bound
  to a name or to ``self``), a retry helper given the method and its arguments, ``asyncio.to_thread``;
- a request over plain HTTP (``httpx.post(f"{BASE}/v1/messages", json=payload)``, ``data=json.dumps(body)``);
- ``TEMPLATE.replace("<<NOW>>", value)`` placeholders, ``TEMPLATE.format(**values)`` and ``.format(**locals())``;
- function values: a closure a factory returns, a lambda bound to a name, called later;
- an object called (its class's ``__call__``), pydantic messages dumped to dicts (``.model_dump()``);
- prompt text kept in a file of the project (``(Path(__file__).parent / "prompts" / "system.txt").read_text()``,
  ``with open(os.path.join(HERE, ...)) as f: f.read()``, ``yaml.safe_load(f)``, ``json.load(f)``), then formatted; a
  file outside the project is not read.

M101 figures are computed here from the test's own render of the request (the system text, a blank line,
the user's question), encoded with the pinned tokenizer: S = the first divergent token, lost =
floor(min(ideal, P - 1) / B) - floor(min(S, P - 1) / B) (test_agent_call_shapes.m101_figures).
"""

from __future__ import annotations

import pytest

from test_agent_call_shapes import DAY, POLICY, TS, line_of
from test_project_flow import PS, check, project, where
from test_project_flow_containers import SENDER, assert_m101_in

RULES = [f"Rule {i}: answer in plain words about topic {i}." for i in range(40)]
RULES_SOURCE = "[" + ", ".join(repr(r) for r in RULES) + "]"
NOW = 'datetime.now():%Y-%m-%d %H:%M:%S'

# ----------------------------------------------------------------------------- containers and loops

PROMPTS = {
    "a long list joined by a comprehension": ('''
        from datetime import datetime

        POLICY = {PS}
        RULES = {RULES}


        def system_prompt():
            sections = [f"Now: {{{NOW}}}", *RULES, POLICY]
            return "\\n".join(f"- {{s}}" for s in sections)
        ''', "datetime.now()", "\n".join("- " + s for s in ["Now: {}"] + RULES + [POLICY]), TS),
    "a long list grown in a loop": ('''
        from datetime import datetime

        POLICY = {PS}
        RULES = {RULES}


        def system_prompt():
            text = ""
            for section in [f"Now: {{{NOW}}}"] + RULES + [POLICY]:
                text += section + "\\n"
            return text
        ''', "datetime.now()", "".join(s + "\n" for s in ["Now: {}"] + RULES + [POLICY]), TS),
    "a long list appended in a loop, then joined": ('''
        from datetime import datetime

        POLICY = {PS}
        RULES = {RULES}


        def system_prompt():
            lines = [f"Now: {{{NOW}}}"]
            for rule in RULES:
                lines.append("* " + rule)
            lines.append(POLICY)
            return "\\n".join(lines)
        ''', "datetime.now()", "\n".join(["Now: {}"] + ["* " + r for r in RULES] + [POLICY]), TS),
    "loops inside a loop over known sections": ('''
        from datetime import datetime

        POLICY = {PS}


        def system_prompt():
            groups = [("Clock", [f"Now {{{NOW}}}"]), ("Rules", ["Be brief.", "Cite sources."]), ("Policy", [POLICY])]
            text = ""
            for title, lines in groups:
                text += f"## {{title}}\\n"
                for line in lines:
                    text += line + "\\n"
            return text
        ''', "datetime.now()", "## Clock\nNow {}\n## Rules\nBe brief.\nCite sources.\n## Policy\n" + POLICY + "\n", TS),
    "a comprehension over items of an unrolled loop": ('''
        from datetime import date

        POLICY = {PS}
        BLOCKS = [["Today", str(date.today())], ["Policy", POLICY]]


        def system_prompt():
            out = []
            for block in BLOCKS:
                out.append(": ".join(part for part in block))
            return "\\n".join(out)
        ''', "date.today()", "Today: {}\nPolicy: " + POLICY, DAY),
    "a placeholder replaced": ('''
        from datetime import datetime

        POLICY = {PS}
        TEMPLATE = "Now: <<NOW>>\\n" + POLICY


        def system_prompt():
            return TEMPLATE.replace("<<NOW>>", datetime.now().strftime("%Y-%m-%d %H:%M:%S"))
        ''', "datetime.now()", "Now: {}\n" + POLICY, TS),
    "placeholders replaced in a chain": ('''
        from datetime import datetime

        POLICY = {PS}
        TEMPLATE = "You are {{{{name}}}}. Now: {{{{now}}}}\\n" + POLICY


        def system_prompt(name="Ava"):
            return TEMPLATE.replace("{{{{name}}}}", name).replace("{{{{now}}}}", str(datetime.now().replace(microsecond=0)))
        ''', "datetime.now()", "You are Ava. Now: {}\n" + POLICY, TS),
    "str.format with a spread mapping": ('''
        from datetime import datetime

        POLICY = {PS}
        TEMPLATE = "Now: {{now}}\\n{{policy}}"


        def system_prompt():
            values = {{"now": datetime.now().strftime("%Y-%m-%d %H:%M:%S"), "policy": POLICY}}
            return TEMPLATE.format(**values)
        ''', "datetime.now()", "Now: {}\n" + POLICY, TS),
    "str.format(**locals())": ('''
        from datetime import datetime

        POLICY = {PS}
        TEMPLATE = "Now: {{now}}\\n{{policy}}"


        def system_prompt():
            now = datetime.now().strftime("%Y-%m-%d %H:%M:%S")
            policy = POLICY
            return TEMPLATE.format(**locals())
        ''', "datetime.now()", "Now: {}\n" + POLICY, TS),
    "an object called (its __call__)": ('''
        from datetime import datetime

        POLICY = {PS}


        class SystemPrompt:
            def __init__(self, policy):
                self.policy = policy

            def __call__(self):
                return f"Now: {{{NOW}}}\\n" + self.policy


        system_prompt = SystemPrompt(POLICY)
        ''', "datetime.now()", "Now: {}\n" + POLICY, TS),
    "a function made by a factory (a closure)": ('''
        from datetime import datetime

        POLICY = {PS}


        def make_builder(policy):
            def build():
                return f"Now: {{{NOW}}}\\n" + policy
            return build


        build_system = make_builder(POLICY)


        def system_prompt():
            return build_system()
        ''', "datetime.now()", "Now: {}\n" + POLICY, TS),
    "a lambda bound to a name": ('''
        from datetime import datetime

        POLICY = {PS}
        render = lambda stamp, policy=POLICY: f"Now: {{stamp}}\\n{{policy}}"


        def system_prompt():
            return render(datetime.now().strftime("%Y-%m-%d %H:%M:%S"))
        ''', "datetime.now()", "Now: {}\n" + POLICY, TS),
}


def _prompts(source):
    return source.format(PS=PS, RULES=RULES_SOURCE, NOW=NOW)


@pytest.mark.parametrize("style", sorted(PROMPTS))
def test_prompts_built_through_containers_loops_and_placeholders(tmp_path, qwen, style):
    source, needle, system, samples = PROMPTS[style]
    files = project(tmp_path, {"prompts.py": _prompts(source), "client.py": SENDER})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", needle, system, samples)


UNKNOWN_ITEMS = {
    "list() of a parameter, then the clock and the policy": '''
        from datetime import datetime

        POLICY = {PS}


        def system_prompt(extra=None):
            parts = list(extra or [])
            parts.append(f"Now: {{datetime.now()}}")
            parts.append(POLICY)
            return "\\n".join(parts)
        ''',
    "spread of what an unknown call returns": '''
        from datetime import datetime

        from loaders import load_notes

        POLICY = {PS}


        def system_prompt():
            return "\\n\\n".join([*load_notes(), f"Now: {{datetime.now()}}", POLICY])
        ''',
    "a list plus an unknown list, grown after": '''
        from datetime import datetime

        POLICY = {PS}


        def system_prompt(notes):
            parts = ["Notes:"] + notes
            parts += [f"Now: {{datetime.now()}}"]
            parts.extend([POLICY])
            return "\\n".join(parts)
        ''',
}


@pytest.mark.parametrize("style", sorted(UNKNOWN_ITEMS))
def test_known_items_around_unknown_ones_keep_their_places(tmp_path, style):
    files = project(tmp_path, {"prompts.py": UNKNOWN_ITEMS[style].format(PS=PS), "client.py": SENDER.replace(
        "system_prompt()", "system_prompt(load())")})
    assert where(check(tmp_path, "client.py")) == [("M101", "prompts.py", line_of(files["prompts.py"], "datetime.now()"))]


CLEAN_CONTAINERS = {
    "a long list with the clock last, after the question": f'''
        from datetime import datetime

        import anthropic

        RULES = {RULES_SOURCE}
        POLICY = {PS}
        client = anthropic.Anthropic()


        def ask(question):
            system = "\\n".join(f"- {{r}}" for r in [*RULES, POLICY])
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=system, messages=[
                {{"role": "user", "content": question + f" (sent {{datetime.now():%H:%M}})"}}])
        ''',
    "an unknown history before the question with the clock": f'''
        from datetime import datetime

        import anthropic

        POLICY = {PS}
        client = anthropic.Anthropic()


        def ask(question, history):
            messages = [*history, {{"role": "user", "content": f"{{question}} (at {{datetime.now()}})"}}]
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=POLICY, messages=messages)
        ''',
    "unknown extra notes and no volatile value": f'''
        import anthropic

        POLICY = {PS}
        client = anthropic.Anthropic()


        def ask(question, notes):
            parts = [POLICY] + list(notes)
            for group in [["Be brief."], ["Cite sources."]]:
                for line in group:
                    parts.append(line)
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system="\\n".join(parts),
                                          messages=[{{"role": "user", "content": question}}])
        ''',
    "nested loops whose clock line is after the policy and the question": f'''
        from datetime import datetime

        import anthropic

        POLICY = {PS}
        client = anthropic.Anthropic()


        def ask(question):
            text = ""
            for title, lines in [("Policy", [POLICY]), ("Rules", ["Be brief."])]:
                text += title + "\\n"
                for line in lines:
                    text += line + "\\n"
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=text, messages=[
                {{"role": "user", "content": question}}, {{"role": "user", "content": f"Now: {{datetime.now()}}"}}])
        ''',
    "a placeholder the template does not hold": f'''
        from datetime import datetime

        import anthropic

        POLICY = {PS}
        client = anthropic.Anthropic()


        def ask(question):
            system = POLICY.replace("<<NOW>>", datetime.now().isoformat())
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=system,
                                          messages=[{{"role": "user", "content": question}}])
        ''',
}


@pytest.mark.parametrize("style", sorted(CLEAN_CONTAINERS))
def test_stable_containers_and_loops_are_clean(tmp_path, style):
    project(tmp_path, {"bot.py": CLEAN_CONTAINERS[style]})
    assert check(tmp_path, "bot.py") == []


PYDANTIC = '''
    from datetime import datetime

    import anthropic
    from pydantic import BaseModel

    POLICY = {PS}
    client = anthropic.Anthropic()


    class Message(BaseModel):
        role: str
        content: str


    def ask(question):
        system = Message(role="system", content=f"Now: {{{NOW}}}\\n" + POLICY)
        turns = [Message(role="user", content=question)]
        return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=system.model_dump()["content"],
                                      messages=[m.model_dump() for m in turns])
    '''


def test_pydantic_messages_dumped_to_dicts(tmp_path, qwen):
    files = project(tmp_path, {"bot.py": PYDANTIC.format(PS=PS, NOW=NOW)})
    assert_m101_in(qwen, check(tmp_path, "bot.py"), files, "bot.py", "datetime.now()", "Now: {}\n" + POLICY, TS)


def test_spread_fields_with_the_clock_after_the_question_are_clean(tmp_path):
    project(tmp_path, {"bot.py": f'''
        from datetime import datetime

        import anthropic

        POLICY = {PS}
        USER = "{{question}}\\n(sent {{now}})"
        client = anthropic.Anthropic()


        def ask(question):
            now = datetime.now()
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=POLICY,
                                          messages=[{{"role": "user", "content": USER.format(**locals())}}])
        '''})
    assert check(tmp_path, "bot.py") == []


# ----------------------------------------------------------------------------- objects from a table, getattr

AGENTS = f'''
    from datetime import datetime

    import anthropic

    POLICY = {PS}
    client = anthropic.Anthropic()


    class Support:
        def system(self):
            return f"Today is {{{NOW}}}.\\n" + POLICY

        def run(self, question):
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=300, system=self.system(),
                                          messages=[{{"role": "user", "content": question}}])


    class Sales:
        def run(self, question):
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=300, system=POLICY,
                                          messages=[{{"role": "user", "content": question}}])
    '''

TABLES = {
    "a dict of objects": '''
        from agents import Sales, Support

        AGENTS = {"sales": Sales(), "support": Support()}


        def handle(mode, question):
            return AGENTS[mode].run(question)
        ''',
    "a dict of classes made on the spot": '''
        from agents import Sales, Support

        REGISTRY = {"sales": Sales, "support": Support}


        def handle(mode, question):
            agent = REGISTRY[mode]()
            return agent.run(question)
        ''',
    ".get with a default object": '''
        import agents

        AGENTS = {"sales": agents.Sales()}


        def handle(mode, question):
            return AGENTS.get(mode, agents.Support()).run(question)
        ''',
    "a list indexed by a number": '''
        from agents import Sales, Support

        POOL = [Sales(), Support()]


        def handle(i, question):
            picked = POOL[i % 2]
            return picked.run(question)
        ''',
    "getattr with a constant method name": '''
        from agents import Support


        def handle(question):
            return getattr(Support(), "run")(question)
        ''',
}


@pytest.mark.parametrize("style", sorted(TABLES))
def test_an_object_picked_from_a_table_sends_with_its_own_method(tmp_path, qwen, style):
    files = project(tmp_path, {"agents.py": AGENTS, "app.py": TABLES[style]})
    assert_m101_in(qwen, check(tmp_path, "app.py"), files, "agents.py", "datetime.now()", "Today is {}.\n" + POLICY, TS)


def test_a_table_of_agents_that_send_stable_prompts_is_clean(tmp_path):
    project(tmp_path, {"agents.py": AGENTS.replace('f"Today is {datetime.now():%Y-%m-%d %H:%M:%S}.\\n" + POLICY',
                                                   "POLICY"), "app.py": TABLES["a dict of classes made on the spot"]})
    assert "datetime" not in (tmp_path / "agents.py").read_text().split("class Support")[1]
    assert check(tmp_path, "app.py") == []


GETATTR = {
    "getattr of a module's constant": ('''
        from datetime import datetime

        POLICY = {PS}
        SUPPORT = f"Now: {{{NOW}}}\\n" + POLICY
        ''', '''
        import anthropic

        import prompts

        client = anthropic.Anthropic()


        def ask(question, kind="SUPPORT"):
            system = getattr(prompts, "SUPPORT")
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=200, system=system,
                                          messages=[{"role": "user", "content": question}])
        '''),
    "getattr of a method, called": ('''
        from datetime import datetime

        POLICY = {PS}


        class Prompts:
            def support(self):
                return f"Now: {{{NOW}}}\\n" + POLICY
        ''', '''
        import anthropic

        from prompts import Prompts

        client = anthropic.Anthropic()


        def ask(question):
            system = getattr(Prompts(), "support")()
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=200, system=system,
                                          messages=[{"role": "user", "content": question}])
        '''),
}


@pytest.mark.parametrize("style", sorted(GETATTR))
def test_getattr_with_a_constant_name_is_the_attribute(tmp_path, qwen, style):
    prompts, client = GETATTR[style]
    files = project(tmp_path, {"prompts.py": prompts.format(PS=PS, NOW=NOW), "client.py": client})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts.py", "datetime.now()", "Now: {}\n" + POLICY, TS)


def test_getattr_with_a_computed_name_is_not_guessed(tmp_path):
    project(tmp_path, {"prompts.py": GETATTR["getattr of a module's constant"][0].format(PS=PS, NOW=NOW), "client.py": '''
        import anthropic

        import prompts

        client = anthropic.Anthropic()


        def ask(question, kind):
            system = getattr(prompts, kind.upper() + "_PROMPT", "")
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=200, system=system,
                                          messages=[{"role": "user", "content": question}])
        '''})
    assert check(tmp_path, "client.py") == []


# ----------------------------------------------------------------------------- LangChain across modules

LC_PROMPTS = f'''
    from langchain_core.prompts import ChatPromptTemplate

    SUPPORT = ChatPromptTemplate.from_messages([("system", "Today is {{today}}.\\n" + {PS}), ("human", "{{question}}")])
    '''
LC_CHAINS = '''
    from langchain_anthropic import ChatAnthropic

    from prompts import SUPPORT

    llm = ChatAnthropic(model="claude-sonnet-4-5")
    support_chain = SUPPORT | llm
    '''
LC_APPS = {
    "from chains import the chain": '''
        from datetime import date

        from chains import support_chain


        def answer(question):
            return support_chain.invoke({"today": date.today().isoformat(), "question": question})
        ''',
    "import chains, the chain by attribute": '''
        from datetime import date

        import chains


        async def answer(question):
            return await chains.support_chain.ainvoke({"today": str(date.today()), "question": question})
        ''',
}


@pytest.mark.parametrize("style", sorted(LC_APPS))
def test_a_chain_imported_from_another_module(tmp_path, style):
    files = project(tmp_path, {"prompts.py": LC_PROMPTS, "chains.py": LC_CHAINS, "app.py": LC_APPS[style]})
    assert where(check(tmp_path, "app.py")) == [("M101", "app.py", line_of(files["app.py"], "date.today()"))]


def test_an_imported_chain_with_the_date_in_the_question_is_clean(tmp_path):
    project(tmp_path, {"prompts.py": LC_PROMPTS.replace("Today is {today}.\\n", "").replace(
        '("human", "{question}")', '("human", "{question} ({today})")'), "chains.py": LC_CHAINS,
        "app.py": LC_APPS["from chains import the chain"]})
    assert check(tmp_path, "app.py") == []


# ----------------------------------------------------------------------------- Jinja from Python

JINJA = {
    "jinja2.Template of a literal": ({}, '''
        from datetime import datetime

        import jinja2

        POLICY = {PS}
        TEMPLATE = jinja2.Template("Now: {{{{ now }}}}\\n{{{{ policy }}}}")


        def system_prompt():
            return TEMPLATE.render(now=datetime.now().strftime("%Y-%m-%d %H:%M:%S"), policy=POLICY)
        '''),
    "Environment().from_string with a mapping": ({}, '''
        from datetime import datetime

        from jinja2 import Environment

        POLICY = {PS}
        SOURCE = "{{% if brief %}}Be brief.\\n{{% endif %}}Now: {{{{ now }}}}\\n{{{{ policy | trim }}}}"


        def system_prompt():
            env = Environment(autoescape=False)
            return env.from_string(SOURCE).render({{"now": str(datetime.now().replace(microsecond=0)), "policy": POLICY}})
        '''),
    "Haystack PromptBuilder(template=...).run(...)": ({}, '''
        from datetime import datetime

        from haystack.components.builders import PromptBuilder

        POLICY = {PS}
        builder = PromptBuilder(template="Now: {{{{ now }}}}\\n{{{{ policy }}}}")


        def system_prompt():
            return builder.run(now=datetime.now().strftime("%Y-%m-%d %H:%M:%S"), policy=POLICY)["prompt"]
        '''),
    "get_template of a file in the project": ({"prompts/system.j2": "Now: {{ now }}\n{{ policy }}\n"}, '''
        from datetime import datetime
        from pathlib import Path

        from jinja2 import Environment, FileSystemLoader

        POLICY = {PS}
        env = Environment(loader=FileSystemLoader(Path(__file__).parent / "prompts"))


        def system_prompt():
            return env.get_template("system.j2").render(now=datetime.now().strftime("%Y-%m-%d %H:%M:%S"), policy=POLICY)
        '''),
}


@pytest.mark.parametrize("style", sorted(JINJA))
def test_jinja_rendered_from_python(tmp_path, qwen, style):
    extra, source = JINJA[style]
    files = project(tmp_path, {**extra, "prompts_mod.py": source.format(PS=PS), "client.py": SENDER.replace(
        "from prompts import", "from prompts_mod import")})
    system = ("Be brief.\n" if "brief" in source else "") + "Now: {}\n" + POLICY
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts_mod.py", "datetime.now()", system, TS)


def test_jinja_with_the_clock_in_the_question_is_clean(tmp_path):
    project(tmp_path, {"prompts/system.j2": "{{ policy }}\n{% for rule in rules %}- {{ rule }}\n{% endfor %}",
                       "prompts/user.j2": "{{ question }}\n(sent {{ now }})\n", "bot.py": f'''
        from datetime import datetime

        import anthropic
        from jinja2 import Environment, FileSystemLoader

        POLICY = {PS}
        env = Environment(loader=FileSystemLoader("prompts"))
        client = anthropic.Anthropic()


        def ask(question):
            system = env.get_template("system.j2").render(policy=POLICY, rules=["Be brief.", "Cite sources."])
            user = env.get_template("user.j2").render(question=question, now=datetime.now())
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=system,
                                          messages=[{{"role": "user", "content": user}}])
        '''})
    assert check(tmp_path, "bot.py") == []


# ----------------------------------------------------------------------------- prompt text kept in a file

FILE_READERS = {
    "Path(__file__).parent / ... read_text()": '''
        from datetime import datetime
        from pathlib import Path

        TEMPLATE = (Path(__file__).parent / "prompts" / "system.txt").read_text(encoding="utf-8")


        def system_prompt():
            return TEMPLATE.format(now=datetime.now().strftime("%Y-%m-%d %H:%M:%S"))
        ''',
    "with open(os.path.join(HERE, ...)) as f: f.read()": '''
        import os
        from datetime import datetime

        HERE = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(HERE, "prompts", "system.txt"), encoding="utf-8") as f:
            TEMPLATE = f.read()


        def system_prompt():
            return TEMPLATE.format(now=datetime.now().strftime("%Y-%m-%d %H:%M:%S"))
        ''',
    "open(relative path).read() in the function": '''
        from datetime import datetime


        def system_prompt():
            template = open("prompts/system.txt").read()
            return template.replace("{now}", datetime.now().strftime("%Y-%m-%d %H:%M:%S"))
        ''',
}


@pytest.mark.parametrize("style", sorted(FILE_READERS))
def test_a_prompt_template_read_from_a_project_file(tmp_path, qwen, style):
    files = project(tmp_path, {"prompts/system.txt": "Now: {now}\n" + POLICY, "prompts_mod.py": FILE_READERS[style],
                               "client.py": SENDER.replace("from prompts import", "from prompts_mod import")})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts_mod.py", "datetime.now()", "Now: {}\n" + POLICY, TS)


DATA_FILES = {
    "yaml.safe_load of a YAML file": ("prompts.yaml", "system: |\n" + "".join(f"  {line}\n" for line in (
        "Now: {now}\n" + POLICY).split("\n")), "yaml.safe_load(f)"),
    "json.load of a JSON file": ("prompts.json", '{"system": %s}' % __import__("json").dumps("Now: {now}\n" + POLICY + "\n"),
                                 "json.load(f)"),
}


@pytest.mark.parametrize("style", sorted(DATA_FILES))
def test_prompts_kept_in_a_data_file(tmp_path, qwen, style):
    name, text, load = DATA_FILES[style]
    files = project(tmp_path, {name: text, "prompts_mod.py": f'''
        import json
        from datetime import datetime
        from pathlib import Path

        import yaml

        with open(Path(__file__).parent / "{name}", encoding="utf-8") as f:
            PROMPTS = {load}


        def system_prompt():
            return PROMPTS["system"].format(now=datetime.now().strftime("%Y-%m-%d %H:%M:%S"))
        ''', "client.py": SENDER.replace("from prompts import", "from prompts_mod import")})
    assert_m101_in(qwen, check(tmp_path, "client.py"), files, "prompts_mod.py", "datetime.now()", "Now: {}\n" + POLICY + "\n", TS)


def test_a_file_template_with_the_clock_last_and_a_file_outside_the_project_are_clean(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("Now: {now}\n" + POLICY, encoding="utf-8")
    project(tmp_path / "repo", {"prompts/user.txt": "{question}\n(sent {now})", "bot.py": f'''
        from datetime import datetime
        from pathlib import Path

        import anthropic

        HERE = Path(__file__).parent
        USER = (HERE / "prompts" / "user.txt").read_text()
        SYSTEM = Path({str(outside)!r}).read_text()
        client = anthropic.Anthropic()


        def ask(question):
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=SYSTEM.format(now=datetime.now()),
                                          messages=[{{"role": "user", "content": USER.format(question=question, now=datetime.now())}}])
        '''})
    assert check(tmp_path / "repo", "bot.py") == []


# ----------------------------------------------------------------------------- the SDK method as a value

FORWARDED = {
    "functools.partial bound to a name": '''
        import functools
        from datetime import datetime

        import anthropic

        POLICY = {PS}
        client = anthropic.Anthropic()
        create = functools.partial(client.messages.create, model="claude-sonnet-4-5", max_tokens=300)


        def ask(question):
            return create(system=f"Now: {{{NOW}}}\\n" + POLICY, messages=[{{"role": "user", "content": question}}])
        ''',
    "partial with the system prompt, bound to self": '''
        from datetime import datetime
        from functools import partial

        import anthropic

        POLICY = {PS}


        class Agent:
            def __init__(self):
                self.client = anthropic.Anthropic()
                self.send = partial(self.client.messages.create, model="claude-sonnet-4-5", max_tokens=300,
                                    system=f"Now: {{{NOW}}}\\n" + POLICY)

            def ask(self, question):
                return self.send(messages=[{{"role": "user", "content": question}}])
        ''',
    "a retry helper given the method and its arguments": '''
        import time
        from datetime import datetime

        import anthropic

        POLICY = {PS}
        client = anthropic.Anthropic()


        def with_retries(fn, *args, **kwargs):
            for attempt in range(3):
                try:
                    return fn(*args, **kwargs)
                except anthropic.APIError:
                    time.sleep(2 ** attempt)


        def ask(question):
            return with_retries(client.messages.create, model="claude-sonnet-4-5", max_tokens=300,
                                system=f"Now: {{{NOW}}}\\n" + POLICY, messages=[{{"role": "user", "content": question}}])
        ''',
    "asyncio.to_thread of the method": '''
        import asyncio
        from datetime import datetime

        import anthropic

        POLICY = {PS}
        client = anthropic.Anthropic()


        async def ask(question):
            return await asyncio.to_thread(client.messages.create, model="claude-sonnet-4-5", max_tokens=300,
                                           system=f"Now: {{{NOW}}}\\n" + POLICY,
                                           messages=[{{"role": "user", "content": question}}])
        ''',
}


@pytest.mark.parametrize("style", sorted(FORWARDED))
def test_the_sdk_method_called_through_a_function_value(tmp_path, qwen, style):
    files = project(tmp_path, {"bot.py": FORWARDED[style].format(PS=PS, NOW=NOW)})
    assert_m101_in(qwen, check(tmp_path, "bot.py"), files, "bot.py", "datetime.now()", "Now: {}\n" + POLICY, TS)


HTTP = {
    "httpx.post to the Messages API": '''
        import os
        from datetime import datetime

        import httpx

        POLICY = {PS}
        BASE = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com")


        def ask(question):
            payload = {{"model": "claude-sonnet-4-5", "max_tokens": 300, "system": f"Now: {{{NOW}}}\\n" + POLICY,
                       "messages": [{{"role": "user", "content": question}}]}}
            r = httpx.post(f"{{BASE}}/v1/messages", json=payload, headers={{"x-api-key": os.environ["ANTHROPIC_API_KEY"]}})
            return r.json()
        ''',
    "an async client posting json.dumps of the body": '''
        import json
        from datetime import datetime

        import httpx

        POLICY = {PS}
        URL = "https://api.anthropic.com/v1/messages"


        async def ask(question):
            body = dict(model="claude-sonnet-4-5", max_tokens=300, system=f"Now: {{{NOW}}}\\n" + POLICY,
                        messages=[{{"role": "user", "content": question}}])
            async with httpx.AsyncClient() as http:
                r = await http.post(URL, data=json.dumps(body), headers={{"content-type": "application/json"}})
            return r.json()
        ''',
}


@pytest.mark.parametrize("style", sorted(HTTP))
def test_a_request_over_plain_http(tmp_path, qwen, style):
    files = project(tmp_path, {"bot.py": HTTP[style].format(PS=PS, NOW=NOW)})
    assert_m101_in(qwen, check(tmp_path, "bot.py"), files, "bot.py", "datetime.now()", "Now: {}\n" + POLICY, TS)


def test_a_post_to_another_service_is_not_a_request(tmp_path):
    project(tmp_path, {"bot.py": HTTP["httpx.post to the Messages API"].format(PS=PS, NOW=NOW).replace(
        '/v1/messages"', '/hooks/audit"')})
    assert check(tmp_path, "bot.py") == []


def test_a_partial_with_the_clock_in_the_question_is_clean(tmp_path):
    project(tmp_path, {"bot.py": f'''
        import functools
        from datetime import datetime

        import anthropic

        POLICY = {PS}
        client = anthropic.Anthropic()
        create = functools.partial(client.messages.create, model="claude-sonnet-4-5", max_tokens=300, system=POLICY)


        def ask(question):
            return create(messages=[{{"role": "user", "content": f"{{question}} (at {{datetime.now()}})"}}])
        '''})
    assert check(tmp_path, "bot.py") == []


def test_a_function_of_the_users_own_passed_on_is_not_a_request(tmp_path):
    project(tmp_path, {"bot.py": f'''
        import time
        from concurrent.futures import ThreadPoolExecutor

        POLICY = {PS}


        class Notes:
            def chat(self, system, text):
                return f"{{system}} {{text}}"


        def run(notes, text):
            with ThreadPoolExecutor() as pool:
                return pool.submit(notes.chat, f"epoch {{time.time()}}\\n" + POLICY, text).result()
        '''})
    assert check(tmp_path, "bot.py") == []
