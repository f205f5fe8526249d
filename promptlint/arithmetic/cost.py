"""What a lost prefix costs a day (`[tool.promptlint.cost]`; docs/configuration.md).

Every request after the first recomputes the prefill tokens a hazard loses (a finding's
``lost_tokens``, a baseline row's). With R requests a day:

* hosted APIs, or explicit prices: those tokens are billed as input instead of cached input,
  ``usd_per_day = tokens * R * (price - cached_price) / 1e6`` (prices per million tokens);
* self-hosted engines: ``gpu_seconds_per_day = tokens * R / prefill_tokens_per_second``.

Prices come from a dated table (``data/hosted-prices.json``, with its sources; a user file
merges over it) or from the configuration itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Union

from promptlint.base.records import Cost

_PRICES_FILE = Path(__file__).parent.parent / "data" / "hosted-prices.json"


class CostConfigError(ValueError):
    """The cost table or the price table is unusable; a one-line message."""


@dataclass(frozen=True)
class CostModel:
    requests_per_day: float
    price_per_mtok: Optional[float] = None  # uncached input, USD per million tokens
    cached_price_per_mtok: Optional[float] = None  # cached input
    prefill_tokens_per_second: Optional[float] = None  # self-hosted: the GPU's prefill throughput
    priced_as: str = ""  # where the prices come from, for people ("openai gpt-4.1, prices as of 2025-10")

    def of(self, tokens: int) -> Cost:
        """The daily cost of ``tokens`` prefill tokens recomputed per request (negative: a saving)."""
        usd = gpu = None
        if self.price_per_mtok is not None and self.cached_price_per_mtok is not None:
            usd = tokens * self.requests_per_day * (self.price_per_mtok - self.cached_price_per_mtok) / 1e6
        if self.prefill_tokens_per_second:
            gpu = tokens * self.requests_per_day / self.prefill_tokens_per_second
        return Cost(tokens, self.requests_per_day, usd, gpu, self.priced_as or None)


def load_prices(override: Optional[Union[str, Path]] = None) -> Dict[str, dict]:
    """The shipped dated price table, with a user file's providers and models merged over it."""
    from promptlint.base import dated_tables

    return dated_tables.merged(_PRICES_FILE, override, "the price table", CostConfigError, _price_models)


def _price_models(path: Path, provider: str, block: Any) -> Dict[str, Any]:
    models = block.get("models", {}) if isinstance(block, dict) else None
    if not isinstance(models, dict) or not all(_price_entry(v) for v in models.values()):
        raise CostConfigError(
            f"{path}: {provider}.models must map model names to {{\"input\": USD, \"cached\": USD}} per million tokens"
        )
    return models


def _price_entry(v: Any) -> bool:
    return isinstance(v, dict) and all(
        isinstance(v.get(k), (int, float)) and not isinstance(v.get(k), bool) and math.isfinite(v[k]) and v[k] >= 0
        for k in ("input", "cached")
    )


def model_from(table: Dict[str, Any], table_path: Optional[str] = None) -> CostModel:
    """The CostModel of a validated ``[tool.promptlint.cost]`` table (keys as in the file)."""
    from promptlint.arithmetic.compare import _lookup_model

    requests = table["requests-per-day"]
    price, cached = table.get("price-per-mtok"), table.get("cached-price-per-mtok")
    priced_as = "configured prices" if price is not None else ""
    provider = table.get("provider")
    if provider is not None:
        prices = load_prices(table_path)
        block = prices.get(provider)
        if block is None:
            raise CostConfigError(f"no prices for provider {provider!r}; known: {', '.join(sorted(prices))}")
        models = block.get("models", {})
        wanted = table.get("model") or block.get("default", "")
        key = _lookup_model(models, wanted)
        if key is None:
            raise CostConfigError(
                f"no price for {provider} model {wanted!r}; known: {', '.join(sorted(models))}; "
                "add it with `price-table` or give `price-per-mtok` and `cached-price-per-mtok`"
            )
        price, cached = float(models[key]["input"]), float(models[key]["cached"])
        priced_as = f"{provider} {key}, prices as of {block.get('as_of', '?')}"
    return CostModel(float(requests), price, cached, table.get("prefill-tokens-per-second"), priced_as)


def price_findings(model: Optional[CostModel], findings) -> list:
    """The findings, each that loses prefill tokens per request as a copy with its ``cost``."""
    from dataclasses import replace

    if model is None:
        return list(findings)
    return [replace(f, cost=model.of(f.arithmetic.lost_tokens)) if f.arithmetic is not None and f.arithmetic.lost_tokens > 0
            else f for f in findings]


def price_deltas(model: Optional[CostModel], deltas) -> None:
    """Set ``cost`` on each baseline row measured in both trees (negative: what the change saves)."""
    if model is None:
        return
    for d in deltas:
        if d.lost_tokens is not None:
            d.cost = model.of(d.lost_tokens)
