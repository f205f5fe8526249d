"""Application Jinja templates (`*.j2`, `*.jinja`, `*.jinja2`, `*.prompt`).

Parse -> scenario (samples file, else inferred) -> render + tokenize (memoised in a
TemplateRun) -> every enabled check.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from promptlint.lint import Context, file_error
from promptlint.records import Finding


def handles(path: Path) -> bool:
    from promptlint.discovery import is_template

    return is_template(path)


def engine_tokenizer(ctx: Context):
    """The tokenization the engine really applies: the pinned tokenizer, or llama.cpp's variant of it."""
    if ctx.settings.engine != "llamacpp":
        return ctx.tokenizer

    def load():
        from promptlint.engine_tokenize import engine_encoder

        return engine_encoder(ctx.tokenizer(), "llamacpp")

    return load


def lint_file(path: Path, text: str, ctx: Context) -> List[Finding]:
    """All findings for one template file (E findings when it cannot be analysed)."""
    from promptlint import checks
    from promptlint.analysis import TemplateRun
    from promptlint.compare import engine_profile
    from promptlint.render import Limits, RenderError, load_template
    from promptlint.scenarios import SamplesError, samples_path_for
    from promptlint.scenarios.infer import template_scenario

    settings = ctx.settings
    display = ctx.display(path)
    limits = Limits(
        timeout_s=settings.render_timeout,
        max_output_bytes=settings.max_output,
        max_recursion=settings.max_recursion,
    )
    try:
        loaded = load_template(path, settings.template_env, [settings.root], source=text, limits=limits, jinja=settings.jinja_stubs())
    except RenderError as e:
        return [file_error(display, e.code, e.message, e.line)]

    sp = samples_path_for(path)
    if sp is not None:
        ctx.depend(sp)
    try:
        scenario = template_scenario(loaded, text, sp)  # the samples file's inputs, the rest inferred
    except SamplesError as e:
        return [file_error(ctx.display(e.path), "E003", e.message)]

    run = TemplateRun(
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
    )
    findings: List[Finding] = []
    try:
        enabled = checks.enabled_checks(ctx.is_enabled)
        # the base and every variant the checks will ask for, tokenized in one batch; a variant that
        # fails to render is left for its check to report
        run.prefetch([{}] + run.plan(enabled))
        run.base()  # a base that does not render is reported here, before any variant
        for module in enabled:
            findings.extend(module.check(run))
    except RenderError as e:
        where = run.path_of(e.template) if e.template else display
        findings.append(file_error(where, e.code, e.message, e.line))
    findings += assumption_notes(run)
    for dep in loaded.dependencies():  # every path an include name was looked up at, misses too
        ctx.depend(dep)
    return checks.collapse(findings)


def assumption_notes(run) -> List[Finding]:
    """PL101: one info note naming what the render assumed (stand-ins for unknown filters, tests
    and globals; render/stubs.py)."""
    from promptlint.render.stubs import note

    if not run.enabled("PL101"):
        return []
    found = note(run.loaded.env)
    if found is None:
        return []
    template, line, message = found
    if template != run.loaded.name:  # first used in an include: the note stays with the linted file
        message += f" (first used in `{template}`, line {line})"
        line = 1
    return [file_error(run.display_path, "PL101", message, line)]
