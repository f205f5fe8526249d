"""A fourth unseen set of agent-style Python projects, written blind: its author read docs/python.md,
docs/rules/*.md, rules/*.toml and README.md only (not the analyzer's source, not another set's cases, not a
run of it), in styles no earlier unseen set uses: a LangGraph node function that puts a ``SystemMessage``
made by a helper before the graph state's messages (the replica's host name first), DSPy-like signature
classes whose docstring is the objective and whose input fields are listed from a set comprehension, a
Haystack-like ``PromptBuilder`` filling ``{{date}}`` with ``str.replace``, a Semantic-Kernel-like plugin
registry whose tools are picked by iterating a ``frozenset``-annotated parameter, MCP server manifests
merged with ``dict.update`` in ``os.listdir`` order, a hand-written retry decorator around
``client.chat.completions.create`` fed a ``%``-formatted system prompt with a ``uuid4`` session, a
``functools.partial(client.messages.create, system=...)`` whose cached system block starts with the clock,
a dataclass ``to_messages()`` with ``json.dumps`` of shop settings, an ``AsyncAnthropic`` request with one
breakpoint per section (five), and a ``client.beta.messages.stream`` context manager whose system prompt
joins ``Path.glob`` documents with ``"".join(generator)``.

Each hazard's expected rule, file and line (the needle on it: the line where the hazard is made) were
written down before the set was first run; the commit that adds this file holds them as written. Each
clean project looks like one of the hazards but is cache-safe by the rules' own terms (the volatile value
in the last user message, outside the prompt or after the last breakpoint, ``sorted(...)`` listings,
``sort_keys=True``, four breakpoints).

First run (14:55 UTC, branch s29d at 207e66e, the set merged unchanged and run once): 10 of 10 hazards found at
the expected line (each the one finding of its project, with the expected rule and file); no false alarm on the
10 clean projects. Missed: none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import flow_harness

from test_agent_call_shapes import POLICY

PS = json.dumps(POLICY)
# Three policies: 1,300+ tokens in the pinned tokenizer (POLICY is 438), over the 1,024-token minimum a
# claude-sonnet-4-5 breakpoint needs, so a breakpoint on it caches something (M106) and is not too short (M703).
HS = json.dumps("\n\n".join([POLICY] * 3))

POLICY_PY = f'''
    POLICY = {PS}
    '''

HANDBOOK_PY = f'''
    HANDBOOK = {HS}
    '''

# name -> (files, the file linted, (rule, file of the finding, a needle on its line))
CASES = {
    "LangGraph node, the replica's host name first in the system message": ({
        "policy.py": POLICY_PY,
        "prompts.py": r'''
            import socket

            from policy import POLICY


            def build_system_prompt() -> str:
                replica = socket.gethostname()
                return f"Serving replica: {replica}\n\n{POLICY}\n\nUse the tools before answering order questions."
            ''',
        "graph.py": r'''
            from typing import Annotated, TypedDict

            from langchain_core.messages import AnyMessage, SystemMessage
            from langchain_openai import ChatOpenAI
            from langgraph.graph import END, START, StateGraph
            from langgraph.graph.message import add_messages

            from prompts import build_system_prompt


            class AgentState(TypedDict):
                messages: Annotated[list[AnyMessage], add_messages]


            model = ChatOpenAI(model="gpt-4o", temperature=0)


            def call_model(state: AgentState) -> dict:
                system = SystemMessage(content=build_system_prompt())
                response = model.invoke([system, *state["messages"]])
                return {"messages": [response]}


            builder = StateGraph(AgentState)
            builder.add_node("agent", call_model)
            builder.add_edge(START, "agent")
            builder.add_edge("agent", END)
            graph = builder.compile()
            ''',
    }, "graph.py", ("M101", "prompts.py", "socket.gethostname()")),

    "DSPy-like signature, input fields listed from a set comprehension before the docstring objective": ({
        "signatures.py": rf'''
            class Signature:
                inputs: dict[str, str] = {{}}
                outputs: dict[str, str] = {{}}


            class SupportAnswer(Signature):
                {PS}

                inputs = {{
                    "question": "the customer's message, verbatim",
                    "order_history": "the customer's recent orders, one JSON object per line",
                    "locale": "the customer's language tag, e.g. de-DE",
                }}
                outputs = {{
                    "answer": "the reply to send to the customer",
                    "escalate": "yes when a human must take over, else no",
                }}
            ''',
        "adapter.py": r'''
            from signatures import Signature


            def format_system(sig: type[Signature]) -> str:
                input_names = {name for name in sig.inputs if not name.startswith("_")}
                lines = ["Your input fields are:"]
                for i, name in enumerate(input_names, 1):
                    lines.append(f"{i}. `{name}`: {sig.inputs[name]}")
                lines.append("Your output fields are:")
                for i, name in enumerate(sig.outputs, 1):
                    lines.append(f"{i}. `{name}`: {sig.outputs[name]}")
                lines.append("In adhering to this structure, your objective is:")
                lines.append(sig.__doc__.strip())
                return "\n".join(lines)
            ''',
        "program.py": r'''
            from openai import OpenAI

            from adapter import format_system
            from signatures import SupportAnswer

            client = OpenAI()


            class Predict:
                def __init__(self, signature):
                    self.signature = signature

                def __call__(self, **inputs):
                    user = "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in inputs.items())
                    messages = [
                        {"role": "system", "content": format_system(self.signature)},
                        {"role": "user", "content": user},
                    ]
                    return client.chat.completions.create(model="gpt-4o-mini", messages=messages)


            answer = Predict(SupportAnswer)


            def respond(question: str, order_history: str, locale: str):
                return answer(question=question, order_history=order_history, locale=locale)
            ''',
    }, "program.py", ("M203", "adapter.py", "enumerate(input_names, 1)")),

    "Haystack-like PromptBuilder, {{date}} filled by str.replace at the top of the template": ({
        "policy.py": POLICY_PY,
        "templates.py": r'''
            from policy import POLICY

            SUPPORT_TEMPLATE = "Today's date: {{date}}\n\n" + POLICY + "\n\nCustomer question: {{question}}\nAnswer:"
            ''',
        "builder.py": r'''
            from datetime import date


            class PromptBuilder:
                """Fills the {{name}} slots of a plain-text template, Haystack-style."""

                def __init__(self, template: str):
                    self.template = template

                def run(self, question: str) -> dict:
                    today = date.today().isoformat()
                    prompt = self.template.replace("{{date}}", today).replace("{{question}}", question)
                    return {"prompt": prompt}
            ''',
        "pipeline.py": r'''
            from openai import OpenAI

            from builder import PromptBuilder
            from templates import SUPPORT_TEMPLATE

            client = OpenAI()
            builder = PromptBuilder(template=SUPPORT_TEMPLATE)


            def answer(question: str) -> str:
                prompt = builder.run(question=question)["prompt"]
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}])
                return reply.choices[0].message.content
            ''',
    }, "pipeline.py", ("M101", "builder.py", "date.today()")),

    "Semantic-Kernel-like plugin registry, tools picked by iterating a frozenset parameter": ({
        "policy.py": POLICY_PY,
        "kernel.py": r'''
            from dataclasses import dataclass
            from typing import Callable


            @dataclass
            class KernelFunction:
                plugin: str
                name: str
                description: str
                parameters: dict
                fn: Callable

                def to_tool(self) -> dict:
                    return {
                        "name": f"{self.plugin}-{self.name}",
                        "description": self.description,
                        "input_schema": self.parameters,
                    }


            class Kernel:
                def __init__(self):
                    self.functions: dict[str, KernelFunction] = {}

                def add_function(self, function: KernelFunction) -> None:
                    self.functions[function.name] = function

                def tools_for(self, allowed: frozenset[str]) -> list[dict]:
                    return [self.functions[name].to_tool() for name in allowed if name in self.functions]
            ''',
        "agent.py": r'''
            import anthropic

            from kernel import Kernel, KernelFunction
            from policy import POLICY

            ORDER_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


            def lookup_order(order_id: str) -> dict:
                return {"order_id": order_id, "status": "shipped"}


            def track_parcel(order_id: str) -> dict:
                return {"order_id": order_id, "carrier": "DHL"}


            def issue_refund(order_id: str) -> dict:
                return {"order_id": order_id, "refunded": True}


            kernel = Kernel()
            kernel.add_function(KernelFunction("orders", "lookup_order", "Look up an order by its id.", ORDER_SCHEMA, lookup_order))
            kernel.add_function(KernelFunction("shipping", "track_parcel", "Track the parcel of an order.", ORDER_SCHEMA, track_parcel))
            kernel.add_function(KernelFunction("billing", "issue_refund", "Refund an order in full.", ORDER_SCHEMA, issue_refund))

            SUPPORT_SKILLS = frozenset({"lookup_order", "track_parcel", "issue_refund"})

            client = anthropic.Anthropic()


            def answer(question: str):
                return client.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    tools=kernel.tools_for(SUPPORT_SKILLS),
                    system=POLICY,
                    messages=[{"role": "user", "content": question}],
                )
            ''',
    }, "agent.py", ("M202", "kernel.py", "for name in allowed")),

    "MCP server manifests merged with dict.update in os.listdir order": ({
        "policy.py": POLICY_PY,
        "mcp_registry.py": r'''
            import json
            import os

            SERVERS_DIR = os.path.join(os.path.dirname(__file__), "mcp_servers")


            def discover_tools(servers_dir: str = SERVERS_DIR) -> list[dict]:
                """Merge the tool manifests the MCP servers dropped into the directory (later ones win)."""
                merged: dict[str, dict] = {}
                for entry in os.listdir(servers_dir):
                    if not entry.endswith(".json"):
                        continue
                    with open(os.path.join(servers_dir, entry), encoding="utf-8") as fh:
                        manifest = json.load(fh)
                    merged.update({tool["name"]: tool for tool in manifest["tools"]})
                return [
                    {"name": name, "description": spec.get("description", ""), "input_schema": spec["inputSchema"]}
                    for name, spec in merged.items()
                ]
            ''',
        "agent.py": r'''
            from anthropic import Anthropic

            from mcp_registry import discover_tools
            from policy import POLICY

            client = Anthropic()
            TOOLS = discover_tools()


            def run_turn(history: list[dict], question: str):
                return client.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=2048,
                    system=POLICY,
                    tools=TOOLS,
                    messages=history + [{"role": "user", "content": question}],
                )
            ''',
    }, "agent.py", ("M202", "mcp_registry.py", "os.listdir(servers_dir)")),

    "retry decorator around chat.completions.create, a uuid4 session %-formatted before the policy": ({
        "policy.py": POLICY_PY,
        "retry.py": r'''
            import functools
            import random
            import time

            from openai import APIConnectionError, RateLimitError


            def with_retries(attempts: int = 4, base_delay: float = 0.5):
                def decorate(fn):
                    @functools.wraps(fn)
                    def wrapper(*args, **kwargs):
                        for attempt in range(attempts):
                            try:
                                return fn(*args, **kwargs)
                            except (RateLimitError, APIConnectionError):
                                if attempt == attempts - 1:
                                    raise
                                time.sleep(base_delay * 2 ** attempt + random.random() / 10)
                    return wrapper
                return decorate
            ''',
        "llm.py": r'''
            from openai import OpenAI

            from retry import with_retries

            client = OpenAI()


            @with_retries(attempts=5)
            def complete(messages: list[dict], model: str = "gpt-4o"):
                return client.chat.completions.create(model=model, messages=messages, temperature=0.2)
            ''',
        "agent.py": r'''
            import uuid

            from llm import complete
            from policy import POLICY


            class SupportAgent:
                def __init__(self, persona: str = "Ava, Nordwind's support agent"):
                    self.persona = persona

                def run(self, question: str) -> str:
                    session = uuid.uuid4().hex[:12]
                    system = "Session %s. You are %s.\n\n%s" % (session, self.persona, POLICY)
                    reply = complete([{"role": "system", "content": system}, {"role": "user", "content": question}])
                    return reply.choices[0].message.content
            ''',
    }, "agent.py", ("M101", "agent.py", "uuid.uuid4()")),

    "functools.partial(client.messages.create, system=...), the clock first in the cached block": ({
        "policy.py": HANDBOOK_PY,
        "prompts.py": r'''
            from datetime import datetime, timezone

            from policy import HANDBOOK


            def system_blocks() -> list[dict]:
                issued = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")
                return [
                    {
                        "type": "text",
                        "text": f"Prompt issued {issued} UTC.\n\n{HANDBOOK}",
                        "cache_control": {"type": "ephemeral"},
                    }
                ]
            ''',
        "assistant.py": r'''
            import functools

            import anthropic

            from prompts import system_blocks

            client = anthropic.Anthropic()


            def draft_and_review(question: str) -> str:
                create = functools.partial(
                    client.messages.create,
                    model="claude-sonnet-4-5",
                    max_tokens=1500,
                    system=system_blocks(),
                )
                draft = create(messages=[{"role": "user", "content": question}])
                text = draft.content[0].text
                review = create(messages=[
                    {"role": "user", "content": question},
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": "Check the draft against the handbook and return the corrected reply."},
                ])
                return review.content[0].text
            ''',
    }, "assistant.py", ("M106", "prompts.py", "datetime.now(timezone.utc)")),

    "dataclass to_messages(), shop settings json.dumps'd before the policy": ({
        "config.py": rf'''
            POLICY = {PS}

            SHOP_SETTINGS = {{
                "currency": "EUR",
                "locale": "de-DE",
                "return_window_days": 30,
                "free_shipping_over": 75,
            }}
            ''',
        "conversation.py": r'''
            import json
            from dataclasses import dataclass, field

            from config import POLICY


            @dataclass
            class Conversation:
                settings: dict
                turns: list[dict] = field(default_factory=list)

                def add_user(self, text: str) -> None:
                    self.turns.append({"role": "user", "content": text})

                def system_text(self) -> str:
                    return f"Shop settings: {json.dumps(self.settings)}\n\n{POLICY}"

                def to_messages(self) -> list[dict]:
                    return [{"role": "system", "content": self.system_text()}] + list(self.turns)
            ''',
        "service.py": r'''
            from openai import OpenAI

            from config import SHOP_SETTINGS
            from conversation import Conversation

            client = OpenAI()


            def answer(question: str) -> str:
                conv = Conversation(settings=SHOP_SETTINGS)
                conv.add_user(question)
                reply = client.chat.completions.create(model="gpt-4o", messages=conv.to_messages())
                return reply.choices[0].message.content
            ''',
    }, "service.py", ("M201", "conversation.py", "json.dumps(self.settings)")),

    "AsyncAnthropic awaited, one breakpoint per section: five": ({
        "policy.py": rf'''
            HANDBOOK = {HS}

            STYLE_GUIDE = "Write short paragraphs. Address the customer by name. Never use more than one exclamation mark."

            RETURNS_FAQ = {PS}
            ''',
        "agent.py": r'''
            import asyncio

            from anthropic import AsyncAnthropic

            from policy import HANDBOOK, RETURNS_FAQ, STYLE_GUIDE

            client = AsyncAnthropic()


            async def answer(question: str, order_summary: str) -> str:
                response = await client.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    system=[
                        {"type": "text", "text": HANDBOOK, "cache_control": {"type": "ephemeral"}},
                        {"type": "text", "text": STYLE_GUIDE, "cache_control": {"type": "ephemeral"}},
                    ],
                    messages=[
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": RETURNS_FAQ, "cache_control": {"type": "ephemeral"}},
                                {"type": "text", "text": order_summary, "cache_control": {"type": "ephemeral"}},
                                {"type": "text", "text": question, "cache_control": {"type": "ephemeral"}},
                            ],
                        }
                    ],
                )
                return response.content[0].text


            async def answer_all(questions: list[str]) -> list[str]:
                return await asyncio.gather(*(answer(q, "") for q in questions))
            ''',
    }, "agent.py", ("M704", "agent.py", '"text": question,')),

    "client.beta.messages.stream, Path.glob documents joined by a generator before the policy": ({
        "policy.py": POLICY_PY,
        "knowledge.py": r'''
            from pathlib import Path

            KB_DIR = Path(__file__).resolve().parent / "kb"


            def knowledge_block() -> str:
                return "".join(
                    f"<document source='{path.name}'>\n{path.read_text(encoding='utf-8').strip()}\n</document>\n"
                    for path in KB_DIR.glob("*.md")
                )
            ''',
        "chat.py": r'''
            import anthropic

            from knowledge import knowledge_block
            from policy import POLICY

            client = anthropic.Anthropic()


            def stream_reply(question: str):
                system = f"Reference documents:\n{knowledge_block()}\n\nInstructions:\n{POLICY}"
                with client.beta.messages.stream(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    system=system,
                    messages=[{"role": "user", "content": question}],
                ) as stream:
                    for text in stream.text_stream:
                        yield text
            ''',
    }, "chat.py", ("M203", "knowledge.py", 'KB_DIR.glob("*.md")')),
}

# name -> files; every file is linted on its own and gives nothing
CLEAN = {
    "LangGraph node, the time in a last human message and the host name in run metadata": {
        "policy.py": POLICY_PY,
        "prompts.py": r'''
            from policy import POLICY

            SYSTEM_PROMPT = POLICY + "\n\nUse the tools before answering order questions."
            ''',
        "graph.py": r'''
            import socket
            from datetime import datetime, timezone
            from typing import Annotated, TypedDict

            from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
            from langchain_openai import ChatOpenAI
            from langgraph.graph import END, START, StateGraph
            from langgraph.graph.message import add_messages

            from prompts import SYSTEM_PROMPT


            class AgentState(TypedDict):
                messages: Annotated[list[AnyMessage], add_messages]


            model = ChatOpenAI(model="gpt-4o", temperature=0)


            def call_model(state: AgentState) -> dict:
                stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
                messages = [
                    SystemMessage(content=SYSTEM_PROMPT),
                    *state["messages"],
                    HumanMessage(content=f"(Current time: {stamp})"),
                ]
                response = model.invoke(messages, config={"metadata": {"replica": socket.gethostname()}})
                return {"messages": [response]}


            builder = StateGraph(AgentState)
            builder.add_node("agent", call_model)
            builder.add_edge(START, "agent")
            builder.add_edge("agent", END)
            graph = builder.compile()
            ''',
    },

    "DSPy-like signature, input fields listed from sorted(set comprehension)": {
        "signatures.py": rf'''
            class Signature:
                inputs: dict[str, str] = {{}}
                outputs: dict[str, str] = {{}}


            class SupportAnswer(Signature):
                {PS}

                inputs = {{
                    "question": "the customer's message, verbatim",
                    "order_history": "the customer's recent orders, one JSON object per line",
                    "locale": "the customer's language tag, e.g. de-DE",
                }}
                outputs = {{
                    "answer": "the reply to send to the customer",
                    "escalate": "yes when a human must take over, else no",
                }}
            ''',
        "adapter.py": r'''
            from signatures import Signature


            def format_system(sig: type[Signature]) -> str:
                input_names = sorted({name for name in sig.inputs if not name.startswith("_")})
                lines = ["Your input fields are:"]
                for i, name in enumerate(input_names, 1):
                    lines.append(f"{i}. `{name}`: {sig.inputs[name]}")
                lines.append("Your output fields are:")
                for i, name in enumerate(sig.outputs, 1):
                    lines.append(f"{i}. `{name}`: {sig.outputs[name]}")
                lines.append("In adhering to this structure, your objective is:")
                lines.append(sig.__doc__.strip())
                return "\n".join(lines)
            ''',
        "program.py": r'''
            from openai import OpenAI

            from adapter import format_system
            from signatures import SupportAnswer

            client = OpenAI()


            class Predict:
                def __init__(self, signature):
                    self.signature = signature

                def __call__(self, **inputs):
                    user = "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in inputs.items())
                    messages = [
                        {"role": "system", "content": format_system(self.signature)},
                        {"role": "user", "content": user},
                    ]
                    return client.chat.completions.create(model="gpt-4o-mini", messages=messages)


            answer = Predict(SupportAnswer)


            def respond(question: str, order_history: str, locale: str):
                return answer(question=question, order_history=order_history, locale=locale)
            ''',
    },

    "Haystack-like PromptBuilder, {{date}} at the end after the question": {
        "policy.py": POLICY_PY,
        "templates.py": r'''
            from policy import POLICY

            SUPPORT_TEMPLATE = POLICY + "\n\nCustomer question: {{question}}\nToday's date: {{date}}"
            ''',
        "builder.py": r'''
            from datetime import date


            class PromptBuilder:
                """Fills the {{name}} slots of a plain-text template, Haystack-style."""

                def __init__(self, template: str):
                    self.template = template

                def run(self, question: str) -> dict:
                    today = date.today().isoformat()
                    prompt = self.template.replace("{{question}}", question).replace("{{date}}", today)
                    return {"prompt": prompt}
            ''',
        "pipeline.py": r'''
            from openai import OpenAI

            from builder import PromptBuilder
            from templates import SUPPORT_TEMPLATE

            client = OpenAI()
            builder = PromptBuilder(template=SUPPORT_TEMPLATE)


            def answer(question: str) -> str:
                prompt = builder.run(question=question)["prompt"]
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}])
                return reply.choices[0].message.content
            ''',
    },

    "Semantic-Kernel-like plugin registry, the frozenset iterated sorted": {
        "policy.py": POLICY_PY,
        "kernel.py": r'''
            from dataclasses import dataclass
            from typing import Callable


            @dataclass
            class KernelFunction:
                plugin: str
                name: str
                description: str
                parameters: dict
                fn: Callable

                def to_tool(self) -> dict:
                    return {
                        "name": f"{self.plugin}-{self.name}",
                        "description": self.description,
                        "input_schema": self.parameters,
                    }


            class Kernel:
                def __init__(self):
                    self.functions: dict[str, KernelFunction] = {}

                def add_function(self, function: KernelFunction) -> None:
                    self.functions[function.name] = function

                def tools_for(self, allowed: frozenset[str]) -> list[dict]:
                    return [self.functions[name].to_tool() for name in sorted(allowed) if name in self.functions]
            ''',
        "agent.py": r'''
            import anthropic

            from kernel import Kernel, KernelFunction
            from policy import POLICY

            ORDER_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


            def lookup_order(order_id: str) -> dict:
                return {"order_id": order_id, "status": "shipped"}


            def track_parcel(order_id: str) -> dict:
                return {"order_id": order_id, "carrier": "DHL"}


            def issue_refund(order_id: str) -> dict:
                return {"order_id": order_id, "refunded": True}


            kernel = Kernel()
            kernel.add_function(KernelFunction("orders", "lookup_order", "Look up an order by its id.", ORDER_SCHEMA, lookup_order))
            kernel.add_function(KernelFunction("shipping", "track_parcel", "Track the parcel of an order.", ORDER_SCHEMA, track_parcel))
            kernel.add_function(KernelFunction("billing", "issue_refund", "Refund an order in full.", ORDER_SCHEMA, issue_refund))

            SUPPORT_SKILLS = frozenset({"lookup_order", "track_parcel", "issue_refund"})

            client = anthropic.Anthropic()


            def answer(question: str):
                return client.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    tools=kernel.tools_for(SUPPORT_SKILLS),
                    system=POLICY,
                    messages=[{"role": "user", "content": question}],
                )
            ''',
    },

    "MCP server manifests merged in sorted(os.listdir) order": {
        "policy.py": POLICY_PY,
        "mcp_registry.py": r'''
            import json
            import os

            SERVERS_DIR = os.path.join(os.path.dirname(__file__), "mcp_servers")


            def discover_tools(servers_dir: str = SERVERS_DIR) -> list[dict]:
                """Merge the tool manifests the MCP servers dropped into the directory (later ones win)."""
                merged: dict[str, dict] = {}
                for entry in sorted(os.listdir(servers_dir)):
                    if not entry.endswith(".json"):
                        continue
                    with open(os.path.join(servers_dir, entry), encoding="utf-8") as fh:
                        manifest = json.load(fh)
                    merged.update({tool["name"]: tool for tool in manifest["tools"]})
                return [
                    {"name": name, "description": spec.get("description", ""), "input_schema": spec["inputSchema"]}
                    for name, spec in merged.items()
                ]
            ''',
        "agent.py": r'''
            from anthropic import Anthropic

            from mcp_registry import discover_tools
            from policy import POLICY

            client = Anthropic()
            TOOLS = discover_tools()


            def run_turn(history: list[dict], question: str):
                return client.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=2048,
                    system=POLICY,
                    tools=TOOLS,
                    messages=history + [{"role": "user", "content": question}],
                )
            ''',
    },

    "retry decorator around chat.completions.create, the uuid4 only in a request header": {
        "policy.py": POLICY_PY,
        "retry.py": r'''
            import functools
            import random
            import time

            from openai import APIConnectionError, RateLimitError


            def with_retries(attempts: int = 4, base_delay: float = 0.5):
                def decorate(fn):
                    @functools.wraps(fn)
                    def wrapper(*args, **kwargs):
                        for attempt in range(attempts):
                            try:
                                return fn(*args, **kwargs)
                            except (RateLimitError, APIConnectionError):
                                if attempt == attempts - 1:
                                    raise
                                time.sleep(base_delay * 2 ** attempt + random.random() / 10)
                    return wrapper
                return decorate
            ''',
        "llm.py": r'''
            from openai import OpenAI

            from retry import with_retries

            client = OpenAI()


            @with_retries(attempts=5)
            def complete(messages: list[dict], request_id: str, model: str = "gpt-4o"):
                return client.chat.completions.create(
                    model=model,
                    messages=messages,
                    temperature=0.2,
                    extra_headers={"X-Request-ID": request_id},
                )
            ''',
        "agent.py": r'''
            import uuid

            from llm import complete
            from policy import POLICY


            class SupportAgent:
                def __init__(self, persona: str = "Ava, Nordwind's support agent"):
                    self.persona = persona

                def run(self, question: str) -> str:
                    request_id = uuid.uuid4().hex
                    system = "You are %s.\n\n%s" % (self.persona, POLICY)
                    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
                    reply = complete(messages, request_id)
                    return reply.choices[0].message.content
            ''',
    },

    "functools.partial(client.messages.create, system=...), the clock after the last breakpoint": {
        "policy.py": HANDBOOK_PY,
        "prompts.py": r'''
            from policy import HANDBOOK


            def system_blocks() -> list[dict]:
                return [
                    {
                        "type": "text",
                        "text": HANDBOOK,
                        "cache_control": {"type": "ephemeral"},
                    }
                ]
            ''',
        "assistant.py": r'''
            import functools
            from datetime import datetime, timezone

            import anthropic

            from prompts import system_blocks

            client = anthropic.Anthropic()


            def draft_and_review(question: str) -> str:
                create = functools.partial(
                    client.messages.create,
                    model="claude-sonnet-4-5",
                    max_tokens=1500,
                    system=system_blocks(),
                )
                issued = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")
                draft = create(messages=[{"role": "user", "content": f"{question}\n\n(Sent {issued} UTC)"}])
                text = draft.content[0].text
                review = create(messages=[
                    {"role": "user", "content": question},
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": "Check the draft against the handbook and return the corrected reply."},
                ])
                return review.content[0].text
            ''',
    },

    "dataclass to_messages(), shop settings json.dumps'd with sort_keys=True": {
        "config.py": rf'''
            POLICY = {PS}

            SHOP_SETTINGS = {{
                "currency": "EUR",
                "locale": "de-DE",
                "return_window_days": 30,
                "free_shipping_over": 75,
            }}
            ''',
        "conversation.py": r'''
            import json
            from dataclasses import dataclass, field

            from config import POLICY


            @dataclass
            class Conversation:
                settings: dict
                turns: list[dict] = field(default_factory=list)

                def add_user(self, text: str) -> None:
                    self.turns.append({"role": "user", "content": text})

                def system_text(self) -> str:
                    return f"Shop settings: {json.dumps(self.settings, sort_keys=True)}\n\n{POLICY}"

                def to_messages(self) -> list[dict]:
                    return [{"role": "system", "content": self.system_text()}] + list(self.turns)
            ''',
        "service.py": r'''
            from openai import OpenAI

            from config import SHOP_SETTINGS
            from conversation import Conversation

            client = OpenAI()


            def answer(question: str) -> str:
                conv = Conversation(settings=SHOP_SETTINGS)
                conv.add_user(question)
                reply = client.chat.completions.create(model="gpt-4o", messages=conv.to_messages())
                return reply.choices[0].message.content
            ''',
    },

    "AsyncAnthropic awaited, four breakpoints": {
        "policy.py": rf'''
            HANDBOOK = {HS}

            STYLE_GUIDE = "Write short paragraphs. Address the customer by name. Never use more than one exclamation mark."

            RETURNS_FAQ = {PS}
            ''',
        "agent.py": r'''
            import asyncio

            from anthropic import AsyncAnthropic

            from policy import HANDBOOK, RETURNS_FAQ, STYLE_GUIDE

            client = AsyncAnthropic()


            async def answer(question: str, order_summary: str) -> str:
                response = await client.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    system=[
                        {"type": "text", "text": HANDBOOK, "cache_control": {"type": "ephemeral"}},
                        {"type": "text", "text": STYLE_GUIDE, "cache_control": {"type": "ephemeral"}},
                    ],
                    messages=[
                        {
                            "role": "user",
                            "content": [
                                {"type": "text", "text": RETURNS_FAQ, "cache_control": {"type": "ephemeral"}},
                                {"type": "text", "text": order_summary},
                                {"type": "text", "text": question, "cache_control": {"type": "ephemeral"}},
                            ],
                        }
                    ],
                )
                return response.content[0].text


            async def answer_all(questions: list[str]) -> list[str]:
                return await asyncio.gather(*(answer(q, "") for q in questions))
            ''',
    },

    "client.beta.messages.stream, sorted(Path.glob) documents joined by a generator": {
        "policy.py": POLICY_PY,
        "knowledge.py": r'''
            from pathlib import Path

            KB_DIR = Path(__file__).resolve().parent / "kb"


            def knowledge_block() -> str:
                return "".join(
                    f"<document source='{path.name}'>\n{path.read_text(encoding='utf-8').strip()}\n</document>\n"
                    for path in sorted(KB_DIR.glob("*.md"))
                )
            ''',
        "chat.py": r'''
            import anthropic

            from knowledge import knowledge_block
            from policy import POLICY

            client = anthropic.Anthropic()


            def stream_reply(question: str):
                system = f"Reference documents:\n{knowledge_block()}\n\nInstructions:\n{POLICY}"
                with client.beta.messages.stream(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    system=system,
                    messages=[{"role": "user", "content": question}],
                ) as stream:
                    for text in stream.text_stream:
                        yield text
            ''',
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unseen_hazard_found_at_its_line(tmp_path, case):
    flow_harness.assert_hazard(tmp_path, CASES[case])


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_unseen_clean_project_gives_nothing(tmp_path, case):
    flow_harness.assert_clean(tmp_path, CLEAN[case])
