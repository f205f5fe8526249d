"""Normalise per-engine usage fields to (prompt tokens P, observed cached tokens O).

P always counts every prompt token, cached or not; O is None when the engine did not
report it (e.g. vLLM without --enable-prompt-tokens-details, SGLang without
--enable-cache-report) -- unknown, never 0.

| source | P | O |
| --- | --- | --- |
| OpenAI-compatible chat/completions (OpenAI, vLLM, SGLang, llama.cpp) | usage.prompt_tokens (includes cached) | usage.prompt_tokens_details.cached_tokens |
| Responses API | usage.input_tokens (includes cached) | usage.input_tokens_details.cached_tokens |
| SGLang native /generate | meta_info.prompt_tokens | meta_info.cached_tokens |
| llama.cpp timings | timings.cache_n + timings.prompt_n | timings.cache_n |
| Anthropic Messages | input_tokens + cache_creation_input_tokens + cache_read_input_tokens (input_tokens excludes cache traffic) | cache_read_input_tokens |
| Gemini | usageMetadata.promptTokenCount (includes cached) | cachedContentTokenCount |
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from promptlint.audit.fields import RowError, opt_count


def _int(x: Any, name: str) -> Optional[int]:
    """A token count: None when absent (not reported); a wrong type is a RowError naming the field."""
    return opt_count(x, name, strings=True)


def _get(d: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


def detect_engine(resp: Dict[str, Any]) -> str:
    usage = resp.get("usage") if isinstance(resp.get("usage"), dict) else {}
    if "usageMetadata" in resp or "usage_metadata" in resp:
        return "gemini"
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage or resp.get("type") == "message":
        return "anthropic"
    if isinstance(resp.get("meta_info"), dict):
        return "sglang"
    if isinstance(resp.get("timings"), dict):
        return "llamacpp"
    return "openai"


def normalise(resp: Dict[str, Any], engine: str) -> Tuple[Optional[int], Optional[int]]:
    """(P, O) from a response body, following ``engine``'s usage semantics."""
    if resp.get("usage") is not None and not isinstance(resp["usage"], dict):
        raise RowError("`usage` must be an object")
    usage = resp.get("usage") or {}
    if engine == "anthropic":
        inp = _int(usage.get("input_tokens"), "usage.input_tokens")
        read = _int(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens") or 0
        created = _int(usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens") or 0
        return (None if inp is None else inp + read + created), read
    if engine == "gemini":
        um = resp.get("usageMetadata") or resp.get("usage_metadata") or {}
        if not isinstance(um, dict):
            raise RowError("`usageMetadata` must be an object")
        p = _int(um.get("promptTokenCount", um.get("prompt_token_count")), "usageMetadata.promptTokenCount")
        o = _int(um.get("cachedContentTokenCount", um.get("cached_content_token_count")),
                 "usageMetadata.cachedContentTokenCount")
        return p, (0 if o is None and p is not None else o)  # absent count = nothing cached
    if engine == "sglang" and isinstance(resp.get("meta_info"), dict):
        mi = resp["meta_info"]
        return _int(mi.get("prompt_tokens"), "meta_info.prompt_tokens"), _int(mi.get("cached_tokens"), "meta_info.cached_tokens")
    if engine == "llamacpp" and not usage and isinstance(resp.get("timings"), dict):
        t = resp["timings"]
        cache_n, prompt_n = _int(t.get("cache_n"), "timings.cache_n"), _int(t.get("prompt_n"), "timings.prompt_n")
        if cache_n is None or prompt_n is None:
            return None, None
        return cache_n + prompt_n, cache_n
    # OpenAI-compatible (OpenAI, vLLM, SGLang --enable-cache-report, llama.cpp OAI endpoints)
    if "prompt_tokens" in usage:
        return (_int(usage.get("prompt_tokens"), "usage.prompt_tokens"),
                _int(_get(usage, "prompt_tokens_details", "cached_tokens"), "usage.prompt_tokens_details.cached_tokens"))
    if "input_tokens" in usage:  # Responses API
        return (_int(usage.get("input_tokens"), "usage.input_tokens"),
                _int(_get(usage, "input_tokens_details", "cached_tokens"), "usage.input_tokens_details.cached_tokens"))
    return None, None
