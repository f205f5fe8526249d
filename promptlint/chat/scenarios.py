"""Chat scenarios: the built-in conversations, and chat samples files.

A chat samples file (``<template>.samples.toml|json`` beside the template, or
``chat_template.samples.*`` / ``tokenizer_config.samples.*`` in a model directory) gives
``messages``, ``tools``, ``documents``, ``add_generation_prompt``,
``continue_final_message``, ``now`` (the clock behind `strftime_now`) and template kwargs
under ``variables`` (same value/kind tables as application templates, e.g. a
``date_string`` declared volatile).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Dict, List, Optional

from promptlint.chat.request import ChatRequest
from promptlint.scenarios import Scenario, SamplesError, Variable, load_samples, scenario_from_samples

DEFAULT_NOW = datetime(2025, 3, 14, 9, 26, 53)

SYSTEM = (
    "You are the customer-support assistant for Acme Outdoor Gear. Answer questions about orders, shipping, "
    "returns and product care politely and precisely. Cite the relevant policy section when you refer to a "
    "policy, never invent order numbers or tracking codes, and ask a clarifying question when a request is "
    "ambiguous. Keep answers under 150 words unless the customer asks for detail."
)
USER_1 = "Hi! I ordered a tent last week. Can I still change the delivery address?"
ASSISTANT_1 = (
    "Yes. Orders can be redirected until they leave the warehouse (policy 4.2). "
    "Please share your order number and the new address."
)
USER_2 = "It's order 58213. New address: 12 Harbour Road, Portsmouth."
USER_WEATHER = "What's the weather in Paris today, and will I need an umbrella for tomorrow's 3 km walk?"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather and an hourly forecast for a location.",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "object",
                        "description": "Where to look up the weather.",
                        "properties": {
                            "city": {"type": "string", "description": "City name, e.g. Paris"},
                            "country": {"type": "string", "description": "ISO 3166 country code"},
                        },
                        "required": ["city"],
                    },
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "hours": {"type": "integer", "description": "Forecast horizon in hours", "minimum": 1},
                },
                "required": ["location"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "plan_route",
            "description": "Plan a walking route through a list of stops.",
            "parameters": {
                "type": "object",
                "properties": {
                    "stops": {
                        "type": "array",
                        "description": "Stops in visiting order.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "lat": {"type": "number"},
                                "lon": {"type": "number"},
                            },
                            "required": ["name"],
                        },
                    },
                    "avoid": {"type": "array", "items": {"type": "string", "enum": ["stairs", "traffic", "hills"]}},
                },
                "required": ["stops"],
            },
        },
    },
]

USER_DOCUMENTS = "Can I return a tent I have already used once, and who pays for the return shipping?"
DOCUMENTS = [
    {
        "title": "Returns policy",
        "text": "Unused items can be returned within 30 days for a full refund. Used tents and sleeping bags can be "
        "returned within 14 days if they are clean and undamaged; a 10% restocking fee applies. Refunds are issued "
        "to the original payment method within five business days of the return being received.",
    },
    {
        "title": "Shipping policy",
        "text": "Standard shipping is free on orders over 50 GBP. Return shipping is free for faulty items; for other "
        "returns the customer pays the return label (4.95 GBP within the UK), which is deducted from the refund.",
    },
    {
        "title": "Product care: tents",
        "text": "Dry the tent completely before storing it. Clean the fabric with lukewarm water and a soft sponge; never "
        "use detergents or a washing machine, which damage the waterproof coating.",
    },
]

TOOL_CALL_ID = "call7f3c9"  # 9 characters: Mistral templates require it
TOOL_ARGUMENTS = json.dumps({"location": {"city": "Paris", "country": "FR"}, "unit": "celsius"})
# A tool result exactly as a tool returns it (insertion order): fidelity scenarios mirror real traffic.
TOOL_RESULT = json.dumps({"temperature": 17, "condition": "light rain", "forecast": [{"hour": 15, "rain_mm": 1.2}]})  # promptlint: ignore[M201]


def builtin_requests() -> Dict[str, ChatRequest]:
    """The built-in chat scenarios, in the order they are tried."""
    sys_msg = {"role": "system", "content": SYSTEM}
    return {
        "system-user": ChatRequest([dict(sys_msg), {"role": "user", "content": USER_1}], add_generation_prompt=True),
        "no-system": ChatRequest(  # for templates that refuse a system role (Gemma)
            [
                {"role": "user", "content": USER_1},
                {"role": "assistant", "content": ASSISTANT_1},
                {"role": "user", "content": USER_2},
            ],
            add_generation_prompt=True,
        ),
        "multi-turn": ChatRequest(
            [
                dict(sys_msg),
                {"role": "user", "content": USER_1},
                {"role": "assistant", "content": ASSISTANT_1},
                {"role": "user", "content": USER_2},
            ],
            add_generation_prompt=True,
        ),
        "tools": ChatRequest(
            [dict(sys_msg), {"role": "user", "content": USER_WEATHER}], tools=copy.deepcopy(TOOLS), add_generation_prompt=True
        ),
        "tool-round-trip": ChatRequest(
            [
                dict(sys_msg),
                {"role": "user", "content": USER_WEATHER},
                {
                    "role": "assistant",
                    # "" rather than None: transformers 5.x drops None-valued keys and many templates then
                    # fail on `message.content` (vLLM turns None into "" itself)
                    "content": "",
                    "tool_calls": [
                        {"id": TOOL_CALL_ID, "type": "function", "function": {"name": "get_weather", "arguments": TOOL_ARGUMENTS}}
                    ],
                },
                {"role": "tool", "tool_call_id": TOOL_CALL_ID, "name": "get_weather", "content": TOOL_RESULT},
            ],
            tools=copy.deepcopy(TOOLS),
            add_generation_prompt=True,
        ),
        "documents": ChatRequest(  # grounded generation (Granite, Command R): M203 permutes the documents
            [dict(sys_msg), {"role": "user", "content": USER_DOCUMENTS}], documents=copy.deepcopy(DOCUMENTS), add_generation_prompt=True
        ),
        "reasoning": ChatRequest(
            [
                dict(sys_msg),
                {"role": "user", "content": USER_1},
                {
                    "role": "assistant",
                    "reasoning_content": "The customer wants to redirect an order; policy 4.2 allows it before dispatch.",
                    "content": ASSISTANT_1,
                },
                {"role": "user", "content": USER_2},
                {
                    "role": "assistant",
                    "content": "<think>\nOrder 58213 has not left the warehouse yet.\n</think>\n\nDone: order 58213 now ships to 12 Harbour Road, Portsmouth.",
                },
                {"role": "user", "content": "Thanks! When will it arrive?"},
            ],
            add_generation_prompt=True,
        ),
    }


@dataclass
class ChatScenario:
    """One request plus what its inputs are (kwargs' kinds, the clock)."""

    name: str
    request: ChatRequest
    variables: Scenario = field(default_factory=Scenario)  # template kwargs with kinds
    now: datetime = DEFAULT_NOW
    builtin: bool = True
    samples_path: Optional[Path] = None
    reply: Optional[Dict[str, Any]] = None  # M204: the assistant's reply to the request (default: built in)
    next_user: Optional[str] = None  # M204: the user message of the next turn (default: built in)


def samples_path_for_chat(path: Path) -> Optional[Path]:
    """`<name>.samples.toml|json` beside the template (a model dir: inside it)."""
    candidates = []
    if path.is_dir():
        for stem in ("chat_template", "tokenizer_config"):
            candidates += [path / f"{stem}.samples.toml", path / f"{stem}.samples.json"]
    else:
        stem = path.name.rsplit(".", 1)[0]
        candidates += [path.with_name(stem + ".samples.toml"), path.with_name(stem + ".samples.json")]
    from promptlint.doors.bounded_io import is_regular_file

    for c in candidates:
        if is_regular_file(c):  # never raises (a name made too long by the suffix)
            return c
    return None


def parse_now(value: Any, path: Optional[Path]) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).replace(tzinfo=None)
        except ValueError:
            pass
    raise SamplesError(path or Path("."), f"`now` must be an ISO date-time such as 2025-03-14T09:26:53, got {value!r}")


def scenario_from_data(data: Dict[str, Any], path: Optional[Path], name: str = "samples") -> ChatScenario:
    """A chat scenario from a (validated) samples mapping."""
    from promptlint.scenarios.names import name_patterns

    messages = data.get("messages")
    if not messages:
        raise SamplesError(path or Path("."), "a chat samples file needs `messages` (a list of {role, content})")
    variables = scenario_from_samples({"variables": data.get("variables") or {}}, path or Path("."))
    variables.tools_order = data.get("tools-order")
    variables.sort_keys = {n: data[f"{n}-sort-key"] for n in ("tools", "documents") if f"{n}-sort-key" in data}
    # kwargs passed as plain values whose names say date/time are volatile (today's date passed per request)
    patterns = name_patterns()
    for var in variables.variables.values():
        raw = (data.get("variables") or {}).get(var.name)
        explicit = isinstance(raw, dict) and "kind" in raw
        if not explicit:
            kind, sub = patterns.kind_of(var.name)
            if kind == "volatile":
                var.kind, var.sub_kind = kind, sub
    req = ChatRequest(
        copy.deepcopy(messages),
        copy.deepcopy(data.get("tools")),
        copy.deepcopy(data.get("documents")),
        data.get("add_generation_prompt"),
        data.get("continue_final_message", False),
        {},
    )
    now = parse_now(data["now"], path) if "now" in data else DEFAULT_NOW
    reply = data.get("reply")
    if isinstance(reply, str):
        reply = {"role": "assistant", "content": reply}
    return ChatScenario(name, req, variables, now, False, path, copy.deepcopy(reply), data.get("next_user"))


def load_chat_samples(path: Path, roots=None) -> ChatScenario:
    return scenario_from_data(load_samples(path, roots), path)


def builtin_scenarios() -> List[ChatScenario]:
    return [ChatScenario(name, req) for name, req in builtin_requests().items()]


__all__ = ["ChatScenario", "builtin_scenarios", "load_chat_samples", "scenario_from_data", "samples_path_for_chat", "Variable"]
