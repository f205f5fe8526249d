"""Rendered prompt text -> chat messages, as the prompt-file runtimes split it, and the messages
framed as the model sees them.

- Prompty (microsoft/prompty, `PromptyChatParser.parse`): a line that is only a role,
  `^\\s*#?\\s*(assistant|function|system|user|tools)([args])?\\s*:\\s*$` (any case), starts a
  message; the lines up to the next one, joined with "\\n" (not stripped), are its content; text
  before the first role line is a system message; a role line with no lines after it adds nothing.
- promptflow (`parse_chat`): the text is split on `^\\s*#?\\s*(system|user|assistant|function|tool)\\s*:\\s*\\n`
  (any case); each message's content is stripped.
- Semantic Kernel: `<message role="...">...</message>` elements; the text between them, when not
  blank, is a user message.

The messages are then framed in ChatML (chat_framing: `<|im_start|>role\\n` content `<|im_end|>\\n`,
and `<|im_start|>assistant\\n` for the reply), the framing most open-weight templates use: the
served model's own chat template decides the real text, so figures are approximate, as
`promptlint diff`'s are without a chat template.

Splitting works on spans of the rendered text, so each character of a message's content keeps
the template line it came from (render chunks are cut at the spans; the framing is attributed to
the role line that produced it).
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from promptlint.base import lazy_re

PROMPTY = lazy_re.compile(r"(?i)^\s*#?\s*(assistant|function|system|user|tools)(\[[^\]\n]*\])?\s*:\s*$")
PROMPTFLOW = lazy_re.compile(r"(?im)^\s*#?\s*(system|user|assistant|function|tool)\s*:\s*\n")
SK_MESSAGE = lazy_re.compile(r"<message\s+role\s*=\s*[\"'](\w{1,40})[\"']\s*>(.*?)</message>", re.S)

# (role, content start, content end, where the role marker starts) in the rendered text
Message = Tuple[str, int, int, int]


def prompty_messages(text: str) -> List[Message]:
    out: List[Message] = []
    role, marker = "system", 0
    first = last = None
    offset = 0
    for line in text.split("\n"):
        end = offset + len(line)
        if PROMPTY.match(line):
            if first is not None:
                out.append((role, first, last, marker))
            role, marker, first, last = PROMPTY.match(line).group(1).lower(), offset, None, None
        else:
            first = offset if first is None else first
            last = end
        offset = end + 1
    if first is not None:
        out.append((role, first, last, marker))
    return out


def promptflow_messages(text: str) -> List[Message]:
    out: List[Message] = []
    marks = list(PROMPTFLOW.finditer(text))
    for i, m in enumerate(marks):
        start, end = m.end(), marks[i + 1].start() if i + 1 < len(marks) else len(text)
        start, end = _strip(text, start, end)
        out.append((m.group(1).lower(), start, end, m.start()))
    return out


def sk_messages(text: str) -> List[Message]:
    out: List[Message] = []
    at = 0
    for m in SK_MESSAGE.finditer(text):
        s, e = _strip(text, at, m.start())
        if s < e:
            out.append(("user", s, e, s))
        out.append((m.group(1).lower(), m.start(2), m.end(2), m.start()))
        at = m.end()
    s, e = _strip(text, at, len(text))
    if s < e:
        out.append(("user", s, e, s))
    return out


SPLITTERS = {"prompty": prompty_messages, "promptflow": promptflow_messages, "semantic-kernel": sk_messages}


def _strip(text: str, start: int, end: int) -> Tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def frame(style: str, text: str, chunks: List[tuple], generation_prompt: bool = True) -> Tuple[str, List[tuple]]:
    """(the framed text, its chunks (length, template, line, is_literal)) of a render ``text`` made
    of ``chunks``, split into messages the way ``style`` does."""
    messages = SPLITTERS[style](text)
    spans = _chunk_spans(chunks)
    out_text: List[str] = []
    out_chunks: List[tuple] = []

    def framing(piece: str, at: int) -> None:
        template, line = _origin(spans, text, at)
        out_text.append(piece)
        out_chunks.append((len(piece), template, line, True))

    for role, start, end, marker in messages:
        framing(f"<|im_start|>{role}\n", marker)
        for s, e, template, line, literal in _cut(spans, text, start, end):
            out_text.append(text[s:e])
            out_chunks.append((e - s, template, line, literal))
        framing("<|im_end|>\n", max(end - 1, start))
    if generation_prompt:
        framing("<|im_start|>assistant\n", max(len(text) - 1, 0))
    return "".join(out_text), out_chunks


def _chunk_spans(chunks: List[tuple]) -> List[tuple]:
    spans, at = [], 0
    for n, template, line, literal in chunks:
        spans.append((at, at + n, template, line, literal))
        at += n
    return spans


def _origin(spans: List[tuple], text: str, at: int) -> Tuple[str, int]:
    for s, e, template, line, literal in spans:
        if s <= at < e:
            return template, line + (text.count("\n", s, at) if literal else 0)
    s, e, template, line, literal = spans[-1] if spans else (0, 0, "", 1, True)
    return template, line


def _cut(spans: List[tuple], text: str, start: int, end: int):
    """The pieces of the chunks covering [start, end); a literal piece cut inside its chunk starts
    on the chunk's line plus the newlines before the cut."""
    for s, e, template, line, literal in spans:
        if e <= start or s >= end:
            continue
        a, b = max(s, start), min(e, end)
        yield a, b, template, line + (text.count("\n", s, a) if literal else 0), literal


def style_of(source: str) -> Optional[str]:
    """The role-line style of a template that is not a `.prompty` file: promptflow's when its first
    line that is not blank or a Jinja comment is a role line (`system:`, `# system:`), Semantic
    Kernel's when it writes `<message role="...">`; None for a plain prompt."""
    if re.search(r"<message\s+role\s*=", source):
        return "semantic-kernel"
    body = re.sub(r"\{#.*?#\}", "", source, count=50, flags=re.S).lstrip()
    first = body.split("\n", 1)[0]
    if re.fullmatch(r"#?\s*(system|user|assistant)\s*:\s*", first, flags=re.I):
        return "promptflow"
    return None
