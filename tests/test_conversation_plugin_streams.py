"""The pytest plugin with streamed replies and with time: a real pytest subprocess whose code talks
to a local fake server (http.server in a thread) that answers in server-sent events, through the
real openai SDK (``stream=True``) and the real anthropic SDK (``messages.stream``). The reply the
SDK assembled from the stream is the reply the next request is checked against; and a request
sent after the cache's lifetime (a fake clock the test advances) is expiry, not a hazard."""

from __future__ import annotations

import json
import textwrap

import pytest

from test_conversation_plugin import _line, _pytest

AGENT = textwrap.dedent('''\
    POLICY = "".join(f"Rule {i}: answer in full sentences and cite the order number.\\n" for i in range(90))


    def chat(client, history, question, normalise=False):
        history.append({"role": "user", "content": question})
        stream = client.chat.completions.create(model="gpt-4.1", stream=True,
                                                messages=[{"role": "system", "content": POLICY}] + history)
        answer = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
        history.append({"role": "assistant", "content": " ".join(answer.split()) if normalise else answer})
        return answer


    def claude(client, history, question, normalise=False):
        history.append({"role": "user", "content": [{"type": "text", "text": question, "cache_control": {"type": "ephemeral"}}]})
        with client.messages.stream(model="claude-sonnet-4-5", max_tokens=64, system=POLICY, messages=history) as stream:
            message = stream.get_final_message()
        history[-1] = {"role": "user", "content": [{"type": "text", "text": question}]}
        content = [{"type": "text", "text": " ".join(message.content[0].text.split())}] if normalise else message.content
        history.append({"role": "assistant", "content": content})
        return message
''')

TESTS = textwrap.dedent('''\
    import http.server, json, threading, time
    import anthropic, openai
    import pytest
    from agent import chat, claude

    ANSWER = ["It ships ", " today, ", "by noon."]  # two spaces after "ships"


    def openai_events():
        chunk = lambda delta: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1",
                               "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        events = [chunk({"role": "assistant", "content": ""})] + [chunk({"content": p}) for p in ANSWER]
        return "".join(f"data: {json.dumps(e)}\\n\\n" for e in events) + "data: [DONE]\\n\\n"


    def anthropic_events():
        message = {"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
                   "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        events = [("message_start", {"type": "message_start", "message": message}),
                  ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})]
        events += [("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}) for p in ANSWER]
        events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
                   ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 3}}),
                   ("message_stop", {"type": "message_stop"})]
        return "".join(f"event: {n}\\ndata: {json.dumps(d)}\\n\\n" for n, d in events)


    class Fake(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers["content-length"]))
            data = (openai_events() if self.path.endswith("/chat/completions") else anthropic_events()).encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for piece in (data[i:i + 50] for i in range(0, len(data), 50)):  # the stream arrives in pieces
                self.wfile.write(b"%x\\r\\n%s\\r\\n" % (len(piece), piece))
            self.wfile.write(b"0\\r\\n\\r\\n")

        def log_message(self, *args):
            pass


    @pytest.fixture
    def base():
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{server.server_port}"
        server.shutdown()


    def openai_client(base):
        return openai.OpenAI(api_key="sk-stream-secret", base_url=base + "/v1", max_retries=0)


    def anthropic_client(base):
        return anthropic.Anthropic(api_key="sk-ant-stream-secret", base_url=base, max_retries=0)


    def test_openai_streamed_and_sent_back_as_received(base):
        client, history = openai_client(base), []
        chat(client, history, "Where is order 1042?")
        chat(client, history, "And 1043?")


    def test_openai_streamed_and_sent_back_normalised(base):
        client, history = openai_client(base), []
        chat(client, history, "Where is order 1042?", normalise=True)
        chat(client, history, "And 1043?")


    def test_anthropic_streamed_and_sent_back_as_received(base):
        client, history = anthropic_client(base), []
        claude(client, history, "Where is order 1042?")
        claude(client, history, "And 1043?")


    def test_anthropic_streamed_and_sent_back_normalised(base):
        client, history = anthropic_client(base), []
        claude(client, history, "Where is order 1042?", normalise=True)
        claude(client, history, "And 1043?")


    def test_anthropic_after_a_pause(base, monkeypatch):
        now = [1_800_000_000.0]
        monkeypatch.setattr(time, "time", lambda: now[0])  # the plugin stamps each request with time.time()
        client, history = anthropic_client(base), []
        claude(client, history, "Where is order 1042?")
        now[0] += 301  # one second past Anthropic's default 5-minute lifetime
        claude(client, history, "And 1043?")
        now[0] += 299  # within it
        claude(client, history, "Thanks.")
''')


def _project(tmp_path):
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "test_streams.py").write_text(TESTS, encoding="utf-8")
    return tmp_path


@pytest.fixture(scope="module")
def run_output(tmp_path_factory):
    """One run of the project's pytest with the plugin, for the tests below: each asserts its own part
    of the same output (the same project, options and fake clock as a run of its own would have)."""
    root = _project(tmp_path_factory.mktemp("streams"))
    done = _pytest(root, "--promptlint-conversations", "test_streams.py")
    return done.stdout, done.stderr


def _run(run_output):
    out, err = run_output
    assert "5 passed" in out, out + err
    return out


def test_streamed_replies_are_assembled_and_a_reply_sent_back_changed_is_found(run_output):
    out = _run(run_output)
    assert "sent_back_as_received #1: 2 requests" in out and " 0 reused" not in out, out
    findings = [l for l in out.splitlines() if ": M" in l and l.startswith("agent.py:")]
    chat_line, claude_line = _line(AGENT, "client.chat.completions.create"), _line(AGENT, "client.messages.stream")
    # only the normalised conversations break, at their second request and at the assistant turn
    # (OpenAI: messages[2] after the system message; Anthropic: messages[1]); the reply the SDK
    # assembled from the stream has two spaces after "ships", the one sent back (whitespace
    # normalised) one
    assert len(findings) == 2, out
    openai_finding, claude_finding = sorted(findings, key=lambda l: l.startswith(f"agent.py:{claude_line}:"))
    assert openai_finding.startswith(f"agent.py:{chat_line}:1: M204 ") and "messages[2]: the reply does not come back as received" in openai_finding
    assert "'It ships  today, by noon.' -> 'It ships today, by noon.'" in openai_finding
    assert claude_finding.startswith(f"agent.py:{claude_line}:1: M204 ") and "messages[1]: the reply does not come back as received" in claude_finding
    assert "test: test_streams.py::test_openai_streamed_and_sent_back_normalised" in out
    assert "test: test_streams.py::test_anthropic_streamed_and_sent_back_normalised" in out
    assert "sk-stream-secret" not in out and "sk-ant-stream-secret" not in out


def test_a_request_after_the_lifetime_is_expiry_and_the_next_one_reads_again(run_output):
    out = _run(run_output)
    [summary] = [l for l in out.splitlines() if "test_anthropic_after_a_pause #1: 3 requests" in l]
    # request 2 came 301 s after request 1: past 5 minutes, nothing read, nothing lost to a hazard;
    # request 3 came 299 s after request 2 and reads what request 2 wrote again
    [note] = [l for l in out.splitlines() if "past the cache lifetime" in l]
    assert "sent 5m01s after the one before, past the cache lifetime of 5m00s" in note
    assert "(assumed: 5m (anthropic: the default, no ttl on the breakpoints)): its miss is expiry, not a hazard" in note
    assert " 0 lost" in summary and " 0 reused" not in summary
    assert sum("past the cache lifetime" in l for l in out.splitlines()) == 1
