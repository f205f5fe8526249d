"""The pytest plugin: `pytest --promptlint-conversations[=report|fail]` (or the ini option
``promptlint_conversations = report|fail``) records every request the code under test sends
to an LLM endpoint through httpx or httpx2 (what the openai and anthropic SDKs, and what is built
on them, use), whatever the transport: a real one, ``MockTransport``, respx, a local fake server.

Inert unless asked for: registered through the ``pytest11`` entry point, it adds its options and
does nothing else. When on, ``Client.send``/``AsyncClient.send`` are wrapped: each request to a
known provider endpoint (``readers.ENDPOINTS``) keeps its body bytes, the URL's path (no query:
Gemini keys travel there), no header, the test id and the file:line of the first frame outside
the SDKs and httpx, and the time it was sent (cache lifetimes); of its response, the body's bytes
when ``send`` has read them, else the response with a tee that keeps the bytes the SDK reads (the
reply is assembled from the events: ``streams``). Nothing is parsed, tokenized or formatted
during the run (not even the file name relative to the root): the analysis (`promptlint
conversation`'s) runs once, at session end.
Ini options ``promptlint_tokenizer``, ``promptlint_tokenizer_sha256``, ``promptlint_provider``
choose the tokenizer and the reuse rule as the command's options do. Standard library only at
module level.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, List, Optional

MODES = ("report", "fail")
HTTP_MODULES = ("httpx", "httpx2")  # the clients the SDKs send through
# frames of these packages are the sending machinery, not the user's code
_MACHINERY = ("httpx", "httpx2", "httpcore", "openai", "anthropic", "respx", "google.genai", "google.api_core",
              "litellm", "langchain_openai", "langchain_anthropic", "promptlint.conversation", "asyncio", "contextlib",
              "functools", "anyio", "sniffio", "concurrent", "threading", "typing_extensions", "_pytest", "pluggy",
              "pydantic", "tenacity", "backoff", "wrapt", "opentelemetry")


def pytest_addoption(parser) -> None:
    group = parser.getgroup("promptlint", "promptlint conversations")
    group.addoption("--promptlint-conversations", nargs="?", const="report", default=None, metavar="report|fail",
                    help="record the LLM requests tests send and report where a conversation stops extending "
                         "its previous request (fail: also fail the run)")
    parser.addini("promptlint_conversations", "report | fail: as --promptlint-conversations (default: off)", default="")
    parser.addini("promptlint_tokenizer", "the model's tokenizer.json or model directory for the conversation report")
    parser.addini("promptlint_tokenizer_sha256", "its pin (sha256)")
    parser.addini("promptlint_provider", "whose reuse rule applies (auto, openai, anthropic, gemini, bedrock, vllm, "
                  "sglang, llamacpp)", default="auto")


class _Recorder:
    def __init__(self, mode: str, root: str) -> None:
        self.mode = mode
        self.root = root
        self.test_id: Optional[str] = None
        self.sent: List[tuple] = []  # (test id, file name, line, url path, body bytes, time sent, reply: _kept)
        self.patched: List[tuple] = []
        self.tees: dict = {}  # httpx module -> its (sync, async) tee stream classes, made once
        self.finder: Any = None
        self.machinery: dict = {}  # module name -> whether its frames are the sending machinery
        from promptlint.conversation.readers import ENDPOINTS

        self.suffixes = tuple(suffix for suffix, _ in ENDPOINTS)  # a known provider endpoint's path ends so
        self.findings: List[Any] = []
        self.text = ""

    # ----------------------------------------------------------------- recording

    def install(self) -> None:
        """Wrap the clients of httpx/httpx2 now if imported, else when the code under test first
        imports them (importing one the suite never uses would only add its import time)."""
        for name in HTTP_MODULES:
            if name in sys.modules:
                self._patch(sys.modules[name])
        self.finder = _OnImport(self)
        sys.meta_path.insert(0, self.finder)

    def _patch(self, module) -> None:
        for cls, is_async in ((getattr(module, "Client", None), False), (getattr(module, "AsyncClient", None), True)):
            original = cls.__dict__.get("send") if isinstance(cls, type) else None
            if original is None or any(c is cls for c, _ in self.patched):
                continue
            cls.send = self._async_send(original) if is_async else self._send(original)
            self.patched.append((cls, original))

    def uninstall(self) -> None:
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        for cls, original in reversed(self.patched):
            cls.send = original
        self.patched.clear()

    def _send(self, original):
        recorder = self

        def send(client, request, *args, **kwargs):
            entry = recorder._entry(request)
            response = original(client, request, *args, **kwargs)
            if entry is not None:
                recorder.sent.append(entry + (_kept(response, recorder.tees),))
            return response

        send.__wrapped__ = original
        return send

    def _async_send(self, original):
        recorder = self

        async def send(client, request, *args, **kwargs):
            entry = recorder._entry(request)
            response = await original(client, request, *args, **kwargs)
            if entry is not None:
                recorder.sent.append(entry + (_kept(response, recorder.tees),))
            return response

        send.__wrapped__ = original
        return send

    def _entry(self, request) -> Optional[tuple]:
        try:
            path = request.url.path
            if request.method != "POST" or not path.endswith(self.suffixes):
                return None
            body = request.content  # bytes: the SDKs build the body before sending
        except Exception:  # a streamed upload or another client's request object: not an LLM request body
            return None
        filename, line = self._caller()
        return (self.test_id, filename, line, path, bytes(body), time.time())

    def _caller(self) -> tuple:
        """The sending code's file name as its code object holds it, and its line: shown relative
        to the root at the end (``_shown``), not per request."""
        frame = sys._getframe(2)
        known = self.machinery
        while frame is not None:
            name = frame.f_globals.get("__name__", "")
            machinery = known.get(name)
            if machinery is None:  # decided once per module: a request walks some 50-90 frames
                machinery = known[name] = any(name == m or name.startswith(m + ".") for m in _MACHINERY)
            if not machinery:
                return frame.f_code.co_filename, frame.f_lineno
            frame = frame.f_back
        return "<unknown>", 1

    def _shown(self, filename: str, shown: dict) -> str:
        """``filename`` relative to the root when it lies under it, else as it is (once per file)."""
        found = shown.get(filename)
        if found is None:
            if filename == "<unknown>":
                found = filename
            else:
                try:
                    found = os.path.relpath(filename, self.root)
                except ValueError:
                    found = filename
                if found.startswith(".."):
                    found = filename
            shown[filename] = found
        return found

    # ----------------------------------------------------------------- the analysis, once

    def analyse(self, config) -> None:
        """The report, once. The parsed bodies all live until it is made, and hold no cycles: the
        collector is paused meanwhile (as ``readers.read`` does), else each full collection of the
        analysis traverses every one of them again."""
        import gc

        paused = gc.isenabled()
        gc.disable()
        try:
            self._analyse(config)
        finally:
            if paused:
                gc.enable()

    def _analyse(self, config) -> None:
        requests, bad = self._requests()
        lines = [f"promptlint: {b}" for b in bad]
        if requests:
            lines.append(self._report(config, requests))
        self.text = "\n".join(lines)

    def _requests(self) -> tuple:
        """The recorded requests, parsed (each body's history shared with the previous body of its
        test and endpoint where it repeats it: ``bodies``), and one line per body that is not a
        JSON object."""
        from promptlint.conversation import bodies, shapes
        from promptlint.conversation.capture import Request
        from promptlint.conversation.readers import endpoint_provider, with_url_model

        requests, bad, shown, parser = [], [], {}, bodies.Parser()
        for n, (test_id, filename, line, path, body, sent_at, response) in enumerate(self.sent, 1):
            where = self._shown(filename, shown)
            try:
                parsed, raws = parser.parse(body.decode("utf-8"), (test_id, path))
            except (UnicodeDecodeError, ValueError, RecursionError):
                bad.append(f"{where}:{line}: request {n} ({test_id}): not a JSON body")
                continue
            if not isinstance(parsed, dict):
                bad.append(f"{where}:{line}: request {n} ({test_id}): not a JSON object")
                continue
            provider = endpoint_provider(path)
            request = Request(n, with_url_model(parsed, path, provider), where, line, None, _reply(response),
                              _hint(provider), test_id, where=f"request {n} of the run", time=sent_at)
            shape = shapes.of(request)
            if shape.message_key in raws:  # the messages as sent: the text the next request is compared with
                shape.wire = raws[shape.message_key]
            requests.append(request)
        return requests, bad

    def _report(self, config, requests) -> str:
        import io
        from types import SimpleNamespace

        from promptlint import report as reporters
        from promptlint.operators.captured import Settings
        from promptlint.commands.conversation import _tables, analyse_requests
        from promptlint.conversation import report

        def ini(name: str) -> Optional[str]:
            value = config.getini(name)
            return str(value) if value else None

        tokenizer = ini("promptlint_tokenizer")
        if tokenizer and not os.path.isabs(tokenizer):
            tokenizer = os.path.join(self.root, tokenizer)
        settings = Settings(tokenizer=tokenizer, tokenizer_sha256=ini("promptlint_tokenizer_sha256"), quiet=True)
        tok = settings.load_tokenizer()
        args = SimpleNamespace(cache_minimums=None, price_table=None, provider_rules=None, table_max_age=365)
        tables = _tables(args)
        result, summary = analyse_requests(requests, settings, tok, tables, ini("promptlint_provider") or "auto")
        self.findings = result.findings
        from promptlint.commands.report_context import from_process

        out = io.StringIO()
        reporters.get("full").write(result, from_process(out), out)
        out.write(report.format_text(summary, tok.spec.embedded, {}))
        return out.getvalue()


class _OnImport:
    """A meta-path finder that wraps httpx/httpx2 the moment they are first imported: it finds
    the module with the finders after it, and that spec's own loader runs, then patches (the
    module keeps its real loader; ``pytest_runtest_setup`` catches a loader that would not take it)."""

    def __init__(self, recorder: "_Recorder") -> None:
        self.recorder = recorder

    def find_spec(self, name, path=None, target=None):
        if name not in HTTP_MODULES:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None) if finder is not self else None
            spec = find(name, path, target) if find is not None else None
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                real, recorder = spec.loader.exec_module, self.recorder

                def exec_module(module):
                    real(module)
                    recorder._patch(module)

                try:
                    spec.loader.exec_module = exec_module  # this spec's loader only (one per module found)
                except AttributeError:
                    pass
                return spec
        return None


def _hint(provider: Optional[str]) -> Optional[str]:
    return "openai" if provider == "openai-responses" else provider


def _reply(kept) -> Optional[dict]:
    """The reply: the response's body when ``send`` had read it (kept as bytes), else the
    response, whose body was read later or whose event stream the SDK read through the tee,
    assembled (``streams``)."""
    from promptlint.conversation.streams import reply_from_bytes

    content = kept if isinstance(kept, bytes) else getattr(kept, "_content", None)
    if not isinstance(content, (bytes, bytearray)):
        content = b"".join(getattr(kept.stream, "promptlint_seen", None) or ())
    return reply_from_bytes(bytes(content)) if content else None


def _kept(response, tees: dict):
    """What is kept of a response until the end: its body's bytes when ``send`` read it (the
    response itself, its request and headers are left to the collector: a suite of many
    requests would otherwise keep them all alive, and every collection would walk them), else
    the response with its stream teed."""
    content = getattr(response, "_content", None)
    if isinstance(content, bytes):
        return content
    return _tee(response, tees)


def _tee(response, tees: dict):
    """A streamed response (not read by ``send``) gets a stream that keeps the bytes the SDK
    reads through it: the reply is assembled from them at the end. Read responses are left as they are."""
    if hasattr(response, "_content"):
        return response
    module = sys.modules.get(type(response).__module__.split(".", 1)[0])
    if module is None or not hasattr(module, "SyncByteStream"):
        return response
    if module not in tees:
        tees[module] = _tee_classes(module)
    sync_tee, async_tee = tees[module]
    if isinstance(response.stream, module.SyncByteStream):
        response.stream = sync_tee(response.stream)
    elif isinstance(response.stream, module.AsyncByteStream):
        response.stream = async_tee(response.stream)
    return response


def _tee_classes(module):
    class SyncTee(module.SyncByteStream):
        def __init__(self, inner):
            self.inner, self.promptlint_seen = inner, []

        def __iter__(self):
            for chunk in self.inner:
                self.promptlint_seen.append(chunk)
                yield chunk

        def close(self):
            self.inner.close()

    class AsyncTee(module.AsyncByteStream):
        def __init__(self, inner):
            self.inner, self.promptlint_seen = inner, []

        async def __aiter__(self):
            async for chunk in self.inner:
                self.promptlint_seen.append(chunk)
                yield chunk

        async def aclose(self):
            await self.inner.aclose()

    return SyncTee, AsyncTee


_KEY = "promptlint_conversations_recorder"


def _mode(config) -> Optional[str]:
    given = config.getoption("promptlint_conversations", None)
    if given is not None and given not in MODES:
        # the bare option took the next argument (a test path: `--promptlint-conversations tests/`):
        # give it back to the paths pytest collects, and record in the default mode
        explicit = getattr(config, "args_source", None) == getattr(getattr(config, "ArgsSource", None), "ARGS", 0)
        config.args[:] = [given] + (list(config.args) if explicit else [])
        given = "report"
    mode = given or str(config.getini("promptlint_conversations") or "").strip()
    if not mode or mode == "off":
        return None
    if mode not in MODES:
        import pytest

        raise pytest.UsageError(f"promptlint_conversations = {mode!r}: use report or fail (or off)")
    return mode


def pytest_configure(config) -> None:
    mode = _mode(config)
    if mode is None:
        return
    recorder = _Recorder(mode, str(config.rootpath))
    recorder.install()
    setattr(config, _KEY, recorder)


def pytest_runtest_setup(item) -> None:
    recorder = getattr(item.config, _KEY, None)
    if recorder is not None:
        recorder.test_id = item.nodeid
        for name in HTTP_MODULES:  # a client imported by a loader the finder could not wrap
            if name in sys.modules:
                recorder._patch(sys.modules[name])


def pytest_sessionfinish(session, exitstatus) -> None:
    recorder = getattr(session.config, _KEY, None)
    if recorder is None:
        return
    recorder.uninstall()
    try:
        recorder.analyse(session.config)
    except Exception as e:  # a report that cannot be made is said in one line, never a traceback
        from promptlint.doors.line_guard import one_line

        recorder.text = f"promptlint: the conversation report failed: {type(e).__name__}: {one_line(e)}"
        if recorder.mode == "fail":
            session.exitstatus = 1
        return
    if recorder.mode == "fail" and recorder.findings and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    recorder = getattr(config, _KEY, None)
    if recorder is None:
        return
    terminalreporter.section("promptlint conversations")
    terminalreporter.write(recorder.text if recorder.text.endswith("\n") or not recorder.text else recorder.text + "\n")
    if not recorder.sent:
        terminalreporter.write_line("no LLM requests recorded")
