"""`promptlint tokenize`: the token ids an engine really receives for a text.

Each input's full text (exact bytes, no newline translation) is tokenized with the engine's
tokenization: the pinned tokenizer for vLLM and SGLang, the llama.cpp emulation for llama.cpp
(no NFC step, end-of-generation-looking texts as control tokens; see docs/engines.md).
"""

from __future__ import annotations

import json
import sys

ENGINES = ("vllm", "sglang", "llamacpp")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "tokenize",
        help="print the token ids an engine receives for each file's text",
        description="Tokenize each file's full text as the engine does and print the token ids "
        "(text: ids with readable pieces; json: one {\"token_ids\": [...]} object per input).",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="text files; `-` or none reads standard input")
    p.add_argument("--tokenizer", metavar="PATH", help="tokenizer.json, or a model directory holding one")
    p.add_argument("--tokenizer-sha256", metavar="HEX", help="expected sha256 of tokenizer.json (pin)")
    p.add_argument("--engine", choices=ENGINES, help="whose tokenization to follow (default vllm)")
    p.add_argument(
        "--jsonl",
        metavar="FILE",
        help="read inputs as JSON lines, one {\"text\": ...} object per line (`-` for standard input); "
        "writes one {\"token_ids\": [...]} line per input, in order",
    )
    p.add_argument("--output-format", choices=("text", "json"), help="text (default) or json (default with --jsonl)")
    p.add_argument(
        "--add-special-tokens",
        action="store_true",
        help="add the tokenizer's BOS/EOS as a completions endpoint does with a raw prompt (default: off, as for chat)",
    )


def _read_input(name: str) -> str:
    """The file's exact text (``-`` is stdin), or a one-line usage error."""
    from promptlint.operators.captured import InputError, read_input
    from promptlint.commands import UsageError

    try:
        return read_input(name)
    except InputError as e:
        raise UsageError(str(e)) from None


def _jsonl_inputs(name: str):
    """(label, text) per non-blank line; a line ends at \n only (a text may hold U+2028, U+0085, ...)."""
    import io

    from promptlint.base import jsonl
    from promptlint.operators.captured import InputError, read_input_bytes
    from promptlint.commands import UsageError

    label = "standard input" if name == "-" else name
    try:
        data = read_input_bytes(name)
    except InputError as e:
        raise UsageError(str(e)) from None
    out = []
    for lineno, line in jsonl.numbered_lines(io.BytesIO(data)):
        where = f"{label}:{lineno}"
        try:
            obj = jsonl.loads(line, first=lineno == 1)
        except jsonl.LineError as e:
            raise UsageError(f"{where}: {e}; write one {{\"text\": ...}} object per line") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            raise UsageError(f"{where}: expected an object with a \"text\" string, e.g. {{\"text\": \"hello\"}}")
        bad = jsonl.surrogate_message(obj["text"], "\"text\"")
        if bad:
            raise UsageError(f"{where}: {bad}")
        out.append((where, obj["text"]))
    return out


def _settings(args):
    """(tokenizer path, sha256, engine): command line first, then [tool.promptlint] if the
    configuration machinery is present, then the defaults (embedded tokenizer, vllm)."""
    tokenizer, sha, engine = args.tokenizer, args.tokenizer_sha256, args.engine
    try:
        from promptlint.project.config import ConfigError, load_settings
    except ImportError:
        return tokenizer, sha, engine or "vllm"
    from pathlib import Path

    from promptlint.commands import UsageError

    start = None
    for f in args.files:
        if f != "-" and Path(f).exists():
            start = Path(f)
            break
    overrides = {"tokenizer": tokenizer, "tokenizer_sha256": sha, "engine": engine}
    try:
        s = load_settings(getattr(args, "config", None), start, overrides, base=Path.cwd())  # the user's own process
    except ConfigError as e:
        raise UsageError(str(e)) from None
    return s.tokenizer, s.tokenizer_sha256, s.engine or "vllm"


def _piece(encoder, token_id: int) -> str:
    """A readable piece: the decoded text, or the raw bytes of a partial UTF-8 character."""
    from promptlint.tokenization.engine_tokenize import token_bytes

    text = encoder.token_text(token_id)
    if "\ufffd" in text:
        raw = token_bytes(encoder, token_id)
        if raw is not None:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:  # part of a multi-byte character
                return "bytes " + " ".join(f"{b:02x}" for b in raw)
    return _quote(text)


def _quote(text: str) -> str:
    """JSON-style quoting that keeps printable characters and escapes combining marks,
    controls and unusual spaces (so a lone U+0301 or U+200B is visible)."""
    import unicodedata

    out = []
    for ch in json.dumps(text, ensure_ascii=False)[1:-1]:
        cat = unicodedata.category(ch)
        if ch != " " and (cat[0] in "MCZ"):
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def run(args) -> int:
    from promptlint.commands import EXIT_OK, UsageError
    from promptlint.tokenization.engine_tokenize import describe_promoted, engine_encoder
    from promptlint.tokenization.tokens import TokenizerError, env_tokenizer_threads, load, resolve

    if args.jsonl and args.files:
        raise UsageError("pass either FILE arguments or --jsonl FILE, not both")
    if args.jsonl:
        inputs = _jsonl_inputs(args.jsonl)
    else:
        names = args.files or ["-"]
        if names.count("-") > 1:
            raise UsageError("`-` (standard input) can be given only once")
        inputs = [("standard input" if n == "-" else n, _read_input(n)) for n in names]
    fmt = args.output_format or ("json" if args.jsonl else "text")

    tok_path, sha, engine = _settings(args)
    env_tokenizer_threads()
    try:
        spec = resolve(tok_path, sha)
        pinned = load(spec)
        encoder = engine_encoder(pinned, engine)
    except TokenizerError as e:
        raise UsageError(str(e)) from None
    if spec.embedded:
        print(
            "promptlint: note: no tokenizer configured: token ids come from the embedded cl100k_base tokenizer "
            "and are approximate until the model's tokenizer is pinned (--tokenizer)",
            file=sys.stderr,
        )
    for note in getattr(encoder, "notes", []):
        print(f"promptlint: note: {engine}: {note}", file=sys.stderr)

    out = sys.stdout
    control_ids = getattr(encoder, "control_ids", None)
    if control_ids is None:
        control_ids = set(pinned.added_tokens().values())
    if fmt == "text" and engine == "llamacpp":
        promoted = describe_promoted(encoder)
        if promoted:
            print(f"promptlint: note: llamacpp treats these vocabulary texts as control tokens: {promoted}", file=sys.stderr)
    for label, text in inputs:
        enc = encoder.encode(text, add_special_tokens=args.add_special_tokens)
        if fmt == "json":
            out.write(json.dumps({"token_ids": enc.ids}) + "\n")
            continue
        out.write(f"{label}: {len(enc.ids)} tokens ({engine}, {spec.display})\n")
        width = len(str(max(enc.ids))) if enc.ids else 1
        for i, (tid, (s, e)) in enumerate(zip(enc.ids, enc.offsets)):
            mark = "  [control]" if tid in control_ids else ""
            out.write(f"  {i:>5}  {tid:>{width}}  {s:>6}-{e:<6} {_piece(encoder, tid)}{mark}\n")
    return EXIT_OK
