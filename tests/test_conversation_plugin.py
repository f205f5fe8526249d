"""The pytest plugin, run as a user runs it: a real pytest subprocess over a small project whose
code talks to a provider through the real openai SDK (httpx2.MockTransport), the real anthropic
SDK (a local fake server in a thread) and plain httpx under respx. Each request keeps its test id
and the line of the project's code that sent it; the plugin is inert unless asked for."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import promptlint

SOURCE_ROOT = str(Path(promptlint.__file__).parent.parent)

AGENT = textwrap.dedent('''\
    import json
    import httpx


    def ask_openai(client, stamp, history, question):
        system = {"role": "system", "content": f"Support bot. Now: {stamp}.\\n" + "Be kind. " * 300}
        reply = client.chat.completions.create(model="gpt-4.1", messages=[system] + history + [{"role": "user", "content": question}])
        return reply.choices[0].message.content


    def ask_claude(client, tools, question):
        return client.messages.create(model="claude-sonnet-4-5", max_tokens=64, tools=tools,
                                      messages=[{"role": "user", "content": question}])


    async def ask_async(client, tools):
        for _ in range(2):
            await client.chat.completions.create(model="gpt-4.1", tools=tools, messages=[{"role": "user", "content": "q"}])
            tools = tools[::-1]


    def ask_raw(url, body):
        with httpx.Client() as client:
            return client.post(url, json=body).json()
''')

TESTS = textwrap.dedent('''\
    import http.server, json, threading
    import anthropic, httpx, httpx2, openai, respx
    import asyncio
    from agent import ask_async, ask_claude, ask_openai, ask_raw

    REPLY = {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
             "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Sure."}}]}


    def test_openai_over_a_mock_transport():
        client = openai.OpenAI(api_key="sk-plugin-secret-000", max_retries=0,
                               http_client=httpx2.Client(transport=httpx2.MockTransport(lambda r: httpx2.Response(200, json=REPLY))))
        answer = ask_openai(client, "10:00:01", [], "hi")
        ask_openai(client, "10:00:09", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": answer}], "more")


    class Fake(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["content-length"]))
            data = json.dumps({"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                               "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                               "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass


    def test_anthropic_against_a_local_server():
        server = http.server.HTTPServer(("127.0.0.1", 0), Fake)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            client = anthropic.Anthropic(api_key="sk-ant-plugin-secret", base_url=f"http://127.0.0.1:{server.server_port}",
                                         max_retries=0)
            one = {"name": "a", "description": "A", "input_schema": {"type": "object", "properties": {}}}
            two = {"name": "b", "description": "B", "input_schema": {"type": "object", "properties": {}}}
            ask_claude(client, [one, two], "x")
            ask_claude(client, [two, one], "x")
        finally:
            server.shutdown()


    @respx.mock
    def test_plain_httpx_under_respx():
        respx.post("https://llm.example/v1/chat/completions").mock(return_value=httpx.Response(200, json=REPLY))
        body = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
        ask_raw("https://llm.example/v1/chat/completions", body)
        ask_raw("https://llm.example/v1/chat/completions", body)


    def test_async_openai():
        tool = lambda name: {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
        client = openai.AsyncOpenAI(api_key="k", max_retries=0, http_client=httpx2.AsyncClient(
            transport=httpx2.MockTransport(lambda r: httpx2.Response(200, json=REPLY))))
        asyncio.run(ask_async(client, [tool("a"), tool("b")]))


    def test_nothing_is_wrapped_unless_asked():
        import os
        if os.environ.get("EXPECT_INERT"):
            assert not hasattr(httpx.Client.send, "__wrapped__") and not hasattr(httpx2.Client.send, "__wrapped__")
''')


def _project(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "test_app.py").write_text(TESTS, encoding="utf-8")
    return tmp_path


def _pytest(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([SOURCE_ROOT, str(root)]),
                   "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **env}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "promptlint.conversation.plugin", *args], cwd=root, env=environment, capture_output=True,
                          text=True, timeout=300)


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_plugin_reports_each_break_at_the_test_and_the_line_that_sent_it(tmp_path):
    root = _project(tmp_path)
    done = _pytest(root, "--promptlint-conversations", "test_app.py")  # the bare option before a path
    out = done.stdout
    assert "5 passed" in out, out + done.stderr
    assert done.returncode == 0, out + done.stderr  # report mode: the tests' own verdict
    assert "promptlint conversations" in out
    openai_line = _line(AGENT, "client.chat.completions.create")
    claude_line = _line(AGENT, "client.messages.create")
    [m101] = [l for l in out.splitlines() if " M101 " in l]
    assert m101.startswith(f"agent.py:{openai_line}:1: M101 ") and "'10:00:01' -> '10:00:09'" in m101
    [m202] = [l for l in out.splitlines() if " M202 " in l and l.startswith(f"agent.py:{claude_line}:")]
    assert m202.startswith(f"agent.py:{claude_line}:1: M202 ")
    assert "test: test_app.py::test_openai_over_a_mock_transport" in out
    assert "test: test_app.py::test_anthropic_against_a_local_server" in out
    async_line = _line(AGENT, "await client.chat.completions.create")
    [m202_async] = [l for l in out.splitlines() if l.startswith(f"agent.py:{async_line}:1: M202 ")]
    assert "test: test_app.py::test_async_openai" in out
    # respx: the two identical requests were recorded, and a repeat is clean
    assert "test_app.py::test_plain_httpx_under_respx #1: 2 requests" in out
    assert "sk-plugin-secret" not in out + done.stderr and "sk-ant-plugin-secret" not in out + done.stderr


def test_fail_mode_fails_the_run_and_the_ini_option_turns_it_on(tmp_path):
    root = _project(tmp_path)
    done = _pytest(root, "--promptlint-conversations=fail")
    assert done.returncode == 1 and "5 passed" in done.stdout, done.stdout
    (root / "pytest.ini").write_text("[pytest]\npromptlint_conversations = fail\n", encoding="utf-8")
    assert _pytest(root).returncode == 1


def test_the_plugin_is_inert_unless_asked_for(tmp_path):
    root = _project(tmp_path)
    done = _pytest(root, EXPECT_INERT="1")
    assert done.returncode == 0 and "promptlint" not in done.stdout, done.stdout


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    import tomllib

    pyproject = tomllib.loads((Path(SOURCE_ROOT) / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["entry-points"]["pytest11"] == {"promptlint-conversations": "promptlint.conversation.plugin"}
    extras = " ".join(pyproject["project"]["optional-dependencies"]["test"])
    assert all(name in extras for name in ("openai", "anthropic", "respx", "httpx"))
