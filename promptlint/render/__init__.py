"""Render templates exactly as the serving stack would, with a source map and limits.

``load_template`` parses a template file (syntax errors surface here);
``render`` produces one ``Rendered`` (text + source map) for one set of inputs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from promptlint.render.sandbox import DeadlineExceeded, ValueTooLarge
from promptlint.render.sourcemap import SourceMap, SourceText


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 2.0
    max_output_bytes: int = 1_000_000
    max_recursion: int = 200  # template nesting levels a render may add (macros calling themselves)


PARSE_TIMEOUT_FLOOR_S = 10.0  # parse + compile time limit is max(render-timeout, this)


class RenderError(Exception):
    """A template that cannot be analysed: syntax error, render failure, limit."""

    def __init__(self, code: str, message: str, template: Optional[str] = None, line: Optional[int] = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.template = template
        self.line = line


@dataclass
class Rendered:
    text: str
    sourcemap: SourceMap


class Clock:
    """The frozen clock behind `strftime_now`, set per render."""

    def __init__(self, value: Optional[datetime] = None):
        self.value = value or datetime(2025, 3, 14, 9, 26, 53)

    def __call__(self) -> datetime:
        return self.value


class _Loader:
    """Loads templates from search paths, with in-memory overrides (stdin, tests)."""

    def __init__(self, search_paths: Sequence[Path], overrides: Optional[Dict[str, str]] = None):
        from jinja2 import ChoiceLoader, DictLoader, FileSystemLoader

        self.overrides = dict(overrides or {})
        self.jinja_loader = ChoiceLoader(
            [DictLoader(self.overrides), FileSystemLoader([str(p) for p in search_paths], followlinks=False)]
        )


@dataclass
class LoadedTemplate:
    path: Path
    name: str
    env: object
    template: object
    clock: Clock
    _source_texts: Dict[str, SourceText] = field(default_factory=dict, repr=False, compare=False)

    def sources(self) -> Dict[str, SourceText]:
        """Source text of the template and of everything it loaded (includes)."""
        memo = self._source_texts  # name -> SourceText, reused while the text is unchanged
        out = {}
        for name in list(self.env.loaded_template_names):
            try:
                src, _, _ = self.env.loader.get_source(self.env, name)
            except Exception:
                continue
            known = memo.get(name)
            if known is None or known.text != src:
                known = memo[name] = SourceText(src)
            out[name] = known
        return out

    def undeclared(self) -> frozenset:
        """``jinja2.meta.find_undeclared_variables(env.parse(source))`` for this template, from the
        names its compile recorded (no second parse and code generation)."""
        resolved = getattr(self.env, "promptlint_resolved", {}).get(self.name)
        if resolved is None:
            from jinja2 import meta

            source, _, _ = self.env.loader.get_source(self.env, self.name)
            return frozenset(meta.find_undeclared_variables(self.env.parse(source)))
        return frozenset(p for p in resolved if p not in self.env.globals)


def load_template(
    path: Path,
    env_kind: str = "jinja2",
    search_paths: Sequence[Path] = (),
    source: Optional[str] = None,
    limits: Optional[Limits] = None,
) -> LoadedTemplate:
    """Parse ``path`` (or ``source`` given as its text) in a sandboxed environment.

    Parsing and compiling run under the render time limit too (constant folding
    evaluates filters at compile time).
    """
    from jinja2.exceptions import TemplateNotFound, TemplateSyntaxError

    from promptlint.render.environments import make_environment
    from promptlint.render.limits import RenderGuard

    path = Path(path)
    name = path.name
    overrides = {name: source} if source is not None else {}
    roots = [path.parent] + [p for p in search_paths if p != path.parent]
    loader = _Loader(roots, overrides)
    clock = Clock()
    env = make_environment(env_kind, loader=loader.jinja_loader, clock=clock)
    env.loaded_template_names = []
    _remember_names(env)
    env.promptlint_resolved = {}
    env.code_generator_class = _recording_generator(env.code_generator_class)
    limits = limits or Limits()
    # Parsing is linear in the (size-capped) file and its constant folding is size-guarded;
    # a generous floor keeps a large real template on a loaded CI machine from an E006.
    parse_timeout = max(limits.timeout_s, PARSE_TIMEOUT_FLOOR_S)
    try:
        # the interpreter's own recursion limit while parsing (max_recursion=None), so a
        # later env.parse() of the same text by an analyzer cannot fail where this passed
        with RenderGuard(env, parse_timeout, None, limits.max_output_bytes):
            template = env.get_template(name)
    except TemplateSyntaxError as e:
        raise RenderError("E001", f"template syntax error: {e.message}", e.name or name, e.lineno) from None
    except TemplateNotFound as e:
        raise RenderError("E002", f"template not found: {e.name}", name, None) from None
    except UnicodeDecodeError:
        raise RenderError("E005", "not UTF-8 text; save the template as UTF-8", name, None) from None
    except RecursionError:
        raise RenderError("E006", "template nested too deeply to parse", name, None) from None
    except DeadlineExceeded:
        raise RenderError("E006", f"parsing the template exceeded the time limit of {parse_timeout:g} s", name, None) from None
    except MemoryError:
        raise RenderError("E006", "parsing the template ran out of memory", name, None) from None
    except Exception as e:  # a compiler bug triggered by odd input: still a per-file error
        raise RenderError("E001", f"template cannot be compiled: {type(e).__name__}: {e}", name, None) from None
    return LoadedTemplate(path, name, env, template, clock)


_RECORDING: Dict[type, type] = {}


def _recording_generator(base: type) -> type:
    """``base`` (the environment's code generator) that also records, per template name, the
    names each frame resolves from the context: what ``jinja2.meta.TrackingCodeGenerator``
    collects before filtering out globals, gathered during the one compile."""
    if base not in _RECORDING:

        class Recording(base):  # type: ignore[misc, valid-type]
            def enter_frame(self, frame) -> None:
                super().enter_frame(frame)
                seen = self.environment.promptlint_resolved.setdefault(self.name, set())
                for _, (action, param) in frame.symbols.loads.items():
                    if action == "resolve":
                        seen.add(param)

        _RECORDING[base] = Recording
    return _RECORDING[base]


def _remember_names(env) -> None:
    original = env._load_template

    def load(name, globals):
        if name not in env.loaded_template_names:
            env.loaded_template_names.append(name)
        return original(name, globals)

    env._load_template = load


def render(loaded: LoadedTemplate, variables: dict, limits: Limits = Limits(), clock: Optional[datetime] = None) -> Rendered:
    """Render one scenario; raises RenderError with the template line where known."""
    from promptlint.render.limits import RenderGuard
    from promptlint.render.trace import traced_chunks

    if clock is not None:
        loaded.clock.value = clock
    parts: List[str] = []
    chunk_meta = []
    size = 0
    last = [loaded.name, None]
    guard = RenderGuard(loaded.env, limits.timeout_s, limits.max_recursion, limits.max_output_bytes)
    try:
        with guard:
            deadline = guard.deadline
            context = loaded.template.new_context(dict(variables))
            for chunk, tname, line, literal in traced_chunks(loaded.template, context):
                last[0], last[1] = tname, line
                parts.append(chunk)
                chunk_meta.append((tname, line, literal))
                size += len(chunk)
                if size > limits.max_output_bytes:
                    raise RenderError(
                        "E006", f"render exceeded the output limit of {limits.max_output_bytes:,} characters", tname, line
                    )
                if time.monotonic() > deadline:
                    raise DeadlineExceeded()
    except BaseException as e:  # noqa: B036 - DeadlineExceeded is a BaseException on purpose
        raise _as_render_error(e, tuple(last), limits) from None
    sm = SourceMap(loaded.sources())
    offset = 0
    for chunk, (tname, line, literal) in zip(parts, chunk_meta):
        sm.add(offset, chunk, tname, line, literal)
        offset += len(chunk)
    return Rendered("".join(parts), sm)


def _as_render_error(e: BaseException, last, limits: Limits) -> BaseException:
    """The RenderError (E-finding) for an exception out of a render; other BaseExceptions pass."""
    from jinja2.exceptions import TemplateError, TemplateNotFound, TemplateSyntaxError, UndefinedError
    from jinja2.sandbox import SecurityError

    if isinstance(e, RenderError):
        return e
    if isinstance(e, DeadlineExceeded):
        return RenderError("E006", f"render exceeded the time limit of {limits.timeout_s:g} s", *_error_where(e, last))
    if isinstance(e, ValueTooLarge):
        return RenderError("E006", f"render exceeded the size limit: {e.message}", *_error_where(e, last))
    if isinstance(e, SecurityError):
        return RenderError("E007", f"unsafe template construct refused by the sandbox: {e}", *_error_where(e, last))
    if isinstance(e, UndefinedError):
        if "has no attribute" in (e.message or ""):  # a value of the wrong type (a list where a mapping is used)
            hint = "check the type of the value in the samples file"
        else:
            hint = "declare it in the samples file"
        return RenderError("E004", f"undefined variable: {e.message}; {hint}", *_error_where(e, last))
    if isinstance(e, TemplateSyntaxError):
        return RenderError("E001", f"template syntax error: {e.message}", e.name or last[0], e.lineno)
    if isinstance(e, TemplateNotFound):
        return RenderError("E002", f"render failed: included template not found: {e.name}", *_error_where(e, last))
    if isinstance(e, TemplateError):
        return RenderError("E002", f"render failed: {e}", *_error_where(e, last))
    if isinstance(e, RecursionError):
        return RenderError(
            "E006",
            f"render exceeded the recursion limit of {limits.max_recursion} levels (a macro calling itself?)",
            *_error_where(e, last),
        )
    if isinstance(e, MemoryError):
        return RenderError("E006", "render ran out of memory", last[0], last[1])
    if isinstance(e, Exception):  # the template's own runtime error (TypeError in a filter, ...)
        return RenderError("E002", f"render failed: {type(e).__name__}: {e}", *_error_where(e, last))
    return e  # KeyboardInterrupt, SystemExit: not the template's fault


def _error_where(exc: BaseException, last):
    """(template, line) of the innermost template frame in a traceback, else the last chunk's."""
    tb = exc.__traceback__
    found = None
    while tb is not None:
        frame = tb.tb_frame
        if "__jinja_template__" in frame.f_globals:
            found = (frame.f_globals.get("name"), frame.f_globals["__jinja_template__"], tb.tb_lineno)
        tb = tb.tb_next
    if found is not None:
        name, tmpl, lineno = found
        try:
            return name or last[0], tmpl.get_corresponding_lineno(lineno)
        except Exception:
            pass
    return last
