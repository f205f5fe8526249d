"""What the plugin keeps of each request until the end of the session, run as a user runs it (a
real pytest subprocess, the real openai SDK over httpx2.MockTransport): the reply's bytes, not
the httpx response (a suite of many requests would keep every response, its request and headers
alive to the end, and every collection would walk them), and the sending code's file name, shown
relative to the root only at the end. The reply read from the kept bytes is still the one the
next request is checked against, and the line is still the user's own, also when the SDK is
called through a helper module outside the root."""

from __future__ import annotations

import os
import textwrap

from test_conversation_plugin import SOURCE_ROOT, _line, _pytest

HELPER = textwrap.dedent('''\
    def ask(client, history, question):
        history.append({"role": "user", "content": question})
        reply = client.chat.completions.create(model="gpt-4.1", messages=history)
        return reply.choices[0].message.content
''')

TESTS = textwrap.dedent('''\
    import gc, weakref
    import httpx2, openai
    from helper import ask

    REPLY = {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
             "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "It ships today."}}]}
    RESPONSES = []  # a weak reference to each response the transport made


    def answer(request):
        response = httpx2.Response(200, json=REPLY)
        RESPONSES.append(weakref.ref(response))
        return response


    def test_a_reply_sent_back_changed():
        client = openai.OpenAI(api_key="k", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(answer)))
        history = [{"role": "system", "content": "Be kind. " * 300}]
        said = ask(client, history, "when?")
        history.append({"role": "assistant", "content": said.upper()})
        ask(client, history, "sure?")


    def test_no_response_is_kept_alive():
        gc.collect()
        assert len(RESPONSES) == 2 and all(ref() is None for ref in RESPONSES), [ref() for ref in RESPONSES]
''')


def test_replies_are_kept_as_bytes_and_the_line_is_the_callers(tmp_path):
    root, lib = tmp_path / "project", tmp_path / "lib"  # the helper module lies outside pytest's root
    root.mkdir()
    lib.mkdir()
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (root / "test_kept.py").write_text(TESTS, encoding="utf-8")
    (lib / "helper.py").write_text(HELPER, encoding="utf-8")
    done = _pytest(root, "--promptlint-conversations", "test_kept.py",
                   PYTHONPATH=os.pathsep.join([SOURCE_ROOT, str(root), str(lib)]))
    out = done.stdout
    assert "2 passed" in out, out + done.stderr  # no response outlived its test
    line = _line(HELPER, "client.chat.completions.create")
    # outside the root: the helper's own absolute file name, at the line that called the SDK
    [finding] = [l for l in out.splitlines() if " M204 " in l]
    assert finding.startswith(f"{lib / 'helper.py'}:{line}:1: M204 "), out
    # the reply came from the bytes kept: the history's assistant turn, upper-cased, is not it
    assert "messages[2]: the reply does not come back as received" in finding, out
    assert "'It ships today.' -> 'IT SHIPS TODAY.'" in finding, out
    assert "test: test_kept.py::test_a_reply_sent_back_changed" in out
    assert "test_kept.py::test_a_reply_sent_back_changed #1: 2 requests" in out
