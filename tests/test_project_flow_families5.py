"""Families closed after the fifth unseen set (tests/test_project_flow_unseen5.py): each a general rule
with a multi-module project of its own, not the unseen case, and a clean counter-example.

1. A ``cache_control`` block marker in a request whose model is not named at the call (a LangChain chat
   model's ``invoke``, a LlamaIndex ``llm.chat``: the model sits on the constructor): Anthropic's marker, read
   only by providers that cache explicitly, so a volatile value in a block after the last breakpoint is
   not M101 (the unseen set's false alarm); one before the breakpoint still is M106.
2. FastAPI dependency injection: a parameter whose default is `Depends(provider)` (or `Security`), or annotated
   `Annotated[T, Depends(provider)]`, holds what the provider returns; `Depends()` names the annotated class.
3. `cache_salt` in a request body this call does not spell (a body builder's dict posted with `json=` to a
   provider endpoint, spread with `**`, another module's): judged at the dict's key (M401).
4. `prompt_logprobs` in an `extra_body` dict defined elsewhere (an imported name, `settings.X`): M702 at its key.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from promptlint.driver.lint import lint
from promptlint.project.config import Settings
from test_agent_call_shapes import POLICY, TOKENIZER, TS, assert_m101

# 1,300+ tokens (POLICY is 438 in the pinned tokenizer): over the 1,024-token claude-sonnet-4-5 minimum
HS = json.dumps("\n\n".join([POLICY] * 3))


def _write(tmp_path, files):
    for name, source in files.items():
        (tmp_path / name).write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")


def _lint(tmp_path, name):
    report = lint([str(tmp_path / name)], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=False)
    assert not report.errors, report.errors
    return [(f.code, Path(f.path).relative_to(tmp_path).as_posix(), f.line) for f in report.findings]


def _line(tmp_path, name, needle):
    text = (tmp_path / name).read_text(encoding="utf-8")
    return next(i for i, t in enumerate(text.splitlines(), 1) if needle in t)


# ------------------------------------------------------------- 1. LangChain content blocks after the breakpoint

def _langchain(stamp_first: bool):
    blocks = ('''
                    {"type": "text", "text": f"Session {uuid.uuid4()} opened.\\n\\n" + GUIDE, "cache_control": {"type": "ephemeral"}},
    ''' if stamp_first else '''
                    {"type": "text", "text": GUIDE, "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": f"Session {uuid.uuid4()} opened."},
    ''').strip("\n")
    return {
        "guide.py": f'''
            GUIDE = {HS}
            ''',
        "prompts.py": '''
            import uuid

            from langchain_core.messages import SystemMessage

            from guide import GUIDE


            class Persona:
                def message(self) -> SystemMessage:
                    return SystemMessage(content=[
%s
                    ])
            ''' % textwrap.indent(textwrap.dedent(blocks), " " * 20),
        "agent.py": '''
            from langchain_anthropic import ChatAnthropic
            from langchain_core.messages import HumanMessage

            from prompts import Persona


            class Agent:
                def __init__(self) -> None:
                    self.model = ChatAnthropic(model="claude-sonnet-4-5", max_tokens=512)
                    self.persona = Persona()

                def ask(self, question: str, history: list) -> str:
                    return self.model.invoke([self.persona.message(), *history, HumanMessage(question)]).content
            ''',
    }


def test_langchain_volatile_block_after_the_last_breakpoint_is_clean(tmp_path):
    _write(tmp_path, _langchain(stamp_first=False))
    for name in ("agent.py", "prompts.py"):
        assert _lint(tmp_path, name) == []


def test_langchain_volatile_before_the_breakpoint_is_m106(tmp_path):
    _write(tmp_path, _langchain(stamp_first=True))
    assert _lint(tmp_path, "agent.py") == [("M106", "prompts.py", _line(tmp_path, "prompts.py", "uuid.uuid4()"))]


# ------------------------------------------------------------- 3. a per-request cache salt in a body posted over HTTP

def _salted_post(salt: str):
    return {
        "policy.py": f'''
            POLICY = {json.dumps(POLICY)}
            ''',
        "body.py": '''
            import hashlib
            import time

            from policy import POLICY


            def build(user: str, text: str) -> dict:
                payload = {"model": "mistralai/Mistral-7B-Instruct-v0.3", "max_tokens": 256}
                payload["messages"] = [{"role": "system", "content": POLICY}, {"role": "user", "content": text}]
                return {**payload, "cache_salt": %s}
            ''' % salt,
        "gateway.py": '''
            import requests

            from body import build

            BASE = "http://inference.internal:8000"
            session = requests.Session()


            def relay(user: str, text: str) -> str:
                payload = build(user, text)
                reply = session.post(BASE + "/v1/chat/completions", json=payload, timeout=30)
                return reply.json()["choices"][0]["message"]["content"]
            ''',
    }


def test_salt_from_the_clock_in_a_posted_body_is_m401(tmp_path):
    _write(tmp_path, _salted_post('f"{user}-{time.time_ns()}"'))
    assert _lint(tmp_path, "gateway.py") == [("M401", "body.py", _line(tmp_path, "body.py", "time.time_ns()"))]


def test_salt_per_user_in_a_posted_body_is_clean(tmp_path):
    _write(tmp_path, _salted_post("hashlib.sha256(user.encode()).hexdigest()"))
    assert _lint(tmp_path, "gateway.py") == []


# ------------------------------------------------------------- 4. prompt_logprobs in an imported extra_body dict

def _vllm(flags: str):
    return {
        "policy.py": f'''
            POLICY = {json.dumps(POLICY)}
            ''',
        "config.py": '''
            SAMPLING = {"min_p": 0.05, %s}
            ''' % flags,
        "service.py": '''
            from openai import AsyncOpenAI

            import config
            from policy import POLICY

            llm = AsyncOpenAI(base_url="http://vllm:8000/v1", api_key="unused")


            async def classify(ticket: str) -> str:
                out = await llm.chat.completions.create(
                    model="meta-llama/Llama-3.1-8B-Instruct",
                    messages=[{"role": "system", "content": POLICY}, {"role": "user", "content": ticket}],
                    extra_body=config.SAMPLING,
                )
                return out.choices[0].message.content
            ''',
    }


def test_prompt_logprobs_in_a_module_attribute_extra_body_is_m702(tmp_path):
    _write(tmp_path, _vllm('"prompt_logprobs": 5'))
    assert _lint(tmp_path, "service.py") == [("M702", "config.py", _line(tmp_path, "config.py", '"prompt_logprobs": 5'))]


def test_extra_body_without_prompt_logprobs_is_clean(tmp_path):
    _write(tmp_path, _vllm('"prompt_logprobs": None, "top_k": 40'))
    assert _lint(tmp_path, "service.py") == []


# ------------------------------------------------------------- 2. FastAPI dependency injection

def _injected(how: str, volatile_first: bool):
    system = ('f"Request received {datetime.now().strftime(\'%Y-%m-%d %H:%M:%S\')}.\\n\\n{POLICY}"' if volatile_first
              else 'f"{POLICY}\\n\\nAnswer for the {self.brand} store."')
    return {
        "policy.py": f'''
            POLICY = {json.dumps(POLICY)}
            ''',
        "book.py": '''
            from datetime import datetime

            from policy import POLICY


            class PromptBook:
                def __init__(self, brand: str = "Northwind") -> None:
                    self.brand = brand

                def chat(self, question: str) -> list:
                    return [{"role": "system", "content": %s}, {"role": "user", "content": question}]
            ''' % system,
        "deps.py": '''
            from book import PromptBook


            def get_book() -> PromptBook:
                return PromptBook("Northwind Traders")
            ''',
        "routes.py": '''
            from typing import Annotated

            from fastapi import APIRouter, Depends
            from openai import OpenAI

            from book import PromptBook
            from deps import get_book

            router = APIRouter()
            openai_client = OpenAI()


            @router.get("/answer")
            def answer(q: str, %s) -> str:
                out = openai_client.chat.completions.create(model="gpt-4o", messages=book.chat(q))
                return out.choices[0].message.content
            ''' % how,
    }


ANNOTATED = "book: Annotated[PromptBook, Depends(get_book)]"
BARE = "book: PromptBook = Depends()"


def _injected_m101(tmp_path, qwen, how):
    _write(tmp_path, _injected(how, volatile_first=True))
    report = lint([str(tmp_path / "routes.py")], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=False)
    assert not report.errors, report.errors
    findings = [f for f in report.findings if Path(f.path).name == "book.py"]
    assert len(findings) == len(report.findings)
    # figures by hand: the documented timestamp samples, the system block then the question (a blank line)
    assert_m101(qwen, findings, (tmp_path / "book.py").read_text(encoding="utf-8"), "datetime.now()",
                "Request received {}.\n\n" + POLICY, TS)


def test_annotated_depends_provider_in_another_module_is_followed(tmp_path, qwen):
    _injected_m101(tmp_path, qwen, ANNOTATED)


def test_bare_depends_on_the_annotated_class_is_followed(tmp_path, qwen):
    _injected_m101(tmp_path, qwen, BARE)


def test_injected_factory_with_a_static_system_prompt_is_clean(tmp_path):
    for how in (ANNOTATED, BARE):
        _write(tmp_path, _injected(how, volatile_first=False))
        assert _lint(tmp_path, "routes.py") == []


# ------------------------------------------------------------- 1b. the same rule for LlamaIndex content lists

def _llamaindex(id_first: bool):
    tag = '{"type": "text", "text": f"Conversation {uuid.uuid4()}."},'
    guide = '{"type": "text", "text": GUIDE, "cache_control": {"type": "ephemeral"}},'
    first, second = (tag, guide) if id_first else (guide, tag)
    return {
        "guide.py": f'''
            GUIDE = {HS}
            ''',
        "persona.py": f'''
            import uuid

            from llama_index.core.llms import ChatMessage

            from guide import GUIDE


            def system() -> ChatMessage:
                return ChatMessage(role="system", content=[
                    {first}
                    {second}
                ])
            ''',
        "bot.py": '''
            from llama_index.core.llms import ChatMessage
            from llama_index.llms.anthropic import Anthropic

            from persona import system

            llm = Anthropic(model="claude-sonnet-4-5")


            def reply(question: str) -> str:
                return str(llm.chat([system(), ChatMessage(role="user", content=question)]))
            ''',
    }


def test_llamaindex_id_block_after_the_last_breakpoint_is_clean(tmp_path):
    _write(tmp_path, _llamaindex(id_first=False))
    for name in ("bot.py", "persona.py"):
        assert _lint(tmp_path, name) == []


def test_llamaindex_id_block_before_the_breakpoint_is_m106(tmp_path):
    _write(tmp_path, _llamaindex(id_first=True))
    assert _lint(tmp_path, "bot.py") == [("M106", "persona.py", _line(tmp_path, "persona.py", "uuid.uuid4()"))]
