r"""A tenth unseen set of agent-style Python projects, written blind: its author read docs/rules/README.md and
docs/rules/*.md, the opening of docs/python.md (the title, "Which files" and the first two paragraphs of "How it
works", stopping before its list of prompt sinks), tests/flow_harness.py, the ``TOKENIZER =`` line of
tests/test_agent_call_shapes.py, the first paragraph of the docstrings of tests/test_project_flow_unseen.py, _unseen3
to _unseen9 and test_project_flow_styles.py, and the ``_twin`` helper and the HAZARDS/CLEAN/test shape at the bottom
of _unseen9 only (not the analyzer's source, not another set's cases, not a run of it), in styles no earlier set uses;
the file linted is the one holding the SDK call (the one a directory walk would pick), and four projects grow a
history list by one exchange per turn:
- M101: a stdlib ``cmd.Cmd`` night-desk shell on xAI (the OpenAI client with ``base_url``) whose ``self.history``
  grows per turn; the system prompt is ``f"Shift clock: {datetime.now():%Y-%m-%d %H:%M:%S}\n\n"`` plus a handbook of
  ``typing.NamedTuple`` sections joined by a generator in another module (364 tokens);
  clean twin: the system prompt is the handbook alone and the clock opens each user message as it is stored in the
  history (``f"[{datetime.now():%H:%M}]\n{line}"``), just before the user's text;
- M106: an ``aiokafka`` consumer keeping one history per conversation in a ``defaultdict(list)`` for
  ``AsyncAnthropic`` (``claude-sonnet-4-5``), one breakpoint on the system block (a 1,143-token runbook); the
  volatile value is not in the system text but in the first tool's description, made by a tools module's function
  (``Results are current as of {datetime.now(timezone.utc):...}``): tools come before system in the cached prefix;
  clean twin: the description says the results lag by at most five minutes, without the clock;
- M201: a Prefect ``@task`` on Nebius (OpenAI client) whose system prompt opens with brand settings listed by
  ``"".join(f"- {key}: {value}\n" for key, value in merged.items())`` over ``{**BRAND_DEFAULTS, **overrides}``
  (overrides from the flow's accounts), before a 130-token writing checklist;
  clean twin: the section iterates ``sorted(merged.items())``;
- M202: an Airflow TaskFlow ``@task`` on ``anthropic.Anthropic`` whose ``tools=`` list comprehension iterates
  ``TOOL_SPECS.keys() & set(ENABLED_TOOLS)`` (a dict-keys view intersected with a set: a set; the enabled names
  are a tuple in the specs module, one of them unknown to the registry);
  clean twin: the intersection is iterated through ``sorted(...)``;
- M203: a Temporal ``@activity.defn`` on DeepInfra (``AsyncOpenAI``) whose system prompt joins insurance clauses
  picked by iterating ``CLAUSES.keys() - {"pets", "minors"}`` (a dict-keys view minus a set literal: a set) in a
  builder module;
  clean twin: the difference is iterated through ``sorted(...)``;
- M401: a raw ASGI app whose middleware puts ``uuid.uuid4().hex`` in a ``contextvars.ContextVar``; the handler
  reads it into ``request_id`` and sends vLLM (``AsyncOpenAI``) ``extra_body={"cache_salt": f"{tenant}:{request_id}"}``;
  clean twin: the salt is ``tenant_salt(tenant)``, an ``lru_cache``'d HMAC-SHA256 of the tenant from a tenancy module
  already in the project;
- M402: an APScheduler prefix-cache warmer for vLLM whose tenant routes (a frozen, slotted dataclass loaded with
  ``tomllib``) carry ``cache_salt``; on ``APIStatusError`` it logs ``route.cache_salt`` with ``log.warning``;
  clean twin: the warning names the tenant and the status only;
- M701: a Modal ``@app.cls`` whose ``@modal.enter()`` hook builds vLLM's offline
  ``LLM(..., enable_prefix_caching=False)``;
  clean twin: ``enable_prefix_caching=True``;
- M703: a Textual TUI migration reviewer on ``anthropic.Anthropic`` (``claude-haiku-4-5``) whose ``self.turns`` grows
  per turn and whose only breakpoint closes a system block holding a literal two-sentence rule text of the same
  module (33 tokens);
  clean twin: the same text sent as ``system=REVIEW_RULES`` without a breakpoint;
- M704: a NiceGUI shop assistant on ``AsyncAnthropic`` (``claude-sonnet-4-5``) with a module-level conversation grown
  per turn, a ``cache_control`` on each of its three literal tools (the first one's description is an imported
  1,259-token database schema), one on the system block and one on the new question's text block: five;
  clean twin: the rule doc's fix, the breakpoints on the first two tools removed (last tool, system, question).

Where each finding is expected. M101 (docs/rules/M101.md: reported when at least one full block of B = 16 tokens of
shared text follows the value before the first per-request input; the value at the end of the prompt or just before
the question is not reported): on the line of ``prompting.py`` that renders the clock (made and rendered on one line),
ahead of 364 tokens of handbook and before the history. M106 (docs/rules/M106.md: the request is laid out tools, then
system, then messages; the value sits before the system breakpoint, whose prefix, the three tools (318 tokens as
``json.dumps``) and the 1,143-token runbook, about 1,460 tokens, is above the 1,024 Anthropic documents for Sonnet
4.5; a call with a breakpoint is M106's, not M101's): at the f-string line of ``tools.py``. M201 (docs/rules/M201.md:
in Python, a mapping merged from a part whose keys its caller gives and iterated with ``.items()`` into the prompt is
reported at the iteration): the ``merged.items()`` line of ``brand.py``. M202 and M203 (docs/rules/M202.md, M203.md:
in Python the fix makes the iterated set ``sorted(...)``): the line that both makes and iterates the set,
``desk_dag.py``'s ``tools=`` line (tools precede system and messages) and ``policy.py``'s join line. M401
(docs/rules/M401.md: ``cache_salt`` built from a name such as ``request_id``): the ``"cache_salt"`` line. M402
(docs/rules/M402.md: an attribute containing ``salt`` in a logging call): the ``log.warning`` line. M701
(docs/rules/M701.md: ``enable_prefix_caching=False`` on vLLM's ``LLM(...)``): the keyword's line. M703
(docs/rules/M703.md: the prefix is entirely literal, 33 tokens, below the smallest Anthropic minimum of 512 whatever
the model's entry): the ``cache_control`` line. M704 (docs/rules/M704.md: literal blocks of the linted module counted
across tools, system and messages, the first beyond four reported): the fifth, on the question's text block; every
earlier breakpoint closes a prefix that holds the 1,259-token schema, so M703 has nothing to report. The per-request
texts (user lines, questions, ticket bodies, account activity, transcripts) open their message or follow a newline, so
no BPE merge (M104) joins them to shared text; the history lists are stored as sent, so a turn re-renders the previous
one unchanged.

Token counts: measured with ``tokenizers.Tokenizer.from_file(TOKENIZER).encode(text).ids`` (the pinned Qwen2.5
tokenizer) on the texts as the projects define them: the handbook as rendered by ``render_handbook`` 364; the runbook
1,143 and the three order tools 318 (``json.dumps``); the writing checklist 130 and the brand section with the
defaults alone 42; the travel-desk system prompt 129 and its three enabled tools 255; the policy brief 293 (preamble
53); the review rules 33; the schema description 1,259 and the shop assistant's rules 77. One script loaded the
tokenizer once and counted them all (run again after the runbook and the schema description were lengthened so both
clear 1,024 alone).

First run (06:01 UTC, main 57b338d — the merge of this file, unchanged; run once): all 10 hazards pass the
harness's exact check (the one expected finding at the expected line, nothing else); **one false alarm** among the
10 clean projects: the ``cmd.Cmd`` shell's clean twin gave M101 "not measured" at the line that stores the user's
message ``f"[{datetime.now():%H:%M}]\n{line}"`` in the history: the clock counted as preceding ``line`` (the
method's parameter, a name the word lists do not know), taken for shared text of unknown length.
Closed after the first run by the family "a value promptlint cannot evaluate in a user turn is the person's input"
(OpenAI history, Anthropic content blocks, Responses input, Gemini contents, LangChain ``("human", ...)``, a message
dict judged alone), tests/test_project_flow_user_turn.py; the twin now passes with its expectation as written."""

from __future__ import annotations

import pytest

from flow_harness import assert_clean, assert_hazard
from flow_harness import twin as _twin


# --- 1. M101: stdlib cmd.Cmd night-desk shell on xAI (OpenAI client), history grown per turn ----------

CMD_XAI = {
    "handbook.py": r'''
from typing import NamedTuple


class Section(NamedTuple):
    title: str
    body: str


SECTIONS = (
    Section(
        "Scope",
        "You are the night-desk assistant for Brightwater Books' warehouse in Leeds. You answer questions from "
        "shift leads about picking, packing, returns and the courier hand-over. You never promise delivery dates "
        "to customers and you never change stock levels yourself; you tell the shift lead which screen to use.",
    ),
    Section(
        "Picking",
        "Pick lists are released in waves at the top of every hour. A wave is picked in aisle order, heaviest "
        "items first, and a tote is closed when it reaches twelve kilograms or forty items. A missing item is "
        "reported with the short-pick button on the scanner, never by editing the pick list by hand.",
    ),
    Section(
        "Packing",
        "Hardbacks go in corrugated wraps, box sets in double-wall cartons, and anything signed by the author in "
        "a rigid mailer with a fragile label. Gift orders get the gift slip and no invoice. A parcel over the "
        "courier's size limit is split and both labels are printed from the packing screen.",
    ),
    Section(
        "Returns",
        "Returned books are inspected within one shift. Resaleable copies go back to their bin, damaged copies "
        "to the remainder cage, and anything water-damaged is photographed before it is binned. Refunds are "
        "issued by customer service in the morning, not by the night desk.",
    ),
    Section(
        "Courier hand-over",
        "The last collection leaves at 05:30. Cages are sealed in order of the courier's manifest, the seal "
        "numbers are written on the hand-over sheet, and the driver signs for the cage count, not for parcels. "
        "A late cage waits for the next collection; it is never driven over by staff.",
    ),
    Section(
        "Answering",
        "Answer in short numbered steps. Name the screen or the button the shift lead should use. When the "
        "handbook does not cover a question, say so and suggest paging the duty manager.",
    ),
)


def render_handbook(sections: tuple[Section, ...]) -> str:
    return "\n\n".join(f"## {section.title}\n{section.body}" for section in sections)
''',
    "prompting.py": r'''
from datetime import datetime

from handbook import SECTIONS, render_handbook


def system_text() -> str:
    return f"Shift clock: {datetime.now():%Y-%m-%d %H:%M:%S}\n\n" + render_handbook(SECTIONS)
''',
    "shell.py": r'''
import cmd
import os

from openai import OpenAI

from prompting import system_text


class NightDeskShell(cmd.Cmd):
    intro = "Night desk assistant. Type a question, or 'quit' to leave."

    def __init__(self) -> None:
        super().__init__()
        self.client = OpenAI(base_url="https://api.x.ai/v1", api_key=os.environ["XAI_API_KEY"])
        self.history: list[dict[str, str]] = []

    def default(self, line: str) -> None:
        self.history.append({"role": "user", "content": line})
        completion = self.client.chat.completions.create(
            model="grok-4",
            messages=[{"role": "system", "content": system_text()}, *self.history],
        )
        answer = completion.choices[0].message.content or ""
        self.history.append({"role": "assistant", "content": answer})
        print(answer)

    def do_quit(self, arg: str) -> bool:
        return True


if __name__ == "__main__":
    NightDeskShell().cmdloop()
''',
}
CMD_XAI_HAZARD = (CMD_XAI, "shell.py", ("M101", "prompting.py", "datetime.now():%Y-%m-%d %H:%M:%S"))
CMD_XAI_CLEAN = _twin(CMD_XAI, {
    "prompting.py": [(
        'return f"Shift clock: {datetime.now():%Y-%m-%d %H:%M:%S}\\n\\n" + render_handbook(SECTIONS)',
        "return render_handbook(SECTIONS)",
    )],
    "shell.py": [
        ("import cmd\n", "import cmd\nfrom datetime import datetime\n"),
        ('self.history.append({"role": "user", "content": line})',
         'self.history.append({"role": "user", "content": f"[{datetime.now():%H:%M}]\\n{line}"})'),
    ],
})


# --- 2. M106: aiokafka conversation worker on AsyncAnthropic; the clock hides in a tool description ----

KAFKA_ANTHROPIC = {
    "runbook.py": r'''
RUNBOOK = """You are the order-support agent for Brightwater Books, an online bookshop that ships from Leeds to
the United Kingdom and Ireland. Customers reach you through the web chat; every message you write is shown to
them as it is. Follow this runbook exactly. When it does not cover a case, say that a colleague will follow up
by email within one working day and stop.

1. Identity. Before you discuss an order, the customer must give the order number and the email address on the
order. Compare both with what lookup_order returns. If either differs, say you cannot find a matching order and
ask them to check the confirmation email. Never read out an address, a phone number or the last digits of a card.

2. Order states. An order is "received" until payment clears, "picking" while it is in the warehouse, "packed"
once it has a parcel label and "dispatched" when the courier has scanned it. Only "received" and "picking"
orders can still be changed. A "packed" order cannot be changed or cancelled; offer a return after delivery.

3. Changes and cancellations. A customer may remove items, change the delivery address within the same country
or cancel the whole order while it is "received" or "picking". You do not make these changes yourself: tell the
customer you have asked the warehouse, and summarise the request in one sentence at the end of your reply under
the heading "For the warehouse".

4. Delivery times. Standard delivery takes two to four working days in Great Britain, three to six in Northern
Ireland and Ireland. Express delivery is next working day when the order was dispatched before 17:00. Never
promise a date; quote the range and the courier's tracking page from track_parcel.

5. Late parcels. A parcel is late when it has not been delivered two working days after the end of its range.
For a late parcel, check track_parcel. If the last scan is older than three working days, open a lost-parcel
claim by telling the customer a replacement or refund will be offered within five working days. If the tracking
shows a failed delivery attempt, explain how to rearrange it on the courier's page.

6. Damaged or wrong items. Ask the customer for a photo of the item and the packaging. A damaged or wrong item
is replaced free of charge when the title is in stock, otherwise refunded in full including postage. Use
open_return with the reason "damaged" or "wrong item"; the customer does not need to send the book back unless
the return label says so.

7. Returns. Unwanted books can be returned within thirty days of delivery if they are unread and in their
original condition. Signed copies, personalised gifts and digital vouchers cannot be returned. Use open_return
with the reason "unwanted"; the customer pays for return postage and the refund is issued when the parcel
arrives back at the warehouse.

8. Refunds. Refunds go back to the original payment method and take three to five working days to appear. You
never issue a refund yourself and you never offer vouchers, discounts or goodwill payments. If a customer asks
for compensation, say you have passed the request to a supervisor.

9. Pre-orders. A pre-order is charged on the publication date and dispatched the same day. A customer may
cancel a pre-order at any time before it is charged. If a publisher moves the date, the order moves with it and
the customer is told by email; you may confirm the new date from lookup_order.

10. Tone. Write in plain British English, warm and brief. Use the customer's first name once. Do not apologise
more than once per reply. Do not use exclamation marks, emoji or marketing phrases. Keep replies under one
hundred and twenty words unless you are listing order lines.

11. Privacy and safety. Never ask for a full card number, a password or a date of birth. If a customer shares
one, tell them you have not stored it and ask them not to send it again. If a message contains threats, abuse
or a safeguarding concern, reply with the standard notice that the conversation has been passed to the team
lead, and stop.

12. Tools. Call lookup_order before you say anything about an order. Call track_parcel only for dispatched
orders. Call open_return only after the customer has confirmed the items and the reason. Never call a tool with
details the customer has not given you, and never guess an order number from a partial one.

13. Gift orders. A gift order ships without prices and with the gift message printed on a card. The buyer,
not the recipient, is the customer: only the buyer may change, cancel or return a gift order. If the recipient
writes in, thank them, explain that the buyer has to contact us, and do not confirm what was ordered.

14. Business accounts. Schools, libraries and companies order on invoice with thirty-day terms. Questions about
invoices, credit limits or purchase-order numbers go to the accounts team: say so, give no figures yourself and
do not look the order up on their behalf unless they also give the order number and the email on the order.

15. Ending. Close every reply with one line that says what happens next and who does it: the customer, the
warehouse, the courier or a supervisor. If nothing happens next, close with an offer to help with anything else.
"""
''',
    "tools.py": r'''
from datetime import datetime, timezone


def order_tools() -> list[dict]:
    return [
        {
            "name": "lookup_order",
            "description": (
                "Look up one order by its number and return its lines, payment state, delivery address country "
                f"and shipments. Results are current as of {datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC; "
                "orders placed in the last few minutes may not be found yet."
            ),
            "input_schema": {
                "type": "object",
                "properties": {
                    "order_number": {"type": "string", "description": "The order number, such as BW-104233."},
                    "email": {"type": "string", "description": "The email address the customer gave."},
                },
                "required": ["order_number", "email"],
            },
        },
        {
            "name": "track_parcel",
            "description": "Return the courier, the tracking page and the latest scans of a dispatched order.",
            "input_schema": {
                "type": "object",
                "properties": {"order_number": {"type": "string"}},
                "required": ["order_number"],
            },
        },
        {
            "name": "open_return",
            "description": "Open a return for some lines of an order and email the customer the return label.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "order_number": {"type": "string"},
                    "lines": {"type": "array", "items": {"type": "integer"}},
                    "reason": {"type": "string", "enum": ["damaged", "wrong item", "unwanted"]},
                },
                "required": ["order_number", "lines", "reason"],
            },
        },
    ]
''',
    "consumer.py": r'''
import asyncio
import json
from collections import defaultdict

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from anthropic import AsyncAnthropic

from runbook import RUNBOOK
from tools import order_tools


class ConversationWorker:
    def __init__(self) -> None:
        self.client = AsyncAnthropic()
        self.histories: defaultdict[str, list[dict]] = defaultdict(list)

    async def handle(self, conversation: str, text: str) -> str:
        history = self.histories[conversation]
        history.append({"role": "user", "content": text})
        response = await self.client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=1024,
            tools=order_tools(),
            system=[{"type": "text", "text": RUNBOOK, "cache_control": {"type": "ephemeral"}}],
            messages=history,
        )
        answer = "".join(block.text for block in response.content if block.type == "text")
        history.append({"role": "assistant", "content": answer})
        return answer


async def main() -> None:
    consumer = AIOKafkaConsumer("chat.inbound", bootstrap_servers="kafka:9092", group_id="order-support")
    producer = AIOKafkaProducer(bootstrap_servers="kafka:9092")
    worker = ConversationWorker()
    await consumer.start()
    await producer.start()
    try:
        async for record in consumer:
            event = json.loads(record.value)
            answer = await worker.handle(event["conversation"], event["text"])
            await producer.send_and_wait("chat.outbound", answer.encode(), key=record.key)
    finally:
        await consumer.stop()
        await producer.stop()


if __name__ == "__main__":
    asyncio.run(main())
''',
}
KAFKA_ANTHROPIC_HAZARD = (
    KAFKA_ANTHROPIC, "consumer.py", ("M106", "tools.py", "datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S"),
)
KAFKA_ANTHROPIC_CLEAN = _twin(KAFKA_ANTHROPIC, {"tools.py": [(
    'f"and shipments. Results are current as of {datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC; "',
    '"and shipments. Results lag the shop by at most five minutes; "',
)]})


# --- 3. M201: Prefect flow drafting account digests on Nebius (OpenAI client), {**defaults, **overrides} ---

PREFECT_NEBIUS = {
    "brand.py": r'''
BRAND_DEFAULTS = {
    "voice": "warm, plain and direct",
    "reading_level": "a twelve-year-old can follow every sentence",
    "emoji": "never",
    "sign_off": "The Larkspur Studio team",
}


def brand_section(overrides: dict[str, str]) -> str:
    merged = {**BRAND_DEFAULTS, **overrides}
    return "Brand settings:\n" + "".join(f"- {key}: {value}\n" for key, value in merged.items())
''',
    "digest_prompts.py": r'''
from brand import brand_section

WRITING_CHECKLIST = """Before you write, read every activity line once. Then write the weekly digest:
1. Open with one sentence that says what changed for the account this week.
2. Group the activity under at most three headings: bookings, payments and messages.
3. Under each heading, list the items in the order they happened, one short line each.
4. Mention an amount only with its currency, and a date only as a weekday and day of the month.
5. End with one line that says what the client needs to do next, or "Nothing to do this week."
Never invent activity, never mention other clients and never include internal notes."""


def system_prompt(overrides: dict[str, str]) -> str:
    return brand_section(overrides) + "\n" + WRITING_CHECKLIST
''',
    "flow.py": r'''
import os

from openai import OpenAI
from prefect import flow, task

from digest_prompts import system_prompt

client = OpenAI(base_url="https://api.studio.nebius.com/v1/", api_key=os.environ["NEBIUS_API_KEY"])


@task(retries=2, retry_delay_seconds=30)
def draft_digest(account: str, activity: list[str], overrides: dict[str, str]) -> str:
    completion = client.chat.completions.create(
        model="meta-llama/Llama-3.3-70B-Instruct",
        messages=[
            {"role": "system", "content": system_prompt(overrides)},
            {"role": "user", "content": f"Account:\n{account}\n\nActivity:\n" + "\n".join(activity)},
        ],
    )
    return completion.choices[0].message.content or ""


@flow(name="weekly-digests")
def weekly_digests(accounts: list[dict]) -> list[str]:
    return [draft_digest(a["name"], a["activity"], a.get("brand", {})) for a in accounts]
''',
}
PREFECT_NEBIUS_HAZARD = (PREFECT_NEBIUS, "flow.py", ("M201", "brand.py", "merged.items()"))
PREFECT_NEBIUS_CLEAN = _twin(PREFECT_NEBIUS, {"brand.py": [
    ("for key, value in merged.items())", "for key, value in sorted(merged.items()))"),
]})


# --- 4. M202: Airflow TaskFlow task on Anthropic, tools= iterates a dict-keys view & set ---------------

AIRFLOW_TOOLS = {
    "tool_specs.py": r'''
TOOL_SPECS = {
    "search_flights": {
        "name": "search_flights",
        "description": "Search scheduled flights between two airports on one date and return carriers, times "
                       "and fare families, cheapest first.",
        "input_schema": {
            "type": "object",
            "properties": {"origin": {"type": "string"}, "destination": {"type": "string"},
                           "outbound": {"type": "string", "format": "date"}},
            "required": ["origin", "destination", "outbound"],
        },
    },
    "hold_seat": {
        "name": "hold_seat",
        "description": "Hold a seat on one flight for a booking for up to twenty minutes without charging the "
                       "traveller; the hold lapses on its own.",
        "input_schema": {
            "type": "object",
            "properties": {"booking": {"type": "string"}, "flight": {"type": "string"}},
            "required": ["booking", "flight"],
        },
    },
    "price_fare": {
        "name": "price_fare",
        "description": "Price a change of flight for a booking, including the fare difference, the change fee "
                       "and any taxes that are refunded.",
        "input_schema": {
            "type": "object",
            "properties": {"booking": {"type": "string"}, "flight": {"type": "string"}},
            "required": ["booking", "flight"],
        },
    },
    "cancel_hold": {
        "name": "cancel_hold",
        "description": "Release a seat hold before it lapses, so the seat returns to sale straight away.",
        "input_schema": {
            "type": "object",
            "properties": {"hold": {"type": "string"}},
            "required": ["hold"],
        },
    },
}

# Names the desk may use; a name the registry does not know (yet) is dropped by the intersection.
ENABLED_TOOLS = ("search_flights", "hold_seat", "price_fare", "rebook_traveller")
''',
    "desk_prompts.py": r'''
DESK_SYSTEM = (
    "You draft replies for the travel desk of Northwind Travel, a corporate travel agency. The ticket you get "
    "is an email from a traveller or their assistant. Work out what they need, use the tools to check flights "
    "and prices, and draft a reply the agent can send after a quick read. Quote prices with their currency and "
    "say which fare family they belong to. Never confirm a booking or a change yourself: holds are fine, "
    "purchases are made by the agent. If the traveller's company policy is unclear, ask the agent rather than "
    "the traveller. Keep the draft under one hundred and fifty words and sign it as the Northwind travel desk."
)
''',
    "tickets.py": r'''
import json
from pathlib import Path

INBOX = Path("/srv/northwind/inbox.jsonl")


def fetch_pending() -> list[dict]:
    with INBOX.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
''',
    "desk_dag.py": r'''
from datetime import datetime

from airflow.decorators import dag, task
from anthropic import Anthropic

from desk_prompts import DESK_SYSTEM
from tickets import fetch_pending
from tool_specs import ENABLED_TOOLS, TOOL_SPECS

client = Anthropic()


@task
def pending_tickets() -> list[dict]:
    return fetch_pending()


@task(retries=1)
def draft_reply(ticket: dict) -> str:
    response = client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=900,
        tools=[TOOL_SPECS[name] for name in TOOL_SPECS.keys() & set(ENABLED_TOOLS)],
        system=DESK_SYSTEM,
        messages=[{"role": "user", "content": ticket["body"]}],
    )
    return "".join(block.text for block in response.content if block.type == "text")


@dag(schedule="@hourly", start_date=datetime(2026, 1, 1), catchup=False, tags=["travel-desk"])
def travel_desk_drafts():
    draft_reply.expand(ticket=pending_tickets())


travel_desk_drafts()
''',
}
AIRFLOW_TOOLS_HAZARD = (AIRFLOW_TOOLS, "desk_dag.py", ("M202", "desk_dag.py", "TOOL_SPECS.keys() & set("))
AIRFLOW_TOOLS_CLEAN = _twin(AIRFLOW_TOOLS, {"desk_dag.py": [(
    "for name in TOOL_SPECS.keys() & set(ENABLED_TOOLS)]",
    "for name in sorted(TOOL_SPECS.keys() & set(ENABLED_TOOLS))]",
)]})


# --- 5. M203: Temporal activity on DeepInfra (OpenAI client), clauses from a dict-keys view minus a set --

TEMPORAL_CLAUSES = {
    "clauses.py": r'''
CLAUSES = {
    "baggage": (
        "Checked bags are covered up to 1,500 pounds per traveller for loss, theft or damage while in the "
        "carrier's care. Claims need the carrier's property irregularity report and receipts for items over 150 "
        "pounds. Cash, jewellery and electronics in checked bags are not covered."
    ),
    "delays": (
        "A delay of more than six hours at the original departure point pays 50 pounds for each full six hours, "
        "up to 400 pounds. The delay must be confirmed in writing by the carrier. Delays caused by a strike that "
        "was announced before the policy was bought are not covered."
    ),
    "cancellation": (
        "Trip costs that cannot be refunded are covered when the traveller cancels because of their own serious "
        "illness or injury, the death of a close relative, or a summons for jury service. A doctor's certificate "
        "or the official letter is required, dated before the cancellation."
    ),
    "medical": (
        "Emergency medical treatment abroad is covered up to 10 million pounds, including repatriation when the "
        "assistance line agrees it is medically necessary. Treatment that could wait until the traveller returns "
        "home, and conditions that were not declared when the policy was bought, are not covered."
    ),
    "pets": (
        "Kennel or cattery fees are covered up to 25 pounds a day when the traveller's return is delayed by a "
        "covered event, for at most fifteen days."
    ),
    "minors": (
        "Children under eighteen are covered only when they travel with an adult named on the same policy, "
        "except on school trips organised by a registered school."
    ),
}
''',
    "policy.py": r'''
from clauses import CLAUSES

PREAMBLE = (
    "You answer questions from policyholders of Harbour Mutual travel insurance. Answer only from the policy "
    "clauses below, name the clause you rely on in square brackets, and say plainly when no clause covers the "
    "question. Never say a claim will be paid: the claims team decides."
)


def policy_brief() -> str:
    body = "\n\n".join(f"[{key}] {CLAUSES[key]}" for key in CLAUSES.keys() - {"pets", "minors"})
    return f"{PREAMBLE}\n\n{body}"
''',
    "activities.py": r'''
import os
from datetime import timedelta

from openai import AsyncOpenAI
from temporalio import activity, workflow

from policy import policy_brief

client = AsyncOpenAI(base_url="https://api.deepinfra.com/v1/openai", api_key=os.environ["DEEPINFRA_TOKEN"])


@activity.defn
async def answer_policy_question(question: str) -> str:
    completion = await client.chat.completions.create(
        model="Qwen/Qwen2.5-72B-Instruct",
        messages=[
            {"role": "system", "content": policy_brief()},
            {"role": "user", "content": question},
        ],
    )
    return completion.choices[0].message.content or ""


@workflow.defn
class PolicyQuestionWorkflow:
    @workflow.run
    async def run(self, question: str) -> str:
        return await workflow.execute_activity(
            answer_policy_question, question, start_to_close_timeout=timedelta(seconds=90)
        )
''',
}
TEMPORAL_CLAUSES_HAZARD = (
    TEMPORAL_CLAUSES, "activities.py", ("M203", "policy.py", 'CLAUSES.keys() - {"pets", "minors"}'),
)
TEMPORAL_CLAUSES_CLEAN = _twin(TEMPORAL_CLAUSES, {"policy.py": [(
    'for key in CLAUSES.keys() - {"pets", "minors"})',
    'for key in sorted(CLAUSES.keys() - {"pets", "minors"}))',
)]})


# --- 6. M401: raw ASGI app with a contextvars request id, salting vLLM's cache per request ---------------

ASGI_CONTEXTVAR_SALT = {
    "context.py": r'''
import uuid
from contextvars import ContextVar

REQUEST_ID: ContextVar[str] = ContextVar("request_id", default="-")


class RequestIdMiddleware:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        token = REQUEST_ID.set(uuid.uuid4().hex)
        try:
            await self.app(scope, receive, send)
        finally:
            REQUEST_ID.reset(token)
''',
    "tenancy.py": r'''
import hashlib
import hmac
import os
from functools import lru_cache

SALT_KEY = os.environ.get("CACHE_SALT_KEY", "").encode()


@lru_cache(maxsize=1024)
def tenant_salt(tenant: str) -> str:
    return hmac.new(SALT_KEY, tenant.encode(), hashlib.sha256).hexdigest()
''',
    "prompts.py": r'''
ASSISTANT_SYSTEM = (
    "You are the in-app assistant of Tallyho, a bookkeeping tool for small shops. Answer questions about "
    "invoices, VAT returns and bank reconciliation in short steps, and name the screen where each step happens. "
    "Do not give tax advice; point to an accountant when the question needs judgement."
)
''',
    "gateway.py": r'''
import json

from openai import AsyncOpenAI

from context import REQUEST_ID, RequestIdMiddleware
from prompts import ASSISTANT_SYSTEM

client = AsyncOpenAI(base_url="http://vllm.internal:8000/v1", api_key="not-used")


async def complete(tenant: str, question: str) -> str:
    request_id = REQUEST_ID.get()
    completion = await client.chat.completions.create(
        model="Qwen/Qwen2.5-14B-Instruct",
        messages=[
            {"role": "system", "content": ASSISTANT_SYSTEM},
            {"role": "user", "content": question},
        ],
        extra_headers={"X-Request-Id": request_id},
        extra_body={"cache_salt": f"{tenant}:{request_id}"},
    )
    return completion.choices[0].message.content or ""


async def read_body(receive) -> bytes:
    parts = []
    while True:
        event = await receive()
        parts.append(event.get("body", b""))
        if not event.get("more_body"):
            return b"".join(parts)


async def endpoint(scope, receive, send) -> None:
    payload = json.loads(await read_body(receive))
    headers = dict(scope["headers"])
    tenant = headers.get(b"x-tenant", b"public").decode()
    answer = await complete(tenant, payload["question"])
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps({"answer": answer}).encode()})


app = RequestIdMiddleware(endpoint)
''',
}
ASGI_CONTEXTVAR_SALT_HAZARD = (
    ASGI_CONTEXTVAR_SALT, "gateway.py", ("M401", "gateway.py", '"cache_salt": f"{tenant}:{request_id}"'),
)
ASGI_CONTEXTVAR_SALT_CLEAN = _twin(ASGI_CONTEXTVAR_SALT, {"gateway.py": [
    ("from prompts import ASSISTANT_SYSTEM\n",
     "from prompts import ASSISTANT_SYSTEM\nfrom tenancy import tenant_salt\n"),
    ('extra_body={"cache_salt": f"{tenant}:{request_id}"},', 'extra_body={"cache_salt": tenant_salt(tenant)},'),
]})


# --- 7. M402: APScheduler prefix-cache warmer on vLLM whose failure log names the tenant's salt ----------

APSCHEDULER_WARMER = {
    "tenants.py": r'''
import tomllib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TenantRoute:
    tenant: str
    cache_salt: str


def load_routes(path: str) -> list[TenantRoute]:
    with open(path, "rb") as handle:
        table = tomllib.load(handle)
    return [TenantRoute(tenant=name, cache_salt=entry["salt"]) for name, entry in sorted(table["tenants"].items())]
''',
    "warm_prompts.py": r'''
SUPPORT_SYSTEM = (
    "You are the support assistant of Fernhill Energy. You help customers read their bills, submit meter "
    "readings and understand their tariff. Answer in plain English, in at most five short sentences, and never "
    "quote a price that is not on the customer's own bill."
)
''',
    "warmer.py": r'''
import logging

from apscheduler.schedulers.blocking import BlockingScheduler
from openai import APIStatusError, OpenAI

from tenants import TenantRoute, load_routes
from warm_prompts import SUPPORT_SYSTEM

log = logging.getLogger("prefix-warmer")
client = OpenAI(base_url="http://vllm.internal:8000/v1", api_key="not-used")


def warm(route: TenantRoute) -> None:
    try:
        client.chat.completions.create(
            model="meta-llama/Llama-3.1-8B-Instruct",
            max_tokens=1,
            messages=[
                {"role": "system", "content": SUPPORT_SYSTEM},
                {"role": "user", "content": "Hello"},
            ],
            extra_body={"cache_salt": route.cache_salt},
        )
    except APIStatusError as exc:
        log.warning("warm-up failed tenant=%s salt=%s status=%s", route.tenant, route.cache_salt, exc.status_code)


def warm_all() -> None:
    for route in load_routes("/etc/fernhill/tenants.toml"):
        warm(route)


scheduler = BlockingScheduler()
scheduler.add_job(warm_all, "interval", minutes=4, id="prefix-warmer")

if __name__ == "__main__":
    scheduler.start()
''',
}
APSCHEDULER_WARMER_HAZARD = (APSCHEDULER_WARMER, "warmer.py", ("M402", "warmer.py", "salt=%s status=%s"))
APSCHEDULER_WARMER_CLEAN = _twin(APSCHEDULER_WARMER, {"warmer.py": [(
    'log.warning("warm-up failed tenant=%s salt=%s status=%s", route.tenant, route.cache_salt, exc.status_code)',
    'log.warning("warm-up failed tenant=%s status=%s", route.tenant, exc.status_code)',
)]})


# --- 8. M701: Modal class loading vLLM offline in its @modal.enter() hook with prefix caching off -------

MODAL_VLLM = {
    "summary_prompts.py": r'''
INSTRUCTIONS = (
    "Summarise the support call transcript below for the customer's file. Write three bullet points: what the "
    "customer wanted, what the agent did, and what is still open. Use the customer's own words for the problem."
)


def summary_prompt(transcript: str) -> str:
    return f"{INSTRUCTIONS}\n\nTranscript:\n{transcript}\n\nSummary:\n"
''',
    "serve.py": r'''
import modal
from vllm import LLM, SamplingParams

from summary_prompts import summary_prompt

app = modal.App("call-summaries")
image = modal.Image.debian_slim(python_version="3.12").pip_install("vllm==0.11.0")


@app.cls(gpu="L40S", image=image, scaledown_window=300)
class Summarizer:
    @modal.enter()
    def load(self) -> None:
        self.llm = LLM(
            model="Qwen/Qwen2.5-7B-Instruct",
            max_model_len=16384,
            enable_prefix_caching=False,
            gpu_memory_utilization=0.90,
        )
        self.params = SamplingParams(temperature=0.2, max_tokens=300)

    @modal.method()
    def summarize(self, transcripts: list[str]) -> list[str]:
        outputs = self.llm.generate([summary_prompt(t) for t in transcripts], self.params)
        return [output.outputs[0].text for output in outputs]
''',
}
MODAL_VLLM_HAZARD = (MODAL_VLLM, "serve.py", ("M701", "serve.py", "enable_prefix_caching=False"))
MODAL_VLLM_CLEAN = _twin(MODAL_VLLM, {"serve.py": [
    ("enable_prefix_caching=False,", "enable_prefix_caching=True,"),
]})


# --- 9. M703: Textual migration reviewer on Anthropic, a short literal rule text cached, turns grown -----

TEXTUAL_REVIEW = {
    "transcript.py": r'''
def reply_text(blocks) -> str:
    return "".join(block.text for block in blocks if block.type == "text")
''',
    "review_app.py": r'''
from anthropic import Anthropic
from textual.app import App, ComposeResult
from textual.widgets import Input, RichLog

from transcript import reply_text

REVIEW_RULES = (
    "You review Postgres schema migrations before they run in production. "
    "Flag statements that take long locks, new foreign keys without an index, and drops that cannot be undone."
)


class MigrationReviewApp(App):
    TITLE = "Migration review"

    def __init__(self) -> None:
        super().__init__()
        self.client = Anthropic()
        self.turns: list[dict] = []

    def compose(self) -> ComposeResult:
        yield RichLog(id="log", wrap=True)
        yield Input(placeholder="Paste a migration or ask a follow-up question")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.turns.append({"role": "user", "content": event.value})
        message = self.client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=800,
            system=[
                {
                    "type": "text",
                    "text": REVIEW_RULES,
                    "cache_control": {"type": "ephemeral"},
                },
            ],
            messages=self.turns,
        )
        answer = reply_text(message.content)
        self.turns.append({"role": "assistant", "content": answer})
        log = self.query_one("#log", RichLog)
        log.write(f"> {event.value}")
        log.write(answer)
        event.input.value = ""


if __name__ == "__main__":
    MigrationReviewApp().run()
''',
}
TEXTUAL_REVIEW_HAZARD = (
    TEXTUAL_REVIEW, "review_app.py", ("M703", "review_app.py", '"cache_control": {"type": "ephemeral"}'),
)
TEXTUAL_REVIEW_CLEAN = _twin(TEXTUAL_REVIEW, {"review_app.py": [(
    '            system=[\n'
    '                {\n'
    '                    "type": "text",\n'
    '                    "text": REVIEW_RULES,\n'
    '                    "cache_control": {"type": "ephemeral"},\n'
    '                },\n'
    '            ],\n',
    '            system=REVIEW_RULES,\n',
)]})


# --- 10. M704: NiceGUI shop assistant on AsyncAnthropic, a breakpoint on every tool (five in all) --------

NICEGUI_SHOP = {
    "schema_doc.py": r'''
SCHEMA_DOC = """Run one read-only SQL query against the Kestrel Outdoor shop database (PostgreSQL 16) and return
at most two hundred rows as JSON. Only SELECT statements are allowed; the connection is read-only and queries
are cancelled after ten seconds. Always filter by a date range or a key, and always add LIMIT.

The tables are:

customers(id bigint primary key, email text unique not null, display_name text, tier text not null default
'standard', marketing_opt_in boolean not null default false, joined_on date not null). One row per registered
customer. tier is one of standard, trail or summit; summit customers get free returns and early sale access.

addresses(id bigint primary key, customer_id bigint references customers(id), label text, line1 text, line2
text, town text, postcode text, country_code char(2) not null, is_default boolean not null default false).
Several addresses per customer; exactly one is the default for delivery.

products(sku text primary key, title text not null, brand text not null, category text not null, colour text,
size text, weight_grams integer, price_pence integer not null, vat_rate numeric(4,2) not null, discontinued
boolean not null default false). category is one of tents, packs, sleeping, footwear, clothing, cooking or
navigation. Prices are in pence and include VAT.

stock(sku text references products(sku), warehouse text not null, on_hand integer not null, reserved integer
not null, next_delivery date, primary key (sku, warehouse)). warehouse is one of KND (Kendal) or AVM
(Aviemore). Available stock is on_hand minus reserved; never report reserved units as available.

orders(id bigint primary key, customer_id bigint references customers(id), placed_on date not null, status
text not null, channel text not null, delivery_address_id bigint references addresses(id), total_pence integer
not null, discount_code text). status is one of placed, paid, picking, shipped, delivered, cancelled or
returned. channel is web, app or store.

order_lines(order_id bigint references orders(id), line_no integer, sku text references products(sku),
quantity integer not null, unit_price_pence integer not null, primary key (order_id, line_no)).

shipments(id bigint primary key, order_id bigint references orders(id), carrier text not null, tracking_ref
text, shipped_on date, delivered_on date). An order may ship in several parcels; each parcel is one row.

returns(id bigint primary key, order_id bigint references orders(id), line_no integer, reason text not null,
opened_on date not null, received_on date, refund_pence integer). reason is one of size, damaged, wrong_item,
changed_mind or late.

coupons(code text primary key, percent_off integer not null, valid_from date not null, valid_to date not null,
min_basket_pence integer not null default 0, single_use boolean not null default true, issued_to bigint
references customers(id)). A coupon issued_to a customer can only be used by that customer.

reviews(id bigint primary key, sku text references products(sku), customer_id bigint references customers(id),
stars smallint not null, title text, body text, published boolean not null default false, written_on date not
null). Only published reviews may be quoted to customers.

gift_cards(code text primary key, balance_pence integer not null, issued_on date not null, expires_on date not
null, issued_to bigint references customers(id), frozen boolean not null default false). A frozen gift card
cannot be spent; only head office can unfreeze it, so tell staff to phone head office.

loyalty_ledger(id bigint primary key, customer_id bigint references customers(id), points integer not null,
reason text not null, order_id bigint references orders(id), booked_on date not null). points is positive when
earned and negative when spent or expired; a customer's balance is the sum of points over all their rows.

stores(code text primary key, name text not null, town text not null, opens time not null, closes time not null,
click_and_collect boolean not null default true). Store codes are the same as warehouse codes for the two stores
that share a building with a warehouse.

collections(order_id bigint references orders(id), store_code text references stores(code), ready_on date,
collected_on date, primary key (order_id)). An order waiting for collection is kept for fourteen days after
ready_on and then returned to stock.

price_history(sku text references products(sku), price_pence integer not null, valid_from date not null,
valid_to date, primary key (sku, valid_from)). Use it when a customer asks what they paid or whether a price
drop after purchase applies: the price promise covers drops within fourteen days of the order.

staff_notes(id bigint primary key, customer_id bigint references customers(id), written_by text not null,
note text not null, written_on date not null, visible_to_customer boolean not null default false). Notes with
visible_to_customer false are internal: use them to understand a case, never read them out or quote them.

suppliers(id bigint primary key, name text not null, lead_time_days integer not null, country_code char(2) not
null) and purchase_orders(id bigint primary key, supplier_id bigint references suppliers(id), sku text references
products(sku), quantity integer not null, expected_on date). When stock is empty, next_delivery in stock is the
earliest expected_on of the open purchase orders for that SKU; quote it as an estimate, never as a promise.

Joins that are often needed: orders to customers on customer_id; order_lines to products on sku; shipments and
returns to orders on order_id; stock to products on sku. Money is always in pence: divide by one hundred and
show pounds with two decimals. Never select email, line1, line2 or postcode unless the question is about the
customer's own delivery and the customer has been identified; never return rows about other customers."""
''',
    "shop_prompts.py": r'''
ASSISTANT_RULES = (
    "You are the shop-floor assistant of Kestrel Outdoor. Staff ask you about stock, orders, returns and "
    "coupons while a customer is at the till or on the phone. Use run_sql for facts, lookup_sku for a product's "
    "details and draft_coupon only when a manager has approved a goodwill gesture. Answer in two or three "
    "sentences and give figures exactly as the tools return them."
)
''',
    "shop_chat.py": r'''
from anthropic import AsyncAnthropic
from nicegui import ui

from schema_doc import SCHEMA_DOC
from shop_prompts import ASSISTANT_RULES

client = AsyncAnthropic()
conversation: list[dict] = []

TOOLS = [
    {
        "name": "run_sql",
        "description": SCHEMA_DOC,
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        "cache_control": {"type": "ephemeral"},
    },
    {
        "name": "lookup_sku",
        "description": "Return the title, brand, sizes, colours and price of one product by its SKU.",
        "input_schema": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
        "cache_control": {"type": "ephemeral"},
    },
    {
        "name": "draft_coupon",
        "description": "Draft a single-use coupon for one customer; a manager must approve it before it is sent.",
        "input_schema": {
            "type": "object",
            "properties": {"customer_id": {"type": "integer"}, "percent_off": {"type": "integer"}},
            "required": ["customer_id", "percent_off"],
        },
        "cache_control": {"type": "ephemeral"},
    },
]


async def ask(question: str) -> str:
    response = await client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=700,
        tools=TOOLS,
        system=[{"type": "text", "text": ASSISTANT_RULES, "cache_control": {"type": "ephemeral"}}],
        messages=[
            *conversation,
            {"role": "user", "content": [{"type": "text", "text": question, "cache_control": {"type": "ephemeral"}}]},
        ],
    )
    answer = "".join(block.text for block in response.content if block.type == "text")
    conversation.extend([
        {"role": "user", "content": [{"type": "text", "text": question}]},
        {"role": "assistant", "content": answer},
    ])
    return answer


@ui.page("/")
def index() -> None:
    transcript = ui.column()
    box = ui.input("Ask the shop assistant")

    async def send() -> None:
        question = box.value
        box.value = ""
        answer = await ask(question)
        with transcript:
            ui.markdown(f"**You:** {question}")
            ui.markdown(answer)

    box.on("keydown.enter", send)


ui.run(title="Kestrel shop assistant")
''',
}
NICEGUI_SHOP_HAZARD = (NICEGUI_SHOP, "shop_chat.py", ("M704", "shop_chat.py", '"text": question, "cache_control"'))
NICEGUI_SHOP_CLEAN = _twin(NICEGUI_SHOP, {"shop_chat.py": [
    ('"required": ["query"]},\n        "cache_control": {"type": "ephemeral"},\n', '"required": ["query"]},\n'),
    ('"required": ["sku"]},\n        "cache_control": {"type": "ephemeral"},\n', '"required": ["sku"]},\n'),
]})


HAZARDS = {
    "m101_cmd_shell_xai_namedtuple_handbook": CMD_XAI_HAZARD,
    "m106_aiokafka_anthropic_tool_description_clock": KAFKA_ANTHROPIC_HAZARD,
    "m201_prefect_nebius_merged_brand_items": PREFECT_NEBIUS_HAZARD,
    "m202_airflow_anthropic_keys_view_and_set": AIRFLOW_TOOLS_HAZARD,
    "m203_temporal_deepinfra_keys_view_minus_set": TEMPORAL_CLAUSES_HAZARD,
    "m401_asgi_contextvar_request_salt": ASGI_CONTEXTVAR_SALT_HAZARD,
    "m402_apscheduler_warmer_log_salt": APSCHEDULER_WARMER_HAZARD,
    "m701_modal_vllm_enter_hook": MODAL_VLLM_HAZARD,
    "m703_textual_haiku_short_rules": TEXTUAL_REVIEW_HAZARD,
    "m704_nicegui_breakpoint_per_tool": NICEGUI_SHOP_HAZARD,
}

CLEAN = {
    "m101_cmd_shell_xai_namedtuple_handbook": CMD_XAI_CLEAN,
    "m106_aiokafka_anthropic_tool_description_clock": KAFKA_ANTHROPIC_CLEAN,
    "m201_prefect_nebius_merged_brand_items": PREFECT_NEBIUS_CLEAN,
    "m202_airflow_anthropic_keys_view_and_set": AIRFLOW_TOOLS_CLEAN,
    "m203_temporal_deepinfra_keys_view_minus_set": TEMPORAL_CLAUSES_CLEAN,
    "m401_asgi_contextvar_request_salt": ASGI_CONTEXTVAR_SALT_CLEAN,
    "m402_apscheduler_warmer_log_salt": APSCHEDULER_WARMER_CLEAN,
    "m701_modal_vllm_enter_hook": MODAL_VLLM_CLEAN,
    "m703_textual_haiku_short_rules": TEXTUAL_REVIEW_CLEAN,
    "m704_nicegui_breakpoint_per_tool": NICEGUI_SHOP_CLEAN,
}


@pytest.mark.parametrize("name", sorted(HAZARDS))
def test_unseen10_hazard(tmp_path, name):
    assert_hazard(tmp_path, HAZARDS[name])


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_unseen10_clean(tmp_path, name):
    assert_clean(tmp_path, CLEAN[name])
