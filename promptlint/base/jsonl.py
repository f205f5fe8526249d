"""JSON Lines input for the operator commands (`audit` traces and KV events, `tokenize --jsonl`).

A line ends at ``\\n`` and nowhere else: a JSON string may hold raw U+2028, U+0085 or
U+001C-U+001E (``str.splitlines`` would cut the line there). Each line is decoded and parsed
on its own, so one bad line gets an error naming its line number while the lines before it
are already processed. Raw control characters inside strings are accepted (many loggers
write them unescaped); NaN and Infinity are parsed as Python does and refused by the field
checks that need finite numbers. Standard library only.
"""

from __future__ import annotations

import json
from typing import IO, Any, Iterable, Iterator, Optional, Tuple, Union

from promptlint.doors.bounded_io import MAX_INPUT_BYTES


class LineError(ValueError):
    """One line is unusable; the message says what is wrong (the caller adds ``file:line:``)."""


_DECODER = json.JSONDecoder(strict=False)  # stateless: decode() keeps nothing between calls
MAX_LINE_BYTES = MAX_INPUT_BYTES  # one line (a row, a request body) is at most this long


def numbered_lines(stream: Union[IO[bytes], Iterable[Union[bytes, str]]]) -> Iterator[Tuple[int, Any]]:
    """``(line number, line)`` for every non-blank line. Read binary streams: a binary file
    splits at ``\\n`` only (a text-mode file would also split at a lone ``\\r``). A line longer
    than ``MAX_LINE_BYTES`` is never held in memory: it comes as a :class:`LineError`, which
    :func:`loads` raises, and reading goes on after it."""
    readline = getattr(stream, "readline", None)
    if readline is None:
        for n, line in enumerate(stream, 1):
            if line.strip():
                yield n, line
        return
    cap = MAX_LINE_BYTES
    n = 0
    while True:
        line = readline(cap + 1)
        if not line:
            return
        n += 1
        if len(line) > cap:
            end = b"\n" if isinstance(line, bytes) else "\n"
            while line and not line.endswith(end):  # skip the rest of the line, a chunk at a time
                line = readline(1 << 20)
            yield n, LineError(f"line longer than {cap:,} bytes; split the record")
        elif not line.isspace():  # what strip() leaves is empty exactly then, without copying the line
            yield n, line


def loads(line: Union[bytes, str, LineError], first: bool = False) -> Any:
    """The JSON value of one line, or :class:`LineError` (bad UTF-8, bad JSON, too deep, too long)."""
    if isinstance(line, LineError):
        raise line
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise LineError(f"not UTF-8 (byte 0x{line[e.start]:02x} at byte {e.start + 1} of the line); "
                            "write the file as UTF-8") from None
    if first and line.startswith("\ufeff"):
        line = line[1:]  # a byte-order mark some editors put at the start of a file
    try:
        if line.startswith("\ufeff"):
            return json.loads(line, strict=False)  # refused with its own message
        return _DECODER.decode(line)  # what json.loads(line, strict=False) does, without a decoder made per line
    except RecursionError:
        raise LineError("JSON nested too deeply to read") from None
    except ValueError as e:
        msg = getattr(e, "msg", str(e))
        col = getattr(e, "colno", None)
        raise LineError(f"invalid JSON ({msg}{f' at column {col}' if col else ''})") from None


def lone_surrogate(text: str) -> Optional[int]:
    """Index of the first lone surrogate (U+D800-U+DFFF) in ``text``, else None. Such a string
    is not Unicode text: it cannot be encoded, tokenized or written to a UTF-8 stream."""
    if text.isascii():  # the common case, checked in C
        return None
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as e:
        return e.start


def surrogate_message(text: str, what: str) -> Optional[str]:
    """A one-line reason when ``text`` holds a lone surrogate, else None."""
    i = lone_surrogate(text)
    if i is None:
        return None
    return (f"{what} holds a lone surrogate (\\u{ord(text[i]):04x} at character {i}), which is not Unicode text; "
            "fix the writer (a UTF-16 string cut in the middle of a pair?)")
