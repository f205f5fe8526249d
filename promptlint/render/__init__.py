"""Render templates exactly as the serving stack would, with a source map and limits.

``load_template`` parses a template file (syntax errors surface here);
``render`` produces one ``Rendered`` (text + source map) for one set of inputs.
Importing this package loads no Jinja (discovery uses ``promptlint.render.files``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from promptlint.render import caps
from promptlint.render.shown import clip  # noqa: F401 - re-exported: messages quote template text through it
from promptlint.render.sourcemap import SourceMap, SourceText


@dataclass(frozen=True)
class Limits:
    """What one render may take: time, output bytes and nesting; what a template with its includes
    may take to parse and compile: Jinja tokens and characters of generated Python."""

    timeout_s: float = 2.0
    max_output_bytes: int = 1_000_000
    max_recursion: int = 200  # template nesting levels a render may add (macros calling themselves)
    max_template_tokens: int = field(default_factory=lambda: caps.MAX_TEMPLATE_TOKENS)  # see render/caps.py
    max_compiled_chars: int = field(default_factory=lambda: caps.MAX_COMPILED_CHARS)


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
    """A render's text and its source map."""

    text: str
    sourcemap: SourceMap


class Clock:
    """The frozen clock behind `strftime_now`, set per render."""

    def __init__(self, value: Optional[datetime] = None):
        self.value = value or datetime(2025, 3, 14, 9, 26, 53)

    def __call__(self) -> datetime:
        return self.value


@dataclass
class LoadedTemplate:
    """A compiled template with its environment and frozen clock."""

    path: Path
    name: str
    env: object
    template: object
    clock: Clock
    source: Optional[str] = None  # the top-level text, when known
    _source_texts: Dict[str, SourceText] = field(default_factory=dict, repr=False, compare=False)
    limit_error: Optional["RenderError"] = field(default=None, repr=False, compare=False)
    prompt_file: Optional[object] = field(default=None, repr=False, compare=False)  # promptfiles.PromptFile

    def source_of(self, name: str) -> Optional[str]:
        if name == self.name and self.source is not None:
            return self.source
        if self.env.loader is None:
            return None
        try:
            src, _, _ = self.env.loader.get_source(self.env, name)  # read once per load (ConfinedLoader)
        except Exception:
            return None
        return src

    def sources(self) -> Dict[str, SourceText]:
        """Source text of the template and of everything it loaded (includes)."""
        memo = self._source_texts  # name -> SourceText, reused while the text is unchanged
        out = {}
        for name in list(self.env.loaded_template_names):
            src = self.source_of(name)
            if src is None:
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

            return frozenset(meta.find_undeclared_variables(self.env.parse(self.source_of(self.name) or "")))
        return frozenset(p for p in resolved if p not in self.env.globals)

    def declare_names(self, names) -> None:
        """Names an error may show as they are (an include input's declared file names): see render/shown.py."""
        from promptlint.render.shown import declare

        declare(self.env, names)

    def dependencies(self) -> List[Path]:
        """Every path an include/import/extends name was looked up at, found or not, in lookup order:
        a file appearing at any of them changes how the template resolves (cache key)."""
        return [Path(p) for p in getattr(self.env.loader, "looked_at", [])]


def allowed_roots(path: Path, project_roots: Sequence[Path]) -> tuple:
    """Where a template's includes may resolve to: the project root(s), and the template's own
    directory when the template itself lies outside them (a file the user pointed at)."""
    from promptlint.render.files import inside, real_roots

    roots = real_roots(project_roots)
    if not roots or not inside(os.path.realpath(path), roots):
        roots = roots + real_roots([path.parent])
    return roots


def load_template(
    path: Path,
    env_kind: str = "jinja2",
    search_paths: Sequence[Path] = (),
    source: Optional[str] = None,
    limits: Optional[Limits] = None,
    includes: bool = True,
    jinja: Optional[dict] = None,
    classify=None,
) -> LoadedTemplate:
    """Parse ``path`` (or ``source`` given as its text) in a sandboxed environment.

    Parsing and compiling run under the render time limit too (constant folding
    evaluates filters at compile time). ``includes=False`` (chat templates): no loader at all,
    as transformers renders a chat template from a string; an include is an E002.
    Application templates (``includes=True``) get stand-ins for unknown filters, tests and
    globals (render/stubs.py), ``jinja`` declaring some (role -> name -> kind) and ``classify``
    (a name's kind from its words: scenarios.names) making clock- and id-like globals volatile;
    chat templates do not: transformers' environment has no such names either.
    """
    from promptlint.render.environments import make_environment
    from promptlint.render.files import Budget, FileRefused, decode_template, read_confined
    from promptlint.render.limits import RenderGuard
    from promptlint.render.loader import UNRESOLVED_INCLUDE, ConfinedLoader
    from promptlint.render.sandbox import DeadlineExceeded

    path = Path(path)
    name = path.name
    budget = Budget()
    if source is None:  # a file the user named (`promptlint render`): wherever it is, bounded, regular
        try:
            source = decode_template(read_confined(str(path), None, budget.total, f"`{name}`"), f"`{name}`")
        except FileRefused as e:
            raise RenderError(e.code, e.message, name, None) from None
    budget.charge(len(source.encode("utf-8", "surrogatepass")))
    prompt_file = None
    if includes:  # Prompty, promptflow and Semantic Kernel files: front matter masked, renders split into messages
        from promptlint.promptfiles import FrontMatterError, read

        try:
            prompt_file = read(path, source)
        except FrontMatterError as e:
            raise RenderError("E005", f"invalid front matter: {e.message}", name, e.line) from None
        if prompt_file is not None:
            source = prompt_file.template
    loader = None
    if includes:
        lookup = [path.parent] + [p for p in search_paths if p != path.parent]
        # an include name promptlint could not resolve (scenarios/includes.py) renders as empty
        loader = ConfinedLoader(lookup, allowed_roots(path, search_paths), budget, {name: source, UNRESOLVED_INCLUDE: ""})
    clock = Clock()
    stubs = dict(jinja or {}) if includes else None
    env = make_environment(env_kind, loader=loader, clock=clock, stubs=stubs, classify=classify)
    env.loaded_template_names = []
    from promptlint.render.shown import declare

    declare(env, [name])  # the file's own name: a message may name it (an import's "does not export")
    _remember_names(env)
    env.promptlint_resolved = {}
    env.code_generator_class = _recording_generator(env.code_generator_class)
    limits = limits or Limits()
    env.max_template_tokens, env.max_compiled_chars = limits.max_template_tokens, limits.max_compiled_chars
    # Parsing is linear in the (size-capped) file, its constant folding is size-guarded and the
    # uninterruptible compile() is bounded by the template's size (sandbox.CompileBudget);
    # a generous floor keeps a large real template on a loaded CI machine from an E006.
    parse_timeout = max(limits.timeout_s, PARSE_TIMEOUT_FLOOR_S)
    try:
        # the interpreter's own recursion limit while parsing (max_recursion=None), so a
        # later env.parse() of the same text by an analyzer cannot fail where this passed
        with RenderGuard(env, parse_timeout, None, limits.max_output_bytes):
            if loader is not None:
                template = env.get_template(name)
            else:
                env.loaded_template_names.append(name)
                template = env.template_class.from_code(env, env.compile(source, name), env.make_globals(None), None)
    except (Exception, DeadlineExceeded) as e:
        raise _parse_error(e, name, parse_timeout, env) from None
    return LoadedTemplate(path, name, env, template, clock, source, prompt_file=prompt_file)


def _parse_error(e: BaseException, name: str, parse_timeout: float, env=None) -> "RenderError":
    """The per-file finding for what parsing or compiling a template raised."""
    from jinja2.exceptions import TemplateNotFound, TemplateSyntaxError

    from promptlint.render.shown import exception_text, shown

    from promptlint.render.loader import IncludeRefused
    from promptlint.render.sandbox import TemplateTooLarge

    if isinstance(e, TemplateSyntaxError):
        return RenderError("E001", f"template syntax error: {clip(e.message)}", e.name or name, e.lineno)
    if isinstance(e, TemplateNotFound):
        return RenderError("E002", f"template not found: {shown(e.name, env, '{}')}", name, None)
    if isinstance(e, IncludeRefused):
        return RenderError(e.code, e.message, name, None)
    if isinstance(e, TemplateTooLarge):
        return RenderError("E006", e.message, e.name or name, None)
    if isinstance(e, UnicodeDecodeError):
        return RenderError("E005", "not UTF-8 text; save the template as UTF-8", name, None)
    if isinstance(e, RecursionError):
        return RenderError("E006", "template nested too deeply to parse", name, None)
    if isinstance(e, MemoryError):
        return RenderError("E006", "parsing the template ran out of memory", name, None)
    if not isinstance(e, Exception):  # DeadlineExceeded
        return RenderError("E006", f"parsing the template exceeded the time limit of {parse_timeout:g} s", name, None)
    # a compiler bug triggered by odd input: still a per-file error
    return RenderError("E001", f"template cannot be compiled: {type(e).__name__}: {exception_text(e, env)}", name, None)


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
        if env.loader is None:  # a chat template: transformers has no loader either
            from promptlint.render.loader import IncludeRefused
            from promptlint.render.shown import shown

            raise IncludeRefused(
                "E002",
                f"chat templates cannot include, import or extend other templates ({shown(name, env, '`{}`')}): "
                "transformers renders them from a string, without a loader",
            )
        if name not in env.loaded_template_names:
            env.loaded_template_names.append(name)
        return original(name, globals)

    env._load_template = load


_RENDERS = [0]  # renders so far in this process (tests assert sharing with it: render_count())


def render_count() -> int:
    """How many renders this process has started (several models' runs share one per scenario)."""
    return _RENDERS[0]


def render(loaded: LoadedTemplate, variables: dict, limits: Limits = Limits(), clock: Optional[datetime] = None) -> Rendered:
    """Render one scenario; raises RenderError with the template line where known."""
    _RENDERS[0] += 1
    from promptlint.render.limits import RenderGuard
    from promptlint.render.sandbox import DeadlineExceeded
    from promptlint.render.trace import traced_chunks

    hit = loaded.limit_error
    if hit is not None:  # stop at the first limit: no later render of this template pays it again
        raise RenderError(hit.code, hit.message, hit.template, hit.line)
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
                chunk_meta.append((len(chunk), tname, line, literal))
                size += len(chunk)
                if size > limits.max_output_bytes:
                    raise RenderError(
                        "E006", f"render exceeded the output limit of {limits.max_output_bytes:,} characters", tname, line
                    )
                if deadline.passed():
                    raise DeadlineExceeded()
    except BaseException as e:  # noqa: B036 - DeadlineExceeded is a BaseException on purpose
        error = _as_render_error(e, tuple(last), limits, loaded.env)
        if isinstance(error, RenderError) and error.code == "E006":
            loaded.limit_error = error
        raise error from None
    sm = SourceMap(loaded.sources())
    text = "".join(parts)
    if loaded.prompt_file is not None:  # the messages a prompt file's render becomes, as the model sees them
        text, chunk_meta = loaded.prompt_file.frame(text, chunk_meta)
    sm.defer(text, chunk_meta)
    return Rendered(text, sm)


def _as_render_error(e: BaseException, last, limits: Limits, env=None) -> BaseException:
    """The RenderError (E-finding) for an exception out of a render; other BaseExceptions pass.
    Whatever the template computed is named through ``render/shown.py`` (by length and hash)."""
    from jinja2.exceptions import TemplateError, TemplateNotFound, TemplateSyntaxError, UndefinedError
    from jinja2.sandbox import SecurityError

    from promptlint.render.environments import TemplateRaised
    from promptlint.render.loader import IncludeRefused
    from promptlint.render.sandbox import DeadlineExceeded, TemplateTooLarge, ValueTooLarge
    from promptlint.render.shown import exception_text, scrub, shown, undefined_text

    if isinstance(e, RenderError):
        return e
    if isinstance(e, DeadlineExceeded):
        return RenderError("E006", f"render exceeded the time limit of {limits.timeout_s:g} s", *_error_where(e, last))
    if isinstance(e, ValueTooLarge):
        return RenderError("E006", f"render exceeded the size limit: {clip(scrub(e.message, env))}", *_error_where(e, last))
    if isinstance(e, TemplateTooLarge):  # an include compiled during the render
        return RenderError("E006", e.message, *_error_where(e, last))
    if isinstance(e, IncludeRefused):
        return RenderError(e.code, e.message, *_error_where(e, last))
    if isinstance(e, SecurityError):
        return RenderError("E007", f"unsafe template construct refused by the sandbox: {clip(scrub(str(e), env))}", *_error_where(e, last))
    if isinstance(e, UndefinedError):
        if "has no attribute" in (e.message or ""):  # a value of the wrong type (a list where a mapping is used)
            # inferred or declared: `promptlint samples` shows the value, a samples file corrects it
            hint = "give it a value of the right type in the template's samples file (`promptlint samples FILE` prints the inferred one)"
        else:
            hint = "declare it in the samples file"
        return RenderError("E004", f"undefined variable: {undefined_text(e.message, env)}; {hint}", *_error_where(e, last))
    if isinstance(e, TemplateSyntaxError):
        return RenderError("E001", f"template syntax error: {clip(e.message)}", e.name or last[0], e.lineno)
    if isinstance(e, TemplateNotFound):
        return RenderError("E002", f"render failed: included template not found: {shown(e.name, env, '{}')}", *_error_where(e, last))
    if isinstance(e, TemplateRaised):  # the template's raise_exception(message)
        return RenderError("E002", f"render failed: {shown(e.message or '', env, '{}', 'message')}", *_error_where(e, last))
    if isinstance(e, TemplateError):
        return RenderError("E002", f"render failed: {clip(scrub(str(e), env))}", *_error_where(e, last))
    if isinstance(e, RecursionError):
        return RenderError(
            "E006",
            f"render exceeded the recursion limit of {limits.max_recursion} levels (a macro calling itself?)",
            *_error_where(e, last),
        )
    if isinstance(e, MemoryError):
        return RenderError("E006", "render ran out of memory", last[0], last[1])
    if isinstance(e, Exception):  # the template's own runtime error (TypeError in a filter, ...)
        return RenderError("E002", f"render failed: {type(e).__name__}: {exception_text(e, env)}", *_error_where(e, last))
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
        from promptlint.render.trace import template_line

        try:
            return name or last[0], template_line(tmpl, lineno)
        except Exception:
            pass
    return last
