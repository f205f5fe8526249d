"""Cache breakpoints of hosted APIs: a volatile value before one (M106), one that closes a prefix
below the provider's minimum cacheable length (M703), more than the provider accepts (M704).

Anthropic and Bedrock cache only at breakpoints, and a breakpoint reads or writes the whole
prefix up to it: one changed token before it and it never matches again. Minimums come from
the dated table shared with `promptlint diff` (``data/hosted-cache-minimums.json``, overridable
with ``cache-minimums`` in the configuration); what a minimum counts (the whole prefix, or the
tokens since the previous checkpoint) and the per-request limits are rule data
(``rules/M703.toml``, ``rules/M704.toml``). Token figures use the pinned tokenizer on the
request's text in cache order (pysource.layout): the providers' own tokenizers are not public,
so they are approximate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from promptlint.base import registry
from promptlint.pysource.flow import Hole
from promptlint.pysource.layout import Breakpoint, Layout

CODES = registry.implements(__name__, "M106", "M703", "M704")
EXPLICIT_ONLY = ("anthropic", "bedrock")  # providers that cache nothing after the last breakpoint
_REGIONS = ("us.", "eu.", "apac.", "global.", "us-gov.", "jp.", "au.", "ca.")


@dataclass
class Measured:
    """What a measured candidate becomes: the finding's message and details."""

    message: str
    variable: Optional[str] = None
    help: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    first_divergent_token: Any = None  # records.DivergentToken
    evidence: Optional[Dict[str, Any]] = None


@dataclass
class Minimum:
    tokens: int
    model: str  # the table entry used, or a description of the fallback
    as_of: str
    exact: bool  # False: the model is unknown, the smallest minimum of the provider is used


def _data(code: str) -> Dict[str, Any]:
    from promptlint.base import registry

    return registry.get(code).data


def table_provider(request: Layout, model: Optional[str], marker: str) -> Optional[str]:
    """Which block of the minimums table applies to a breakpoint of this request."""
    if request.provider in ("anthropic", "bedrock"):
        return request.provider
    if marker == "prompt_cache_breakpoint" or request.provider == "openai-responses":
        return "openai"
    low = (model or "").lower()  # LiteLLM and gateways: the model name says where it goes
    if "bedrock" in low or low.startswith(("anthropic.",) + tuple(r + "anthropic." for r in _REGIONS)):
        return "bedrock"
    if "claude" in low or low.startswith("anthropic/"):
        return "anthropic"
    return None


def explicit_only(request: Layout, model: Optional[str], marker: str) -> bool:
    """The provider caches nothing after the last breakpoint. A ``cache_control`` block marker in a
    request whose model is not named at the call (a LangChain ``ChatAnthropic``/``ChatBedrock``
    ``invoke``, a gateway) is Anthropic's marker: only the providers that honour it read it, and they
    cache explicitly only, so a value after the last one is not shared either way."""
    provider = table_provider(request, model, marker)
    if provider is None and model is None and marker == "cache_control" and any(
            not bp.automatic for _, bp in request.breakpoints):
        return True
    return provider in EXPLICIT_ONLY


def minimum(provider: str, model: Optional[str], table: Dict[str, dict]) -> Optional[Minimum]:
    """The minimum cacheable length for ``model`` (the smallest of the provider when unknown)."""
    from promptlint.arithmetic.compare import _lookup_model

    blocks = [provider]
    if provider == "bedrock":
        blocks = ["bedrock", "anthropic"]  # Claude on Bedrock: the Anthropic model table
        if model:
            m = model.rsplit("/", 1)[-1]  # an ARN or a LiteLLM "bedrock/..." name
            for r in _REGIONS:
                if m.startswith(r):
                    m = m[len(r):]
            if m.startswith("anthropic."):
                blocks, model = ["anthropic"], m[len("anthropic."):]
            else:
                blocks, model = ["bedrock"], m
    elif model and "/" in model:
        model = model.rsplit("/", 1)[-1]  # anthropic/claude-... (LiteLLM)
    candidates = []
    for name in blocks:
        block = table.get(name) or {}
        models = block.get("models") or {}
        key = _lookup_model(models, model) if model else None
        if key is None and "*" in models:
            key = "*"
        if key is not None:
            return Minimum(int(models[key]), key if key != "*" else (model or "all models"), str(block.get("as_of", "")), True)
        candidates += [(int(v), k, str(block.get("as_of", ""))) for k, v in models.items()]
    if not candidates:
        return None
    tokens, key, as_of = min(candidates)
    return Minimum(tokens, f"the smallest in the table ({key})", as_of, False)


def counts_since_previous(provider: str) -> bool:
    """Bedrock counts a checkpoint's minimum from the previous checkpoint; Anthropic the whole prefix."""
    return _data("M703").get("minimum-counts", {}).get(provider, "prefix") == "since-previous"


_TABLES: Dict[Tuple, Dict[str, dict]] = {}


def tables(ctx) -> Dict[str, dict]:
    """The minimums table with the configured override (``cache-minimums``) merged in."""
    from promptlint.arithmetic.compare import CacheTableError, load_cache_minimums

    path = getattr(ctx.settings, "cache_minimums", None)
    key: Tuple = (path,)
    if path:
        ctx.depend(Path(path))  # the result cache is invalidated when the file changes
        try:
            st = Path(path).stat()
            key = (path, st.st_size, st.st_mtime_ns)
        except OSError:
            pass
    if key not in _TABLES:
        try:
            _TABLES[key] = load_cache_minimums(path)
        except CacheTableError:  # changed since the configuration was read: the shipped table
            ctx.notices.append(f"{path}: the cache-minimums file is no longer readable; the shipped table is used")
            _TABLES[key] = load_cache_minimums()
    return _TABLES[key]


# ----------------------------------------------------------------------------- measuring


class _Lengths:
    """Token counts of the prefix each breakpoint closes (base render)."""

    def __init__(self, request: Layout, encode):
        from promptlint.pysource.holes import prompt_text

        self.texts = [prompt_text(request.parts(i)) for i, _ in request.breakpoints]
        self.tokens = [len(encode(t).ids) for t in self.texts]

    def counted(self, n: int, since_previous: bool) -> int:
        return self.tokens[n] - (self.tokens[n - 1] if since_previous and n else 0)


def unknown_prefix(request: Layout, upto: int) -> bool:
    """Does the prefix up to block ``upto`` hold text promptlint could not evaluate (length unknown)?"""
    if any(b.val.parts is None for b in request.blocks[: upto + 1]):
        return True
    return any(isinstance(p, Hole) and p.kind != "volatile" for p in request.parts(upto))


def _bp_label(bp: Breakpoint) -> str:
    if bp.automatic:
        return f"the top-level `cache_control` (it closes `{bp.where}`, the last block)"
    return f"the `{bp.marker}` on `{bp.where}`" if bp.marker != "cachePoint" else f"the `cachePoint` after `{bp.where}`"


def _line(bp: Breakpoint) -> str:
    n = getattr(bp.node, "lineno", None)
    return f" (line {n})" if n else ""


def _minimum_note(provider: str, model: Optional[str], m: Minimum) -> str:
    what = f"`{model}`" if model else "the model (not a literal)"
    how = "" if m.exact else f"; {what} is not in it, so {m.model} is used"
    return f"{provider} minimum cacheable length: {m.tokens:,} tokens ({m.model if m.exact else 'any model'}, table {m.as_of}{how})"


def volatile_measure(request: Layout, hole: Hole, after: List[Tuple[int, Breakpoint]], model: Optional[str], sink: str):
    """M106: the first breakpoint after ``hole`` that would cache something, and what it loses."""

    def measure(tok, encode, ctx) -> Optional[Measured]:
        from promptlint.arithmetic import figures
        from promptlint.checks.volatile_before_shared_prefix import cadence as changes
        from promptlint.arithmetic.compare import shared_prefix
        from promptlint.pysource.holes import prompt_text

        lengths = _Lengths(request, encode)
        index = {id(bp): n for n, (_, bp) in enumerate(request.breakpoints)}
        table = tables(ctx)
        hits = []
        for i, bp in after:
            n = index[id(bp)]
            provider = table_provider(request, model, bp.marker)
            m = minimum(provider, model, table) if provider else None
            since = bool(provider) and counts_since_previous(provider)
            if m is not None and not unknown_prefix(request, i) and lengths.counted(n, since) < m.tokens:
                continue  # never cached anyway: M703 reports it
            hits.append((i, bp, lengths.tokens[n], provider, m))
        if not hits:
            return None
        i, bp, cached, provider, m = hits[0]
        base_text = prompt_text(request.parts(i))
        variant_text = prompt_text(request.parts(i), changed=hole)
        base, variant = encode(base_text), encode(variant_text)
        s = shared_prefix(base.ids, variant.ids)
        if s >= len(base.ids) and s >= len(variant.ids):
            return None  # the two values render the same tokens
        token = figures.divergent_token(tok, base.ids, variant.ids, s, figures.token_offset(base.offsets, base_text, s))
        label = hole.label
        cadence = changes(hole.sub)
        out = Measured(
            f"`{label}` {cadence} and precedes {_bp_label(bp)}{_line(bp)}: the {cached:,} tokens that breakpoint "
            "would cache change with it, so they are written to the cache again instead of read",
            variable=label,
            help=f"move `{label}` after the breakpoint (into the latest user message)"
            + (", or make it coarser (date, not time)" if hole.sub in ("timestamp", "time", "number") else ""),
        )
        out.first_divergent_token = token
        out.notes.append(f"first divergent token #{s:,}: {token.base_text!r} vs {token.variant_text!r}, "
                         f"in a {cached:,}-token prefix up to the breakpoint")
        if len(hits) > 1:
            more = ", ".join(f"`{b.where}` ({n:,} tokens)" for _, b, n, _, _ in hits[1:])
            out.notes.append(f"it also defeats the later breakpoint{'s' if len(hits) > 2 else ''} on {more}")
        if m is not None:
            out.notes.append(_minimum_note(provider, model, m))
        if unknown_prefix(request, i):
            out.notes.append("the prefix holds values promptlint could not evaluate, rendered as `sample ...`: "
                             "the token count is a lower bound")
        out.notes.append(sink)
        out.notes.append("measured with the pinned tokenizer on the request text in cache order (tools, system, "
                         "messages, joined by blank lines); the provider's own count differs")
        out.evidence = figures.evidence(base_text, variant_text, False, breakpoint=bp.where, breakpoint_tokens=cached)
        return out

    return measure


def minimum_measure(request: Layout, n: int, model: Optional[str], sink: str):
    """M703: breakpoint ``n`` closes fewer tokens than the provider's minimum (its prefix is all literal)."""
    i, bp = request.breakpoints[n]

    def measure(tok, encode, ctx) -> Optional[Measured]:
        provider = table_provider(request, model, bp.marker)
        if provider is None:
            return None
        m = minimum(provider, model, tables(ctx))
        if m is None:
            return None
        lengths = _Lengths(request, encode)
        since = counts_since_previous(provider)
        counted = lengths.counted(n, since)
        if counted >= m.tokens:
            return None
        whose = f"`{model}`" if m.exact and model else f"any {provider} model"
        if since and n:
            what = (f"adds {counted:,} tokens to the checkpoint before it ({lengths.tokens[n - 1]:,} tokens), below the "
                    f"{m.tokens:,} tokens {whose} needs per checkpoint")
        else:
            what = f"closes a {counted:,}-token prefix, below the {m.tokens:,}-token minimum of {whose}"
        out = Measured(
            f"{_bp_label(bp)[0].upper()}{_bp_label(bp)[1:]} {what}: it is never cached (the API returns no error)",
            help="remove the breakpoint, or place it after enough shared material to reach the minimum",
        )
        out.notes.append(_minimum_note(provider, model, m))
        out.notes.append(sink)
        out.notes.append("measured with the pinned tokenizer on the request text in cache order (tools, system, "
                         "messages, joined by blank lines); the provider's own count differs")
        out.evidence = {"breakpoint": bp.where, "breakpoint_tokens": lengths.tokens[n], "counted_tokens": counted,
                        "minimum_tokens": m.tokens, "base_render": lengths.texts[n]}
        return out

    return measure


def too_many(request: Layout, model: Optional[str], where: str):
    """M704: (node, message, notes, help) when a request carries more breakpoints than its provider accepts."""
    marks = request.breakpoints
    if not marks:
        return None
    provider = table_provider(request, model, marks[0][1].marker)
    limit = _data("M704").get("max-breakpoints", {}).get(provider or "")
    if not limit or len(marks) <= limit:
        return None
    listed = ", ".join(f"`{bp.where}`" + (" (top-level)" if bp.automatic else "") for _, bp in marks)
    node = marks[limit][1].node
    return (
        node,
        f"{len(marks)} cache breakpoints in one request to {where}: {provider} accepts at most {limit} and rejects "
        f"the request (\"A maximum of {limit} blocks with cache_control may be provided\")",
        [f"breakpoints, in cache order: {listed}"],
        "keep at most four: a breakpoint caches everything before it, so one after the tools and system and one on "
        "the latest message usually suffice",
    )


Encode = Callable[[str], Any]
