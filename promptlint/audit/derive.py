"""Token ids for log rows that carry none: re-render the captured request with the pinned chat
template, exactly as the serving stack does (promptlint.chat, vLLM's OpenAI frontend by
default), and tokenize with the pinned tokenizer. Rows get ``tokens_source=derived``.

The rendered text never leaves this function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional


def make_deriver(
    tokenizer_path: str,
    template_path: str,
    sha256: Optional[str] = None,
    frontend: Optional[str] = None,
    transformers: int = 5,
    engine: Optional[str] = None,
) -> Callable[[Dict[str, Any]], Optional[List[int]]]:
    """A function from captured request inputs (messages, tools, ...) to the ids the engine saw.

    ``template_path`` is a model directory, a ``tokenizer_config.json`` or a chat ``.jinja`` file.
    Under ``engine="llamacpp"`` the request goes through llama.cpp's server frontend and
    llama.cpp's tokenization by default; otherwise through vLLM's, with the pinned tokenizer.
    """
    from promptlint import tokens
    from promptlint.chat.request import ChatProfile, ChatRequest
    from promptlint.chat.run import ChatTemplate
    from promptlint.chat.source import SourceError, load_source
    from promptlint.render import Limits, RenderError

    from promptlint.engine_tokenize import engine_encoder

    if frontend is None:
        frontend = "llamacpp" if engine == "llamacpp" else "vllm"
    tok = tokens.load(tokens.resolve(tokenizer_path, sha256))
    try:
        source = load_source(Path(template_path))
    except SourceError as e:
        raise OSError(f"{e.path}: {e.message}") from None
    if not source.special_tokens:
        source.special_tokens = dict(tok.special_tokens)
    chat = ChatTemplate(source, ChatProfile(transformers, frontend, "chat"), Limits())
    encoder = engine_encoder(tok, engine if engine == "llamacpp" else "vllm")

    def derive(inputs: Dict[str, Any]) -> Optional[List[int]]:
        messages = inputs.get("messages")
        if not isinstance(messages, list):
            return None
        request = ChatRequest(
            messages=messages,
            tools=inputs.get("tools") or None,
            documents=inputs.get("documents"),
            add_generation_prompt=inputs.get("add_generation_prompt"),
        )
        try:
            rendered, _, _ = chat.render(request)
        except (RenderError, TypeError, ValueError):  # a row that does not render stays usage-only
            return None
        return encoder.encode(rendered.text, add_special_tokens=False).ids

    return derive
