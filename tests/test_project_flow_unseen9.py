"""A ninth unseen set of agent-style Python projects, written blind: its author read docs/rules/README.md and
docs/rules/*.md, the opening of docs/python.md (the title, "Which files" and the first two paragraphs of "How it
works", stopping before its list of prompt sinks), tests/flow_harness.py, the ``TOKENIZER =`` line of
tests/test_agent_call_shapes.py and the first paragraph of the docstrings of tests/test_project_flow_unseen.py,
_unseen3 to _unseen8 and test_project_flow_styles.py only (not the analyzer's source, not another set's cases, not
a run of it), in styles no earlier set uses; the file linted is the one holding the SDK call (the one a directory
walk would pick), so every finding but one lies in a module it imports:
- M101: a Sanic returns desk on Groq's own SDK (``AsyncGroq``) whose system prompt is a ``str.format_map``
  template opening with ``{opened}``, filled from a dict made by a walrus inside the call with
  ``datetime.now().astimezone().isoformat()``, before 358 tokens of returns policy;
  clean twin: ``{opened}`` moves from the system template to the user template, after ``{question}``;
- M101: a terminal home-lab helper on Ollama's native ``ollama.Client.chat`` (a walrus ``input()`` loop) whose
  pydantic ``BaseModel`` persona builds the system prompt in a ``@property``: a ``uuid4`` ticket before a
  338-token field guide from another module;
  clean twin: the property returns the guide alone and the ticket follows the question in the user message;
- M106: a Tornado on-call handler calling ``anthropic.Anthropic().messages.create`` with the model picked by a
  ``match`` statement (``case "sev1" | "sev2"``) and one cached system block whose text opens with
  ``{datetime.now():{STAMP_FORMAT}}`` (a nested format spec) before a 1,431-token runbook;
  clean twin: the rule doc's fix, the cached block holds the runbook alone and the clock line opens the user message;
- M201: an rq job drafting replies on DeepSeek through the OpenAI client, whose house-style section copies the
  defaults with ``dict(STYLE_DEFAULTS)``, merges the caller's ``**overrides`` with ``.update`` and lists
  ``rules.items()`` before a 170-token checklist;
  clean twin: the section lists ``sorted(rules.items())``;
- M202: a Quart websocket support agent on ``AnthropicBedrock`` whose ``tools=`` are looked up by iterating a
  ``set[str]`` of names grown with ``|=`` in the branches of a ``match`` on the desk;
  clean twin: the names are iterated through ``sorted(...)``;
- M203: a Pyramid view on ``huggingface_hub.InferenceClient`` (its OpenAI-style ``chat.completions.create``)
  whose system prompt joins handbook pages for a module-level set of ``str``-``Enum`` topics always included;
  clean twin: the topics are iterated through ``sorted(...)``;
- M401: a Bottle gateway to vLLM through the OpenAI client whose ``extra_body`` comes from a tenancy module's
  ``dict(cache_salt=f"{tenant}-{random.getrandbits(64):016x}", top_k=40)``;
  clean twin: the salt is an HMAC-SHA256 of the tenant under a deployment key, stable per tenant;
- M402: a CherryPy stock desk posting vLLM bodies with ``requests`` whose Prometheus counter is incremented
  with ``.labels(tenant=tenant, salt=salt)``;
  clean twin: the counter is labelled with the tenant only;
- M702: a huey task running vLLM offline, ``llm.generate([...], SamplingParams(**DECODING))`` with the decoding
  settings a dict of a settings module holding ``"prompt_logprobs": 1``;
  clean twin: that entry is replaced by a ``"stop"`` list;
- M704: an AWS Lambda handler calling ``boto3`` ``bedrock-runtime`` ``invoke_model`` with an Anthropic body
  (``json.dumps`` of a literal payload) whose three tools (``input_schema`` from pydantic
  ``model_json_schema()``), system block and user text block each carry ``cache_control``: five breakpoints;
  clean twin: the rule doc's fix, breakpoints on the last tool, the system block and the user block only.

Where each finding is expected: M101 at the line that makes the volatile value (the convention of the earlier
sets; in case 1 the walrus puts the call on the line that renders the template); M106 on the one line holding
both the value and its block's ``cache_control``; M201 at the ``.items()`` iteration (docs/rules/M201.md);
M202 and M203 at the iteration of the set (where their Python fix puts ``sorted``); M401 at the ``cache_salt``
key (docs/rules/M401.md: "checked at its "cache_salt" key"); M402 at the ``.labels(...)`` call; M702 at the
dict's key (docs/rules/M702.md: "the finding is on the dict's key"); M704 at the fifth breakpoint in the
provider's order (tools, system, messages), which is also the fifth in the source. Token counts are of the
static constants as Python evaluates them, ``tokenizers.Tokenizer.from_file(TOKENIZER).encode(text).ids`` with
the pinned Qwen2.5 tokenizer (no chat template): 358 and 338 tokens follow the volatile values of the two M101
cases (about 22 and 21 blocks of 16 lost), and the runbook's 1,431 tokens put the M106 breakpoint above the
1,024-token minimum Anthropic publishes for Claude Sonnet 4.5 and above the provider's smallest (512) alike, so
M703 cannot take its place. In the M704 case the pydantic schemas make every breakpoint's prefix length
unknown, so M703 (docs/rules/M703.md: "its length is unknown and nothing is reported") stays silent in both the
hazard and the clean twin.

First run (23:43 UTC, main at 4386a8b — the merge of this file after the M101 threshold, the cold-path
round and the CPU-time render limit; merged unchanged and run once): 6 of 10 pass the harness's exact check,
7 of 10 found at the expected line; no false alarm on the 10 clean projects. Missed (each gave nothing):
the Sanic/Groq clock in a ``str.format_map`` mapping made by a walrus inside the call (M101); the Bottle
``cache_salt`` from ``random.getrandbits`` in a ``dict(...)`` call (M401); the huey ``SamplingParams(**DECODING)``
whose settings dict holds ``prompt_logprobs`` (M702). Found with extra findings: the Quart ``tools=`` set
iteration is M202 at the expected line, and also twice more at the two ``names |= {...}`` lines of
tools.py (the same hazard reported where the set is grown). Those four stay ``xfail(strict=True)`` until
their families are closed.
The Sanic/Groq M101 case was closed after the first run by the family "a clock in a format_map/format(**)
mapping of a prompt returned as a tuple and unpacked by the caller", tests/test_project_flow_families8.py.
The Bottle M401 case was closed after the first run by the family "a random/secrets salt in a
dict(cache_salt=...) keyword of a body built in another module", tests/test_project_flow_families8.py.
The huey M702 case was closed after the first run by the family "prompt_logprobs in a mapping spread with ** into
SamplingParams or a request dict", tests/test_project_flow_families8.py.
The Quart M202 case was closed after the first run by the family "a set grown with |=, -=, ^= in a helper is
reported once, where it is iterated", tests/test_project_flow_families8.py.
"""

from __future__ import annotations

import pytest

from flow_harness import assert_clean, assert_hazard
from flow_harness import twin as _twin


# --- 1. M101: Sanic returns desk on Groq's SDK, str.format_map over a fields dict -------------------

SANIC_GROQ = {
    "prompts.py": r'''
        from datetime import datetime

        SYSTEM_TEMPLATE = """Session opened {opened}.

        You are the returns assistant of Ridgeline Outfitters, a shop for hiking, climbing and camping gear.
        Customers write to you about orders they want to send back, exchange or have repaired.

        Returns policy:
        - Unused items can be returned within 60 days of delivery for a full refund to the original payment method.
        - Used items can be returned within 60 days only when they are faulty; ask for a photo of the fault.
        - Footwear that has been worn outdoors cannot be returned unless a seam or sole has failed.
        - Climbing hardware (carabiners, belay devices, harnesses, ropes) cannot be returned once opened, for
          safety reasons; faulty hardware goes to the manufacturer's warranty desk instead.
        - Sale items marked "final" are not returnable; explain this kindly and offer the repair service.
        - Gift returns are refunded as store credit to the person returning the item.

        Exchanges:
        - Size exchanges are free and ship as soon as the original item is scanned at our warehouse.
        - A colour exchange is treated as a return and a new order.

        Repairs:
        - Tents, jackets and backpacks can be repaired in our workshop; the first repair of an item is free.
        - Quote a turnaround of three weeks and never promise a date.

        How to answer:
        - Ask for the order number when the customer has not given it; never guess one.
        - Say which of the rules above applies and what the customer has to do next, in that order.
        - Keep answers under 150 words, in plain language, without marketing phrases.
        - When a request is outside these rules, offer to hand the case to a person and say so clearly.
        - Never mention internal systems, warehouse codes or staff names."""

        USER_TEMPLATE = "{question}"


        def render(question: str) -> tuple[str, str]:
            system = SYSTEM_TEMPLATE.format_map(fields := {"opened": datetime.now().astimezone().isoformat(timespec="seconds"), "question": question})
            return system, USER_TEMPLATE.format_map(fields)
    ''',
    "llm.py": r'''
        from groq import AsyncGroq

        from prompts import render

        client = AsyncGroq()


        async def answer(question: str) -> str:
            system, user = render(question)
            chat = await client.chat.completions.create(
                model="llama-3.3-70b-versatile",
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                temperature=0.2,
            )
            return chat.choices[0].message.content
    ''',
    "app.py": r'''
        from sanic import Sanic
        from sanic.response import json

        from llm import answer

        app = Sanic("returns_desk")


        @app.post("/returns/ask")
        async def ask(request):
            return json({"answer": await answer(request.json["question"])})
    ''',
}
SANIC_GROQ_HAZARD = (SANIC_GROQ, "llm.py", ("M101", "prompts.py", '"opened": datetime.now()'))
SANIC_GROQ_CLEAN = _twin(SANIC_GROQ, {"prompts.py": [
    ('SYSTEM_TEMPLATE = """Session opened {opened}.\n\n        You are', 'SYSTEM_TEMPLATE = """You are'),
    ('USER_TEMPLATE = "{question}"', 'USER_TEMPLATE = "{question}\\n\\n(Session opened {opened}.)"'),
]})


# --- 2. M101: Ollama's native client, a pydantic model's @property, a walrus REPL -------------------

OLLAMA_PYDANTIC = {
    "guide.py": r'''
        FIELD_GUIDE = """You are the home-lab assistant for a small self-hosting community. Members run servers at
        home: mini PCs, old laptops, Raspberry Pis and the odd rack server in a cupboard.

        What you help with:
        - Containers: Docker and Podman, compose files, volumes, networks, restart policies and image updates.
        - Reverse proxies: Caddy, Traefik and nginx in front of self-hosted services, with certificates from
          Let's Encrypt through the HTTP or DNS challenge.
        - Storage: ZFS pools and datasets, snapshots and scrubs, SMART data, and when a disk should be replaced.
        - Backups: the 3-2-1 rule, restic and borg repositories, and restoring one file as well as a whole machine.
        - Networking: VLANs, DHCP reservations, local DNS with Pi-hole or AdGuard Home, WireGuard tunnels.

        How you answer:
        - Start with the one command or setting that most likely solves the problem, then explain why.
        - Give commands in code blocks, one per line, with placeholders in capitals (HOSTNAME, POOL).
        - Ask for the output of a diagnostic command when the question is missing the detail you need.
        - Warn before any command that deletes data, rewrites a partition table or exposes a port to the internet.
        - Prefer the tools the member already runs over new ones; do not recommend paid products.
        - Say so when you are not sure, and point to the project's own documentation.

        Never ask for passwords, private keys or API tokens, and tell members to remove them when they paste
        them by mistake. Keep answers short: most questions need fewer than ten lines."""
    ''',
    "persona.py": r'''
        import uuid

        from pydantic import BaseModel

        from guide import FIELD_GUIDE


        class Persona(BaseModel):
            model: str = "qwen2.5:7b"
            temperature: float = 0.3

            @property
            def system(self) -> str:
                return f"Ticket {uuid.uuid4().hex[:12]}\n\n{FIELD_GUIDE}"

            def user(self, question: str) -> str:
                return question
    ''',
    "chat.py": r'''
        import ollama

        from persona import Persona

        client = ollama.Client(host="http://localhost:11434")


        def reply(persona: Persona, question: str) -> str:
            response = client.chat(
                model=persona.model,
                messages=[
                    {"role": "system", "content": persona.system},
                    {"role": "user", "content": persona.user(question)},
                ],
                options={"temperature": persona.temperature},
            )
            return response["message"]["content"]
    ''',
    "main.py": r'''
        from chat import reply
        from persona import Persona


        def main() -> None:
            persona = Persona()
            while (question := input("homelab> ").strip()):
                print(reply(persona, question))


        if __name__ == "__main__":
            main()
    ''',
}
OLLAMA_PYDANTIC_HAZARD = (OLLAMA_PYDANTIC, "chat.py", ("M101", "persona.py", "uuid.uuid4().hex[:12]"))
OLLAMA_PYDANTIC_CLEAN = _twin(OLLAMA_PYDANTIC, {"persona.py": [
    ('return f"Ticket {uuid.uuid4().hex[:12]}\\n\\n{FIELD_GUIDE}"', "return FIELD_GUIDE"),
    ("return question", 'return f"{question}\\n\\n(ticket {uuid.uuid4().hex[:12]})"'),
]})


# --- 3. M106: Tornado on-call handler, Anthropic, model picked by `match`, nested format spec -------

TORNADO_ANTHROPIC = {
    "runbook.py": r'''
        RUNBOOK = """You are the on-call assistant of the payments platform team. Engineers page you with an alert
        and you answer with a triage plan taken from this runbook. Follow the runbook; when it does not cover
        the alert, say so and recommend escalating to the secondary on-call engineer.

        1. Severity levels
        - SEV1: card payments failing for more than 5% of attempts in any region for five minutes, or any data
          exposure. Page the incident commander at once and open the incident channel.
        - SEV2: one payment method or one region degraded, error rate between 1% and 5%, or settlement files
          late by more than an hour. Work it within the on-call shift and post updates every 30 minutes.
        - SEV3: a single merchant affected, dashboards or alerts misbehaving, capacity warnings. Open a ticket
          and work it during business hours unless it gets worse.

        2. First five minutes, for every alert
        - Acknowledge the page so the escalation timer stops.
        - Open the service dashboard named in the alert and check the error rate, the latency percentiles and
          the request volume for the last hour.
        - Check the deploy log: a deploy in the last two hours is the most likely cause of a new error.
        - Check the status pages of the card networks and of the cloud provider for the affected region.
        - Write one line in the incident channel: what fired, what you see, what you will do next.

        3. Payment gateway errors
        - A rise in 5xx responses from the gateway after a deploy: roll the deploy back first and investigate
          afterwards. Rollbacks are safe for the gateway; its database migrations are always backward compatible.
        - A rise in timeouts to one acquirer: switch that acquirer's traffic to the fallback route with the
          routing flag, then confirm that the success rate recovers within ten minutes.
        - Declines with reason "do not honor" from one issuer are not an incident unless they exceed the daily
          baseline by a factor of three; note them for the fraud team.
        - Never retry a card authorization by hand: duplicate charges are worse than a failed payment.

        4. Settlement and payouts
        - Settlement files are produced at 02:00 UTC. When the file job fails, rerun it once; if it fails again,
          escalate to the finance engineering on-call and do not edit files by hand.
        - Payout batches must not be sent twice. Before rerunning a payout job, check the batch ledger for the
          batch identifier and confirm it is marked as not sent.
        - Late settlement files are SEV2 after one hour because merchants reconcile against them every morning.

        5. Database
        - Replication lag above 30 seconds on the ledger database: stop the reporting jobs that read from the
          replica, then watch the lag for ten minutes. Do not fail over the primary without the incident commander.
        - Connection pool exhaustion: look for a recent deploy that changed pool sizes or added a slow query,
          and roll it back. Restarting the application only hides the cause.
        - Disk above 85% on any database host: page the database on-call; do not delete logs or backups yourself.

        6. Queues and workers
        - A backlog in the webhook queue delays merchant notifications but loses nothing. Scale the webhook
          workers up to the documented maximum and let the backlog drain.
        - A backlog in the capture queue delays money movement: it is SEV2 when the oldest message is older than
          fifteen minutes.
        - Dead-letter queues must be reviewed before any message is replayed; replays go through the replay tool,
          which deduplicates by payment identifier.

        7. Fraud and security
        - Any sign of leaked credentials, card numbers in logs or unusual access to the vault is SEV1. Page the
          security on-call and do not post details in public channels.
        - Sudden spikes of small authorizations from new accounts are card testing: enable the card-testing rule
          set for the affected merchant and tell the fraud team.

        8. Certificates, DNS and the edge
        - Certificate expiry alerts fire 14 days ahead. Renewal is automatic; when the alert fires, the renewal
          job has failed at least twice. Check the job's last run and rerun it; page the platform on-call if the
          certificate expires in less than three days.
        - DNS changes are made only through the infrastructure repository, never in the provider's console.
          A wrong record during an incident is reverted with the previous commit, not edited by hand.
        - Errors at the edge (the load balancer answers 502 or 504 while the services look healthy) usually
          mean a health check or a target group changed. Compare the target group with the previous deploy.
        - Rate limiting at the edge protects the gateway during card-testing attacks; do not raise the limits
          without the security on-call.

        9. Third-party services
        - The tax calculation service has a fallback: when it times out, checkout uses the cached rate table,
          which is good for 24 hours. Note the time the fallback started in the incident channel.
        - The address verification provider is optional: when it fails, checkout continues without it. This is
          SEV3 unless it lasts more than four hours.
        - The e-mail provider sends receipts. When it fails, receipts are queued and sent later; tell support so
          they can answer merchants who ask.
        - The currency rate feed updates every hour. Rates older than three hours block foreign-currency payouts:
          SEV2, escalate to finance engineering.

        10. Handover
        - At the end of the shift, write a handover note: open incidents, alerts that fired and were
          acknowledged without action, rollbacks that are still in place and flags that were changed.
        - Flags changed during an incident stay changed until the incident review decides otherwise; list them
          in the handover note with the time they were changed.
        - Do not leave a rollback in place over a weekend without telling the owning team.

        11. Communication
        - Post an update in the incident channel at least every 30 minutes during SEV1 and SEV2, even when
          there is nothing new; say what you are trying next.
        - The status page is updated by the incident commander only.
        - When the incident is over, write the timeline while it is fresh and schedule the review within five
          working days.

        How to answer a page:
        - Start with the severity you assign and the reason, in one line.
        - Then list the next three actions in order, each with the dashboard, flag or tool it uses.
        - Then say when to escalate and to whom.
        - Keep the plan under 200 words; engineers read it on a phone at night.
        - Never invent dashboard names, flags or commands that this runbook does not mention."""
    ''',
    "service.py": r'''
        from datetime import datetime

        import anthropic

        from runbook import RUNBOOK

        STAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
        client = anthropic.Anthropic()


        def model_for(severity: str) -> str:
            match severity:
                case "sev1" | "sev2":
                    return "claude-sonnet-4-5"
                case _:
                    return "claude-sonnet-4-5-20250929"


        def triage(severity: str, alert: str) -> str:
            message = client.messages.create(
                model=model_for(severity),
                max_tokens=800,
                system=[{"type": "text", "text": f"Shift clock: {datetime.now():{STAMP_FORMAT}}\n\n{RUNBOOK}", "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": alert}],
            )
            return message.content[0].text
    ''',
    "handlers.py": r'''
        import tornado.escape
        import tornado.web

        from service import triage


        class TriageHandler(tornado.web.RequestHandler):
            def post(self) -> None:
                payload = tornado.escape.json_decode(self.request.body)
                self.write({"plan": triage(payload["severity"], payload["alert"])})


        def make_app() -> tornado.web.Application:
            return tornado.web.Application([(r"/triage", TriageHandler)])
    ''',
}
TORNADO_ANTHROPIC_HAZARD = (TORNADO_ANTHROPIC, "service.py", ("M106", "service.py", "Shift clock: {datetime.now()"))
TORNADO_ANTHROPIC_CLEAN = _twin(TORNADO_ANTHROPIC, {"service.py": [
    ('"text": f"Shift clock: {datetime.now():{STAMP_FORMAT}}\\n\\n{RUNBOOK}"', '"text": RUNBOOK'),
    ('"content": alert}', '"content": f"Shift clock: {datetime.now():{STAMP_FORMAT}}\\n\\n{alert}"}'),
]})


# --- 4. M201: rq job drafting replies on DeepSeek (OpenAI client), defaults copied then .update(overrides)

RQ_DEEPSEEK = {
    "style.py": r'''
        STYLE_DEFAULTS = {
            "tone": "plain and friendly",
            "reading level": "about grade 8",
            "length": "under 120 words",
            "sign-off": "the team's first names",
        }


        def house_style(**overrides: str) -> str:
            rules = dict(STYLE_DEFAULTS)
            rules.update(overrides)
            return "\n".join(f"- {key}: {value}" for key, value in rules.items())
    ''',
    "prompts.py": r'''
        from style import house_style

        WRITER_BRIEF = """You draft replies to customer support tickets for a small software company. An agent reads
        every draft before it is sent, so write the reply the agent would send, not notes about it."""

        REPLY_CHECKLIST = """Before you answer, check the ticket for these points and handle each one:
        - What the customer asked for, in their words; answer that first, in the first sentence.
        - Whether the ticket mentions an error message; if so, quote it back and say what it means.
        - Whether the customer is on a trial; trial customers get a link to the getting-started guide.
        - Whether the problem is a known issue; known issues get the workaround and no promise of a date.
        - Whether the customer is upset; acknowledge it once, without apologising more than once.
        Never invent features, prices or release dates. When the ticket is about billing or a refund, say that
        the billing team will reply within one working day and do not discuss amounts. When the ticket is in a
        language other than English, reply in that language."""


        def system_prompt(overrides: dict[str, str]) -> str:
            return f"{WRITER_BRIEF}\n\nHouse style for this account:\n{house_style(**overrides)}\n\n{REPLY_CHECKLIST}"
    ''',
    "jobs.py": r'''
        import os

        from openai import OpenAI

        from prompts import system_prompt

        client = OpenAI(base_url="https://api.deepseek.com", api_key=os.environ["DEEPSEEK_API_KEY"])


        def draft_reply(ticket_text: str, overrides: dict[str, str]) -> str:
            completion = client.chat.completions.create(
                model="deepseek-chat",
                messages=[
                    {"role": "system", "content": system_prompt(overrides)},
                    {"role": "user", "content": ticket_text},
                ],
            )
            return completion.choices[0].message.content
    ''',
    "enqueue.py": r'''
        from redis import Redis
        from rq import Queue

        from jobs import draft_reply

        queue = Queue("drafts", connection=Redis())


        def submit(ticket_text: str, account_style: dict[str, str]):
            return queue.enqueue(draft_reply, ticket_text, account_style, job_timeout=120)
    ''',
}
RQ_DEEPSEEK_HAZARD = (RQ_DEEPSEEK, "jobs.py", ("M201", "style.py", "rules.items()"))
RQ_DEEPSEEK_CLEAN = _twin(RQ_DEEPSEEK, {"style.py": [("in rules.items())", "in sorted(rules.items()))")]})


# --- 5. M202: Quart websocket agent on AnthropicBedrock, tool names from a set grown in a `match` ----

QUART_BEDROCK_TOOLS = {
    "tools.py": r'''
        TOOL_SPECS = {
            "search_kb": {
                "name": "search_kb",
                "description": "Search the help-centre articles and return the three best matches with their titles and links.",
                "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            },
            "order_status": {
                "name": "order_status",
                "description": "Look up an order by its number and return its status, items and delivery estimate.",
                "input_schema": {"type": "object", "properties": {"order_number": {"type": "string"}}, "required": ["order_number"]},
            },
            "track_parcel": {
                "name": "track_parcel",
                "description": "Return the carrier's latest tracking events for a parcel, newest first.",
                "input_schema": {"type": "object", "properties": {"tracking_id": {"type": "string"}}, "required": ["tracking_id"]},
            },
            "refund": {
                "name": "refund",
                "description": "Start a refund for an order line; the money returns to the original payment method.",
                "input_schema": {"type": "object", "properties": {"order_number": {"type": "string"}, "line": {"type": "integer"}}, "required": ["order_number", "line"]},
            },
            "invoice_lookup": {
                "name": "invoice_lookup",
                "description": "Fetch an invoice as a PDF link by order number or invoice number.",
                "input_schema": {"type": "object", "properties": {"number": {"type": "string"}}, "required": ["number"]},
            },
        }


        def tool_names(desk: str) -> set[str]:
            names = {"search_kb"}
            match desk:
                case "billing":
                    names |= {"refund", "invoice_lookup"}
                case _:
                    names |= {"order_status", "track_parcel"}
            return names
    ''',
    "agent.py": r'''
        from anthropic import AnthropicBedrock

        from tools import TOOL_SPECS, tool_names

        SYSTEM = """You are the support agent of an online shop. Use the tools to look things up instead of guessing,
        call one tool at a time, and answer in at most four sentences. Hand the conversation to a person when
        the customer asks for one or when a tool fails twice."""

        client = AnthropicBedrock(aws_region="us-west-2")


        def respond(desk: str, history: list[dict]) -> str:
            tools = [TOOL_SPECS[name] for name in tool_names(desk)]
            message = client.messages.create(
                model="anthropic.claude-sonnet-4-5-20250929-v1:0",
                max_tokens=1024,
                system=SYSTEM,
                tools=tools,
                messages=history,
            )
            return "".join(block.text for block in message.content if block.type == "text")
    ''',
    "app.py": r'''
        from quart import Quart, websocket

        from agent import respond

        app = Quart(__name__)


        @app.websocket("/support/<desk>")
        async def support(desk: str) -> None:
            history: list[dict] = []
            while True:
                text = await websocket.receive()
                history.append({"role": "user", "content": text})
                answer = respond(desk, history)
                history.append({"role": "assistant", "content": answer})
                await websocket.send(answer)
    ''',
}
QUART_BEDROCK_TOOLS_HAZARD = (QUART_BEDROCK_TOOLS, "agent.py", ("M202", "agent.py", "for name in tool_names(desk)"))
QUART_BEDROCK_TOOLS_CLEAN = _twin(QUART_BEDROCK_TOOLS, {"agent.py": [
    ("for name in tool_names(desk)]", "for name in sorted(tool_names(desk))]"),
]})


# --- 6. M203: Pyramid view, huggingface_hub InferenceClient, a set of str-Enum topics always included -

PYRAMID_HF_HANDBOOK = {
    "handbook.py": r'''
        from enum import Enum


        class Topic(str, Enum):
            RETURNS = "returns"
            SHIPPING = "shipping"
            WARRANTY = "warranty"
            ACCOUNTS = "accounts"


        HANDBOOK = {
            Topic.RETURNS: """Returns. Items can be sent back within 30 days of delivery if they are unused and in their
        original packaging. The customer prints a prepaid label from their account page; refunds are issued
        within five working days of the parcel reaching the warehouse. Personalised items and gift cards cannot
        be returned. Damaged deliveries are not returns: they are replaced at once, without sending the item back.""",
            Topic.SHIPPING: """Shipping. Standard delivery takes two to four working days and is free above 40 euros; express
        delivery arrives the next working day when ordered before 14:00. We ship to every EU country, Norway,
        Switzerland and the United Kingdom; customs fees for the last two are paid by the customer. Parcels that
        cannot be delivered wait at the local pickup point for ten days before they come back to us.""",
            Topic.WARRANTY: """Warranty. Every product has a two-year warranty from the delivery date; batteries have one year.
        The warranty covers manufacturing faults, not wear, drops or water damage. A warranty claim needs the
        order number and a photo or video of the fault. We repair the item first, replace it when a repair is
        not possible, and refund it only when neither a repair nor a replacement is available.""",
            Topic.ACCOUNTS: """Accounts. Customers can change their e-mail address, password and delivery addresses on the
        account page. Deleting an account removes order history after the legal retention period of ten years.""",
        }

        ALWAYS_ON = {Topic.RETURNS, Topic.SHIPPING, Topic.WARRANTY}


        def shared_pages() -> str:
            return "\n\n".join(HANDBOOK[topic] for topic in ALWAYS_ON)
    ''',
    "assistant.py": r'''
        from huggingface_hub import InferenceClient

        from handbook import shared_pages

        PREAMBLE = """You answer customer questions for an electronics shop. Use only the handbook pages below. If
        they do not answer the question, say that a colleague will reply by e-mail and do not guess."""

        client = InferenceClient(base_url="http://tgi.internal:8080/v1")


        def answer(question: str) -> str:
            system = f"{PREAMBLE}\n\n{shared_pages()}"
            completion = client.chat.completions.create(
                model="meta-llama/Llama-3.1-8B-Instruct",
                messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
                max_tokens=400,
            )
            return completion.choices[0].message.content
    ''',
    "views.py": r'''
        from pyramid.view import view_config

        from assistant import answer


        @view_config(route_name="ask", renderer="json", request_method="POST")
        def ask(request):
            return {"answer": answer(request.json_body["question"])}
    ''',
}
PYRAMID_HF_HANDBOOK_HAZARD = (PYRAMID_HF_HANDBOOK, "assistant.py", ("M203", "handbook.py", "for topic in ALWAYS_ON"))
PYRAMID_HF_HANDBOOK_CLEAN = _twin(PYRAMID_HF_HANDBOOK, {"handbook.py": [
    ("for topic in ALWAYS_ON)", "for topic in sorted(ALWAYS_ON))"),
]})


# --- 7. M401: Bottle gateway to vLLM, the extra body made with dict(cache_salt=...) in a tenancy module

BOTTLE_VLLM_SALT = {
    "tenancy.py": r'''
        import hashlib
        import hmac
        import os
        import random

        SALT_KEY = os.environ.get("CACHE_SALT_KEY", "dev-only").encode()


        def salted_body(tenant: str) -> dict:
            return dict(cache_salt=f"{tenant}-{random.getrandbits(64):016x}", top_k=40)
    ''',
    "gateway.py": r'''
        from openai import OpenAI

        from tenancy import salted_body

        SYSTEM = """You are the internal knowledge assistant of an accounting firm. Answer questions about the firm's
        procedures, deadlines and templates. Quote the procedure's number when you use one, answer in at most
        six sentences, and say "ask the practice manager" when a question needs a judgement call."""

        client = OpenAI(base_url="http://vllm.internal:8000/v1", api_key="EMPTY")


        def complete(tenant: str, question: str) -> str:
            chat = client.chat.completions.create(
                model="Qwen/Qwen2.5-7B-Instruct",
                messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
                extra_body=salted_body(tenant),
            )
            return chat.choices[0].message.content
    ''',
    "app.py": r'''
        from bottle import Bottle, request

        from gateway import complete

        app = Bottle()


        @app.post("/<tenant>/ask")
        def ask(tenant: str):
            return {"answer": complete(tenant, request.json["question"])}
    ''',
}
BOTTLE_VLLM_SALT_HAZARD = (BOTTLE_VLLM_SALT, "gateway.py", ("M401", "tenancy.py", "cache_salt="))
BOTTLE_VLLM_SALT_CLEAN = _twin(BOTTLE_VLLM_SALT, {"tenancy.py": [
    ('cache_salt=f"{tenant}-{random.getrandbits(64):016x}"',
     "cache_salt=hmac.new(SALT_KEY, tenant.encode(), hashlib.sha256).hexdigest()[:32]"),
]})


# --- 8. M402: CherryPy app posting to vLLM with requests, the salt used as a Prometheus label -------

CHERRYPY_PROMETHEUS = {
    "metrics.py": r'''
        from prometheus_client import Counter

        LLM_REQUESTS = Counter("llm_requests_total", "Completions sent to the upstream engine", ["tenant", "salt"])
    ''',
    "upstream.py": r'''
        import hashlib
        import hmac
        import os

        import requests

        from metrics import LLM_REQUESTS

        ENGINE_URL = "http://vllm.internal:8000/v1/chat/completions"
        SALT_KEY = os.environ["CACHE_SALT_KEY"].encode()
        SYSTEM = """You help warehouse staff with stock questions: where an item is stored, how many are left and
        when the next delivery arrives. Answer with the location code first, then one short sentence."""


        def tenant_salt(tenant: str) -> str:
            return hmac.new(SALT_KEY, tenant.encode(), hashlib.sha256).hexdigest()[:32]


        def ask(tenant: str, question: str) -> str:
            salt = tenant_salt(tenant)
            LLM_REQUESTS.labels(tenant=tenant, salt=salt).inc()
            body = {
                "model": "Qwen/Qwen2.5-7B-Instruct",
                "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
                "cache_salt": salt,
            }
            response = requests.post(ENGINE_URL, json=body, timeout=30)
            response.raise_for_status()
            return response.json()["choices"][0]["message"]["content"]
    ''',
    "server.py": r'''
        import cherrypy

        from upstream import ask


        class StockDesk:
            @cherrypy.expose
            @cherrypy.tools.json_in()
            @cherrypy.tools.json_out()
            def ask(self, tenant: str):
                return {"answer": ask(tenant, cherrypy.request.json["question"])}


        if __name__ == "__main__":
            cherrypy.quickstart(StockDesk(), "/")
    ''',
}
CHERRYPY_PROMETHEUS_HAZARD = (CHERRYPY_PROMETHEUS, "upstream.py", ("M402", "upstream.py", "LLM_REQUESTS.labels("))
CHERRYPY_PROMETHEUS_CLEAN = _twin(CHERRYPY_PROMETHEUS, {
    "upstream.py": [("LLM_REQUESTS.labels(tenant=tenant, salt=salt).inc()", "LLM_REQUESTS.labels(tenant=tenant).inc()")],
    "metrics.py": [('["tenant", "salt"]', '["tenant"]')],
})


# --- 9. M702: huey task on vLLM offline, SamplingParams(**DECODING) from a settings module ----------

HUEY_VLLM_OFFLINE = {
    "settings.py": r'''
        DECODING = {
            "temperature": 0.0,
            "max_tokens": 256,
            "prompt_logprobs": 1,
        }
    ''',
    "prompts.py": r'''
        INSTRUCTIONS = """Summarise the support ticket below for the weekly product report. Write three bullet points:
        the problem in the customer's words, the product area it belongs to, and whether a workaround was given.
        Do not include names, e-mail addresses or order numbers."""


        def render_prompt(ticket: str) -> str:
            return f"{INSTRUCTIONS}\n\nTicket:\n{ticket}\n\nSummary:\n"
    ''',
    "worker.py": r'''
        from huey import RedisHuey
        from vllm import LLM, SamplingParams

        from prompts import render_prompt
        from settings import DECODING

        huey = RedisHuey("ticket-summaries")
        llm = LLM(model="Qwen/Qwen2.5-7B-Instruct")
        PARAMS = SamplingParams(**DECODING)


        @huey.task()
        def summarize(ticket: str) -> str:
            outputs = llm.generate([render_prompt(ticket)], PARAMS)
            return outputs[0].outputs[0].text
    ''',
}
HUEY_VLLM_OFFLINE_HAZARD = (HUEY_VLLM_OFFLINE, "worker.py", ("M702", "settings.py", '"prompt_logprobs": 1'))
HUEY_VLLM_OFFLINE_CLEAN = _twin(HUEY_VLLM_OFFLINE, {"settings.py": [
    ('"prompt_logprobs": 1,', '"stop": ["\\n\\n\\n"],'),
]})


# --- 10. M704: AWS Lambda, boto3 bedrock-runtime invoke_model with an Anthropic body, pydantic schemas

LAMBDA_INVOKE_MODEL = {
    "schemas.py": r'''
        from pydantic import BaseModel, Field


        class OrderLookup(BaseModel):
            order_number: str = Field(description="The order number, e.g. A-10293")


        class ParcelTrack(BaseModel):
            tracking_id: str = Field(description="The carrier's tracking identifier")


        class RefundRequest(BaseModel):
            order_number: str
            line: int = Field(description="The order line to refund, starting at 1")
    ''',
    "prompts.py": r'''
        SUPPORT_SYSTEM = """You are the customer support agent of a home-appliance shop. Look orders and parcels up with
        the tools instead of guessing. Refunds need the customer's explicit confirmation of the order line.
        Answer in at most five sentences and offer a human agent when the customer asks for one."""
    ''',
    "bedrock_client.py": r'''
        import json

        import boto3

        from prompts import SUPPORT_SYSTEM
        from schemas import OrderLookup, ParcelTrack, RefundRequest

        runtime = boto3.client("bedrock-runtime", region_name="eu-central-1")
        MODEL_ID = "anthropic.claude-sonnet-4-5-20250929-v1:0"


        def ask(question: str) -> str:
            payload = {
                "anthropic_version": "bedrock-2023-05-31",
                "max_tokens": 1024,
                "tools": [
                    {"name": "order_lookup", "description": "Find an order by number.", "input_schema": OrderLookup.model_json_schema(), "cache_control": {"type": "ephemeral"}},
                    {"name": "parcel_track", "description": "Track a parcel.", "input_schema": ParcelTrack.model_json_schema(), "cache_control": {"type": "ephemeral"}},
                    {"name": "refund", "description": "Refund one order line.", "input_schema": RefundRequest.model_json_schema(), "cache_control": {"type": "ephemeral"}},
                ],
                "system": [{"type": "text", "text": SUPPORT_SYSTEM, "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": question, "cache_control": {"type": "ephemeral"}}]},
                ],
            }
            response = runtime.invoke_model(modelId=MODEL_ID, body=json.dumps(payload))
            result = json.loads(response["body"].read())
            return "".join(block["text"] for block in result["content"] if block["type"] == "text")
    ''',
    "handler.py": r'''
        import json

        from bedrock_client import ask


        def lambda_handler(event, context):
            question = json.loads(event["body"])["question"]
            return {"statusCode": 200, "body": json.dumps({"answer": ask(question)})}
    ''',
}
LAMBDA_INVOKE_MODEL_HAZARD = (LAMBDA_INVOKE_MODEL, "bedrock_client.py", ("M704", "bedrock_client.py", '"text": question'))
LAMBDA_INVOKE_MODEL_CLEAN = _twin(LAMBDA_INVOKE_MODEL, {"bedrock_client.py": [
    ('"input_schema": OrderLookup.model_json_schema(), "cache_control": {"type": "ephemeral"}}',
     '"input_schema": OrderLookup.model_json_schema()}'),
    ('"input_schema": ParcelTrack.model_json_schema(), "cache_control": {"type": "ephemeral"}}',
     '"input_schema": ParcelTrack.model_json_schema()}'),
]})


HAZARDS = {
    "m101_sanic_groq_format_map": SANIC_GROQ_HAZARD,
    "m101_ollama_pydantic_property": OLLAMA_PYDANTIC_HAZARD,
    "m106_tornado_anthropic_match_nested_spec": TORNADO_ANTHROPIC_HAZARD,
    "m201_rq_deepseek_update_items": RQ_DEEPSEEK_HAZARD,
    "m202_quart_bedrock_match_set": QUART_BEDROCK_TOOLS_HAZARD,
    "m203_pyramid_hf_enum_set": PYRAMID_HF_HANDBOOK_HAZARD,
    "m401_bottle_vllm_dict_salt": BOTTLE_VLLM_SALT_HAZARD,
    "m402_cherrypy_prometheus_label": CHERRYPY_PROMETHEUS_HAZARD,
    "m702_huey_vllm_offline_decoding": HUEY_VLLM_OFFLINE_HAZARD,
    "m704_lambda_invoke_model_five": LAMBDA_INVOKE_MODEL_HAZARD,
}

CLEAN = {
    "m101_sanic_groq_format_map": SANIC_GROQ_CLEAN,
    "m101_ollama_pydantic_property": OLLAMA_PYDANTIC_CLEAN,
    "m106_tornado_anthropic_match_nested_spec": TORNADO_ANTHROPIC_CLEAN,
    "m201_rq_deepseek_update_items": RQ_DEEPSEEK_CLEAN,
    "m202_quart_bedrock_match_set": QUART_BEDROCK_TOOLS_CLEAN,
    "m203_pyramid_hf_enum_set": PYRAMID_HF_HANDBOOK_CLEAN,
    "m401_bottle_vllm_dict_salt": BOTTLE_VLLM_SALT_CLEAN,
    "m402_cherrypy_prometheus_label": CHERRYPY_PROMETHEUS_CLEAN,
    "m702_huey_vllm_offline_decoding": HUEY_VLLM_OFFLINE_CLEAN,
    "m704_lambda_invoke_model_five": LAMBDA_INVOKE_MODEL_CLEAN,
}


_FIRST_RUN_MISSES = {
}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=_FIRST_RUN_MISSES[n])) if n in _FIRST_RUN_MISSES else n
     for n in sorted(HAZARDS)],
)
def test_unseen9_hazard(tmp_path, name):
    assert_hazard(tmp_path, HAZARDS[name])


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_unseen9_clean(tmp_path, name):
    assert_clean(tmp_path, CLEAN[name])
