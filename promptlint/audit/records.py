"""The one record every input format is normalised into (prompt text never enters it)."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence


class AuditRequest:
    """One request after ingest. ``fps`` are chained chunk fingerprints (``chunk`` tokens
    each); ``ids`` are kept only for exact rows, only until the row is classified."""

    __slots__ = (
        "request_id", "arrival_ts", "instance", "tenant", "model_rev", "tokenizer_rev",
        "template_rev", "engine", "block_size", "prompt_tokens", "cached_tokens", "source",
        "chunk", "fps", "ids", "checkpoints", "flags", "ttft_s", "tmpl_raw", "tmpl_canon",
        "line", "stack_m",
    )

    def __init__(self, **kw: Any) -> None:
        for name in self.__slots__:
            setattr(self, name, kw.get(name))
        if self.flags is None:
            self.flags = {}

    @property
    def identity(self) -> bool:
        """Whether anything about the prompt's tokens is known (else: usage only)."""
        return self.source != "usage"


def flag(r: AuditRequest, name: str) -> bool:
    return bool(r.flags.get(name))


def lookup_skipped(r: AuditRequest) -> bool:
    """vLLM does not read the prefix cache for these requests (counted nowhere)."""
    return flag(r, "caching_disabled") or flag(r, "prompt_logprobs")


def block_fps(fps: Sequence[str], chunk: int, block_size: int) -> Optional[List[str]]:
    """Fingerprints at block resolution (every B/g-th chunk), or None when g does not divide B."""
    if block_size % chunk:
        return None
    step = block_size // chunk
    return list(fps[step - 1 :: step])
