"""A user turn's text that promptlint cannot evaluate is the person's input (the tenth unseen set's false alarm,
tests/test_project_flow_unseen10.py, closed as a family).

A clock that opens the user's message, followed by the message's own text (a parameter, a call's result: nothing
the flow can evaluate, under a name the word lists do not know, such as ``line``), is where M101's fix puts a
clock: nothing the next request shares follows it. Before, that unknown text counted as shared text of unknown
length and gave a "not measured" M101. Now, in a message whose role is ``user`` (``human`` for LangChain tuples),
such a value is per-request, as an input printed only in user turns is for chat templates and prompt files. The
same shapes in OpenAI Chat Completions (a history grown per turn), Anthropic Messages (content blocks), OpenAI
Responses ``input`` items, Gemini ``contents`` parts and LangChain ``("human", ...)`` tuples each give nothing.

Counter-examples, each a finding: the same clock and unknown text in the *system* message is still the "not
measured" M101 (shared text of unknown length may follow); and a clock that opens a user message followed by a
long constant the next request shares is still measured (figures by hand from the formula).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from flow_harness import assert_clean, assert_hazard, write
from test_agent_call_shapes import POLICY, QUESTION, TS, m101_figures

from promptlint.driver.lint import lint
from promptlint.project.config import Settings
from test_agent_call_shapes import TOKENIZER

STAMP = 'f"[{datetime.now():%H:%M}]\\n{line}"'
CLOCK = "datetime.now().isoformat(sep=' ', timespec='seconds')"  # rendered as TS (tests/test_agent_call_shapes.py)

SENDERS = {
    "openai_history": (
        "from openai import OpenAI",
        """
        class Desk:
            def __init__(self):
                self.client = OpenAI()
                self.history = []

            def default(self, line):
                self.history.append({"role": "user", "content": %s})
                reply = self.client.chat.completions.create(
                    model="gpt-4.1", messages=[{"role": "system", "content": system_text()}, *self.history])
                self.history.append({"role": "assistant", "content": reply.choices[0].message.content})
        """ % STAMP,
    ),
    "anthropic_blocks": (
        "import anthropic",
        """
        def ask(line):
            return anthropic.Anthropic().messages.create(
                model="claude-sonnet-4-5", max_tokens=512, system=system_text(),
                messages=[{"role": "user", "content": [{"type": "text", "text": %s}]}])
        """ % STAMP,
    ),
    "responses_input": (
        "from openai import OpenAI",
        """
        def ask(line):
            return OpenAI().responses.create(
                model="gpt-4.1", instructions=system_text(), input=[{"role": "user", "content": %s}])
        """ % STAMP,
    ),
    "gemini_contents": (
        "from google import genai",
        """
        def ask(line):
            return genai.Client().models.generate_content(
                model="gemini-2.5-flash",
                config={"system_instruction": system_text()},
                contents=[{"role": "user", "parts": [{"text": %s}]}])
        """ % STAMP,
    ),
    "langchain_human": (
        "from langchain_openai import ChatOpenAI",
        """
        def ask(line):
            return ChatOpenAI(model="gpt-4.1").invoke([("system", system_text()), ("human", %s)])
        """ % STAMP,
    ),
}


def _project(sender: str):
    imports, body = SENDERS[sender]
    return {
        "prompting.py": f"POLICY = {json.dumps(POLICY)}\n\n\ndef system_text():\n    return POLICY\n",
        "agent.py": f"from datetime import datetime\n\n{imports}\n\nfrom prompting import system_text\n\n"
                    + textwrap.dedent(body),
    }


@pytest.mark.parametrize("sender", sorted(SENDERS))
def test_a_clock_opening_the_users_own_text_is_clean(tmp_path, sender):
    assert_clean(tmp_path, _project(sender))


def test_the_same_clock_and_text_in_the_system_message_is_still_not_measured_m101(tmp_path):
    files = _project("openai_history")
    files["agent.py"] = files["agent.py"].replace(
        '[{"role": "system", "content": system_text()}, *self.history]',
        '[{"role": "system", "content": f"[{datetime.now():%%H:%%M}]\\n{line}"}, *self.history]'.replace("%%", "%"))
    assert_hazard(tmp_path, (files, "agent.py", ("M101", "agent.py", '{"role": "system", "content": f"[{datetime.now()')))
    found = lint([str(tmp_path / "agent.py")], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=False).findings
    assert "not measured" in found[0].message and "`line`" in found[0].message


@pytest.mark.parametrize("sender", ["openai_history", "anthropic_blocks"])
def test_a_clock_before_shared_text_in_a_user_turn_is_still_measured(tmp_path, qwen, sender):
    """The user message opens with the clock, then the policy every request repeats, then the person's text:
    the policy's blocks are lost, measured as for any other prompt (figures by hand, from the formula)."""
    files = _project(sender)
    files["agent.py"] = files["agent.py"].replace(STAMP, 'f"[{%s}]\\n{POLICY}\\n{line}"' % CLOCK).replace(
        "from prompting import system_text", "from prompting import POLICY, system_text")
    write(tmp_path, files)
    report = lint([str(tmp_path / "agent.py")], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=False)
    assert [(f.code, Path(f.path).name) for f in report.findings] == [("M101", "agent.py")]
    f = report.findings[0]
    text = (tmp_path / "agent.py").read_text(encoding="utf-8")
    assert f.line == next(i for i, t in enumerate(text.splitlines(), 1) if "{POLICY}" in t)
    # the prompt as measured: the system text, a blank line, the user text; the person's text a question
    prompt = POLICY + "\n\n[{}]\n" + POLICY + "\n{}"
    s, lost = m101_figures(qwen, prompt.format(TS[0], QUESTION[0]), prompt.format(TS[1], QUESTION[0]),
                           prompt.format(TS[0], QUESTION[1]))
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == lost and lost > 20
