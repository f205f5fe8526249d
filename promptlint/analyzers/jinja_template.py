"""Application Jinja templates (`*.j2`, `*.jinja`, `*.jinja2`, `*.prompt`).

Parse -> scenario (samples file, else inferred) -> render + tokenize (memoised in a
TemplateRun) -> every enabled check.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from promptlint.analyzers.files import Files
from promptlint.kernel import Context, file_error
from promptlint.records import Finding

SUFFIXES = (".j2", ".jinja", ".jinja2", ".prompt")
FILES = Files(suffixes=SUFFIXES, never_infix=".samples.")


def handles(path: Path) -> bool:
    return FILES.matches_name(path)


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
    from promptlint.render import RenderError

    run = _run(path, text, ctx)
    if isinstance(run, list):  # cannot be run: why
        return run
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
        where = run.path_of(e.template) if e.template else run.display_path
        findings.append(file_error(where, e.code, e.message, e.line))
    for dep in run.loaded.dependencies():  # every path an include name was looked up at, misses too
        ctx.depend(dep)
    return checks.collapse(findings)


def measure(path: Path, text: str, ctx: Context) -> list:
    """The template's eligible blocks per request (``check --baseline``): one Measurement."""
    from promptlint import per_request
    from promptlint.compare import engine_profile
    from promptlint.render import RenderError

    block = engine_profile(ctx.settings.engine, ctx.settings.block_size).block_size
    run = _run(path, text, ctx)
    if isinstance(run, list):
        return [per_request.failed(ctx.display(path), run[0].code, run[0].message, block)]
    try:
        return [per_request.measure(run)]
    except RenderError as e:
        return [per_request.failed(ctx.display(path), e.code, e.message, block)]


def _run(path: Path, text: str, ctx: Context):
    """The TemplateRun of ``path`` (its scenario: a samples file, else inferred), or the E findings
    saying why the template cannot be run."""
    from promptlint.template_run import TemplateRun
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
        loaded = load_template(path, settings.template_env, [settings.root], source=text, limits=limits)
    except RenderError as e:
        return [file_error(display, e.code, e.message, e.line)]

    sp = samples_path_for(path)
    if sp is not None:
        ctx.depend(sp)
    try:
        scenario = template_scenario(loaded, text, sp)  # the samples file's inputs, the rest inferred
    except SamplesError as e:
        return [file_error(ctx.display(e.path), "E003", e.message)]

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
    )
