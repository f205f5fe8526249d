"""`promptlint render TARGET --scenario FILE`: print exactly what the model would see.

TARGET is a chat template (a model directory, a `tokenizer_config.json`, a chat `.jinja`
file) or an application template. FILE (JSON or TOML) gives the inputs: for chat templates
`messages`, `tools`, `documents`, `add_generation_prompt`, `now` and kwargs under
`variables`; for application templates the variables (top level or under `variables`).
Without `now`, `strftime_now` uses the real current time, as `apply_chat_template` does.
"""

from __future__ import annotations

import sys
from promptlint.doors import bounded_io


def add_parser(sub) -> None:
    from promptlint.commands.options import add_chat_options

    p = sub.add_parser(
        "render",
        help="show exactly what the model receives for one scenario",
        description="Render a template for one scenario as the serving stack does and show its tokens.",
    )
    p.add_argument("target", metavar="TARGET", help="model directory, tokenizer_config.json, or template file")
    p.add_argument("--scenario", required=True, metavar="FILE", help="scenario inputs (JSON or TOML)")
    p.add_argument("--tokenizer", metavar="PATH", help="tokenizer.json, or a model directory holding one")
    p.add_argument("--tokenizer-sha256", metavar="HEX", help="expected sha256 of tokenizer.json (pin)")
    p.add_argument("--config", metavar="FILE", help="use this pyproject.toml or promptlint.toml")
    p.add_argument("--model", metavar="NAME", help="with `tokenizers` configured: the model whose tokenizer to use (default: the first)")
    add_chat_options(p)
    from promptlint.commands.options import add_trust_options

    add_trust_options(p)
    p.add_argument("--template-env", choices=["jinja2", "transformers"], help="Jinja environment for application templates")
    p.add_argument(
        "--engine", choices=["vllm", "sglang", "llamacpp"], default="vllm",
        help="whose tokenization to show (llamacpp: no NFC normalizer, control-looking texts as control tokens)",
    )
    p.add_argument("--output-format", choices=["text", "json"], default="text", help="text (token boundaries shown) or json")


def _settings(args):
    from promptlint.commands.options import settings_from_args

    from promptlint.commands import UsageError
    from promptlint.project.config import ConfigError
    from promptlint.driver.models import choose

    args.block_size = None
    args.paths = [args.target]
    from pathlib import Path

    settings = settings_from_args(args, base=Path.cwd())  # a command run in the user's own process
    if args.tokenizer and args.model:
        raise UsageError("give --tokenizer PATH or --model NAME (one of the configured `tokenizers`), not both")
    try:
        return choose(settings, args.model)  # `tokenizers`: one model's tokenizer and pin
    except ConfigError as e:
        raise UsageError(str(e)) from None


def _read_scenario(path):
    import json
    from pathlib import Path

    from promptlint.commands import UsageError
    from promptlint.base.toml_io import toml_loads

    p = Path(path)
    try:
        text = bounded_io.read_text(p)
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{p}: cannot read the scenario file ({e})") from None
    try:
        data = json.loads(text) if p.suffix == ".json" else toml_loads(text)
    except ValueError as e:
        raise UsageError(f"{p}: invalid {'JSON' if p.suffix == '.json' else 'TOML'}: {e}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{p}: the scenario must be a JSON object / TOML table")
    return p, data


def run(args) -> int:
    from pathlib import Path

    from promptlint.commands import EXIT_OK, UsageError
    from promptlint.render import Limits, RenderError
    from promptlint.tokenization.tokens import PromptNotText, TokenizerCrashed, TokenizerError, TokenizerUnvetted, load

    settings = _settings(args)
    target = Path(args.target)
    if not target.exists():
        raise UsageError(f"{target}: no such file or directory")
    scenario_path, data = _read_scenario(args.scenario)
    limits = Limits(timeout_s=settings.render_timeout, max_output_bytes=settings.max_output)
    from promptlint.chat.source import SourceError, handles

    try:
        if handles(target):
            text, add_special_tokens, spec = _render_chat(target, data, scenario_path, settings, limits)
        else:
            text, add_special_tokens, spec = _render_template(target, data, settings, limits)
        tokenizer = load(spec)
    except RenderError as e:
        where = f"{target}:{e.line}: " if e.line else f"{target}: "
        raise UsageError(f"{where}{e.code} {e.message}") from None
    except SourceError as e:
        raise UsageError(f"{e.path}: {e.message}") from None
    except (TokenizerError, TokenizerUnvetted) as e:
        raise UsageError(str(e)) from None
    from promptlint.tokenization.engine_tokenize import engine_encoder

    tokenizer = engine_encoder(tokenizer, args.engine)
    try:
        encoding = tokenizer.encode(text, add_special_tokens=add_special_tokens)
    except (PromptNotText, TokenizerCrashed) as e:
        raise UsageError(f"{target}: E002 {e}") from None
    if args.output_format == "json":
        import json

        json.dump({"render": text, "token_ids": encoding.ids, "add_special_tokens": add_special_tokens}, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(show_tokens(text, encoding, tokenizer, sys.stdout))
        sys.stdout.write("\n")
        print(
            f"promptlint: {len(encoding.ids):,} tokens, add_special_tokens={add_special_tokens}, tokenizer {spec.display}",
            file=sys.stderr,
        )
    if spec.embedded:
        print("promptlint: note: no tokenizer configured: token ids are from the embedded cl100k_base tokenizer", file=sys.stderr)
    return EXIT_OK


def _tokenizer_spec(settings, source_dir):
    from promptlint.tokenization.tokens import resolve

    if settings.tokenizer:
        return resolve(settings.tokenizer, settings.tokenizer_sha256)
    if source_dir is not None:  # the directory's own tokenizer: untrusted, vetted before it runs (tokens.needs_deadline)
        from dataclasses import replace

        return replace(resolve(str(source_dir)), vet=True)
    return resolve(None)


def _render_chat(target, data, scenario_path, settings, limits):
    from datetime import datetime

    from promptlint.chat.request import ChatProfile
    from promptlint.chat.run import ChatTemplate
    from promptlint.chat.scenarios import scenario_from_data
    from promptlint.chat.source import load_source
    from promptlint.commands import UsageError
    from promptlint.scenarios import SamplesError
    from promptlint.schemas import validate
    from promptlint.tokenization.tokens import load

    problem = validate("samples", data)
    if problem:
        raise UsageError(f"{scenario_path}: invalid scenario: {problem}")
    try:
        scenario = scenario_from_data(data, scenario_path, "scenario")
    except SamplesError as e:
        raise UsageError(f"{e.path}: {e.message}") from None
    for name, var in scenario.variables.variables.items():
        scenario.request.kwargs[name] = var.value
    source = load_source(target)
    directory = source.model_dir
    if directory is None and (source.path.parent / "tokenizer.json").is_file():
        directory = source.path.parent
    spec = _tokenizer_spec(settings, directory)
    if not source.special_tokens:  # as `check` gives them (chat/special.py), with the same notice
        from promptlint.chat.special import fill_special_tokens
        from promptlint.project.discovery import display_path

        notice = fill_special_tokens(source, load(spec), spec.embedded, display_path(source.path, settings.base))
        if notice:
            print(f"promptlint: note: {notice}", file=sys.stderr)
    profile = ChatProfile(settings.transformers, settings.frontend, settings.serving)
    now = scenario.now if "now" in data else datetime.now()
    rendered, _, _ = ChatTemplate(source, profile, limits).render(scenario.request, now)
    return rendered.text, profile.add_special_tokens, spec


def _render_template(target, data, settings, limits):
    from datetime import datetime

    from promptlint.render import load_template, render
    from promptlint.scenarios.names import name_patterns

    variables = data.get("variables", data) if isinstance(data.get("variables"), dict) else data
    values = {k: (v["value"] if isinstance(v, dict) and "value" in v and set(v) <= {"value", "kind", "sub-kind", "variant"} else v) for k, v in variables.items()}
    loaded = load_template(target, settings.template_env, [settings.root], jinja=settings.jinja_stubs(), classify=name_patterns().classify)
    now = datetime.now()
    rendered = render(loaded, values, limits, now)
    return rendered.text, settings.serving == "completions", _tokenizer_spec(settings, None)


def show_tokens(text: str, encoding, tokenizer, stream) -> str:
    """The render with token boundaries visible: alternating colours on a TTY, else `|` between tokens."""
    import os

    from promptlint.report.style import use_color

    color = use_color(stream, os.environ)
    pieces = []
    pos = 0
    for i, (start, end) in enumerate(encoding.offsets):
        if end <= start or start < pos:  # a token the tokenizer added (BOS), or one sharing a character
            if end <= start and start >= pos:
                pieces.append(("[" + tokenizer.token_text(encoding.ids[i]) + "]", True))
            continue
        pieces.append((text[pos:end] if start == pos else text[pos:start] + text[start:end], False))
        pos = end
    if pos < len(text):
        pieces.append((text[pos:], False))
    if not color:
        return "|".join(p for p, _ in pieces)
    out = []
    for i, (p, added) in enumerate(pieces):
        code = "7" if added else ("36" if i % 2 else "33")
        out.append(f"\x1b[{code}m{p}\x1b[0m")
    return "".join(out)
