"""Python prompt-building code (`*.py`): prompt text and hazards that reach LLM calls.

Parse (stdlib ``ast``) -> module index and flow (promptlint.pysource.flow) -> hazards at
prompt sinks (pysource.rules) -> M101 candidates measured in tokens like templates.
A file that does not parse is one E008 finding. libcst is used only by ``fix``.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, NamedTuple, Optional, Sequence

from promptlint import bounded_io

from promptlint.lint import Context, file_error, name_patterns
from promptlint.records import Arithmetic, DivergentToken, Finding

# A directory walk lints a .py file only when it contains one of these byte strings
# (explicit paths and `templates` globs are always linted). Plain substring tests: about
# 0.3 ms per file, against 2 ms for one regular expression.
PROMPT_CODE_MARKERS = (
    b"openai", b"anthropic", b"litellm", b"vllm", b"sglang", b"langchain", b"llama_index",
    b"apply_chat_template", b"cache_salt", b"prefix_caching", b"prefix-caching", b"radix_cache",
    b"radix-cache", b"prompt_logprobs", b'"role"', b"'role'", b"genai", b"bedrock",
)
FIXABLE = {"M201", "M202", "M203"}


def handles(path: Path) -> bool:
    return path.suffix in (".py", ".pyi")


def looks_like_prompt_code(path: Path, limit: int = 2_000_000) -> bool:
    """For directory walks: does this Python file talk to an LLM or build chat messages?"""
    if not bounded_io.is_regular_file(path):
        return True  # let lint_file report it
    data = bounded_io.read_prefix(path, limit)
    return any(m in data for m in PROMPT_CODE_MARKERS)


class Parsed(NamedTuple):
    tree: object
    error: Optional[Finding]


def parse(path: Path, text: str, display: str) -> Parsed:
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. are not ours to report
            return Parsed(ast.parse(text, filename=display, type_comments=False), None)
    except SyntaxError as e:
        msg = e.msg or "invalid syntax"
        f = file_error(display, "E008", f"Python syntax error: {msg}; promptlint cannot analyse this file", e.lineno or 1)
        if e.offset:
            f.column = f.end_column = max(1, e.offset)
        return Parsed(None, f)
    except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, absurd nesting
        return Parsed(None, file_error(display, "E008", f"Python source cannot be parsed: {type(e).__name__}: {e}"))


def analyze(path: Path, text: str, display: str):
    """(candidates, error) without touching the tokenizer."""
    from promptlint.pysource.rules import Analysis

    parsed = parse(path, text, display)
    if parsed.error is not None:
        return [], parsed.error
    analysis = Analysis(text, parsed.tree, name_patterns().kind_of)
    return analysis.run(), None


def lint_file(path: Path, text: str, ctx: Context) -> List[Finding]:
    display = ctx.display(path)
    candidates, error = analyze(path, text, display)
    if error is not None:
        return [error]
    lines = text.splitlines()
    findings: List[Finding] = []
    encodings: dict = {}  # text -> Encoding: holes of one prompt share its base render
    for c in candidates:
        if not ctx.is_enabled(c.code):
            continue
        if c.measure is not None:  # M106/M703: figures at a cache breakpoint (pysource.breakpoints)
            f = _measured_at_breakpoint(c, ctx, display, lines, encodings)
            if f is not None:
                findings.append(f)
            continue
        if c.code == "M101":
            f = _measured(c, ctx, display, lines, encodings)
            if f is not None:
                findings.append(f)
            continue
        f = _record(c, display, lines, c.message)
        if c.fix:
            f.notes.append("fixable with `promptlint check --fix` (safe: changes ordering only)")
        findings.append(f)
    findings.sort(key=lambda f: f.sort_key)
    return findings


# ----------------------------------------------------------------------------- records


def _char_col(lines: Sequence[str], line: int, byte_col: int) -> int:
    """ast columns are UTF-8 byte offsets; findings use 1-based characters."""
    if 1 <= line <= len(lines):
        return len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1
    return byte_col + 1


def _record(c, display: str, lines: Sequence[str], message: str) -> Finding:
    from promptlint import registry

    rule = registry.get(c.code)
    n = c.node
    line = getattr(n, "lineno", 1)
    end_line = getattr(n, "end_lineno", line) or line
    col = _char_col(lines, line, getattr(n, "col_offset", 0))
    end_col = _char_col(lines, end_line, getattr(n, "end_col_offset", 0) or 0)
    return Finding(c.code, rule.name, rule.miss_class, rule.severity, message, display, line, col, end_line, end_col,
                   variable=c.variable, help=c.help, notes=list(c.notes))


_CADENCE = {"date": "changes daily", "time": "changes every second"}


def _measured(c, ctx: Context, display: str, lines: Sequence[str], encodings: dict) -> Optional[Finding]:
    from promptlint.compare import Comparison, engine_profile, shared_prefix
    from promptlint.pysource.rules import render, unresolved_after

    tok = ctx.tokenizer()
    encode = _encoder(tok, encodings)

    profile = engine_profile(ctx.settings.engine, ctx.settings.block_size)
    base_text = render(c.prompt)
    variant_text = render(c.prompt, changed=c.hole)
    base = encode(base_text)
    variant = encode(variant_text)
    per_request_text = render(c.prompt, per_request_variant=True)
    if per_request_text != base_text:
        ideal = shared_prefix(base.ids, encode(per_request_text).ids)
    else:
        ideal = len(variant.ids)
    cmp = Comparison(shared_prefix(base.ids, variant.ids), len(variant.ids), ideal, profile.block_size)
    label = c.hole.label
    cadence = _CADENCE.get(c.hole.sub, "changes on every request")
    if cmp.lost_blocks <= 0:
        unknown = unresolved_after(c.prompt, c.hole)
        if unknown is None:
            return None
        f = _record(c, display, lines,
                    f"`{label}` {cadence} and precedes `{unknown}`, which promptlint cannot evaluate: "
                    "every KV block after it is lost if that text is shared (not measured)")
        f.variable = label
        f.help = f"move `{label}` after the shared material"
        f.notes.append(c.sink)
        return f
    message = (f"`{label}` {cadence} and precedes the shared prompt: "
               f"{cmp.lost_blocks:,} of {cmp.ideal_eligible_blocks:,} eligible KV blocks lost")
    f = _record(c, display, lines, message)
    f.variable = label
    s = cmp.shared
    b_id = base.ids[s] if s < len(base.ids) else None
    v_id = variant.ids[s] if s < len(variant.ids) else None
    offset = base.offsets[s][0] if s < len(base.ids) else len(base_text)
    f.first_divergent_token = DivergentToken(s, b_id, v_id, tok.token_text(b_id), tok.token_text(v_id), offset)
    f.arithmetic = Arithmetic(cmp.prompt_len, cmp.shared, cmp.ideal_shared, cmp.block_size, cmp.eligible_blocks,
                              cmp.ideal_eligible_blocks, cmp.lost_blocks, cmp.lost_tokens)
    f.evidence = {"base_render": base_text, "variant_render": variant_text, "add_special_tokens": False}
    coarser = ", or make it coarser (date, not time)" if c.hole.sub in ("timestamp", "time", "number") else ""
    f.help = f"move `{label}` after the shared material{coarser}"
    f.notes = [
        f"{profile.name}, block {cmp.block_size}: eligible {cmp.eligible_blocks:,} blocks now, "
        f"{cmp.ideal_eligible_blocks:,} if `{label}` came after the shared material",
        c.sink,
        "measured on the prompt text (message contents joined by blank lines), without the chat template's markers",
    ]
    return f


def _encoder(tok, encodings: dict):
    """Encode without special tokens, once per text (holes of one prompt share its base render)."""

    def encode(text: str):
        if text not in encodings:
            encodings[text] = tok.encode(text, add_special_tokens=False)
        return encodings[text]

    return encode


def _measured_at_breakpoint(c, ctx: Context, display: str, lines: Sequence[str], encodings: dict) -> Optional[Finding]:
    tok = ctx.tokenizer()
    encode = _encoder(tok, encodings)

    m = c.measure(tok, encode, ctx)
    if m is None:
        return None
    f = _record(c, display, lines, m.message)
    f.variable, f.help, f.notes = m.variable, m.help, list(m.notes)
    f.first_divergent_token, f.evidence = m.first_divergent_token, m.evidence
    return f


# ----------------------------------------------------------------------------- fixes


def fix(path: Path, text: str, display: str, findings: Sequence[Finding]):
    """Apply the safe fixes for ``findings`` (already filtered and suppressed by the run).

    Returns (new_text, fixed findings); new_text is ``text`` when nothing applied.
    """
    from promptlint.pysource import fixes

    wanted = {(f.code, f.line, f.column) for f in findings if f.code in FIXABLE}
    if not wanted:
        return text, []
    candidates, error = analyze(path, text, display)
    if error is not None:
        return text, []
    lines = text.splitlines()
    targets = []
    for c in candidates:
        if not c.fix:
            continue
        n = c.node
        line, col = n.lineno, _char_col(lines, n.lineno, n.col_offset)
        if (c.code, line, col) in wanted:
            end_col = _char_col(lines, n.end_lineno, n.end_col_offset)
            targets.append(fixes.Target(c.fix, line, col - 1, n.end_lineno, end_col - 1, c.code))
    if not targets:
        return text, []
    new_text, applied = fixes.apply(text, targets)
    done = {(t.code, t.line, t.column + 1) for t in applied}
    return new_text, [f for f in findings if (f.code, f.line, f.column) in done]
