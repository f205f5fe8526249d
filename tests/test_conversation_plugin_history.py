"""The plugin parses a conversation's history once: each request repeats the whole history, and
each body that repeats the previous one's messages, written identically, shares its parsed
messages and has only the new ones parsed (``promptlint.conversation.bodies``); the messages'
JSON text is the text sent, not written again per request. Run as a user runs it (a real pytest
subprocess, the real openai SDK over httpx2.MockTransport); a conftest of the project under test
counts what the analysis was given, through the real functions (nothing is replaced)."""

from __future__ import annotations

import json
import textwrap

from test_conversation_plugin import _pytest

CONFTEST = textwrap.dedent('''\
    import json, os
    import pytest

    SEEN = {"json_texts": 0}


    @pytest.hookimpl(trylast=True)
    def pytest_configure(config):
        from promptlint.commands import conversation
        from promptlint.conversation import shapes

        analyse, messages_json = conversation.analyse_requests, shapes.messages_json

        def counting_messages_json(messages):
            SEEN["json_texts"] += 1
            return messages_json(messages)

        def keeping(requests, *args, **kwargs):
            recorder = config.promptlint_conversations_recorder
            sent = {n: json.loads(entry[4]) for n, entry in enumerate(recorder.sent, 1)}
            SEEN["equal"] = all(r.body == sent[r.index] for r in requests)  # what json.loads gives
            for r in requests:
                SEEN.setdefault(r.test_id, []).append([id(m) for m in r.body["messages"]])
            return analyse(requests, *args, **kwargs)

        shapes.messages_json, conversation.analyse_requests = counting_messages_json, keeping


    def pytest_unconfigure(config):
        with open(os.path.join(str(config.rootpath), "seen.json"), "w") as f:
            json.dump({k: v if k in ("json_texts", "equal") else
                       [len(v), sum(map(len, v)), len({i for ids in v for i in ids})] for k, v in SEEN.items()}, f)
''')

TESTS = textwrap.dedent('''\
    import httpx2, openai

    REPLY = {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
             "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Sure."}}]}


    def client():
        return openai.OpenAI(api_key="k", max_retries=0, http_client=httpx2.Client(
            transport=httpx2.MockTransport(lambda r: httpx2.Response(200, json=REPLY))))


    def test_five_turns():
        c, history = client(), [{"role": "system", "content": "Be kind. " * 50}]
        for i in range(5):
            history.append({"role": "user", "content": f"question {i}"})
            history.append({"role": "assistant", "content": c.chat.completions.create(
                model="gpt-4.1", messages=history).choices[0].message.content})


    def test_a_message_rewritten():
        c, history = client(), [{"role": "system", "content": "Be kind. " * 50}]
        for question in ("first", "second", "third"):
            if question == "third":
                history[3] = {"role": "user", "content": "second, edited"}
            history.append({"role": "user", "content": question})
            history.append({"role": "assistant", "content": c.chat.completions.create(
                model="gpt-4.1", messages=history).choices[0].message.content})
''')


def test_a_conversations_history_is_parsed_once_and_its_text_is_the_text_sent(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_turns.py").write_text(TESTS, encoding="utf-8")
    done = _pytest(tmp_path, "--promptlint-conversations", "test_turns.py")
    out = done.stdout
    assert "2 passed" in out, out + done.stderr
    seen = json.loads((tmp_path / "seen.json").read_text(encoding="utf-8"))
    assert seen["equal"] is True  # every body as json.loads reads the bytes sent
    # five turns: request k sends the system message, k questions and k-1 answers (2k messages,
    # 30 in all); the distinct message objects are the 10 messages sent (1 + 5 + 4)
    assert seen["test_turns.py::test_five_turns"] == [5, 30, 10]
    # 2, 4 and 6 messages; the third request rewrote message 3, so it repeats the second's text only
    # up to there and is parsed whole: 2 + 2 + 6 objects
    assert seen["test_turns.py::test_a_message_rewritten"] == [3, 12, 10]
    # the messages' JSON text is the text sent: written only for the two bodies the analysis builds
    # at the break (the previous request with its reply, and the request it should have sent)
    assert seen["json_texts"] == 2
    # and the rewrite is found where it is, the clean conversation gives nothing
    [finding] = [line for line in out.splitlines() if " M204 " in line]
    assert "messages[3] rewritten" in finding and "'second' -> 'second, edited'" in finding, out
    assert "test: test_turns.py::test_a_message_rewritten" in out
    assert "test_turns.py::test_five_turns #1: 5 requests" in out and "0 lost" in out
