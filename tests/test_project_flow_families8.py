"""Families of the eighth round (the four cases the ninth unseen set missed or over-reported on its first run,
tests/test_project_flow_unseen9.py, each closed as a family with projects of its own and a clean twin each):

1. M101, a clock in the mapping that fills a ``str.format_map(mapping)``/``str.format(**mapping)`` template (the
   mapping a dict literal or ``dict(...)``, made by a walrus inside the call or bound earlier), the prompts
   returned as a tuple ``(system, user)`` that the sending module unpacks (``system, user = render(q)``: each
   name takes its element, text and all, so the clock's place is measured); figures by hand (families6's
   ``_m101``: eligible = floor(min(ideal, P - 1) / B)). Clean twin: the clock follows the question in the user
   template.

2. M401, a per-request salt drawn from ``random``/``secrets`` (any function of the module, ``SystemRandom()``'s
   methods, a name imported from the module; and the standard library's other random bytes and clocks, added to
   ``pysource.sinks.VOLATILE_CALLS``: ``os.getrandom``, ``ssl.RAND_bytes``, ``time.clock_gettime(_ns)``,
   ``time.thread_time(_ns)``, ``time.process_time_ns``) in a ``cache_salt`` written as a keyword of ``dict(...)`` (also
   ``dict(BASE, cache_salt=...)``) in a body builder of another module, sent as ``extra_body=`` or posted as
   ``json=``; the finding is at the ``cache_salt=`` keyword (docs/rules/M401.md). Clean twin: a hash of the tenant.
3. M702, ``prompt_logprobs`` in a mapping spread with ``**`` into the request: ``SamplingParams(**settings)``
   (inline, bound to a name, read through a module attribute), ``SamplingParams(**{...})``, and a request dict
   ``{**DEFAULTS, ...}`` posted over HTTP, the spread dict written in another module; the finding is at the
   spread dict's ``"prompt_logprobs"`` key (docs/rules/M702.md). Clean twin: that entry is ``None``.
4. M202 once: a set of tool names grown in a helper of another module (``|=``, ``-=``/``^=``, ``|=`` of a
   frozenset; ``.add``/``.update`` too, which main already reported once: kept as guards) and iterated into
   Mistral's ``tools=`` in the agent module is reported at that iteration only (where the Python fix puts
   ``sorted``), not again where the set is grown. Clean twin: the names are iterated through ``sorted(...)``.
"""

from __future__ import annotations

import json

import pytest
from flow_harness import assert_clean, assert_hazard, write
from test_agent_call_shapes import POLICY
from test_project_flow_families6 import STAMP, _m101

# ------------------------------------------------------------- 1. M101: a clock in a format_map/format(**) mapping

FILLS = {
    "walrus_literal": ("system = SYSTEM.format_map(slots := {{'now': {stamp}, 'question': question}})", ""),
    "dict_call": ("system = SYSTEM.format_map(slots := dict(now={stamp}, question=question))", ""),
    "bound_earlier": ("system = SYSTEM.format_map(slots)", "slots = {{'question': question, 'now': {stamp}}}"),
    "format_spread": ("system = SYSTEM.format(**slots)", "slots = dict(question=question, now={stamp})"),
    "format_spread_literal": ("system = SYSTEM.format(**(slots := {{'now': {stamp}, 'question': question}}))", ""),
}


def _desk_project(fill: str, clock_first: bool):
    """Anthropic; a renderer in a package module returns (system, user), unpacked by the sending module."""
    line, before = FILLS[fill]
    system = ("Clock: {now}\n\n" + POLICY) if clock_first else POLICY
    user = "{question}" if clock_first else "{question}\n\nClock: {now}"
    return {
        "desk/__init__.py": "",
        "desk/policy.py": f"""
            from datetime import datetime

            SYSTEM = {json.dumps(system)}
            USER = {json.dumps(user)}


            def render(question):
                {before.format(stamp=STAMP)}
                {line.format(stamp=STAMP)}
                return system, USER.format_map(slots)
            """,
        "desk/bot.py": """
            import anthropic

            from desk.policy import render

            claude = anthropic.Anthropic()


            def answer(question):
                system, user = render(question)
                msg = claude.messages.create(model="claude-sonnet-4-5", max_tokens=256, system=system,
                                             messages=[{"role": "user", "content": user}])
                return msg.content[0].text
            """,
    }


@pytest.mark.parametrize("fill", list(FILLS))
def test_clock_in_a_format_mapping_of_a_tuple_returned_prompt(tmp_path, qwen, fill):
    write(tmp_path, _desk_project(fill, True))
    _m101(tmp_path, qwen, "desk/bot.py", "desk/policy.py", "datetime.now()", "Clock: {}\n\n" + POLICY)


@pytest.mark.parametrize("fill", list(FILLS))
def test_clock_after_the_question_in_a_format_mapping_is_clean(tmp_path, fill):
    assert_clean(tmp_path, _desk_project(fill, False))

# ------------------------------------------------------------- 2. M401: random/secrets salts in dict(cache_salt=...)

SALTS = {
    "random_random": ("import random", 'f"{org}:{random.random()}"'),
    "randint": ("import random", "str(random.randint(0, 2**31))"),
    "choice": ("import random", 'org + random.choice("abcdef0123456789")'),
    "system_random": ("import random", 'format(random.SystemRandom().getrandbits(48), "x")'),
    "getrandbits_imported": ("from random import getrandbits", 'f"{org}/{getrandbits(32):08x}"'),
    "secrets_token": ("import secrets", "secrets.token_urlsafe(12)"),
    "os_getrandom": ("import os", "os.getrandom(8).hex()"),
    "ssl_rand_bytes": ("from ssl import RAND_bytes", "RAND_bytes(8).hex()"),
    "clock_gettime_ns": ("import time", "f\"{org}-{time.clock_gettime_ns(time.CLOCK_REALTIME)}\""),
}
STABLE = 'hashlib.blake2b(org.encode(), digest_size=8).hexdigest()'


def _extras_project(imports: str, salt: str):
    """An async OpenAI client to a vLLM server; its extra body made by dict(...) in a package module."""
    return {
        "svc/__init__.py": "",
        "svc/extras.py": f'''
            import hashlib
            {imports}


            def vllm_extras(org: str) -> dict:
                return dict(
                    top_k=20,
                    cache_salt={salt},
                    repetition_penalty=1.05,
                )
            ''',
        "svc/chat.py": '''
            from openai import AsyncOpenAI

            from svc.extras import vllm_extras

            SYSTEM = "You answer questions about the Harbour Lane wiki. Cite the page title you used."
            client = AsyncOpenAI(base_url="http://inference:8000/v1", api_key="none")


            async def reply(org: str, text: str) -> str:
                out = await client.chat.completions.create(
                    model="meta-llama/Llama-3.1-8B-Instruct",
                    messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}],
                    extra_body=vllm_extras(org),
                )
                return out.choices[0].message.content
            ''',
    }


def _payload_project(imports: str, salt: str):
    """httpx posting a completions body made by dict(BASE, cache_salt=...) in another module."""
    return {
        "payloads.py": f'''
            import hashlib
            {imports}

            BASE = {{"model": "mistralai/Mistral-7B-Instruct-v0.3", "max_tokens": 200, "temperature": 0.0}}


            def completion_body(org, prompt):
                return dict(BASE, prompt=prompt, cache_salt={salt})
            ''',
        "client.py": '''
            import httpx

            from payloads import completion_body

            PREAMBLE = "Classify the support e-mail below as billing, outage, feature request or other.\\n\\n"


            def classify(org, mail):
                r = httpx.post("http://vllm.svc:8000/v1/completions", json=completion_body(org, PREAMBLE + mail), timeout=30)
                return r.json()["choices"][0]["text"].strip()
            ''',
    }


@pytest.mark.parametrize("salt", list(SALTS), ids=list(SALTS))
def test_random_salt_in_dict_keyword_extra_body(tmp_path, salt):
    imports, expr = SALTS[salt]
    assert_hazard(tmp_path, (_extras_project(imports, expr), "svc/chat.py", ("M401", "svc/extras.py", "cache_salt=")))


@pytest.mark.parametrize("salt", list(SALTS), ids=list(SALTS))
def test_random_salt_in_dict_keyword_posted_body(tmp_path, salt):
    imports, expr = SALTS[salt]
    assert_hazard(tmp_path, (_payload_project(imports, expr), "client.py", ("M401", "payloads.py", "cache_salt=")))


@pytest.mark.parametrize("make", [_extras_project, _payload_project], ids=["extra_body", "posted"])
def test_hashed_salt_in_dict_keyword_is_clean(tmp_path, make):
    assert_clean(tmp_path, make("import random", STABLE))


# ------------------------------------------------------------- 3. M702: prompt_logprobs in a spread mapping

def _offline_project(shape: str, value: str):
    """vLLM offline scoring; the decoding settings live in a config module and are spread into the params."""
    config = f'''
        SCORING = {{
            "max_tokens": 1,
            "prompt_logprobs": {value},
            "temperature": 0.0,
        }}
        '''
    calls = {
        "inline": ("from config import SCORING", "llm.generate(prompts, SamplingParams(**SCORING))"),
        "module_attr": ("import config as cfg",
                        "llm.chat([[{'role': 'user', 'content': p}] for p in prompts], sampling_params=SamplingParams(**cfg.SCORING))"),
        "bound_in_function": ("from config import SCORING",
                              "llm.generate(prompts, sampling_params=(params := SamplingParams(**SCORING)))"),
    }
    imp, call = calls[shape]
    return {
        "config.py": config,
        "score.py": f'''
            from vllm import LLM, SamplingParams

            {imp}

            llm = LLM(model="google/gemma-2-9b-it", enable_prefix_caching=True)


            def score(prompts: list[str]):
                results = {call}
                return [r.prompt_logprobs for r in results]
            ''',
    }


def _literal_spread_project(value: str):
    return {
        "batch.py": f'''
            from vllm import LLM, SamplingParams

            engine = LLM(model="Qwen/Qwen2.5-1.5B-Instruct")


            def run(texts):
                params = SamplingParams(**{{
                    "top_k": 1,
                    "prompt_logprobs": {value},
                    "seed": 7,
                }})
                return [o.outputs[0].text for o in engine.generate(texts, params)]
            ''',
    }


def _posted_defaults_project(value: str):
    """A request dict {**DEFAULTS, ...} posted with aiohttp, DEFAULTS written in a defaults module."""
    return {
        "defaults.py": f'''
            DEFAULTS = {{
                "temperature": 0.3,
                "prompt_logprobs": {value},
            }}
            ''',
        "worker.py": '''
            import aiohttp

            from defaults import DEFAULTS

            INSTRUCTIONS = "Rewrite the product title below in plain English, at most twelve words.\\n\\n"


            async def rewrite(session: aiohttp.ClientSession, title: str) -> str:
                body = {**DEFAULTS, "model": "Qwen/Qwen2.5-7B-Instruct", "prompt": INSTRUCTIONS + title}
                async with session.post("http://vllm:8000/v1/completions", json=body) as resp:
                    return (await resp.json())["choices"][0]["text"]
            ''',
    }


@pytest.mark.parametrize("shape", ["inline", "module_attr", "bound_in_function"])
def test_prompt_logprobs_in_spread_settings(tmp_path, shape):
    assert_hazard(tmp_path, (_offline_project(shape, "0"), "score.py", ("M702", "config.py", '"prompt_logprobs"')))


@pytest.mark.parametrize("shape", ["inline", "module_attr", "bound_in_function"])
def test_prompt_logprobs_none_in_spread_settings_is_clean(tmp_path, shape):
    assert_clean(tmp_path, _offline_project(shape, "None"))


def test_prompt_logprobs_in_a_spread_dict_literal(tmp_path):
    assert_hazard(tmp_path, (_literal_spread_project("1"), "batch.py", ("M702", "batch.py", '"prompt_logprobs"')))


def test_prompt_logprobs_none_in_a_spread_dict_literal_is_clean(tmp_path):
    assert_clean(tmp_path, _literal_spread_project("None"))


def test_prompt_logprobs_in_spread_request_defaults(tmp_path):
    assert_hazard(tmp_path, (_posted_defaults_project("2"), "worker.py", ("M702", "defaults.py", '"prompt_logprobs"')))


def test_prompt_logprobs_none_in_spread_request_defaults_is_clean(tmp_path):
    assert_clean(tmp_path, _posted_defaults_project("None"))


# ------------------------------------------------------------- 4. M202: a set grown in a helper, iterated elsewhere

GROWTH = {
    "union_assign": ('enabled |= {"create_ticket", "escalate"}', 'enabled |= {"runbook_search"}'),
    "difference_assign": ('enabled |= {"create_ticket", "escalate", "runbook_search"}\n                    enabled -= {"runbook_search"}',
                          'enabled ^= {"runbook_search"}'),
    "union_of_a_frozenset": ("enabled |= ONCALL_TOOLS", "enabled |= frozenset(SCHEMAS) - ONCALL_TOOLS"),
    "add": ('enabled.add("create_ticket")\n                    enabled.add("escalate")', 'enabled.add("runbook_search")'),
    "update_list": ('enabled.update(["create_ticket", "escalate"])', 'enabled.update(("runbook_search",))'),
    "update_set": ('enabled.update({"create_ticket", "escalate"})', 'enabled.update({"runbook_search"})'),
}


def _toolbox_project(growth: str, ordered: bool):
    """Mistral's SDK; the enabled tool names collected in a registry module, iterated in the agent module."""
    on_call, default = GROWTH[growth]
    names = "sorted(enabled_tools(role))" if ordered else "enabled_tools(role)"
    return {
        "toolbox/__init__.py": "",
        "toolbox/registry.py": f'''
            ONCALL_TOOLS = frozenset({{"create_ticket", "escalate"}})
            SCHEMAS = {{
                "lookup_host": {{"description": "Return the owner, rack and status of a host.",
                                 "parameters": {{"type": "object", "properties": {{"host": {{"type": "string"}}}}}}}},
                "create_ticket": {{"description": "Open a ticket in the on-call queue.",
                                   "parameters": {{"type": "object", "properties": {{"title": {{"type": "string"}}}}}}}},
                "escalate": {{"description": "Page the secondary on-call engineer.",
                              "parameters": {{"type": "object", "properties": {{"reason": {{"type": "string"}}}}}}}},
                "runbook_search": {{"description": "Search the runbooks by keyword.",
                                    "parameters": {{"type": "object", "properties": {{"q": {{"type": "string"}}}}}}}},
            }}


            def enabled_tools(role):
                enabled = set()
                enabled.add("lookup_host")
                if role == "oncall":
                    {on_call}
                else:
                    {default}
                return enabled
            ''',
        "toolbox/agent.py": f'''
            import os

            from mistralai import Mistral

            from toolbox.registry import SCHEMAS, enabled_tools

            SYSTEM = "You are the infrastructure assistant. Use a tool whenever a question is about a host or an incident."
            mistral = Mistral(api_key=os.environ["MISTRAL_API_KEY"])


            def ask(role, messages):
                tools = []
                for name in {names}:
                    tools.append({{"type": "function", "function": {{"name": name, **SCHEMAS[name]}}}})
                res = mistral.chat.complete(
                    model="mistral-large-latest",
                    messages=[{{"role": "system", "content": SYSTEM}}, *messages],
                    tools=tools,
                )
                return res.choices[0].message
            ''',
    }


@pytest.mark.parametrize("growth", list(GROWTH))
def test_set_grown_in_a_helper_is_reported_once_where_iterated(tmp_path, growth):
    assert_hazard(tmp_path, (_toolbox_project(growth, False), "toolbox/agent.py",
                             ("M202", "toolbox/agent.py", "for name in enabled_tools(role)")))


@pytest.mark.parametrize("growth", list(GROWTH))
def test_set_grown_in_a_helper_iterated_sorted_is_clean(tmp_path, growth):
    assert_clean(tmp_path, _toolbox_project(growth, True))
