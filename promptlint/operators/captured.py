"""Captured prompts for the operator tools (`promptlint diff`, `promptlint hashes`).

One job: turn a file an operator captured from traffic into token ids (and the text, when
there is one). A file is one of

- a rendered prompt (any text, read byte-exact: no newline translation),
- a JSON array of token ids (what vLLM logs as ``prompt_token_ids``),
- a completions request body, ``{"prompt": "..."}`` or ``{"prompt": [ids...]}``,
- a chat-completions request body, ``{"messages": [...], "tools": [...]}``: rendered through the
  chat template (``_render_chat_request``); without one, `diff` (``approximate_chat``) renders it
  in the documented approximate framing (``promptlint.operators.chat_framing``) and keeps the body, so the
  two bodies are compared field by field too (``promptlint.operators.request_fields``);
- a hosted-API request body (Anthropic Messages, Bedrock Converse, OpenAI Responses, Gemini):
  no chat template is public, so it renders as its text in the order the provider builds the
  cached prefix (tools -> system -> messages; ``promptlint.pysource.layout``).

``tokenizers`` is imported only when a text must be encoded (through ``promptlint.tokenization.tokens``).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

from promptlint.doors import bounded_io

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
    chat_template: Optional[str] = None  # for request bodies: model dir, tokenizer_config.json or .jinja
    frontend: str = "vllm"  # how a request body reaches the template (the OpenAI-compatible server)
    engine: str = "vllm"  # whose tokenization text inputs get (llamacpp differs; hosted APIs: the pinned tokenizer)
    transformers: int = 5
    quiet: bool = False
    approximate_chat: bool = False  # diff: a chat body without a chat template gets the approximate framing
    _loaded: Any = field(default=None, repr=False)
    _noticed: bool = field(default=False, repr=False)
    _notes: set = field(default_factory=set, repr=False)  # rendering notes printed in this run (once each)

    @property
    def has_tokenizer(self) -> bool:
        return bool(self.tokenizer)

    def load_tokenizer(self):
        """The pinned tokenizer (or the embedded default, with a one-line notice on stderr)."""
        if self._loaded is None:
            from promptlint.tokenization import tokens

            try:
                spec = tokens.resolve(self.tokenizer, self.tokenizer_sha256)
                self._loaded = tokens.load(spec)
            except tokens.TokenizerError as e:
                raise InputError(str(e)) from None
            if spec.embedded and not self._noticed and not self.quiet:
                print(
                    "promptlint: note: no --tokenizer given; token figures use the embedded cl100k_base "
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
    body: Optional[dict] = None  # a chat-completions request body, as read
    framing: Optional[str] = None  # how that body became text without a chat template (chat_framing.NAME)


def read_input(path: str) -> str:
    """The file's text, exactly (``-`` is stdin); CRLF stays CRLF."""
    data = read_input_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start}); save the captured prompt as UTF-8") from None


def read_input_bytes(path: str) -> bytes:
    """The file's bytes (``-`` is stdin), or a one-line InputError."""
    try:
        if path == "-":
            data = bounded_io.read_stream(sys.stdin.buffer, bounded_io.MAX_INPUT_BYTES, "stdin")
        else:
            data = bounded_io.read_bytes(path, bounded_io.MAX_INPUT_BYTES)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found; pass a captured prompt (text) or a JSON array of token ids") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory; pass a file") from None
    except bounded_io.InputRefused as e:
        raise InputError(f"{path}: {e}; pass a captured prompt file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    return data


TOKEN_ID_LIMIT = 2**32  # no vocabulary comes near it; the audit packs ids as uint32


def token_id_error(value: Any, name: str) -> Optional[str]:
    """Why ``value`` is not a list of token ids (whole numbers in [0, 2^32)), else None.
    Names the first bad element by its position and type, never by its text."""
    if not isinstance(value, list):
        return f"{name} must be a list of token ids, not {'a string' if isinstance(value, str) else type(value).__name__}"
    # fast path in C (traces hold millions of ids): all plain ints, within range
    if not value or (set(map(type, value)) == {int} and min(value) >= 0 and max(value) < TOKEN_ID_LIMIT):
        return None
    for i, t in enumerate(value):
        if type(t) is not int or not 0 <= t < TOKEN_ID_LIMIT:
            what = (("a boolean" if isinstance(t, bool) else f"the number {t}" if isinstance(t, (int, float))
                     else "a string" if isinstance(t, str) else "a list" if isinstance(t, list)
                     else "an object" if isinstance(t, dict) else "null"))
            return f"item {i} of {name} is {what}: token ids are whole numbers from 0 to 2^32-1"
    return None


def _ids(path: str, value: Any, name: str, hint: str = "") -> List[int]:
    err = token_id_error(value, name)
    if err:
        raise InputError(f"{path}: {err}{hint}")
    return list(value)


def check_vocabulary(side: Side, tok: Any) -> None:
    """Every id of ``side`` names a token of ``tok``: an id beyond the vocabulary is an error
    (decoding it would give an empty string and a wrong picture)."""
    for i, t in enumerate(side.ids):
        if tok.id_to_token(t) is None:
            raise InputError(f"{side.path}: token id {t} (position {i}) is not in the vocabulary of "
                             f"{tok.spec.display}; pass the model's tokenizer (--tokenizer) the ids came from")


def _parse_json(path: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to read") from None
    except ValueError:
        return None


def load_side(path: str, settings: Settings) -> Side:
    """Read one captured input and tokenize it if it is text: ``Side(text|None, ids, ...)``."""
    raw = read_input(path)
    fmt = settings.input_format
    if fmt not in INPUT_FORMATS:
        raise InputError(f"unknown input format {fmt!r}; choose one of {', '.join(INPUT_FORMATS)}")
    parsed: Any = None
    if fmt in ("auto", "ids", "request") and raw.lstrip()[:1] in ("[", "{"):
        parsed = _parse_json(path, raw)
    if fmt == "ids":
        if not isinstance(parsed, list):
            raise InputError(f"{path}: not a JSON array of token ids (non-negative integers); drop --input-format ids for text")
        return Side(path, "ids", _ids(path, parsed, "the JSON array", "; drop --input-format ids for text"))
    if fmt == "request" and not isinstance(parsed, dict):
        raise InputError(f"{path}: not a JSON request body (an object with `messages` or `prompt`)")
    if fmt == "text":
        return _encode_text(path, raw, settings)
    if isinstance(parsed, list):  # auto: a JSON array is token ids, never silently text
        return Side(path, "ids", _ids(path, parsed, "the JSON array", "; if the file is a rendered prompt, "
                                      "pass --input-format text"))
    provider = sdk_provider(parsed) if isinstance(parsed, dict) else None
    if provider is not None:
        return _load_sdk_request(path, parsed, provider, settings)
    if isinstance(parsed, dict) and ("messages" in parsed or "prompt" in parsed):
        return _load_request(path, parsed, settings)
    return _encode_text(path, raw, settings)


# engines whose text tokenization promptlint emulates; hosted APIs get the pinned tokenizer as given
_TOKENIZING_ENGINES = ("vllm", "sglang", "llamacpp")


def _encode_text(path: str, text: str, settings: Settings, kind: str = "text") -> Side:
    from promptlint.tokenization.engine_tokenize import engine_encoder
    from promptlint.base.jsonl import surrogate_message

    bad = surrogate_message(text, "the text" if kind == "text" else "the prompt")
    if bad:
        raise InputError(f"{path}: {bad}")
    engine = settings.engine if settings.engine in _TOKENIZING_ENGINES else "vllm"
    tok = engine_encoder(settings.load_tokenizer(), engine)
    enc = tok.encode(text, add_special_tokens=settings.add_special_tokens)
    return Side(path, kind, enc.ids, text, enc.offsets)


def _load_request(path: str, body: dict, settings: Settings) -> Side:
    if "messages" in body:
        framing = None
        if _chat_template_of(settings) is None and settings.approximate_chat:
            text, framing = _approximate_chat_request(path, body, settings), _framing_name()
        else:
            text = _render_chat_request(path, body, settings)
        side = _encode_text(path, text, settings, kind="request")
        side.body, side.framing = body, framing
        return side
    prompt = body["prompt"]
    if isinstance(prompt, list) and len(prompt) == 1 and not isinstance(prompt[0], int):
        prompt = prompt[0]  # the OpenAI API accepts a batch of one
    if isinstance(prompt, str):
        return _encode_text(path, prompt, settings, kind="request")
    if isinstance(prompt, list):
        return Side(path, "request", _ids(path, prompt, "`prompt`"))
    raise InputError(f"{path}: `prompt` must be a string or an array of token ids (batches of several prompts are not supported)")


def _render_chat_request(path: str, body: dict, settings: Settings) -> str:
    """Render a chat-completions request body through the chat template as the server does.

    The template comes from --chat-template, else from --tokenizer when it names a model
    directory. The `vllm` frontend applies what vLLM's OpenAI server does to a request
    (add_generation_prompt true by default, tools as pydantic dumps with null fields, ...).
    """
    from pathlib import Path

    from promptlint.chat.request import ChatProfile
    from promptlint.chat.run import ChatTemplate
    from promptlint.chat.source import SourceError, load_source
    from promptlint.render import Limits, RenderError

    target = _chat_template_of(settings)
    if target is None:
        raise InputError(
            f"{path}: a request body with `messages` needs the chat template: pass --chat-template "
            "(a model directory, tokenizer_config.json or .jinja file) or --tokenizer MODEL_DIR"
        )
    try:
        source = load_source(Path(target))
    except SourceError as e:
        raise InputError(f"{e.path}: {e.message}") from None
    if not source.special_tokens:
        source.special_tokens = dict(settings.load_tokenizer().special_tokens)
    profile = ChatProfile(settings.transformers, settings.frontend, "completions" if settings.add_special_tokens else "chat")
    try:
        request = _request_from_body(body)
        rendered, _, _ = ChatTemplate(source, profile, Limits()).render(request)
    except RenderError as e:
        raise InputError(f"{path}: the chat template refused the request: {e.message}") from None
    except (TypeError, ValueError) as e:
        raise InputError(f"{path}: not a usable chat-completions request body: {e}") from None
    except (AttributeError, KeyError) as e:  # a shape the serving frontend assumes (pydantic checks it there)
        raise InputError(f"{path}: not a usable chat-completions request body ({type(e).__name__}: a field of "
                         "the wrong type; compare it with the OpenAI chat-completions schema)") from None
    except RecursionError:
        raise InputError(f"{path}: the request body is nested too deeply to render") from None
    return rendered.text


def _chat_template_of(settings: Settings) -> Optional[str]:
    """Where the chat template comes from: --chat-template, else --tokenizer when it is a model directory."""
    from pathlib import Path

    return settings.chat_template or (settings.tokenizer if settings.tokenizer and Path(settings.tokenizer).is_dir() else None)


def _framing_name() -> str:
    from promptlint.operators import chat_framing

    return chat_framing.NAME


def _approximate_chat_request(path: str, body: dict, settings: Settings) -> str:
    """The body in the approximate chat framing, with a one-line note on stderr (once per run)."""
    from promptlint.operators import chat_framing

    try:
        text = chat_framing.render(body)
    except chat_framing.BodyError as e:
        raise InputError(f"{path}: not a usable chat-completions request body: {e}") from None
    if not settings.quiet and "chat-completions" not in settings._notes:
        settings._notes.add("chat-completions")
        print(f"promptlint: note: {path}: a chat-completions request body and no chat template: rendered in an "
              "approximate ChatML framing (docs/operators.md); pass --chat-template for the model's exact prompt",
              file=sys.stderr)
    return text


def _request_from_body(body: dict):
    """An OpenAI chat-completions body as a ChatRequest (the fields vLLM passes to the template)."""
    from promptlint.chat.request import ChatRequest

    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ValueError("`messages` must be a list of objects")
    kwargs = body.get("chat_template_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise ValueError("`chat_template_kwargs` must be an object")
    tools = body.get("tools") or None
    if tools is not None and not (isinstance(tools, list) and all(
            isinstance(t, dict) and isinstance(t.get("function", {}), dict) for t in tools)):
        raise ValueError('`tools` must be a list of tool objects ({"type": "function", "function": {...}})')
    return ChatRequest(
        messages=messages,
        tools=tools,
        documents=body.get("documents"),
        add_generation_prompt=body.get("add_generation_prompt"),
        continue_final_message=body.get("continue_final_message", False),
        kwargs=dict(kwargs),
    )


# --------------------------------------------------------------------------- hosted-API bodies

_BEDROCK_KEYS = ("toolConfig", "inferenceConfig", "modelId", "additionalModelRequestFields")
_BEDROCK_BLOCKS = ("text", "cachePoint", "toolUse", "toolResult", "image", "document", "guardContent", "reasoningContent")
_GEMINI_ALIASES = {"system_instruction": "systemInstruction", "config": "generationConfig"}
_PROVIDER_NAMES = {
    "anthropic": "an Anthropic Messages", "bedrock": "a Bedrock Converse", "openai-responses": "an OpenAI Responses",
    "gemini": "a Gemini generateContent",
}


def sdk_provider(body: dict) -> Optional[str]:
    """Which hosted API a request body is for, or None for a chat-completions / completions body."""
    if "contents" in body and "messages" not in body:
        return "gemini"
    if "input" in body and "messages" not in body and "prompt" not in body:
        return "openai-responses"
    if "messages" not in body:
        return None
    if any(k in body for k in _BEDROCK_KEYS):
        return "bedrock"
    marked = False
    for b in _blocks(body):  # one pass over the blocks (a conversation asks this of every request's history)
        if _bedrock_block(b):
            return "bedrock"
        marked = marked or (isinstance(b, dict) and "cache_control" in b)
    model = body.get("model") if isinstance(body.get("model"), str) else ""
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    if ("anthropic_version" in body or "system" in body or model.startswith("claude")
            or any(isinstance(t, dict) and "input_schema" in t for t in tools) or marked):
        return "anthropic"
    return None


def _blocks(body: dict):
    """Content blocks of ``system`` and of every message (lists only)."""
    system = body.get("system")
    if isinstance(system, list):
        yield from system
    messages = body.get("messages")
    for m in messages if isinstance(messages, list) else ():  # a wrong type is reported by the body's reader
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            yield from content


def _bedrock_block(b: Any) -> bool:
    return isinstance(b, dict) and "type" not in b and any(k in b for k in _BEDROCK_BLOCKS)


def _load_sdk_request(path: str, body: dict, provider: str, settings: Settings) -> Side:
    from promptlint.pysource import layout

    _check_sdk_body(path, body, provider)

    def get(key: str):
        value = body.get(key, body.get(_GEMINI_ALIASES.get(key, ""))) if provider == "gemini" else body.get(key)
        return layout.from_json(value) if value is not None else None

    text = layout.render_text(layout.build("bedrock" if provider == "bedrock" else provider, get))
    if not settings.quiet and provider not in settings._notes:  # per run, not per process (the daemon serves many)
        settings._notes.add(provider)
        print(f"promptlint: note: {path}: {_PROVIDER_NAMES[provider]} request body, rendered as its text in cache-prefix "
              "order (tools, system, messages; blank lines between blocks), not through a chat template",
              file=sys.stderr)
    return _encode_text(path, text, settings, kind="request")


def _check_sdk_body(path: str, body: dict, provider: str) -> None:
    """One-line errors for fields of the wrong type (the layout itself skips what it cannot read)."""
    lists = {"anthropic": ("messages", "tools"), "bedrock": ("messages", "system"), "gemini": ("contents", "tools"),
             "openai-responses": ("tools",)}[provider]
    for key in lists:
        value = body.get(key)
        if value is not None and not isinstance(value, list):
            raise InputError(f"{path}: `{key}` must be a JSON array in {_PROVIDER_NAMES[provider]} request body")
    for key in ("messages", "contents"):
        if key in lists and any(not isinstance(m, dict) for m in body.get(key) or ()):
            raise InputError(f"{path}: every entry of `{key}` must be a JSON object")
    system = body.get("system")
    if provider == "anthropic" and system is not None and not isinstance(system, (str, list)):
        raise InputError(f"{path}: `system` must be a string or an array of content blocks")
    tool_config = body.get("toolConfig")
    if provider == "bedrock" and tool_config is not None and not isinstance(tool_config, dict):
        raise InputError(f"{path}: `toolConfig` must be an object with a `tools` array")
    value = body.get("input")
    if provider == "openai-responses" and not isinstance(value, (str, list)):
        raise InputError(f"{path}: `input` must be a string or an array of input items")
