"""Prefix-cache arithmetic: pure functions over token-id sequences.

Everything here follows the engines' own rules (see docs/engines.md):
only full blocks of B tokens are reused, and the last prompt token is always
recomputed, so a request of P tokens sharing S leading tokens with a cached one
can reuse ``floor(min(S, P - 1) / B) * B`` tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union



def shared_prefix(a: Sequence, b: Sequence) -> int:
    """Length of the longest common prefix: the index of the first divergent token (or character,
    for two strings). Slices are compared in C, halving the range, before a short final scan."""
    if type(a) is not type(b) or not isinstance(a, (list, tuple, str)):
        a, b = list(a), list(b)
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo]; they differ within [lo, hi)
    while hi - lo > 32:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    while lo < hi and a[lo] == b[lo]:
        lo += 1
    return lo


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
    """A self-hosted engine's profile, or a hosted API's (default model) by its provider name."""
    if engine in HOSTED_PROVIDERS:
        return hosted_profile(engine, block_size=block_size)
    if engine not in ENGINE_DEFAULT_BLOCK:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(PROFILE_NAMES)}")
    return Profile(engine, block_size or ENGINE_DEFAULT_BLOCK[engine], 0, ENGINE_DESCRIPTION[engine])


# --- hosted APIs -------------------------------------------------------------------------------
#
# Hosted APIs publish a minimum cacheable length and (OpenAI) a granularity, not an engine:
# a prefix shorter than the minimum is not cached at all; above it, OpenAI caches in 128-token
# increments counted from the minimum: ``cached = 0 if S < 1024 else 1024 + floor((S-1024)/128)*128``.
# Anthropic and Gemini publish only per-model minimums (a dated table in
# ``data/hosted-cache-minimums.json`` the user can override); their figure here is the shared
# prefix when it reaches the minimum: an upper bound, since Anthropic reads only at cache
# breakpoints and neither documents a granularity. No last-token cap is documented for any of
# them, so none is applied. All three are approximations of documented behaviour.

HOSTED_PROVIDERS = ("openai", "anthropic", "gemini")
PROFILE_NAMES = tuple(ENGINE_DEFAULT_BLOCK) + HOSTED_PROVIDERS
TABLE_PROVIDERS = HOSTED_PROVIDERS + ("bedrock",)  # bedrock: checkpoint minimums for the lint rules, no diff profile
HOSTED_DESCRIPTION = {
    "openai": "OpenAI prompt caching: nothing below {min} tokens, then {inc}-token increments (documented rule)",
    "anthropic": "Anthropic prompt caching ({model}): nothing below {min} tokens; upper bound (reads happen at cache breakpoints)",
    "gemini": "Gemini implicit caching ({model}): nothing below {min} tokens; upper bound",
}
_MINIMUMS_FILE = Path(__file__).parent.parent / "data" / "hosted-cache-minimums.json"


def hosted_eligible_tokens(shared: int, prompt_len: int, min_tokens: int, increment: int) -> int:
    """Tokens a hosted API reports cached: 0 below the minimum, then ``min + k*increment``."""
    if increment < 1:
        raise ValueError("increment must be >= 1")
    s = max(0, min(shared, prompt_len))
    if s < min_tokens or s == 0:
        return 0
    return min_tokens + (s - min_tokens) // increment * increment


@dataclass(frozen=True)
class HostedProfile(Profile):
    """A hosted API: ``block_size`` is the caching increment, ``min_tokens`` the model minimum."""

    model: str = ""
    as_of: str = ""  # date of the table the minimum comes from
    source: str = ""

    def eligible(self, shared: int, prompt_len: int) -> int:
        return hosted_eligible_tokens(shared, prompt_len, self.min_tokens, self.block_size)


class CacheTableError(ValueError):
    """The hosted-minimums table (or a user override of it) is unusable; one-line message."""


def load_cache_minimums(override: Optional[Union[str, Path]] = None) -> Dict[str, dict]:
    """The shipped dated table of hosted-API minimums, with a user file merged over it.

    An override file has the same layout; per provider, its ``models`` entries are added to or
    replace the shipped ones and its other keys (``as_of``, ``default``, ``increment``,
    ``source``) replace the shipped values.
    """
    from promptlint.base import dated_tables

    return dated_tables.merged(_MINIMUMS_FILE, override, "the cache-minimums file", CacheTableError,
                               _minimum_models, f" ({', '.join(TABLE_PROVIDERS)})")


def _minimum_models(path: Path, provider: str, block: Any) -> Dict[str, int]:
    if provider not in TABLE_PROVIDERS or not isinstance(block, dict):
        raise CacheTableError(
            # an unknown key is not echoed: the file's text stays out of the message
            f"{path}: {provider + ' is not a provider block' if provider in TABLE_PROVIDERS else 'a key is not a provider'}"
            f"; use keys {', '.join(TABLE_PROVIDERS)} with an object each"
        )
    models = block.get("models", {})
    if not isinstance(models, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in models.values()
    ):
        raise CacheTableError(f"{path}: {provider}.models must map model names to token counts (integers >= 0)")
    return models


def _lookup_model(models: Dict[str, int], model: str) -> Optional[str]:
    if model in models:
        return model
    candidates = [k for k in models if model.startswith(k + "-") or model.startswith(k + "@")]
    return max(candidates, key=len) if candidates else None


def hosted_profile(
    provider: str,
    model: Optional[str] = None,
    table: Optional[Dict[str, dict]] = None,
    block_size: Optional[int] = None,
) -> HostedProfile:
    """The profile of a hosted API for ``model`` (the table's default model when None)."""
    if provider not in HOSTED_PROVIDERS:
        raise ValueError(f"unknown hosted API {provider!r}; choose one of {', '.join(HOSTED_PROVIDERS)}")
    table = table if table is not None else load_cache_minimums()
    block = table.get(provider) or {}
    models = block.get("models") or {}
    wanted = model or block.get("default") or "*"
    key = _lookup_model(models, wanted)
    if key is None and "*" in models:
        key = "*"
    if key is None:
        raise CacheTableError(
            f"no cache minimum for {provider} model {wanted!r}; known: {', '.join(sorted(models)) or 'none'}; "
            "add it with --cache-minimums FILE"
        )
    minimum = int(models[key])
    increment = int(block_size or block.get("increment") or 1)
    shown = key if key != "*" else (model or "all models")
    description = HOSTED_DESCRIPTION[provider].format(min=minimum, inc=increment, model=shown)
    return HostedProfile(
        provider, increment, minimum, description, model=shown, as_of=str(block.get("as_of", "")),
        source=str(block.get("source", "")),
    )


def all_profiles(
    block_size: Optional[int] = None,
    engine: str = "vllm",
    models: Optional[Dict[str, str]] = None,
    table: Optional[Dict[str, dict]] = None,
) -> Dict[str, Profile]:
    """Every profile, by name. ``block_size`` applies to the selected ``engine`` only."""
    table = table if table is not None else load_cache_minimums()
    models = models or {}
    out: Dict[str, Profile] = {}
    for name in ENGINE_DEFAULT_BLOCK:
        out[name] = engine_profile(name, block_size if name == engine else None)
    for name in HOSTED_PROVIDERS:
        out[name] = hosted_profile(name, models.get(name), table, block_size if name == engine else None)
    return out


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


def changed_end(base: Sequence[int], variant: Sequence[int], shared: int) -> int:
    """Index in ``base`` just past the span that differs from ``variant``: the tokens after it
    are the variant's last tokens (``shared`` is where the span starts; the two never overlap)."""
    n, limit = 0, min(len(base), len(variant)) - shared
    while n < limit and base[-1 - n] == variant[-1 - n]:
        n += 1
    return len(base) - n


def compare(base: Sequence[int], variant: Sequence[int], ideal_shared: int, block_size: int) -> Comparison:
    """Compare two token-id sequences; ``ideal_shared`` is S without the hazard."""
    return Comparison(shared_prefix(base, variant), len(variant), ideal_shared, block_size)
