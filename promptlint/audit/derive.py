"""Token ids for log rows that carry none: re-render the captured request with the pinned chat
template, exactly as the serving stack does (promptlint.chat, vLLM's OpenAI frontend by
default), and tokenize with the pinned tokenizer. Rows get ``tokens_source=derived``.

The rendered text never leaves this function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional


class DeriveError(ValueError):
    """Why a row's token ids could not be derived (the row stays usage-only, with this as evidence).
    Never carries message text: rows hold prompts."""


def make_deriver(
    tokenizer_path: str,
    template_path: str,
    sha256: Optional[str] = None,
    frontend: Optional[str] = None,
    transformers: int = 5,
    engine: Optional[str] = None,
) -> Callable[[Dict[str, Any]], List[int]]:
    """A function from captured request inputs (messages, tools, ...) to the ids the engine saw;
    it raises :class:`DeriveError` with the reason when they cannot be derived.

    ``template_path`` is a model directory, a ``tokenizer_config.json`` or a chat ``.jinja`` file.
    Under ``engine="llamacpp"`` the request goes through llama.cpp's server frontend and
    llama.cpp's tokenization by default; otherwise through vLLM's, with the pinned tokenizer.
    """
    from promptlint.tokenization import tokens
    from promptlint.operators.captured import _request_from_body as request_from_body
    from promptlint.chat.request import ChatProfile
    from promptlint.chat.run import ChatTemplate
    from promptlint.chat.source import SourceError, load_source
    from promptlint.base.jsonl import lone_surrogate
    from promptlint.render import Limits, RenderError

    from promptlint.tokenization.engine_tokenize import engine_encoder

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

    def derive(inputs: Dict[str, Any]) -> List[int]:
        try:
            request = request_from_body(inputs)  # the same checks as `promptlint diff` on a request body
        except ValueError as e:
            raise DeriveError(str(e)) from None
        try:
            rendered, _, _ = chat.render(request)
        except RenderError as e:
            raise DeriveError(f"the chat template refused the request ({e.code}; `promptlint rule {e.code}` explains)") from None
        except (TypeError, ValueError, AttributeError, KeyError) as e:
            raise DeriveError(f"the request does not render ({type(e).__name__})") from None
        i = lone_surrogate(rendered.text)
        if i is not None:
            raise DeriveError(f"the rendered prompt holds a lone surrogate (\\u{ord(rendered.text[i]):04x}), "
                              "which is not Unicode text")
        return encoder.encode(rendered.text, add_special_tokens=False).ids

    return derive


class DeriverSetupError(ValueError):
    """The pinned tokenizer or chat template cannot be loaded: a usage error (exit 2)."""


class Deriver:
    """:func:`make_deriver` as a picklable callable: only the paths travel to a worker process
    or Ray actor, which builds its own tokenizer and template on first use."""

    def __init__(self, tokenizer_path: str, template_path: str, engine: Optional[str] = None) -> None:
        self.args = (tokenizer_path, template_path, engine)
        self._fn: Optional[Callable[[Dict[str, Any]], List[int]]] = None

    def check(self) -> "Deriver":
        """The cheap checks (paths, template source) without parsing the tokenizer: with
        --workers the workers load it, not this process."""
        from promptlint.tokenization import tokens
        from promptlint.chat.source import SourceError, load_source

        tok, tmpl, _ = self.args
        try:
            tokens.resolve(tok)
            load_source(Path(tmpl))
        except tokens.TokenizerError as e:
            raise DeriverSetupError(str(e)) from None
        except SourceError as e:
            raise DeriverSetupError(f"{e.path}: {e.message}") from None
        except OSError as e:
            raise DeriverSetupError(f"{e.filename}: {e.strerror}") from None
        return self

    def load(self) -> "Deriver":
        if self._fn is None:
            from promptlint.tokenization.tokens import TokenizerError

            tok, tmpl, engine = self.args
            try:
                self._fn = make_deriver(tok, tmpl, engine=engine)
            except (TokenizerError, OSError) as e:
                raise DeriverSetupError(str(e)) from None
        return self

    def __call__(self, inputs: Dict[str, Any]) -> List[int]:
        return self.load()._fn(inputs)  # type: ignore[misc]

    def __getstate__(self) -> Dict[str, Any]:
        import os

        tok, tmpl, engine = self.args  # absolute: a Ray worker runs in another directory
        return {"args": (os.path.abspath(tok), os.path.abspath(tmpl), engine), "_fn": None}
