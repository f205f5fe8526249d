"""A second set of agent-style projects, in styles the first set (test_project_flow.py) does not use:
relative imports, class attributes read through ``cls``, inherited methods, a module-level builder
object, a config record, a property, ``%``-formatting in a helper, Gemini and LiteLLM senders, glob'd
tool files. Each case holds one hazard, expected at the line that makes it; the clean cases hold none.
"""

from __future__ import annotations

import json

import pytest

import flow_harness

from test_agent_call_shapes import POLICY

PS = json.dumps(POLICY)

CASES = {
    "relative import, str.format of an imported template": ({
        "bot/__init__.py": "",
        "bot/templates.py": f"SYSTEM = 'Current UTC time: {{now}}.\\n' + {PS}\n",
        "bot/service.py": '''
            from datetime import datetime

            from openai import OpenAI

            from . import templates

            client = OpenAI()


            def reply(question):
                system = templates.SYSTEM.format(now=datetime.utcnow())
                return client.chat.completions.create(model="gpt-4o", messages=[
                    {"role": "system", "content": system}, {"role": "user", "content": question}])
            ''',
    }, "bot/service.py", ("M101", "bot/service.py", "datetime.utcnow()")),
    "class attribute through cls in a classmethod": ({
        "persona.py": f'''
            import time


            class Persona:
                POLICY = {PS}

                @classmethod
                def system(cls):
                    return "Clock: " + time.strftime("%H:%M:%S") + "\\n" + cls.POLICY
            ''',
        "app.py": '''
            import anthropic

            from persona import Persona

            client = anthropic.Anthropic()


            def run(question):
                return client.messages.create(model="claude-sonnet-4-5", max_tokens=300, system=Persona.system(),
                                              messages=[{"role": "user", "content": question}])
            ''',
    }, "app.py", ("M101", "persona.py", "time.strftime")),
    "inherited method of a base class in another module": ({
        "base.py": f'''
            from datetime import datetime


            class BaseAgent:
                policy = {PS}

                def system_prompt(self):
                    return f"[{{datetime.now():%Y-%m-%d %H:%M}}] " + self.policy
            ''',
        "support.py": '''
            from openai import OpenAI

            from base import BaseAgent


            class SupportAgent(BaseAgent):
                def __init__(self):
                    self.llm = OpenAI()

                def ask(self, question):
                    return self.llm.chat.completions.create(model="gpt-4o", messages=[
                        {"role": "system", "content": self.system_prompt()},
                        {"role": "user", "content": question},
                    ])
            ''',
    }, "support.py", ("M101", "base.py", "datetime.now()")),
    "module-level builder object": ({
        "builder.py": f'''
            import uuid


            class PromptBuilder:
                def __init__(self, policy):
                    self.policy = policy
                    self.session = str(uuid.uuid4())

                def build(self):
                    return "Session " + self.session + "\\n" + self.policy


            prompt_builder = PromptBuilder({PS})
            ''',
        "main.py": '''
            from openai import OpenAI

            from builder import prompt_builder

            client = OpenAI()


            def chat(question):
                return client.chat.completions.create(model="gpt-4o", messages=[
                    {"role": "system", "content": prompt_builder.build()}, {"role": "user", "content": question}])
            ''',
    }, "main.py", ("M101", "builder.py", "uuid.uuid4()")),
    "config record passed to the sender": ({
        "config.py": f'''
            from dataclasses import dataclass
            from datetime import date


            @dataclass
            class LLMConfig:
                model: str
                system: str


            DEFAULT = LLMConfig(model="claude-sonnet-4-5", system=f"Date: {{date.today()}}\\n" + {PS})
            ''',
        "sender.py": '''
            import anthropic

            from config import DEFAULT

            client = anthropic.Anthropic()


            def send(question, cfg=DEFAULT):
                return client.messages.create(model=cfg.model, max_tokens=256, system=cfg.system,
                                              messages=[{"role": "user", "content": question}])
            ''',
    }, "sender.py", ("M101", "config.py", "date.today()")),
    "property on the agent": ({
        "agent.py": f'''
            from datetime import datetime

            import litellm

            POLICY = {PS}


            class Agent:
                @property
                def system_prompt(self):
                    return f"Now: {{datetime.now().isoformat()}}\\n{{POLICY}}"

                def run(self, question):
                    return litellm.completion(model="gpt-4o", messages=[
                        {{"role": "system", "content": self.system_prompt}}, {{"role": "user", "content": question}}])
            ''',
    }, "agent.py", ("M101", "agent.py", "datetime.now()")),
    "percent formatting in a helper module": ({
        "fmt.py": f'''
            import time

            HEADER = "Epoch %d. %s"


            def system_text():
                return HEADER % (time.time(), {PS})
            ''',
        "llm.py": '''
            import litellm

            from fmt import system_text


            async def ask(question):
                return await litellm.acompletion("gpt-4o", [
                    {"role": "system", "content": system_text()}, {"role": "user", "content": question}])
            ''',
    }, "llm.py", ("M101", "fmt.py", "time.time()")),
    "glob'd tool files feeding tools=": ({
        "toolfiles.py": '''
            import glob
            import json


            def load_tools():
                tools = []
                for path in glob.glob("tools/*.json"):
                    with open(path) as fh:
                        tools.append(json.load(fh))
                return tools
            ''',
        "runner.py": '''
            from openai import OpenAI

            from toolfiles import load_tools

            client = OpenAI()


            def run(question):
                return client.chat.completions.create(model="gpt-4o", tools=load_tools(),
                                                      messages=[{"role": "user", "content": question}])
            ''',
    }, "runner.py", ("M202", "toolfiles.py", "glob.glob")),
    "Gemini system instruction from an imported function": ({
        "instructions.py": f'''
            from datetime import date


            def make_instructions():
                return "Today is " + date.today().isoformat() + ". " + {PS}
            ''',
        "gem.py": '''
            from google import genai
            from google.genai import types

            from instructions import make_instructions

            client = genai.Client()


            def ask(question):
                return client.models.generate_content(
                    model="gemini-2.0-flash", contents=question,
                    config=types.GenerateContentConfig(system_instruction=make_instructions()))
            ''',
    }, "gem.py", ("M101", "instructions.py", "date.today()")),
    "history list grown with += in a conversation class": ({
        "conversation.py": f'''
            import random


            class Conversation:
                def __init__(self):
                    self.messages = []
                    self.messages += [{{"role": "system", "content": f"Seed {{random.randint(0, 10**6)}}\\n" + {PS}}}]

                def add_user(self, text):
                    self.messages.append({{"role": "user", "content": text}})
                    return self.messages
            ''',
        "chat.py": '''
            from openai import OpenAI

            from conversation import Conversation

            client = OpenAI()


            def turn(question):
                convo = Conversation()
                return client.chat.completions.create(model="gpt-4o", messages=convo.add_user(question))
            ''',
    }, "chat.py", ("M101", "conversation.py", "random.randint")),
}

CLEAN = {
    "date in the user turn, built in another module": {
        "build.py": f'''
            from datetime import date


            def messages(question):
                return [{{"role": "system", "content": {PS}}},
                        {{"role": "user", "content": f"{{question}} (today: {{date.today()}})"}}]
            ''',
        "send.py": '''
            from openai import OpenAI

            from build import messages

            client = OpenAI()


            def go(question):
                return client.chat.completions.create(model="gpt-4o", messages=messages(question))
            ''',
    },
    "sorted glob of tool files": {
        "toolfiles.py": '''
            import glob
            import json


            def load_tools():
                return [json.load(open(p)) for p in sorted(glob.glob("tools/*.json"))]
            ''',
        "runner.py": '''
            from openai import OpenAI

            from toolfiles import load_tools

            client = OpenAI()


            def run(question):
                return client.chat.completions.create(model="gpt-4o", tools=load_tools(),
                                                      messages=[{"role": "user", "content": question}])
            ''',
    },
    "class with a static system prompt": {
        "agent.py": f'''
            import anthropic


            class Agent:
                SYSTEM = {PS}

                def __init__(self):
                    self.client = anthropic.Anthropic()

                def run(self, question):
                    return self.client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=self.SYSTEM,
                                                       messages=[{{"role": "user", "content": question}}])
            ''',
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hazard_found_at_its_line(tmp_path, case):
    flow_harness.assert_hazard(tmp_path, CASES[case])


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_clean_project_gives_nothing(tmp_path, case):
    flow_harness.assert_clean(tmp_path, CLEAN[case])
