"""`promptlint server`, spoken to over stdio as an editor would: initialize -> didOpen -> publishDiagnostics."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from integration_helpers import BAD, QWEN, REPO, SHARED

pytest.importorskip("pygls")

TIMEOUT = 60


class Client:
    """A minimal LSP client: Content-Length framing, requests with ids, a queue of incoming messages."""

    def __init__(self, *args, cwd):
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "promptlint", "server", *map(str, args)],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.inbox: "queue.Queue[dict]" = queue.Queue()
        self.logs: list = []  # window/logMessage texts, kept even when wait() skips them
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.decode("ascii").strip()
                if not line:
                    break
                k, v = line.split(":", 1)
                headers[k.lower()] = v.strip()
            message = json.loads(out.read(int(headers["content-length"])))
            if message.get("method") == "window/logMessage":
                self.logs.append(message["params"]["message"])
            self.inbox.put(message)

    def send(self, message):
        body = json.dumps(message).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == rid and "method" not in m)

    def wait(self, predicate, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message within {timeout}s; stderr: {self.stderr_tail()}")
            try:
                m = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if predicate(m):
                return m

    def diagnostics(self, uri, version=None):
        m = self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and (version is None or m["params"].get("version") == version)
        )
        return m["params"]["diagnostics"]

    def stderr_tail(self):
        if self.proc.poll() is None:
            return "(running)"
        return self.proc.stderr.read().decode("utf-8", "replace")[-2000:]

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def client(tmp_path):
    c = Client("--tokenizer", QWEN, "--debounce", "50", cwd=tmp_path)
    init = c.request(
        "initialize",
        {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {"general": {"positionEncodings": ["utf-16"]}}},
    )
    assert init["result"]["capabilities"]["positionEncoding"] == "utf-16"
    assert init["result"]["serverInfo"]["name"] == "promptlint"
    c.notify("initialized", {})
    yield c
    c.close()


def open_doc(client, path: Path, text: str, language="jinja", version=1):
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}}
    )
    return uri


def change(client, uri, text, version):
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
    )


def lint_times(client):
    """Lint durations the server reported in window/logMessage so far."""
    hits = (re.search(r"linted .* in ([0-9.]+) ms", m) for m in list(client.logs))
    return [float(h.group(1)) for h in hits if h]


def test_diagnostics_on_open_with_utf16_positions_and_the_quick_fix(client, tmp_path):
    # never saved: the buffer is linted, not the disk. The clock emoji is 2 UTF-16 code units.
    text = BAD.replace("Current time:", "\N{ALARM CLOCK}\N{CLOCK FACE THREE OCLOCK} Current time:")
    path = tmp_path / "prompts" / "support.j2"
    uri = open_doc(client, path, text)
    diags = client.diagnostics(uri, version=1)
    assert [d["code"] for d in diags] == ["M101"]
    d = diags[0]
    assert d["source"] == "promptlint" and d["severity"] == 2
    # code points: "⏰🕒 Current time: " is 17 chars, so `{{` is column 18 (1-based);
    # in UTF-16 the non-BMP 🕒 counts twice: character 18 (0-based)
    assert d["range"] == {"start": {"line": 0, "character": 18}, "end": {"line": 0, "character": 27}}
    assert "`now`" in d["message"]

    action = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}},
    )["result"]
    action = [a for a in action if a["title"].startswith("Suppress")]  # the move fix: test_fix_code_action...
    assert len(action) == 1 and action[0]["kind"] == "quickfix"
    (edit,) = action[0]["edit"]["changes"][uri]
    assert edit["newText"] == "{# promptlint: ignore[M101] #}"  # no space: the render stays byte-identical
    first = text.split("\n")[0]
    assert edit["range"]["start"] == {"line": 0, "character": len(first.encode("utf-16-le")) // 2}

    lines = text.split("\n")
    lines[0] += edit["newText"]
    change(client, uri, "\n".join(lines), 2)
    assert client.diagnostics(uri, version=2) == []  # debounced change re-linted: suppressed

    # a second, different template in the same server: tokenizer already loaded
    other = open_doc(client, tmp_path / "b.prompt", "{{ request_id }} " + SHARED + "\n{{ question }}\n")
    assert [d["code"] for d in client.diagnostics(other)] == ["M101"]


def test_fix_code_action_is_offered_and_applied_through_the_protocol(client, tmp_path, qwen):
    """The template fix comes as a code action with the blocks it wins back in its title; applying
    its edit (as the client would) and sending the result leaves no diagnostic."""
    path = tmp_path / "prompts" / "support.j2"
    uri = open_doc(client, path, BAD)
    (d,) = client.diagnostics(uri, version=1)
    actions = client.request(
        "textDocument/codeAction", {"textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}},
    )["result"]
    fix = [a for a in actions if a["title"].startswith("Fix M101")]
    assert len(fix) == 1 and fix[0]["kind"] == "quickfix" and not fix[0].get("isPreferred")
    assert "(unsafe: changes the text the model sees): move line 1 (`now`) to before line 3" in fix[0]["title"]
    (edit,) = fix[0]["edit"]["changes"][uri]
    assert edit["range"]["start"] == {"line": 0, "character": 0}
    assert edit["newText"] == f"{SHARED}\nCurrent time: {{{{ now }}}}\nQuestion: {{{{ question }}}}\n"
    # the blocks in the title, checked by a direct encode of both layouts (B = 16, question changed vs time changed)
    won = re.search(r": (\d+) → (\d+) eligible blocks per request", fix[0]["title"])
    def blocks(layout):
        a = qwen.encode(layout.format(t="2025-03-14 09:26:53")).ids
        b = qwen.encode(layout.format(t="2025-03-14 09:27:00")).ids
        return next(i for i, (x, y) in enumerate(zip(a, b)) if x != y) // 16

    before = blocks("Current time: {t}\n" + SHARED + "\nQuestion: a\n")
    after = blocks(SHARED + "\nCurrent time: {t}\nQuestion: a\n")
    assert (int(won.group(1)), int(won.group(2))) == (before, after) and after > before
    change(client, uri, edit["newText"], 2)
    assert client.diagnostics(uri, version=2) == []


def test_relint_after_the_first_lint_is_fast(client, tmp_path):
    path = tmp_path / "t.j2"
    path.write_text(BAD, encoding="utf-8")
    uri = open_doc(client, path, BAD)
    assert len(client.diagnostics(uri, version=1)) == 1
    times = []
    for v in range(2, 7):
        text = BAD.replace("Acme", f"Acme {v}")
        change(client, uri, text, v)
        assert len(client.diagnostics(uri, version=v)) == 1
    times = lint_times(client)
    relints = times[1:]
    assert len(relints) >= 3, times
    print(f"\nfirst lint {times[0]:.1f} ms; re-lints {', '.join(f'{t:.1f}' for t in relints)} ms")
    # the target is < 50 ms (measured: see the report); a loose bound keeps slow CI runners green
    assert min(relints) < 250, relints
    # save lints at once; closing clears the diagnostics
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert len(client.diagnostics(uri, version=6)) == 1
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []


def test_unlintable_documents_get_no_diagnostics(client, tmp_path):
    uri = open_doc(client, tmp_path / "notes.md", "Current time: {{ now }}\n", language="markdown")
    assert client.diagnostics(uri) == []


def test_cli_does_not_import_pygls(tmp_path):
    code = (
        "import sys; from promptlint.cli import main\n"
        "try:\n    main(['check', '--help'])\nexcept SystemExit:\n    pass\n"
        "assert 'pygls' not in sys.modules and 'lsprotocol' not in sys.modules, 'pygls imported'\n"
        "sys.modules['pygls'] = None  # as if the lsp extra were not installed\n"
        "sys.exit(main(['server']))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO))
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        "promptlint: error: `promptlint server` needs pygls: pip install 'promptlint-kv[lsp]'"
    )


# ------------------------------------------------------------------ hostile input (issue 15 item 11)

WEDGE_TIMEOUT = 20  # a server that ignores a message never answers: fail in seconds, not minutes


def started(tmp_path):
    c = Client("--tokenizer", QWEN, "--debounce", "0", cwd=tmp_path)
    c.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}})
    c.notify("initialized", {})
    return c


def raw(client, data: bytes):
    client.proc.stdin.write(data)
    client.proc.stdin.flush()


def error_reply(client):
    return client.wait(lambda m: "error" in m and m.get("id") is None, timeout=WEDGE_TIMEOUT)["error"]


@pytest.mark.parametrize(
    "header,fragment",
    [
        (b"Content-Length: abc\r\n\r\n", "invalid Content-Length 'abc'"),
        (b"Content-Length: 99999999999\r\n\r\n", "over the limit"),
        (b"Content-Length 12\r\n\r\n", "malformed header line"),
        (b"Content-Type: application/json\r\n\r\n", "without a Content-Length"),
    ],
)
def test_broken_framing_is_answered_and_ends_the_session(tmp_path, header, fragment):
    # today: `abc` makes the server read every later message as part of a body (shutdown ignored,
    # a wedge); 99999999999 allocates that much (MemoryError). Now: a JSON-RPC error, then exit 1.
    c = started(tmp_path)
    try:
        raw(c, header + b'{"jsonrpc": "2.0", "id": 99, "method": "shutdown"}')
        c.send({"jsonrpc": "2.0", "id": 100, "method": "shutdown"})
        err = error_reply(c)
        assert err["code"] == -32700 and fragment in err["message"], err
        assert c.proc.wait(timeout=WEDGE_TIMEOUT) == 1
        stderr = c.proc.stderr.read().decode("utf-8", "replace")
        assert "Traceback" not in stderr and "MemoryError" not in stderr, stderr
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()


def test_a_body_that_is_not_json_is_answered_and_the_session_goes_on(tmp_path):
    c = started(tmp_path)
    try:
        for body in (b"{not json", b"[1, 2]"):
            raw(c, b"Content-Length: %d\r\n\r\n" % len(body) + body)
            assert error_reply(c)["code"] in (-32700, -32600)
        uri = open_doc(c, tmp_path / "t.j2", BAD)
        assert [d["code"] for d in c.diagnostics(uri)] == ["M101"]  # still serving
    finally:
        c.close()
    assert c.proc.returncode == 0


def test_code_action_on_an_unopened_document_is_empty_without_a_traceback(tmp_path):
    c = started(tmp_path)
    try:
        uri = (tmp_path / "never_opened.j2").as_uri()
        diag = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                "message": "x", "code": "M101", "source": "promptlint"}
        reply = c.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diag["range"],
                                                       "context": {"diagnostics": [diag]}})
        assert reply.get("result") == [], reply
    finally:
        c.close()
    stderr = c.proc.stderr.read().decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr


def test_a_buffer_over_the_size_cap_is_e005_and_not_linted(tmp_path):
    # the same 2,000,000-byte cap as `check` (a 5.3 MB buffer peaked at 1.6 GB when it was linted)
    c = started(tmp_path)
    try:
        big = "Current time: {{ now }}\n" + "x" * 2_000_001
        uri = open_doc(c, tmp_path / "big.j2", big)
        diags = c.diagnostics(uri)
        assert [d["code"] for d in diags] == ["E005"] and "larger than 2,000,000 bytes" in diags[0]["message"]
        small = open_doc(c, tmp_path / "small.j2", BAD)
        assert [d["code"] for d in c.diagnostics(small)] == ["M101"]
    finally:
        c.close()


def test_malformed_params_are_one_line_in_the_log_and_the_session_goes_on(tmp_path):
    # pygls logged a negative position or a `uri` object with its whole (exception group) traceback
    c = started(tmp_path)
    try:
        c.notify("textDocument/didChange", {"textDocument": {"uri": "file:///x.j2", "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": -1, "character": 0}}, "text": "x"}]})
        c.notify("textDocument/didOpen", {"textDocument": {"uri": {"x": 1}, "languageId": "jinja", "version": 1, "text": 5}})
        uri = open_doc(c, tmp_path / "t.j2", BAD)
        assert [d["code"] for d in c.diagnostics(uri)] == ["M101"]  # still serving
    finally:
        c.close()
    assert c.proc.returncode == 0
    stderr = c.proc.stderr.read().decode("utf-8", "replace")
    assert "Traceback" not in stderr and "Unable to deserialize message: ValueError: Position.line" in stderr, stderr


# ------------------------------------------------------------------ source.fixAll and rule links


def _rule_case(code, name):
    from promptlint.base import registry

    return next(c for c in registry.get(code).cases if c["name"] == name)


def _apply(text, edit):
    """A whole-document edit, as the client applies it (the range starts at 0:0 and covers the text)."""
    assert edit["range"]["start"] == {"line": 0, "character": 0}
    last = text.split("\n")
    assert edit["range"]["end"] == {"line": len(last) - 1, "character": len(last[-1].encode("utf-16-le")) // 2}
    return edit["newText"]


def test_fix_all_applies_the_safe_fixes_of_a_python_builder(client, tmp_path):
    case = _rule_case("M201", "python-json-dumps-into-system-prompt")
    uri = open_doc(client, tmp_path / "app.py", case["python"], language="python")
    diags = client.diagnostics(uri, version=1)
    assert [d["code"] for d in diags] == ["M201"]
    # every diagnostic links to its rule's page (this checkout's docs/rules/)
    assert diags[0]["codeDescription"] == {"href": (REPO / "docs" / "rules" / "M201.md").as_uri()}
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    actions = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": whole,
                                                         "context": {"diagnostics": [], "only": ["source.fixAll"]}})["result"]
    assert [a["kind"] for a in actions] == ["source.fixAll"]
    assert actions[0]["title"] == "Fix all safe promptlint fixes: 1 finding (M201)"
    (edit,) = actions[0]["edit"]["changes"][uri]
    fixed = _apply(case["python"], edit)
    assert fixed == case["fixed"]
    # "source" covers its sub-kinds; "quickfix" alone leaves fixAll out
    broad = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": whole,
                                                       "context": {"diagnostics": [], "only": ["source"]}})["result"]
    assert [a["kind"] for a in broad] == ["source.fixAll"]
    quick = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diags[0]["range"],
                                                       "context": {"diagnostics": diags, "only": ["quickfix"]}})["result"]
    assert quick and all(a["kind"] == "quickfix" for a in quick)
    change(client, uri, fixed, 2)
    assert client.diagnostics(uri, version=2) == []


def test_fix_all_leaves_unsafe_fixes_alone(client, tmp_path):
    """M101's template fix changes the text the model sees: a quick fix of its own, never part of fixAll."""
    uri = open_doc(client, tmp_path / "prompts" / "support.j2", BAD)
    (d,) = client.diagnostics(uri, version=1)
    assert d["codeDescription"] == {"href": (REPO / "docs" / "rules" / "M101.md").as_uri()}
    actions = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": d["range"],
                                                         "context": {"diagnostics": [d], "only": ["source.fixAll"]}})["result"]
    assert actions == []


def test_the_server_announces_fix_all(tmp_path):
    c = Client("--tokenizer", QWEN, cwd=tmp_path)
    try:
        init = c.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}})
        kinds = init["result"]["capabilities"]["codeActionProvider"]["codeActionKinds"]
        assert kinds == ["quickfix", "source.fixAll"]
    finally:
        c.close()


def test_rule_links_fall_back_to_the_shipped_rule_file(tmp_path, monkeypatch):
    """An installed wheel has the rule files (promptlint/_rules/CODE.toml) but no docs/rules/ pages:
    the link is the rule file, which holds the same summary and sections."""
    import shutil

    from promptlint.editor import lsp
    from promptlint.base import registry

    shipped = tmp_path / "site-packages" / "promptlint" / "_rules"
    shutil.copytree(registry.rules_dir(), shipped)
    monkeypatch.setattr(registry, "rules_dir", lambda: shipped)
    registry.all_rules.cache_clear()
    monkeypatch.setattr(lsp, "_HREFS", {})
    try:
        assert lsp.rule_doc_href("M106") == (shipped / "M106.toml").resolve().as_uri()
        assert lsp.rule_doc_href("NOPE") is None
        assert set(lsp._doc_hrefs()) == set(registry.all_rules())  # every code has a link
    finally:
        registry.all_rules.cache_clear()
