"""The pytest plugin with the real google-genai SDK (over httpx2) against a local fake Gemini
server: ``generate_content`` and ``generate_content_stream`` (server-sent events), a clock in the
system instruction, tools reordered, and a clean conversation, each found (or not) at the line of
the project's code that sent it; the model comes from the URL (Gemini does not send it in the body)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_conversation_plugin import SOURCE_ROOT, _line

genai = pytest.importorskip("google.genai", reason="google-genai (the `test` extra) is not installed")

AGENT = textwrap.dedent('''\
    from google.genai import types

    POLICY = "".join(f"Rule {i}: answer in full sentences and cite the order number.\\n" for i in range(200))


    def tool(name):
        return types.Tool(function_declarations=[types.FunctionDeclaration(
            name=name, description=f"{name} of a city",
            parameters=types.Schema(type="OBJECT", properties={"city": types.Schema(type="STRING")}))])


    def ask(client, history, question, now="", tools=None, stream=False):
        history.append(types.Content(role="user", parts=[types.Part(text=question)]))
        config = types.GenerateContentConfig(system_instruction=f"{now}{POLICY}", tools=tools)
        if stream:
            chunks = client.models.generate_content_stream(model="gemini-2.5-flash", contents=history, config=config)
            text = "".join(c.text or "" for c in chunks)
        else:
            text = client.models.generate_content(model="gemini-2.5-flash", contents=history, config=config).text
        history.append(types.Content(role="model", parts=[types.Part(text=text)]))
        return text
''')

TESTS = textwrap.dedent('''\
    import http.server, json, threading
    import pytest
    from google import genai
    from google.genai import types
    from agent import ask, tool

    PIECES = ["It ships ", "today, ", "by noon."]


    def chunk(text):
        return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}],
                "modelVersion": "gemini-2.5-flash"}


    class Fake(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["content-length"]))
            if ":streamGenerateContent" in self.path:
                data = "".join(f"data: {json.dumps(chunk(p))}\\r\\n\\r\\n" for p in PIECES).encode()
                kind = "text/event-stream"
            else:
                data, kind = json.dumps(chunk("".join(PIECES))).encode(), "application/json"
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass


    @pytest.fixture
    def client():
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield genai.Client(api_key="gemini-plugin-secret", http_options=types.HttpOptions(
            base_url=f"http://127.0.0.1:{server.server_port}", retry_options=types.HttpRetryOptions(attempts=1)))
        server.shutdown()


    def test_clean_with_a_streamed_turn(client):
        history = []
        ask(client, history, "Where is order 1042?", stream=True)
        ask(client, history, "And 1043?")
        ask(client, history, "Thanks.")


    def test_clock_in_the_system_instruction(client):
        history = []
        ask(client, history, "Where is order 1042?", now="Now: 2026-12-01 10:00:04.\\n")
        ask(client, history, "And 1043?", now="Now: 2026-12-01 10:00:06.\\n")


    def test_tools_reordered(client):
        history = []
        ask(client, history, "Weather in Paris?", tools=[tool("weather"), tool("time")])
        ask(client, history, "And the time?", tools=[tool("time"), tool("weather")])
''')


def test_gemini_through_the_plugin(tmp_path):
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "test_gemini.py").write_text(TESTS, encoding="utf-8")
    where = str(Path(genai.__file__).resolve().parent.parent.parent)  # the folder google.genai was found in
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SOURCE_ROOT, str(tmp_path), where]),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "promptlint.conversation.plugin", "--promptlint-conversations", "test_gemini.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert "3 passed" in out, out + done.stderr
    send = _line(AGENT, "client.models.generate_content(model=")
    findings = [l for l in out.splitlines() if l.startswith("agent.py:") and ": M" in l]
    # the system instruction is Gemini's first prompt field after the tools; the clock is
    # volatile (M101), the same two tools in another order M202; the clean conversation (its first
    # reply streamed, assembled and sent back as received) nothing
    assert [l.split(" request ")[0] for l in findings] == [f"agent.py:{send}:1: M101", f"agent.py:{send}:1: M202"], out
    assert "'10:00:04' -> '10:00:06'" in findings[0] and "'weather, time' -> 'time, weather'" in findings[1]
    assert "test: test_gemini.py::test_clock_in_the_system_instruction" in out
    assert "test: test_gemini.py::test_tools_reordered" in out
    [clean] = [l for l in out.splitlines() if "test_clean_with_a_streamed_turn #1:" in l]
    assert "3 requests, gemini gemini-2.5-flash" in clean and " 0 lost" in clean and " 0 reused" not in clean
    assert "gemini-plugin-secret" not in out + done.stderr
