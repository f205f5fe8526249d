"""Hugging Face chat templates: a chat `.jinja` file, a `tokenizer_config.json`, a model directory.

Source -> scenarios (a samples file, else the built-in conversations) -> render as the
configured serving stack does (transformers 5.x/4.x, vLLM frontend) -> tokenize (serving
path) -> every enabled check. Built-in scenarios the template refuses (raise_exception:
"System role not supported", tools required...) are skipped with a note.

Findings in a template stored inside tokenizer_config.json keep the template's line and
column (documented) and also carry ``stored_at``, the JSON file's own line and column of that
character, for CI annotations; when the directory's chat_template.jinja holds the same
template, they point into that file instead.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from promptlint.doors import bounded_io
from promptlint.base import lazy_re, registry
from promptlint.analyzers.files import Files, OwnedDirectory
from promptlint.analysis.kernel import Context, TokenizerProvider, file_error, finding
from promptlint.base.records import Finding, SourceLine, StoredAt

# PL102 skipped-scenario: a built-in conversation the template refuses (_refusals)
NOTE_CODES = registry.implements(__name__, "PL102")
# what lint_file imports on first use: a cold run's driver imports them before forking (analyzers.preimport)
WORKER_IMPORTS = ("promptlint.checks", "promptlint.chat.run", "promptlint.chat.special", "promptlint.chat.scenarios",
                  "promptlint.analysis.per_request", "promptlint.render.environments", "promptlint.render.loader")

CONFIG_NAME = "tokenizer_config.json"
TEMPLATE_FILE = "chat_template.jinja"
# a directory walk: tokenizer_config.json files that hold a chat template; model directories as one target
FILES = Files(names=(CONFIG_NAME,), markers=(b'"chat_template"',), take_unsniffable=False)
DIRECTORY = OwnedDirectory(
    required=("tokenizer.json", CONFIG_NAME), files=frozenset({CONFIG_NAME, TEMPLATE_FILE}), subdirs=frozenset({"chat_templates"})
)


def handles(path: Path) -> bool:
    from promptlint.chat.source import handles as is_chat_source

    return is_chat_source(path)


def _tokenizer_for(source, ctx: Context):
    """The model directory's own tokenizer unless one is configured: untrusted (a pull request can
    commit it), so its regexes are vetted before it runs here (tokens.needs_deadline)."""
    from dataclasses import replace

    from promptlint.tokenization.tokens import resolve

    if ctx.settings.tokenizer:
        return ctx.tokenizer
    directory = tokenizer_dir(source.model_dir or source.path)
    if directory is None:
        return ctx.tokenizer
    return TokenizerProvider(replace(resolve(str(directory)), vet=True))


def tokenizer_dir(path: Path) -> Optional[Path]:
    """The directory whose tokenizer.json a chat source at ``path`` (a model directory, or a file in
    one) uses when no tokenizer is configured; the driver groups files by it (analyzers.tokenizer_dir)."""
    directory = path if path.is_dir() else path.parent
    return directory if (directory / "tokenizer.json").is_file() else None


@dataclass
class Outcome:
    """What the scenarios of one chat template came to."""

    findings: List[Finding] = field(default_factory=list)
    refused: List[Tuple[str, Finding]] = field(default_factory=list)  # (built-in scenario, its E finding)
    rendered_any: bool = False
    seen: set = field(default_factory=set)


def _prepare(path: Path, text: str, ctx: Context):
    """(source, tokenizer, scenarios) of a chat source, or the E findings saying why it cannot be run."""
    from promptlint.chat.source import SourceError, load_source
    from promptlint.scenarios import SamplesError

    try:
        source = load_source(path, text if (text and not path.is_dir()) else None)
    except SourceError as e:
        return [file_error(ctx.display(e.path), e.code, e.message)]
    except ValueError as e:
        return [file_error(ctx.display(path), "E005", f"invalid JSON: {e}")]
    tokenizer = _tokenizer_for(source, ctx)
    embedded = getattr(getattr(tokenizer, "spec", None), "embedded", False)
    _special_tokens(source, tokenizer, ctx, embedded)
    if embedded:  # the template's special-token texts stay single tokens, as in the model's tokenizer
        from promptlint.chat.special import atomic, template_special_texts

        tokenizer = atomic(tokenizer, template_special_texts(source))
    try:
        scenarios = _scenarios(path, ctx.settings.root)
    except SamplesError as e:
        return [file_error(ctx.display(e.path), "E003", e.message)]
    return source, tokenizer, scenarios


def _chat(source, ctx: Context):
    from promptlint.chat.request import ChatProfile
    from promptlint.chat.run import ChatTemplate
    from promptlint.render import Limits

    settings = ctx.settings
    profile = ChatProfile(settings.transformers, settings.frontend, settings.serving)
    return ChatTemplate(source, profile, Limits(timeout_s=settings.render_timeout, max_output_bytes=settings.max_output))


def lint_file(path: Path, text: str, ctx: Context) -> List[Finding]:
    prepared = _prepare(path, text, ctx)
    if isinstance(prepared, list):  # cannot be run: why
        return prepared
    source, tokenizer, scenarios = prepared
    chat = _chat(source, ctx)
    stored = StoredTemplates(source, path, text, ctx)
    outcome = Outcome()
    for scenario in scenarios:
        if not _run_scenario(chat, scenario, tokenizer, ctx, stored, outcome):
            break
    return _refusals(outcome, ctx)


def measure(path: Path, text: str, ctx: Context) -> list:
    """Eligible blocks per request of each scenario the template renders (``check --baseline``);
    a built-in scenario the template refuses is left out, as lint_file leaves it with a note."""
    from promptlint.analysis import per_request
    from promptlint.chat.run import ChatRun
    from promptlint.chat.source import SourceError
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.render import RenderError

    profile = engine_profile(ctx.settings.engine, ctx.settings.block_size)
    display = ctx.display(path)
    prepared = _prepare(path, text, ctx)
    if isinstance(prepared, list):
        return [per_request.failed(display, prepared[0].code, prepared[0].message, profile.block_size)]
    source, tokenizer, scenarios = prepared
    chat = _chat(source, ctx)
    out, refused = [], None
    for scenario in scenarios:
        name = None
        try:
            name = chat.select(scenario.request)
            run = ChatRun(chat, scenario, display, tokenizer, profile, None, ctx.is_enabled)
            out.append(per_request.measure(run, scenario.name, name if len(source.templates) > 1 else None))
        except (SourceError, RenderError) as e:
            if getattr(e, "code", None) == "E006" or not scenario.builtin:
                out.append(per_request.failed(display, e.code, e.message, profile.block_size, scenario.name, name))
            else:
                refused = refused or per_request.failed(display, e.code, e.message, profile.block_size)
    return out or ([refused] if refused else [])


def scenario_runs(path: Path, text: str, ctx: Context):
    """The E findings that stop ``text`` from loading (a list), or an iterator of the base-rendered
    ChatRun of each scenario that renders (the template fixes re-measure with these)."""
    from promptlint.chat.run import ChatRun
    from promptlint.chat.source import SourceError
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.render import RenderError

    prepared = _prepare(path, text, ctx)
    if isinstance(prepared, list):
        return prepared
    source, tokenizer, scenarios = prepared
    chat = _chat(source, ctx)
    profile = engine_profile(ctx.settings.engine, ctx.settings.block_size)

    def runs():
        for scenario in scenarios:
            try:
                run = ChatRun(chat, scenario, ctx.display(source.path), tokenizer, profile, None, ctx.is_enabled)
                run.base()  # records the clock calls: `strftime_now` becomes a variable
            except (SourceError, RenderError):
                continue
            yield run

    return runs()


def _special_tokens(source, tokenizer, ctx: Context, embedded: bool) -> None:
    """The special-token strings the template sees (chat/special.py ``fill_special_tokens``, as
    `promptlint render` gives them), with a notice when a BOS or EOS had to be assumed."""
    from promptlint.chat.special import fill_special_tokens

    if source.special_tokens:
        return
    notice = fill_special_tokens(source, tokenizer(), embedded, ctx.display(source.path))
    if notice:
        ctx.notices.append(notice)


def _scenarios(path: Path, root: Path) -> list:
    from promptlint.chat.scenarios import builtin_scenarios, load_chat_samples, samples_path_for_chat
    from promptlint.render import allowed_roots

    sp = samples_path_for_chat(path)
    if sp is None:
        return builtin_scenarios()
    return [load_chat_samples(sp, allowed_roots(sp, [root]))]  # confined as an include would be


def _run_scenario(chat, scenario, tokenizer, ctx: Context, stored: "StoredTemplates", outcome: Outcome) -> bool:
    """Render one scenario, run the checks on it, add what they find; False: stop (no later scenario can render)."""
    from promptlint import checks
    from promptlint.chat.run import ChatRun
    from promptlint.chat.source import SourceError
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.render import RenderError

    display = ctx.display(chat.source.path)
    name = None
    try:
        name = chat.select(scenario.request)
        note = stored.note(name)
        run = ChatRun(chat, scenario, display, tokenizer, engine_profile(ctx.settings.engine, ctx.settings.block_size), note, ctx.is_enabled)
    except SourceError as e:
        outcome.findings.append(file_error(display, e.code, e.message))
        return False
    except RenderError as e:
        outcome.findings.append(stored.locate(file_error(display, e.code, e.message, e.line), name))
        return False
    try:
        run.base()  # first: it records the template's clock calls, a variable the checks vary
        outcome.rendered_any = True
        enabled = checks.enabled_checks(ctx.is_enabled)
        run.prefetch(run.plan(enabled))  # every variant the checks ask for, tokenized in one batch
        found = [f for module in enabled for f in module.check(run)]
        if run.loaded.limit_error is not None:  # a limit some check swallowed as a refusal
            raise run.loaded.limit_error
        # token indices are per scenario: collapse within one scenario, then drop repeats across scenarios
        for f in checks.collapse(found):
            key = (f.code, f.path, f.line, f.column, f.variable)
            if key not in outcome.seen:
                outcome.seen.add(key)
                outcome.findings.append(stored.locate(f, name))
    except RenderError as e:
        f = file_error(run.path_of(e.template) if e.template else display, e.code, e.message, e.line,
                       notes=[note] if note else [])
        f = stored.locate(f, name)
        if e.code == "E006":  # a limit, not a refusal: stop at the first one (docs/security.md)
            outcome.findings.append(f)
            return False
        if scenario.builtin:
            outcome.refused.append((scenario.name, f))
        else:
            outcome.findings.append(f)
    return True


def _refusals(outcome: Outcome, ctx: Context) -> List[Finding]:
    """A template that refuses every built-in scenario is an error; one that refuses some, a PL102 each."""
    findings = outcome.findings
    if outcome.refused and not outcome.rendered_any:
        name, first = outcome.refused[0]
        findings.append(dataclasses.replace(first, message=first.message + f" (built-in scenario `{name}`; every built-in scenario failed)"))
    else:
        for name, f in outcome.refused:  # never skipped silently: one info finding per scenario (PL102)
            if ctx.is_enabled("PL102"):
                skipped = finding("PL102", f.path, f"built-in scenario `{name}` not rendered, not checked: {f.message}",
                                  f.line, variable=name, notes=f.notes)
                findings.append(skipped)
    return findings


# ---------------------------------------------------------------------------- templates stored in JSON

_KEY_STEP = lazy_re.compile(r"([^.\[\]]+)|\[(\d+)\]")


class StoredTemplates:
    """Locations for templates stored as JSON strings: the JSON file's line and column of a
    template character, or the directory's chat_template.jinja when it holds the same text."""

    def __init__(self, source, path: Path, text: str, ctx: Context):
        self.source = source
        self.display = ctx.display(source.path)
        self._ctx = ctx
        self._json: Optional[str] = None
        self._beside: Optional[Tuple[Path, Optional[str]]] = None  # chat_template.jinja beside it, and its text
        self._offsets: Dict[str, Optional[List[int]]] = {}  # key -> its string's character offsets in the JSON
        if source.embedded:
            if source.path == path and text:
                self._json = text  # the linted text (an editor buffer, stdin), not the file on disk
            else:
                try:
                    self._json = bounded_io.read_text(source.path, bounded_io.MAX_TOKENIZER_BYTES)
                except (OSError, UnicodeDecodeError):
                    self._json = None

    def note(self, name: str) -> Optional[str]:
        """The note saying that line and column are the template's (None for a template file)."""
        from promptlint.chat.source import json_line_of_key

        key = self.source.embedded.get(name)
        if not key:
            return None
        return (
            f"line and column are within the chat template stored as `{key}` in {self.source.path.name} "
            f"(the JSON string starts on line {json_line_of_key(self._json) if self._json else 1})"
        )

    def locate(self, f: Finding, name: Optional[str]) -> Finding:
        key = self.source.embedded.get(name) if name else None
        if not key or f.path != self.display:
            return f
        template = self.source.templates[name]
        if self._beside is None:
            beside = self.source.path.parent / TEMPLATE_FILE
            self._beside = (beside, _read(beside) if bounded_io.is_regular_file(beside) else None)
        beside, beside_text = self._beside
        if beside_text == template:  # the same finding in chat_template.jinja beside the JSON file
            note = self.note(name)
            return dataclasses.replace(f, path=self._ctx.display(beside), notes=[n for n in f.notes if n != note])
        # the template's own line (the JSON file's is not it) and where the template sits in the JSON file
        return dataclasses.replace(f, source_line=SourceLine.of(template, f.line, f.column),
                                   stored_at=self._stored_at(key, template, f))

    def _stored_at(self, key: str, template: str, f: Finding) -> Optional[StoredAt]:
        from promptlint.base import json_locate
        from promptlint.render.sourcemap import SourceText

        if self._json is None:
            return None
        if key not in self._offsets:  # once per stored template: every finding in it maps through them
            quote = json_locate.string_at(self._json, [int(i) if i else k for k, i in _KEY_STEP.findall(key)])
            self._offsets[key] = None if quote is None else json_locate.char_offsets(self._json, quote)
        offsets = self._offsets[key]
        if offsets is None or len(offsets) != len(template) + 1:  # not the text the template was read from
            return None
        src = SourceText(template)

        def where(line: int, column: int) -> Tuple[int, int]:
            at = min(src.line_start(line) + column - 1, len(template))
            return json_locate.line_column(self._json, offsets[at])

        line, column = where(f.line, f.column)
        end_line, end_column = where(f.end_line, f.end_column)
        return StoredAt(key, line, column, end_line, end_column)


def _read(path: Path) -> Optional[str]:
    try:
        return bounded_io.read_text(path)
    except (OSError, UnicodeDecodeError):
        return None
