"""Prefix-cache arithmetic: pure functions over token-id sequences.

Everything here follows the engines' own rules (see docs/engines.md):
only full blocks of B tokens are reused, and the last prompt token is always
recomputed, so a request of P tokens sharing S leading tokens with a cached one
can reuse ``floor(min(S, P - 1) / B) * B`` tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix: the index of the first divergent token."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def eligible_tokens(shared: int, prompt_len: int, block_size: int) -> int:
    """Tokens a full-attention engine can reuse: ``floor(min(S, P-1)/B)*B``."""
    if block_size < 1:
        raise ValueError("block size must be >= 1")
    usable = max(0, min(shared, prompt_len - 1))
    return usable // block_size * block_size


@dataclass(frozen=True)
class Profile:
    """How one engine turns a shared prefix into reused tokens."""

    name: str
    block_size: int
    min_tokens: int = 0  # hosted APIs: nothing is cached below this many tokens
    description: str = ""

    def eligible(self, shared: int, prompt_len: int) -> int:
        if prompt_len < self.min_tokens:
            return 0
        return eligible_tokens(shared, prompt_len, self.block_size)


ENGINE_DEFAULT_BLOCK = {"vllm": 16, "sglang": 1, "llamacpp": 1}
ENGINE_DESCRIPTION = {
    "vllm": "vLLM automatic prefix caching: full blocks, last token recomputed",
    "sglang": "SGLang RadixAttention: pages (default 1 token), last token recomputed",
    "llamacpp": "llama.cpp slot cache: token-granular, last token recomputed",
}


def engine_profile(engine: str, block_size: Optional[int] = None) -> Profile:
    if engine not in ENGINE_DEFAULT_BLOCK:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINE_DEFAULT_BLOCK)}")
    return Profile(engine, block_size or ENGINE_DEFAULT_BLOCK[engine], 0, ENGINE_DESCRIPTION[engine])


@dataclass(frozen=True)
class Comparison:
    """A base render against a variant, plus the ideal divergence without the hazard."""

    shared: int  # S: index of the first divergent token
    prompt_len: int  # P: tokens of the request being served (the variant)
    ideal_shared: int  # S if only genuinely per-request content differed
    block_size: int

    @property
    def eligible_tokens(self) -> int:
        return eligible_tokens(self.shared, self.prompt_len, self.block_size)

    @property
    def eligible_blocks(self) -> int:
        return self.eligible_tokens // self.block_size

    @property
    def ideal_eligible_tokens(self) -> int:
        return eligible_tokens(self.ideal_shared, self.prompt_len, self.block_size)

    @property
    def ideal_eligible_blocks(self) -> int:
        return self.ideal_eligible_tokens // self.block_size

    @property
    def lost_blocks(self) -> int:
        return max(0, self.ideal_eligible_blocks - self.eligible_blocks)

    @property
    def lost_tokens(self) -> int:
        return self.lost_blocks * self.block_size


def compare(base: Sequence[int], variant: Sequence[int], ideal_shared: int, block_size: int) -> Comparison:
    """Compare two token-id sequences; ``ideal_shared`` is S without the hazard."""
    return Comparison(shared_prefix(base, variant), len(variant), ideal_shared, block_size)
