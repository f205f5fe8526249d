"""sha256 of small texts without loading OpenSSL.

``import hashlib`` loads libcrypto (a few milliseconds), which the daemon's forwarding client
need not pay: it hashes only a socket name, its installation and a stamp of file sizes. The
interpreter's builtin module gives the same digests; large data (tokenizer files) still goes
through hashlib, whose OpenSSL code is faster per byte.
"""

from __future__ import annotations

try:
    from _sha256 import sha256  # CPython 3.11
except ImportError:  # pragma: no cover - CPython 3.12+ names it _sha2; other interpreters: hashlib
    try:
        from _sha2 import sha256  # type: ignore[no-redef]
    except ImportError:
        from hashlib import sha256  # type: ignore[no-redef]

__all__ = ["sha256"]
