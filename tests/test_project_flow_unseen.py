"""A second unseen set of agent-style Python projects (issue 29, "Done when"), written after families 1-4
were green, in styles no other test uses: LiteLLM's async call, a LangChain chat model fed by a persona
module, LlamaIndex ``ChatMessage``, an agent framework's ``system_prompt=``, an async client's
``with_raw_response``, a dataclass whose field is made by a ``default_factory``, a module-level tool
registry with a ``set[str]`` parameter, ``functools.partial`` over the SDK call, a prompt class rendered
by ``__str__``, a retriever class holding a ``glob`` listing.

Each hazard's expected rule, file and line (the needle on it) were written down before the set was first
run (the commit that adds this file holds them as written). First run: 7 of 10 found at the expected line,
no false alarm on the 4 clean projects. Missed: a volatile value sliced (``uuid.uuid4().hex[:8]``: the
slice became an unknown part), a dataclass field made by ``field(default_factory=lambda: datetime.now()...)``
(the ``field(...)`` call was not read as its default), and a prompt class rendered by ``str(obj)`` (its
``__str__`` was not followed). Each was then closed as a family (tests/test_project_flow_families.py);
this set is kept whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import flow_harness

from test_agent_call_shapes import POLICY

PS = json.dumps(POLICY)

# name -> (files, the file linted, (rule, file of the finding, a needle on its line))
CASES = {
    "litellm async, the system message from a prompt module": ({
        "prompts.py": f'''
            import uuid

            RULES = {PS}


            def system_message():
                session = uuid.uuid4().hex[:8]
                return {{"role": "system", "content": f"Session {{session}}. " + RULES}}
            ''',
        "service.py": '''
            import litellm

            from prompts import system_message


            async def reply(question):
                response = await litellm.acompletion(
                    model="anthropic/claude-3-5-sonnet-20241022",
                    messages=[system_message(), {"role": "user", "content": question}],
                )
                return response.choices[0].message.content
            ''',
    }, "service.py", ("M101", "prompts.py", "uuid.uuid4()")),
    "LangChain chat model, persona module with str.format": ({
        "persona.py": f'''
            from datetime import datetime

            TEMPLATE = "Current time: {{now}}.\\n" + {PS}


            def build_system():
                return TEMPLATE.format(now=datetime.now().strftime("%Y-%m-%d %H:%M"))
            ''',
        "chain.py": '''
            from langchain_anthropic import ChatAnthropic
            from langchain_core.messages import HumanMessage, SystemMessage

            from persona import build_system

            llm = ChatAnthropic(model="claude-3-5-sonnet-latest", temperature=0)


            def respond(question: str) -> str:
                messages = [SystemMessage(content=build_system()), HumanMessage(content=question)]
                return llm.invoke(messages).content
            ''',
    }, "chain.py", ("M101", "persona.py", "datetime.now()")),
    "LlamaIndex ChatMessage list": ({
        "assistant.py": f'''
            from datetime import date

            from llama_index.core.llms import ChatMessage
            from llama_index.llms.openai import OpenAI

            SYSTEM = "Today is {{today}}. " + {PS}
            llm = OpenAI(model="gpt-4o-mini")


            def ask(question):
                messages = [
                    ChatMessage(role="system", content=SYSTEM.format(today=date.today().isoformat())),
                    ChatMessage(role="user", content=question),
                ]
                return llm.chat(messages)
            ''',
    }, "assistant.py", ("M101", "assistant.py", "date.today()")),
    "agent framework system_prompt= from an instructions module": ({
        "instructions.py": f'''
            import time

            POLICY = {PS}


            def make_prompt():
                return "Local time " + time.strftime("%H:%M:%S") + ". " + POLICY
            ''',
        "bot.py": '''
            from pydantic_ai import Agent

            from instructions import make_prompt

            agent = Agent("openai:gpt-4o", system_prompt=make_prompt())


            async def run(question):
                return await agent.run(question)
            ''',
    }, "bot.py", ("M101", "instructions.py", "time.strftime")),
    "async client with_raw_response, request id from a context module": ({
        "context.py": '''
            import uuid


            def request_header():
                return f"Request {uuid.uuid4()}"
            ''',
        "worker.py": f'''
            from anthropic import AsyncAnthropic

            from context import request_header

            client = AsyncAnthropic()
            POLICY = {PS}


            async def handle(question):
                raw = await client.messages.with_raw_response.create(
                    model="claude-sonnet-4-5", max_tokens=400,
                    system=request_header() + "\\n" + POLICY,
                    messages=[{{"role": "user", "content": question}}],
                )
                return raw.parse()
            ''',
    }, "worker.py", ("M101", "context.py", "uuid.uuid4()")),
    "dataclass field made by default_factory": ({
        "parts.py": '''
            from dataclasses import dataclass, field
            from datetime import datetime


            @dataclass
            class PromptParts:
                role: str
                rules: str
                clock: str = field(default_factory=lambda: datetime.now().isoformat())

                def render(self):
                    return f"{self.clock}\\n{self.role}\\n{self.rules}"
            ''',
        "app.py": f'''
            from openai import OpenAI

            from parts import PromptParts

            client = OpenAI()


            def answer(question):
                parts = PromptParts(role="You are Nordwind's support agent.", rules={PS})
                return client.chat.completions.create(model="gpt-4o", messages=[
                    {{"role": "system", "content": parts.render()}}, {{"role": "user", "content": question}}])
            ''',
    }, "app.py", ("M101", "parts.py", "datetime.now()")),
    "module-level tool registry, set[str] parameter": ({
        "registry.py": '''
            _SPECS = {
                "search": {"name": "search", "description": "Search the catalogue.", "input_schema": {"type": "object"}},
                "weather": {"name": "weather", "description": "Weather at a place.", "input_schema": {"type": "object"}},
                "orders": {"name": "orders", "description": "Look up an order.", "input_schema": {"type": "object"}},
            }


            def enabled_specs(names: set[str]) -> list:
                return [_SPECS[n] for n in names]
            ''',
        "agent.py": f'''
            import anthropic

            from registry import enabled_specs

            client = anthropic.Anthropic()


            def run(question, enabled):
                return client.messages.create(model="claude-sonnet-4-5", max_tokens=300, system={PS},
                                              tools=enabled_specs(enabled),
                                              messages=[{{"role": "user", "content": question}}])
            ''',
    }, "agent.py", ("M202", "registry.py", "for n in names")),
    "functools.partial over the SDK call": ({
        "llm.py": f'''
            import functools
            from datetime import datetime

            from openai import OpenAI

            POLICY = {PS}
            complete = functools.partial(OpenAI().chat.completions.create, model="gpt-4o", temperature=0)


            def answer(question):
                return complete(messages=[
                    {{"role": "system", "content": f"UTC now: {{datetime.utcnow()}}\\n" + POLICY}},
                    {{"role": "user", "content": question}},
                ])
            ''',
    }, "llm.py", ("M101", "llm.py", "datetime.utcnow()")),
    "prompt class rendered by __str__": ({
        "system_prompt.py": '''
            from datetime import datetime


            class SystemPrompt:
                def __init__(self, rules):
                    self.rules = rules

                def __str__(self):
                    return f"[{datetime.now():%Y-%m-%d %H:%M}] {self.rules}"
            ''',
        "client.py": f'''
            import anthropic

            from system_prompt import SystemPrompt

            client = anthropic.Anthropic()
            PROMPT = SystemPrompt({PS})


            def ask(question):
                return client.messages.create(model="claude-sonnet-4-5", max_tokens=200, system=str(PROMPT),
                                              messages=[{{"role": "user", "content": question}}])
            ''',
    }, "client.py", ("M101", "system_prompt.py", "datetime.now()")),
    "retriever class holding a glob listing": ({
        "retriever.py": '''
            from pathlib import Path


            class Retriever:
                def __init__(self, folder):
                    self.paths = list(Path(folder).glob("*.txt"))

                def context(self):
                    return "\\n\\n".join(p.read_text() for p in self.paths)
            ''',
        "rag.py": '''
            from google import genai

            from retriever import Retriever

            client = genai.Client()
            retriever = Retriever("kb")


            def ask(question):
                return client.models.generate_content(model="gemini-2.0-flash", contents=[retriever.context(), question])
            ''',
    }, "rag.py", ("M203", "retriever.py", "glob(")),
}

CLEAN = {
    "litellm, the date after the question": {
        "service.py": f'''
            from datetime import date

            import litellm

            RULES = {PS}


            async def reply(question):
                return await litellm.acompletion(model="gpt-4o", messages=[
                    {{"role": "system", "content": RULES}},
                    {{"role": "user", "content": f"{{question}}\\n(asked on {{date.today()}})"}},
                ])
            ''',
    },
    "registry sorted by name": {
        "registry.py": '''
            _SPECS = {"search": {"name": "search"}, "weather": {"name": "weather"}}


            def enabled_specs(names: set[str]) -> list:
                return [_SPECS[n] for n in sorted(names)]
            ''',
        "agent.py": f'''
            import anthropic

            from registry import enabled_specs

            client = anthropic.Anthropic()


            def run(question, enabled):
                return client.messages.create(model="claude-sonnet-4-5", max_tokens=300, system={PS},
                                              tools=enabled_specs(enabled),
                                              messages=[{{"role": "user", "content": question}}])
            ''',
    },
    "dataclass with constant fields": {
        "parts.py": '''
            from dataclasses import dataclass


            @dataclass
            class PromptParts:
                role: str
                rules: str
                version: str = "2024-06"

                def render(self):
                    return f"{self.role}\\n{self.rules}\\n(policy {self.version})"
            ''',
        "app.py": f'''
            from openai import OpenAI

            from parts import PromptParts

            client = OpenAI()


            def answer(question):
                parts = PromptParts(role="You are Nordwind's support agent.", rules={PS})
                return client.chat.completions.create(model="gpt-4o", messages=[
                    {{"role": "system", "content": parts.render()}}, {{"role": "user", "content": question}}])
            ''',
    },
    "LangChain, static system and a clock after the question": {
        "chain.py": f'''
            from datetime import datetime

            from langchain_openai import ChatOpenAI
            from langchain_core.messages import HumanMessage, SystemMessage

            llm = ChatOpenAI(model="gpt-4o")
            SYSTEM = {PS}


            def respond(question):
                return llm.invoke([SystemMessage(content=SYSTEM),
                                   HumanMessage(content=question + f" [sent {{datetime.now():%H:%M}}]")]).content
            ''',
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unseen_hazard_found_at_its_line(tmp_path, case):
    flow_harness.assert_hazard(tmp_path, CASES[case])


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_unseen_clean_project_gives_nothing(tmp_path, case):
    flow_harness.assert_clean(tmp_path, CLEAN[case])
