"""`promptlint samples TEMPLATE`: print (or write) the samples file promptlint infers for a template.

Every input with its kind, sub-kind and a value of the shape the template reads, and a comment
saying why; `--write` puts it beside the template as `<stem>.samples.toml`. A template that has a
samples file already shows its declarations and the inferred rest.
"""

from __future__ import annotations

import os
import sys


def add_parser(sub) -> None:
    p = sub.add_parser(
        "samples",
        help="print the samples file promptlint infers for a template",
        description="Print the inputs promptlint infers for application templates (kind, sub-kind, a value "
        "of the shape the template reads, and why) as a samples file, to edit instead of starting blank.",
    )
    p.add_argument("templates", nargs="+", metavar="TEMPLATE", help="application template files (.j2, .jinja, .prompt, ...)")
    p.add_argument("--write", action="store_true", help="write <stem>.samples.toml beside each template instead of printing")
    p.add_argument("--force", action="store_true", help="with --write: replace an existing <stem>.samples.toml")
    p.add_argument("--template-env", choices=["jinja2", "transformers"], help="Jinja environment for application templates")
    p.add_argument("--config", metavar="FILE", help="use this pyproject.toml or promptlint.toml")
    from promptlint.commands.options import add_trust_options

    add_trust_options(p)


def inferred_samples(path, settings, text=None) -> str:
    """The samples-file text for one application template (``text``: its unsaved text); raises
    UsageError naming the file."""
    from pathlib import Path

    from promptlint.doors import bounded_io
    from promptlint.analyzers import analyzer_for
    from promptlint.commands import UsageError
    from promptlint.project.discovery import display_path
    from promptlint.render import Limits, RenderError, load_template
    from promptlint.scenarios import SamplesError, samples_path_for
    from promptlint.scenarios.infer import template_scenario
    from promptlint.scenarios.writer import UnwritableValue, samples_text

    path = Path(path)
    shown = display_path(path, settings.base)
    if text is None and not path.is_file():
        raise UsageError(f"{shown}: no such file" if not path.exists() else f"{shown}: give template files, not a directory")
    analyzer = analyzer_for(path)
    if analyzer is None or not analyzer.__name__.endswith(("jinja_template", "yaml_prompt")):
        what = "a chat template, whose inputs are the built-in conversations (docs/chat-templates.md)"
        if analyzer is None or not analyzer.__name__.endswith("chat_template"):
            what = "not an application template (.j2, .jinja, .jinja2, .prompt, .prompty)"
        raise UsageError(f"{shown}: {what}; `promptlint samples` infers the inputs of application templates")
    try:
        text = bounded_io.read_text(path) if text is None else text
    except UnicodeDecodeError:
        raise UsageError(f"{shown}: not UTF-8 text; save the template as UTF-8") from None
    except OSError as e:
        raise UsageError(f"{shown}: cannot read the template ({e.strerror or e})") from None
    limits = Limits(timeout_s=settings.render_timeout, max_output_bytes=settings.max_output, max_recursion=settings.max_recursion)
    from promptlint.scenarios.names import name_patterns

    try:
        loaded = load_template(path, settings.template_env, [settings.root], source=text, limits=limits, jinja=settings.jinja_stubs(), classify=name_patterns().classify)
    except RenderError as e:
        where = f"{shown}:{e.line}" if e.line else shown
        raise UsageError(f"{where}: {e.code} {e.message}; fix the template first") from None
    sp = samples_path_for(path)
    try:
        scenario = template_scenario(loaded, text, sp, limits)
        return samples_text(scenario, shown, display_path(sp, settings.base) if sp is not None else None)
    except SamplesError as e:
        raise UsageError(f"{display_path(e.path, settings.base)}: E003 {e.message}") from None
    except UnwritableValue as e:
        raise UsageError(f"{display_path(sp, settings.base) if sp else shown}: {e}; keep the samples file as it is") from None


def show_inferred(paths, settings, force_exclude: bool, overrides, out) -> None:
    """`check --show-inferred`: each application template's inferred samples after the report."""
    from pathlib import Path

    from promptlint import analyzers
    from promptlint.analyzers import analyzer_for
    from promptlint.commands import UsageError
    from promptlint.project.discovery import discover, display_path
    from promptlint.base.paths import not_read

    files = [Path(p) for p in overrides]
    if paths or not overrides:
        files += [f for f in discover(paths, settings.root, settings.templates, settings.exclude, force_exclude, kinds=analyzers, base=settings.base)[0] if str(f) not in overrides]
    for path in files:
        analyzer = analyzer_for(path)
        if analyzer is None or not analyzer.__name__.endswith(("jinja_template", "yaml_prompt")):
            continue
        if str(path) not in overrides and not_read(path, settings.root):
            continue  # not read: the report has its E005
        shown = display_path(path, settings.base)
        out.write(f"\ninferred samples for {shown} (write them beside it: promptlint samples {shown} --write)\n")
        try:
            out.write(inferred_samples(path, settings, overrides.get(str(path))))
        except UsageError as e:
            out.write(f"# none: {e}\n")


def run(args) -> int:
    from pathlib import Path

    from promptlint.doors import safe_write
    from promptlint.commands import EXIT_OK, UsageError
    from promptlint.commands.options import settings_from_args
    from promptlint.project.discovery import display_path
    from promptlint.scenarios import default_samples_path, samples_path_for

    for key in ("tokenizer", "tokenizer_sha256", "engine", "block_size"):
        setattr(args, key, None)
    args.paths = args.templates
    settings = settings_from_args(args, base=Path.cwd())  # a command run in the user's own process
    texts = [(Path(t), inferred_samples(t, settings)) for t in args.templates]  # every template read first
    if not args.write:
        for path, text in texts:
            sys.stdout.write(text if len(texts) == 1 else f"# ---- {display_path(path, settings.base)}\n{text}\n")
        return EXIT_OK
    for path, _ in texts:  # nothing is written unless everything can be
        target, existing = default_samples_path(path), samples_path_for(path)
        try:  # a link on the way or as the target, a hard-linked or special file: refused
            safe_write.check_target(target, within=(settings.root,), cwd=settings.base)
        except safe_write.WriteRefused as e:
            raise UsageError(f"not written: {e}") from None
        except OSError as e:
            raise UsageError(f"{display_path(target, settings.base)}: cannot write ({e.strerror})") from None
        if existing is not None and existing != target:
            raise UsageError(
                f"{display_path(existing, settings.base)} exists and {display_path(target, settings.base)} would be used instead of it; "
                "remove or rename it first"
            )
        if os.path.lexists(target) and not args.force:  # never raises (a name too long for the file system)
            raise UsageError(f"{display_path(target, settings.base)} exists; pass --force to replace it")
    for path, text in texts:
        target = default_samples_path(path)
        try:
            safe_write.write_text(target, text, within=(settings.root,), cwd=settings.base)
        except safe_write.WriteRefused as e:
            raise UsageError(f"not written: {e}") from None
        except OSError as e:
            raise UsageError(f"{display_path(target, settings.base)}: cannot write ({e.strerror})") from None
        print(f"wrote {display_path(target, settings.base)}", file=sys.stderr)
    return EXIT_OK
