"""An object of a class defined in one module, made in a second, filled by calls of its methods in a third
(``conv.add_system(f"Now: {now}")``), and sent: the method's write to the field (append, extend, insert,
``+=``, a key set) is followed with its parameters bound to that call's arguments, in call order.

Figures as in test_project_flow.py: the test's own render of the request (blocks joined by a blank line),
S = the first divergent token, lost = floor(min(ideal, P - 1) / B) - floor(min(S, P - 1) / B).
"""

from __future__ import annotations

import pytest

from test_agent_call_shapes import QUESTION, TS, line_of, m101_figures
from test_project_flow import PS, check, project, where
from test_agent_call_shapes import POLICY

# how the class writes the field in its methods: (add_system's body, add_user's body, the field sent)
WRITES = {
    "append": ('self.messages.append({"role": "system", "content": text})',
               'self.messages.append({"role": "user", "content": text})'),
    "extend": ('self.messages.extend([{"role": "system", "content": text}])',
               'self.messages.extend([{"role": "user", "content": text}])'),
    "+=": ('self.messages += [{"role": "system", "content": text}]',
           'self.messages += [{"role": "user", "content": text}]'),
    "insert at 0, called after the user's": ('self.messages.insert(0, {"role": "system", "content": text})',
                                             'self.messages.append({"role": "user", "content": text})'),
}


def conversation(style):
    system, user = WRITES[style]
    return f'''
        class Conversation:
            def __init__(self, model="gpt-4o"):
                self.model = model
                self.messages = []

            def add_user(self, text):
                {user}

            def add_system(self, text):
                {system}

            def send(self, client):
                return client.chat.completions.create(model=self.model, messages=self.messages)
        '''


def app(style, sender):
    first, second = ("conv.add_user(question)", 'conv.add_system(f"Now: {datetime.now()}\\n" + POLICY)')
    if not style.startswith("insert"):
        first, second = second, first
    send = ("client.chat.completions.create(model=conv.model, messages=conv.messages)" if sender == "here"
            else "conv.send(client)")
    return f'''
        from datetime import datetime

        from openai import OpenAI

        from state import conv

        client = OpenAI()
        POLICY = {PS}


        def answer(question):
            {first}
            {second}
            return {send}
        '''


@pytest.mark.parametrize("sender", ["here", "the object's method"])
@pytest.mark.parametrize("style", sorted(WRITES))
def test_field_filled_by_method_calls_from_another_module(tmp_path, qwen, style, sender):
    src = project(tmp_path, {
        "conversation.py": conversation(style),
        "state.py": "from conversation import Conversation\n\nconv = Conversation()\n",
        "app.py": app(style, "here" if sender == "here" else "method"),
    })
    findings = check(tmp_path, "app.py")
    assert where(findings) == [("M101", "app.py", line_of(src["app.py"], "datetime.now()"))]
    system = "Now: {}\n" + POLICY
    s, lost = m101_figures(qwen, system.format(TS[0]) + "\n\n" + QUESTION[0], system.format(TS[1]) + "\n\n" + QUESTION[0],
                           system.format(TS[0]) + "\n\n" + QUESTION[1])
    f = findings[0]
    assert f.first_divergent_token.index == s and f.arithmetic.lost_blocks == lost and lost > 20
    if sender != "here":
        sent = line_of(src["conversation.py"], "chat.completions.create")
        assert f.sent_by and (f.sent_by[0].path.endswith("conversation.py"), f.sent_by[0].line) == (True, sent)


def test_a_string_field_grown_by_a_method(tmp_path, qwen):
    src = project(tmp_path, {
        "prompt.py": '''
            class SystemPrompt:
                def __init__(self):
                    self.text = ""

                def add(self, section):
                    self.text += section + "\\n"
            ''',
        "bot.py": f'''
            import time

            import anthropic

            from prompt import SystemPrompt

            client = anthropic.Anthropic()


            def ask(question):
                system = SystemPrompt()
                system.add("Epoch: " + str(int(time.time())))
                system.add({PS})
                return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system=system.text,
                                              messages=[{{"role": "user", "content": question}}])
            ''',
    })
    findings = check(tmp_path, "bot.py")
    assert where(findings) == [("M101", "bot.py", line_of(src["bot.py"], "time.time()"))]
    epoch = ("1741944413.482113", "1741944420.917402")  # pysource.holes: a number's two samples
    system = "Epoch: {}\n" + POLICY + "\n"
    s, lost = m101_figures(qwen, system.format(epoch[0]) + "\n\n" + QUESTION[0], system.format(epoch[1]) + "\n\n" + QUESTION[0],
                           system.format(epoch[0]) + "\n\n" + QUESTION[1])
    assert findings[0].first_divergent_token.index == s and findings[0].arithmetic.lost_blocks == lost


def test_clean_when_the_date_is_added_after_the_question(tmp_path):
    project(tmp_path, {
        "conversation.py": conversation("append"),
        "state.py": "from conversation import Conversation\n\nconv = Conversation()\n",
        "app.py": f'''
            from datetime import date

            from state import conv

            POLICY = {PS}


            def answer(client, question):
                conv.add_system(POLICY)
                conv.add_user(question + f" (asked on {{date.today()}})")
                return conv.send(client)
            ''',
    })
    assert check(tmp_path, "app.py") == []
