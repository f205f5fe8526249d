"""The pytest plugin under LiteLLM, run as a user runs it: a project whose code calls
`litellm.completion` for an OpenAI model (LiteLLM's route through the openai SDK) and an Anthropic
model (LiteLLM's own httpx handler) against a local fake provider. Each request is recorded with
the line of the project's code that called LiteLLM; the clock in the OpenAI system prompt is
found, the Anthropic conversation (a breakpoint on its system block) is clean. Figures are
computed here from the bodies the fake server received: the documented framings written out by
hand, encoded with the Qwen tokenizer, and the providers' rules as formulas. LiteLLM's import
reads its model table from the package (LITELLM_LOCAL_MODEL_COST_MAP): no network."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import promptlint
from conftest import QWEN, REPO, shared_prefix
from conversation_sdk import chatml

pytest.importorskip("litellm")

SOURCE_ROOT = str(Path(promptlint.__file__).parent.parent)

AGENT = textwrap.dedent('''\
    import litellm


    def ask(model, base, system, history, question):
        messages = [{"role": "system", "content": system}] + history + [{"role": "user", "content": question}]
        reply = litellm.completion(model=model, messages=messages, api_base=base, api_key="sk-litellm-secret-000", max_tokens=64)
        return reply.choices[0].message.content
''')

TESTS = textwrap.dedent('''\
    import http.server, json, threading
    import pytest
    from agent import ask

    POLICY = "".join(f"Rule {i}: answer in full sentences and cite the order number when there is one.\\n" for i in range(90))


    class Fake(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            with open("bodies.jsonl", "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": self.path, "body": body}) + "\\n")
            if self.path.endswith("/messages"):
                data = {"id": "m", "type": "message", "role": "assistant", "model": body["model"],
                        "content": [{"type": "text", "text": "Noted."}], "stop_reason": "end_turn",
                        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
            else:
                data = {"id": "c", "object": "chat.completion", "created": 1, "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Sure."}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
            raw = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args):
            pass


    @pytest.fixture
    def base():
        server = http.server.HTTPServer(("127.0.0.1", 0), Fake)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{server.server_port}"
        server.shutdown()


    def test_openai_model_with_a_clock(base):
        first = ask("openai/gpt-4.1", base + "/v1", "Now: 10:00:01.\\n" + POLICY, [], "Where is order 1042?")
        ask("openai/gpt-4.1", base + "/v1", "Now: 10:00:09.\\n" + POLICY,
            [{"role": "user", "content": "Where is order 1042?"}, {"role": "assistant", "content": first}], "Refund it.")


    def test_anthropic_model_clean(base):
        system = [{"type": "text", "text": POLICY, "cache_control": {"type": "ephemeral"}}]
        history = []
        for question in ("Hello?", "Refund order 1042.", "Thanks."):
            answer = ask("anthropic/claude-sonnet-4-5", base, system, history, question)
            history = history + [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
''')


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("litellm_project")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    (root / "test_app.py").write_text(TESTS, encoding="utf-8")
    sha = hashlib.sha256(QWEN.read_bytes()).hexdigest()
    (root / "pytest.ini").write_text(f"[pytest]\npromptlint_tokenizer = {QWEN}\npromptlint_tokenizer_sha256 = {sha}\n",
                                     encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SOURCE_ROOT, str(root)]), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "promptlint.conversation.plugin", "--promptlint-conversations", "-W", "ignore", "test_app.py"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)
    sent = [json.loads(line) for line in (root / "bodies.jsonl").read_text(encoding="utf-8").splitlines()]
    return done, sent


def ids(qwen, text):
    return qwen.encode(text, add_special_tokens=False).ids


def openai_hosted(shared, minimum=1024, step=128):
    return 0 if shared < minimum else minimum + (shared - minimum) // step * step


def test_litellm_is_in_the_test_extra():
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(d.startswith("litellm") for d in pyproject["project"]["optional-dependencies"]["test"])


def test_litellm_requests_are_recorded_with_the_users_line_and_the_clock_is_found(run, qwen):
    done, sent = run
    out = done.stdout
    assert "2 passed" in out and done.returncode == 0, out + done.stderr
    assert [s["path"] for s in sent] == ["/v1/chat/completions"] * 2 + ["/v1/messages"] * 3
    line = next(i for i, text in enumerate(AGENT.splitlines(), 1) if "litellm.completion(" in text)
    [m101] = [l for l in out.splitlines() if " M101 " in l]
    assert m101.startswith(f"agent.py:{line}:1: M101 request 2 of the run") and "'10:00:01' -> '10:00:09'" in m101
    assert not [l for l in out.splitlines() if re.match(r"\S+:\d+:\d+: M\d+ ", l) and l != m101], out
    # the figures, from the two bodies as LiteLLM sent them and the reply the fake gave
    first, second = sent[0]["body"], sent[1]["body"]
    with_reply = ids(qwen, chatml(first["messages"] + [{"role": "assistant", "content": "Sure."}]))
    sent_ids = ids(qwen, chatml(second["messages"]))
    should = ids(qwen, chatml(first["messages"] + [{"role": "assistant", "content": "Sure."}] + second["messages"][3:]))
    shared, ideal = shared_prefix(with_reply, sent_ids), shared_prefix(with_reply, should)
    p_first = len(ids(qwen, chatml(first["messages"])))
    reused, best = openai_hosted(min(shared, p_first)), openai_hosted(min(ideal, p_first))
    assert (f"first divergent token {shared:,} of {len(sent_ids):,} (ideal {ideal:,}); openai reuses {reused:,} "
            f"tokens instead of {best:,} ({best - reused:,} lost)") in m101
    assert best - reused >= 1024
    assert "test: test_app.py::test_openai_model_with_a_clock" in out
    assert "sk-litellm-secret" not in out + done.stderr


def test_the_anthropic_conversation_through_litellm_is_clean_and_reads_its_breakpoint(run, qwen):
    done, sent = run
    bodies = [s["body"] for s in sent[2:]]
    # LiteLLM moved the system message into `system`, its breakpoint kept
    assert all(b["system"][0].get("cache_control") == {"type": "ephemeral"} for b in bodies), bodies[0]
    policy = bodies[0]["system"][0]["text"]
    # turns 2 and 3 each read the entry turn 1 wrote at the system block (no tools: the system
    # text alone), over the model's minimum of 1,024 tokens
    entry = len(ids(qwen, policy))
    assert entry >= 1024
    [summary] = [l for l in done.stdout.splitlines() if "test_app.py::test_anthropic_model_clean" in l and "requests" in l]
    assert f": 3 requests, anthropic claude-sonnet-4-5; " in summary
    assert f", {2 * entry:,} reused of {2 * entry:,} ideal, 0 lost" in summary, summary
