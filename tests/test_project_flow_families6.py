"""Families of the sixth round (issue 29's closing list of what the flow did not follow): each a general rule
with a multi-module project of its own and a clean counter-example.

1. The model named where a chat model is built (``ChatAnthropic(model="claude-3-5-haiku-latest")`` in a factory
   function, a module-level model imported elsewhere, ``self.llm = make_llm()`` in ``__init__``, the name held
   by a settings constant) is the model of the ``invoke`` made on it in another method or module: the
   per-model minimum of a cache breakpoint (M703) is that model's, not the provider's smallest.
2. Prompt state written from other scopes: a closure's free name bound in the function that made it (not only
   its parameters), a module-level name rebound in a function under ``global``, an enclosing function's name
   rebound under ``nonlocal``, and an attribute written ``setattr(self, "name", v)`` with a constant name: the
   value read where the request is made (another function, method or module) is the one so written; a
   module-level list changed in place by the function that sends it (``SYSTEM_PARTS.insert(0, ...)``, imported
   from another module) is the module's value with those changes.
3. Prompts looked up by name and made by class methods: a registry object filled by ``register("planner", text)``
   (a key written as a name bound to a literal is that key) and read by ``get("planner")`` (the key the call gives
   picks that entry, not any of them), and ``cls(...)`` in a ``@classmethod`` (``Prompt.from_policy(...)``,
   ``Agent.from_config(...)``) is an object of that class.
4. Jinja templates rendered from Python through a ``FileSystemLoader`` of the project that ``{% include %}`` or
   ``{% extends %}`` another file of the loader: the included file's output, or the parent's with the child's
   blocks in place, is laid out with the render's values, so a volatile value given to it is found.
5. A per-request ``cache_salt`` (M401) built in another module: the message names that module's file with the
   line of the volatile call (it said ``line N``, which read as a line of the file reported).
6. Messages built by generators: a function that ``yield``s message dicts (and ``yield from`` another one) is,
   called, the list of what it yields in order (``list(conversation(q))``, ``[*gen()]``, a loop over it).
7. Parts grown by helpers: a list passed to a function of its module that changes that parameter in place
   (``add_header(parts)`` doing ``parts.append(...)``) holds, after the call, what the function added.
"""

from __future__ import annotations

import json

from flow_harness import assert_clean, assert_hazard, findings, write
from promptlint.driver.lint import lint
from promptlint.project.config import Settings
from test_agent_call_shapes import POLICY, QUESTION, TOKENIZER, TS, enc, m101_figures

# 1,300+ tokens in the pinned tokenizer: over claude-sonnet-4-5's 1,024-token minimum, under claude-3-5-haiku's 2,048
GUIDE = "\n\n".join([POLICY] * 3)
HAIKU_MINIMUM = 2048  # promptlint/data/hosted-cache-minimums.json, anthropic claude-3-5-haiku (vendor table)


def _line(tmp_path, name, needle):
    text = (tmp_path / name).read_text(encoding="utf-8")
    return next(i for i, t in enumerate(text.splitlines(), 1) if needle in t)


# ------------------------------------------------------------- 1. the model named by the constructor

def _constructed(model: str):
    return {
        "guide.py": f'''
            GUIDE = {json.dumps(GUIDE)}
            ''',
        "settings.py": f'''
            FAST_MODEL = "{model}"
            ''',
        "models.py": f'''
            from langchain_anthropic import ChatAnthropic

            from settings import FAST_MODEL


            def make_llm(temperature: float = 0.0):
                return ChatAnthropic(model=FAST_MODEL, temperature=temperature, max_tokens=512)


            triage_model = ChatAnthropic(model_name="{model}", max_tokens=64)
            ''',
        "support.py": '''
            from langchain_core.messages import HumanMessage, SystemMessage

            from guide import GUIDE
            from models import make_llm


            def lookup_order(order_id: str) -> str:
                """Look up an order by number."""
                return order_id


            class SupportAgent:
                def __init__(self) -> None:
                    self.llm = make_llm().bind_tools([lookup_order])

                def system(self) -> SystemMessage:
                    return SystemMessage(content=[
                        {"type": "text", "text": GUIDE, "cache_control": {"type": "ephemeral"}},
                    ])

                def answer(self, question: str) -> str:
                    return self.llm.invoke([self.system(), HumanMessage(question)]).content
            ''',
        "triage.py": '''
            from langchain_core.messages import HumanMessage, SystemMessage

            from guide import GUIDE
            from models import triage_model

            SYSTEM = SystemMessage(content=[{"type": "text", "text": GUIDE, "cache_control": {"type": "ephemeral"}}])


            async def label(ticket: str) -> str:
                reply = await triage_model.ainvoke([SYSTEM, HumanMessage(ticket)])
                return reply.content
            ''',
    }


def test_model_of_a_factory_built_chat_model_sets_the_breakpoint_minimum(tmp_path, qwen):
    write(tmp_path, _constructed("claude-3-5-haiku-latest"))
    report = findings(tmp_path, "support.py")
    assert report == [("M703", "support.py", _line(tmp_path, "support.py", '"cache_control"'))]


def test_model_of_an_imported_chat_model_sets_the_breakpoint_minimum(tmp_path, qwen):
    write(tmp_path, _constructed("claude-3-5-haiku-latest"))
    assert findings(tmp_path, "triage.py") == [("M703", "triage.py", _line(tmp_path, "triage.py", '"cache_control"'))]


def test_constructed_model_figures(tmp_path, qwen):
    """The prefix the breakpoint closes is the guide alone (the system block), counted by hand."""
    write(tmp_path, _constructed("claude-3-5-haiku-latest"))
    report = lint([str(tmp_path / "support.py")], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=False)
    (f,) = report.findings
    n = len(enc(qwen, GUIDE))
    assert 1024 < n < HAIKU_MINIMUM
    assert f"closes a {n:,}-token prefix, below the {HAIKU_MINIMUM:,}-token minimum of `claude-3-5-haiku-latest`" in f.message


def test_constructed_model_over_its_minimum_is_clean(tmp_path):
    """The same project on claude-sonnet-4-5 (1,024 tokens): the breakpoint caches, nothing to report."""
    write(tmp_path, _constructed("claude-sonnet-4-5"))
    for name in ("support.py", "triage.py", "models.py"):
        assert findings(tmp_path, name) == []


# ------------------------------------------------------------- 2. prompt state written from other scopes

STAMP = "datetime.now().isoformat(sep=' ', timespec='seconds')"


def _m101(tmp_path, qwen, linted, where, needle, system):
    """Exactly one M101, at ``needle`` in ``where``, with the figures of ``system`` (one ``{}`` for the timestamp)
    followed by the user's question, computed here: eligible = floor(min(ideal, P - 1) / B)."""
    report = lint([str(tmp_path / linted)], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=False)
    assert not report.errors, report.errors
    got = [(f.code, (tmp_path / f.path).relative_to(tmp_path).as_posix() if not f.path.startswith("/") else
            f.path[len(str(tmp_path)) + 1:], f.line) for f in report.findings]
    assert got == [("M101", where, _line(tmp_path, where, needle))]
    s, lost = m101_figures(qwen, system.format(TS[0]) + "\n\n" + QUESTION[0], system.format(TS[1]) + "\n\n" + QUESTION[0],
                           system.format(TS[0]) + "\n\n" + QUESTION[1])
    f = report.findings[0]
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == lost and lost > 20


def _policy():
    return {"policy.py": f'''
        POLICY = {json.dumps(POLICY)}
        '''}


SEND = ('client.messages.create(model="claude-sonnet-4-5", max_tokens=256, system=%s, '
        'messages=[{"role": "user", "content": question}])')


def _global(stamp: str):
    return {**_policy(),
            "state.py": f'''
                from datetime import datetime

                from policy import POLICY

                SYSTEM_PROMPT = POLICY


                def refresh() -> None:
                    global SYSTEM_PROMPT
                    SYSTEM_PROMPT = {stamp}
                ''',
            "chat.py": '''
                import anthropic

                import state

                client = anthropic.Anthropic()


                def ask(question: str):
                    state.refresh()
                    return %s
                ''' % SEND % "state.SYSTEM_PROMPT"}


def test_global_rebound_in_a_function_reaches_the_sender(tmp_path, qwen):
    write(tmp_path, _global(f'f"Now: {{{STAMP}}}\\n\\n" + POLICY'))
    _m101(tmp_path, qwen, "chat.py", "state.py", "datetime.now()", "Now: {}\n\n" + POLICY)


def test_global_rebound_to_static_text_is_clean(tmp_path):
    write(tmp_path, _global('POLICY + "\\n\\nAnswer in English."'))
    for name in ("chat.py", "state.py"):
        assert findings(tmp_path, name) == []


def _closure(header: str):
    return {**_policy(),
            "sessions.py": f'''
                from datetime import datetime

                import anthropic

                from policy import POLICY

                client = anthropic.Anthropic()


                def make_session(tone: str = "plain"):
                    header = {header}
                    system = header + "\\n\\n" + POLICY
                    turns = 0

                    def ask(question: str):
                        nonlocal turns
                        turns += 1
                        return %s

                    return ask
                ''' % SEND % "system",
            "app.py": '''
                from sessions import make_session

                ask = make_session("friendly")


                def handle(question: str):
                    return ask(question)
                '''}


def test_closure_free_name_bound_in_its_maker(tmp_path, qwen):
    write(tmp_path, _closure(f'f"Session opened {{{STAMP}}}"'))
    _m101(tmp_path, qwen, "sessions.py", "sessions.py", "datetime.now()", "Session opened {}\n\n" + POLICY)


def test_closure_free_name_static_is_clean(tmp_path):
    write(tmp_path, _closure('f"Tone: {tone}."'))
    for name in ("sessions.py", "app.py"):
        assert findings(tmp_path, name) == []


def _nonlocal(reset: str):
    return {**_policy(),
            "chat.py": f'''
                from datetime import datetime

                import anthropic

                from policy import POLICY

                client = anthropic.Anthropic()


                def make_chat():
                    system = POLICY

                    def reset() -> None:
                        nonlocal system
                        system = {reset}

                    def ask(question: str):
                        return %s

                    return reset, ask
                ''' % SEND % "system"}


def test_nonlocal_rebound_in_a_sibling_closure(tmp_path, qwen):
    write(tmp_path, _nonlocal(f'f"Reset at {{{STAMP}}}\\n\\n" + POLICY'))
    _m101(tmp_path, qwen, "chat.py", "chat.py", "datetime.now()", "Reset at {}\n\n" + POLICY)


def test_nonlocal_rebound_to_static_text_is_clean(tmp_path):
    write(tmp_path, _nonlocal('"Be brief.\\n\\n" + POLICY'))
    assert findings(tmp_path, "chat.py") == []


def _setattr(value: str):
    return {**_policy(),
            "persona.py": f'''
                from datetime import datetime

                from policy import POLICY


                class Persona:
                    def __init__(self, **overrides: str) -> None:
                        setattr(self, "system", {value})
                        for key, text in overrides.items():
                            setattr(self, key, text)
                ''',
            "bot.py": '''
                import anthropic

                from persona import Persona

                client = anthropic.Anthropic()


                class Bot:
                    def __init__(self) -> None:
                        self.persona = Persona()

                    def ask(self, question: str):
                        return %s
                ''' % SEND % "self.persona.system"}


def test_setattr_with_a_constant_name_is_the_attribute(tmp_path, qwen):
    write(tmp_path, _setattr(f'f"Started {{{STAMP}}}\\n\\n" + POLICY'))
    _m101(tmp_path, qwen, "bot.py", "persona.py", "datetime.now()", "Started {}\n\n" + POLICY)


def test_setattr_with_static_text_is_clean(tmp_path):
    write(tmp_path, _setattr("POLICY"))
    for name in ("bot.py", "persona.py"):
        assert findings(tmp_path, name) == []



def _changed_in_place(change: str):
    return {**_policy(),
            "state.py": '''
                from policy import POLICY

                SYSTEM_PARTS = [POLICY]
                ''',
            "chat.py": '''
                from datetime import datetime

                import anthropic

                from state import SYSTEM_PARTS

                client = anthropic.Anthropic()


                def ask(question: str):
                    SYSTEM_PARTS.%s
                    return %s
                ''' % (change, SEND % '"\\n\\n".join(SYSTEM_PARTS)')}


def test_module_list_changed_in_place_by_the_sender(tmp_path, qwen):
    write(tmp_path, _changed_in_place(f'insert(0, f"Now {{{STAMP}}}")'))
    _m101(tmp_path, qwen, "chat.py", "chat.py", "datetime.now()", "Now {}\n\n" + POLICY)


def test_module_list_changed_in_place_after_the_policy_is_clean(tmp_path):
    write(tmp_path, _changed_in_place(f'append(f"Now {{{STAMP}}}")'))
    for name in ("chat.py", "state.py"):
        assert findings(tmp_path, name) == []


# ------------------------------------------------------------- 3. prompts by name and class-method constructors

def _registry(planner: str, reminder: str):
    return {**_policy(),
            "registry.py": '''
                class PromptRegistry:
                    def __init__(self) -> None:
                        self._prompts: dict = {}

                    def register(self, name: str, text: str) -> None:
                        self._prompts[name] = text

                    def get(self, name: str) -> str:
                        return self._prompts[name]


                prompts = PromptRegistry()
                ''',
            "setup_prompts.py": f'''
                from datetime import datetime

                from policy import POLICY
                from registry import prompts

                prompts.register("planner", {planner})
                prompts.register("reminder", {reminder})
                ''',
            "planner.py": '''
                import anthropic

                import setup_prompts  # noqa: F401  (registers the prompts)
                from registry import prompts

                client = anthropic.Anthropic()


                def plan(question: str):
                    return %s
                ''' % SEND % 'prompts.get("planner")'}


def test_prompt_registered_by_name_and_looked_up(tmp_path, qwen):
    write(tmp_path, _registry(f'f"Now {{{STAMP}}}\\n\\n" + POLICY', '"Check the order status first."'))
    _m101(tmp_path, qwen, "planner.py", "setup_prompts.py", "datetime.now()", "Now {}\n\n" + POLICY)


def test_prompt_looked_up_by_name_takes_only_its_entry(tmp_path):
    """The clock is registered under another name than the one sent: clean."""
    write(tmp_path, _registry("POLICY", f'f"Now {{{STAMP}}}"'))
    assert findings(tmp_path, "planner.py") == []


def _classmethod(body: str):
    return {**_policy(),
            "prompt.py": f'''
                from datetime import datetime


                class Prompt:
                    def __init__(self, text: str) -> None:
                        self.text = text

                    @classmethod
                    def from_policy(cls, policy: str) -> "Prompt":
                        return cls({body})
                ''',
            "agent.py": '''
                import anthropic

                from policy import POLICY
                from prompt import Prompt

                client = anthropic.Anthropic()


                class Agent:
                    def __init__(self, prompt: Prompt) -> None:
                        self.prompt = prompt

                    @classmethod
                    def from_config(cls, policy: str = POLICY) -> "Agent":
                        return cls(Prompt.from_policy(policy))

                    def ask(self, question: str):
                        return %s


                def handle(question: str):
                    return Agent.from_config().ask(question)
                ''' % SEND % "self.prompt.text"}


def test_classmethod_constructors_make_objects_of_their_class(tmp_path, qwen):
    write(tmp_path, _classmethod(f'f"Now {{{STAMP}}}\\n\\n" + policy'))
    _m101(tmp_path, qwen, "agent.py", "prompt.py", "datetime.now()", "Now {}\n\n" + POLICY)


def test_classmethod_constructor_with_static_text_is_clean(tmp_path):
    write(tmp_path, _classmethod('policy + "\\n\\nAnswer in English."'))
    for name in ("agent.py", "prompt.py"):
        assert findings(tmp_path, name) == []


# ------------------------------------------------------------- 4. Jinja include and extends

def _jinja(header: str, intro: str):
    return {**_policy(),
            "templates/header.j2": header + "\n",
            "templates/support.j2": '''
                {% include "header.j2" %}

                {{ policy }}
                ''',
            "templates/base.j2": '''
                {% block intro %}You are the shop's assistant.{% endblock %}

                {{ policy }}
                ''',
            "templates/returns.j2": '''
                {% extends "base.j2" %}
                {% block intro %}INTRO{% endblock %}
                '''.replace("INTRO", intro),
            "prompts.py": '''
                from datetime import datetime

                from jinja2 import Environment, FileSystemLoader

                from policy import POLICY

                env = Environment(loader=FileSystemLoader("templates"))


                def support_prompt() -> str:
                    return env.get_template("support.j2").render(started=%s, policy=POLICY)


                def returns_prompt() -> str:
                    return env.get_template("returns.j2").render(policy=POLICY, now=%s)
                ''' % (STAMP, STAMP),
            **{f"{kind}_agent.py": '''
                import anthropic

                from prompts import %s_prompt

                client = anthropic.Anthropic()


                def answer(question: str):
                    return %s
                ''' % (kind, SEND % f"{kind}_prompt()") for kind in ("support", "returns")}}


def test_jinja_include_lays_out_the_included_file(tmp_path, qwen):
    write(tmp_path, _jinja("Session started {{ started }}.", "Handle returns."))
    _m101(tmp_path, qwen, "support_agent.py", "prompts.py", "started=datetime.now()", "Session started {}.\n\n" + POLICY)


def test_jinja_extends_lays_out_the_parent_with_the_child_blocks(tmp_path, qwen):
    write(tmp_path, _jinja("Welcome.", "Now {{ now }}. Handle returns."))
    _m101(tmp_path, qwen, "returns_agent.py", "prompts.py", "now=datetime.now()", "Now {}. Handle returns.\n\n" + POLICY)


def test_jinja_include_and_extends_with_static_text_are_clean(tmp_path):
    write(tmp_path, _jinja("Welcome.", "Handle returns."))
    for name in ("support_agent.py", "returns_agent.py", "prompts.py"):
        assert findings(tmp_path, name) == []


# ------------------------------------------------------------- 5. M401 names the file that builds the salt

def _salted(salt: str):
    return {
        "salts.py": f'''
            import uuid


            def request_salt(tenant: str) -> str:
                return {salt}
            ''',
        "client.py": '''
            from openai import OpenAI

            from salts import request_salt

            client = OpenAI(base_url="http://vllm.internal:8000/v1", api_key="none")


            def ask(tenant: str, question: str):
                return client.chat.completions.create(
                    model="Qwen/Qwen2.5-7B-Instruct",
                    messages=[{"role": "user", "content": question}],
                    extra_body={"cache_salt": request_salt(tenant)},
                )
            ''',
    }


def test_salt_built_in_another_module_names_its_file(tmp_path):
    write(tmp_path, _salted('f"{tenant}-{uuid.uuid4().hex}"'))
    report = lint([str(tmp_path / "client.py")], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=False)
    (f,) = report.findings
    assert (f.code, f.line) == ("M401", _line(tmp_path, "client.py", '"cache_salt"'))
    made = _line(tmp_path, "salts.py", "uuid.uuid4()")
    assert f"salts.py:{made}) changes on every request" in f.message
    assert f"(line {made})" not in f.message


def test_salt_per_tenant_in_another_module_is_clean(tmp_path):
    write(tmp_path, _salted('f"tenant-{tenant}"'))
    for name in ("client.py", "salts.py"):
        assert findings(tmp_path, name) == []


# ------------------------------------------------------------- 6. messages yielded by generators

def _generators(order: str):
    first, last = ("stamp", "policy") if order == "stamp first" else ("policy", "stamp")
    return {**_policy(),
            "messages.py": f'''
                from datetime import datetime
                from typing import Iterator

                from policy import POLICY


                def system_messages() -> Iterator[dict]:
                    yield {{"role": "system", "content": {'f"Now {%s}"' % STAMP if first == "stamp" else "POLICY"}}}
                    yield {{"role": "system", "content": {'f"Now {%s}"' % STAMP if last == "stamp" else "POLICY"}}}


                def conversation(question: str) -> Iterator[dict]:
                    yield from system_messages()
                    yield {{"role": "user", "content": question}}
                ''',
            "client.py": '''
                from openai import OpenAI

                from messages import conversation

                client = OpenAI()


                def ask(question: str):
                    return client.chat.completions.create(model="gpt-4o", messages=list(conversation(question)))
                '''}


def test_generator_yields_the_messages_in_order(tmp_path, qwen):
    write(tmp_path, _generators("stamp first"))
    _m101(tmp_path, qwen, "client.py", "messages.py", "datetime.now()", "Now {}\n\n" + POLICY)


def test_generator_with_the_stamp_after_the_policy_is_clean(tmp_path):
    """The time is the last system message, right before the question: it loses no block of the policy."""
    write(tmp_path, _generators("policy first"))
    for name in ("client.py", "messages.py"):
        assert findings(tmp_path, name) == []


# ------------------------------------------------------------- 7. a list grown by the helpers it is passed to

def _helpers(order: str):
    calls = ("add_clock(parts)", "add_policy(parts)") if order == "clock first" else ("add_policy(parts)", "add_clock(parts)")
    return {**_policy(),
            "prompt_parts.py": f'''
                from datetime import datetime

                from policy import POLICY


                def add_clock(parts: list) -> None:
                    parts.append(f"Now {{{STAMP}}}")


                def add_policy(parts: list) -> None:
                    parts.extend([POLICY])


                def build_system() -> str:
                    parts: list = []
                    {calls[0]}
                    {calls[1]}
                    return "\\n\\n".join(parts)
                ''',
            "client.py": '''
                import anthropic

                from prompt_parts import build_system

                client = anthropic.Anthropic()


                def ask(question: str):
                    return %s
                ''' % SEND % "build_system()"}


def test_list_grown_by_the_helpers_it_is_passed_to(tmp_path, qwen):
    write(tmp_path, _helpers("clock first"))
    _m101(tmp_path, qwen, "client.py", "prompt_parts.py", "datetime.now()", "Now {}\n\n" + POLICY)


def test_list_grown_by_helpers_with_the_clock_last_is_clean(tmp_path):
    write(tmp_path, _helpers("policy first"))
    for name in ("client.py", "prompt_parts.py"):
        assert findings(tmp_path, name) == []


# A helper that grows a list, called inside a loop nested in an unrolled one, keeps the argument it was
# passed (the entry rebuilt for the inner level once dropped it: an internal error on this repository's own
# commands/diff.py); a call with more arguments than the helper names is not followed, never a crash.
_NESTED_HELPER = {
    "desk/agent.py": '''
        import datetime

        from openai import OpenAI

        client = OpenAI()
        POLICY = "Follow the shop policy, cite the handbook and answer briefly. " * 40


        def add(parts, text):
            parts.append(text)


        def ask(question):
            parts = []
            for group in (["Support desk"], [POLICY]):
                for name in group:
                    add(parts, datetime.datetime.now().isoformat())
                    add(parts, name)
            system = "\\n".join(parts)
            return client.chat.completions.create(model="gpt-4o", messages=[
                {"role": "system", "content": system}, {"role": "user", "content": question}])
    ''',
}


def test_a_helper_growing_a_list_inside_nested_loops_keeps_its_argument(tmp_path):
    assert_hazard(tmp_path, (_NESTED_HELPER, "desk/agent.py", ("M101", "desk/agent.py", "add(parts, datetime")))


def test_a_call_passing_more_arguments_than_the_helper_names_is_no_internal_error(tmp_path):
    source = _NESTED_HELPER["desk/agent.py"].replace("add(parts, name)", "add(parts, name, 1, 2)")
    source = source.replace("add(parts, datetime.datetime.now().isoformat())", "add(parts, 'Desk')")
    assert_clean(tmp_path, {"desk/agent.py": source})
