"""Captured prompts for the operator tools (`promptlint diff`, `promptlint hashes`).

One job: turn a file an operator captured from traffic into token ids (and the text, when
there is one). A file is one of

- a rendered prompt (any text, read byte-exact: no newline translation),
- a JSON array of token ids (what vLLM logs as ``prompt_token_ids``),
- a completions request body, ``{"prompt": "..."}`` or ``{"prompt": [ids...]}``,
- a chat-completions request body, ``{"messages": [...], "tools": [...]}``: that needs the
  chat-template renderer (``_render_chat_request`` is the seam where it plugs in).

``tokenizers`` is imported only when a text must be encoded (through ``promptlint.tokens``).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

INPUT_FORMATS = ("auto", "text", "ids", "request")


class InputError(Exception):
    """The captured input is unusable; the message is one line: 'file: what's wrong; what to do'."""


@dataclass
class Settings:
    """How captured inputs are read and tokenized (shared by both sides of a diff)."""

    tokenizer: Optional[str] = None  # --tokenizer (tokenizer.json or model directory)
    tokenizer_sha256: Optional[str] = None
    add_special_tokens: bool = False  # chat serving: False; completions with a pre-rendered prompt: True
    input_format: str = "auto"
    chat_template: Optional[str] = None  # for request bodies (not yet supported)
    quiet: bool = False
    _loaded: Any = field(default=None, repr=False)
    _noticed: bool = field(default=False, repr=False)

    @property
    def has_tokenizer(self) -> bool:
        return bool(self.tokenizer)

    def load_tokenizer(self):
        """The pinned tokenizer (or the embedded default, with a one-line notice on stderr)."""
        if self._loaded is None:
            from promptlint import tokens

            try:
                spec = tokens.resolve(self.tokenizer, self.tokenizer_sha256)
                self._loaded = tokens.load(spec)
            except tokens.TokenizerError as e:
                raise InputError(str(e)) from None
            if spec.embedded and not self._noticed and not self.quiet:
                print(
                    f"promptlint: note: no --tokenizer given; token figures use the embedded {tokens.EMBEDDED_NAME} "
                    "tokenizer and are approximate until you pass the model's tokenizer.json",
                    file=sys.stderr,
                )
                self._noticed = True
        return self._loaded


@dataclass
class Side:
    """One captured prompt: its ids, and its text and per-token character spans when known."""

    path: str
    kind: str  # "text", "ids", "request"
    ids: List[int]
    text: Optional[str] = None
    offsets: Optional[List[Tuple[int, int]]] = None


def read_input(path: str) -> str:
    """The file's text, exactly (``-`` is stdin); CRLF stays CRLF."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found; pass a captured prompt (text) or a JSON array of token ids") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory; pass a file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start}); save the captured prompt as UTF-8") from None


def _as_ids(value: Any) -> Optional[List[int]]:
    if isinstance(value, list) and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in value):
        return list(value)
    return None


def load_side(path: str, settings: Settings) -> Side:
    """Read one captured input and tokenize it if it is text: ``Side(text|None, ids, ...)``."""
    raw = read_input(path)
    fmt = settings.input_format
    if fmt not in INPUT_FORMATS:
        raise InputError(f"unknown input format {fmt!r}; choose one of {', '.join(INPUT_FORMATS)}")
    parsed: Any = None
    if fmt in ("auto", "ids", "request") and raw.lstrip()[:1] in ("[", "{"):
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
    if fmt == "ids":
        ids = _as_ids(parsed)
        if ids is None:
            raise InputError(f"{path}: not a JSON array of token ids (non-negative integers); drop --input-format ids for text")
        return Side(path, "ids", ids)
    if fmt == "request" and not isinstance(parsed, dict):
        raise InputError(f"{path}: not a JSON request body (an object with `messages` or `prompt`)")
    if fmt == "text":
        return _encode_text(path, raw, settings)
    ids = _as_ids(parsed)
    if ids is not None and fmt == "auto":
        return Side(path, "ids", ids)
    if isinstance(parsed, dict) and ("messages" in parsed or "prompt" in parsed):
        return _load_request(path, parsed, settings)
    return _encode_text(path, raw, settings)


def _encode_text(path: str, text: str, settings: Settings, kind: str = "text") -> Side:
    tok = settings.load_tokenizer()
    enc = tok.encode(text, add_special_tokens=settings.add_special_tokens)
    return Side(path, kind, enc.ids, text, enc.offsets)


def _load_request(path: str, body: dict, settings: Settings) -> Side:
    if "messages" in body:
        text = _render_chat_request(path, body, settings)
        return _encode_text(path, text, settings, kind="request")
    prompt = body["prompt"]
    if isinstance(prompt, list) and len(prompt) == 1 and not isinstance(prompt[0], int):
        prompt = prompt[0]  # the OpenAI API accepts a batch of one
    if isinstance(prompt, str):
        return _encode_text(path, prompt, settings, kind="request")
    ids = _as_ids(prompt)
    if ids is not None:
        return Side(path, "request", ids)
    raise InputError(f"{path}: `prompt` must be a string or an array of token ids (batches of several prompts are not supported)")


def _render_chat_request(path: str, body: dict, settings: Settings) -> str:
    """Render a chat-completions request body through the serving stack's chat template.

    Seam for the chat-template renderer (promptlint.render): it must return the exact string
    the engine tokenizes (tools as the engine passes them, add_generation_prompt default, ...).
    """
    raise InputError(
        f"{path}: request bodies need a chat template: pass --chat-template ... (not yet supported); "
        "meanwhile capture the rendered prompt or the prompt token ids"
    )
