"""Reading the files a template pulls in (includes, a model directory's templates): untrusted paths.

A pull request can commit a symlink (`env.txt -> /proc/self/environ`, `etc -> /etc`) or point a
name at a device or FIFO. Every such read goes through ``read_confined``:

- the real path (links resolved) must lie inside one of the allowed roots;
- then ``promptlint.doors.bounded_io`` reads it: a regular file only (a FIFO never blocks, `/dev/zero`
  is never read), at most ``limit`` bytes whatever ``stat`` says.

A refusal names the file, never its content.
"""

from __future__ import annotations

import os
from typing import Iterable, Optional, Sequence, Tuple

from promptlint.doors.bounded_io import MAX_FILE_BYTES as MAX_TEMPLATE_BYTES  # shared by a template and all it pulls in


class FileRefused(Exception):
    """A file promptlint will not read (outside the roots, not a regular file, too large, not text)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def real_roots(paths: Iterable) -> Tuple[str, ...]:
    out = []
    for p in paths:
        real = os.path.realpath(os.fspath(p))
        if real not in out:
            out.append(real)
    return tuple(out)


def inside(real: str, roots: Sequence[str]) -> bool:
    """Whether the (already resolved) path ``real`` is one of ``roots`` or below one."""
    for root in roots:
        try:
            if os.path.commonpath([real, root]) == root:
                return True
        except ValueError:  # different drives (Windows)
            continue
    return False


def read_confined(
    path: str,
    roots: Optional[Sequence[str]],
    limit: int,
    what: str,
    too_large: Optional[str] = None,
    roots_name: str = "the project",
) -> bytes:
    """At most ``limit`` bytes of the regular file ``path``, whose real path is inside ``roots``
    (any root when None), read through ``promptlint.doors.bounded_io``. Raises ``FileRefused`` (E002
    outside the roots, E005 otherwise; ``too_large`` is the message for a file over ``limit``).
    ``what`` names the file in messages."""
    from promptlint.doors import bounded_io
    from promptlint.base.paths import vcs_metadata

    real = os.path.realpath(path)
    if roots is not None and not inside(real, roots):
        raise FileRefused(
            "E002",
            f"{what} resolves outside {roots_name} (a symbolic link leads out); refused, nothing was read",
        )
    if roots is not None and vcs_metadata(real, roots):
        raise FileRefused(
            "E002", f"{what} is version-control metadata (it may hold the CI's credentials); refused, nothing was read"
        )
    try:
        return bounded_io.read_bytes(real, limit)
    except bounded_io.NotTracked as e:
        raise FileRefused("E002", f"{what} is {e}") from None
    except bounded_io.InputRefused as e:
        if "larger than" in str(e):
            raise FileRefused("E005", too_large or f"{what} is larger than {limit:,} bytes") from None
        raise FileRefused("E005", f"{what}: {e}") from None
    except OSError as e:
        raise FileRefused("E005", f"{what} cannot be read ({e.strerror or e})") from None


def decode_template(data: bytes, what: str) -> str:
    """UTF-8 text of a template file, or ``FileRefused`` (E005) for binary or non-UTF-8 bytes."""
    if b"\x00" in data:
        raise FileRefused("E005", f"{what} is a binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise FileRefused("E005", f"{what} is not UTF-8 text (invalid byte on its line {line}); save it as UTF-8") from None


class Budget:
    """Bytes a template and everything it pulls in may read together (the file size cap)."""

    def __init__(self, total: int = MAX_TEMPLATE_BYTES):
        self.total = total
        self.used = 0

    @property
    def left(self) -> int:
        return max(self.total - self.used, 0)

    def charge(self, n: int) -> None:
        self.used += n
