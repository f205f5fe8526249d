"""What a provider or engine reuses of a request, under its own rule (``data/provider-rules.json``
dates and sources each figure; ``data/hosted-cache-minimums.json`` has the per-model minimums).

- **openai** (automatic): nothing below 1,024 shared tokens, then 1,024 + 128-token steps;
- **gemini** (implicit): the shared prefix once it reaches the model's minimum (an upper bound);
- **anthropic** and **bedrock** (explicit): a request reads the longest entry an earlier request
  of the conversation wrote at one of its breakpoints, when that entry lies within the shared
  prefix, is at least the model's minimum, and sits no more than the lookback (20 blocks) before
  one of this request's breakpoints; no breakpoint, nothing read;
- **vllm**, **sglang**, **llamacpp**: full blocks of the shared prefix, the last token recomputed.

Lifetimes (``lifetime``): a cached prefix lives for the provider's lifetime after its last use
(OpenAI: 5-10 minutes of inactivity, the longer end assumed, 24 h with
``prompt_cache_retention``; Anthropic and Bedrock: the breakpoints' ``ttl``, 5 minutes unless
``1h``). Gemini's implicit cache and the engines document none: not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from promptlint.arithmetic import compare

ENGINES = ("vllm", "sglang", "llamacpp")
PROVIDERS = ("openai", "anthropic", "gemini", "bedrock") + ENGINES


@dataclass
class Rule:
    provider: str
    model: Optional[str]
    minimum: int  # tokens; 0 for engines
    increment: int  # openai 128; engines: the block size; others 1
    max_breakpoints: int = 0  # explicit caching: the cap (a request over it is refused)
    lookback_blocks: int = 0
    as_of: str = ""

    @property
    def explicit(self) -> bool:
        return self.provider in ("anthropic", "bedrock")


def rule_for(provider: str, model: Optional[str], minimums: Dict[str, dict], rules: Dict[str, dict],
             block_size: Optional[int] = None) -> Rule:
    """The rule of ``provider`` for ``model`` (the table's default model when unknown)."""
    row = rules.get(provider, {})
    if provider in ENGINES:
        size = block_size or int(row.get("block_size", compare.ENGINE_DEFAULT_BLOCK[provider]))
        return Rule(provider, model, 0, size, as_of=str(row.get("as_of", "")))
    table_provider = provider
    if provider == "bedrock" and model and ("anthropic." in model or "claude" in model):
        table_provider = "anthropic"
        model = model.split("anthropic.", 1)[-1]
    block = minimums.get(table_provider, {})
    models = block.get("models", {})
    key = compare._lookup_model(models, model or "") or (model if model in models else None)
    if key is None:
        key = "*" if "*" in models else block.get("default")
    minimum = int(models.get(key, 0)) if key else 0
    return Rule(provider, model, minimum, int(block.get("increment") or 1),
                int(row.get("max_breakpoints", 0)), int(row.get("lookback_blocks", 0)), str(block.get("as_of", "")))


def implicit(rule: Rule, shared: int, prompt_len: int) -> int:
    """Tokens reused without breakpoints (openai, gemini, engines)."""
    if rule.provider in ENGINES:
        return compare.eligible_tokens(shared, prompt_len, rule.increment)
    return compare.hosted_eligible_tokens(shared, prompt_len, rule.minimum, rule.increment)


def explicit(rule: Rule, shared: int, entries: List[tuple], points: List[tuple], held=None) -> int:
    """Tokens an explicit-caching request reads: ``entries`` (block, tokens, chars) written
    before, ``points`` (block, tokens, chars) this request's breakpoints, ``shared`` its prefix
    with them in tokens; ``held(entry)`` says an entry's blocks come back whole even where the
    token prefix stops a token short (a merge across the block boundary)."""
    best = 0
    for entry in entries:
        block, tokens = entry[0], entry[1]
        if tokens < rule.minimum or (tokens > shared and not (held is not None and held(entry))):
            continue
        if any(0 <= p[0] - block < max(rule.lookback_blocks, 1) and tokens <= p[1] for p in points):
            best = max(best, tokens)
    return best


def reused(rule: Rule, shared: int, prompt_len: int, entries: List[tuple], points: List[tuple], held=None) -> int:
    return explicit(rule, shared, entries, points, held) if rule.explicit else implicit(rule, shared, prompt_len)


def lifetime(provider: str, body: Dict[str, Any], rules: Dict[str, dict]) -> Optional[Tuple[float, str]]:
    """How long what ``body`` cached lives without use, and how that was decided; None when the
    provider documents no lifetime."""
    row = rules.get(provider) or {}
    if provider == "openai":
        retention = (row.get("retention") or {}).get(str(body.get("prompt_cache_retention")))
        chosen = retention if isinstance(retention, dict) else row.get("lifetime")
        if isinstance(chosen, dict) and chosen.get("seconds"):
            return float(chosen["seconds"]), str(chosen.get("assumed") or f"{chosen['seconds']} s")
        return None
    lifetimes = row.get("lifetimes") if isinstance(row.get("lifetimes"), dict) else {}
    ttls = [t for t in _ttls(body) if isinstance(lifetimes.get(t), dict) and lifetimes[t].get("seconds")]
    ttl = max(ttls, key=lambda t: float(lifetimes[t]["seconds"]), default="5m")
    if not isinstance(lifetimes.get(ttl), dict) or not lifetimes[ttl].get("seconds"):
        return None
    how = f"the breakpoints' ttl {ttl}" if ttls else "the default, no ttl on the breakpoints"
    return float(lifetimes[ttl]["seconds"]), f"{ttl} ({provider}: {how})"


def _ttls(body: Any) -> List[str]:
    """The ``ttl`` of every cache marker in a body (walked without recursion: bodies are input)."""
    out, stack = [], [body]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for key in ("cache_control", "cachePoint"):
                if isinstance(v.get(key), dict) and isinstance(v[key].get("ttl"), str):
                    out.append(v[key]["ttl"])
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out
