"""An eighth unseen set of agent-style Python projects, written blind: its author read docs/rules/README.md and
docs/rules/*.md, the opening of docs/python.md (up to, not including, its "How it works" section's list of
prompt sinks: the title, "Which files" and the first two paragraphs of "How it works"), tests/flow_harness.py,
the ``TOKENIZER =`` line of tests/test_agent_call_shapes.py and the first paragraph of the docstrings of
tests/test_project_flow_unseen.py, _unseen3 to _unseen7 and test_project_flow_styles.py only (not the
analyzer's source, not another set's cases, not a run of it), in styles no earlier unseen set uses:
- M101: a python-telegram-bot hotel concierge whose persona subclass joins an inherited ``header()`` (the
  local clock from ``zoneinfo``) before long house rules, sent to OpenRouter with ``AsyncOpenAI``;
  clean twin: the clock header goes last in the system prompt, after the house rules;
- M201: a Bot Framework (``botbuilder``) Teams helpdesk on ``AzureOpenAI`` whose system prompt ends with a preferences
  block listing ``dict(BASE_PREFERENCES, **overrides)`` (overrides from the conversation state) with ``.items()``;
  clean twin: the merged preferences are listed with ``sorted(merged.items())``;
- M202: an arq worker triaging tickets on Fireworks whose ``ToolPicker`` iterates the set union of a
  profile's tools and the default tools, kept on an instance attribute for ``tools=``;
  clean twin: the union is iterated through ``sorted(...)``;
- M203: a Falcon resource answering from knowledge-base articles picked by iterating a set comprehension of
  topics, joined into an Anthropic ``system=`` string (no breakpoint);
  clean twin: the topics are iterated through ``sorted(...)``;
- M401: a Litestar route using a ``TenantClient`` base class whose ``extra_body()`` salts vLLM's cache with
  the tenant and ``time.time_ns()``, called by a ``SupportClient`` subclass;
  clean twin: the salt is a SHA-256 of a deployment pepper and the tenant, stable per tenant;
- M402: a ``grpc.aio`` servicer whose upstream-failure exception message carries the tenant's HMAC cache salt;
  clean twin: the exception names the tenant and the status only;
- M701: a context-managed SGLang server launched with ``subprocess.Popen`` from an argv list holding
  ``--disable-radix-cache`` (the launcher module is the linted file);
  clean twin: the argv list without that flag (``--enable-metrics`` instead);
- M702: an ``httpx`` groundedness guard whose completions body, built by a payload helper module, asks vLLM
  for ``prompt_logprobs``;
  clean twin: the body asks for ``logprobs`` of the one generated token instead;
- M703: a git-diff reviewer on ``AnthropicVertex`` caching a one-sentence class-attribute rule text (23
  tokens with the pinned tokenizer, far below the smallest minimum of 512) for ``claude-sonnet-4-5@20250929``;
  clean twin: the same short text sent without a breakpoint;
- M101: a Starlette helpdesk with OpenTelemetry whose system message starts with the current span's
  ``trace_id`` before a long guide, for the OpenAI API;
  clean twin: the trace id travels in an ``X-Request-Trace`` header, not in the prompt.
Token counts (pinned Qwen2.5 tokenizer): the house rules are 396 tokens and the helpdesk guide 274, so a volatile value before
either costs many 16-token blocks; the M703 text is 23 tokens.

First run (18:38 UTC, main at 63b29dd — the merge of this file after this stop's families and the seventh set; the
set merged unchanged and run once): 10 of 10 hazards found at the expected line; one false alarm on the 10 clean
projects: "telegram_concierge_clock_last" gives M101 at persona_base.py:9 ("1 of 27 eligible KV blocks lost") for
the clock that ends the system message. The arithmetic is right — the next turn's framing (`<|im_end|>`, the
user header) is shared and sits in the clock's block — but the set's author, reading the rule docs, took a clock at
the end of the system message, followed only by the user's turn, as cache-safe. Whether M101 should report a loss
confined to the value's own block when only turn framing follows is left to the rule's owners; until then this
clean case is marked xfail (strict) and the expectation is kept as written.
After the first run, M101 was changed to report only when at least one block of shared text follows the value
(docs/rules/M101.md), which makes this clean case pass; the first-run figures above stay as recorded.
"""

from __future__ import annotations

import pytest

from flow_harness import assert_clean, assert_hazard

# --- shared long texts (static, long enough that a volatile value before them loses many blocks) ---

HOUSE_RULES = '''
HOUSE_RULES = """House rules for every answer:
1. Greet the guest by name when the booking record gives one, and answer in the language the guest wrote in.
2. Breakfast is served from 06:30 to 10:30 on weekdays and from 07:00 to 11:30 on weekends and public holidays in the
   garden restaurant on the ground floor. Room service breakfast costs a surcharge of 8 euros per tray.
3. Check-in starts at 15:00 and check-out is at 11:00. Late check-out until 14:00 can be offered for 30 euros when the
   housekeeping schedule allows it; never promise it before the front desk has confirmed.
4. The spa on the fourth floor opens at 09:00 and closes at 21:00. Children under 14 may use the pool only from 09:00
   to 12:00 and must be accompanied by an adult at all times.
5. Parking in the underground garage costs 22 euros per night; electric vehicles can charge at the four wall boxes
   near the lift, which must be booked at the front desk.
6. Never share another guest's room number, name or booking details, even if the person claims to be a relative.
7. For medical emergencies tell the guest to call 112 first and then the front desk on extension 9.
8. When you do not know an answer, say so and offer to pass the question to the front desk team, who reply within
   fifteen minutes between 07:00 and 23:00.
9. Recommend restaurants only from the curated list in the guest guide and never accept reservations on their behalf.
10. Keep answers short: three sentences at most unless the guest asks for details."""
'''

HELPDESK_GUIDE = '''
GUIDE = """You are the first-line assistant of the Northwind platform support desk.
Answer questions about the Northwind billing portal, the deployment dashboard and the public API.
Follow these rules on every request:
- Identify the product area first (billing, deployments, API keys, webhooks, single sign-on) and say which one you
  are answering about.
- Quote the documentation section number when you rely on it, for example "Deployments 4.2".
- Never reveal internal ticket notes, employee names or the contents of other customers' accounts.
- If the customer reports an outage, ask for the region, the approximate start time and the request id shown in
  the error banner, then point them to the status page before any troubleshooting.
- API keys can be rotated from Settings > Security > Keys; a rotated key stays valid for 24 hours so running jobs
  can finish. Never ask the customer to paste a key into the chat.
- Webhook deliveries are retried five times with exponential backoff; failed deliveries are listed for 30 days.
- Refunds, contract changes and data deletion requests are handled by humans: open a handover and tell the customer
  a specialist will reply by email within one business day.
- Write plain English, no marketing language, and end with one concrete next step the customer can take."""
'''

# --- 1. M101: python-telegram-bot concierge, inherited clock header first ---

PERSONA_BASE = """
    from datetime import datetime
    from zoneinfo import ZoneInfo


    class BasePersona:
        timezone = "Europe/Berlin"

        def header(self) -> str:
            return f"It is {datetime.now(ZoneInfo(self.timezone)):%A %d %B %Y, %H:%M:%S} local time."
"""


def _concierge(order: str) -> str:
    return '''
    from persona_base import BasePersona
''' + HOUSE_RULES.replace("\n", "\n    ") + f'''

    class ConciergePersona(BasePersona):
        name = "Mila"

        def system_prompt(self) -> str:
            intro = f"You are {{self.name}}, the guest concierge of Hotel Lindenhof in Berlin."
            parts = {order}
            return "\\n\\n".join(parts)
'''


TELEGRAM_BOT = """
    import os

    from openai import AsyncOpenAI
    from telegram import Update
    from telegram.ext import Application, ContextTypes, MessageHandler, filters

    from concierge import ConciergePersona

    client = AsyncOpenAI(base_url="https://openrouter.ai/api/v1", api_key=os.environ["OPENROUTER_API_KEY"])
    persona = ConciergePersona()


    async def on_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        completion = await client.chat.completions.create(
            model="meta-llama/llama-3.3-70b-instruct",
            messages=[
                {"role": "system", "content": persona.system_prompt()},
                {"role": "user", "content": update.message.text},
            ],
        )
        await update.message.reply_text(completion.choices[0].message.content)


    def main() -> None:
        app = Application.builder().token(os.environ["TELEGRAM_TOKEN"]).build()
        app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, on_text))
        app.run_polling()


    if __name__ == "__main__":
        main()
"""

TELEGRAM_HAZARD = {
    "persona_base.py": PERSONA_BASE,
    "concierge.py": _concierge("[self.header(), intro, HOUSE_RULES]"),
    "bot.py": TELEGRAM_BOT,
}
TELEGRAM_CLEAN = {
    "persona_base.py": PERSONA_BASE,
    # the clock goes after everything every guest shares
    "concierge.py": _concierge("[intro, HOUSE_RULES, self.header()]"),
    "bot.py": TELEGRAM_BOT,
}

# --- 2. M201: Bot Framework Teams helpdesk, merged preferences listed with .items() ---


def _preferences(items: str) -> str:
    return f"""
    BASE_PREFERENCES = {{
        "language": "English",
        "tone": "friendly but brief",
        "units": "metric",
        "date_format": "ISO 8601",
    }}


    def preference_block(overrides: dict[str, str]) -> str:
        merged = dict(BASE_PREFERENCES, **overrides)
        lines = [f"- {{key}}: {{value}}" for key, value in {items}]
        return "User preferences:\\n" + "\\n".join(lines)
"""


HELPDESK_PROMPTING = '''
    from preferences import preference_block

    RULES = """You are Contoso's internal IT helpdesk assistant for employees.
    Help with laptops, VPN access, Microsoft 365 licences, printers and badge access.
    Always check the known-issues list before suggesting a reinstall, never ask for passwords or one-time codes,
    and open a ticket in ServiceNow for anything that needs hardware, a licence purchase or an admin change.
    Keep answers under 120 words and use numbered steps for procedures."""


    def system_message(preferences: dict[str, str]) -> dict:
        return {"role": "system", "content": RULES + "\\n\\n" + preference_block(preferences)}
'''

HELPDESK_BOT = """
    import os

    from botbuilder.core import ActivityHandler, ConversationState, TurnContext
    from openai import AzureOpenAI

    from prompting import system_message

    llm = AzureOpenAI(
        azure_endpoint=os.environ["AZURE_OPENAI_ENDPOINT"],
        api_key=os.environ["AZURE_OPENAI_KEY"],
        api_version="2024-10-21",
    )


    class HelpdeskBot(ActivityHandler):
        def __init__(self, conversation_state: ConversationState):
            self.conversation_state = conversation_state
            self.prefs_accessor = conversation_state.create_property("preferences")

        async def on_message_activity(self, turn_context: TurnContext):
            prefs = await self.prefs_accessor.get(turn_context, dict)
            reply = llm.chat.completions.create(
                model="gpt-4o-helpdesk",
                messages=[system_message(prefs), {"role": "user", "content": turn_context.activity.text}],
            )
            await turn_context.send_activity(reply.choices[0].message.content)
            await self.conversation_state.save_changes(turn_context)
"""

HELPDESK_HAZARD = {
    "preferences.py": _preferences("merged.items()"),
    "prompting.py": HELPDESK_PROMPTING,
    "bot.py": HELPDESK_BOT,
}
HELPDESK_CLEAN = {
    # one key order whatever order the overrides come in
    "preferences.py": _preferences("sorted(merged.items())"),
    "prompting.py": HELPDESK_PROMPTING,
    "bot.py": HELPDESK_BOT,
}

# --- 3. M202: arq worker on Fireworks, tools from a set union ---


def _toolbox(names: str) -> str:
    return f'''
    DEFAULT_TOOLS = ["lookup_customer", "search_tickets"]

    TOOLBOX = {{
        "lookup_customer": {{
            "type": "function",
            "function": {{
                "name": "lookup_customer",
                "description": "Find a customer account by email address and return its plan and status.",
                "parameters": {{"type": "object", "properties": {{"email": {{"type": "string"}}}}, "required": ["email"]}},
            }},
        }},
        "search_tickets": {{
            "type": "function",
            "function": {{
                "name": "search_tickets",
                "description": "Full-text search over the last 90 days of support tickets.",
                "parameters": {{"type": "object", "properties": {{"query": {{"type": "string"}}}}, "required": ["query"]}},
            }},
        }},
        "issue_credit": {{
            "type": "function",
            "function": {{
                "name": "issue_credit",
                "description": "Issue a service credit in cents to a customer account after an outage.",
                "parameters": {{
                    "type": "object",
                    "properties": {{"account_id": {{"type": "string"}}, "cents": {{"type": "integer"}}}},
                    "required": ["account_id", "cents"],
                }},
            }},
        }},
        "escalate": {{
            "type": "function",
            "function": {{
                "name": "escalate",
                "description": "Hand the ticket to the on-call engineer with a one-line summary.",
                "parameters": {{"type": "object", "properties": {{"summary": {{"type": "string"}}}}, "required": ["summary"]}},
            }},
        }},
    }}


    class ToolPicker:
        def __init__(self, profile_tools: list[str]):
            self.profile_tools = profile_tools

        def pick(self) -> list[dict]:
            return [TOOLBOX[name] for name in {names}]
'''


TRIAGE = '''
    from openai import AsyncOpenAI

    from toolbox import ToolPicker

    TRIAGE_PROMPT = """You triage incoming support tickets for a hosting company.
    Read the ticket, look up the customer, search for related tickets and decide one of: answer, credit, escalate.
    Use the tools; never guess account data. Reply with a short summary for the agent who will pick the ticket up,
    naming the customer's plan, the affected service and the action you took or recommend."""


    class TicketTriager:
        def __init__(self, client: AsyncOpenAI, profile_tools: list[str]):
            self.client = client
            self.tools = ToolPicker(profile_tools).pick()

        async def triage(self, ticket_text: str) -> str:
            response = await self.client.chat.completions.create(
                model="accounts/fireworks/models/llama-v3p1-70b-instruct",
                tools=self.tools,
                messages=[
                    {"role": "system", "content": TRIAGE_PROMPT},
                    {"role": "user", "content": ticket_text},
                ],
            )
            return response.choices[0].message.content or ""
'''

ARQ_WORKER = """
    import os

    from arq.connections import RedisSettings
    from openai import AsyncOpenAI

    from triage import TicketTriager


    async def startup(ctx):
        ctx["llm"] = AsyncOpenAI(base_url="https://api.fireworks.ai/inference/v1", api_key=os.environ["FIREWORKS_API_KEY"])


    async def triage_ticket(ctx, ticket_text: str, profile_tools: list[str]) -> str:
        triager = TicketTriager(ctx["llm"], profile_tools)
        return await triager.triage(ticket_text)


    class WorkerSettings:
        functions = [triage_ticket]
        on_startup = startup
        redis_settings = RedisSettings.from_dsn(os.environ.get("REDIS_URL", "redis://localhost:6379"))
"""

ARQ_HAZARD = {
    "toolbox.py": _toolbox("set(self.profile_tools) | set(DEFAULT_TOOLS)"),
    "triage.py": TRIAGE,
    "worker.py": ARQ_WORKER,
}
ARQ_CLEAN = {
    # the union is de-duplicated and then put in one order
    "toolbox.py": _toolbox("sorted(set(self.profile_tools) | set(DEFAULT_TOOLS))"),
    "triage.py": TRIAGE,
    "worker.py": ARQ_WORKER,
}

# --- 4. M203: Falcon knowledge-base answers, articles from a set comprehension of topics ---


def _kb(topics: str) -> str:
    return f'''
    ARTICLES = {{
        "returns": """Returns: items can be returned within 30 days of delivery in their original packaging. The customer
    prints a prepaid label from the order page; refunds reach the original payment method within five business days
    after the parcel is scanned at the warehouse. Sale items marked final cannot be returned.""",
        "shipping": """Shipping: standard delivery takes three to five business days inside the EU and is free above 50
    euros. Express delivery costs 9.90 euros and arrives the next business day when ordered before 14:00. Parcels to
    Switzerland and Norway need a customs declaration that we prepare automatically.""",
        "warranty": """Warranty: electronics carry a two-year warranty from the delivery date. The customer describes the
    fault in the warranty form and attaches a photo of the serial number; we send a replacement or a repair label
    within two business days. Damage from drops or liquids is not covered.""",
        "payments": """Payments: we accept cards, PayPal, Klarna invoice and bank transfer. Klarna invoices are due after
    30 days. A failed card payment keeps the order reserved for 48 hours so the customer can retry from the order
    page before it is cancelled automatically.""",
    }}

    INTENT_TOPICS = {{
        "refund": "returns",
        "return_label": "returns",
        "where_is_my_parcel": "shipping",
        "broken_item": "warranty",
        "payment_failed": "payments",
    }}


    def articles_for(intents: list[str]) -> list[str]:
        return [ARTICLES[topic] for topic in {topics}]
'''


KB_PROMPT = """
    from kb import articles_for

    INSTRUCTIONS = "You answer customer questions for an online electronics shop using only the articles below."


    def build_system(intents: list[str]) -> str:
        documents = articles_for(intents)
        return INSTRUCTIONS + "\\n\\n" + "\\n\\n".join(documents)
"""

FALCON_APP = """
    import anthropic
    import falcon

    from prompt import build_system

    client = anthropic.Anthropic()


    class AskResource:
        def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
            payload = req.get_media()
            message = client.messages.create(
                model="claude-3-5-haiku-latest",
                max_tokens=800,
                system=build_system(payload["intents"]),
                messages=[{"role": "user", "content": payload["question"]}],
            )
            resp.media = {"answer": message.content[0].text}


    app = falcon.App()
    app.add_route("/ask", AskResource())
"""

FALCON_HAZARD = {
    "kb.py": _kb("{INTENT_TOPICS[intent] for intent in intents}"),
    "prompt.py": KB_PROMPT,
    "app.py": FALCON_APP,
}
FALCON_CLEAN = {
    # the topics are de-duplicated, then put in one order
    "kb.py": _kb("sorted({INTENT_TOPICS[intent] for intent in intents})"),
    "prompt.py": KB_PROMPT,
    "app.py": FALCON_APP,
}

# --- 5. M401: Litestar route, base-class extra_body salting per request ---


def _tenant_client(salt_import: str, salt: str) -> str:
    return f"""
    {salt_import}

    from openai import AsyncOpenAI


    class TenantClient:
        def __init__(self, tenant: str, base_url: str):
            self.tenant = tenant
            self.client = AsyncOpenAI(base_url=base_url, api_key="EMPTY")

        def extra_body(self) -> dict:
            return {{"cache_salt": {salt}, "top_k": 20}}
"""


SUPPORT_CLIENT = '''
    from tenant_client import TenantClient

    SUPPORT_PROMPT = """You are the support assistant of a multi-tenant accounting platform.
    Answer questions about invoices, VAT reports and bank reconciliation for the tenant's own books only."""


    class SupportClient(TenantClient):
        model = "Qwen/Qwen2.5-32B-Instruct"

        async def answer(self, question: str) -> str:
            response = await self.client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": SUPPORT_PROMPT},
                    {"role": "user", "content": question},
                ],
                extra_body=self.extra_body(),
            )
            return response.choices[0].message.content
'''

LITESTAR_APP = """
    import os
    from dataclasses import dataclass

    from litestar import Litestar, post

    from support import SupportClient

    VLLM_URL = os.environ.get("VLLM_URL", "http://vllm:8000/v1")


    @dataclass
    class AskBody:
        question: str


    @post("/tenants/{tenant:str}/ask")
    async def ask(tenant: str, data: AskBody) -> dict[str, str]:
        client = SupportClient(tenant, VLLM_URL)
        return {"answer": await client.answer(data.question)}


    app = Litestar(route_handlers=[ask])
"""

LITESTAR_HAZARD = {
    "tenant_client.py": _tenant_client("import time", 'f"{self.tenant}-{time.time_ns()}"'),
    "support.py": SUPPORT_CLIENT,
    "app.py": LITESTAR_APP,
}
LITESTAR_CLEAN = {
    # stable per tenant: the same tenant always gets the same salt
    "tenant_client.py": _tenant_client(
        "import hashlib\n    import os", 'hashlib.sha256(f"{os.environ[\'SALT_PEPPER\']}:{self.tenant}".encode()).hexdigest()'
    ),
    "support.py": SUPPORT_CLIENT,
    "app.py": LITESTAR_APP,
}

# --- 6. M402: grpc.aio servicer, the salt in an exception message ---

SALTS = """
    import hashlib
    import hmac
    import os

    SECRET = os.environ["CACHE_SALT_SECRET"].encode()


    def tenant_salt(tenant_id: str) -> str:
        return hmac.new(SECRET, tenant_id.encode(), hashlib.sha256).hexdigest()[:32]
"""

ERRORS = """
    class UpstreamError(RuntimeError):
        \"\"\"The model server refused or failed a request.\"\"\"
"""


def _servicer(message: str) -> str:
    return f'''
    import os

    import grpc
    import openai
    from openai import AsyncOpenAI

    import assistant_pb2
    import assistant_pb2_grpc
    from errors import UpstreamError
    from salts import tenant_salt

    MODEL = "meta-llama/Llama-3.1-8B-Instruct"
    SYSTEM = "You are the in-app assistant of a project-management tool. Answer about tasks, boards and sprints."


    class AssistantServicer(assistant_pb2_grpc.AssistantServicer):
        def __init__(self) -> None:
            self.llm = AsyncOpenAI(base_url=os.environ["VLLM_URL"], api_key="EMPTY")

        async def Ask(self, request, context):
            salt = tenant_salt(request.tenant_id)
            try:
                response = await self.llm.chat.completions.create(
                    model=MODEL,
                    messages=[
                        {{"role": "system", "content": SYSTEM}},
                        {{"role": "user", "content": request.question}},
                    ],
                    extra_body={{"cache_salt": salt}},
                )
            except openai.APIStatusError as exc:
                raise UpstreamError({message}) from exc
            return assistant_pb2.AskReply(answer=response.choices[0].message.content)


    async def serve() -> None:
        server = grpc.aio.server()
        assistant_pb2_grpc.add_AssistantServicer_to_server(AssistantServicer(), server)
        server.add_insecure_port("[::]:50051")
        await server.start()
        await server.wait_for_termination()
'''


GRPC_HAZARD = {
    "salts.py": SALTS,
    "errors.py": ERRORS,
    "servicer.py": _servicer('f"vLLM refused tenant {request.tenant_id} (cache_salt={salt}): {exc.status_code}"'),
}
GRPC_CLEAN = {
    "salts.py": SALTS,
    "errors.py": ERRORS,
    # the message names the tenant and the status, never the salt
    "servicer.py": _servicer('f"vLLM refused tenant {request.tenant_id}: {exc.status_code}"'),
}

# --- 7. M701: SGLang server launched from an argv list ---


def _launch(flag: str) -> str:
    return f"""
    import subprocess
    import sys

    from health import wait_healthy


    def server_command(model_path: str, port: int) -> list[str]:
        return [
            sys.executable,
            "-m",
            "sglang.launch_server",
            "--model-path",
            model_path,
            "--port",
            str(port),
            "--mem-fraction-static",
            "0.85",
            "{flag}",
        ]


    class SGLangServer:
        def __init__(self, model_path: str, port: int = 30000):
            self.model_path = model_path
            self.port = port
            self.proc = None

        def __enter__(self) -> "SGLangServer":
            self.proc = subprocess.Popen(server_command(self.model_path, self.port))
            wait_healthy(f"http://127.0.0.1:{{self.port}}/health")
            return self

        def __exit__(self, *exc) -> None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
"""


HEALTH = """
    import time

    import requests


    def wait_healthy(url: str, timeout: float = 600.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(url, timeout=5).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(2)
        raise TimeoutError(f"server at {url} did not become healthy")
"""

SGLANG_AGENT = """
    from openai import OpenAI

    from launch import SGLangServer

    SYSTEM = "You label product reviews as positive, negative or mixed. Reply with the label only."


    def label_reviews(reviews: list[str]) -> list[str]:
        labels = []
        with SGLangServer("Qwen/Qwen2.5-7B-Instruct") as server:
            client = OpenAI(base_url=f"http://127.0.0.1:{server.port}/v1", api_key="EMPTY")
            for review in reviews:
                response = client.chat.completions.create(
                    model="default",
                    messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": review}],
                    temperature=0.0,
                )
                labels.append(response.choices[0].message.content.strip())
        return labels
"""

SGLANG_HAZARD = {
    "launch.py": _launch("--disable-radix-cache"),
    "health.py": HEALTH,
    "agent.py": SGLANG_AGENT,
}
SGLANG_CLEAN = {
    # the radix cache stays on (SGLang's default)
    "launch.py": _launch("--enable-metrics"),
    "health.py": HEALTH,
    "agent.py": SGLANG_AGENT,
}

# --- 8. M702: httpx groundedness guard, payload helper with prompt_logprobs ---


def _payloads(scoring_key: str) -> str:
    return f"""
    def score_request(model: str, prompt: str) -> dict:
        return {{
            "model": model,
            "prompt": prompt,
            "max_tokens": 1,
            "temperature": 0.0,
            {scoring_key}
        }}
"""


GUARD = '''
    import httpx

    from payloads import score_request

    CHECK_TEMPLATE = """Decide whether the answer is supported by the context.
    Context:
    {context}
    Answer:
    {answer}
    Supported (yes or no):"""


    class GroundednessGuard:
        def __init__(self, base_url: str, model: str = "Qwen/Qwen2.5-7B-Instruct"):
            self.http = httpx.Client(base_url=base_url, timeout=30.0)
            self.model = model

        def score(self, context: str, answer: str) -> dict:
            prompt = CHECK_TEMPLATE.format(context=context, answer=answer)
            response = self.http.post("/v1/completions", json=score_request(self.model, prompt))
            response.raise_for_status()
            return response.json()["choices"][0]
'''

GUARD_AGENT = """
    from openai import OpenAI

    from guard import GroundednessGuard

    VLLM = "http://localhost:8000"
    client = OpenAI(base_url=VLLM + "/v1", api_key="EMPTY")
    guard = GroundednessGuard(VLLM)


    def answer(context: str, question: str) -> str:
        response = client.chat.completions.create(
            model="Qwen/Qwen2.5-7B-Instruct",
            messages=[
                {"role": "system", "content": "Answer only from the context the user gives."},
                {"role": "user", "content": context + "\\n\\nQuestion:\\n" + question},
            ],
        )
        text = response.choices[0].message.content
        verdict = guard.score(context, text)
        return text if verdict["text"].strip().lower().startswith("yes") else "I could not verify an answer."
"""

GUARD_HAZARD = {
    "payloads.py": _payloads('"prompt_logprobs": 1,'),
    "guard.py": GUARD,
    "agent.py": GUARD_AGENT,
}
GUARD_CLEAN = {
    # logprobs of the one generated token: the prompt still goes through the prefix cache
    "payloads.py": _payloads('"logprobs": 5,'),
    "guard.py": GUARD,
    "agent.py": GUARD_AGENT,
}

# --- 9. M703: AnthropicVertex diff reviewer, short cached rule text ---
# RULES is 23 tokens with the pinned tokenizer: far below the smallest provider minimum (512).


def _reviewer(system_block: str) -> str:
    return f"""
    from anthropic import AnthropicVertex


    class DiffReviewer:
        RULES = "You review git diffs. Flag bugs, missing tests and unclear names as a bulleted list, most severe first."

        def __init__(self, project_id: str, region: str = "us-east5"):
            self.client = AnthropicVertex(project_id=project_id, region=region)

        def _system(self) -> list[dict]:
            return [{system_block}]

        def review(self, diff: str) -> str:
            message = self.client.messages.create(
                model="claude-sonnet-4-5@20250929",
                max_tokens=1024,
                system=self._system(),
                messages=[{{"role": "user", "content": diff}}],
            )
            return message.content[0].text
"""


GIT_TOOLS = """
    import subprocess


    def staged_diff() -> str:
        result = subprocess.run(["git", "diff", "--cached"], capture_output=True, text=True, check=True)
        return result.stdout
"""

REVIEW_CLI = """
    import argparse

    from git_tools import staged_diff
    from reviewer import DiffReviewer


    def main() -> None:
        parser = argparse.ArgumentParser(description="Review the staged diff with Claude on Vertex AI.")
        parser.add_argument("--project", required=True)
        args = parser.parse_args()
        print(DiffReviewer(args.project).review(staged_diff()))


    if __name__ == "__main__":
        main()
"""

VERTEX_HAZARD = {
    "reviewer.py": _reviewer('{"type": "text", "text": self.RULES, "cache_control": {"type": "ephemeral"}}'),
    "git_tools.py": GIT_TOOLS,
    "cli.py": REVIEW_CLI,
}
VERTEX_CLEAN = {
    # no breakpoint: a prefix this short is never cached anyway
    "reviewer.py": _reviewer('{"type": "text", "text": self.RULES}'),
    "git_tools.py": GIT_TOOLS,
    "cli.py": REVIEW_CLI,
}

# --- 10. M101: Starlette + OpenTelemetry, trace id first in the system message ---


def _prompt_parts(first_lines: str) -> str:
    return '''
    from opentelemetry import trace
''' + HELPDESK_GUIDE.replace("\n", "\n    ") + f'''

    def system_message() -> dict:
        span = trace.get_current_span()
        lines = {first_lines}
        return {{"role": "system", "content": "\\n".join(lines)}}
'''


def _starlette_app(headers: str) -> str:
    return f"""
    from openai import AsyncOpenAI
    from opentelemetry import trace
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from prompt_parts import system_message

    client = AsyncOpenAI()


    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        span = trace.get_current_span()
        completion = await client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[system_message(), {{"role": "user", "content": body["question"]}}],
            {headers}
        )
        return JSONResponse({{"answer": completion.choices[0].message.content}})


    app = Starlette(routes=[Route("/chat", chat, methods=["POST"])])
"""


OTEL_HAZARD = {
    "prompt_parts.py": _prompt_parts('[f"Trace id: {span.get_span_context().trace_id:032x}", GUIDE]'),
    "app.py": _starlette_app("temperature=0.2,"),
}
OTEL_CLEAN = {
    "prompt_parts.py": _prompt_parts("[GUIDE]"),
    # the trace id travels in a header, not in the prompt
    "app.py": _starlette_app('extra_headers={"X-Request-Trace": f"{span.get_span_context().trace_id:032x}"},'),
}

HAZARDS = {
    "telegram_concierge_inherited_clock_header": (
        TELEGRAM_HAZARD,
        "bot.py",
        ("M101", "persona_base.py", "return f\"It is {datetime.now("),
    ),
    "teams_helpdesk_merged_preferences_items": (
        HELPDESK_HAZARD,
        "bot.py",
        ("M201", "preferences.py", "for key, value in merged.items()"),
    ),
    "arq_fireworks_tool_set_union": (
        ARQ_HAZARD,
        "triage.py",
        ("M202", "toolbox.py", "for name in set(self.profile_tools)"),
    ),
    "falcon_kb_topics_set_comprehension": (
        FALCON_HAZARD,
        "app.py",
        ("M203", "kb.py", "for topic in {INTENT_TOPICS"),
    ),
    "litestar_base_client_time_ns_salt": (
        LITESTAR_HAZARD,
        "support.py",
        ("M401", "tenant_client.py", '"cache_salt": f"{self.tenant}-{time.time_ns()}"'),
    ),
    "grpc_servicer_salt_in_exception": (
        GRPC_HAZARD,
        "servicer.py",
        ("M402", "servicer.py", "raise UpstreamError("),
    ),
    "sglang_popen_disable_radix_cache": (
        SGLANG_HAZARD,
        "launch.py",
        ("M701", "launch.py", '"--disable-radix-cache"'),
    ),
    "httpx_guard_prompt_logprobs_payload": (
        GUARD_HAZARD,
        "guard.py",
        ("M702", "payloads.py", '"prompt_logprobs": 1'),
    ),
    "vertex_reviewer_short_cached_rules": (
        VERTEX_HAZARD,
        "reviewer.py",
        ("M703", "reviewer.py", '"cache_control"'),
    ),
    "starlette_otel_trace_id_first": (
        OTEL_HAZARD,
        "app.py",
        ("M101", "prompt_parts.py", "trace_id:032x"),
    ),
}

CLEAN = {
    "telegram_concierge_clock_last": TELEGRAM_CLEAN,
    "teams_helpdesk_sorted_preferences": HELPDESK_CLEAN,
    "arq_fireworks_sorted_tool_union": ARQ_CLEAN,
    "falcon_kb_sorted_topics": FALCON_CLEAN,
    "litestar_base_client_tenant_hash_salt": LITESTAR_CLEAN,
    "grpc_servicer_tenant_only_exception": GRPC_CLEAN,
    "sglang_popen_radix_cache_on": SGLANG_CLEAN,
    "httpx_guard_generated_logprobs": GUARD_CLEAN,
    "vertex_reviewer_no_breakpoint": VERTEX_CLEAN,
    "starlette_otel_trace_in_header": OTEL_CLEAN,
}


@pytest.mark.parametrize("case", list(HAZARDS.values()), ids=list(HAZARDS))
def test_hazard_found_at_its_line(tmp_path, case):
    assert_hazard(tmp_path, case)


@pytest.mark.parametrize("files", list(CLEAN.values()), ids=list(CLEAN))
def test_clean_project_gives_nothing(tmp_path, files):
    assert_clean(tmp_path, files)
