"""`promptlint server`: a Language Server over stdio for editors (needs the `lsp` extra)."""

from __future__ import annotations


def add_parser(sub) -> None:
    from promptlint.commands.options import add_common_tokenizer_options

    p = sub.add_parser(
        "server",
        help="run the language server (LSP over stdio) for editors",
        description="Speak the Language Server Protocol over stdin/stdout: diagnostics on open, save and "
        "change (debounced) for prompt templates, and a quick fix that adds a suppression comment. "
        "Needs the `lsp` extra: pip install 'promptlint-kv[lsp]'.",
    )
    add_common_tokenizer_options(p)
    p.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to enable")
    p.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to disable")
    p.add_argument(
        "--debounce", type=int, default=300, metavar="MS", help="re-lint this long after the last edit (default 300)"
    )


def run(args) -> int:
    from promptlint.commands import UsageError
    from promptlint.project.config import ConfigError, parse_codes

    if args.block_size is not None and args.block_size < 1:
        raise UsageError("--block-size must be a positive number of tokens")
    if args.debounce < 0:
        raise UsageError("--debounce must be 0 or more milliseconds")
    try:
        import pygls  # noqa: F401
        import lsprotocol  # noqa: F401
    except ImportError:
        raise UsageError("`promptlint server` needs pygls: pip install 'promptlint-kv[lsp]'") from None
    try:
        select, ignore = parse_codes(args.select), parse_codes(args.ignore)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    from promptlint.editor.lsp import Options, serve

    return serve(
        Options(
            tokenizer=args.tokenizer,
            tokenizer_sha256=args.tokenizer_sha256,
            config=args.config,
            engine=args.engine,
            block_size=args.block_size,
            select=select,
            ignore=ignore,
            debounce=args.debounce / 1000,
        )
    )
