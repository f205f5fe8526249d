"""Per-conversation totals (tokens and dollars) and the JSON/text summary.

Dollars use the dated price table (``data/hosted-prices.json``): every prompt token is billed as
input, except the tokens the provider reuses, billed at the cached price; on explicit caching
(Anthropic, Bedrock) the tokens written at breakpoints beyond those read also pay the write
premium of ``data/provider-rules.json`` (1.25x for the 5-minute lifetime). ``lost_usd`` is what
the lost tokens cost over their cached price. Engines have no prices: tokens only. A request sent after the cache's lifetime (``expired``)
reuses nothing and loses nothing: its miss is expiry, said with the lifetime assumed.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from promptlint.conversation.analysis import Conversation


def price_of(conv: Conversation, prices: Dict[str, dict]) -> Optional[Dict[str, Any]]:
    from promptlint.arithmetic.compare import _lookup_model

    block = prices.get("anthropic" if conv.provider == "bedrock" else conv.provider)
    if not block:
        return None
    models = block.get("models", {})
    model = (conv.model or "").split("anthropic.", 1)[-1]
    key = _lookup_model(models, model) or (block.get("default") if not conv.model else None)
    if key is None:
        return None
    return {"model": key, "as_of": block.get("as_of", "?"), **models[key]}


def totals(conv: Conversation, prices: Dict[str, dict], rules: Dict[str, dict]) -> Dict[str, Any]:
    prompt = sum(r.prompt_tokens for r in conv.rows)
    reused = sum(r.reused_tokens for r in conv.rows)
    ideal = sum(r.ideal_reused_tokens for r in conv.rows)
    written = sum(max(0, r.written_tokens - r.reused_tokens) for r in conv.rows)
    out: Dict[str, Any] = {"conversation": conv.name, "provider": conv.provider, "model": conv.model,
                           "requests": len(conv.rows), "prompt_tokens": prompt, "reused_tokens": reused,
                           "ideal_reused_tokens": ideal, "lost_tokens": conv.lost_tokens,
                           "breaks": sum(1 for r in conv.rows if r.broke is not None),
                           "expired": [r.expired for r in conv.rows if r.expired is not None]}
    if conv.reuse_unknown:  # explicit caching without its breakpoints: the figures above are the rule's on the
        # capture as it is (no breakpoint, so nothing read), kept integers for the JSON contract; this says so
        out["reuse_unknown"] = conv.reuse_unknown
    reported = [r.request.cache_read_tokens for r in conv.rows]
    if conv.rows and all(n is not None for n in reported):  # the provider's own figure, beside ours
        out["reported_cache_read_tokens"] = sum(reported)
    price = price_of(conv, prices)
    if price is not None:
        premium = float(((rules.get(conv.provider) or {}).get("lifetimes") or {}).get("5m", {}).get("write_multiplier", 1.0))
        usd = ((prompt - reused) * price["input"] + reused * price["cached"] + written * price["input"] * (premium - 1)) / 1e6
        lost = conv.lost_tokens * (price["input"] * premium - price["cached"]) / 1e6
        out.update({"usd": round(usd, 6), "lost_usd": round(lost, 6),
                    "priced_as": f"{conv.provider} {price['model']}, prices as of {price['as_of']}"})
        if conv.reuse_unknown:  # every prompt token at the input price: the cost before any cache read, an upper bound
            out["usd_before_cache_reads"] = round(prompt * price["input"] / 1e6, 6)
    return out


def _span(seconds: float) -> str:
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else f"{m}m{sec:02d}s" if m else f"{seconds:g}s"


def format_text(rows: List[Dict[str, Any]], approximate: bool, stale: Dict[str, str]) -> str:
    lines = ["", "conversations" + (" (approximate: embedded tokenizer; pass --tokenizer)" if approximate else "") + ":"]
    for t in rows:
        head = f"  {t['conversation']}: {t['requests']} requests, {t['provider']} {t['model'] or ''}".rstrip()
        if t.get("reuse_unknown"):
            money = (f", at most ${t['usd_before_cache_reads']:,.4f} before cache reads ({t['priced_as']})"
                     if "usd_before_cache_reads" in t else "")
            said = (f"; the provider reported {t['reported_cache_read_tokens']:,} tokens read from its cache"
                    if "reported_cache_read_tokens" in t else "")
            lines.append(f"{head}; {t['prompt_tokens']:,} prompt tokens{money}; reuse unknown: {t['reuse_unknown']}{said}")
        else:
            money = f", ${t['usd']:,.4f} (${t['lost_usd']:,.4f} lost; {t['priced_as']})" if "usd" in t else ""
            lines.append(f"{head}; {t['prompt_tokens']:,} prompt tokens, {t['reused_tokens']:,} reused of "
                         f"{t['ideal_reused_tokens']:,} ideal, {t['lost_tokens']:,} lost{money}")
        for e in t.get("expired") or ():
            lines.append(f"    {e['where']}: sent {_span(e['gap_seconds'])} after the one before, past the cache "
                         f"lifetime of {_span(e['lifetime_seconds'])} (assumed: {e['lifetime']}): its miss is "
                         "expiry, not a hazard")
    for provider, as_of in sorted(stale.items()):
        lines.append(f"note: the {provider} table is dated {as_of}, older than --table-max-age: its figures may be out of date")
    return "\n".join(lines) + "\n"
