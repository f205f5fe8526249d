"""Each request of a conversation against the one before it: tokens, reuse, the first broken
field, findings and cost (the figures are documented in docs/conversations.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from promptlint.arithmetic import compare
from promptlint.operators.captured import InputError, Settings
from promptlint.conversation import fields, reuse, shapes
from promptlint.conversation.capture import Request
from promptlint.conversation.render import Rendered, holds_entry, render
from promptlint.base.records import Arithmetic, DivergentToken, Finding

# family -> rule code (the existing rules these breaks are instances of); the rest are M204's
CODES = {"tools-reordered": "M202", "tool-rekeyed": "M201", "under-minimum": "M703", "over-cap": "M704"}


@dataclass
class Row:
    request: Request
    prompt_tokens: int
    shared_tokens: int = 0  # with the previous request plus its reply
    ideal_shared_tokens: int = 0
    reused_tokens: int = 0  # under the provider's rule
    ideal_reused_tokens: int = 0
    written_tokens: int = 0  # explicit caching: tokens written at this request's breakpoints
    broke: Optional[fields.Break] = None
    expired: Optional[Dict[str, Any]] = None  # sent after the cache's lifetime: the miss is expiry


@dataclass
class Conversation:
    name: str
    provider: str
    model: Optional[str]
    rows: List[Row] = field(default_factory=list)
    findings: List[Finding] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    # explicit caching from a capture without cache markers (OTLP): why no reuse figure is given
    reuse_unknown: Optional[str] = None
    # the first request's render: the next conversation's first request is encoded against it
    # (conversations of one application open alike: the same system prompt and tools)
    opening: Optional[Rendered] = field(default=None, repr=False, compare=False)

    @property
    def lost_tokens(self) -> int:
        return sum(max(0, r.ideal_reused_tokens - r.reused_tokens) for r in self.rows)


def provider_of(kind: str, hint: Optional[str], wanted: str) -> str:
    if wanted != "auto":
        return wanted
    if hint in reuse.PROVIDERS:
        return hint
    return {"anthropic": "anthropic", "bedrock": "bedrock", "gemini": "gemini"}.get(kind, "openai")


def analyse(name: str, requests: List[Request], settings: Settings, tok, tables: Dict[str, Any],
            wanted: str = "auto", block_size: Optional[int] = None, opening: Optional[Rendered] = None) -> Conversation:
    """``opening``: another conversation's first render, which this one's first request is
    encoded against (only the window where their texts differ is tokenized: the same ids)."""
    first = shapes.of(requests[0])
    provider = provider_of(first.kind, requests[0].provider, wanted)
    rule = reuse.rule_for(provider, first.model, tables["minimums"], tables["rules"], block_size)
    conv = Conversation(name, provider, first.model)
    if rule.explicit and not all(r.cache_markers for r in requests):
        conv.reuse_unknown = "the capture carries no cache_control, so the breakpoints sent and what they read are not known"
    entries: List[tuple] = []  # (block, tokens, chars, text of the request that wrote it)
    prev: Optional[Tuple[Request, shapes.Shape, Rendered, Rendered]] = None
    for req in requests:
        cur_shape = shapes.of(req)
        try:
            cur = render(req.body, cur_shape.kind, settings, tok, prev[2] if prev is not None else conv.opening or opening,
                         shapes.wire(cur_shape) if cur_shape.kind == "chat" else None)
        except InputError as e:
            conv.errors.append(f"{req.path}: {req.where}: {e}")
            continue
        row = Row(req, len(cur.ids))
        _breakpoint_findings(conv, req, cur, rule)
        if prev is not None:
            row.expired = _expiry(prev[0], req, rule, tables["rules"])
            if row.expired is not None:
                entries.clear()  # everything cached before has lived out its lifetime
            _compare(conv, row, prev, cur_shape, cur, rule, entries, settings, tok)
        if rule.explicit:
            written = [(b, t, c, cur.text) for b, t, c in cur.breakpoints if t >= rule.minimum]
            row.written_tokens = max((w[1] for w in written), default=0)
            entries.extend(written)
        conv.rows.append(row)
        if conv.opening is None:
            conv.opening = cur
        prev = (req, cur_shape, cur, _Lazy(req, cur_shape, cur, settings, tok))
        req.shape = None  # held here for the next request only: a large capture keeps no shape per request
    return conv


class _Lazy:
    """The previous request with its reply, rendered only when a figure needs it (a hosted API
    caches prompts, so a clean turn is measured against the previous prompt alone)."""

    def __init__(self, *args) -> None:
        self.args, self.value = args, None

    def __call__(self) -> Rendered:
        if self.value is None:
            self.value = _with_reply(*self.args)
        return self.value


def _with_reply(req: Request, s: shapes.Shape, cur: Rendered, settings, tok) -> Rendered:
    """The previous request with its reply appended: what the next request should start with."""
    added = shapes.reply_messages(req.reply, s.kind)
    if not added:
        return cur
    body = dict(req.body)
    body[s.message_key] = list(s.messages) + added
    try:
        return render(body, s.kind, settings, tok, cur)
    except InputError:
        return cur


def _compare(conv, row, prev, cur_shape, cur, rule, entries, settings, tok) -> None:
    preq, pshape, prendered, lazy = prev
    reply = shapes.reply_messages(preq.reply, pshape.kind)
    broke = fields.first_break(pshape, reply, cur_shape)
    hosted = rule.provider not in reuse.ENGINES
    pext = prendered if hosted and broke is None else lazy()
    shared = compare.shared_prefix(pext.ids, cur.ids)
    if broke is not None and broke.family == "model-changed":
        shared = 0  # a cache belongs to one model
    ideal, ideal_text = shared, cur.text
    if broke is not None:
        should = _ideal(preq, pshape, reply, cur_shape, settings, tok, pext)
        ideal, ideal_text = compare.shared_prefix(pext.ids, should.ids), should.text
    row.shared_tokens, row.ideal_shared_tokens = shared, max(ideal, shared)
    cap = (lambda s: min(s, len(prendered.ids))) if hosted else (lambda s: s)
    if row.expired is not None:
        return  # nothing is reused after the lifetime, hazard or not: no tokens are lost to a break
    other_model = broke is not None and broke.family == "model-changed"
    held = (lambda e: not other_model and holds_entry(cur.text, e[2], e[3])) if rule.explicit else None
    row.reused_tokens = reuse.reused(rule, cap(shared), len(cur.ids), entries, cur.breakpoints, held)
    held_ideal = (lambda e: holds_entry(ideal_text, e[2], e[3])) if rule.explicit else None
    row.ideal_reused_tokens = max(row.reused_tokens, reuse.reused(rule, cap(row.ideal_shared_tokens), len(cur.ids),
                                                                  entries, cur.breakpoints, held_ideal))
    if broke is None and rule.explicit and entries:
        broke = _breakpoint_loss(row, rule, entries, cur, cap(shared), held)
    if broke is None or (row.shared_tokens >= row.ideal_shared_tokens and broke.family not in (
            "model-changed", "cache-control-dropped", "breakpoint-beyond-lookback")):
        return
    row.broke = broke
    conv.findings.append(_finding(conv, row, broke, rule, pext, cur, tok))


def _expiry(preq: Request, req: Request, rule, rules: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """When both times are known and the gap exceeds what the previous request cached lives
    (``reuse.lifetime``): the gap, the lifetime and how it was decided."""
    if preq.time is None or req.time is None:
        return None
    life = reuse.lifetime(rule.provider, preq.body, rules)
    gap = req.time - preq.time
    if life is None or not gap > life[0]:  # also false for NaN
        return None
    return {"request": req.index, "where": req.where, "gap_seconds": round(gap, 3),
            "lifetime_seconds": life[0], "lifetime": life[1]}


def _ideal(preq, pshape, reply, cur_shape, settings, tok, pext) -> Rendered:
    """The request the client should have sent: the previous one, its reply, then this one's new messages."""
    history = list(pshape.messages) + list(reply)
    tail = cur_shape.messages[len(history):] if len(cur_shape.messages) > len(history) else cur_shape.messages[-1:]
    body = dict(preq.body)
    body[pshape.message_key] = history + list(tail)
    try:
        return render(body, pshape.kind, settings, tok, pext)
    except InputError:
        return pext


def _breakpoint_loss(row: Row, rule, entries, cur: Rendered, shared: int, held) -> Optional[fields.Break]:
    """Explicit caching: the prefix is intact but this request's breakpoints read less than an
    earlier entry it shares (none left, or all more than the lookback after it)."""
    best = max((e[1] for e in entries if rule.minimum <= e[1] and (e[1] <= shared or held(e))), default=0)
    if best <= row.reused_tokens:
        return None
    row.ideal_reused_tokens = best
    if not cur.breakpoints:
        return fields.Break("cache-control-dropped", "cache_control", "no cache breakpoint left, so nothing cached is read")
    return fields.Break("breakpoint-beyond-lookback", "cache_control",
                        f"every breakpoint is more than {rule.lookback_blocks} blocks after the cached entry")


def _breakpoint_findings(conv: Conversation, req: Request, cur: Rendered, rule) -> None:
    if not rule.explicit or not cur.breakpoints:
        return
    from promptlint.analysis.kernel import finding

    if rule.max_breakpoints and len(cur.breakpoints) > rule.max_breakpoints:
        conv.findings.append(finding("M704", req.path, f"{req.where}: {len(cur.breakpoints)} cache breakpoints; "
                                     f"{rule.provider} accepts at most {rule.max_breakpoints} and refuses the request",
                                     req.line, variable="cache_control"))
    low = [(b, t) for b, t, _ in cur.breakpoints if t < rule.minimum]
    if low:
        b, t = low[0]
        conv.findings.append(finding("M703", req.path, f"{req.where}: the cache breakpoint on block {b} closes a "
                                     f"prefix of {t:,} tokens, under {rule.model or rule.provider}'s minimum of "
                                     f"{rule.minimum:,}: it is never cached", req.line, variable="cache_control"))


def _finding(conv, row: Row, broke: fields.Break, rule, pext: Rendered, cur: Rendered, tok) -> Finding:
    from promptlint.analysis.kernel import finding

    code = "M101" if broke.family == "system-changed" and broke.volatile else CODES.get(broke.family, "M204")
    req = row.request
    lost = max(0, row.ideal_reused_tokens - row.reused_tokens)
    change = f": {broke.before!r} -> {broke.after!r}" if broke.before or broke.after else ""
    turn = len(conv.rows) + 1
    message = (f"{req.where}, turn {turn} of its conversation: {broke.detail}{change}; first divergent token "
               f"{row.shared_tokens:,} of {row.prompt_tokens:,} (ideal {row.ideal_shared_tokens:,}); ")
    inc = max(rule.increment, 1)
    arithmetic: Optional[Arithmetic] = None
    if conv.reuse_unknown:  # no figure rather than a wrong 0: the finding's token fields are left out
        message += f"{rule.provider}'s reuse is unknown: {conv.reuse_unknown}"
    else:
        message += (f"{rule.provider} reuses {row.reused_tokens:,} tokens instead of {row.ideal_reused_tokens:,} "
                    f"({lost:,} lost)")
        arithmetic = Arithmetic(row.prompt_tokens, row.shared_tokens, row.ideal_shared_tokens, inc,
                                row.reused_tokens // inc, row.ideal_reused_tokens // inc,
                                max(0, row.ideal_reused_tokens // inc - row.reused_tokens // inc), lost)
    return finding(code, req.path, message, req.line, variable=broke.field,
                   cause=broke.family if code == "M204" else None, arithmetic=arithmetic,
                   first_divergent_token=_divergent(pext, cur, row.shared_tokens, tok),
                   notes=[f"test: {req.test_id}"] if req.test_id else [])


def _divergent(base: Rendered, cur: Rendered, s: int, tok) -> DivergentToken:
    def piece(ids, i):
        return tok.token_text(ids[i]) if i < len(ids) else ""

    offset = base.offsets[s][0] if s < len(base.offsets) else len(base.text)
    return DivergentToken(s, base.ids[s] if s < len(base.ids) else None, cur.ids[s] if s < len(cur.ids) else None,
                          piece(base.ids, s), piece(cur.ids, s), offset)
