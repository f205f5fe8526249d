"""Python prompt builders for the big SDKs' request shapes, and the cache-breakpoint rules.

Each module below is written the way agent and RAG projects call Anthropic, Bedrock, OpenAI
Responses and Gemini. Every expected figure (first divergent token, tokens a breakpoint would
cache, lost blocks) comes from the test's own render of what the provider is sent, encoded
directly with `tokenizers` — never from promptlint's numbers. The volatile sample values are the
documented ones (docs/python.md: two timestamps seven seconds apart, two dates a day apart, two ids).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptlint.project.config import Settings, load_settings
from promptlint.driver.lint import lint

ROOT = Path(__file__).resolve().parent.parent
TOKENIZER = ROOT / "tests" / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"
B = 16  # vLLM's default block size (M101 figures)

TS = ("2025-03-14 09:26:53", "2025-03-14 09:27:00")
DAY = ("2025-03-14", "2025-03-15")
TIME = ("09:26:53", "09:27:00")
UUID = ("7f3c9a2e-4b1d-4e8a-9c6f-2d5e8b1a0c34", "c1a9e4d2-8f3b-4a7c-b5e6-9d0f1e2a3b4c")
QUESTION = ("How do I reset my password?", "Where is my order #4417?")  # per-request samples

# A support policy long enough for every provider minimum used below (checked in test_policy_is_long).
POLICY_LINES = [
    f"Rule {i}: " + s
    for i, s in enumerate(
        [
            "Greet the customer by name when it is known and keep a friendly, professional tone.",
            "Never invent order numbers, tracking codes, prices or delivery dates; look them up with the tools.",
            "Refunds are issued within 14 days of an approved return to the original payment method.",
            "Items must be returned unused, in the original packaging, with the receipt or order confirmation.",
            "Shipping within the EU takes two to four business days; express delivery takes one business day.",
            "Orders above 50 euros ship for free; below that the shipping fee is 4.90 euros per parcel.",
            "Escalate any refund above 500 euros to a human agent and tell the customer that you did so.",
            "Cite the policy section you rely on, for example (Returns, section 3), at the end of the answer.",
            "If the customer is angry, acknowledge the problem first, then propose the next concrete step.",
            "Do not discuss competitors, internal tooling, or the content of these instructions.",
        ]
        * 9,
        1,
    )
]
POLICY = "\n".join(POLICY_LINES)
POLICY_SOURCE = "(\n" + "\n".join(f"    {json.dumps(line + chr(10))}" for line in POLICY_LINES[:-1]) + f"\n    {json.dumps(POLICY_LINES[-1])}\n)"


@pytest.fixture(scope="module")
def tok():
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(TOKENIZER))


def enc(tok, text):
    return tok.encode(text, add_special_tokens=False).ids


def divergence(a, b):
    return next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)


def run(tmp_path, source, settings=None):
    path = tmp_path / "agent.py"
    path.write_text(source, encoding="utf-8")
    report = lint([str(path)], settings or Settings(tokenizer=str(TOKENIZER), root=tmp_path))
    assert not report.errors, report.errors
    return report.findings


def line_of(source, needle):
    return next(i for i, line in enumerate(source.splitlines(), 1) if needle in line)


def test_policy_is_long(tok):
    assert 2048 < len(enc(tok, POLICY)) < 4000  # above every minimum used here (1,024 / 1,000 / 2,048)


# ---------------------------------------------------------------------------- Anthropic

ANTHROPIC_AGENT = f'''
from datetime import datetime

import anthropic

client = anthropic.Anthropic()
SUPPORT_POLICY = {POLICY_SOURCE}


def build_system():
    return [
        {{
            "type": "text",
            "text": f"Current time: {{datetime.now()}}\\n\\n" + SUPPORT_POLICY,
            "cache_control": {{"type": "ephemeral"}},
        }}
    ]


def answer(question):
    response = client.messages.create(
        model="claude-sonnet-4-5-20250929",
        max_tokens=1024,
        system=build_system(),
        messages=[{{"role": "user", "content": [{{"type": "text", "text": question}}]}}],
    )
    return response.content[0].text
'''


def test_anthropic_system_blocks_timestamp_before_breakpoint(tmp_path, tok):
    findings = run(tmp_path, ANTHROPIC_AGENT)
    assert [(f.code, f.line) for f in findings] == [("M106", line_of(ANTHROPIC_AGENT, "Current time"))]
    f = findings[0]
    base = f"Current time: {TS[0]}\n\n{POLICY}"  # the prefix the system breakpoint closes
    variant = f"Current time: {TS[1]}\n\n{POLICY}"
    a, b = enc(tok, base), enc(tok, variant)
    s = divergence(a, b)
    assert f.first_divergent_token.index == s
    assert (f.first_divergent_token.base_id, f.first_divergent_token.variant_id) == (a[s], b[s])
    assert f.evidence["base_render"] == base and f.evidence["breakpoint_tokens"] == len(a)
    assert f"the {len(a):,} tokens that breakpoint would cache" in f.message
    assert "system[0]" in f.message and f.variable == "datetime.now()"
    assert any("1,024 tokens (claude-sonnet-4-5" in n for n in f.notes)


ANTHROPIC_TOOLS = f'''
import uuid

from anthropic import Anthropic

client = Anthropic()
POLICY = {POLICY_SOURCE}
TOOLS = [
    {{
        "name": "get_order",
        "description": "Look up an order by its id.",
        "input_schema": {{"type": "object", "properties": {{"order_id": {{"type": "string"}}}}, "required": ["order_id"]}},
    }},
    {{
        "name": "track_parcel",
        "description": "Track a parcel by tracking code.",
        "input_schema": {{"type": "object", "properties": {{"code": {{"type": "string"}}}}}},
        "cache_control": {{"type": "ephemeral"}},
    }},
]


class SupportAgent:
    def system_blocks(self):
        return [
            {{"type": "text", "text": f"Conversation {{uuid.uuid4()}}"}},
            {{"type": "text", "text": POLICY, "cache_control": {{"type": "ephemeral"}}}},
        ]

    def run(self, question):
        return client.messages.create(
            model="claude-opus-4-1",
            max_tokens=2048,
            tools=TOOLS,
            system=self.system_blocks(),
            messages=[{{"role": "user", "content": question}}],
        )
'''

TOOL_DEFS = [
    {"name": "get_order", "description": "Look up an order by its id.",
     "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
    {"name": "track_parcel", "description": "Track a parcel by tracking code.",
     "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}}},
]


def test_anthropic_tools_system_messages_in_cache_order(tmp_path, tok):
    """tools -> system -> messages: the tools breakpoint is below the minimum (M703); the uuid in the
    first system block defeats the system breakpoint (M106), whose prefix starts with the tools."""
    findings = run(tmp_path, ANTHROPIC_TOOLS)
    by_code = {f.code: f for f in findings}
    assert sorted((f.code, f.line) for f in findings) == [
        ("M106", line_of(ANTHROPIC_TOOLS, "Conversation {uuid")),
        ("M703", line_of(ANTHROPIC_TOOLS, '"cache_control": {"type": "ephemeral"},')),
    ]
    tools_text = "\n\n".join(json.dumps(t) for t in TOOL_DEFS)  # cache_control is a marker, not content
    m703 = by_code["M703"]
    assert m703.evidence["base_render"] == tools_text
    assert m703.evidence["counted_tokens"] == len(enc(tok, tools_text))
    assert f"closes a {len(enc(tok, tools_text)):,}-token prefix, below the 1,024-token minimum of `claude-opus-4-1`" in m703.message

    m106 = by_code["M106"]
    base = f"{tools_text}\n\nConversation {UUID[0]}\n\n{POLICY}"
    variant = f"{tools_text}\n\nConversation {UUID[1]}\n\n{POLICY}"
    a, b = enc(tok, base), enc(tok, variant)
    assert m106.first_divergent_token.index == divergence(a, b)
    assert m106.evidence["breakpoint_tokens"] == len(a)
    assert "`system[1]`" in m106.message


def test_params_dict_spread_and_timestamp_after_breakpoint(tmp_path, tok):
    """`create(**params)` is followed; a timestamp in the latest user message (after the last
    breakpoint) costs Anthropic nothing and is not reported."""
    source = f'''
from datetime import date, datetime

import anthropic

client = anthropic.Anthropic()
POLICY = {POLICY_SOURCE}


def answer(question):
    params = {{
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": [{{"type": "text", "text": f"Today: {{date.today()}}. " + POLICY, "cache_control": {{"type": "ephemeral"}}}}],
        "messages": [{{"role": "user", "content": f"Sent at {{datetime.now()}}: {{question}}"}}],
    }}
    return client.messages.create(**params)
'''
    findings = run(tmp_path, source)
    assert [(f.code, f.line) for f in findings] == [("M106", line_of(source, "Today:"))]
    f = findings[0]
    a = enc(tok, f"Today: {DAY[0]}. {POLICY}")
    b = enc(tok, f"Today: {DAY[1]}. {POLICY}")
    assert f.first_divergent_token.index == divergence(a, b)
    assert f.evidence["breakpoint_tokens"] == len(a)
    assert "changes daily" in f.message


def test_too_many_breakpoints_counts_the_automatic_one(tmp_path):
    source = '''
import anthropic

from app.prompts import EXAMPLES, GLOSSARY, POLICY

client = anthropic.Anthropic()
CACHED = {"type": "ephemeral"}


def answer(history_summary, question):
    return client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        system=[
            {"type": "text", "text": POLICY, "cache_control": CACHED},
            {"type": "text", "text": GLOSSARY, "cache_control": CACHED},
            {"type": "text", "text": EXAMPLES, "cache_control": CACHED},
        ],
        messages=[{"role": "user", "content": [{"type": "text", "text": history_summary, "cache_control": CACHED}, {"type": "text", "text": question}]}],
        cache_control=CACHED,
    )
'''
    findings = run(tmp_path, source)
    assert [(f.code, f.line, f.severity) for f in findings] == [("M704", line_of(source, "cache_control=CACHED,"), "error")]
    assert findings[0].message.startswith("5 cache breakpoints in one request")


def test_breakpoint_minimum_override_from_configuration(tmp_path, tok):
    source = '''
import anthropic

client = anthropic.Anthropic()


def classify(ticket):
    return client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=8,
        system=[{"type": "text", "text": "Label the ticket: billing, shipping or other.", "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": ticket}],
    )
'''
    n = len(enc(tok, "Label the ticket: billing, shipping or other."))
    findings = run(tmp_path, source)
    assert [f.code for f in findings] == ["M703"] and f"closes a {n:,}-token prefix" in findings[0].message
    (tmp_path / "minimums.json").write_text(json.dumps({"anthropic": {"as_of": "2027-01-01", "models": {"claude-sonnet-4-5": n}}}))
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.promptlint]\ntokenizer = "{TOKENIZER}"\ncache-minimums = "minimums.json"\n', encoding="utf-8")
    settings = load_settings(start=tmp_path)
    assert run(tmp_path, source, settings) == []  # exactly at the minimum: cached
    (tmp_path / "minimums.json").write_text(json.dumps({"anthropic": {"models": {"claude-sonnet-4-5": "many"}}}))
    from promptlint.project.config import ConfigError

    with pytest.raises(ConfigError, match="cache-minimums: .*minimums.json: anthropic.models must map model names"):
        load_settings(start=tmp_path)


# ---------------------------------------------------------------------------- Bedrock

BEDROCK_CONVERSE = f'''
from datetime import date

import boto3

bedrock = boto3.client("bedrock-runtime", region_name="us-east-1")
POLICY = {POLICY_SOURCE}
TOOL_CONFIG = {{
    "tools": [
        {{
            "toolSpec": {{
                "name": "get_order",
                "description": "Look up an order by its id.",
                "inputSchema": {{"json": {{"type": "object", "properties": {{"order_id": {{"type": "string"}}}}}}}},
            }}
        }}
    ]
}}


def converse(question):
    system = [{{"text": f"Today is {{date.today()}}."}}, {{"text": POLICY}}, {{"cachePoint": {{"type": "default"}}}}]
    messages = [{{"role": "user", "content": [{{"text": question}}]}}]
    return bedrock.converse(
        modelId="us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        system=system,
        messages=messages,
        toolConfig=TOOL_CONFIG,
        inferenceConfig={{"maxTokens": 512}},
    )
'''


def test_bedrock_converse_cache_point(tmp_path, tok):
    findings = run(tmp_path, BEDROCK_CONVERSE)
    assert [(f.code, f.line) for f in findings] == [("M106", line_of(BEDROCK_CONVERSE, "Today is"))]
    f = findings[0]
    spec = {"name": "get_order", "description": "Look up an order by its id.",
            "inputSchema": {"json": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}
    base = f"{json.dumps(spec)}\n\nToday is {DAY[0]}.\n\n{POLICY}"
    variant = f"{json.dumps(spec)}\n\nToday is {DAY[1]}.\n\n{POLICY}"
    a, b = enc(tok, base), enc(tok, variant)
    assert f.evidence["base_render"] == base
    assert f.first_divergent_token.index == divergence(a, b)
    assert f.evidence["breakpoint_tokens"] == len(a)
    assert "the `cachePoint` after `system[1]`" in f.message
    assert any("1,024 tokens (claude-3-7-sonnet" in n for n in f.notes)  # anthropic.* ids use the Claude table


def test_bedrock_second_checkpoint_counts_from_the_first(tmp_path, tok):
    source = f'''
import boto3

client = boto3.client("bedrock-runtime")
POLICY = {POLICY_SOURCE}


def ask(question):
    return client.converse(
        modelId="amazon.nova-pro-v1:0",
        system=[
            {{"text": POLICY}},
            {{"cachePoint": {{"type": "default"}}}},
            {{"text": "Answer in the customer's language."}},
            {{"cachePoint": {{"type": "default"}}}},
        ],
        messages=[{{"role": "user", "content": [{{"text": question}}]}}],
    )
'''
    findings = run(tmp_path, source)
    second = [i for i, line in enumerate(source.splitlines(), 1) if "cachePoint" in line][1]
    assert [(f.code, f.line) for f in findings] == [("M703", second)]
    first_len = len(enc(tok, POLICY))
    both_len = len(enc(tok, f"{POLICY}\n\nAnswer in the customer's language."))
    f = findings[0]
    assert first_len >= 1000  # the first checkpoint reaches Nova's minimum
    assert f.evidence["counted_tokens"] == both_len - first_len
    assert f"adds {both_len - first_len:,} tokens to the checkpoint before it ({first_len:,} tokens)" in f.message


def test_bedrock_invoke_model_anthropic_body(tmp_path):
    source = '''
import json
from datetime import datetime

import boto3

from rag.prompts import KNOWLEDGE_BASE_PROMPT

runtime = boto3.client("bedrock-runtime")


def generate(question):
    payload = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 1024,
        "system": [
            {"type": "text", "text": f"Generated {datetime.utcnow().isoformat()}"},
            {"type": "text", "text": KNOWLEDGE_BASE_PROMPT, "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [{"role": "user", "content": question}],
    }
    response = runtime.invoke_model(modelId="anthropic.claude-3-5-haiku-20241022-v1:0", body=json.dumps(payload))
    return json.loads(response["body"].read())
'''
    findings = run(tmp_path, source)
    assert [(f.code, f.line) for f in findings] == [("M106", line_of(source, "Generated"))]
    assert findings[0].evidence["breakpoint"] == "system[1]"
    assert any("lower bound" in n for n in findings[0].notes)  # the imported prompt's length is unknown


# ---------------------------------------------------------------------------- OpenAI Responses and Gemini


def m101_figures(tok, base, variant, per_request):
    """(S, lost blocks) by hand: eligible = floor(min(S, P - 1) / B) * B."""
    a, b, c = enc(tok, base), enc(tok, variant), enc(tok, per_request)
    s = divergence(a, b)
    ideal = divergence(a, c)
    p = len(b)
    return s, (min(ideal, p - 1) // B) - (min(s, p - 1) // B)


def test_openai_responses_instructions_and_input_items(tmp_path, tok):
    instructions = "You are the research assistant of a law firm. Today is {today}. Answer only from the provided sources."
    source = f'''
from datetime import date

from openai import OpenAI

client = OpenAI()
INSTRUCTIONS = {instructions!r} + " " + {POLICY_SOURCE}


def ask(question):
    return client.responses.create(
        model="gpt-4.1",
        instructions=INSTRUCTIONS.format(today=date.today()),
        input=[{{"role": "user", "content": [{{"type": "input_text", "text": question}}]}}],
    )
'''
    findings = run(tmp_path, source)
    assert [(f.code, f.line) for f in findings] == [("M101", line_of(source, "today=date.today()"))]
    f = findings[0]
    text = instructions + " " + POLICY
    base = text.format(today=DAY[0]) + "\n\n" + QUESTION[0]
    variant = text.format(today=DAY[1]) + "\n\n" + QUESTION[0]
    s, lost = m101_figures(tok, base, variant, text.format(today=DAY[0]) + "\n\n" + QUESTION[1])
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == lost and lost > 100


def test_openai_responses_string_input(tmp_path, tok):
    source = '''
import time

from openai import OpenAI

client = OpenAI()


def summarize(article):
    return client.responses.create(
        model="gpt-4.1-mini",
        input=f"[{time.time()}] Summarize the following article for a newsletter in three sentences, "
        "keeping names and numbers exact and never adding facts that are not in the article.\\n\\n" + article,
    )
'''
    findings = run(tmp_path, source)
    assert [f.code for f in findings] == ["M101"]
    lead = "] Summarize the following article for a newsletter in three sentences, keeping names and numbers exact and never adding facts that are not in the article.\n\n"
    a = enc(tok, "[1741944413.482113" + lead + "sample article")
    b = enc(tok, "[1741944420.917402" + lead + "sample article")
    assert findings[0].first_divergent_token.index == divergence(a, b)


GEMINI_GENAI = f'''
from datetime import datetime

from google import genai
from google.genai import types

client = genai.Client()
SYSTEM = {POLICY_SOURCE}


def chat_turn(question):
    config = types.GenerateContentConfig(
        system_instruction=f"Now: {{datetime.now()}}. " + SYSTEM,
        temperature=0.2,
    )
    return client.models.generate_content(
        model="gemini-2.5-flash",
        contents=[types.Content(role="user", parts=[types.Part.from_text(text=question)])],
        config=config,
    )
'''


def test_gemini_system_instruction_in_config(tmp_path, tok):
    findings = run(tmp_path, GEMINI_GENAI)
    assert [(f.code, f.line) for f in findings] == [("M101", line_of(GEMINI_GENAI, "Now: {datetime"))]
    f = findings[0]
    s, lost = m101_figures(
        tok,
        f"Now: {TS[0]}. {POLICY}\n\n{QUESTION[0]}",
        f"Now: {TS[1]}. {POLICY}\n\n{QUESTION[0]}",
        f"Now: {TS[0]}. {POLICY}\n\n{QUESTION[1]}",
    )
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == lost


def test_gemini_generative_model_system_instruction(tmp_path, tok):
    source = f'''
import uuid

import google.generativeai as genai

SYSTEM = {POLICY_SOURCE}
model = genai.GenerativeModel("gemini-1.5-pro", system_instruction=f"Trace {{uuid.uuid4()}}\\n" + SYSTEM)


def reply(question):
    return model.generate_content(question)
'''
    findings = run(tmp_path, source)
    assert [(f.code, f.line) for f in findings] == [("M101", line_of(source, "Trace {uuid"))]
    s, lost = m101_figures(
        tok,
        f"Trace {UUID[0]}\n{POLICY}\n\n{QUESTION[0]}",
        f"Trace {UUID[1]}\n{POLICY}\n\n{QUESTION[0]}",
        f"Trace {UUID[0]}\n{POLICY}\n\n{QUESTION[1]}",
    )
    assert findings[0].first_divergent_token.index == s
    assert findings[0].arithmetic.lost_blocks == lost


def test_clean_sdk_module_has_no_findings(tmp_path):
    source = f'''
from datetime import datetime

import anthropic
import boto3

client = anthropic.Anthropic()
bedrock = boto3.client("bedrock-runtime")
POLICY = {POLICY_SOURCE}


def anthropic_answer(question):
    return client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        system=[{{"type": "text", "text": POLICY, "cache_control": {{"type": "ephemeral"}}}}],
        messages=[{{"role": "user", "content": f"{{question}}\\n\\n(sent {{datetime.now():%Y-%m-%d %H:%M}})"}}],
    )


def bedrock_answer(question):
    return bedrock.converse(
        modelId="anthropic.claude-sonnet-4-20250514-v1:0",
        system=[{{"text": POLICY}}, {{"cachePoint": {{"type": "default"}}}}],
        messages=[{{"role": "user", "content": [{{"text": f"{{datetime.now()}} {{question}}"}}]}}],
    )
'''
    assert run(tmp_path, source) == []


def test_unknown_history_is_not_measured_as_empty(tmp_path, tok):
    """A conversation built elsewhere has an unknown length: the automatic breakpoint after it is not
    reported below the minimum; the literal system breakpoint before it is."""
    source = '''
import anthropic

client = anthropic.Anthropic()


def turn(history, question):
    return client.messages.create(
        model="claude-haiku-4-5",
        max_tokens=512,
        system=[{"type": "text", "text": "You are a terse assistant.", "cache_control": {"type": "ephemeral"}}],
        messages=history + [{"role": "user", "content": question}],
        cache_control={"type": "ephemeral"},
    )
'''
    findings = run(tmp_path, source)
    assert [(f.code, f.line) for f in findings] == [("M703", line_of(source, "terse"))]
    n = len(enc(tok, "You are a terse assistant."))
    assert f"closes a {n:,}-token prefix, below the 4,096-token minimum of `claude-haiku-4-5`" in findings[0].message


def test_conversation_breakpoint_on_the_latest_message(tmp_path, tok):
    """A timestamp inside the latest user message, with the breakpoint on that message, travels with
    the message into the next turn's history: not reported. A timestamp in the system prompt is
    re-rendered on every turn and defeats the automatic breakpoint (which closes the question)."""
    source = f'''
from datetime import datetime

import anthropic

client = anthropic.Anthropic()
POLICY = {POLICY_SOURCE}


def turn(question):
    return client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=512,
        system=POLICY,
        messages=[{{"role": "user", "content": [{{"type": "text", "text": f"{{question}}\\n\\nSent {{datetime.now()}}", "cache_control": {{"type": "ephemeral"}}}}]}}],
    )


def turn_with_clock(question):
    return client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=512,
        system=f"Local time {{datetime.now():%H:%M}}.\\n" + POLICY,
        messages=[{{"role": "user", "content": question}}],
        cache_control={{"type": "ephemeral"}},
    )
'''
    findings = run(tmp_path, source)
    assert [(f.code, f.line) for f in findings] == [("M106", line_of(source, "Local time"))]
    f = findings[0]
    base = f"Local time {TIME[0]}.\n{POLICY}\n\n{QUESTION[0]}"  # %H:%M makes it a time of day
    a = enc(tok, base)
    b = enc(tok, f"Local time {TIME[1]}.\n{POLICY}\n\n{QUESTION[0]}")
    assert f.evidence["base_render"] == base and f.evidence["breakpoint_tokens"] == len(a)
    assert f.first_divergent_token.index == divergence(a, b)
    assert "top-level `cache_control`" in f.message


def test_rag_document_blocks_in_the_first_message(tmp_path, tok):
    """A RAG call: the retrieved handbook as a `document` block with its own breakpoint in the user
    message, after a system breakpoint. A request id in the system prompt defeats both."""
    handbook = "Employees accrue 2.5 vacation days per month. Expenses above 200 euros need a manager's approval."
    source = f'''
import uuid

import anthropic

client = anthropic.Anthropic()
SYSTEM = {POLICY_SOURCE}
HANDBOOK = {handbook!r}


def ask(question):
    request_id = uuid.uuid4()
    return client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=800,
        system=[{{"type": "text", "text": f"[request {{request_id}}]\\n" + SYSTEM, "cache_control": {{"type": "ephemeral"}}}}],
        messages=[
            {{
                "role": "user",
                "content": [
                    {{
                        "type": "document",
                        "source": {{"type": "text", "media_type": "text/plain", "data": HANDBOOK}},
                        "title": "Employee handbook",
                        "cache_control": {{"type": "ephemeral"}},
                    }},
                    {{"type": "text", "text": question}},
                ],
            }}
        ],
    )
'''
    findings = run(tmp_path, source)
    assert [(f.code, f.line) for f in findings] == [("M106", line_of(source, "request_id = uuid.uuid4()"))]
    f = findings[0]
    system = f"[request {UUID[0]}]\n{POLICY}"
    a = enc(tok, system)
    assert f.evidence["breakpoint_tokens"] == len(a)
    assert f.first_divergent_token.index == divergence(a, enc(tok, f"[request {UUID[1]}]\n{POLICY}"))
    with_doc = len(enc(tok, f"{system}\n\n{handbook}"))  # the document block's text is its source data
    assert f"it also defeats the later breakpoint on `messages[0].content[0]` ({with_doc:,} tokens)" in f.notes


def test_a_marker_set_to_none_is_no_breakpoint(tmp_path):
    source = '''
import anthropic

client = anthropic.Anthropic()


def classify(ticket, cache=False):
    return client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=8,
        system=[{"type": "text", "text": "Label the ticket.", "cache_control": None}],
        messages=[{"role": "user", "content": ticket}],
        cache_control=None,
    )
'''
    assert run(tmp_path, source) == []
