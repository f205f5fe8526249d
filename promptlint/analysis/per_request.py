"""A template run's eligible blocks per request (``check --baseline``; the definition is in
``promptlint.base.measurements``): the base scenario against the next request, in which every
per-request and volatile input has its second value."""

from __future__ import annotations

from typing import Optional

from promptlint.arithmetic.compare import shared_prefix
from promptlint.base.measurements import Measurement


def next_request(run) -> dict:
    """The overrides that make the base scenario's next request."""
    return {v.name: v.variant_value() for v in run.scenario.variables.values() if v.kind in ("per-request", "volatile")}


def measure(run, scenario: str = "base", template: Optional[str] = None) -> Measurement:
    """Render and tokenize the two requests (RenderError propagates: the caller records it)."""
    base = run.base()  # first: a chat run adds the clock, a volatile input, when the template reads it
    second = run.sample(**next_request(run))
    shared, prompt_len = shared_prefix(base.ids, second.ids), len(second.ids)
    block = run.profile.block_size
    return Measurement(
        path=run.display_path, scenario=scenario, template=template, prompt_tokens=prompt_len, shared_tokens=shared,
        block_size=block, eligible_blocks=run.profile.eligible(shared, prompt_len) // block,
    )


def failed(path: str, code: str, message: str, block_size: int, scenario: str = "base", template: Optional[str] = None) -> Measurement:
    return Measurement(path=path, scenario=scenario, template=template, block_size=block_size, error=f"{code} {message}")
