"""Prompts built across modules and classes the way agent code is laid out (prompts.py, agent.py with a
class, client.py making the call), and values built the long way (typed block constructors, dict(...),
a key set later, lists grown in place, copies), and directory listings feeding the prompt.

Each hazard is expected at the line that makes it, in the module that makes it, with the sending call
named; the figures are computed here from the test's own render of the request (blocks joined by a blank
line, docs/python.md "Measuring M101"), encoded with the pinned tokenizer: S = the first divergent token,
lost = floor(min(ideal, P - 1) / B) - floor(min(S, P - 1) / B). Sample values are the documented ones.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from promptlint.project.config import Settings
from promptlint.driver.lint import lint
from test_agent_call_shapes import B, DAY, POLICY, QUESTION, TOKENIZER, TS, line_of, m101_figures
from test_sdk_shapes import divergence, enc

PS = json.dumps(POLICY)  # the policy as one Python string literal on one line (textwrap.dedent keeps working)
LONG = "\n".join([POLICY] * 3)  # above Anthropic's 1,024-token minimum, so its breakpoint caches
PL = json.dumps(LONG)
EPOCH = ("1741944413.482113", "1741944420.917402")  # pysource.holes: the two samples of a number


@pytest.fixture
def tok(qwen):
    return qwen


def project(tmp_path, files):
    for name, source in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return {name: (tmp_path / name).read_text(encoding="utf-8") for name in files}


def check(tmp_path, *names, use_cache=False):
    report = lint([str(tmp_path / n) for n in names], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=use_cache)
    assert not report.errors, report.errors
    return report.findings


def where(findings):
    return [(f.code, Path(f.path).name, f.line) for f in findings]


# ----------------------------------------------------------------------------- family 1: across modules

GENERATOR = {
    "prompts.py": f'''
        from datetime import datetime

        POLICY = {PS}


        def build_system_prompt():
            stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S")
            return [{{"role": "system", "content": f"Current time: {{stamp}}\\n" + POLICY}}]
        ''',
    "agent.py": '''
        from prompts import build_system_prompt


        class SupportAgent:
            def __init__(self, client, model="gpt-4o"):
                self.client = client
                self.model = model

            def messages_for(self, question):
                msgs = build_system_prompt()
                msgs.append({"role": "user", "content": question})
                return msgs
        ''',
    "client.py": '''
        from openai import OpenAI

        from agent import SupportAgent

        client = OpenAI()
        agent = SupportAgent(client)


        def answer(question):
            return client.chat.completions.create(model=agent.model, messages=agent.messages_for(question))
        ''',
}


def test_prompt_generator_module_found_at_its_line_naming_the_call(tmp_path, tok):
    src = project(tmp_path, GENERATOR)
    findings = check(tmp_path, "client.py")
    assert where(findings) == [("M101", "prompts.py", line_of(src["prompts.py"], "datetime.now()"))]
    f = findings[0]
    system = "Current time: {}\n" + POLICY
    s, lost = m101_figures(tok, system.format(TS[0]) + "\n\n" + QUESTION[0], system.format(TS[1]) + "\n\n" + QUESTION[0],
                           system.format(TS[0]) + "\n\n" + QUESTION[1])
    assert f.first_divergent_token.index == s and f.arithmetic.lost_blocks == lost and lost > 20
    call = line_of(src["client.py"], "chat.completions.create")
    assert f"sent by `client.chat.completions.create(...)` at {tmp_path / 'client.py'}:{call}" in f.notes


def test_prompt_module_alone_is_a_hazard_source_and_says_the_call_was_not_seen(tmp_path, tok):
    src = project(tmp_path, GENERATOR)
    findings = check(tmp_path, "prompts.py")
    assert where(findings) == [("M101", "prompts.py", line_of(src["prompts.py"], "datetime.now()"))]
    f = findings[0]
    base, variant = (f"Current time: {t}\n" + POLICY for t in TS)
    a, b = enc(tok, base), enc(tok, variant)
    s = divergence(a, b)  # no per-request input: the ideal is the whole prompt
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == (len(b) - 1) // B - s // B
    assert any("`build_system_prompt()` returns" in n and "not in the linted files" in n for n in f.notes)


def test_the_importers_finding_replaces_the_modules_own_when_both_are_linted(tmp_path):
    src = project(tmp_path, GENERATOR)
    findings = check(tmp_path, "prompts.py", "agent.py", "client.py")
    assert where(findings) == [("M101", "prompts.py", line_of(src["prompts.py"], "datetime.now()"))]
    assert any(n.startswith("sent by `client.chat.completions.create(...)`") for n in findings[0].notes)
    assert not any("not in the linted files" in n for n in findings[0].notes)


def test_one_prompt_module_sent_by_two_linted_callers_is_one_finding_naming_both(tmp_path):
    """Two clients send the same imported prompt: one finding at its line, the second caller in an
    `also sent by` note (driver/lint.prefer_sent; it used to fail on the notes being a tuple)."""
    files = dict(GENERATOR, **{"other.py": GENERATOR["client.py"].replace("def answer(", "def answer_again(")})
    src = project(tmp_path, files)
    findings = check(tmp_path, "client.py", "other.py")
    assert where(findings) == [("M101", "prompts.py", line_of(src["prompts.py"], "datetime.now()"))]
    call = line_of(src["client.py"], "chat.completions.create")
    assert [n for n in findings[0].notes if "sent by" in n] == [
        f"sent by `client.chat.completions.create(...)` at {tmp_path / 'client.py'}:{call}",
        f"also sent by `client.chat.completions.create(...)` at {tmp_path / 'other.py'}:{call}"]


CHUNKS = {
    "prompt_text.py": f'''
        POLICY = {PS}
        ''',
    "chunks.py": '''
        import time
        from dataclasses import dataclass

        from prompt_text import POLICY


        @dataclass
        class Chunks:
            persona: str
            policy: str = POLICY


        class ChunkBuilder:
            def __init__(self, persona):
                self.chunks = Chunks(persona)
                self.stamp = f"Request epoch: {time.time()}"
        ''',
    "assembler.py": '''
        from chunks import ChunkBuilder


        class PromptAssembler:
            def __init__(self):
                self.builder = ChunkBuilder("You are the support agent of Nordwind Outdoor.")

            def system_text(self):
                b = self.builder
                return "\\n".join([b.stamp, b.chunks.persona, b.chunks.policy])
        ''',
    "client.py": '''
        import anthropic

        from assembler import PromptAssembler

        client = anthropic.Anthropic()


        def ask(question):
            return client.messages.create(
                model="claude-sonnet-4-5-20250929",
                max_tokens=512,
                system=PromptAssembler().system_text(),
                messages=[{"role": "user", "content": question}],
            )
        ''',
}


def test_chunk_fields_concatenated_by_another_class(tmp_path, tok):
    src = project(tmp_path, CHUNKS)
    findings = check(tmp_path, "client.py")
    assert where(findings) == [("M101", "chunks.py", line_of(src["chunks.py"], "time.time()"))]
    system = "Request epoch: {}\nYou are the support agent of Nordwind Outdoor.\n" + POLICY
    s, lost = m101_figures(tok, system.format(EPOCH[0]) + "\n\n" + QUESTION[0], system.format(EPOCH[1]) + "\n\n" + QUESTION[0],
                           system.format(EPOCH[0]) + "\n\n" + QUESTION[1])
    f = findings[0]
    assert f.first_divergent_token.index == s and f.arithmetic.lost_blocks == lost and lost > 20
    assert any(n.startswith("sent by `client.messages.create(...)`") for n in f.notes)


CONSTANTS = {
    "prompts/__init__.py": "",
    "prompts/system.py": f'''
        SYSTEM_PROMPT = {PL}
        ''',
    "client.py": '''
        from datetime import date

        import anthropic

        from prompts.system import SYSTEM_PROMPT

        client = anthropic.Anthropic()


        def ask(question):
            return client.messages.create(
                model="claude-sonnet-4-5-20250929",
                max_tokens=512,
                system=[
                    {"type": "text", "text": f"Today: {date.today()}"},
                    {"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}},
                ],
                messages=[{"role": "user", "content": question}],
            )
        ''',
}


def test_imported_system_prompt_counts_its_real_tokens_at_the_breakpoint(tmp_path, tok):
    src = project(tmp_path, CONSTANTS)
    findings = check(tmp_path, "client.py")
    assert where(findings) == [("M106", "client.py", line_of(src["client.py"], "Today:"))]
    base, variant = (f"Today: {d}\n\n{LONG}" for d in DAY)  # the prefix the system breakpoint closes
    a, b = enc(tok, base), enc(tok, variant)
    f = findings[0]
    assert f.first_divergent_token.index == divergence(a, b)
    assert f"the {len(a):,} tokens that breakpoint would cache" in f.message


def test_clean_counterparts_across_modules(tmp_path):
    project(tmp_path, {
        "prompts.py": f'''
            from datetime import date

            POLICY = {PS}


            def build_messages(question):
                return [
                    {{"role": "system", "content": POLICY}},
                    {{"role": "user", "content": question + f"\\n\\n(asked on {{date.today()}})"}},
                ]
            ''',
        "client.py": '''
            from openai import OpenAI

            from prompts import POLICY, build_messages

            client = OpenAI()


            def answer(question):
                return client.chat.completions.create(model="gpt-4o", messages=build_messages(question))


            def answer_plain(question):
                return client.chat.completions.create(
                    model="gpt-4o", messages=[{"role": "system", "content": POLICY}, {"role": "user", "content": question}]
                )
            ''',
    })
    assert check(tmp_path, "client.py", "prompts.py") == []


def test_a_changed_prompt_module_reanalyses_its_importer_from_the_cache(tmp_path):
    src = project(tmp_path, GENERATOR)
    assert len(check(tmp_path, "client.py", use_cache=True)) == 1
    assert len(check(tmp_path, "client.py", use_cache=True)) == 1  # from the cache
    fixed = src["prompts.py"].replace('f"Current time: {stamp}\\n" + POLICY', 'POLICY + f"\\nCurrent time: {stamp}"')
    assert fixed != src["prompts.py"]
    (tmp_path / "prompts.py").write_text(fixed, encoding="utf-8")
    assert check(tmp_path, "client.py", use_cache=True) == []


# ----------------------------------------------------------------------------- family 3: the long way

CACHED_BLOCK = {
    "set later": '''
        policy = dict(type="text", text=POLICY)
        blocks = [policy]
        blocks.insert(0, stamp)
        blocks = copy.deepcopy(blocks)
        blocks[-1]["cache_control"] = {"type": "ephemeral"}
        return blocks''',
    "spread": '''
        base = {"type": "text", "text": POLICY}
        cached = {**base, **{"cache_control": {"type": "ephemeral"}}}
        blocks = []
        blocks += [stamp]
        blocks.extend([cached])
        return list(blocks)''',
    "update": '''
        block = TextBlockParam(type="text", text=POLICY)
        block.update(cache_control={"type": "ephemeral"})
        out = [stamp]
        out.append(block)
        return out''',
    "typed": '''
        cached = BetaTextBlockParam(type="text", text=POLICY, cache_control=BetaCacheControlEphemeralParam(type="ephemeral"))
        return [stamp, cached]''',
}


@pytest.mark.parametrize("style", sorted(CACHED_BLOCK))
def test_blocks_built_the_long_way_keep_their_breakpoint(tmp_path, tok, style):
    body = textwrap.indent(textwrap.dedent(CACHED_BLOCK[style]).strip("\n"), "    ")
    src = project(tmp_path, {
        "blocks.py": f'''
import copy
from datetime import datetime

from anthropic.types import TextBlockParam
from anthropic.types.beta import BetaCacheControlEphemeralParam, BetaTextBlockParam

POLICY = {PL}


def system_blocks():
    stamp = TextBlockParam(type="text", text=f"Generated at {{datetime.now().isoformat()}}")
{body}
''',
        "client.py": '''
            import anthropic

            from blocks import system_blocks

            client = anthropic.Anthropic()


            def ask(question):
                return client.beta.messages.create(
                    model="claude-sonnet-4-5-20250929", max_tokens=512, system=system_blocks(),
                    messages=[{"role": "user", "content": question}],
                )
            ''',
    })
    findings = check(tmp_path, "client.py")
    assert where(findings) == [("M106", "blocks.py", line_of(src["blocks.py"], "datetime.now()"))]
    base, variant = (f"Generated at {t}\n\n{LONG}" for t in TS)
    a, b = enc(tok, base), enc(tok, variant)
    f = findings[0]
    assert f.first_divergent_token.index == divergence(a, b)
    assert f"the {len(a):,} tokens that breakpoint would cache" in f.message
    assert any(n.startswith("sent by `client.beta.messages.create(...)`") for n in f.notes)


def test_chat_completion_param_constructors_carry_their_content(tmp_path, tok):
    src = project(tmp_path, {
        "client.py": f'''
            import uuid

            from openai import OpenAI
            from openai.types.chat import ChatCompletionSystemMessageParam, ChatCompletionUserMessageParam

            POLICY = {PS}
            client = OpenAI()


            def answer(question):
                system = ChatCompletionSystemMessageParam(role="system", content=f"Trace {{uuid.uuid4()}}\\n" + POLICY)
                messages = [system]
                messages.append(ChatCompletionUserMessageParam(role="user", content=question))
                return client.chat.completions.create(model="gpt-4o", messages=messages)
            ''',
    })
    findings = check(tmp_path, "client.py")
    assert where(findings) == [("M101", "client.py", line_of(src["client.py"], "uuid.uuid4()"))]
    from promptlint.scenarios import volatile_value, volatile_variant

    ids = (volatile_value("id"), volatile_variant(volatile_value("id"), "id"))
    system = "Trace {}\n" + POLICY
    s, lost = m101_figures(tok, system.format(ids[0]) + "\n\n" + QUESTION[0], system.format(ids[1]) + "\n\n" + QUESTION[0],
                           system.format(ids[0]) + "\n\n" + QUESTION[1])
    assert findings[0].first_divergent_token.index == s and findings[0].arithmetic.lost_blocks == lost


# ----------------------------------------------------------------------------- family 4: listings

LISTING = {
    "knowledge.py": '''
        import os
        from pathlib import Path


        def load_docs(folder):
            return {name: (Path(folder) / name).read_text() for name in os.listdir(folder)}


        def load_sorted(folder):
            return {p.stem: p.read_text() for p in sorted(Path(folder).glob("*.md"))}
        ''',
    "agent.py": f'''
        from openai import OpenAI

        from knowledge import load_docs, load_sorted

        POLICY = {PS}
        client = OpenAI()


        def answer(question):
            docs = load_docs("kb")
            system = POLICY + "\\n\\n" + "\\n\\n".join(docs.values())
            return client.chat.completions.create(
                model="gpt-4o", messages=[{{"role": "system", "content": system}}, {{"role": "user", "content": question}}]
            )


        def answer_sorted(question):
            system = POLICY + "\\n\\n" + "\\n\\n".join(load_sorted("kb").values())
            return client.chat.completions.create(
                model="gpt-4o", messages=[{{"role": "system", "content": system}}, {{"role": "user", "content": question}}]
            )
        ''',
}


def test_unsorted_listing_in_another_module_reaches_the_prompt(tmp_path):
    # a dict built by a comprehension over the listing is reported at that comprehension's loop, where
    # `sorted(os.listdir(folder))` fixes it (issue 29, third unseen set): the join in agent.py only iterates the
    # dict, in the order the comprehension gave it
    src = project(tmp_path, LISTING)
    findings = check(tmp_path, "agent.py")
    assert where(findings) == [("M203", "knowledge.py", line_of(src["knowledge.py"], "os.listdir(folder)"))]
    assert "os.listdir() (file-system order)" in findings[0].message
    sent = line_of(src["agent.py"], "client.chat.completions.create(")
    assert f"sent by `client.chat.completions.create(...)` at {tmp_path / 'agent.py'}:{sent}" in findings[0].notes


LISTINGS = {  # a listing that feeds the prompt without sorted(), as knowledge modules write it: (code, the iterated value)
    "Path.iterdir": ("[p.read_text() for p in Path(folder).iterdir()]", "Path(folder).iterdir()"),
    "os.scandir": ("[open(e.path).read() for e in os.scandir(folder)]", "os.scandir("),
    "dict.fromkeys of glob": ("list(dict.fromkeys(glob.glob(folder + '/*.md')))", "dict.fromkeys("),
    "os.walk": ("[open(os.path.join(r, f)).read() for r, _, fs in os.walk(folder) for f in sorted(fs)]", "os.walk("),
    # the dict comprehension's own loop (where `sorted(...)` fixes it; issue 29, third unseen set)
    "Path.glob into a dict": ("list({p.stem: p.read_text() for p in Path(folder).glob('*.md')}.values())",
                              "Path(folder).glob("),
}


@pytest.mark.parametrize("style", sorted(LISTINGS))
def test_listing_styles_reach_the_prompt_from_another_module(tmp_path, style):
    expr, needle = LISTINGS[style]
    src = project(tmp_path, {
        "kb.py": f"""
            import glob
            import os
            from pathlib import Path


            def documents(folder):
                return {expr}
            """,
        "rag.py": """
            import anthropic

            from kb import documents

            client = anthropic.Anthropic()


            def ask(question):
                context = "\\n\\n".join(documents("kb"))
                return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system="Answer from the documents.",
                                              messages=[{"role": "user", "content": context + "\\n\\n" + question}])
            """,
    })
    findings = check(tmp_path, "rag.py")
    # the order is fixed where kb.py iterates the listing (where sorted() goes), reported there
    assert where(findings) == [("M203", "kb.py", line_of(src["kb.py"], needle))]
    f = findings[0]
    assert f.column == src["kb.py"].splitlines()[f.line - 1].index(needle) + 1  # the iterated listing
    call = line_of(src["rag.py"], "messages.create")
    assert f"sent by `client.messages.create(...)` at {tmp_path / 'rag.py'}:{call}" in f.notes


KB_LISTING = {
    "kb.py": """
        import os


        def documents(folder):
            return [open(os.path.join(folder, n)).read() for n in os.listdir(folder)]
        """,
    "rag.py": """
        import anthropic

        from kb import documents

        client = anthropic.Anthropic()


        def ask(question):
            context = "\\n\\n".join(documents("kb"))
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system="Answer from the documents.",
                                          messages=[{"role": "user", "content": context + "\\n\\n" + question}])
        """,
}


def test_sorted_listing_from_another_module_is_clean(tmp_path):
    project(tmp_path, {
        "kb.py": """
            import os


            def documents(folder):
                return [open(os.path.join(folder, n)).read() for n in sorted(os.listdir(folder))]
            """,
        "rag.py": """
            import anthropic

            from kb import documents

            client = anthropic.Anthropic()


            def ask(question):
                context = "\\n\\n".join(documents("kb"))
                return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system="Answer from the documents.",
                                              messages=[{"role": "user", "content": context + "\\n\\n" + question}])
            """,
    })
    assert check(tmp_path, "rag.py") == []


def test_helpers_named_like_messages_or_system_logs_are_not_prompts(tmp_path):
    # a prompt-named function with no sender is reported only when blocks are measurably lost: a log
    # line's timestamp before an unknown message is not a prompt hazard ("not measured" is not said)
    project(tmp_path, {
        "logs.py": """
            from datetime import datetime


            def format_message(msg):
                return f"{datetime.now().isoformat()} {msg}"


            def system_log_line(event):
                return f"[{datetime.now()}] system: {event}"
            """,
    })
    assert check(tmp_path, "logs.py") == []


WRAPPED = {
    "llm.py": '''
        from openai import OpenAI


        class LLM:
            def __init__(self, model="gpt-4o"):
                self.client = OpenAI()
                self.model = model

            def complete(self, system, question):
                return self.client.chat.completions.create(model=self.model, messages=[
                    {"role": "system", "content": system}, {"role": "user", "content": question}])


        def ask(messages):
            return OpenAI().chat.completions.create(model="gpt-4o", messages=messages)
        ''',
    "main.py": f'''
        from datetime import datetime

        import llm
        from llm import LLM

        POLICY = {PS}


        class Bot:
            def __init__(self):
                self.llm = LLM()

            def answer(self, question):
                return self.llm.complete(f"Now: {{datetime.now()}}\\n" + POLICY, question)


        def answer_plain(question):
            return llm.ask([{{"role": "system", "content": POLICY + f"\\nNow: {{datetime.now()}}"}},
                            {{"role": "user", "content": question}}])
        ''',
}


def test_prompt_built_here_and_sent_by_a_wrapper_in_another_module(tmp_path, tok):
    # the volatile value is made in main.py and sent by llm.py's wrapper; the second sender puts it after
    # the policy, just before the question (so it loses fewer blocks, computed the same way)
    src = project(tmp_path, WRAPPED)
    findings = check(tmp_path, "main.py")
    first = line_of(src["main.py"], 'f"Now:')
    second = line_of(src["main.py"], 'f"\\nNow:')
    sender = line_of(src["llm.py"], "self.client.chat.completions.create")
    system = "Now: {}\n" + POLICY
    s, lost = m101_figures(tok, system.format(TS[0]) + "\n\n" + QUESTION[0], system.format(TS[1]) + "\n\n" + QUESTION[0],
                           system.format(TS[0]) + "\n\n" + QUESTION[1])
    got = {f.line: f for f in findings}
    assert got[first].code == "M101" and got[first].first_divergent_token.index == s and got[first].arithmetic.lost_blocks == lost
    assert f"`self.client.chat.completions.create(...)` at {tmp_path / 'llm.py'}:{sender}" in " ".join(got[first].notes)
    tail = POLICY + "\nNow: {}"
    s2, lost2 = m101_figures(tok, tail.format(TS[0]) + "\n\n" + QUESTION[0], tail.format(TS[1]) + "\n\n" + QUESTION[0],
                             tail.format(TS[0]) + "\n\n" + QUESTION[1])
    assert lost2 == 0 and s2 > s  # the date after the policy costs no block here: only the first is reported
    assert sorted(got) == [first] and second != first
