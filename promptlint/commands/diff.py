"""`promptlint diff A B`: where two captured prompts diverge in tokens, and what each engine reuses.

A is the base (the request that filled the cache), B the variant (the request being served).
Each is a rendered prompt (text), a JSON array of token ids, or a request body.
Standard library only at module level; everything else is imported inside run().
"""

from __future__ import annotations

import argparse
import json
import sys

HELP = "find the first divergent token of two captured prompts and the cache blocks they share"
ENGINES = ("vllm", "sglang", "llamacpp", "openai", "anthropic", "gemini")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "diff",
        help=HELP,
        description=HELP[:1].upper() + HELP[1:] + ". A is the base request, B the variant being served (P = B's length).",
    )
    p.add_argument("base", metavar="A", help="base: rendered prompt (text), JSON array of token ids, or request body")
    p.add_argument("variant", metavar="B", help="variant, same kinds as A")
    add_input_options(p)
    p.add_argument(
        "--model", metavar="NAME",
        help="one of the `tokenizers` configured in the project (promptlint.toml or pyproject.toml found from the "
        "current directory): its tokenizer, pin, engine and block size, unless given here",
    )
    p.add_argument(
        "--engine", choices=ENGINES, default=None,
        help="profile for the top-level figures (default: vllm); `profiles` lists every one",
    )
    p.add_argument("--block-size", type=int, metavar="N", help="block/page size of --engine (vllm default 16)")
    p.add_argument(
        "--hosted-model", action="append", default=[], metavar="PROVIDER=MODEL",
        help="model for a hosted profile's minimum, e.g. anthropic=claude-opus-4-5 (repeatable)",
    )
    p.add_argument(
        "--cache-minimums", metavar="FILE",
        help="JSON file overriding the dated table of hosted-API minimum cacheable lengths",
    )
    p.add_argument("--context", type=int, default=3, metavar="N", help="tokens of context on each side (default 3)")
    p.add_argument("--output-format", choices=("full", "json"), default="full", help="output format (default full)")
    return p


def add_input_options(p: argparse.ArgumentParser) -> None:
    """Options shared with `promptlint hashes`: how captured inputs are read and tokenized."""
    p.add_argument("--tokenizer", metavar="PATH", help="the model's tokenizer.json (or model directory)")
    p.add_argument("--tokenizer-sha256", metavar="HEX", help="expected sha256 of the tokenizer file (pin)")
    p.add_argument(
        "--serving", choices=("chat", "completions"), default="chat",
        help="serving path for text inputs: chat (add_special_tokens=false, default) or "
        "completions (add_special_tokens=true: the tokenizer adds BOS)",
    )
    p.add_argument(
        "--chat-template", metavar="PATH",
        help="chat template for request bodies: a model directory, tokenizer_config.json or .jinja file "
        "(default: --tokenizer when it is a model directory)",
    )
    p.add_argument(
        "--frontend", choices=("vllm", "transformers", "llamacpp"), default=None,
        help="how request bodies reach the template: vLLM's OpenAI server (default), apply_chat_template, "
        "or llama.cpp's server (default under --engine llamacpp)",
    )
    p.add_argument(
        "--input-format", choices=("auto", "text", "ids", "request"), default="auto",
        help="how to read inputs (default auto: a JSON array is token ids, a JSON object with "
        "messages/prompt is a request body, anything else is a rendered prompt)",
    )


def settings_from_args(args):
    from promptlint.operators.captured import Settings

    return Settings(
        tokenizer=args.tokenizer,
        tokenizer_sha256=args.tokenizer_sha256,
        add_special_tokens=args.serving == "completions",
        input_format=args.input_format,
        chat_template=getattr(args, "chat_template", None),
        frontend=getattr(args, "frontend", None) or ("llamacpp" if getattr(args, "engine", None) == "llamacpp" else "vllm"),
        engine=getattr(args, "engine", None) or "vllm",
    )


def run(args) -> int:
    from promptlint.commands import UsageError
    from promptlint.operators.captured import InputError, check_vocabulary, load_side
    from promptlint.arithmetic import compare

    if args.block_size is not None and args.block_size < 1:
        raise UsageError(f"--block-size {args.block_size}: must be a positive number of tokens")
    if args.model is not None:
        _use_model(args)
    args.engine = args.engine or "vllm"
    if args.context < 0:
        raise UsageError(f"--context {args.context}: must be >= 0")
    if args.base == "-" and args.variant == "-":
        raise UsageError("A and B are both stdin (-); pass at most one of them as -")
    models = {}
    for item in args.hosted_model:
        provider, sep, model = item.partition("=")
        if not sep or provider not in compare.HOSTED_PROVIDERS or not model:
            raise UsageError(
                f"--hosted-model {item!r}: expected PROVIDER=MODEL with PROVIDER one of {', '.join(compare.HOSTED_PROVIDERS)}"
            )
        models[provider] = model
    try:
        table = compare.load_cache_minimums(args.cache_minimums)
        profiles = compare.all_profiles(args.block_size, args.engine, models, table)
    except compare.CacheTableError as e:
        raise UsageError(str(e)) from None

    settings = settings_from_args(args)
    settings.approximate_chat = True  # chat-completions bodies without a template: docs/operators.md
    try:
        base = load_side(args.base, settings)
        variant = load_side(args.variant, settings)
    except InputError as e:
        raise UsageError(str(e)) from None
    # decode ids to text only with a pinned tokenizer: the embedded one has another vocabulary
    try:
        tok = settings.load_tokenizer() if (base.text is not None or variant.text is not None or settings.has_tokenizer) else None
        for side in (base, variant):
            if tok is not None and side.text is None:
                check_vocabulary(side, tok)
    except InputError as e:
        raise UsageError(str(e)) from None

    report = build_report(base, variant, profiles, args.engine, tok, args.context, settings)
    if args.output_format == "json":
        json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_full(report))
    return 0


def _use_model(args) -> None:
    """``--model NAME``: that configured model's tokenizer, pin, engine and block size, each unless
    given on the command line (diff reads the configuration only for this)."""
    from pathlib import Path

    from promptlint.commands import UsageError
    from promptlint.project.config import ConfigError, load_settings
    from promptlint.driver.models import choose

    if args.tokenizer:
        raise UsageError("give --tokenizer PATH or --model NAME (one of the configured `tokenizers`), not both")
    try:
        model = choose(load_settings(None, Path.cwd(), base=Path.cwd()), args.model)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    args.tokenizer, args.tokenizer_sha256 = model.tokenizer, model.tokenizer_sha256
    args.engine = args.engine or model.engine
    if args.block_size is None:
        args.block_size = model.block_size


def build_report(base, variant, profiles, engine, tok, context, settings) -> dict:
    """The JSON record (plain data); the `full` format is rendered from it."""
    from promptlint.arithmetic import compare

    S = compare.shared_prefix(base.ids, variant.ids)
    P = len(variant.ids)
    identical = base.ids == variant.ids
    first, cause = (None, None) if identical else _first_divergence(base, variant, S, tok, context)
    fig = {name: _profile_figures(p, S, P) for name, p in profiles.items()}
    sel = fig[engine]
    tokenizer = None
    if tok is not None:
        tokenizer = {"name": tok.spec.display, "sha256": tok.sha256, "approximate": tok.spec.embedded}
    return {
        "base": {"path": base.path, "kind": base.kind, "prompt_tokens": len(base.ids)},
        "variant": {"path": variant.path, "kind": variant.kind, "prompt_tokens": P},
        "tokenizer": tokenizer,
        "serving": "completions" if settings.add_special_tokens else "chat",
        "add_special_tokens": settings.add_special_tokens,
        "engine": engine,
        "identical": identical,
        "first_divergent_token": first,
        "prompt_tokens": P,
        "base_prompt_tokens": len(base.ids),
        "variant_prompt_tokens": P,
        "shared_tokens": S,
        "block_size": sel["block_size"],
        "eligible_blocks": sel["eligible_blocks"],
        "eligible_tokens": sel["eligible_tokens"],
        "cause": cause,
        "profiles": fig,
        "chat_framing": _framing(base, variant),
        "request_fields": _request_fields(base, variant),
    }


def _framing(base, variant):
    """How chat-completions bodies became text without a chat template (null when none did)."""
    sides = [label for label, side in (("base", base), ("variant", variant)) if side.framing]
    if not sides:
        return None
    return {"name": base.framing or variant.framing, "approximate": True, "sides": sides,
            "docs": "docs/operators.md#chat-completions-bodies-without-a-chat-template"}


def _request_fields(base, variant):
    """Two chat-completions bodies compared field by field (null unless both sides are one)."""
    from promptlint.operators import request_fields

    if base.body is None or variant.body is None:
        return None
    differences = request_fields.compare(base.body, variant.body)
    return {"identical": not differences, "first_difference": differences[0].to_dict() if differences else None,
            "differences": [d.to_dict() for d in differences]}


def _first_divergence(base, variant, S, tok, context):
    """The first divergent token record (ids, texts, offsets, context) and the JSON-order cause, if any."""
    from promptlint.base import json_order

    def text_of(i):
        return tok.token_text(i) if (tok is not None and i is not None) else None

    def tokens_at(ids, lo, hi):
        return [{"index": j, "id": ids[j], "text": text_of(ids[j])} for j in range(max(0, lo), min(hi, len(ids)))]

    def char_at(side, index):
        if side.offsets is None:
            return None
        return side.offsets[index][0] if index < len(side.offsets) else len(side.text)

    b_id = base.ids[S] if S < len(base.ids) else None
    v_id = variant.ids[S] if S < len(variant.ids) else None
    first = {
        "index": S,
        "base_id": b_id,
        "variant_id": v_id,
        "base_text": text_of(b_id),
        "variant_text": text_of(v_id),
        "char_offset": char_at(base, S) if base.offsets is not None else char_at(variant, S),
        "base_char_offset": char_at(base, S),
        "variant_char_offset": char_at(variant, S),
        "context_before": tokens_at(base.ids, S - context, S),
        "base_context_after": tokens_at(base.ids, S + 1, S + 1 + context),
        "variant_context_after": tokens_at(variant.ids, S + 1, S + 1 + context),
    }
    cause = None
    if base.text is not None and variant.text is not None:
        n = min(len(base.text), len(variant.text))
        c = next((i for i in range(n) if base.text[i] != variant.text[i]), n)
        first["text_divergence_offset"] = c
        if base.offsets is not None and S < len(base.offsets) and base.offsets[S][0] < c:
            first["note"] = (
                f"the tokens diverge {c - base.offsets[S][0]} character(s) before the text does, at character {c} "
                "(the tokenizer merged across the point of change)"
            )
        try:
            oc = json_order.explain(base.text, variant.text, c)
        except RecursionError:  # JSON in the text nested too deeply to compare: no cause named
            oc = None
        if oc is not None:
            cause = {"kind": oc.kind, "char_offset": oc.start, "message": oc.message}
    return first, cause


def _profile_figures(p, S, P) -> dict:
    """One profile's block size, minimum and eligible tokens/blocks for shared prefix S of a P-token prompt."""
    from promptlint.arithmetic import compare

    eligible = p.eligible(S, P)
    d = {
        "block_size": p.block_size,
        "min_tokens": p.min_tokens,
        "eligible_tokens": eligible,
        "eligible_blocks": eligible // p.block_size,
        "description": p.description,
    }
    if isinstance(p, compare.HostedProfile):
        d.update(model=p.model, table_as_of=p.as_of, approximate=True)
    return d


def _show(text) -> str:
    return "?" if text is None else json.dumps(text, ensure_ascii=False)


def _show_run(tokens) -> str:
    return " ".join(_show(t["text"]) if t["text"] is not None else str(t["id"]) for t in tokens)


_FIELDS_SHOWN = 10


def _format_fields(fields) -> list:
    if fields is None:
        return []
    if fields["identical"]:
        return ["", "request fields: the two bodies are identical"]
    n = len(fields["differences"])
    out = ["", f"request fields: {n} field{' differs' if n == 1 else 's differ'}; first: {_describe(fields['first_difference'])}"]
    for d in fields["differences"][1:_FIELDS_SHOWN]:
        out.append(f"  {_describe(d)}")
    if len(fields["differences"]) > _FIELDS_SHOWN:
        out.append(f"  … and {len(fields['differences']) - _FIELDS_SHOWN} more (--output-format json lists every one)")
    return out


def _describe(d: dict) -> str:
    where = f"message {d['message']}, " if d["message"] is not None else f"tool {d['tool']}, " if d["tool"] is not None else ""
    values = "" if d["base"] is None and d["variant"] is None else f": {_show(d['base'])} vs {_show(d['variant'])}"
    prompt = "" if d["in_prompt"] else " (not in the prompt)"
    return f"{d['path']} ({where}{d['field']}){prompt}: {d['what']}{values}"


def format_full(r: dict) -> str:
    lines = []
    for label in ("base", "variant"):
        side = r[label]
        lines.append(f"{label + ':':<9}{side['path']} ({side['kind']}, {side['prompt_tokens']:,} tokens)")
    if r["tokenizer"]:
        t = r["tokenizer"]
        approx = " (approximate: pass --tokenizer)" if t["approximate"] else ""
        lines.append(f"tokenizer: {t['name']}{approx}, serving {r['serving']} (add_special_tokens={str(r['add_special_tokens']).lower()})")
    if r.get("chat_framing"):
        lines.append(f"chat framing: approximate ({r['chat_framing']['name']}, no chat template given; "
                     "docs/operators.md): pass --chat-template for the model's exact prompt")
    lines += _format_fields(r.get("request_fields"))
    lines.append("")
    f = r["first_divergent_token"]
    if f is None:
        lines.append(f"identical: all {r['prompt_tokens']:,} tokens match")
    else:
        where = f" (character {f['char_offset']})" if f["char_offset"] is not None else ""
        lines.append(f"first divergent token: index {f['index']:,}{where}")
        before = _show_run(f["context_before"])
        for label, key_id, key_text, key_after in (
            ("base", "base_id", "base_text", "base_context_after"),
            ("variant", "variant_id", "variant_text", "variant_context_after"),
        ):
            if f[key_id] is None:
                tok = "<end of prompt>"
            else:
                tok = f"[{_show(f[key_text]) if f[key_text] is not None else ''} id {f[key_id]}]"
            after = _show_run(f[key_after])
            lines.append(f"  {label + ':':<9}{before} {tok} {after}".rstrip())
        if f.get("note"):
            lines.append(f"  note: {f['note']}")
    if r["cause"]:
        lines.append(f"cause: {r['cause']['message']}")
    lines.append("")
    lines.append(f"shared prefix S = {r['shared_tokens']:,} tokens; P = {r['prompt_tokens']:,} (variant), base {r['base_prompt_tokens']:,}")
    lines.append(f"{'profile':<10} {'block':>6} {'min':>6} {'eligible tokens':>16} {'blocks':>7}")
    for name, p in r["profiles"].items():
        mark = "*" if name == r["engine"] else " "
        minimum = f"{p['min_tokens']:,}" if p["min_tokens"] else "-"
        model = f"  {p['model']} (table {p['table_as_of']})" if p.get("model") else ""
        lines.append(
            f"{name + mark:<10} {p['block_size']:>6} {minimum:>6} {p['eligible_tokens']:>16,} {p['eligible_blocks']:>7,}{model}"
        )
    lines.append("* selected engine; hosted-API figures approximate the documented rules")
    return "\n".join(lines) + "\n"
