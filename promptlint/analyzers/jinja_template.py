"""Application Jinja templates (`*.j2`, `*.jinja`, `*.jinja2`, `*.prompt`, Prompty `*.prompty`).

Parse -> scenario (samples file, else inferred) -> render + tokenize (memoised in a
TemplateRun) -> every enabled check.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from promptlint.base import registry
from promptlint.analyzers.files import Files
from promptlint.analysis.kernel import Context, file_error
from promptlint.base.records import Finding

# PL101 analysis-assumption: the one note per file naming what the render assumed (assumption_notes)
NOTE_CODES = registry.implements(__name__, "PL101")

SUFFIXES = (".j2", ".jinja", ".jinja2", ".prompt", ".prompty")
FILES = Files(suffixes=SUFFIXES, never_infix=".samples.")
# what lint_file imports on first use: a cold run's driver imports them before forking (analyzers.preimport)
WORKER_IMPORTS = ("promptlint.checks", "promptlint.analysis.template_run", "promptlint.render.environments",
                  "promptlint.render.loader", "promptlint.scenarios.infer", "promptlint.scenarios.names")


def handles(path: Path) -> bool:
    return FILES.matches_name(path)


def engine_tokenizer(ctx: Context):
    """The tokenization the engine really applies: the pinned tokenizer, or llama.cpp's variant of it."""
    if ctx.settings.engine != "llamacpp":
        return ctx.tokenizer

    def load():
        from promptlint.tokenization.engine_tokenize import engine_encoder

        return engine_encoder(ctx.tokenizer(), "llamacpp")

    return load


def lint_file(path: Path, text: str, ctx: Context) -> List[Finding]:
    """All findings for one template file (E findings when it cannot be analysed)."""
    from promptlint import checks
    from promptlint.render import RenderError

    run = prepare(path, text, ctx)
    if isinstance(run, list):
        return run
    loaded = run.loaded
    findings: List[Finding] = []
    try:
        enabled = checks.enabled_checks(ctx.is_enabled)
        # the base and every variant the checks will ask for, tokenized in one batch; a variant that
        # fails to render is left for its check to report
        run.prefetch([{}] + run.plan(enabled))
        run.base()  # a base that does not render is reported here, before any variant
        for module in enabled:
            findings.extend(module.check(run))
        findings += other_choices(run)
    except RenderError as e:
        findings.append(include_error(run, e))
    findings += assumption_notes(run)
    for dep in loaded.dependencies():  # every path an include name was looked up at, misses too
        ctx.depend(dep)
    return checks.collapse(findings)


def measure(path: Path, text: str, ctx: Context) -> list:
    """The template's eligible blocks per request (``check --baseline``): one Measurement."""
    from promptlint.analysis import per_request
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.render import RenderError

    block = engine_profile(ctx.settings.engine, ctx.settings.block_size).block_size
    run = prepare(path, text, ctx)
    if isinstance(run, list):
        return [per_request.failed(ctx.display(path), run[0].code, run[0].message, block)]
    try:
        return [per_request.measure(run)]
    except RenderError as e:
        return [per_request.failed(ctx.display(path), e.code, e.message, block)]


def prepare(path: Path, text: str, ctx: Context):
    """The ``TemplateRun`` of ``text`` as the file ``path`` (its samples file, its includes), or
    the E findings when it cannot be loaded. Fixes (promptlint/fixes) re-measure with it."""
    from promptlint.analysis.template_run import TemplateRun
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.render import Limits, RenderError, load_template
    from promptlint.scenarios import SamplesError, samples_path_for
    from promptlint.scenarios.infer import template_scenario
    from promptlint.scenarios.names import name_patterns

    settings = ctx.settings
    display = ctx.display(path)
    limits = Limits(
        timeout_s=settings.render_timeout,
        max_output_bytes=settings.max_output,
        max_recursion=settings.max_recursion,
    )
    sp = samples_path_for(path)
    # Several models' runs (ctx.shared, promptlint.driver.models) share the template, its scenario and
    # its renders: an application template sees no tokenizer (no bos_token, no special tokens)
    # and the runs differ only in tokenizer, engine and block size.
    key = ("application template", str(path), text)
    shared = None if ctx.shared is None else ctx.shared.get(key)
    if shared is None:
        try:
            loaded = load_template(path, settings.template_env, [settings.root], source=text, limits=limits, jinja=settings.jinja_stubs(), classify=name_patterns().classify)
        except RenderError as e:
            return [file_error(display, e.code, e.message, e.line)]
        if sp is not None:
            ctx.depend(sp)
        try:
            scenario = template_scenario(loaded, text, sp, limits)  # the samples file's inputs, the rest inferred
        except SamplesError as e:
            return [file_error(ctx.display(e.path), "E003", e.message)]
        shared = (loaded, scenario, {})
        if ctx.shared is not None:
            ctx.shared[key] = shared
    elif sp is not None:
        ctx.depend(sp)
    loaded, scenario, renders = shared

    return TemplateRun(
        path,
        display,
        loaded,
        scenario,
        engine_tokenizer(ctx),
        engine_profile(settings.engine, settings.block_size),
        limits,
        search_paths=[settings.root],
        is_enabled=ctx.is_enabled,
        pinned=ctx.tokenizer,
        engine=settings.engine,
        # the serving path the configuration names: a completions endpoint encodes with special tokens
        add_special_tokens=settings.serving == "completions",
        renders=renders,
        base=settings.base,
    )


def include_error(run, e) -> Finding:
    """The E finding for a render error, at the file it is in; an included file's error names its
    includer (the driver merges the same error met through several includers into one)."""
    where = run.path_of(e.template) if e.template else run.display_path
    notes = [f"included by {run.display_path}"] if where != run.display_path else []
    return file_error(where, e.code, e.message, e.line, notes=notes)


def other_choices(run) -> List[Finding]:
    """Every other file an include input can name (scenarios/includes.py) must render too."""
    from promptlint.render import RenderError

    out = []
    for name, options in run.scenario.include_choices.items():
        for option in options[1:]:
            try:
                run.sample(**{name: option})
            except RenderError as e:
                out.append(include_error(run, e))
    return out


def assumption_notes(run) -> List[Finding]:
    """PL101: one info note naming what the render assumed: stand-ins for unknown filters, tests
    and globals (render/stubs.py), include inputs rendered as empty (scenarios/includes.py), a
    prompt file's messages framed in ChatML (promptfiles/roles.py)."""
    from promptlint.render.stubs import note

    if not run.enabled("PL101"):
        return []
    places, parts = [], []
    found = note(run.loaded.env)
    if found is not None:
        places.append(found[:2])
        parts.append(found[2])
    for name, template, line in run.scenario.unresolved_includes:
        places.append((template, line))
        parts.append(
            f"the include name `{name}` is an input no samples file or template beside it resolves, so the include "
            f"renders as empty; list its files in the samples file (`[include-choices]` `{name} = [\"...\"]`)"
        )
    prompt_file = getattr(run.loaded, "prompt_file", None)
    if prompt_file is not None:
        for note_text in prompt_file.notes + ([prompt_file.framing_note()] if prompt_file.style else []):
            places.append((run.loaded.name, 1))
            parts.append(note_text)
    if not parts:
        return []
    template, line = places[0]
    message = "; ".join(parts)
    if template != run.loaded.name:  # first met in an include: the note stays with the linted file
        message += f" (first met in `{template}`, line {line})"
        line = 1
    return [file_error(run.display_path, "PL101", message, line)]
