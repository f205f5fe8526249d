"""A sixth unseen set of agent-style Python projects, written blind: its author read docs/rules/*.md,
rules/*.toml, the opening of docs/python.md (up to its list of prompt sinks), tests/flow_harness.py and the
other sets' docstrings only (not the analyzer's source, not another set's cases, not a run of it), in styles
no earlier unseen set uses: a Django view sending an ``instructor``-patched OpenAI client a triage prompt
whose system message opens with ``django.utils.timezone.now()``, a builder-pattern ``InstructionBuilder``
(chained methods appending sections to a list) whose clock section comes first in an OpenAI Responses
``instructions=`` string, a template-method agent hierarchy (an abstract ``BaseAgent`` sends the Anthropic
request, a subclass overrides ``preamble()`` with the shift clock) ahead of a cached long runbook, a Google
``genai`` ``GenerateContentConfig(system_instruction=...)`` holding playbooks read from ``Path.iterdir()``,
a Mistral ``chat.complete`` bot whose frozen-dataclass persona de-duplicates its tools with a set display
``{*BASE_TOOLS, *self.extra_tools}``, a Cohere ``ClientV2.chat`` writer whose brand-voice settings (a merged
dict) are listed with ``.items()``, an async-generator vLLM gateway whose request-context dataclass salts
the cache with a ``request_id`` made by ``default_factory``, a Dramatiq actor running vLLM offline with
``SamplingParams`` from a helper that asks for ``prompt_logprobs``, a multi-turn Anthropic support session
with five breakpoints (three system blocks, a few-shot answer, the new question), and a vLLM client whose
rate-limit retry path logs the tenant's cache salt.

Each hazard's expected rule, file and line (the needle on it: the line where the hazard is made — the
volatile value, the iteration of the unordered collection, the ``.items()`` serialisation, the
``"cache_salt"`` key, the ``prompt_logprobs`` keyword, the fifth breakpoint, the logging call) were written
down before the set was first run; the commit that adds this file holds them as written. Each clean project
looks like its hazard twin but is cache-safe by the rules' own terms: the triage clock and the builder's
clock move into the last user message; the on-call agent's clock moves from the cached system block into
the task message after the last breakpoint; the playbooks are read from ``sorted(root.iterdir())``; the
persona's tool names are ``sorted({...})``; the brand voice is listed from ``sorted(settings.items())``;
the gateway salts the cache with a per-tenant HMAC; the Dramatiq helper sets ``prompt_logprobs=None`` and
keeps output logprobs; the support session carries four breakpoints (no breakpoint on the few-shot answer);
the retry path logs the tenant id, not the salt.

First run (17:49 UTC, main at e500e19 — after the sixth round's flow families (branch s29f), the set merged
unchanged and run once): 6 of 10 hazards found at the expected line; no false alarm on the 10 clean projects.
Missed (each gave no finding at all):
- "django-instructor-triage-clock-first" (M101): ``django.utils.timezone.now()`` formatted first into a system
  message returned by a helper module, sent through an ``instructor.from_openai(OpenAI())`` client.
- "dramatiq-vllm-offline-prompt-logprobs" (M702): ``SamplingParams(prompt_logprobs=1)`` built in another
  module and passed to vLLM's offline ``LLM(...).chat(messages, sampling_params=...)``.
- "cohere-brand-voice-merged-dict-items" (M201): a merged ``{**DEFAULT, **overrides}`` dict on an instance
  attribute iterated with ``.items()`` into the system text of a Cohere ``ClientV2().chat`` call.
- "async-generator-vllm-gateway-request-id-salt" (M401): a ``cache_salt`` formatted from a dataclass field whose
  ``default_factory`` makes a uuid, returned by a method and sent as ``extra_body=ctx.extra_body()``.
The expectations are kept as written; the set stays red on these four until each is closed as a family.
"""

from __future__ import annotations

import pytest
from flow_harness import assert_clean, assert_hazard


def _text_module(doc: str, var: str, lines: list[str]) -> str:
    """A prompt module holding one long literal text (a runbook, a handbook) as implicit concatenation."""
    body = "".join(f'    "{line}\\n"\n' for line in lines)
    return f'"""{doc}"""\n\n{var} = (\n{body})\n'


_SERVICES = [
    "checkout-api", "payments-worker", "search-indexer", "auth-gateway", "inventory-sync", "email-dispatcher",
    "image-resizer", "billing-cron", "ledger-db", "session-cache", "feature-flags", "webhook-relay",
    "report-builder", "geo-lookup", "notifications-push", "audit-stream", "pricing-engine", "cdn-edge",
]
_RUNBOOK_STEPS = [
    "{s}: when it pages, open its Grafana board first, confirm the alert is not a known flap listed in the flap "
    "register, and link the dashboard in the incident ticket before you change anything.",
    "{s}: if the error rate stays above two percent for ten minutes, roll back the last deploy with the standard "
    "pipeline, never by hand, and write the rollback reason in the deploy log.",
    "{s}: escalate to the owning team's secondary on-call after fifteen minutes without progress, and page the "
    "incident commander as soon as customers report failures in the status channel.",
    "{s}: after recovery, keep the incident open for thirty minutes, attach the timeline, and file a follow-up "
    "ticket for every manual step you had to take.",
]
RUNBOOK_LINES = [step.format(s=s) for s in _SERVICES for step in _RUNBOOK_STEPS]

_PRODUCTS = [
    "Trailhead 2 tent", "Summit down jacket", "Ridge trekking poles", "Canyon daypack", "Glacier sleeping bag",
    "Harbor rain shell", "Pine camp stove", "Meadow hammock", "Basecamp lantern", "Alpine gaiters",
    "Riverside water filter", "Boulder climbing shoes", "Dune sun hoodie", "Tundra insulated bottle",
    "Cascade dry bag", "Prairie camp chair",
]
_HANDBOOK_RULES = [
    "{p}: returns are accepted within 60 days when the item is unused; used items are refunded as store credit "
    "when they can be resold, and the customer pays return shipping unless the item is faulty.",
    "{p}: warranty claims need the order number and a photo of the fault; approve repairs first, replacements "
    "only when the repair centre says the item cannot be repaired within three weeks.",
    "{p}: never quote stock levels or restock dates; say the product page shows availability and offer to "
    "notify the customer by email when it is back.",
]
HANDBOOK_LINES = [rule.format(p=p) for p in _PRODUCTS for rule in _HANDBOOK_RULES]


# ---------------------------------------------------------------------------------------------------------
# 1. Django view + instructor: the triage system message opens with django.utils.timezone.now() (M101).

DJANGO_TRIAGE_HAZARD = {
    "support/__init__.py": "",
    "support/schemas.py": r'''
        from typing import Literal

        from pydantic import BaseModel, Field


        class Triage(BaseModel):
            queue: Literal["billing", "access", "bug", "feature_request", "other"]
            priority: Literal["urgent", "high", "normal"]
            summary: str = Field(description="One sentence, in the customer's own terms.")
            product_areas: list[str] = Field(default_factory=list)
            language: str = "en"
    ''',
    "support/prompts.py": r'''
        """Prompts of the ticket triage endpoint."""

        from django.utils import timezone

        TRIAGE_RULES = """You triage inbound support tickets for Fernway, a project-management SaaS.
        Classify each ticket into exactly one queue: billing, access, bug, feature_request or other.
        Set priority to urgent only when the customer cannot work at all or data may be lost, to high when a
        paid feature is broken for a whole team, and to normal otherwise. Never promise a fix date.
        Summarise the ticket in one sentence in the customer's own terms, and list every product area the
        ticket mentions (boards, timeline, automations, integrations, billing, admin console).
        If the ticket is written in a language other than English, set the language field to its ISO code
        and still write the summary in English."""


        def triage_messages(subject: str, body: str) -> list[dict]:
            system = f"Current time: {timezone.now():%Y-%m-%d %H:%M} UTC\n\n{TRIAGE_RULES}"
            return [
                {"role": "system", "content": system},
                {"role": "user", "content": f"{subject}\n\n{body}"},
            ]
    ''',
    "support/views.py": r'''
        import instructor
        from django.http import JsonResponse
        from django.views.decorators.http import require_POST
        from openai import OpenAI

        from .prompts import triage_messages
        from .schemas import Triage

        client = instructor.from_openai(OpenAI())


        @require_POST
        def triage_ticket(request):
            subject = request.POST["subject"]
            body = request.POST["body"]
            triage = client.chat.completions.create(
                model="gpt-4o-mini",
                response_model=Triage,
                max_retries=2,
                messages=triage_messages(subject, body),
            )
            return JsonResponse(triage.model_dump())
    ''',
}

DJANGO_TRIAGE_CLEAN = {
    **DJANGO_TRIAGE_HAZARD,
    "support/prompts.py": r'''
        """Prompts of the ticket triage endpoint."""

        from django.utils import timezone

        TRIAGE_RULES = """You triage inbound support tickets for Fernway, a project-management SaaS.
        Classify each ticket into exactly one queue: billing, access, bug, feature_request or other.
        Set priority to urgent only when the customer cannot work at all or data may be lost, to high when a
        paid feature is broken for a whole team, and to normal otherwise. Never promise a fix date.
        Summarise the ticket in one sentence in the customer's own terms, and list every product area the
        ticket mentions (boards, timeline, automations, integrations, billing, admin console).
        If the ticket is written in a language other than English, set the language field to its ISO code
        and still write the summary in English."""


        def triage_messages(subject: str, body: str) -> list[dict]:
            received = f"Received: {timezone.now():%Y-%m-%d %H:%M} UTC"
            return [
                {"role": "system", "content": TRIAGE_RULES},
                {"role": "user", "content": f"{subject}\n\n{body}\n\n{received}"},
            ]
    ''',
}


# ---------------------------------------------------------------------------------------------------------
# 2. Builder pattern + OpenAI Responses `instructions=`: the clock section is appended first (M101).

BUILDER_RESPONSES_HAZARD = {
    "assistant/__init__.py": "",
    "assistant/persona.py": r'''
        PERSONA = (
            "You are Quill, the writing assistant inside the Larkspur docs editor. You help technical writers "
            "tighten drafts: shorter sentences, active voice, one idea per paragraph, consistent terminology. "
            "You keep the author's meaning and never add claims that the draft does not make."
        )

        STYLE_RULES = (
            "Use sentence case for headings.",
            "Prefer 'select' over 'click' and 'enter' over 'type in'.",
            "Write numbers from zero to nine as words, 10 and above as digits.",
            "Spell out an acronym the first time it appears in a page.",
            "Return the edited text first, then at most three bullet points explaining the biggest changes.",
        )
    ''',
    "assistant/instructions.py": r'''
        from __future__ import annotations

        from datetime import datetime
        from zoneinfo import ZoneInfo


        class InstructionBuilder:
            """Collects the sections of the model's instructions in the order they are added."""

            def __init__(self) -> None:
                self._sections: list[str] = []

            def clock(self, tz: str) -> InstructionBuilder:
                self._sections.append(f"Local time: {datetime.now(ZoneInfo(tz)):%Y-%m-%d %H:%M %Z}")
                return self

            def persona(self, text: str) -> InstructionBuilder:
                self._sections.append(text)
                return self

            def rules(self, items: tuple[str, ...]) -> InstructionBuilder:
                self._sections.append("House style:\n" + "\n".join(f"- {item}" for item in items))
                return self

            def build(self) -> str:
                return "\n\n".join(self._sections)
    ''',
    "assistant/service.py": r'''
        from openai import OpenAI

        from .instructions import InstructionBuilder
        from .persona import PERSONA, STYLE_RULES

        client = OpenAI()


        def edit_draft(draft: str, tz: str = "Europe/Berlin") -> str:
            instructions = InstructionBuilder().clock(tz).persona(PERSONA).rules(STYLE_RULES).build()
            response = client.responses.create(
                model="gpt-4.1-mini",
                instructions=instructions,
                input=draft,
            )
            return response.output_text
    ''',
}

BUILDER_RESPONSES_CLEAN = {
    **BUILDER_RESPONSES_HAZARD,
    "assistant/instructions.py": r'''
        from __future__ import annotations


        class InstructionBuilder:
            """Collects the sections of the model's instructions in the order they are added."""

            def __init__(self) -> None:
                self._sections: list[str] = []

            def persona(self, text: str) -> InstructionBuilder:
                self._sections.append(text)
                return self

            def rules(self, items: tuple[str, ...]) -> InstructionBuilder:
                self._sections.append("House style:\n" + "\n".join(f"- {item}" for item in items))
                return self

            def build(self) -> str:
                return "\n\n".join(self._sections)
    ''',
    "assistant/service.py": r'''
        from datetime import datetime
        from zoneinfo import ZoneInfo

        from openai import OpenAI

        from .instructions import InstructionBuilder
        from .persona import PERSONA, STYLE_RULES

        client = OpenAI()


        def edit_draft(draft: str, tz: str = "Europe/Berlin") -> str:
            instructions = InstructionBuilder().persona(PERSONA).rules(STYLE_RULES).build()
            stamp = f"Local time: {datetime.now(ZoneInfo(tz)):%Y-%m-%d %H:%M %Z}"
            response = client.responses.create(
                model="gpt-4.1-mini",
                instructions=instructions,
                input=f"{draft}\n\n{stamp}",
            )
            return response.output_text
    ''',
}


# ---------------------------------------------------------------------------------------------------------
# 3. Template-method agents + Anthropic: the subclass's preamble puts the clock in the cached block (M106).

ONCALL_BASE = r'''
    from abc import ABC, abstractmethod

    import anthropic


    class BaseAgent(ABC):
        """Sends one task; subclasses say what the system prompt holds."""

        model = "claude-sonnet-4-5"
        max_tokens = 2048

        def __init__(self, client: anthropic.Anthropic | None = None) -> None:
            self.client = client or anthropic.Anthropic()

        def preamble(self) -> str:
            return ""

        @abstractmethod
        def instructions(self) -> str: ...

        def task_message(self, task: str) -> str:
            return task

        def system_blocks(self) -> list[dict]:
            head = self.preamble()
            text = f"{head}\n\n{self.instructions()}" if head else self.instructions()
            return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]

        def run(self, task: str) -> str:
            response = self.client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=self.system_blocks(),
                messages=[{"role": "user", "content": self.task_message(task)}],
            )
            return response.content[0].text
'''

ONCALL_HAZARD = {
    "agents/__init__.py": "",
    "agents/base.py": ONCALL_BASE,
    "agents/runbook.py": _text_module("The on-call runbook, one step per line.", "RUNBOOK", RUNBOOK_LINES),
    "agents/oncall.py": r'''
        from datetime import datetime, timezone

        from .base import BaseAgent
        from .runbook import RUNBOOK


        class OnCallAgent(BaseAgent):
            """Reads an alert and proposes the next runbook step."""

            def preamble(self) -> str:
                return f"Shift clock: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"

            def instructions(self) -> str:
                return "You assist the on-call engineer. Follow the runbook below exactly.\n\n" + RUNBOOK


        def handle_alert(alert_text: str) -> str:
            return OnCallAgent().run(alert_text)
    ''',
}

ONCALL_CLEAN = {
    **ONCALL_HAZARD,
    "agents/oncall.py": r'''
        from datetime import datetime, timezone

        from .base import BaseAgent
        from .runbook import RUNBOOK


        class OnCallAgent(BaseAgent):
            """Reads an alert and proposes the next runbook step."""

            def instructions(self) -> str:
                return "You assist the on-call engineer. Follow the runbook below exactly.\n\n" + RUNBOOK

            def task_message(self, task: str) -> str:
                return f"{task}\n\nShift clock: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"


        def handle_alert(alert_text: str) -> str:
            return OnCallAgent().run(alert_text)
    ''',
}


# ---------------------------------------------------------------------------------------------------------
# 4. Google genai: the system instruction joins playbooks in Path.iterdir() order (M203).

GENAI_PLAYBOOKS_HAZARD = {
    "kb/__init__.py": "",
    "kb/store.py": r'''
        from pathlib import Path


        class PlaybookStore:
            """Markdown playbooks shipped with the service, shared by every request."""

            def __init__(self, root: Path) -> None:
                self.root = root

            def documents(self) -> list[str]:
                return [path.read_text(encoding="utf-8") for path in self.root.iterdir() if path.suffix == ".md"]
    ''',
    "kb/assistant.py": r'''
        from pathlib import Path

        from google import genai
        from google.genai import types

        from .store import PlaybookStore

        client = genai.Client()
        STORE = PlaybookStore(Path(__file__).parent / "playbooks")
        SYSTEM = (
            "You are the incident-response assistant of the Nimbus platform team. Answer from the playbooks "
            "below only. Quote the playbook title for every step you recommend, and say plainly when no "
            "playbook covers the situation instead of improvising a procedure."
        )


        def ask(question: str) -> str:
            playbooks = "\n\n---\n\n".join(STORE.documents())
            response = client.models.generate_content(
                model="gemini-2.5-flash",
                contents=question,
                config=types.GenerateContentConfig(
                    system_instruction=f"{SYSTEM}\n\nPlaybooks:\n\n{playbooks}",
                    temperature=0.2,
                ),
            )
            return response.text
    ''',
}

GENAI_PLAYBOOKS_CLEAN = {
    **GENAI_PLAYBOOKS_HAZARD,
    "kb/store.py": r'''
        from pathlib import Path


        class PlaybookStore:
            """Markdown playbooks shipped with the service, shared by every request."""

            def __init__(self, root: Path) -> None:
                self.root = root

            def documents(self) -> list[str]:
                return [path.read_text(encoding="utf-8") for path in sorted(self.root.iterdir()) if path.suffix == ".md"]
    ''',
}


# ---------------------------------------------------------------------------------------------------------
# 5. Mistral: a frozen dataclass persona de-duplicates its tool names with a set display (M202).

MISTRAL_CATALOG = r'''
    def _function(name: str, description: str, properties: dict, required: list[str]) -> dict:
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {"type": "object", "properties": properties, "required": required},
            },
        }


    TOOL_SPECS = {
        "search_docs": _function(
            "search_docs", "Search the help centre.", {"query": {"type": "string"}}, ["query"]
        ),
        "get_ticket": _function(
            "get_ticket", "Fetch a support ticket by id.", {"ticket_id": {"type": "string"}}, ["ticket_id"]
        ),
        "refund_order": _function(
            "refund_order", "Refund an order in full.", {"order_id": {"type": "string"}}, ["order_id"]
        ),
        "get_invoice": _function(
            "get_invoice", "Fetch an invoice as PDF link.", {"invoice_id": {"type": "string"}}, ["invoice_id"]
        ),
    }

    BASE_TOOLS = ("search_docs", "get_ticket")
'''

MISTRAL_BOT = r'''
    import os

    from mistralai import Mistral

    from .persona import Persona

    client = Mistral(api_key=os.environ["MISTRAL_API_KEY"])

    BILLING = Persona(
        name="billing",
        system_prompt=(
            "You are the billing assistant of Parcelly. You explain invoices, refunds and plan changes. "
            "Look up the ticket before answering, never refund more than the order total, and hand over to "
            "a human agent when the customer disputes a charge with their bank."
        ),
        extra_tools=("refund_order", "get_invoice", "get_ticket"),
    )


    def reply(question: str) -> str:
        response = client.chat.complete(
            model="mistral-large-latest",
            messages=[
                {"role": "system", "content": BILLING.system_prompt},
                {"role": "user", "content": question},
            ],
            tools=BILLING.tool_specs(),
            tool_choice="auto",
        )
        return response.choices[0].message.content
'''

MISTRAL_PERSONA_HAZARD = {
    "bots/__init__.py": "",
    "bots/catalog.py": MISTRAL_CATALOG,
    "bots/persona.py": r'''
        from dataclasses import dataclass

        from .catalog import BASE_TOOLS, TOOL_SPECS


        @dataclass(frozen=True)
        class Persona:
            name: str
            system_prompt: str
            extra_tools: tuple[str, ...] = ()

            def tool_specs(self) -> list[dict]:
                # a persona may list a base tool again: keep each tool once
                return [TOOL_SPECS[name] for name in {*BASE_TOOLS, *self.extra_tools}]
    ''',
    "bots/billing.py": MISTRAL_BOT,
}

MISTRAL_PERSONA_CLEAN = {
    **MISTRAL_PERSONA_HAZARD,
    "bots/persona.py": r'''
        from dataclasses import dataclass

        from .catalog import BASE_TOOLS, TOOL_SPECS


        @dataclass(frozen=True)
        class Persona:
            name: str
            system_prompt: str
            extra_tools: tuple[str, ...] = ()

            def tool_specs(self) -> list[dict]:
                # a persona may list a base tool again: keep each tool once, in one order
                return [TOOL_SPECS[name] for name in sorted({*BASE_TOOLS, *self.extra_tools})]
    ''',
}


# ---------------------------------------------------------------------------------------------------------
# 6. Cohere ClientV2: the brand-voice settings, a merged dict, are listed in insertion order (M201).

COHERE_WRITER = r'''
    import cohere

    from .voice import BrandVoice

    co = cohere.ClientV2()
    VOICE = BrandVoice({"sign_off": "The Fernway team", "tone": "warm, direct, never salesy"})
    TASK = (
        "You write replies to customer reviews for Fernway. Thank the reviewer by name, answer the points "
        "they raise in the order they raise them, and never offer discounts or compensation in public. "
        "Keep replies under 120 words."
    )


    def draft_reply(review: str) -> str:
        response = co.chat(
            model="command-a-03-2025",
            messages=[
                {"role": "system", "content": f"{TASK}\n\n{VOICE.as_prompt()}"},
                {"role": "user", "content": review},
            ],
        )
        return response.message.content[0].text
'''

COHERE_VOICE_HAZARD = {
    "reviews/__init__.py": "",
    "reviews/voice.py": r'''
        from collections.abc import Mapping

        DEFAULT_VOICE = {
            "tone": "friendly and plain",
            "person": "first person plural (we)",
            "emoji": "none",
            "sign_off": "Fernway support",
            "spelling": "British English",
        }


        class BrandVoice:
            def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
                self.settings = {**DEFAULT_VOICE, **(overrides or {})}

            def as_prompt(self) -> str:
                lines = [f"- {key.replace('_', ' ')}: {value}" for key, value in self.settings.items()]
                return "Brand voice:\n" + "\n".join(lines)
    ''',
    "reviews/writer.py": COHERE_WRITER,
}

COHERE_VOICE_CLEAN = {
    **COHERE_VOICE_HAZARD,
    "reviews/voice.py": r'''
        from collections.abc import Mapping

        DEFAULT_VOICE = {
            "tone": "friendly and plain",
            "person": "first person plural (we)",
            "emoji": "none",
            "sign_off": "Fernway support",
            "spelling": "British English",
        }


        class BrandVoice:
            def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
                self.settings = {**DEFAULT_VOICE, **(overrides or {})}

            def as_prompt(self) -> str:
                lines = [f"- {key.replace('_', ' ')}: {value}" for key, value in sorted(self.settings.items())]
                return "Brand voice:\n" + "\n".join(lines)
    ''',
}


# ---------------------------------------------------------------------------------------------------------
# 7. Async-generator vLLM gateway: the request context salts the cache with its request id (M401).

GATEWAY_CHAT = r'''
    import os
    from collections.abc import AsyncIterator

    from openai import AsyncOpenAI

    from .context import RequestContext

    client = AsyncOpenAI(base_url=os.environ["VLLM_BASE_URL"], api_key="EMPTY")
    SYSTEM_PROMPT = (
        "You are the assistant of the Orbit analytics workspace. Answer questions about dashboards, "
        "metrics and SQL. Prefer short answers with one example query, and say when a metric is not "
        "tracked instead of guessing its definition."
    )


    async def stream_answer(ctx: RequestContext, history: list[dict], question: str) -> AsyncIterator[str]:
        stream = await client.chat.completions.create(
            model="meta-llama/Llama-3.1-8B-Instruct",
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                *history,
                {"role": "user", "content": question},
            ],
            stream=True,
            extra_body=ctx.extra_body(),
        )
        async for chunk in stream:
            yield chunk.choices[0].delta.content or ""
'''

GATEWAY_SALT_HAZARD = {
    "gateway/__init__.py": "",
    "gateway/context.py": r'''
        import uuid
        from dataclasses import dataclass, field


        @dataclass
        class RequestContext:
            tenant_id: str
            user_id: str
            request_id: str = field(default_factory=lambda: uuid.uuid4().hex)

            def extra_body(self) -> dict:
                return {
                    "cache_salt": f"{self.tenant_id}/{self.request_id}",
                    "top_k": 40,
                    "repetition_penalty": 1.05,
                }
    ''',
    "gateway/chat.py": GATEWAY_CHAT,
}

GATEWAY_SALT_CLEAN = {
    **GATEWAY_SALT_HAZARD,
    "gateway/context.py": r'''
        import hashlib
        import hmac
        import os
        import uuid
        from dataclasses import dataclass, field

        _SALT_KEY = os.environ.get("CACHE_SALT_KEY", "dev-only").encode()


        def tenant_salt(tenant_id: str) -> str:
            return hmac.new(_SALT_KEY, tenant_id.encode(), hashlib.sha256).hexdigest()


        @dataclass
        class RequestContext:
            tenant_id: str
            user_id: str
            request_id: str = field(default_factory=lambda: uuid.uuid4().hex)

            def extra_body(self) -> dict:
                return {
                    "cache_salt": tenant_salt(self.tenant_id),
                    "top_k": 40,
                    "repetition_penalty": 1.05,
                }
    ''',
}


# ---------------------------------------------------------------------------------------------------------
# 8. Dramatiq actor + vLLM offline: the sampling helper asks for prompt logprobs on serving traffic (M702).

DRAMATIQ_TASKS = r'''
    import functools

    import dramatiq
    from vllm import LLM

    from .sampling import summary_params
    from .store import load_ticket, save_summary

    INSTRUCTIONS = (
        "Summarise the support ticket below for the agent who picks it up next: the customer's goal, what "
        "has been tried, what is still open. Use three short bullet points and no greeting."
    )


    @functools.lru_cache(maxsize=1)
    def get_llm() -> LLM:
        return LLM(model="Qwen/Qwen2.5-7B-Instruct", enable_prefix_caching=True)


    @dramatiq.actor(queue_name="summaries", max_retries=3)
    def summarize_ticket(ticket_id: int) -> None:
        ticket_text = load_ticket(ticket_id)
        messages = [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": ticket_text},
        ]
        outputs = get_llm().chat(messages, sampling_params=summary_params())
        save_summary(ticket_id, outputs[0].outputs[0].text)
'''

DRAMATIQ_STORE = r'''
    import sqlite3

    DB_PATH = "tickets.db"


    def load_ticket(ticket_id: int) -> str:
        with sqlite3.connect(DB_PATH) as db:
            (body,) = db.execute("SELECT body FROM tickets WHERE id = ?", (ticket_id,)).fetchone()
        return body


    def save_summary(ticket_id: int, summary: str) -> None:
        with sqlite3.connect(DB_PATH) as db:
            db.execute("UPDATE tickets SET summary = ? WHERE id = ?", (summary, ticket_id))
'''

DRAMATIQ_LOGPROBS_HAZARD = {
    "worker/__init__.py": "",
    "worker/store.py": DRAMATIQ_STORE,
    "worker/sampling.py": r'''
        from vllm import SamplingParams


        def summary_params(max_tokens: int = 400) -> SamplingParams:
            return SamplingParams(
                temperature=0.1,
                max_tokens=max_tokens,
                logprobs=1,
                prompt_logprobs=1,  # per-token confidence for the QA dashboard
            )
    ''',
    "worker/tasks.py": DRAMATIQ_TASKS,
}

DRAMATIQ_LOGPROBS_CLEAN = {
    **DRAMATIQ_LOGPROBS_HAZARD,
    "worker/sampling.py": r'''
        from vllm import SamplingParams


        def summary_params(max_tokens: int = 400) -> SamplingParams:
            return SamplingParams(
                temperature=0.1,
                max_tokens=max_tokens,
                logprobs=1,  # per-token confidence of the summary for the QA dashboard
                prompt_logprobs=None,  # prompt logprobs would skip the prefix cache
            )
    ''',
}


# ---------------------------------------------------------------------------------------------------------
# 9. Multi-turn Anthropic support session: five breakpoints in one request (M704).

SUPPORT_PROMPT = r'''
    from .handbook import HANDBOOK

    EPHEMERAL = {"type": "ephemeral"}

    PERSONA = (
        "You are Juniper, the customer-support assistant of Northpeak Outfitters. You answer questions about "
        "orders, returns, warranties and product care, politely and precisely, using the handbook below."
    )
    TONE_GUIDE = (
        "Tone: warm and brief. Use the customer's first name once. Never blame the carrier or the customer. "
        "End with one concrete next step."
    )
    CARE_NOTES = (
        "Care notes: dry tents and sleeping bags fully before storage, wash down with technical wash only, "
        "and never machine-dry a down jacket without dryer balls."
    )

    SYSTEM = [
        {"type": "text", "text": PERSONA},
        {"type": "text", "text": HANDBOOK, "cache_control": EPHEMERAL},
        {"type": "text", "text": TONE_GUIDE, "cache_control": EPHEMERAL},
        {"type": "text", "text": CARE_NOTES, "cache_control": EPHEMERAL},
    ]

    TOOLS = [
        {
            "name": "get_order",
            "description": "Look up an order by its number.",
            "input_schema": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
        },
        {
            "name": "start_return",
            "description": "Open a return for one line of an order.",
            "input_schema": {
                "type": "object",
                "properties": {"order": {"type": "string"}, "line": {"type": "integer"}},
                "required": ["order", "line"],
            },
        },
    ]
'''

SUPPORT_SESSION = r'''
    import anthropic

    from .prompt import EPHEMERAL, FEW_SHOT, SYSTEM, TOOLS


    class SupportSession:
        """One customer's conversation; the history grows by one exchange per question."""

        def __init__(self, client: anthropic.Anthropic | None = None) -> None:
            self.client = client or anthropic.Anthropic()
            self.history: list[dict] = []

        def ask(self, question: str) -> str:
            messages = [
                *FEW_SHOT,
                *self.history,
                {"role": "user", "content": [{"type": "text", "text": question, "cache_control": EPHEMERAL}]},
            ]
            response = self.client.messages.create(
                model="claude-sonnet-4-5",
                max_tokens=1024,
                tools=TOOLS,
                system=SYSTEM,
                messages=messages,
            )
            answer = response.content[0].text
            self.history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
            return answer
'''

SUPPORT_FIVE_HAZARD = {
    "support_chat/__init__.py": "",
    "support_chat/handbook.py": _text_module(
        "The support handbook, three rules per product.", "HANDBOOK", HANDBOOK_LINES
    ),
    "support_chat/prompt.py": SUPPORT_PROMPT + r'''
    FEW_SHOT = [
        {"role": "user", "content": [{"type": "text", "text": "Can I return my tent after I used it once?"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "Yes: a used Trailhead 2 tent is refunded as store credit if it can be resold.",
                    "cache_control": EPHEMERAL,
                }
            ],
        },
    ]
''',
    "support_chat/session.py": SUPPORT_SESSION,
}

SUPPORT_FOUR_CLEAN = {
    **SUPPORT_FIVE_HAZARD,
    "support_chat/prompt.py": SUPPORT_PROMPT + r'''
    FEW_SHOT = [
        {"role": "user", "content": [{"type": "text", "text": "Can I return my tent after I used it once?"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "Yes: a used Trailhead 2 tent is refunded as store credit if it can be resold.",
                }
            ],
        },
    ]
''',
}


# ---------------------------------------------------------------------------------------------------------
# 10. vLLM client with a rate-limit retry: the tenant's cache salt is written to the log (M402).

TENANCY = r'''
    import hashlib
    import hmac
    import os

    _SALT_KEY = os.environ.get("CACHE_SALT_KEY", "dev-only").encode()


    def cache_salt_for(tenant_id: str) -> str:
        """Stable per tenant: tenants never share KV blocks, a tenant's requests do."""
        return hmac.new(_SALT_KEY, tenant_id.encode(), hashlib.sha256).hexdigest()
'''

VLLM_CLIENT_HAZARD_SOURCE = r'''
    import asyncio
    import logging

    import openai

    from .tenancy import cache_salt_for

    log = logging.getLogger("llm.client")
    SYSTEM_PROMPT = (
        "You are the contract-review assistant of Clausewise. Point out clauses that deviate from the "
        "customer's playbook, quote them exactly, and rate each deviation low, medium or high."
    )


    class TenantLLM:
        def __init__(self, base_url: str, model: str = "Qwen/Qwen2.5-32B-Instruct") -> None:
            self._client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY")
            self._model = model

        async def review(self, tenant_id: str, contract: str, attempts: int = 3) -> str:
            salt = cache_salt_for(tenant_id)
            for attempt in range(1, attempts + 1):
                try:
                    response = await self._client.chat.completions.create(
                        model=self._model,
                        messages=[
                            {"role": "system", "content": SYSTEM_PROMPT},
                            {"role": "user", "content": contract},
                        ],
                        extra_body={"cache_salt": salt},
                    )
                    return response.choices[0].message.content
                except openai.RateLimitError:
                    log.warning("rate limited (attempt %d) tenant=%s salt=%s", attempt, tenant_id, salt)
                    await asyncio.sleep(2**attempt)
            raise RuntimeError(f"review failed after {attempts} attempts for tenant {tenant_id}")
'''

VLLM_SALT_LOG_HAZARD = {
    "llm/__init__.py": "",
    "llm/tenancy.py": TENANCY,
    "llm/client.py": VLLM_CLIENT_HAZARD_SOURCE,
}

VLLM_SALT_LOG_CLEAN = {
    **VLLM_SALT_LOG_HAZARD,
    "llm/client.py": VLLM_CLIENT_HAZARD_SOURCE.replace(
        'log.warning("rate limited (attempt %d) tenant=%s salt=%s", attempt, tenant_id, salt)',
        'log.warning("rate limited (attempt %d) tenant=%s", attempt, tenant_id)',
    ),
}


# ---------------------------------------------------------------------------------------------------------
# (files, the file linted, (rule, file of the finding, a needle on the line that makes the hazard))

HAZARDS = {
    "django-instructor-triage-clock-first": (
        DJANGO_TRIAGE_HAZARD,
        "support/views.py",
        ("M101", "support/prompts.py", 'system = f"Current time: {timezone.now()'),
    ),
    "responses-instruction-builder-clock-section-first": (
        BUILDER_RESPONSES_HAZARD,
        "assistant/service.py",
        ("M101", "assistant/instructions.py", 'self._sections.append(f"Local time: {datetime.now('),
    ),
    "template-method-oncall-agent-preamble-clock-before-breakpoint": (
        ONCALL_HAZARD,
        "agents/oncall.py",
        ("M106", "agents/oncall.py", 'return f"Shift clock: {datetime.now(timezone.utc)'),
    ),
    "genai-system-instruction-playbooks-iterdir": (
        GENAI_PLAYBOOKS_HAZARD,
        "kb/assistant.py",
        ("M203", "kb/store.py", "for path in self.root.iterdir()"),
    ),
    "mistral-frozen-persona-tools-set-display": (
        MISTRAL_PERSONA_HAZARD,
        "bots/billing.py",
        ("M202", "bots/persona.py", "for name in {*BASE_TOOLS, *self.extra_tools}"),
    ),
    "cohere-brand-voice-merged-dict-items": (
        COHERE_VOICE_HAZARD,
        "reviews/writer.py",
        ("M201", "reviews/voice.py", "for key, value in self.settings.items()"),
    ),
    "async-generator-vllm-gateway-request-id-salt": (
        GATEWAY_SALT_HAZARD,
        "gateway/chat.py",
        ("M401", "gateway/context.py", '"cache_salt": f"{self.tenant_id}/{self.request_id}"'),
    ),
    "dramatiq-vllm-offline-prompt-logprobs": (
        DRAMATIQ_LOGPROBS_HAZARD,
        "worker/tasks.py",
        ("M702", "worker/sampling.py", "prompt_logprobs=1,"),
    ),
    "anthropic-support-session-five-breakpoints": (
        SUPPORT_FIVE_HAZARD,
        "support_chat/session.py",
        ("M704", "support_chat/session.py", '"text": question, "cache_control": EPHEMERAL'),
    ),
    "vllm-client-retry-logs-cache-salt": (
        VLLM_SALT_LOG_HAZARD,
        "llm/client.py",
        ("M402", "llm/client.py", 'log.warning("rate limited'),
    ),
}

CLEAN = {
    "django-instructor-triage-clock-in-user-message": DJANGO_TRIAGE_CLEAN,
    "responses-instruction-builder-clock-in-input": BUILDER_RESPONSES_CLEAN,
    "template-method-oncall-agent-clock-in-task-message": ONCALL_CLEAN,
    "genai-system-instruction-playbooks-sorted-iterdir": GENAI_PLAYBOOKS_CLEAN,
    "mistral-frozen-persona-tools-sorted-set": MISTRAL_PERSONA_CLEAN,
    "cohere-brand-voice-sorted-items": COHERE_VOICE_CLEAN,
    "async-generator-vllm-gateway-tenant-hmac-salt": GATEWAY_SALT_CLEAN,
    "dramatiq-vllm-offline-output-logprobs-only": DRAMATIQ_LOGPROBS_CLEAN,
    "anthropic-support-session-four-breakpoints": SUPPORT_FOUR_CLEAN,
    "vllm-client-retry-logs-tenant-not-salt": VLLM_SALT_LOG_CLEAN,
}


@pytest.mark.parametrize("name", list(HAZARDS), ids=list(HAZARDS))
def test_hazard_found_at_its_line(tmp_path, name):
    assert_hazard(tmp_path, HAZARDS[name])


@pytest.mark.parametrize("name", list(CLEAN), ids=list(CLEAN))
def test_clean_project_gives_nothing(tmp_path, name):
    assert_clean(tmp_path, CLEAN[name])
