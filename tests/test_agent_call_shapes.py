"""Agent-style Python modules that send their prompt through wrapped, async and framework call shapes,
and tool/document lists whose order comes from a set-typed parameter.

Every prompt figure (first divergent token, lost blocks) is computed here from the test's own render
of what the model is sent (blocks joined by a blank line, docs/python.md "Measuring M101"), encoded
directly with the pinned `tokenizers` tokenizer, never from promptlint's numbers. The volatile sample
values are the documented ones (two timestamps seven seconds apart, two dates a day apart).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptlint.project.config import Settings
from promptlint.driver.lint import lint
from test_sdk_shapes import divergence, enc

ROOT = Path(__file__).resolve().parent.parent
TOKENIZER = ROOT / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"
B = 16  # vLLM's default block size (M101 figures)

TS = ("2025-03-14 09:26:53", "2025-03-14 09:27:00")
DAY = ("2025-03-14", "2025-03-15")
QUESTION = ("How do I reset my password?", "Where is my order #4417?")  # per-request samples

POLICY_LINES = [
    "You are the support agent of Nordwind Outdoor, an online shop for tents, stoves and sleeping bags.",
    "Never invent order numbers, tracking codes, prices or delivery dates; look them up with the tools.",
    "Refunds are issued within 14 days of an approved return to the original payment method.",
    "Items must be returned unused, in the original packaging, with the receipt or order confirmation.",
    "Shipping within the EU takes two to four business days; express delivery takes one business day.",
    "Escalate any refund above 500 euros to a human agent and tell the customer that you did so.",
    "Cite the policy section you rely on, for example (Returns, section 3), at the end of the answer.",
] * 3
POLICY = "\n".join(POLICY_LINES)
POLICY_SOURCE = "(\n" + "\n".join(f"    {json.dumps(line + chr(10))}" for line in POLICY_LINES[:-1]) + f"\n    {json.dumps(POLICY_LINES[-1])}\n)"


@pytest.fixture
def tok(qwen):
    return qwen  # the session's one parse of tests/data's Qwen2.5 tokenizer (TOKENIZER)


def m101_figures(tok, base, variant, per_request=None):
    """(S, lost blocks) by hand: eligible = floor(min(ideal, P - 1) / B); with no per-request input the
    ideal is the whole prompt."""
    a, b = enc(tok, base), enc(tok, variant)
    s = divergence(a, b)
    ideal = divergence(a, enc(tok, per_request)) if per_request is not None else len(a)
    p = len(b)
    return s, (min(ideal, p - 1) // B) - (min(s, p - 1) // B)


def run(tmp_path, source, name="agent.py"):
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    report = lint([str(path)], Settings(tokenizer=str(TOKENIZER), root=tmp_path))
    assert not report.errors, report.errors
    return report.findings


def line_of(source, needle):
    return next(i for i, line in enumerate(source.splitlines(), 1) if needle in line)


def assert_m101(tok, findings, source, needle, system, volatile, per_request=True):
    """One M101 at the line holding ``needle``, with the figures of ``system`` (a format string with
    one ``{}`` for the volatile value) followed by the user's question when ``per_request``."""
    assert [(f.code, f.line) for f in findings] == [("M101", line_of(source, needle))]
    tail = "\n\n" + QUESTION[0] if per_request else ""
    base = system.format(volatile[0]) + tail
    variant = system.format(volatile[1]) + tail
    other = system.format(volatile[0]) + "\n\n" + QUESTION[1] if per_request else None
    s, lost = m101_figures(tok, base, variant, other)
    f = findings[0]
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == lost and lost > 20


def test_policy_is_long(tok):
    assert 400 < len(enc(tok, POLICY)) < 1000


# ------------------------------------------------------------------ wrapped and async SDK methods

ANTHROPIC_ASYNC_RAW = f'''
from datetime import datetime

from anthropic import AsyncAnthropic

SUPPORT_POLICY = {POLICY_SOURCE}


class SupportAgent:
    """Answers one ticket; reads the rate-limit headers of the raw response."""

    def __init__(self, model="claude-sonnet-4-5"):
        self.client = AsyncAnthropic()
        self.model = model

    def system_prompt(self):
        return f"Current time: {{datetime.now()}}\\n\\n" + SUPPORT_POLICY

    async def answer(self, question):
        raw = await self.client.with_options(max_retries=3).beta.messages.with_raw_response.create(
            model=self.model,
            max_tokens=1024,
            system=self.system_prompt(),
            messages=[{{"role": "user", "content": question}}],
        )
        return raw.parse()
'''


def test_anthropic_async_beta_raw_response_create(tmp_path, tok):
    findings = run(tmp_path, ANTHROPIC_ASYNC_RAW)
    assert_m101(tok, findings, ANTHROPIC_ASYNC_RAW, "Current time", "Current time: {}\n\n" + POLICY, TS)


ANTHROPIC_STREAMING_RESPONSE = f'''
from datetime import date

import anthropic

client = anthropic.Anthropic()
POLICY = {POLICY_SOURCE}


def stream_answer(question):
    system = [{{"type": "text", "text": f"Today is {{date.today()}}. " + POLICY}}]
    with client.messages.with_streaming_response.create(
        model="claude-haiku-4-5", max_tokens=512, system=system, messages=[{{"role": "user", "content": question}}]
    ) as response:
        for line in response.iter_lines():
            yield line
'''


def test_anthropic_with_streaming_response_create(tmp_path, tok):
    findings = run(tmp_path, ANTHROPIC_STREAMING_RESPONSE)
    assert_m101(tok, findings, ANTHROPIC_STREAMING_RESPONSE, "Today is", "Today is {}. " + POLICY, DAY)


# ------------------------------------------------------------------ LangChain chat models

LANGCHAIN_MESSAGES = f'''
from datetime import datetime

from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage, SystemMessage

POLICY = {POLICY_SOURCE}


def lookup_order(order_id: str) -> str:
    """Look up an order by number."""
    return order_id


class TicketBot:
    def __init__(self):
        self.llm = ChatAnthropic(model="claude-sonnet-4-5", temperature=0).bind_tools([lookup_order])

    def build_messages(self, question):
        stamp = datetime.now().isoformat(sep=" ", timespec="seconds")
        return [
            SystemMessage(content=f"[{{stamp}}] " + POLICY),
            HumanMessage(question),
        ]

    async def reply(self, question):
        return await self.llm.ainvoke(self.build_messages(question))
'''


def test_langchain_chat_model_message_objects(tmp_path, tok):
    findings = run(tmp_path, LANGCHAIN_MESSAGES)
    assert_m101(tok, findings, LANGCHAIN_MESSAGES, "stamp = datetime.now()", "[{}] " + POLICY, TS)


LANGCHAIN_TUPLES = f'''
from datetime import date

from langchain_openai import ChatOpenAI

POLICY = {POLICY_SOURCE}
llm = ChatOpenAI(model="gpt-4o-mini")


def stream_reply(question):
    messages = [("system", f"Date: {{date.today()}}\\n" + POLICY), ("human", question)]
    for chunk in llm.stream(messages):
        yield chunk.content
'''


def test_langchain_chat_model_role_tuples_streamed(tmp_path, tok):
    findings = run(tmp_path, LANGCHAIN_TUPLES)
    assert_m101(tok, findings, LANGCHAIN_TUPLES, "Date: {date", "Date: {}\n" + POLICY, DAY)


def test_invoke_on_something_else_is_not_a_prompt(tmp_path):
    # a LangChain retriever, a tool and a plain object: `.invoke` on them sends no chat prompt
    source = '''
from datetime import datetime

from langchain_core.tools import tool


@tool
def now_tool(query: str) -> str:
    """The current time."""
    return str(datetime.now())


def search(retriever, question):
    docs = retriever.invoke(f"{datetime.now()} " + question)
    return now_tool.invoke({"query": question}), docs
'''
    assert run(tmp_path, source) == []


# ------------------------------------------------------------------ LlamaIndex

LLAMAINDEX_CHAT = f'''
from datetime import datetime

from llama_index.core.llms import ChatMessage
from llama_index.llms.anthropic import Anthropic

POLICY = {POLICY_SOURCE}


class Responder:
    def __init__(self):
        self.llm = Anthropic(model="claude-haiku-4-5")

    async def respond(self, question):
        messages = [
            ChatMessage(role="system", content=f"Now: {{datetime.now()}}. " + POLICY),
            ChatMessage(role="user", content=question),
        ]
        gen = await self.llm.astream_chat(messages)
        async for delta in gen:
            yield delta
'''


def test_llamaindex_chat_messages_async_stream(tmp_path, tok):
    findings = run(tmp_path, LLAMAINDEX_CHAT)
    assert_m101(tok, findings, LLAMAINDEX_CHAT, "Now: {datetime", "Now: {}. " + POLICY, TS)


# ------------------------------------------------------------------ agent frameworks

PYDANTIC_AI_AGENT = f'''
from datetime import date

from pydantic_ai import Agent

POLICY = {POLICY_SOURCE}

support_agent = Agent(
    "anthropic:claude-sonnet-4-5",
    system_prompt=f"Today is {{date.today()}}. " + POLICY,
    retries=2,
)


async def handle(question: str) -> str:
    result = await support_agent.run(question)
    return result.output
'''


def test_pydantic_ai_agent_system_prompt(tmp_path, tok):
    findings = run(tmp_path, PYDANTIC_AI_AGENT)
    assert_m101(tok, findings, PYDANTIC_AI_AGENT, "Today is", "Today is {}. " + POLICY, DAY, per_request=False)


OPENAI_AGENTS = f'''
from datetime import datetime

from agents import Agent, Runner, function_tool

POLICY = {POLICY_SOURCE}


@function_tool
def lookup_order(order_id: str) -> str:
    return order_id


def make_agent():
    return Agent(
        name="Support",
        instructions=f"Session started {{datetime.now()}}.\\n" + POLICY,
        tools=[lookup_order],
    )


def handle(question):
    return Runner.run_sync(make_agent(), question)
'''


def test_openai_agents_instructions(tmp_path, tok):
    findings = run(tmp_path, OPENAI_AGENTS)
    assert_m101(tok, findings, OPENAI_AGENTS, "Session started", "Session started {}.\n" + POLICY, TS, per_request=False)


def test_clean_framework_agents_have_no_findings(tmp_path):
    # the date goes after the static prompt and the question; the static agent prompt has no volatile part
    source = f'''
from datetime import date

from agents import Agent
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from pydantic_ai import Agent as TypedAgent

POLICY = {POLICY_SOURCE}
llm = ChatOpenAI(model="gpt-4o-mini")
triage = Agent(name="Triage", instructions=POLICY)
typed = TypedAgent("openai:gpt-4o", system_prompt=POLICY)


def reply(question):
    return llm.invoke([SystemMessage(POLICY), HumanMessage(question + f"\\n(today: {{date.today()}})")])
'''
    assert run(tmp_path, source) == []


# ------------------------------------------------------------------ orders from set-typed parameters

TOOLS_FROM_SET_PARAM = '''
from typing import Set

from openai import OpenAI

REGISTRY = {
    "get_order": {"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}},
    "track_parcel": {"type": "function", "function": {"name": "track_parcel", "parameters": {"type": "object"}}},
}


class ToolBox:
    def specs(self, enabled: Set[str]):
        return [REGISTRY[name] for name in enabled]


class Assistant:
    def __init__(self):
        self.client = OpenAI()
        self.tools = ToolBox()

    def ask(self, question, enabled: "frozenset[str] | None" = None):
        return self.client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": question}],
            tools=[REGISTRY[name] for name in enabled],
        )
'''


def test_tools_from_a_set_annotated_parameter(tmp_path):
    findings = run(tmp_path, TOOLS_FROM_SET_PARAM)
    line = line_of(TOOLS_FROM_SET_PARAM, "tools=[REGISTRY[name] for name in enabled]")
    assert [(f.code, f.line) for f in findings] == [("M202", line)]
    f = findings[0]
    assert f.column == TOOLS_FROM_SET_PARAM.splitlines()[line - 1].index("enabled]") + 1
    assert f"the parameter `enabled` annotated `frozenset[str] | None` (line {line_of(TOOLS_FROM_SET_PARAM, 'def ask')})" in f.message


DOCUMENTS_FROM_SET_PARAM = '''
from datetime import date

import litellm

HANDBOOK = {
    "returns": "Unused items can be returned within 30 days of delivery for a full refund.",
    "shipping": "Standard shipping takes three to five business days and is free above 75 euros.",
    "warranty": "Tents and stoves carry a two-year warranty against manufacturing defects.",
}


def context_for(topics: set[str]) -> str:
    sections = []
    for topic in topics:
        sections.append(HANDBOOK[topic])
    return "\\n\\n".join(sections)


def answer(question, topics: set[str]):
    system = "Answer from the handbook sections below.\\n\\n" + context_for(topics)
    return litellm.completion(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
    )


def answer_sorted(question, topics: set[str]):
    system = "Answer from the handbook sections below.\\n\\n" + "\\n\\n".join(HANDBOOK[t] for t in sorted(topics))
    return litellm.completion(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
    )


def answer_membership(question, topics: set[str]):
    known = [HANDBOOK[t] for t in ("returns", "shipping", "warranty") if t in topics]
    return litellm.completion(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": "\\n\\n".join(known)}, {"role": "user", "content": question}],
    )
'''


def test_documents_from_a_set_annotated_parameter(tmp_path):
    findings = run(tmp_path, DOCUMENTS_FROM_SET_PARAM)
    # only the loop over the set parameter; sorted(topics) and the membership test are stable
    line = line_of(DOCUMENTS_FROM_SET_PARAM, "for topic in topics:")
    assert [(f.code, f.line) for f in findings] == [("M203", line)]
    # the helper's own annotation is named, not the caller's
    own = line_of(DOCUMENTS_FROM_SET_PARAM, "def context_for")
    assert f"the parameter `topics` annotated `set[str]` (line {own})" in findings[0].message


def test_set_parameter_fix_sorts_the_iteration(tmp_path):
    from promptlint.cli import main

    path = tmp_path / "agent.py"
    path.write_text(DOCUMENTS_FROM_SET_PARAM, encoding="utf-8")
    code = main(["check", "--tokenizer", str(TOKENIZER), "--fix", str(path)])
    fixed = path.read_text(encoding="utf-8")
    assert "    for topic in sorted(topics):\n" in fixed, fixed
    assert code == 0
    assert run(tmp_path, fixed) == []


LANGCHAIN_BOUND_TOOLS = '''
from langchain_anthropic import ChatAnthropic
from langchain_core.tools import StructuredTool

from shop import catalog


def build_tools(names: frozenset):
    return [StructuredTool.from_function(getattr(catalog, n)) for n in names]


class Router:
    def __init__(self, enabled):
        self.enabled = enabled
        self.model = ChatAnthropic(model="claude-haiku-4-5")

    def runnable(self):
        return self.model.bind_tools(build_tools(self.enabled))

    def runnable_sorted(self, names: frozenset):
        return self.model.bind_tools([StructuredTool.from_function(getattr(catalog, n)) for n in sorted(names)])
'''


def test_langchain_bind_tools_from_a_frozenset_parameter(tmp_path):
    findings = run(tmp_path, LANGCHAIN_BOUND_TOOLS)
    line = line_of(LANGCHAIN_BOUND_TOOLS, "for n in names]")
    assert [(f.code, f.line) for f in findings] == [("M202", line)]
    sent = line_of(LANGCHAIN_BOUND_TOOLS, "return self.model.bind_tools(build_tools")
    assert f"reach `tools=` of `self.model.bind_tools(...)` at line {sent}" in findings[0].message


PYDANTIC_AI_DECORATED = f'''
from datetime import date

from pydantic_ai import Agent, RunContext

POLICY = {POLICY_SOURCE}

agent = Agent("openai:gpt-4o", deps_type=str)


@agent.system_prompt
def support_prompt(ctx: RunContext[str]) -> str:
    return f"Customer tier: gold. Today is {{date.today()}}.\\n" + POLICY


@agent.tool_plain
def lookup_order(order_id: str) -> str:
    return f"order {{order_id}} checked {{date.today()}}"
'''


def test_pydantic_ai_decorated_system_prompt(tmp_path, tok):
    findings = run(tmp_path, PYDANTIC_AI_DECORATED)
    assert_m101(tok, findings, PYDANTIC_AI_DECORATED, "Customer tier", "Customer tier: gold. Today is {}.\n" + POLICY, DAY,
                per_request=False)
    decorator = line_of(PYDANTIC_AI_DECORATED, "@agent.system_prompt")
    assert f"reaches `agent.system_prompt(...)` at line {decorator}" in findings[0].notes


LANGGRAPH_AND_ROUTER = f'''
from datetime import datetime

from langchain_core.language_models import BaseChatModel
from langgraph.prebuilt import create_react_agent
from litellm import Router

POLICY = {POLICY_SOURCE}
router = Router(model_list=[{{"model_name": "support", "litellm_params": {{"model": "gpt-4o-mini"}}}}])


def graph(model, tools):
    return create_react_agent(model, tools, prompt=f"Started {{datetime.now()}}. " + POLICY)


async def fallback(question):
    return await router.acompletion("support", [{{"role": "user", "content": f"At {{datetime.now()}}: " + POLICY + question}}])


def review(llm: BaseChatModel, question):
    return llm.invoke([("system", f"Checked at {{datetime.now()}}\\n" + POLICY), ("human", question)])
'''


def test_langgraph_prompt_router_and_typed_chat_model(tmp_path, tok):
    findings = run(tmp_path, LANGGRAPH_AND_ROUTER)
    expected = [("M101", line_of(LANGGRAPH_AND_ROUTER, "Started {")), ("M101", line_of(LANGGRAPH_AND_ROUTER, "At {")),
                ("M101", line_of(LANGGRAPH_AND_ROUTER, "Checked at {"))]
    assert sorted((f.code, f.line) for f in findings) == expected
    by_line = {f.line: f for f in findings}
    s, lost = m101_figures(tok, f"Started {TS[0]}. " + POLICY, f"Started {TS[1]}. " + POLICY)
    assert by_line[expected[0][1]].first_divergent_token.index == s
    assert by_line[expected[0][1]].arithmetic.lost_blocks == lost
    s, lost = m101_figures(tok, f"At {TS[0]}: " + POLICY + QUESTION[0], f"At {TS[1]}: " + POLICY + QUESTION[0],
                           f"At {TS[0]}: " + POLICY + QUESTION[1])
    assert by_line[expected[1][1]].first_divergent_token.index == s
    assert by_line[expected[1][1]].arithmetic.lost_blocks == lost and lost > 20
    s, lost = m101_figures(tok, f"Checked at {TS[0]}\n{POLICY}\n\n{QUESTION[0]}", f"Checked at {TS[1]}\n{POLICY}\n\n{QUESTION[0]}",
                           f"Checked at {TS[0]}\n{POLICY}\n\n{QUESTION[1]}")
    assert by_line[expected[2][1]].first_divergent_token.index == s
    assert by_line[expected[2][1]].arithmetic.lost_blocks == lost and lost > 20


TOOLS_FROM_SET_RETURNING_METHOD = '''
from anthropic import Anthropic

from toolkit import registry


class Toolbox:
    def enabled(self) -> "frozenset[str]":
        return registry.enabled_names()

    def schemas(self):
        return [registry.schema(name) for name in self.enabled()]

    def schemas_sorted(self):
        return [registry.schema(name) for name in sorted(self.enabled())]

    def is_enabled(self, name):
        return name in self.enabled()


class Agent:
    def __init__(self):
        self.client = Anthropic()
        self.toolbox = Toolbox()

    def run(self, question):
        return self.client.messages.create(
            model="claude-sonnet-4-5", max_tokens=512, tools=self.toolbox.schemas(), messages=[{"role": "user", "content": question}]
        )

    def enabled_tools(self):
        return [registry.schema(name) for name in self.enabled()]

    def enabled(self) -> set[str]:
        return registry.enabled_names()

    def run_direct(self, question):
        return self.client.messages.create(
            model="claude-sonnet-4-5", max_tokens=512, tools=self.enabled_tools(), messages=[{"role": "user", "content": question}]
        )
'''


def test_tools_from_a_method_annotated_to_return_a_set(tmp_path):
    # self.toolbox.schemas() is another object's method, followed into Toolbox (its `enabled()` returns a
    # frozenset); the sorted and membership uses in Toolbox are stable
    src = TOOLS_FROM_SET_RETURNING_METHOD
    findings = run(tmp_path, src)
    lines = src.splitlines()
    toolbox = line_of(src, "for name in self.enabled()]")
    line = max(i for i, text in enumerate(lines, 1) if "for name in self.enabled()]" in text)
    assert [(f.code, f.line) for f in findings] == [("M202", toolbox), ("M202", line)]
    assert findings[0].column == findings[1].column == lines[line - 1].index("self.enabled()") + 1
    frozen = line_of(src, "def enabled(self) -> \"frozenset")
    assert f"`enabled()` (returns `frozenset[str]`) (line {frozen})" in findings[0].message
    assert f"`enabled()` (returns `set[str]`) (line {line_of(src, 'def enabled(self) -> set[str]')})" in findings[1].message


OPENAI_RAW_RESPONSE_TOOLS = '''
from openai import AsyncOpenAI

SPECS = {
    "get_order": {"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}},
    "track_parcel": {"type": "function", "function": {"name": "track_parcel", "parameters": {"type": "object"}}},
}


class Gateway:
    def __init__(self, allowed):
        self.client = AsyncOpenAI()
        self.allowed = allowed

    async def complete(self, question, names):
        raw = await self.client.chat.completions.with_raw_response.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": question}],
            tools=[SPECS[n] for n in set(names) & SPECS.keys()],
        )
        return raw.headers.get("x-request-id"), raw.parse()
'''


def test_openai_raw_response_tools_from_a_set(tmp_path):
    findings = run(tmp_path, OPENAI_RAW_RESPONSE_TOOLS)
    line = line_of(OPENAI_RAW_RESPONSE_TOOLS, "tools=[SPECS[n]")
    assert [(f.code, f.line) for f in findings] == [("M202", line)]
    assert findings[0].column == OPENAI_RAW_RESPONSE_TOOLS.splitlines()[line - 1].index("set(names)") + 1
    sent = line_of(OPENAI_RAW_RESPONSE_TOOLS, "with_raw_response.create(")
    assert f"iterating a set (line {line}) without `sorted()` and reach `tools=` of `self.client.chat.completions.with" in findings[0].message
    assert f"(...)` at line {sent}:" in findings[0].message


def test_set_algebra_on_dict_views_is_unordered_and_sorted_is_clean(tmp_path):
    source = OPENAI_RAW_RESPONSE_TOOLS.replace("set(names) & SPECS.keys()", "SPECS.keys() - set(self.allowed)")
    findings = run(tmp_path, source)
    assert [(f.code, f.line) for f in findings] == [("M202", line_of(source, "tools=[SPECS[n]"))]
    assert "a set operation on a dict view" in findings[0].message
    clean = OPENAI_RAW_RESPONSE_TOOLS.replace("set(names) & SPECS.keys()", "sorted(set(names) & SPECS.keys())")
    assert run(tmp_path, clean, "clean.py") == []


# ------------------------------------------------------------------ more SDKs and frameworks (issue 29, round 3)

MORE_SHAPES = {
    "openai<1.0 ChatCompletion.create": (
        "import openai\n\n\ndef ask(question):\n    return openai.ChatCompletion.create(model=\"gpt-3.5-turbo\", messages=[\n"
        "        {\"role\": \"system\", \"content\": SYSTEM}, {\"role\": \"user\", \"content\": question}])\n", True),
    "mistralai chat.complete": (
        "from mistralai import Mistral\n\nclient = Mistral(api_key=\"k\")\n\n\ndef ask(question):\n"
        "    return client.chat.complete(model=\"mistral-large-latest\", messages=[\n"
        "        {\"role\": \"system\", \"content\": SYSTEM}, {\"role\": \"user\", \"content\": question}])\n", True),
    "huggingface chat_completion": (
        "from huggingface_hub import InferenceClient\n\nclient = InferenceClient()\n\n\ndef ask(question):\n"
        "    return client.chat_completion(messages=[\n"
        "        {\"role\": \"system\", \"content\": SYSTEM}, {\"role\": \"user\", \"content\": question}])\n", True),
    "cohere preamble=": (
        "import cohere\n\nco = cohere.Client()\n\n\ndef ask(question):\n    return co.chat(message=question, preamble=SYSTEM)\n",
        False),
    "LlamaIndex Agent.from_tools(system_prompt=)": (
        "from llama_index.core.agent import ReActAgent\n\n\ndef make(tools, llm):\n"
        "    return ReActAgent.from_tools(tools, llm=llm, system_prompt=SYSTEM)\n", False),
}


@pytest.mark.parametrize("shape", sorted(MORE_SHAPES))
def test_more_sdk_and_framework_shapes(tmp_path, tok, shape):
    body, with_question = MORE_SHAPES[shape]
    source = f"from datetime import datetime\n\nSYSTEM = f\"Now: {{datetime.now():%Y-%m-%d %H:%M:%S}}\\n\" + {json.dumps(POLICY)}\n\n" + body
    findings = run(tmp_path, source)
    assert_m101(tok, findings, source, "datetime.now()", "Now: {}\n" + POLICY, TS, per_request=with_question)


CREW = '''
from datetime import datetime

from crewai import Agent

researcher = Agent(role="Researcher", goal="Find facts.",
                   backstory=f"It is {{datetime.now():%Y-%m-%d %H:%M:%S}}. " + {policy})
'''


def test_crewai_agent_system_prompt_is_its_role_backstory_and_goal(tmp_path, tok):
    source = CREW.format(policy=json.dumps(POLICY))
    findings = run(tmp_path, source)
    assert_m101(tok, findings, source, "datetime.now()",
                "You are Researcher. It is {}. " + POLICY.replace("{", "{{").replace("}", "}}") + "\nYour personal goal is: Find facts.",
                TS, per_request=False)


def test_crewai_agent_with_a_dated_task_is_clean(tmp_path):
    source = (f"from datetime import date\n\nfrom crewai import Agent, Task\n\n"
              f"researcher = Agent(role=\"Researcher\", goal=\"Find facts.\", backstory={json.dumps(POLICY)})\n"
              "task = Task(description=f\"Summarize the news of {date.today()}\", agent=researcher, expected_output=\"A summary\")\n")
    assert run(tmp_path, source) == []
