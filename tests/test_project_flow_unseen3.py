"""A third unseen set of agent-style Python projects, written blind: its author read docs/python.md and
docs/rules/*.md only (not the analyzer's source, not a run of it), in styles no other unseen set uses:
pydantic-ai's ``@agent.instructions`` decorator fed by a helper module, CrewAI-style role/goal/backstory
records rendered by ``str.format`` for an AutoGen ``AssistantAgent(system_message=...)``, SWE-agent-style
nested config dicts with a set intersection in the command docs, the OpenAI Agents SDK's
``Agent(instructions=<callable>)`` with the worker's PID, aider-style prompt classes (class attributes,
``.format``) on a coder class, Bedrock Converse tools from a dict built over a set difference, Gemini
capabilities from an environment-variable set joined by ``"\\n".join``, enum-driven modes with
``int(time.time())`` in a ``"\\n".join([...])`` list, an OpenAI Responses ``input=`` list from a helper with
``json.dumps`` of merged settings, and ``textwrap.dedent`` before an Anthropic ``cache_control`` breakpoint.

Each hazard's expected rule, file and line (the needle on it: the line where the hazard is made) were
written down before the set was first run; the commit that adds this file holds them as written. Each
clean project looks like one of the hazards but is cache-safe by the rules' own terms (the volatile value
after the shared text or in the last user message, iteration in a stable order, the breakpoint on the
static head).

First run (11:46 UTC, branch s29 at cf4aab3, the set merged unchanged and run once): 7 of 10 hazards found at
the expected line; no false alarm on the 10 clean projects. Missed:
- "Bedrock Converse tools from a dict over a set difference": found as M202 in tool_specs.py, but one line
  late, at ``return list(selected.values())`` (where the dict built from the set is iterated) instead of the
  dict comprehension that iterates ``set(TOOL_SPECS) - set(disabled)`` (the expected line, and the one whose
  ``sorted(...)`` fixes it: sorting the dict's values cannot). Counted as a miss.
- "OpenAI Agents SDK Agent(instructions=<callable>), the worker's PID": nothing. The callable passed as
  ``instructions=`` came from another module; a function reference was an unknown value, not the prompt it
  returns (a same-module callable was only judged as a prompt-named function).
- "aider-style prompt classes with class attributes and .format": nothing. The class attributes, the
  subclass override and the ``.format`` were followed; the clock was lost at ``datetime.now().astimezone()``:
  a method of a volatile value that is not a known text method gave an unknown, static value.
None of the expectations looks wrong by the rule docs. Each miss was then closed as a family
(tests/test_project_flow_families3.py); this set is kept as written.
"""

from __future__ import annotations

import json
import textwrap

import pytest

import flow_harness

from test_agent_call_shapes import POLICY

PS = json.dumps(POLICY)
# Three policies: 1,300+ tokens in the pinned tokenizer (POLICY is 438), over the 1,024-token minimum a
# claude-sonnet-4-5 breakpoint needs, so a breakpoint on it caches something (M106) and is not too short (M703).
HS = json.dumps("\n\n".join([POLICY] * 3))

# name -> (files, the file linted, (rule, file of the finding, a needle on its line))
CASES = {
    "pydantic-ai @agent.instructions, the clock from a context helper": ({
        "context.py": '''
            from datetime import datetime, timezone


            def clock_line() -> str:
                stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
                return f"Current UTC time: {stamp}"
            ''',
        "agent.py": f'''
            from dataclasses import dataclass

            from pydantic_ai import Agent, RunContext

            from context import clock_line

            POLICY = {PS}


            @dataclass
            class Customer:
                name: str
                tier: str


            support = Agent("openai:gpt-4o", deps_type=Customer)


            @support.instructions
            def instructions(ctx: RunContext[Customer]) -> str:
                return clock_line() + "\\n\\n" + POLICY + f"\\n\\nThe customer is {{ctx.deps.name}} ({{ctx.deps.tier}} tier)."


            async def answer(question: str, customer: Customer) -> str:
                result = await support.run(question, deps=customer)
                return result.output
            ''',
    }, "agent.py", ("M101", "context.py", "datetime.now(timezone.utc)")),
    "CrewAI-style role/goal/backstory, AutoGen AssistantAgent(system_message=)": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "roles.py": '''
            import random

            from policy import POLICY

            ROLES = {
                "researcher": {
                    "role": "Senior market researcher",
                    "goal": "Find reliable figures on demand for outdoor gear in the EU",
                    "backstory": "You spent ten years at a retail analytics firm and distrust numbers without a source.",
                },
                "writer": {
                    "role": "Customer newsletter writer",
                    "goal": "Turn the research into a short, friendly newsletter",
                    "backstory": "You write plainly and never promise discounts the shop has not approved.",
                },
            }
            OPENERS = ["Let's get to work.", "Ready when you are.", "Another day, another question."]
            ROLE_TEMPLATE = "{opener}\\nYou are the {role}.\\nYour goal: {goal}.\\n{backstory}\\n\\n{policy}"


            def role_prompt(name):
                spec = ROLES[name]
                return ROLE_TEMPLATE.format(
                    opener=random.choice(OPENERS),
                    role=spec["role"],
                    goal=spec["goal"],
                    backstory=spec["backstory"],
                    policy=POLICY,
                )
            ''',
        "team.py": '''
            from autogen import AssistantAgent, UserProxyAgent

            from roles import role_prompt

            LLM_CONFIG = {"config_list": [{"model": "gpt-4o-mini"}], "temperature": 0}


            def build_team():
                researcher = AssistantAgent("researcher", system_message=role_prompt("researcher"), llm_config=LLM_CONFIG)
                user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
                return user, researcher


            def run(task):
                user, researcher = build_team()
                return user.initiate_chat(researcher, message=task, max_turns=2)
            ''',
    }, "team.py", ("M101", "roles.py", "random.choice(OPENERS)")),
    "SWE-agent-style config dict, command docs over keys() & set": ({
        "config.py": f'''
            POLICY = {PS}

            CONFIG = {{
                "agent": {{
                    "templates": {{
                        "system_template": "SETTING: You are an autonomous programmer working in a command line.\\n\\n"
                        "COMMANDS:\\n{{command_docs}}\\n\\n" + POLICY,
                        "instance_template": "ISSUE:\\n{{problem_statement}}\\n\\nINSTRUCTIONS: Solve the issue above.",
                    }},
                    "tools": {{"enabled": ["open", "goto", "edit", "search_file", "submit"]}},
                }},
            }}
            ''',
        "commands.py": '''
            COMMANDS = {
                "open": "open <path> [<line_number>]: opens the file at path, optionally at line_number",
                "goto": "goto <line_number>: moves the window to show line_number",
                "edit": "edit <start_line>:<end_line>: replaces the lines start_line to end_line with the text that follows",
                "search_file": "search_file <term> [<file>]: searches for term in file",
                "submit": "submit: submits your current code and ends the session",
                "scroll_down": "scroll_down: moves the window down 100 lines",
            }


            def command_docs(enabled):
                return "\\n".join(COMMANDS[name] for name in COMMANDS.keys() & set(enabled))
            ''',
        "agent.py": '''
            from openai import OpenAI

            from commands import command_docs
            from config import CONFIG


            class SWEAgent:
                def __init__(self, model="gpt-4o"):
                    self.client = OpenAI()
                    self.model = model
                    self.templates = CONFIG["agent"]["templates"]
                    self.enabled = CONFIG["agent"]["tools"]["enabled"]

                def initial_messages(self, problem_statement):
                    system = self.templates["system_template"].format(command_docs=command_docs(self.enabled))
                    instance = self.templates["instance_template"].format(problem_statement=problem_statement)
                    return [{"role": "system", "content": system}, {"role": "user", "content": instance}]

                def step(self, problem_statement):
                    response = self.client.chat.completions.create(
                        model=self.model, messages=self.initial_messages(problem_statement), temperature=0)
                    return response.choices[0].message.content
            ''',
    }, "agent.py", ("M203", "commands.py", "COMMANDS.keys() & set(enabled)")),
    "OpenAI Agents SDK Agent(instructions=<callable>), the worker's PID": ({
        "prompts.py": f'''
            import os

            from agents import RunContextWrapper

            POLICY = {PS}


            def support_instructions(ctx: RunContextWrapper, agent) -> str:
                worker = f"Served by worker {{os.getpid()}}."
                return f"{{worker}}\\n{{POLICY}}\\n\\nThe customer is {{ctx.context.name}} ({{ctx.context.tier}} tier)."
            ''',
        "support.py": '''
            from agents import Agent, Runner, function_tool

            from prompts import support_instructions


            @function_tool
            def lookup_order(order_id: str) -> str:
                """Look up an order by its number."""
                return f"Order {order_id}: shipped"


            support_agent = Agent(
                name="Support",
                model="gpt-4.1-mini",
                instructions=support_instructions,
                tools=[lookup_order],
            )


            async def handle(question, customer):
                result = await Runner.run(support_agent, question, context=customer)
                return result.final_output
            ''',
    }, "support.py", ("M101", "prompts.py", "os.getpid()")),
    "aider-style prompt classes with class attributes and .format": ({
        "prompts.py": f'''
            POLICY = {PS}


            class CoderPrompts:
                main_system = "Act as an expert software developer.\\n{{platform}}\\n" + POLICY
                system_reminder = ""
                files_content_prefix = "I have *added these files to the chat* so you can go ahead and edit them.\\n"


            class EditBlockPrompts(CoderPrompts):
                main_system = "Act as an expert software developer who edits code with SEARCH/REPLACE blocks.\\n{{platform}}\\n" + POLICY
                system_reminder = "Every edit must use the SEARCH/REPLACE block format."
            ''',
        "coder.py": '''
            import platform
            from datetime import datetime

            import litellm

            from prompts import EditBlockPrompts


            class Coder:
                gpt_prompts = EditBlockPrompts()

                def __init__(self, main_model="gpt-4o"):
                    self.main_model = main_model

                def get_platform_info(self):
                    dt = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
                    return f"- Platform: {platform.platform()}\\n- Current date and time: {dt}"

                def fmt_system_prompt(self, prompt):
                    return prompt.format(platform=self.get_platform_info())

                def format_messages(self, user_message):
                    main_sys = self.fmt_system_prompt(self.gpt_prompts.main_system)
                    return [dict(role="system", content=main_sys), dict(role="user", content=user_message)]

                def send(self, user_message):
                    completion = litellm.completion(model=self.main_model, messages=self.format_messages(user_message))
                    return completion.choices[0].message.content
            ''',
    }, "coder.py", ("M101", "coder.py", "datetime.now().astimezone()")),
    "Bedrock Converse tools from a dict over a set difference": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "tool_specs.py": '''
            def _spec(name, description, field):
                return {"toolSpec": {"name": name, "description": description, "inputSchema": {"json": {
                    "type": "object", "properties": {field: {"type": "string"}}, "required": [field]}}}}


            TOOL_SPECS = {
                "get_order": _spec("get_order", "Look up an order by its number.", "order_id"),
                "track_parcel": _spec("track_parcel", "Track a parcel by its tracking code.", "tracking_code"),
                "start_return": _spec("start_return", "Open a return for a delivered order.", "order_id"),
                "escalate": _spec("escalate", "Hand the conversation to a human agent.", "reason"),
            }


            def active_tools(disabled=()):
                selected = {name: TOOL_SPECS[name] for name in set(TOOL_SPECS) - set(disabled)}
                return list(selected.values())
            ''',
        "bot.py": '''
            import boto3

            from policy import POLICY
            from tool_specs import active_tools

            bedrock = boto3.client("bedrock-runtime", region_name="eu-central-1")


            def answer(question, disabled=("escalate",)):
                response = bedrock.converse(
                    modelId="anthropic.claude-3-5-sonnet-20240620-v1:0",
                    system=[{"text": POLICY}],
                    messages=[{"role": "user", "content": [{"text": question}]}],
                    toolConfig={"tools": active_tools(disabled)},
                    inferenceConfig={"maxTokens": 800, "temperature": 0},
                )
                return response["output"]["message"]["content"][0]["text"]
            ''',
    }, "bot.py", ("M202", "tool_specs.py", "set(TOOL_SPECS) - set(disabled)")),
    "Gemini capabilities from an environment set, joined into the system instruction": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "features.py": '''
            import os

            FEATURE_NOTES = {
                "returns": "You may open a return for orders delivered in the last 30 days.",
                "vouchers": "You may issue vouchers of up to 20 euros for late deliveries.",
                "repairs": "You may book a repair slot for stoves and tents under warranty.",
            }


            def enabled_features():
                raw = os.environ.get("SUPPORT_FEATURES", "returns,vouchers,repairs")
                return {part.strip() for part in raw.split(",") if part.strip()}


            def capability_block():
                lines = "\\n".join(f"- {FEATURE_NOTES[f]}" for f in enabled_features() if f in FEATURE_NOTES)
                return "Capabilities of this deployment:\\n" + lines
            ''',
        "gemini_client.py": '''
            from google import genai
            from google.genai import types

            from features import capability_block
            from policy import POLICY

            client = genai.Client()


            def ask(question):
                config = types.GenerateContentConfig(
                    system_instruction=capability_block() + "\\n\\n" + POLICY,
                    temperature=0.2,
                )
                return client.models.generate_content(model="gemini-2.0-flash", contents=question, config=config).text
            ''',
    }, "gemini_client.py", ("M203", "features.py", "for f in enabled_features()")),
    "enum-driven modes, a run stamp in a joined list": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "modes.py": '''
            import time
            from enum import Enum

            from policy import POLICY


            class Mode(str, Enum):
                TRIAGE = "triage"
                REFUND = "refund"


            PREAMBLES = {
                Mode.TRIAGE: "You sort incoming tickets into billing, shipping or product questions.",
                Mode.REFUND: "You decide refund requests against the policy below.",
            }


            def system_for(mode: Mode) -> str:
                header = f"[{mode.value} mode, run {int(time.time())}]"
                return "\\n".join([header, PREAMBLES[mode], POLICY])
            ''',
        "desk.py": '''
            from anthropic import Anthropic

            from modes import Mode, system_for

            client = Anthropic()


            def handle(question, mode=Mode.TRIAGE):
                message = client.messages.create(
                    model="claude-3-5-haiku-latest",
                    max_tokens=300,
                    system=system_for(mode),
                    messages=[{"role": "user", "content": question}],
                )
                return message.content[0].text
            ''',
    }, "desk.py", ("M101", "modes.py", "int(time.time())")),
    "Responses API input from a helper, merged settings as JSON": ({
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "settings.py": '''
            BASE_SETTINGS = {"currency": "EUR", "locale": "de-DE", "max_refund": 500, "channels": ["email", "chat"]}
            STORE_SETTINGS = {"locale": "de-AT", "express": True, "warehouse": "Linz"}
            STORE = {**BASE_SETTINGS, **STORE_SETTINGS}
            ''',
        "conversation.py": '''
            import json

            from policy import POLICY
            from settings import STORE


            def build_input(question, history):
                items = [
                    {"role": "developer", "content": "Store configuration:\\n" + json.dumps(STORE, indent=2)},
                    {"role": "developer", "content": POLICY},
                ]
                items.extend(history)
                items.append({"role": "user", "content": question})
                return items
            ''',
        "responder.py": '''
            from openai import OpenAI

            from conversation import build_input

            client = OpenAI()


            def respond(question, history=()):
                response = client.responses.create(model="gpt-4.1-mini", input=build_input(question, list(history)))
                return response.output_text
            ''',
    }, "responder.py", ("M201", "conversation.py", "json.dumps(STORE, indent=2)")),
    "textwrap.dedent opening before an Anthropic cache breakpoint": ({
        "policy.py": f'''
            HANDBOOK = {HS}
            ''',
        "system_blocks.py": '''
            import textwrap
            from datetime import datetime
            from zoneinfo import ZoneInfo

            from policy import HANDBOOK


            def system_blocks(tz_name="Europe/Berlin"):
                opened = datetime.now(ZoneInfo(tz_name)).strftime("%A %d %B %Y, %H:%M")
                opening = textwrap.dedent(f"""\\
                    You are Nordwind's order assistant.
                    This conversation was opened on {opened}.
                    """)
                return [{"type": "text", "text": opening + HANDBOOK, "cache_control": {"type": "ephemeral"}}]
            ''',
        "assistant.py": '''
            import anthropic

            from system_blocks import system_blocks

            client = anthropic.Anthropic()


            def chat(question, history):
                response = client.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    system=system_blocks(),
                    messages=history + [{"role": "user", "content": question}],
                )
                return response.content[0].text
            ''',
    }, "assistant.py", ("M106", "system_blocks.py", "datetime.now(ZoneInfo(tz_name))")),
}

CLEAN = {
    "pydantic-ai static instructions, the clock in the run prompt": {
        "context.py": '''
            from datetime import datetime, timezone


            def clock_line() -> str:
                stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
                return f"Current UTC time: {stamp}"
            ''',
        "agent.py": f'''
            from dataclasses import dataclass

            from pydantic_ai import Agent, RunContext

            from context import clock_line

            POLICY = {PS}


            @dataclass
            class Customer:
                name: str
                tier: str


            support = Agent("openai:gpt-4o", deps_type=Customer)


            @support.instructions
            def instructions(ctx: RunContext[Customer]) -> str:
                return POLICY + f"\\n\\nThe customer is {{ctx.deps.name}} ({{ctx.deps.tier}} tier)."


            async def answer(question: str, customer: Customer) -> str:
                result = await support.run(f"{{question}}\\n\\n{{clock_line()}}", deps=customer)
                return result.output
            ''',
    },
    "AutoGen roles with a fixed opener per role": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "roles.py": '''
            from policy import POLICY

            ROLES = {
                "researcher": {
                    "opener": "Let's get to work.",
                    "role": "Senior market researcher",
                    "goal": "Find reliable figures on demand for outdoor gear in the EU",
                    "backstory": "You spent ten years at a retail analytics firm and distrust numbers without a source.",
                },
            }
            ROLE_TEMPLATE = "{opener}\\nYou are the {role}.\\nYour goal: {goal}.\\n{backstory}\\n\\n{policy}"


            def role_prompt(name):
                spec = ROLES[name]
                return ROLE_TEMPLATE.format(
                    opener=spec["opener"],
                    role=spec["role"],
                    goal=spec["goal"],
                    backstory=spec["backstory"],
                    policy=POLICY,
                )
            ''',
        "team.py": '''
            from autogen import AssistantAgent, UserProxyAgent

            from roles import role_prompt

            LLM_CONFIG = {"config_list": [{"model": "gpt-4o-mini"}], "temperature": 0}


            def build_team():
                researcher = AssistantAgent("researcher", system_message=role_prompt("researcher"), llm_config=LLM_CONFIG)
                user = UserProxyAgent("user", human_input_mode="NEVER", code_execution_config=False)
                return user, researcher
            ''',
    },
    "SWE-agent-style config, command docs in the dict's own order": {
        "config.py": f'''
            POLICY = {PS}

            CONFIG = {{
                "agent": {{
                    "templates": {{
                        "system_template": "SETTING: You are an autonomous programmer working in a command line.\\n\\n"
                        "COMMANDS:\\n{{command_docs}}\\n\\n" + POLICY,
                        "instance_template": "ISSUE:\\n{{problem_statement}}\\n\\nINSTRUCTIONS: Solve the issue above.",
                    }},
                    "tools": {{"enabled": ["open", "goto", "edit", "search_file", "submit"]}},
                }},
            }}
            ''',
        "commands.py": '''
            COMMANDS = {
                "open": "open <path> [<line_number>]: opens the file at path, optionally at line_number",
                "goto": "goto <line_number>: moves the window to show line_number",
                "edit": "edit <start_line>:<end_line>: replaces the lines start_line to end_line with the text that follows",
                "submit": "submit: submits your current code and ends the session",
            }


            def command_docs(enabled):
                wanted = set(enabled)
                return "\\n".join(doc for name, doc in COMMANDS.items() if name in wanted)
            ''',
        "agent.py": '''
            from openai import OpenAI

            from commands import command_docs
            from config import CONFIG


            class SWEAgent:
                def __init__(self, model="gpt-4o"):
                    self.client = OpenAI()
                    self.model = model
                    self.templates = CONFIG["agent"]["templates"]
                    self.enabled = CONFIG["agent"]["tools"]["enabled"]

                def initial_messages(self, question):
                    system = self.templates["system_template"].format(command_docs=command_docs(self.enabled))
                    instance = self.templates["instance_template"].format(problem_statement=question)
                    return [{"role": "system", "content": system}, {"role": "user", "content": instance}]

                def step(self, question):
                    response = self.client.chat.completions.create(
                        model=self.model, messages=self.initial_messages(question), temperature=0)
                    return response.choices[0].message.content
            ''',
    },
    "Agents SDK callable instructions, the customer after the policy": {
        "prompts.py": f'''
            from agents import RunContextWrapper

            POLICY = {PS}


            def support_instructions(ctx: RunContextWrapper, agent) -> str:
                return f"{{POLICY}}\\n\\nThe customer is {{ctx.context.name}} ({{ctx.context.tier}} tier)."
            ''',
        "support.py": '''
            from agents import Agent, Runner

            from prompts import support_instructions

            support_agent = Agent(name="Support", model="gpt-4.1-mini", instructions=support_instructions)


            async def handle(question, customer):
                result = await Runner.run(support_agent, question, context=customer)
                return result.final_output
            ''',
    },
    "aider-style prompt classes, the time in the user message": {
        "prompts.py": f'''
            POLICY = {PS}


            class CoderPrompts:
                main_system = "Act as an expert software developer.\\n{{platform}}\\n" + POLICY


            class EditBlockPrompts(CoderPrompts):
                main_system = "Act as an expert software developer who edits code with SEARCH/REPLACE blocks.\\n{{platform}}\\n" + POLICY
            ''',
        "coder.py": '''
            import platform
            from datetime import datetime

            import litellm

            from prompts import EditBlockPrompts


            class Coder:
                gpt_prompts = EditBlockPrompts()

                def __init__(self, main_model="gpt-4o"):
                    self.main_model = main_model

                def fmt_system_prompt(self, prompt):
                    return prompt.format(platform=f"- Platform: {platform.platform()}")

                def format_messages(self, user_message):
                    dt = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
                    main_sys = self.fmt_system_prompt(self.gpt_prompts.main_system)
                    return [dict(role="system", content=main_sys),
                            dict(role="user", content=f"{user_message}\\n\\n(current date and time: {dt})")]

                def send(self, user_message):
                    completion = litellm.completion(model=self.main_model, messages=self.format_messages(user_message))
                    return completion.choices[0].message.content
            ''',
    },
    "Bedrock Converse tools filtered in the dict's own order": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "tool_specs.py": '''
            def _spec(name, description, field):
                return {"toolSpec": {"name": name, "description": description, "inputSchema": {"json": {
                    "type": "object", "properties": {field: {"type": "string"}}, "required": [field]}}}}


            TOOL_SPECS = {
                "get_order": _spec("get_order", "Look up an order by its number.", "order_id"),
                "track_parcel": _spec("track_parcel", "Track a parcel by its tracking code.", "tracking_code"),
                "escalate": _spec("escalate", "Hand the conversation to a human agent.", "reason"),
            }


            def active_tools(disabled=()):
                blocked = set(disabled)
                return [spec for name, spec in TOOL_SPECS.items() if name not in blocked]
            ''',
        "bot.py": '''
            import boto3

            from policy import POLICY
            from tool_specs import active_tools

            bedrock = boto3.client("bedrock-runtime", region_name="eu-central-1")


            def answer(question, disabled=("escalate",)):
                response = bedrock.converse(
                    modelId="anthropic.claude-3-5-sonnet-20240620-v1:0",
                    system=[{"text": POLICY}],
                    messages=[{"role": "user", "content": [{"text": question}]}],
                    toolConfig={"tools": active_tools(disabled)},
                )
                return response["output"]["message"]["content"][0]["text"]
            ''',
    },
    "Gemini capabilities from an environment set, sorted": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "features.py": '''
            import os

            FEATURE_NOTES = {
                "returns": "You may open a return for orders delivered in the last 30 days.",
                "vouchers": "You may issue vouchers of up to 20 euros for late deliveries.",
            }


            def enabled_features():
                raw = os.environ.get("SUPPORT_FEATURES", "returns,vouchers")
                return {part.strip() for part in raw.split(",") if part.strip()}


            def capability_block():
                lines = "\\n".join(f"- {FEATURE_NOTES[f]}" for f in sorted(enabled_features()) if f in FEATURE_NOTES)
                return "Capabilities of this deployment:\\n" + lines
            ''',
        "gemini_client.py": '''
            from google import genai
            from google.genai import types

            from features import capability_block
            from policy import POLICY

            client = genai.Client()


            def ask(question):
                config = types.GenerateContentConfig(system_instruction=capability_block() + "\\n\\n" + POLICY)
                return client.models.generate_content(model="gemini-2.0-flash", contents=question, config=config).text
            ''',
    },
    "enum-driven modes, the run stamp after the question": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "modes.py": '''
            from enum import Enum

            from policy import POLICY


            class Mode(str, Enum):
                TRIAGE = "triage"
                REFUND = "refund"


            PREAMBLES = {
                Mode.TRIAGE: "You sort incoming tickets into billing, shipping or product questions.",
                Mode.REFUND: "You decide refund requests against the policy below.",
            }


            def system_for(mode: Mode) -> str:
                return "\\n".join([f"[{mode.value} mode]", PREAMBLES[mode], POLICY])
            ''',
        "desk.py": '''
            import time

            from anthropic import Anthropic

            from modes import Mode, system_for

            client = Anthropic()


            def handle(question, mode=Mode.TRIAGE):
                message = client.messages.create(
                    model="claude-3-5-haiku-latest",
                    max_tokens=300,
                    system=system_for(mode),
                    messages=[{"role": "user", "content": f"{question}\\n\\n[received {int(time.time())}]"}],
                )
                return message.content[0].text
            ''',
    },
    "Responses API input helper, settings as JSON with sorted keys": {
        "policy.py": f'''
            POLICY = {PS}
            ''',
        "settings.py": '''
            BASE_SETTINGS = {"currency": "EUR", "locale": "de-DE", "max_refund": 500, "channels": ["email", "chat"]}
            STORE_SETTINGS = {"locale": "de-AT", "express": True, "warehouse": "Linz"}
            STORE = {**BASE_SETTINGS, **STORE_SETTINGS}
            ''',
        "conversation.py": '''
            import json

            from policy import POLICY
            from settings import STORE


            def build_input(question, history):
                items = [
                    {"role": "developer", "content": "Store configuration:\\n" + json.dumps(STORE, indent=2, sort_keys=True)},
                    {"role": "developer", "content": POLICY},
                ]
                items.extend(history)
                items.append({"role": "user", "content": question})
                return items
            ''',
        "responder.py": '''
            from openai import OpenAI

            from conversation import build_input

            client = OpenAI()


            def respond(question, history=()):
                response = client.responses.create(model="gpt-4.1-mini", input=build_input(question, list(history)))
                return response.output_text
            ''',
    },
    "Anthropic breakpoint on the static handbook, the opening time after it": {
        "policy.py": f'''
            HANDBOOK = {HS}
            ''',
        "system_blocks.py": '''
            from datetime import datetime
            from zoneinfo import ZoneInfo

            from policy import HANDBOOK


            def system_blocks(tz_name="Europe/Berlin"):
                opened = datetime.now(ZoneInfo(tz_name)).strftime("%A %d %B %Y, %H:%M")
                return [
                    {"type": "text", "text": "You are Nordwind's order assistant.\\n\\n" + HANDBOOK,
                     "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": f"This conversation was opened on {opened}."},
                ]
            ''',
        "assistant.py": '''
            import anthropic

            from system_blocks import system_blocks

            client = anthropic.Anthropic()


            def chat(question, history):
                response = client.messages.create(
                    model="claude-sonnet-4-5",
                    max_tokens=1024,
                    system=system_blocks(),
                    messages=history + [{"role": "user", "content": question}],
                )
                return response.content[0].text
            ''',
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unseen_hazard_found_at_its_line(tmp_path, case):
    flow_harness.assert_hazard(tmp_path, CASES[case])


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_unseen_clean_project_gives_nothing(tmp_path, case):
    flow_harness.assert_clean(tmp_path, CLEAN[case])
