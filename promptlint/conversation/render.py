"""A request body's prompt as its provider sees it: text, token ids, and (for explicit caching)
where each cache breakpoint closes the prefix, in tokens and in content blocks.

Chat Completions bodies go through the chat template when one is given (``--chat-template``, or
``--tokenizer MODEL_DIR``), else through the documented approximate framing
(``promptlint.operators.chat_framing``); hosted-API bodies through their cache-prefix layout
(``promptlint.pysource.layout``: tools, system, messages), as `promptlint diff` renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from promptlint.conversation import shapes
from promptlint.operators import captured, chat_framing
from promptlint.operators.captured import InputError, Settings
from promptlint.tokenization import window_encode
from promptlint.tokenization.tokens import Encoding


@dataclass
class Rendered:
    text: str
    ids: List[int]
    blocks: int = 0  # content blocks of the layout (the unit of Anthropic's lookback)
    # (block index, token position where the prefix it closes ends, its length in characters)
    # per breakpoint, in order
    breakpoints: List[tuple] = field(default_factory=list)
    framing: Optional[str] = None  # "chatml" (approximate), "template", "layout"
    offsets: List[tuple] = field(default_factory=list)  # each token's character span in the text
    # the approximate chat framing, kept so the next request extends this text rather than
    # framing its whole history again: the messages' JSON text, how many, where the tools' block
    # ends and where the generation prompt starts
    wire: str = ""
    messages: int = 0
    head_end: int = 0
    body_end: int = 0


def render(body: Dict[str, Any], kind: str, settings: Settings, tok, base: Optional[Rendered] = None,
           wire: Optional[str] = None) -> Rendered:
    """The body's prompt; InputError (one line, no path) for a body its renderer refuses. With
    ``base`` (a render this one mostly repeats: the previous request), only the window where the
    texts differ is tokenized (``promptlint.tokenization.window_encode``: the same ids as a whole
    encode), and a chat body that repeats the base's messages frames only the messages after them.
    ``wire``: the body's messages as ``shapes.messages_json`` wrote them, when already made."""
    if kind == "chat":
        return _chat(body, settings, tok, base, wire)
    from promptlint.operators.captured import _GEMINI_ALIASES
    from promptlint.pysource import layout

    def get(key: str):
        value = body.get(key, body.get(_GEMINI_ALIASES.get(key, ""))) if kind == "gemini" else body.get(key)
        return layout.from_json(value) if value is not None else None

    lay = layout.build("bedrock" if kind == "bedrock" else kind, get)
    text = layout.render_text(lay)
    enc = _encode(tok, text, base)
    ids = enc.ids
    points = []
    whole = Rendered(text, ids, offsets=enc.offsets)
    for block, _bp in lay.breakpoints:
        upto = "".join(p if isinstance(p, str) else "" for p in lay.parts(block))
        points.append((block, len(_encode(tok, upto, whole).ids) if upto != text else len(ids), len(upto)))
    return Rendered(text, ids, len(lay.blocks), points, "layout", enc.offsets)


def _encode(tok, text: str, base: Optional[Rendered]):
    if base is None or not base.offsets:
        return tok.encode(text)
    return window_encode.encode_variant(tok, base.text, Encoding(base.ids, base.offsets), text, False)


def _chat(body: Dict[str, Any], settings: Settings, tok, base: Optional[Rendered], wire: Optional[str]) -> Rendered:
    if captured._chat_template_of(settings) is not None:
        text = captured._render_chat_request("request", body, settings)
        enc = _encode(tok, text, base)
        return Rendered(text, enc.ids, framing="template", offsets=enc.offsets)
    messages = body.get("messages")
    if wire is None:
        wire = shapes.messages_json(messages) if isinstance(messages, list) else ""
    try:
        text = None
        if base is not None and base.framing == chat_framing.NAME and shapes.extends(base.wire, base.messages, wire):
            # the base's messages come back as sent: frame the new ones only (the same text as a whole framing)
            head, pieces, tail = chat_framing.parts(body, base.messages)
            if head == base.text[:base.head_end]:
                text = base.text[:base.body_end] + "".join(pieces) + tail
        if text is None:
            head, pieces, tail = chat_framing.parts(body)
            text = head + "".join(pieces) + tail
    except chat_framing.BodyError as e:
        raise InputError(f"not a usable chat-completions request body: {e}") from None
    enc = _encode(tok, text, base)
    return Rendered(text, enc.ids, framing=chat_framing.NAME, offsets=enc.offsets, wire=wire,
                    messages=len(messages), head_end=len(head), body_end=len(text) - len(tail))


def holds_entry(text: str, chars: int, base: str) -> bool:
    """Whether ``text`` repeats the first ``chars`` characters of ``base`` (a cached entry) up to a
    block boundary: the provider caches whole blocks, so an entry is read when its blocks come
    back unchanged, even where the joined text's tokens merge across the boundary."""
    if chars > len(text) or text[:chars] != base[:chars]:
        return False
    from promptlint.pysource.layout import SEPARATOR

    return chars == len(text) or text.startswith(SEPARATOR, chars)
