"""Strict LSP framing on the server's stdin, in front of pygls.

pygls' reader trusts the framing: after `Content-Length: abc` it reads the next message's header
as part of a body and ignores every later message (shutdown included), and it allocates whatever
`Content-Length: 99999999999` asks for. ``StrictStdin`` is a file-like object pygls reads
instead of stdin (it only calls ``readline`` and ``read``): it parses each message's headers
itself, bounds them, checks the body is a JSON object, and hands pygls one canonical frame at a
time. A body that is not a JSON object is answered with a JSON-RPC error and skipped (the framing
is intact); broken framing is answered with a JSON-RPC error and ends the session (EOF to pygls,
exit status 1): once a length is wrong no later message boundary can be trusted.
"""

from __future__ import annotations

import json
from typing import BinaryIO, Optional

MAX_MESSAGE_BYTES = 32 * 1024 * 1024  # a 2 MB document, JSON-escaped, fits many times over
MAX_HEADER_LINE = 1024
MAX_HEADERS = 32

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class FramingError(Exception):
    pass


def read_message(stream: BinaryIO) -> Optional[bytes]:
    """The next message body; None at end of input (also mid-message: the client went away)."""
    length = None
    headers = 0
    while True:
        line = stream.readline(MAX_HEADER_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_HEADER_LINE:
            raise FramingError(f"a header line longer than {MAX_HEADER_LINE} bytes")
        text = line.rstrip(b"\r\n")
        if not text:
            if headers == 0:
                continue  # a stray blank line between messages
            if length is None:
                raise FramingError("a message without a Content-Length header")
            break
        headers += 1
        if headers > MAX_HEADERS:
            raise FramingError(f"more than {MAX_HEADERS} header lines")
        name, sep, value = text.partition(b":")
        if not sep:
            raise FramingError(f"a malformed header line {_show(text)}")
        if name.strip().lower() == b"content-length":
            value = value.strip()
            if not value.isdigit():  # ASCII digits only (bytes.isdigit)
                raise FramingError(f"an invalid Content-Length {_show(value)}")
            length = int(value)
            if length > MAX_MESSAGE_BYTES:
                raise FramingError(f"Content-Length {length} is over the limit of {MAX_MESSAGE_BYTES} bytes")
    body = stream.read(length)
    if len(body) < length:
        return None
    return body


def _show(raw: bytes) -> str:
    text = raw[:60].decode("utf-8", "replace")
    return repr(text + ("..." if len(raw) > 60 else ""))


def frame(payload: dict) -> bytes:
    body = json.dumps(payload).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def error_response(code: int, message: str, msg_id=None) -> bytes:
    return frame({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


class StrictStdin:
    """What pygls reads: validated messages from ``raw``, re-framed one at a time."""

    def __init__(self, raw: BinaryIO, out: BinaryIO):
        self.raw = raw
        self.out = out
        self.status = 0  # 1 once the session ended on broken framing
        self._pending = b""
        self._done = False

    def readline(self, *_args) -> bytes:
        if not self._pending:
            self._pending = self._next_frame()
        i = self._pending.find(b"\n")
        end = len(self._pending) if i == -1 else i + 1
        line, self._pending = self._pending[:end], self._pending[end:]
        return line

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = len(self._pending)
        data, self._pending = self._pending[:n], self._pending[n:]
        return data

    def _next_frame(self) -> bytes:
        while not self._done:
            try:
                body = read_message(self.raw)
            except FramingError as e:
                self._reply(error_response(PARSE_ERROR, f"promptlint server: {e}; closing the connection"))
                self.status, self._done = 1, True
                return b""
            if body is None:
                self._done = True
                return b""
            try:
                message = json.loads(body)
            except (ValueError, RecursionError):
                self._reply(error_response(PARSE_ERROR, "Parse error: the message body is not JSON"))
                continue
            if not isinstance(message, dict):
                self._reply(error_response(INVALID_REQUEST, "Invalid Request: a message must be a JSON object"))
                continue
            return b"Content-Length: %d\r\n\r\n" % len(body) + body
        return b""

    def _reply(self, data: bytes) -> None:
        try:
            self.out.write(data)  # one write call: pygls' own frames never interleave with it
            self.out.flush()
        except (OSError, ValueError):  # the client is gone or stdout closed
            pass
