"""The request frontends side by side: which one turns a chat request into the template's
variables (transformers, vLLM's OpenAI server, llama.cpp's server) and which template text it
compiles. Here, above both ``chat.request`` and ``chat.llamacpp``, so that neither imports the other
back (docs/architecture.md: imports go one way)."""

from __future__ import annotations

from typing import List

from promptlint.chat.llamacpp import llamacpp_request, patch_source
from promptlint.chat.request import ChatProfile, ChatRequest, Prepared, transformers_variables, vllm_request


def template_source(text: str, profile: ChatProfile) -> str:
    """The template text the serving stack compiles (llama.cpp patches two known-broken checks)."""
    if profile.frontend == "llamacpp":
        return patch_source(text)
    return text


def prepare(
    request: ChatRequest, source, template_text: str, undeclared: frozenset, profile: ChatProfile, now=None
) -> Prepared:
    """Render kwargs for ``request`` through ``profile``'s frontend and transformers version
    (``now``: the serving host's clock, for frontends that put the date in the variables)."""
    if profile.frontend == "llamacpp":
        return llamacpp_request(request, source, template_text, now)
    notes: List[str] = []
    if profile.frontend == "vllm":
        request, notes = vllm_request(request, template_text, undeclared, profile)
    prepared = transformers_variables(request, source, template_text, profile.transformers)
    prepared.notes = notes
    return prepared
