"""A Python prompt's eligible blocks per request (``check --baseline``; the definition is in
``promptlint.base.measurements``): every prompt the module sends, as two consecutive requests.

The first request has the sample values of its holes, the next one every volatile value's second
value and the next user's question (``holes.prompt_text``); both are the request text in cache
order (``pysource.layout``), tokenized with the run's tokenizer. S is what they share from the
start, except for providers that cache only at breakpoints (Anthropic, Bedrock): there S is the
longest prefix closed by a breakpoint whose text is the same in both requests and that reaches
the provider's minimum (what M106 and M703 judge), 0 without one.

A prompt is named by what sends it and where, not by its line (lines move when code above them
is edited): ``client.messages.create in Agent.answer()``, ``#2`` for the second such call in the
same function, ``message in build()`` for a chat message dict.
"""

from __future__ import annotations

from typing import Dict, List, Optional

from promptlint.arithmetic.compare import shared_prefix
from promptlint.base.measurements import Measurement
from promptlint.pysource import breakpoints
from promptlint.pysource.holes import prompt_text


def names(sent, index) -> List[str]:
    """Each sent prompt's identity in the file (see the module docstring), in ``sent``'s order."""
    def qualname(scope) -> str:
        if scope is None:
            return "module level"
        owner = index.class_of.get(id(scope))
        return f"{owner + '.' if owner else ''}{getattr(scope, 'name', '?')}()"

    base = [f"{s.callee} in {qualname(s.scope)}" if s.scope is not None else f"{s.callee} at module level" for s in sent]
    order = sorted(range(len(sent)), key=lambda i: (getattr(sent[i].node, "lineno", 0), getattr(sent[i].node, "col_offset", 0)))
    seen: Dict[str, int] = {}
    out = list(base)
    for i in order:
        seen[base[i]] = seen.get(base[i], 0) + 1
        if seen[base[i]] > 1:
            out[i] = f"{base[i]} #{seen[base[i]]}"
    return out


def measure(sent, name: str, display: str, encode, profile, table) -> Measurement:
    """One prompt's Measurement; ``encode(text, against=None)`` tokenizes without special tokens,
    ``table`` is the hosted minimums table (breakpoints.tables)."""
    request = sent.request
    parts = request.parts()
    first = prompt_text(parts)
    second_text = prompt_text(parts, next_request=True)
    a = encode(first).ids
    b = encode(second_text, first).ids
    provider = _explicit_provider(request, sent.model)
    shared = shared_prefix(a, b) if provider is None else _cached_at_breakpoints(request, sent.model, provider, encode, table)
    block = profile.block_size
    return Measurement(path=display, scenario="base", template=name, prompt_tokens=len(b), shared_tokens=shared,
                       block_size=block, eligible_blocks=profile.eligible(shared, len(b)) // block)


def _explicit_provider(request, model: Optional[str]) -> Optional[str]:
    """The provider when it caches only at breakpoints, else None (automatic prefix caching)."""
    marker = request.breakpoints[0][1].marker if request.breakpoints else "cache_control"
    provider = breakpoints.table_provider(request, model, marker)
    return provider if provider in breakpoints.EXPLICIT_ONLY else None


def _cached_at_breakpoints(request, model: Optional[str], provider: str, encode, table) -> int:
    """The tokens the next request reads from the cache: the longest breakpoint prefix that is
    the same text in both requests and reaches the provider's minimum."""
    minimum = breakpoints.minimum(provider, model, table)
    since = breakpoints.counts_since_previous(provider)
    cached, previous = 0, 0
    for i, _ in sorted(request.breakpoints, key=lambda mark: mark[0]):
        text = prompt_text(request.parts(i))
        if text != prompt_text(request.parts(i), next_request=True):
            break  # every later breakpoint's prefix holds this one
        tokens = len(encode(text).ids)
        counted = tokens - (previous if since else 0)
        previous = tokens
        if minimum is None or counted >= minimum.tokens:
            cached = max(cached, tokens)
    return cached

