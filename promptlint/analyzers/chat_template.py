"""Hugging Face chat templates: a chat `.jinja` file, a `tokenizer_config.json`, a model directory.

Source -> scenarios (a samples file, else the built-in conversations) -> render as the
configured serving stack does (transformers 5.x/4.x, vLLM frontend) -> tokenize (serving
path) -> every enabled check. Built-in scenarios the template refuses (raise_exception:
"System role not supported", tools required...) are skipped with a note.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

from promptlint.lint import Context, TokenizerProvider, file_error
from promptlint.records import Finding


def handles(path: Path) -> bool:
    from promptlint.chat.source import handles as is_chat_source

    return is_chat_source(path)


def _tokenizer_for(source, ctx: Context):
    """The model directory's own tokenizer unless one is configured."""
    from promptlint.tokens import resolve

    if ctx.settings.tokenizer:
        return ctx.tokenizer
    directory: Optional[Path] = source.model_dir
    if directory is None and (source.path.parent / "tokenizer.json").is_file():
        directory = source.path.parent
    if directory is None:
        return ctx.tokenizer
    return TokenizerProvider(resolve(str(directory)))


def embedded_note(source, name: str) -> Optional[str]:
    from promptlint.chat.source import json_line_of_key

    key = source.embedded.get(name)
    if not key:
        return None
    try:
        json_line = json_line_of_key(source.path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        json_line = 1
    return (
        f"line and column are within the chat template stored as `{key}` in {source.path.name} "
        f"(the JSON string starts on line {json_line})"
    )


def lint_file(path: Path, text: str, ctx: Context) -> List[Finding]:
    from promptlint import checks
    from promptlint.chat.request import ChatProfile
    from promptlint.chat.run import ChatRun, ChatTemplate
    from promptlint.chat.scenarios import builtin_scenarios, load_chat_samples, samples_path_for_chat
    from promptlint.chat.source import SourceError, load_source
    from promptlint.compare import engine_profile
    from promptlint.render import Limits, RenderError
    from promptlint.scenarios import SamplesError

    settings = ctx.settings
    display = ctx.display(path)
    try:
        source = load_source(path, text if (text and not path.is_dir()) else None)
    except SourceError as e:
        return [file_error(ctx.display(e.path), e.code, e.message)]
    except ValueError as e:
        return [file_error(display, "E005", f"invalid JSON: {e}")]
    display = ctx.display(source.path)
    from promptlint.chat.special import atomic, from_tokenizer, template_special_texts

    tokenizer = _tokenizer_for(source, ctx)
    embedded = getattr(getattr(tokenizer, "spec", None), "embedded", False)
    if not source.special_tokens:
        # tokenizer_config.json beside the tokenizer, else tokenizer.json itself (never the embedded one's)
        source.special_tokens = dict(tokenizer().special_tokens) or ({} if embedded else from_tokenizer(tokenizer()))
        if not source.special_tokens:
            ctx.notices.append(
                f"{display}: no tokenizer_config.json gives the special tokens, so `bos_token`/`eos_token` are "
                "undefined in the render; lint the model directory or configure a tokenizer directory that has one"
            )
    if embedded:  # the template's special-token texts stay single tokens, as in the model's tokenizer
        tokenizer = atomic(tokenizer, template_special_texts(source))
    sp = samples_path_for_chat(path)
    try:
        scenarios = [load_chat_samples(sp)] if sp is not None else builtin_scenarios()
    except SamplesError as e:
        return [file_error(ctx.display(e.path), "E003", e.message)]

    profile = ChatProfile(settings.transformers, settings.frontend, settings.serving)
    chat = ChatTemplate(source, profile, Limits(timeout_s=settings.render_timeout, max_output_bytes=settings.max_output))
    engine = engine_profile(settings.engine, settings.block_size)
    findings: List[Finding] = []
    refused = []
    rendered_any = False
    seen = set()
    for scenario in scenarios:
        try:
            name = chat.select(scenario.request)
            note = embedded_note(source, name)
            run = ChatRun(chat, scenario, display, tokenizer, engine, note, ctx.is_enabled)
        except SourceError as e:
            findings.append(file_error(display, e.code, e.message))
            break
        except RenderError as e:
            f = file_error(display, e.code, e.message, e.line)
            findings.append(f)
            break
        try:
            run.base()  # first: it records the template's clock calls, a variable the checks vary
            rendered_any = True
            found = []
            enabled = checks.enabled_checks(ctx.is_enabled)
            run.prefetch(run.plan(enabled))  # every variant the checks ask for, tokenized in one batch
            for module in enabled:
                found += module.check(run)
            if run.loaded.limit_error is not None:  # a limit some check swallowed as a refusal
                raise run.loaded.limit_error
            # token indices are per scenario: collapse within one scenario, then drop repeats across scenarios
            for f in checks.collapse(found):
                key = (f.code, f.path, f.line, f.column, f.variable)
                if key not in seen:
                    seen.add(key)
                    findings.append(f)
        except RenderError as e:
            where = run.path_of(e.template) if e.template else display
            f = file_error(where, e.code, e.message, e.line)
            if note:
                f.notes.append(note)
            if e.code == "E006":  # a limit, not a refusal: stop at the first one (docs/security.md)
                findings.append(f)
                break
            if scenario.builtin:
                refused.append((scenario.name, f))
            else:
                findings.append(f)
    if refused and not rendered_any:
        first = refused[0][1]
        first.message += f" (built-in scenario `{refused[0][0]}`; every built-in scenario failed)"
        findings.append(first)
    else:
        for name, f in refused:  # never skipped silently: one info finding per scenario (PL102)
            if ctx.is_enabled("PL102"):
                skipped = file_error(f.path, "PL102", f"built-in scenario `{name}` not rendered, not checked: {f.message}", f.line)
                skipped.variable = name
                skipped.notes = list(f.notes)
                findings.append(skipped)
    return findings
