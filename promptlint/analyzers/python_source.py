"""Python prompt-building code (`*.py`): prompt text and hazards that reach LLM calls.

Parse (stdlib ``ast``) -> module index and flow (promptlint.pysource.flow) -> hazards at
prompt sinks (pysource.rules) -> M101 candidates measured in tokens like templates.
A file that does not parse is one E008 finding. libcst is used only by ``fix``.
"""

from __future__ import annotations

import dataclasses
import os

from pathlib import Path
from typing import List, NamedTuple, Optional, Sequence

from promptlint.doors import bounded_io
from promptlint.arithmetic import figures
from promptlint.analysis import kernel
from promptlint.analyzers.files import Files
from promptlint.analysis.kernel import Context, file_error
from promptlint.base.records import Finding

# A directory walk lints a .py file only when it contains one of these byte strings
# (explicit paths and `templates` globs are always linted). Plain substring tests: about
# 0.3 ms per file, against 2 ms for one regular expression.
PROMPT_CODE_MARKERS = (
    b"openai", b"anthropic", b"litellm", b"vllm", b"sglang", b"langchain", b"llama_index",
    b"apply_chat_template", b"cache_salt", b"prefix_caching", b"prefix-caching", b"radix_cache",
    b"radix-cache", b"prompt_logprobs", b'"role"', b"'role'", b"genai", b"bedrock",
)
FILES = Files(suffixes=(".py", ".pyi"), markers=PROMPT_CODE_MARKERS, sniff_bytes=2_000_000)
FIXABLE = {"M201", "M202", "M203"}


def handles(path: Path) -> bool:
    return FILES.matches_name(path)


def looks_like_prompt_code(path: Path) -> bool:
    """For directory walks: does this Python file talk to an LLM or build chat messages?"""
    return FILES.walk_takes(path)


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
        column = max(1, e.offset) if e.offset else 1
        return Parsed(None, file_error(display, "E008", f"Python syntax error: {msg}; promptlint cannot analyse this file",
                                       e.lineno or 1, column))
    except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, absurd nesting
        return Parsed(None, file_error(display, "E008", f"Python source cannot be parsed: {type(e).__name__}: {e}"))


def scan(path: Path, text: str, display: str, ctx: Optional[Context] = None):
    """(candidates, error) without touching the tokenizer. With ``ctx``, values are followed into the
    linted files this module imports (pysource.project), each one read a dependency of the result."""
    real = None
    if ctx is not None:  # a module the analyses of its importers parsed already (pysource.project): the same tree
        from promptlint.base.paths import safe_resolve
        from promptlint.pysource.project import parsed_text

        real = str(safe_resolve(path))
        hit = parsed_text(real, text)
        if hit is not None:
            return _hazard_scan(path, text, display, hit[0], ctx, hit[1]).run(), None
    parsed = parse(path, text, display)
    if parsed.error is not None:
        return [], parsed.error
    index = None
    if ctx is not None and ctx.resident:  # kept for the next request (its importers', its own re-check)
        from promptlint.pysource.project import keep_linted

        index = keep_linted(real, text, parsed.tree)
    return _hazard_scan(path, text, display, parsed.tree, ctx, index).run(), None


def _hazard_scan(path: Path, text: str, display: str, tree, ctx: Optional[Context], index=None):
    from promptlint.pysource.project import Project
    from promptlint.pysource.rules import HazardScan
    from promptlint.scenarios.names import name_patterns

    kind_of = name_patterns().kind_of
    project = Project(ctx.settings.root, path, kind_of, ctx.depend, ctx.display, ctx.buffers,
                      ctx.module_reads) if ctx is not None else None
    return HazardScan(text, tree, kind_of, project, display, index)


def _split_bom(text: str):
    """(BOM, rest): Python reads a UTF-8 BOM as an encoding mark (``ast.parse`` of a str does not),
    and editors count columns after it, so the analysis sees the text without it."""
    return ("\ufeff", text[1:]) if text.startswith("\ufeff") else ("", text)


def lint_file(path: Path, text: str, ctx: Context) -> List[Finding]:
    display = ctx.display(path)
    text = _split_bom(text)[1]
    candidates, error = scan(path, text, display, ctx)
    if error is not None:
        return [error]
    return findings_of(candidates, ctx, display, text.splitlines())


def findings_of(candidates, ctx: Context, display: str, lines: Sequence[str]) -> List[Finding]:
    """Candidates (pysource.rules) -> findings: M101 and breakpoint figures measured in tokens.
    Shared by every front end that produces the request model (the TS/JS analyzer too)."""
    findings: List[Finding] = []
    encodings: dict = {}  # text -> Encoding: holes of one prompt share its base render
    for c in candidates:
        if not ctx.is_enabled(c.code):
            continue
        if c.measure is not None:  # M106/M703: figures at a cache breakpoint (pysource.breakpoints)
            f = _measured_at_breakpoint(c, ctx, display, lines, encodings)
            if f is not None:
                findings.append(_relocate(f, c))
            continue
        if c.code == "M101":
            f = _measured(c, ctx, display, lines, encodings)
            if f is not None:
                findings.append(_relocate(f, c))
            continue
        fixable = ["fixable with `promptlint check --fix` (safe: changes ordering only)"] if c.fix else []
        if c.order is not None:  # M202/M203: the stand-in items in two orders, measured
            f = _measured_order(c, ctx, display, lines, encodings, fixable)
            if f is not None:
                findings.append(_relocate(f, c))
            continue
        findings.append(_relocate(_record(c, display, lines, c.message, notes=[*c.notes, *fixable]), c))
    findings.sort(key=lambda f: f.sort_key)
    return findings


def _relocate(f: Finding, c) -> Finding:
    """A finding made in an imported module names the sending call with its file (``at client.py:12``)."""
    message, notes = f.message, list(f.notes)
    if c.sent_at is not None:  # the "sent by" note below says where the request goes
        local, named = c.sent_at
        message = named.join(message.split(local))
        notes = [n for n in notes if n != c.sink]
    notes += [n for n in c.notes if n not in notes]
    sent_by = f.sent_by
    if c.sender is not None:  # the sending call, for reporters that link it (SARIF relatedLocations)
        from promptlint.base.records import SentBy

        sent_by = (SentBy(*c.sender),)
    return dataclasses.replace(f, message=message, notes=tuple(notes), sent_by=sent_by)


def measure(path: Path, text: str, ctx: Context) -> list:
    """Each prompt the module sends, its eligible blocks per request (``check --baseline``;
    pysource.per_request); a file that does not parse is one row with its E008."""
    from promptlint.analysis import per_request as rows
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.pysource import breakpoints, per_request
    display = ctx.display(path)
    profile = engine_profile(ctx.settings.engine, ctx.settings.block_size)
    text = _split_bom(text)[1]
    parsed = parse(path, text, display)
    if parsed.error is not None:
        return [rows.failed(display, parsed.error.code, parsed.error.message, profile.block_size)]
    scan = _hazard_scan(path, text, display, parsed.tree, ctx)
    scan.run()
    if not scan.sent:
        return []
    encode = _encoder(ctx.tokenizer(), {})
    table = breakpoints.tables(ctx)
    return [per_request.measure(s, name, display, encode, profile, table)
            for s, name in zip(scan.sent, per_request.names(scan.sent, scan.index))]


# ----------------------------------------------------------------------------- records


def _char_col(lines: Sequence[str], line: int, byte_col: int) -> int:
    """ast columns are UTF-8 byte offsets; findings use 1-based characters."""
    if 1 <= line <= len(lines):
        return len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1
    return byte_col + 1


def _record(c, display: str, lines: Sequence[str], message: str, **complete) -> Finding:
    """The candidate's finding, complete, at its node: in the linted file, or in the imported module
    that made the hazard (``c.module``). ``complete`` (``kernel.finding``'s keywords) overrides the
    candidate's own."""
    if c.module is not None:
        display, lines = c.module.display, c.module.source.splitlines()
    n = c.node
    line = getattr(n, "lineno", 1)
    end_line = getattr(n, "end_lineno", line) or line
    col = _char_col(lines, line, getattr(n, "col_offset", 0))
    end_col = _char_col(lines, end_line, getattr(n, "end_col_offset", 0) or 0)
    return kernel.finding(c.code, display, message, line, col, end_line, end_col,
                          **{"variable": c.variable, "help": c.help, "notes": c.notes, **complete})


def _measured(c, ctx: Context, display: str, lines: Sequence[str], encodings: dict) -> Optional[Finding]:
    """An M101 candidate measured as templates are: the prompt text around the volatile value
    rendered twice, tokenized, compared; figures and wording from the same functions."""
    from promptlint.checks import volatile_before_shared_prefix as m101
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.pysource.holes import prompt_text, unresolved_after

    tok = ctx.tokenizer()
    encode = _encoder(tok, encodings)

    profile = engine_profile(ctx.settings.engine, ctx.settings.block_size)
    base_text = prompt_text(c.prompt)
    variant_text = prompt_text(c.prompt, changed=c.hole)
    base = encode(base_text)
    variant = encode(variant_text, base_text)
    per_request_text = prompt_text(c.prompt, per_request_variant=True)
    per_request = encode(per_request_text, base_text).ids if per_request_text != base_text else None
    cmp = figures.measure(base.ids, variant.ids, figures.ideal_shared(base.ids, per_request, len(variant.ids)), profile.block_size)
    label, sub = c.hole.label, c.hole.sub
    if not m101.precedes_shared(base.ids, variant.ids, cmp):
        unknown = unresolved_after(c.prompt, c.hole)
        if unknown is None or c.measured_only:
            return None
        return _record(c, display, lines, m101.not_measured_message(label, sub, unknown), variable=label,
                       help=m101.help_text(label, sub, suggest_coarser=False), notes=[*c.notes, c.sink])
    token = figures.divergent_token(tok, base.ids, variant.ids, cmp.shared, figures.token_offset(base.offsets, base_text, cmp.shared))
    return _record(
        c, display, lines, m101.message(label, sub, cmp), variable=label, help=m101.help_text(label, sub),
        notes=[
            m101.eligible_note(label, cmp, profile.name),
            c.sink,
            "measured on the prompt text (message contents joined by blank lines), without the chat template's markers",
        ],
        **figures.of(token, cmp, figures.evidence(base_text, variant_text, False)),
    )


def _measured_order(c, ctx: Context, display: str, lines: Sequence[str], encodings: dict, fixable) -> Optional[Finding]:
    """An M202/M203 candidate measured in tokens (pysource.orders): its request rendered with stand-in items
    in order and reversed, against the render with only the per-request inputs changed. None when the
    collection comes after the first per-request input (the order moves nothing that could be shared)."""
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.pysource import orders
    from promptlint.pysource.holes import prompt_text

    tok = ctx.tokenizer()
    encode = _encoder(tok, encodings)
    profile = engine_profile(ctx.settings.engine, ctx.settings.block_size)
    base_parts, variant_parts = c.order
    base_text, variant_text = prompt_text(base_parts), prompt_text(variant_parts)
    base = encode(base_text)
    variant = encode(variant_text, base_text)
    per_request_text = prompt_text(base_parts, per_request_variant=True)
    per_request = encode(per_request_text, base_text).ids if per_request_text != base_text else None
    cmp = figures.measure(base.ids, variant.ids, figures.ideal_shared(base.ids, per_request, len(variant.ids)), profile.block_size)
    if cmp.shared >= cmp.ideal_shared:
        return None
    what = "tool definitions" if c.code == "M202" else "items"
    message = (f"{c.message}: {cmp.lost_blocks:,} of {cmp.ideal_eligible_blocks:,} eligible KV blocks lost when the order "
               f"changes (measured with {orders.STAND_INS} stand-in {what} reversed)")
    token = figures.divergent_token(tok, base.ids, variant.ids, cmp.shared, figures.token_offset(base.offsets, base_text, cmp.shared))
    notes = [f"{profile.name}, block {cmp.block_size}: eligible {figures.blocks(cmp.eligible_blocks)} with the other order, "
             f"{cmp.ideal_eligible_blocks:,} with a stable one", *c.notes,
             f"measured with {orders.STAND_INS} made-up {what} (their real text is not known here): real ones are "
             "usually longer, and lose more", *fixable]
    return _record(c, display, lines, message, notes=notes,
                   variant_description=f"{orders.STAND_INS} stand-in {what} reversed",
                   **figures.of(token, cmp, figures.evidence(base_text, variant_text, False)))


def _encoder(tok, encodings: dict):
    """Encode without special tokens, once per text (holes of one prompt share its base render)."""

    def encode(text: str, against: Optional[str] = None):
        """``against``: an already encoded text this one is a variant of (tokenized in a window)."""
        if text not in encodings:
            if against is not None and against in encodings:
                from promptlint.tokenization import window_encode

                encodings[text] = window_encode.encode_variant(tok, against, encodings[against], text, False)
            else:
                encodings[text] = tok.encode(text, add_special_tokens=False)
        return encodings[text]

    return encode


def _measured_at_breakpoint(c, ctx: Context, display: str, lines: Sequence[str], encodings: dict) -> Optional[Finding]:
    tok = ctx.tokenizer()
    encode = _encoder(tok, encodings)

    m = c.measure(tok, encode, ctx)
    if m is None:
        return None
    return _record(c, display, lines, m.message, variable=m.variable, help=m.help, notes=m.notes,
                   first_divergent_token=m.first_divergent_token, evidence=m.evidence)


# ----------------------------------------------------------------------------- fixes


def fix(path: Path, text: str, display: str, findings: Sequence[Finding]):
    """Apply the safe fixes for ``findings`` (already filtered and suppressed by the run).

    Returns (new_text, fixed findings); new_text is ``text`` when nothing applied.
    """
    if not any(f.code in FIXABLE for f in findings):
        return text, []
    bom, body = _split_bom(text)
    candidates, error = scan(path, body, display)
    if error is not None:
        return text, []
    return _apply(text, findings, candidates)


def fix_sent(path: Path, text: str, display: str, findings: Sequence[Finding], settings):
    """The safe fixes of ``findings`` made in this module and sent from another (``Finding.sent_by``):
    each sending module is analysed again with this module's ``text`` in place of the file, and the
    hazards it places here are fixed as the module's own are. (new_text, fixed findings); writes nothing
    and proves nothing: ``fixes/sent.py`` re-checks the senders before the text is kept."""
    from promptlint.base.paths import safe_resolve

    wanted = [f for f in findings if f.code in FIXABLE and f.sent_by]
    if not wanted:
        return text, []
    here = safe_resolve(Path(path))
    ctx = kernel.Context(settings, kernel.TokenizerProvider(kernel.tokenizer_spec(settings)), kernel.rule_filter(settings),
                         buffers={os.path.abspath(path): text})
    body = _split_bom(text)[1]
    candidates = []
    for sender in sorted({s.path for f in wanted for s in f.sent_by}):
        source = kernel.read_source(Path(sender))
        if not isinstance(source, str):
            continue
        found, error = scan(Path(sender), _split_bom(source)[1], ctx.display(Path(sender)), ctx)
        candidates += [c for c in found if error is None and c.module is not None
                       and getattr(c.module, "real_path", None) == here and c.module.source == body]
    return _apply(text, wanted, candidates)


def _apply(text: str, findings: Sequence[Finding], candidates) -> tuple:
    """``text`` with the fixes of the candidates that ``findings`` name (by code, line and column)."""
    from promptlint.pysource import fixes

    wanted = {(f.code, f.line, f.column) for f in findings if f.code in FIXABLE}
    bom, body = _split_bom(text)
    lines = body.splitlines()
    targets = []
    for c in candidates:
        if not c.fix:
            continue
        n = c.node
        line, col = n.lineno, _char_col(lines, n.lineno, n.col_offset)
        if (c.code, line, col) in wanted:
            end_col = _char_col(lines, n.end_lineno, n.end_col_offset)
            target = fixes.Target(c.fix, line, col - 1, n.end_lineno, end_col - 1, c.code)
            if target not in targets:
                targets.append(target)
    if not targets:
        return text, []
    new_text, applied = fixes.apply(body, targets)
    if not applied:
        return text, []
    done = {(t.code, t.line, t.column + 1) for t in applied}
    return bom + new_text, [f for f in findings if (f.code, f.line, f.column) in done]  # a file keeps its BOM
