"""A fifth unseen set of agent-style Python projects, written blind: its author read docs/rules/*.md,
rules/*.toml, the opening of docs/python.md and the other sets' docstrings only (not the analyzer's source,
not another set's cases, not a run of it), in styles no earlier unseen set uses: a FastAPI route whose
``PromptFactory`` arrives through ``Depends`` and stamps the session clock before the policy for an
``AsyncOpenAI`` call, a Celery ``@shared_task`` sending ``litellm.completion`` a ``string.Template`` system
prompt with ``time.strftime`` first, a Slack Bolt handler picking Anthropic tools from a dataclass field
annotated ``set[str]``, a discord.py cog joining FAQ sections from a set union for an OpenAI-compatible
(Groq) endpoint, a Flask GitHub-webhook review bot dumping its merged review rules with ``json.dumps`` on
an instance attribute, a vLLM-backed RAG service whose shared ``extra_body`` asks for ``prompt_logprobs``,
an ``httpx`` multi-tenant proxy whose request body salts the cache with ``secrets.token_urlsafe``, a
LangChain ``ChatAnthropic`` ``SystemMessage`` with content blocks whose cached block opens with a
conversation ``uuid4``, a Bedrock ``converse`` agent class with five ``cachePoint`` blocks across system
and messages, and a coding agent's tool list whose only breakpoint (on the last tool) closes a prefix below
the model's minimum, sent with ``messages.with_raw_response.create``.

Each hazard's expected rule, file and line (the needle on it: the line where the hazard is made) were
written down before the set was first run; the commit that adds this file holds them as written. Each
clean project looks like one of the hazards but is cache-safe by the rules' own terms (the volatile value
in the last user message or after the last breakpoint, ``sorted(...)`` iteration, ``sort_keys=True``,
output logprobs instead of prompt logprobs, a per-tenant HMAC salt, four checkpoints, the breakpoint on
a long static system block).

First run (15:13 UTC, main at f4f76e5 — after the fourth round's flow families — the set merged unchanged
and run once): 7 of 10 hazards found at the expected line; one false alarm on the 10 clean projects.
Missed:
- "FastAPI Depends-injected PromptFactory": nothing. The factory reaches the route as a parameter default
  ``Depends(get_prompts)``; the flow does not take a ``Depends(...)`` provider's return as the parameter's value.
- "httpx multi-tenant proxy, cache salt from secrets.token_urlsafe" (M401): nothing.
- "vLLM-backed RAG service, shared extra_body asks for prompt_logprobs" (M702): nothing.
False alarm:
- "LangChain ChatAnthropic, cached handbook block, conversation id after the breakpoint": M101 at
  persona.py:12 (the uuid in a later content block with no breakpoint), where the rule docs say a value
  after the last breakpoint costs nothing cached.
The expectations are kept as written; the set stays red on these four until each is closed as a family.
"""

from __future__ import annotations

import json

import pytest

import flow_harness

from test_agent_call_shapes import POLICY

PS = json.dumps(POLICY)
# Three policies: 1,300+ tokens in the pinned tokenizer (POLICY is 438), over the 1,024-token minimum a
# claude-sonnet-4-5 breakpoint needs, so a breakpoint on it caches something (M106) and is not too short (M703).
HS = json.dumps("\n\n".join([POLICY] * 3))

# name -> (files, the file linted, (rule, file of the finding, a needle on its line))
CASES = {
    "FastAPI Depends-injected PromptFactory, session clock before the policy": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "prompts.py": r'''
            from datetime import datetime, timezone

            from policy import POLICY


            class PromptFactory:
                def __init__(self, shop: str) -> None:
                    self.shop = shop

                def system(self) -> str:
                    opened = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
                    return f"Session opened {opened} UTC for {self.shop}.\n\n{POLICY}"

                def messages(self, question: str) -> list[dict]:
                    return [
                        {"role": "system", "content": self.system()},
                        {"role": "user", "content": question},
                    ]
            ''',
        "app.py": r'''
            from fastapi import Depends, FastAPI
            from openai import AsyncOpenAI
            from pydantic import BaseModel

            from prompts import PromptFactory

            app = FastAPI()
            client = AsyncOpenAI()


            class Ask(BaseModel):
                question: str


            def get_factory() -> PromptFactory:
                return PromptFactory("Acme Outdoor Gear")


            @app.post("/ask")
            async def ask(body: Ask, factory: PromptFactory = Depends(get_factory)) -> dict:
                resp = await client.chat.completions.create(
                    model="gpt-4o-mini",
                    messages=factory.messages(body.question),
                    temperature=0.2,
                )
                return {"answer": resp.choices[0].message.content}
            ''',
    }, "app.py", ("M101", "prompts.py", "datetime.now(timezone.utc).strftime")),
    "Celery shared_task, litellm.completion, string.Template with time.strftime first": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "prompts.py": r'''
            import string
            import time

            from policy import POLICY

            SYSTEM = string.Template("Ticket digest run of $started.\n\n$policy\n\nSummarise the ticket for the on-call engineer.")


            def summary_messages(body: str) -> list[dict]:
                system = SYSTEM.substitute(started=time.strftime("%Y-%m-%d %H:%M:%S"), policy=POLICY)
                return [{"role": "system", "content": system}, {"role": "user", "content": body}]
            ''',
        "tasks.py": r'''
            import litellm
            from celery import shared_task

            from prompts import summary_messages


            @shared_task(bind=True, max_retries=3)
            def summarize_ticket(self, ticket_id: int, body: str) -> str:
                try:
                    resp = litellm.completion(
                        model="anthropic/claude-3-5-haiku-20241022",
                        messages=summary_messages(body),
                        max_tokens=400,
                    )
                except litellm.RateLimitError as exc:
                    raise self.retry(exc=exc, countdown=30)
                return resp.choices[0].message.content
            ''',
    }, "tasks.py", ("M101", "prompts.py", "time.strftime(")),
    "Slack Bolt handler, Anthropic tools from a dataclass field annotated set[str]": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "workspace.py": r'''
            from dataclasses import dataclass, field

            TOOL_DEFS = {
                "jira_search": {
                    "name": "jira_search",
                    "description": "Search Jira issues with a JQL query and return key, summary and status of each match.",
                    "input_schema": {"type": "object", "properties": {"jql": {"type": "string"}}, "required": ["jql"]},
                },
                "github_issue": {
                    "name": "github_issue",
                    "description": "Open a GitHub issue in the team's repository with a title and a markdown body.",
                    "input_schema": {"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}}, "required": ["title", "body"]},
                },
                "pagerduty_oncall": {
                    "name": "pagerduty_oncall",
                    "description": "Return who is on call right now for a PagerDuty escalation policy.",
                    "input_schema": {"type": "object", "properties": {"policy": {"type": "string"}}, "required": ["policy"]},
                },
            }


            @dataclass
            class WorkspaceConfig:
                team_id: str
                integrations: set[str] = field(default_factory=lambda: {"jira_search", "github_issue", "pagerduty_oncall"})
            ''',
        "bot.py": r'''
            import anthropic
            from slack_bolt import App

            from policy import POLICY
            from workspace import TOOL_DEFS, WorkspaceConfig

            app = App()
            claude = anthropic.Anthropic()


            def load_config(team_id: str) -> WorkspaceConfig:
                return WorkspaceConfig(team_id=team_id)


            @app.event("app_mention")
            def on_mention(event, say, context):
                config = load_config(context["team_id"])
                tools = [TOOL_DEFS[name] for name in config.integrations]
                reply = claude.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    system=POLICY,
                    tools=tools,
                    messages=[{"role": "user", "content": event["text"]}],
                )
                say(text=reply.content[0].text, thread_ts=event["ts"])
            ''',
    }, "bot.py", ("M202", "bot.py", "for name in config.integrations")),
    "discord.py cog, FAQ sections joined from a set union, Groq through AsyncOpenAI": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "faq.py": r'''
            GENERAL_FAQ = (
                "Opening hours: the shop answers messages Monday to Saturday, 8:00 to 20:00 Central European Time, and replies within one working day.",
                "Accounts: a customer can change the e-mail address of an account from the profile page; the old address receives a confirmation link.",
            )
            SHIPPING_FAQ = [
                "Shipping: parcels within the EU leave the warehouse within two working days and arrive three to five working days later.",
                "Returns: unused items can be returned within 30 days; the return label is free for members and costs 4.95 EUR otherwise.",
            ]
            ''',
        "cog.py": r'''
            import discord
            from discord.ext import commands
            from openai import AsyncOpenAI

            from faq import GENERAL_FAQ, SHIPPING_FAQ
            from policy import POLICY

            groq = AsyncOpenAI(base_url="https://api.groq.com/openai/v1")


            class HelpDesk(commands.Cog):
                def __init__(self, bot: commands.Bot) -> None:
                    self.bot = bot
                    knowledge = "\n\n".join(set(GENERAL_FAQ) | set(SHIPPING_FAQ))
                    self.system_prompt = f"{POLICY}\n\nFrequently asked questions:\n{knowledge}"

                @commands.Cog.listener()
                async def on_message(self, message: discord.Message) -> None:
                    if message.author.bot:
                        return
                    resp = await groq.chat.completions.create(
                        model="llama-3.3-70b-versatile",
                        messages=[
                            {"role": "system", "content": self.system_prompt},
                            {"role": "user", "content": message.content},
                        ],
                    )
                    await message.reply(resp.choices[0].message.content)
            ''',
    }, "cog.py", ("M203", "cog.py", "set(GENERAL_FAQ) | set(SHIPPING_FAQ)")),
    "Flask GitHub webhook review bot, json.dumps of merged rules on self": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "reviewer.py": r'''
            import json

            import anthropic

            from policy import POLICY

            DEFAULT_RULES = {
                "max_function_lines": 60,
                "forbid": ["print(", "breakpoint()", "TODO"],
                "require_tests": True,
                "style": {"line_length": 100, "quotes": "double"},
            }


            class Reviewer:
                def __init__(self, overrides: dict | None = None) -> None:
                    self.rules = dict(DEFAULT_RULES)
                    self.rules.update(overrides or {})
                    self.client = anthropic.Anthropic()

                def system_prompt(self) -> str:
                    rules = json.dumps(self.rules, indent=2)
                    return f"{POLICY}\n\nReview rules for this repository:\n{rules}"

                def review(self, title: str, diff: str) -> str:
                    msg = self.client.messages.create(
                        model="claude-sonnet-4-5",
                        max_tokens=2048,
                        system=self.system_prompt(),
                        messages=[{"role": "user", "content": f"Pull request: {title}\n\n{diff}"}],
                    )
                    return msg.content[0].text
            ''',
        "webhook.py": r'''
            from flask import Flask, request

            from reviewer import Reviewer

            app = Flask(__name__)
            reviewer = Reviewer({"require_tests": False})


            @app.post("/github/webhook")
            def on_pull_request():
                event = request.get_json()
                pr = event["pull_request"]
                body = reviewer.review(pr["title"], pr["diff"])
                return {"review": body}
            ''',
    }, "webhook.py", ("M201", "reviewer.py", "json.dumps(self.rules")),
    "vLLM-backed RAG service, shared extra_body asks for prompt_logprobs": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "settings.py": r'''
            import os

            VLLM_URL = os.environ.get("VLLM_URL", "http://localhost:8000/v1")
            MODEL = "Qwen/Qwen2.5-7B-Instruct"
            # scored by the hallucination monitor
            EXTRA_BODY = {"top_k": 20, "repetition_penalty": 1.05, "prompt_logprobs": 1}
            ''',
        "rag.py": r'''
            from openai import OpenAI

            from policy import POLICY
            from settings import EXTRA_BODY, MODEL, VLLM_URL

            client = OpenAI(base_url=VLLM_URL, api_key="EMPTY")


            class RagService:
                def __init__(self, retriever) -> None:
                    self.retriever = retriever

                def answer(self, question: str) -> str:
                    passages = self.retriever.search(question, k=4)
                    context = "\n\n".join(p.text for p in passages)
                    resp = client.chat.completions.create(
                        model=MODEL,
                        messages=[
                            {"role": "system", "content": POLICY},
                            {"role": "user", "content": f"Question: {question}\n\nSources:\n{context}"},
                        ],
                        extra_body=EXTRA_BODY,
                    )
                    return resp.choices[0].message.content
            ''',
    }, "rag.py", ("M702", "settings.py", '"prompt_logprobs": 1')),
    "httpx multi-tenant proxy, cache salt from secrets.token_urlsafe in the body builder": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "payload.py": r'''
            import secrets

            from policy import POLICY


            def chat_body(tenant_id: str, question: str) -> dict:
                return {
                    "model": "meta-llama/Llama-3.1-8B-Instruct",
                    "messages": [
                        {"role": "system", "content": POLICY},
                        {"role": "user", "content": question},
                    ],
                    "cache_salt": f"{tenant_id}:{secrets.token_urlsafe(8)}",
                    "max_tokens": 512,
                }
            ''',
        "proxy.py": r'''
            import httpx
            from fastapi import FastAPI, Header

            from payload import chat_body

            VLLM_URL = "http://vllm:8000"
            app = FastAPI()
            http = httpx.AsyncClient(timeout=60)


            @app.post("/v1/ask")
            async def ask(question: str, x_tenant: str = Header(...)) -> dict:
                resp = await http.post(f"{VLLM_URL}/v1/chat/completions", json=chat_body(x_tenant, question))
                resp.raise_for_status()
                return resp.json()
            ''',
    }, "proxy.py", ("M401", "payload.py", "secrets.token_urlsafe(8)")),
    "LangChain ChatAnthropic, cached SystemMessage block opens with a conversation uuid4": ({
        "handbook.py": f'''
            HANDBOOK = {HS}
            ''',
        "persona.py": r'''
            import uuid

            from langchain_core.messages import SystemMessage

            from handbook import HANDBOOK


            def system_message() -> SystemMessage:
                return SystemMessage(
                    content=[
                        {
                            "type": "text",
                            "text": f"Conversation {uuid.uuid4()}\n\n{HANDBOOK}",
                            "cache_control": {"type": "ephemeral"},
                        }
                    ]
                )
            ''',
        "chain.py": r'''
            from langchain_anthropic import ChatAnthropic
            from langchain_core.messages import BaseMessage, HumanMessage

            from persona import system_message

            llm = ChatAnthropic(model="claude-sonnet-4-5", max_tokens=1024)


            def answer(question: str, history: list[BaseMessage]) -> str:
                messages = [system_message(), *history, HumanMessage(content=question)]
                return llm.invoke(messages).content
            ''',
    }, "chain.py", ("M106", "persona.py", "uuid.uuid4()")),
    "Bedrock converse agent class, five cachePoint blocks across system and messages": ({
        "handbook.py": f'''
            HANDBOOK = {HS}
            STYLE_GUIDE = {HS}
            EXAMPLES = {HS}
            ''',
        "system.py": r'''
            from handbook import EXAMPLES, HANDBOOK, STYLE_GUIDE

            SYSTEM = [
                {"text": HANDBOOK},
                {"cachePoint": {"type": "default"}},
                {"text": STYLE_GUIDE},
                {"cachePoint": {"type": "default"}},
                {"text": EXAMPLES},
                {"cachePoint": {"type": "default"}},
            ]
            ''',
        "agent.py": r'''
            import boto3

            from system import SYSTEM


            class ConverseAgent:
                def __init__(self, model_id: str = "anthropic.claude-sonnet-4-5-20250929-v1:0") -> None:
                    self.runtime = boto3.client("bedrock-runtime", region_name="eu-central-1")
                    self.model_id = model_id

                def ask(self, summary: str, question: str) -> str:
                    messages = [
                        {"role": "user", "content": [{"text": summary}, {"cachePoint": {"type": "default"}}]},
                        {"role": "assistant", "content": [{"text": "Understood, I have the earlier conversation."}]},
                        {"role": "user", "content": [
                            {"text": question},
                            {"cachePoint": {"type": "default"}},  # the newest turn too
                        ]},
                    ]
                    resp = self.runtime.converse(
                        modelId=self.model_id,
                        system=SYSTEM,
                        messages=messages,
                        inferenceConfig={"maxTokens": 1024},
                    )
                    return resp["output"]["message"]["content"][0]["text"]
            ''',
    }, "agent.py", ("M704", "agent.py", "# the newest turn too")),
    "coding agent, only breakpoint on the last tool below the minimum, with_raw_response": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "tools.py": r'''
            TOOLS = [
                {
                    "name": "bash",
                    "description": "Run a shell command in the repository checkout and return its output.",
                    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
                },
                {
                    "name": "str_replace_editor",
                    "description": "Replace one exact occurrence of old_str with new_str in a file.",
                    "input_schema": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"}},
                        "required": ["path", "old_str", "new_str"],
                    },
                },
                {
                    "name": "finish",
                    "description": "Stop and report that the task is done.",
                    "input_schema": {"type": "object", "properties": {}},
                    "cache_control": {"type": "ephemeral"},
                },
            ]
            ''',
        "loop.py": r'''
            import anthropic

            from policy import POLICY
            from tools import TOOLS

            client = anthropic.Anthropic()


            def step(transcript: list[dict]) -> dict:
                raw = client.messages.with_raw_response.create(
                    model="claude-sonnet-4-5",
                    max_tokens=4096,
                    tools=TOOLS,
                    system=POLICY,
                    messages=transcript,
                )
                message = raw.parse()
                return {"role": "assistant", "content": message.content}
            ''',
    }, "loop.py", ("M703", "tools.py", '"cache_control"')),
}

CLEAN = {
    "FastAPI Depends-injected PromptFactory, the clock in the user message": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "prompts.py": r'''
            from datetime import datetime, timezone

            from policy import POLICY


            class PromptFactory:
                def __init__(self, shop: str) -> None:
                    self.shop = shop

                def system(self) -> str:
                    return POLICY

                def messages(self, question: str) -> list[dict]:
                    opened = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
                    return [
                        {"role": "system", "content": self.system()},
                        {"role": "user", "content": f"{question}\n\n(asked at {opened} UTC)"},
                    ]
            ''',
        "app.py": r'''
            from fastapi import Depends, FastAPI
            from openai import AsyncOpenAI
            from pydantic import BaseModel

            from prompts import PromptFactory

            app = FastAPI()
            client = AsyncOpenAI()


            class Ask(BaseModel):
                question: str


            def get_factory() -> PromptFactory:
                return PromptFactory("Acme Outdoor Gear")


            @app.post("/ask")
            async def ask(body: Ask, factory: PromptFactory = Depends(get_factory)) -> dict:
                resp = await client.chat.completions.create(
                    model="gpt-4o-mini",
                    messages=factory.messages(body.question),
                    temperature=0.2,
                )
                return {"answer": resp.choices[0].message.content}
            ''',
    },
    "Celery shared_task, string.Template system prompt, the run time after the ticket": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "prompts.py": r'''
            import string
            import time

            from policy import POLICY

            SYSTEM = string.Template("$policy\n\nSummarise the ticket for the on-call engineer.")
            USER = string.Template("$body\n\n(digest run of $started)")


            def summary_messages(body: str) -> list[dict]:
                system = SYSTEM.substitute(policy=POLICY)
                user = USER.substitute(body=body, started=time.strftime("%Y-%m-%d %H:%M:%S"))
                return [{"role": "system", "content": system}, {"role": "user", "content": user}]
            ''',
        "tasks.py": r'''
            import litellm
            from celery import shared_task

            from prompts import summary_messages


            @shared_task(bind=True, max_retries=3)
            def summarize_ticket(self, ticket_id: int, body: str) -> str:
                try:
                    resp = litellm.completion(
                        model="anthropic/claude-3-5-haiku-20241022",
                        messages=summary_messages(body),
                        max_tokens=400,
                    )
                except litellm.RateLimitError as exc:
                    raise self.retry(exc=exc, countdown=30)
                return resp.choices[0].message.content
            ''',
    },
    "Slack Bolt handler, tools from the set[str] field in sorted order": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "workspace.py": r'''
            from dataclasses import dataclass, field

            TOOL_DEFS = {
                "jira_search": {
                    "name": "jira_search",
                    "description": "Search Jira issues with a JQL query and return key, summary and status of each match.",
                    "input_schema": {"type": "object", "properties": {"jql": {"type": "string"}}, "required": ["jql"]},
                },
                "github_issue": {
                    "name": "github_issue",
                    "description": "Open a GitHub issue in the team's repository with a title and a markdown body.",
                    "input_schema": {"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}}, "required": ["title", "body"]},
                },
                "pagerduty_oncall": {
                    "name": "pagerduty_oncall",
                    "description": "Return who is on call right now for a PagerDuty escalation policy.",
                    "input_schema": {"type": "object", "properties": {"policy": {"type": "string"}}, "required": ["policy"]},
                },
            }


            @dataclass
            class WorkspaceConfig:
                team_id: str
                integrations: set[str] = field(default_factory=lambda: {"jira_search", "github_issue", "pagerduty_oncall"})
            ''',
        "bot.py": r'''
            import anthropic
            from slack_bolt import App

            from policy import POLICY
            from workspace import TOOL_DEFS, WorkspaceConfig

            app = App()
            claude = anthropic.Anthropic()


            def load_config(team_id: str) -> WorkspaceConfig:
                return WorkspaceConfig(team_id=team_id)


            @app.event("app_mention")
            def on_mention(event, say, context):
                config = load_config(context["team_id"])
                tools = [TOOL_DEFS[name] for name in sorted(config.integrations)]
                reply = claude.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    system=POLICY,
                    tools=tools,
                    messages=[{"role": "user", "content": event["text"]}],
                )
                say(text=reply.content[0].text, thread_ts=event["ts"])
            ''',
    },
    "discord.py cog, FAQ sections from a sorted set union": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "faq.py": r'''
            GENERAL_FAQ = (
                "Opening hours: the shop answers messages Monday to Saturday, 8:00 to 20:00 Central European Time, and replies within one working day.",
                "Accounts: a customer can change the e-mail address of an account from the profile page; the old address receives a confirmation link.",
            )
            SHIPPING_FAQ = [
                "Shipping: parcels within the EU leave the warehouse within two working days and arrive three to five working days later.",
                "Returns: unused items can be returned within 30 days; the return label is free for members and costs 4.95 EUR otherwise.",
            ]
            ''',
        "cog.py": r'''
            import discord
            from discord.ext import commands
            from openai import AsyncOpenAI

            from faq import GENERAL_FAQ, SHIPPING_FAQ
            from policy import POLICY

            groq = AsyncOpenAI(base_url="https://api.groq.com/openai/v1")


            class HelpDesk(commands.Cog):
                def __init__(self, bot: commands.Bot) -> None:
                    self.bot = bot
                    knowledge = "\n\n".join(sorted(set(GENERAL_FAQ) | set(SHIPPING_FAQ)))
                    self.system_prompt = f"{POLICY}\n\nFrequently asked questions:\n{knowledge}"

                @commands.Cog.listener()
                async def on_message(self, message: discord.Message) -> None:
                    if message.author.bot:
                        return
                    resp = await groq.chat.completions.create(
                        model="llama-3.3-70b-versatile",
                        messages=[
                            {"role": "system", "content": self.system_prompt},
                            {"role": "user", "content": message.content},
                        ],
                    )
                    await message.reply(resp.choices[0].message.content)
            ''',
    },
    "Flask GitHub webhook review bot, merged rules dumped with sort_keys": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "reviewer.py": r'''
            import json

            import anthropic

            from policy import POLICY

            DEFAULT_RULES = {
                "max_function_lines": 60,
                "forbid": ["print(", "breakpoint()", "TODO"],
                "require_tests": True,
                "style": {"line_length": 100, "quotes": "double"},
            }


            class Reviewer:
                def __init__(self, overrides: dict | None = None) -> None:
                    self.rules = dict(DEFAULT_RULES)
                    self.rules.update(overrides or {})
                    self.client = anthropic.Anthropic()

                def system_prompt(self) -> str:
                    rules = json.dumps(self.rules, indent=2, sort_keys=True)
                    return f"{POLICY}\n\nReview rules for this repository:\n{rules}"

                def review(self, title: str, diff: str) -> str:
                    msg = self.client.messages.create(
                        model="claude-sonnet-4-5",
                        max_tokens=2048,
                        system=self.system_prompt(),
                        messages=[{"role": "user", "content": f"Pull request: {title}\n\n{diff}"}],
                    )
                    return msg.content[0].text
            ''',
        "webhook.py": r'''
            from flask import Flask, request

            from reviewer import Reviewer

            app = Flask(__name__)
            reviewer = Reviewer({"require_tests": False})


            @app.post("/github/webhook")
            def on_pull_request():
                event = request.get_json()
                pr = event["pull_request"]
                body = reviewer.review(pr["title"], pr["diff"])
                return {"review": body}
            ''',
    },
    "vLLM-backed RAG service, output logprobs only": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "settings.py": r'''
            import os

            VLLM_URL = os.environ.get("VLLM_URL", "http://localhost:8000/v1")
            MODEL = "Qwen/Qwen2.5-7B-Instruct"
            EXTRA_BODY = {"top_k": 20, "repetition_penalty": 1.05}
            ''',
        "rag.py": r'''
            from openai import OpenAI

            from policy import POLICY
            from settings import EXTRA_BODY, MODEL, VLLM_URL

            client = OpenAI(base_url=VLLM_URL, api_key="EMPTY")


            class RagService:
                def __init__(self, retriever) -> None:
                    self.retriever = retriever

                def answer(self, question: str) -> str:
                    passages = self.retriever.search(question, k=4)
                    context = "\n\n".join(p.text for p in passages)
                    resp = client.chat.completions.create(
                        model=MODEL,
                        messages=[
                            {"role": "system", "content": POLICY},
                            {"role": "user", "content": f"Question: {question}\n\nSources:\n{context}"},
                        ],
                        logprobs=True,
                        top_logprobs=3,
                        extra_body=EXTRA_BODY,
                    )
                    return resp.choices[0].message.content
            ''',
    },
    "httpx multi-tenant proxy, per-tenant HMAC cache salt": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "payload.py": r'''
            import hashlib
            import hmac
            import os

            from policy import POLICY

            SALT_KEY = os.environ["CACHE_SALT_KEY"].encode()


            def tenant_salt(tenant_id: str) -> str:
                return hmac.new(SALT_KEY, tenant_id.encode(), hashlib.sha256).hexdigest()[:32]


            def chat_body(tenant_id: str, question: str) -> dict:
                return {
                    "model": "meta-llama/Llama-3.1-8B-Instruct",
                    "messages": [
                        {"role": "system", "content": POLICY},
                        {"role": "user", "content": question},
                    ],
                    "cache_salt": tenant_salt(tenant_id),
                    "max_tokens": 512,
                }
            ''',
        "proxy.py": r'''
            import httpx
            from fastapi import FastAPI, Header

            from payload import chat_body

            VLLM_URL = "http://vllm:8000"
            app = FastAPI()
            http = httpx.AsyncClient(timeout=60)


            @app.post("/v1/ask")
            async def ask(question: str, x_tenant: str = Header(...)) -> dict:
                resp = await http.post(f"{VLLM_URL}/v1/chat/completions", json=chat_body(x_tenant, question))
                resp.raise_for_status()
                return resp.json()
            ''',
    },
    "LangChain ChatAnthropic, cached handbook block, conversation id after the breakpoint": {
        "handbook.py": f'''
            HANDBOOK = {HS}
            ''',
        "persona.py": r'''
            import uuid

            from langchain_core.messages import SystemMessage

            from handbook import HANDBOOK


            def system_message() -> SystemMessage:
                return SystemMessage(
                    content=[
                        {"type": "text", "text": HANDBOOK, "cache_control": {"type": "ephemeral"}},
                        {"type": "text", "text": f"Conversation {uuid.uuid4()}"},
                    ]
                )
            ''',
        "chain.py": r'''
            from langchain_anthropic import ChatAnthropic
            from langchain_core.messages import BaseMessage, HumanMessage

            from persona import system_message

            llm = ChatAnthropic(model="claude-sonnet-4-5", max_tokens=1024)


            def answer(question: str, history: list[BaseMessage]) -> str:
                messages = [system_message(), *history, HumanMessage(content=question)]
                return llm.invoke(messages).content
            ''',
    },
    "Bedrock converse agent class, four cachePoint blocks": {
        "handbook.py": f'''
            HANDBOOK = {HS}
            STYLE_GUIDE = {HS}
            EXAMPLES = {HS}
            ''',
        "system.py": r'''
            from handbook import EXAMPLES, HANDBOOK, STYLE_GUIDE

            SYSTEM = [
                {"text": HANDBOOK},
                {"cachePoint": {"type": "default"}},
                {"text": STYLE_GUIDE},
                {"cachePoint": {"type": "default"}},
                {"text": EXAMPLES},
                {"cachePoint": {"type": "default"}},
            ]
            ''',
        "agent.py": r'''
            import boto3

            from system import SYSTEM


            class ConverseAgent:
                def __init__(self, model_id: str = "anthropic.claude-sonnet-4-5-20250929-v1:0") -> None:
                    self.runtime = boto3.client("bedrock-runtime", region_name="eu-central-1")
                    self.model_id = model_id

                def ask(self, summary: str, question: str) -> str:
                    messages = [
                        {"role": "user", "content": [{"text": summary}]},
                        {"role": "assistant", "content": [{"text": "Understood, I have the earlier conversation."}]},
                        {"role": "user", "content": [
                            {"text": question},
                            {"cachePoint": {"type": "default"}},  # the newest turn
                        ]},
                    ]
                    resp = self.runtime.converse(
                        modelId=self.model_id,
                        system=SYSTEM,
                        messages=messages,
                        inferenceConfig={"maxTokens": 1024},
                    )
                    return resp["output"]["message"]["content"][0]["text"]
            ''',
    },
    "coding agent, breakpoint on the long static system block, with_raw_response": {
        "handbook.py": f'''
            HANDBOOK = {HS}
            ''',
        "tools.py": r'''
            TOOLS = [
                {
                    "name": "bash",
                    "description": "Run a shell command in the repository checkout and return its output.",
                    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
                },
                {
                    "name": "str_replace_editor",
                    "description": "Replace one exact occurrence of old_str with new_str in a file.",
                    "input_schema": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"}},
                        "required": ["path", "old_str", "new_str"],
                    },
                },
                {
                    "name": "finish",
                    "description": "Stop and report that the task is done.",
                    "input_schema": {"type": "object", "properties": {}},
                },
            ]
            ''',
        "loop.py": r'''
            import anthropic

            from handbook import HANDBOOK
            from tools import TOOLS

            client = anthropic.Anthropic()


            def step(transcript: list[dict]) -> dict:
                raw = client.messages.with_raw_response.create(
                    model="claude-sonnet-4-5",
                    max_tokens=4096,
                    tools=TOOLS,
                    system=[{"type": "text", "text": HANDBOOK, "cache_control": {"type": "ephemeral"}}],
                    messages=transcript,
                )
                message = raw.parse()
                return {"role": "assistant", "content": message.content}
            ''',
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unseen_hazard_found_at_its_line(tmp_path, case):
    flow_harness.assert_hazard(tmp_path, CASES[case])


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_unseen_clean_project_gives_nothing(tmp_path, case):
    flow_harness.assert_clean(tmp_path, CLEAN[case])
