"""Families of the seventh round (issue 29; the four hazards the sixth unseen set missed, each closed as a family
with a multi-module project of its own and a clean counter-example):

1. Clocks and ids beyond the standard library (data in ``pysource.sinks.VOLATILE_CALLS``/``VOLATILE_MODULES``):
   Django's ``timezone.now()/localtime()/localdate()``, ``pandas.Timestamp.now()``, ``numpy.random.*``,
   ``pendulum.today()``, ``ulid``, ``shortuuid``, ``nanoid``, ``cuid``, ``ksuid``, ``uuid6/uuid7``, the other
   ``time`` counters; sent through an SDK client that an observability or structured-output wrapper returns
   (``wrap_openai(OpenAI())``: the call shape is the SDK's), and instructor's own ``client.create(...)`` on a
   client that ``instructor.from_openai/patch/from_anthropic(...)`` made in another module. A prompt module's
   function parameters that no call in it binds are what its callers pass per call, so a clock after them (in
   the last user message) loses nothing that could be shared.
"""

from __future__ import annotations

import json

import pytest
from flow_harness import assert_clean, assert_hazard, write
from test_agent_call_shapes import POLICY
from test_project_flow_families6 import _m101

# ------------------------------------------------------------- 1. clocks and ids of other libraries, wrapped clients


def _clock_project(stamp_import: str, stamp: str, first: bool):
    system = (f'f"Now: {{{stamp}}}\\n\\n" + POLICY' if first else "POLICY")
    question = "question" if first else f'f"{{question}}\\n\\nNow: {{{stamp}}}"'
    return {
        "prompts/__init__.py": "",
        "prompts/policy.py": f'''
            POLICY = {json.dumps(POLICY)}
            ''',
        "prompts/system.py": f'''
            {stamp_import}

            from .policy import POLICY


            def system_prompt() -> str:
                return {system}


            def user_turn(question: str) -> str:
                return {question}
            ''',
        "app/__init__.py": "",
        "app/llm.py": '''
            from langsmith.wrappers import wrap_openai
            from openai import OpenAI

            client = wrap_openai(OpenAI())
            ''',
        "app/chat.py": '''
            from app.llm import client
            from prompts.system import system_prompt, user_turn


            def ask(question: str) -> str:
                response = client.chat.completions.create(
                    model="gpt-4o-mini",
                    messages=[
                        {"role": "system", "content": system_prompt()},
                        {"role": "user", "content": user_turn(question)},
                    ],
                )
                return response.choices[0].message.content
            ''',
    }


DJANGO_STAMP = "timezone.localtime().isoformat(sep=' ', timespec='seconds')"
PANDAS_STAMP = "pd.Timestamp.now().isoformat(sep=' ', timespec='seconds')"  # found before too (a `now` call)


def test_django_clock_through_a_wrapped_client_figures(tmp_path, qwen):
    write(tmp_path, _clock_project("from django.utils import timezone", DJANGO_STAMP, first=True))
    _m101(tmp_path, qwen, "app/chat.py", "prompts/system.py", "timezone.localtime()", "Now: {}\n\n" + POLICY)


OTHER_SOURCES = {
    "django-localtime": ("from django.utils import timezone", "timezone.localtime():%Y-%m-%d %H:%M"),
    "django-localdate": ("from django.utils.timezone import localdate", "localdate()"),
    "pendulum-today": ("import pendulum", "pendulum.today().to_date_string()"),
    "numpy-random": ("import numpy as np", "np.random.randint(0, 10_000)"),
    "ulid": ("import ulid", "ulid.new()"),
    "shortuuid": ("import shortuuid", "shortuuid.uuid()"),
    "nanoid": ("from nanoid import generate", "generate(size=10)"),
    "uuid7": ("import uuid", "uuid.uuid7().hex"),
    "monotonic-ns": ("import time", "time.monotonic_ns()"),
}


@pytest.mark.parametrize("name", list(OTHER_SOURCES), ids=list(OTHER_SOURCES))
def test_other_libraries_clocks_and_ids_first(tmp_path, name):
    imp, stamp = OTHER_SOURCES[name]
    assert_hazard(tmp_path, (_clock_project(imp, stamp, first=True), "app/chat.py",
                             ("M101", "prompts/system.py", 'return f"Now: {')))


CLEAN_SOURCES = {**OTHER_SOURCES, "django-isoformat": ("from django.utils import timezone", DJANGO_STAMP),
                 "pandas": ("import pandas as pd", PANDAS_STAMP)}


@pytest.mark.parametrize("name", list(CLEAN_SOURCES), ids=list(CLEAN_SOURCES))
def test_other_libraries_clocks_after_the_question_are_clean(tmp_path, name):
    imp, stamp = CLEAN_SOURCES[name]
    assert_clean(tmp_path, _clock_project(imp, stamp, first=False))


def _instructor_project(wrapper: str, client: str, first: bool):
    """instructor's own ``client.create(response_model=..., messages=...)`` on a wrapped client of another module."""
    files = _clock_project("import shortuuid", "shortuuid.uuid()", first)
    files["app/llm.py"] = f'''
        import instructor
        import {client.split(".")[0]}

        client = instructor.{wrapper}({client}())
        '''
    files["app/chat.py"] = '''
        from pydantic import BaseModel

        from app.llm import client
        from prompts.system import system_prompt, user_turn


        class Answer(BaseModel):
            text: str
            sources: list[str]


        def ask(question: str) -> Answer:
            return client.create(
                model="gpt-4o-mini",
                response_model=Answer,
                messages=[
                    {"role": "system", "content": system_prompt()},
                    {"role": "user", "content": user_turn(question)},
                ],
            )
        '''
    return files


WRAPPERS = {"from-openai": ("from_openai", "openai.OpenAI"), "patch": ("patch", "openai.AsyncOpenAI"),
            "from-anthropic": ("from_anthropic", "anthropic.Anthropic")}


@pytest.mark.parametrize("name", list(WRAPPERS), ids=list(WRAPPERS))
def test_instructor_create_on_a_wrapped_client_sends_the_prompt(tmp_path, name):
    assert_hazard(tmp_path, (_instructor_project(*WRAPPERS[name], first=True), "app/chat.py",
                             ("M101", "prompts/system.py", 'return f"Now: {')))


@pytest.mark.parametrize("name", list(WRAPPERS), ids=list(WRAPPERS))
def test_instructor_create_with_the_id_last_is_clean(tmp_path, name):
    assert_clean(tmp_path, _instructor_project(*WRAPPERS[name], first=False))


# ------------------------------------------------------------- 2. vLLM offline: SamplingParams made elsewhere (M702)

def _vllm_batch(logprobs: str):
    """A nightly batch job: module-level offline LLM, params from a settings module, passed positionally."""
    return {
        "batch/__init__.py": "",
        "batch/settings.py": f'''
            from vllm import SamplingParams

            MODEL = "Qwen/Qwen2.5-7B-Instruct"
            GRADING_PARAMS = SamplingParams(
                temperature=0.0,
                max_tokens=32,
                {logprobs}
            )
            ''',
        "batch/grade.py": '''
            from vllm import LLM

            from .settings import GRADING_PARAMS, MODEL

            llm = LLM(model=MODEL, enable_prefix_caching=True)
            RUBRIC = "Grade the answer below from 1 to 5 for factual accuracy. Reply with the digit only."


            def grade(answers: list[str]) -> list[str]:
                prompts = [f"{RUBRIC}\\n\\n{answer}" for answer in answers]
                outputs = llm.generate(prompts, GRADING_PARAMS)
                return [o.outputs[0].text for o in outputs]
            ''',
    }


def _vllm_service(logprobs: str):
    """An offline chat service: the params come from a method of a profile object, the LLM from a cached getter."""
    return {
        "svc/__init__.py": "",
        "svc/profiles.py": f'''
            from dataclasses import dataclass

            from vllm import SamplingParams


            @dataclass
            class Profile:
                temperature: float = 0.3
                max_tokens: int = 512

                def sampling(self) -> SamplingParams:
                    return SamplingParams(
                        temperature=self.temperature,
                        max_tokens=self.max_tokens,
                        {logprobs}
                    )


            DEFAULT = Profile()
            ''',
        "svc/engine.py": '''
            from functools import cache

            from vllm import LLM


            @cache
            def engine() -> LLM:
                return LLM(model="meta-llama/Llama-3.1-8B-Instruct")
            ''',
        "svc/chat.py": '''
            from .engine import engine
            from .profiles import DEFAULT, Profile

            SYSTEM = "You answer questions about the Ferrow API. Cite the endpoint you rely on."


            def reply(question: str, profile: Profile = DEFAULT) -> str:
                messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
                out = engine().chat(messages, sampling_params=profile.sampling())
                return out[0].outputs[0].text
            ''',
    }


VLLM_CASES = {
    "settings-constant-positional": (_vllm_batch, "batch/grade.py", "batch/settings.py"),
    "profile-method-keyword": (_vllm_service, "svc/chat.py", "svc/profiles.py"),
}


@pytest.mark.parametrize("name", list(VLLM_CASES), ids=list(VLLM_CASES))
def test_sampling_params_made_elsewhere_ask_for_prompt_logprobs(tmp_path, name):
    make, linted, where = VLLM_CASES[name]
    assert_hazard(tmp_path, (make("prompt_logprobs=2,"), linted, ("M702", where, "prompt_logprobs=2,")))


@pytest.mark.parametrize("logprobs", ["prompt_logprobs=None,", "logprobs=2,"], ids=["none", "output-only"])
@pytest.mark.parametrize("name", list(VLLM_CASES), ids=list(VLLM_CASES))
def test_sampling_params_without_prompt_logprobs_are_clean(tmp_path, name, logprobs):
    assert_clean(tmp_path, VLLM_CASES[name][0](logprobs))


# ------------------------------------------------------------- 3. a merged mapping iterated into the system text (M201)

MERGES = {
    "pipe": ("def __init__(self, labels: dict[str, str] | None = None) -> None:",
             "self.labels = DEFAULT_LABELS | (labels or {})"),
    "dict-kwargs": ("def __init__(self, **labels: str) -> None:",
                    "self.labels = dict(DEFAULT_LABELS, **labels)"),
    "update": ("def __init__(self, labels: dict[str, str]) -> None:",
               "self.labels = dict(DEFAULT_LABELS); self.labels.update(labels)"),
}
ITERATIONS = {
    "loop-items": ("for name, meaning in {it}:\n                        lines.append(f\"- {{name}}: {{meaning}}\")",
                   "self.labels.items()"),
    "comprehension-keys": ("lines += [f\"- {{name}}\" for name in {it}]", "self.labels.keys()"),
}


def _labels(merge: str, iteration: str, sort: bool):
    init, assign = MERGES[merge]
    body, it = ITERATIONS[iteration]
    assign = assign.replace("; ", "\n                    ")
    loop = body.format(it=f"sorted({it})" if sort else it)
    labels_arg = '{"spam": "unsolicited bulk mail", "billing": "invoices and refunds"}'
    call = f"Labeler(**{labels_arg})" if merge == "dict-kwargs" else f"Labeler({labels_arg})"
    return {
        "triage/__init__.py": "",
        "triage/labels.py": f'''
            DEFAULT_LABELS = {{
                "bug": "something in the product does not work as documented",
                "question": "the customer asks how to do something",
                "outage": "a service is down for several customers",
            }}


            class Labeler:
                {init}
                    {assign}

                def system(self) -> str:
                    lines = ["Label the ticket with exactly one of these labels:"]
                    {loop}
                    return "\\n".join(lines)
            ''',
        "triage/run.py": f'''
            import anthropic

            from .labels import Labeler

            client = anthropic.Anthropic()
            LABELER = {call}


            def label(ticket: str) -> str:
                msg = client.messages.create(
                    model="claude-haiku-4-5",
                    max_tokens=16,
                    system=LABELER.system(),
                    messages=[{{"role": "user", "content": ticket}}],
                )
                return msg.content[0].text
            ''',
    }


LABEL_CASES = [(m, i) for m in MERGES for i in ITERATIONS]
LABEL_IDS = [f"{m}-{i}" for m, i in LABEL_CASES]


@pytest.mark.parametrize("merge,iteration", LABEL_CASES, ids=LABEL_IDS)
def test_merged_mapping_iterated_into_the_system_text(tmp_path, merge, iteration):
    needle = ITERATIONS[iteration][1]
    assert_hazard(tmp_path, (_labels(merge, iteration, sort=False), "triage/run.py",
                             ("M201", "triage/labels.py", needle)))


@pytest.mark.parametrize("merge,iteration", LABEL_CASES, ids=LABEL_IDS)
def test_merged_mapping_iterated_sorted_is_clean(tmp_path, merge, iteration):
    assert_clean(tmp_path, _labels(merge, iteration, sort=True))


def test_literal_mappings_merged_keep_their_written_order(tmp_path):
    """Both parts written in the module: the insertion order is the source's, the same in every process."""
    files = _labels("pipe", "loop-items", sort=False)
    files["triage/labels.py"] = files["triage/labels.py"].replace("DEFAULT_LABELS | (labels or {})",
                                                                  'DEFAULT_LABELS | {"spam": "bulk mail"}')
    assert_clean(tmp_path, files)


# ------------------------------------------------------------- 4. a salt from an object's generated field (M401)

FIELD_STYLES = {
    "dataclass-factory-function": ('''
        from dataclasses import dataclass, field
        from uuid import uuid4


        @dataclass
        class Turn:
            user: str
            marker: str = field(default_factory=uuid4)
        ''', "marker"),
    "pydantic-field-lambda": ('''
        import secrets

        from pydantic import BaseModel, Field


        class Turn(BaseModel):
            user: str
            marker: str = Field(default_factory=lambda: secrets.token_hex(8))
        ''', "marker"),
    "post-init": ('''
        import time
        from dataclasses import dataclass, field


        @dataclass
        class Turn:
            user: str
            started: int = field(init=False)

            def __post_init__(self) -> None:
                self.started = time.time_ns()
        ''', "started"),
}


def _turns(style: str, per_request: bool):
    source, attr = FIELD_STYLES[style]
    salt = f'f"{{self.user}}:{{self.{attr}}}"' if per_request else "self.user"
    return {
        "chatsvc/__init__.py": "",
        "chatsvc/turns.py": source.rstrip() + f'''

            def vllm_extras(self) -> dict:
                return {{"cache_salt": {salt}, "top_k": 20}}
        ''',
        "chatsvc/answer.py": '''
            from openai import AsyncOpenAI

            from .turns import Turn

            llm = AsyncOpenAI(base_url="http://vllm:8000/v1", api_key="none")
            SYSTEM = "You are the assistant of the Tallow knowledge base. Answer from the articles you are given."


            async def answer(turn: Turn, question: str) -> str:
                response = await llm.chat.completions.create(
                    model="Qwen/Qwen2.5-7B-Instruct",
                    messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
                    extra_body=turn.vllm_extras(),
                )
                return response.choices[0].message.content
            ''',
    }


@pytest.mark.parametrize("style", list(FIELD_STYLES), ids=list(FIELD_STYLES))
def test_salt_from_a_generated_field_of_an_annotated_parameter(tmp_path, style):
    assert_hazard(tmp_path, (_turns(style, True), "chatsvc/answer.py", ("M401", "chatsvc/turns.py", '"cache_salt": f"')))


@pytest.mark.parametrize("style", list(FIELD_STYLES), ids=list(FIELD_STYLES))
def test_salt_per_user_of_an_annotated_parameter_is_clean(tmp_path, style):
    assert_clean(tmp_path, _turns(style, False))
