"""`promptlint server`: a Language Server (LSP over stdio) built on pygls.

Imported only by the `server` command (pygls is the optional `lsp` extra). Publishes
diagnostics on open and save, and on change after a debounce; the tokenizer stays loaded
between lints (the server's resident Workspace keeps it in its tokenizer pool). Positions are converted from
promptlint's 1-based code-point columns to the negotiated LSP encoding (UTF-16 unless the
client offers UTF-8/UTF-32). A quick fix inserts `{# promptlint: ignore[CODE] #}` (or
`# promptlint: ignore[CODE]` in Python files) at the end of the line; a template finding with a
fix gets it as a code action too (the same proven fix as `check --fix`, promptlint/fixes), the
blocks it wins back in its title, unsafe ones marked so. ``source.fixAll`` applies every safe fix
of the document at once (``fixing.fix_source``, what `check --fix` applies to the file). Every
diagnostic links to its rule's documentation (``codeDescription``, ``rule_doc_href``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from lsprotocol import types

try:  # pygls 2.x
    from pygls.lsp.server import LanguageServer

    PYGLS2 = True
except ImportError:  # pragma: no cover - pygls 1.x
    from pygls.server import LanguageServer

    PYGLS2 = False
from pygls.uris import to_fs_path

from promptlint import __version__
from promptlint.driver import suppress

log = logging.getLogger("promptlint.editor.lsp")

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
SOURCE = "promptlint"


@dataclass
class Options:
    tokenizer: Optional[str] = None
    tokenizer_sha256: Optional[str] = None
    config: Optional[str] = None
    engine: Optional[str] = None
    block_size: Optional[int] = None
    select: Optional[Tuple[str, ...]] = None
    ignore: Optional[Tuple[str, ...]] = None
    debounce: float = 0.3  # seconds after the last change before re-linting
    extra: Dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ positions


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in the code units of an LSP position encoding."""
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def to_position(lines: List[str], line: int, column: int, encoding: str) -> types.Position:
    """1-based line and code-point column -> 0-based LSP Position in ``encoding`` units."""
    if not lines:
        return types.Position(line=0, character=0)
    i = min(max(line - 1, 0), len(lines) - 1)
    text = lines[i].rstrip("\r\n")
    return types.Position(line=i, character=units(text[: max(column - 1, 0)], encoding))


def rule_doc_href(code: str) -> Optional[str]:
    """An absolute URI of rule ``code``'s documentation, for ``codeDescription.href``: its page
    (docs/rules/CODE.md) when promptlint runs from a checkout that has it, else the rule file the
    package ships (promptlint/_rules/CODE.toml: the same summary and sections); None for a code
    without a rule file. The project publishes no web address for its docs (docs/editors.md)."""
    return _doc_hrefs().get(code)


_HREFS: Dict[str, str] = {}


def _doc_hrefs() -> Dict[str, str]:
    if not _HREFS:
        from promptlint.base import registry

        pages = registry.rules_dir().parent / "docs" / "rules"
        for code, rule in registry.all_rules().items():
            page = pages / f"{code}.md"
            target = page if page.is_file() else rule.path
            if target is not None and target.is_file():
                _HREFS[code] = target.resolve().as_uri()
    return _HREFS


def to_diagnostic(f, lines: List[str], encoding: str) -> types.Diagnostic:
    start = to_position(lines, f.line, f.column, encoding)
    end = to_position(lines, f.end_line, f.end_column, encoding)
    if (end.line, end.character) < (start.line, start.character):
        end = start
    message = f.message + "".join(f"\nmodel {m.describe()}" for m in f.models) + (f"\nhelp: {f.help}" if f.help else "")
    href = rule_doc_href(f.code)
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=message,
        severity=SEVERITY.get(f.severity, types.DiagnosticSeverity.Warning),
        code=f.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data={"name": f.name},
    )


# ------------------------------------------------------------------ server


class PromptlintServer(LanguageServer):
    def __init__(self, options: Options):
        super().__init__("promptlint", f"v{__version__}")
        self.options = options
        self._pending: Dict[str, asyncio.TimerHandle] = {}
        self._settings: Dict[Tuple, Any] = {}
        self.last_findings: Dict[str, Tuple[str, list]] = {}  # resolved path -> (linted text, its findings)
        self.last_lint_ms: Optional[float] = None
        self._reported: set = set()
        self._checker = None  # the resident promptlint Workspace (pygls owns ``self.workspace``: the documents)

    # -- compatibility between pygls 1.x and 2.x
    def publish(self, uri: str, diagnostics: List[types.Diagnostic], version: Optional[int]) -> None:
        if PYGLS2:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
            )
        else:  # pragma: no cover
            self.publish_diagnostics(uri, diagnostics, version=version)

    def log(self, message: str, kind=types.MessageType.Log) -> None:
        if PYGLS2:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        else:  # pragma: no cover
            self.show_message_log(message, kind)

    def show(self, message: str, kind=types.MessageType.Error) -> None:
        if message in self._reported:  # one popup per distinct problem
            return
        self._reported.add(message)
        if PYGLS2:
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))
        else:  # pragma: no cover
            self.show_message(message, kind)

    @property
    def encoding(self) -> str:
        codec = getattr(self.workspace, "position_codec", None)
        return getattr(codec, "encoding", None) or types.PositionEncodingKind.Utf16

    # -- settings: discovered per document, cached while the config file is unchanged
    def settings_for(self, path: Path):
        from promptlint.project.config import find_config, load_settings

        found = None if self.options.config else find_config(path.parent)
        where = Path(self.options.config) if self.options.config else (found[0] if found else None)
        try:
            stamp = where.stat().st_mtime_ns if where else None
        except OSError:
            stamp = None
        key = (str(where), stamp, None if where else str(path.parent))
        if key not in self._settings:
            o = self.options
            overrides = {
                "tokenizer": o.tokenizer,
                "tokenizer_sha256": o.tokenizer_sha256,
                "engine": o.engine,
                "block_size": o.block_size,
                "select": o.select,
                "ignore": o.ignore,
            }
            self._settings[key] = load_settings(o.config, path, overrides, base=Path.cwd())  # the editor's own process
        return self._settings[key]

    # -- linting
    def open_document(self, uri: str):
        """The editor's buffer for ``uri``, or None when the client never opened it (pygls would
        read the file from disk instead: unbounded, and not what the editor shows)."""
        if uri not in self.workspace.text_documents:
            return None
        return self.workspace.get_text_document(uri)

    def lint_uri(self, uri: str) -> None:
        from promptlint.doors.bounded_io import MAX_FILE_BYTES

        self._pending.pop(uri, None)
        doc = self.open_document(uri)
        fs = to_fs_path(uri)
        if doc is None or fs is None:
            return
        path = Path(fs)
        if not lintable(path):
            self.publish(uri, [], doc.version)
            return
        text = doc.source
        if len(text) > MAX_FILE_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
            self.publish(uri, [self.too_large(path, text, MAX_FILE_BYTES)], doc.version)
            return
        try:
            diagnostics = self.diagnostics(path, text)
        except Exception as e:  # config, tokenizer or internal errors: say so, keep serving
            from promptlint.project.config import ConfigError
            from promptlint.tokenization.tokens import TokenizerError

            if isinstance(e, (ConfigError, TokenizerError)):
                self.show(f"promptlint: {e}")
            else:
                log.exception("lint failed")
                self.show(f"promptlint: internal error: {type(e).__name__}: {e}")
            return
        self.publish(uri, diagnostics, doc.version)

    def too_large(self, path: Path, text: str, limit: int) -> types.Diagnostic:
        """The E005 a file over the size cap gets from `check`, for a buffer (which is not linted)."""
        from promptlint.analysis.kernel import file_error

        f = file_error(str(path), "E005", f"file is larger than {limit:,} bytes; exclude it or split it")
        return to_diagnostic(f, text[:10_000].splitlines() or [""], self.encoding)

    def checker(self, settings):
        """The server's one resident Workspace under ``settings``: its tokenizer pool keeps what it
        parsed between edits (within the pool's budget), and it analyses in this process."""
        import os

        from promptlint.driver.workspace import Workspace
        from promptlint.tokenization.window_encode import FULL_ENCODE_ENV

        if self._checker is None:  # the server's environment, read once (a front end's)
            self._checker = Workspace(settings, resident=True, debug=bool(os.environ.get("PROMPTLINT_DEBUG")),
                                      full_encode=os.environ.get(FULL_ENCODE_ENV, "") not in ("", "0"))
        return self._checker.with_settings(settings)

    def installed_for(self, uri: str):
        """``with ls.installed_for(uri):`` a code action's re-checks (a fix proven by linting it
        again) use the resident Workspace's tokenizer pool, as the diagnostics do."""
        import contextlib

        fs = to_fs_path(uri)
        return self.checker(self.settings_for(Path(fs))).installed() if fs is not None else contextlib.nullcontext()

    def diagnostics(self, path: Path, text: str) -> List[types.Diagnostic]:
        start = time.perf_counter()
        settings = self.settings_for(path)
        # every deployed model (`tokenizers`): one diagnostic per hazard, merged as `check` merges them
        report = self.checker(settings).check([], {str(path): text})
        target = path.resolve()
        self.last_findings[str(target)] = (text, [f for f in report.findings if _same_file(f.path, target)])
        lines = text.splitlines() or [""]
        out = [
            to_diagnostic(f, lines, self.encoding)
            for f in report.errors + report.findings
            if _same_file(f.path, target)
        ]
        self.last_lint_ms = (time.perf_counter() - start) * 1000
        self.log(f"promptlint: linted {path.name} in {self.last_lint_ms:.1f} ms ({len(out)} diagnostics)")
        return out

    def schedule(self, uri: str, delay: float) -> None:
        old = self._pending.pop(uri, None)
        if old is not None:
            old.cancel()
        if delay <= 0:
            self.lint_uri(uri)
            return
        loop = asyncio.get_event_loop()
        self._pending[uri] = loop.call_later(delay, self.lint_uri, uri)

    def forget(self, uri: str) -> None:
        old = self._pending.pop(uri, None)
        if old is not None:
            old.cancel()
        fs = to_fs_path(uri)
        if fs is not None:
            self.last_findings.pop(str(Path(fs).resolve()), None)
        self.publish(uri, [], None)


def lintable(path: Path) -> bool:
    """Documents some analyzer handles (templates, chat templates, Python, TypeScript/JavaScript)."""
    from promptlint.analyzers import analyzer_for

    return analyzer_for(path) is not None


def _same_file(reported: str, target: Path) -> bool:
    try:
        return Path(reported).resolve() == target
    except OSError:
        return False


def suppression_action(uri: str, lines: List[str], diag: types.Diagnostic, encoding: str) -> Optional[types.CodeAction]:
    """A quick fix adding the diagnostic's code to an ignore comment on its line."""
    code = str(diag.code) if diag.code is not None else None
    if not code or diag.source != SOURCE:
        return None
    i = diag.range.start.line
    if not (0 <= i < len(lines)):
        return None
    python = suppress.is_python(uri)
    script = suppress.is_script(uri)
    text = lines[i].rstrip("\r\n")
    merged = suppress.add_code(text, code, python, script)
    if merged is not None:
        if merged == text:
            return None
        edit = types.TextEdit(
            range=types.Range(start=types.Position(line=i, character=0), end=types.Position(line=i, character=units(text, encoding))),
            new_text=merged,
        )
    else:
        sep = "  " if python or script else ""  # a Jinja comment renders nothing; a space before it would render
        at = types.Position(line=i, character=units(text, encoding))
        edit = types.TextEdit(range=types.Range(start=at, end=at), new_text=(sep if text.strip() else "") + suppress.comment_for(code, python, script))
    return types.CodeAction(
        title=f"Suppress {code} on this line (promptlint)",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        edit=types.WorkspaceEdit(changes={uri: [edit]}),
    )


def fix_actions(ls: "PromptlintServer", uri: str, text: str, diags: List[types.Diagnostic]) -> List[types.CodeAction]:
    """The proven template fix of each diagnostic that has one, as a whole-document edit."""
    from promptlint.analyzers import analyzer_for
    from promptlint.fixes import SAFE
    from promptlint.fixes import chat, templates
    from promptlint.fixes.templates import fixable

    fs = to_fs_path(uri)
    if fs is None:
        return []
    path = Path(fs)
    analyzer = analyzer_for(path)
    # a chat template too, but not one stored in JSON (its diagnostics are placed by the template's lines)
    if analyzer is None or not (analyzer.__name__.endswith(".jinja_template")
                                or (analyzer.__name__.endswith(".chat_template") and path.suffix != ".json")):
        return []
    fix_text = chat.fix_text if analyzer.__name__.endswith(".chat_template") else templates.fix_text
    findings = _findings_of(ls, path, text)
    settings = ls.settings_for(path)
    lines = text.split("\n")
    whole = types.Range(start=types.Position(line=0, character=0),
                        end=types.Position(line=len(lines) - 1, character=units(lines[-1], ls.encoding)))
    actions = []
    for diag in diags:
        if diag.source != SOURCE:
            continue
        f = next((f for f in findings if f.code == str(diag.code) and f.line - 1 == diag.range.start.line and fixable(f)), None)
        if f is None:
            continue
        new_text, outcomes = fix_text(path, f.path, text, findings, settings, unsafe=True, only=f)
        done = [o for o in outcomes if o.applied]
        if not done or new_text == text:
            continue
        o = done[0]
        won = f": {o.before:,} → {o.after:,} eligible blocks per request" if o.before is not None and o.after is not None else ""
        unsafe = o.safety != SAFE
        actions.append(types.CodeAction(
            title=f"Fix {o.code}{' (unsafe: changes the text the model sees)' if unsafe else ''}: {o.title}{won} (promptlint)",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diag],
            is_preferred=not unsafe,
            edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=new_text)]}),
        ))
    return actions


def _findings_of(ls: "PromptlintServer", path: Path, text: str) -> list:
    """The findings of ``text`` as ``path``: the last diagnostics' when they were for this text, else fresh."""
    key = str(path.resolve())
    cached = ls.last_findings.get(key)
    if cached is None or cached[0] != text:
        ls.diagnostics(path, text)
        cached = ls.last_findings.get(key, (text, []))
    return cached[1]


def fix_all_action(ls: "PromptlintServer", uri: str, text: str) -> Optional[types.CodeAction]:
    """``source.fixAll``: every safe fix of the document (templates proven by re-checking, Python
    codemods), as `check --fix` would apply them to the file; None when there is nothing to fix."""
    from promptlint.fixes.fixing import fix_source

    fs = to_fs_path(uri)
    if fs is None:
        return None
    path = Path(fs)
    findings = _findings_of(ls, path, text)
    if not findings:
        return None
    new_text, done = fix_source(path, findings[0].path, text, findings, ls.settings_for(path), unsafe=False)
    if new_text == text or not done.fixed:
        return None
    lines = text.split("\n")
    whole = types.Range(start=types.Position(line=0, character=0),
                        end=types.Position(line=len(lines) - 1, character=units(lines[-1], ls.encoding)))
    codes = ", ".join(sorted({f.code for f in done.fixed}))
    n = len(done.fixed)
    return types.CodeAction(
        title=f"Fix all safe promptlint fixes: {n} finding{'s' if n != 1 else ''} ({codes})",
        kind=types.CodeActionKind.SourceFixAll,
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=new_text)]}),
    )


def _wanted(only: Optional[List[str]], kind: str) -> bool:
    """Does the client's ``context.only`` ask for actions of ``kind`` (a kind covers its sub-kinds)?"""
    return only is None or any(kind == k or kind.startswith(k + ".") for k in only)


def build_server(options: Options) -> PromptlintServer:
    server = PromptlintServer(options)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PromptlintServer, params: types.DidOpenTextDocumentParams):
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PromptlintServer, params: types.DidSaveTextDocumentParams):
        name = Path(to_fs_path(params.text_document.uri) or "").name
        if name in ("pyproject.toml", "promptlint.toml"):
            ls._settings.clear()
            for doc_uri in list(ls.workspace.text_documents):
                ls.schedule(doc_uri, 0)
            return
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PromptlintServer, params: types.DidChangeTextDocumentParams):
        ls.schedule(params.text_document.uri, ls.options.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PromptlintServer, params: types.DidCloseTextDocumentParams):
        ls.forget(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]),
    )
    def code_action(ls: PromptlintServer, params: types.CodeActionParams):
        uri = params.text_document.uri
        doc = ls.open_document(uri)
        if doc is None:  # never opened: no diagnostics of ours to act on
            return []
        only = params.context.only
        actions = []
        if _wanted(only, types.CodeActionKind.QuickFix):
            lines = doc.source.splitlines()
            try:
                with ls.installed_for(uri):
                    actions += fix_actions(ls, uri, doc.source, params.context.diagnostics)
            except Exception as e:  # a fix that fails must not cost the editor its suppression quick fix
                log.exception("fix failed")
                ls.log(f"promptlint: no fix offered: {type(e).__name__}: {e}")
            for diag in params.context.diagnostics:
                action = suppression_action(uri, lines, diag, ls.encoding)
                if action is not None:
                    actions.append(action)
        if _wanted(only, types.CodeActionKind.SourceFixAll):
            try:
                with ls.installed_for(uri):
                    action = fix_all_action(ls, uri, doc.source)
            except Exception as e:  # a failing fix costs the editor this action, not the others
                log.exception("fix all failed")
                ls.log(f"promptlint: no fix-all offered: {type(e).__name__}: {e}")
                action = None
            if action is not None:
                actions.append(action)
        return actions

    return server


def serve(options: Options, stdin=None, stdout=None) -> int:
    """Serve over stdio until the client exits; 1 when the session ended on broken framing."""
    import sys

    from promptlint.editor.lsp_stdio import StrictStdin
    from promptlint.tokenization.tokens import env_tokenizer_threads

    env_tokenizer_threads()  # a resident Workspace forks no workers: each lint is one buffer anyway
    _one_line_client_errors()
    stdout = stdout or sys.stdout.buffer
    strict = StrictStdin(stdin or sys.stdin.buffer, stdout)
    build_server(options).start_io(strict, stdout)
    return strict.status


class _ClientErrorFilter(logging.Filter):
    """pygls logs a malformed message from the client (`Position.line` of -1, a `uri` that is an
    object) with its whole traceback, answered with a JSON-RPC error all the same: the client's
    mistake, not ours, so one line (PROMPTLINT_DEBUG=1 keeps the traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        import os

        from pygls.exceptions import JsonRpcException

        if os.environ.get("PROMPTLINT_DEBUG"):
            return True
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, JsonRpcException):
            cause = error.__cause__ or error.__context__
            detail = f" ({type(cause).__name__})" if cause else ""
            record.msg, record.args = f"{record.getMessage()}: {error}{detail}", ()
            record.exc_info = record.exc_text = None
        text = record.getMessage()
        if "Traceback (most recent call last)" in text:  # pygls formats some into the message itself
            lines = [line.strip(" |+-") for line in text.splitlines()]
            last = next((line for line in reversed(lines) if line and not line.startswith(("File ", "^"))), "")
            record.msg, record.args = f"{lines[0]}: {last}", ()
        return True


def _one_line_client_errors() -> None:
    pygls_log = logging.getLogger("pygls")
    if not any(isinstance(h.filters[0] if h.filters else None, _ClientErrorFilter) for h in pygls_log.handlers):
        handler = logging.StreamHandler()  # sys.stderr at the time of each record
        handler.setLevel(logging.WARNING)
        handler.addFilter(_ClientErrorFilter())
        pygls_log.addHandler(handler)
        pygls_log.propagate = False
