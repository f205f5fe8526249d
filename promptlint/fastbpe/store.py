"""Where compact forms live: the user cache ($XDG_CACHE_HOME/promptlint/tokenizers/<sha256>.bpe,
or $PROMPTLINT_FAST_TOKENIZER_DIR/<sha256>.bpe; written through safe_write, read through bounded_io) and the one shipped in the package for the
embedded tokenizer. A tokenizer that has no compact form gets a small note (<sha256>.unfit,
naming the `tokenizers` version) so that no later run attempts it again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterator, List, Optional

from promptlint.base.digest import sha256 as _sha256
from promptlint.doors import bounded_io, safe_write
from promptlint.fastbpe import form

PACKAGED = Path(__file__).resolve().parent.parent / "data" / "cl100k_base.bpe"
_PACKAGED: List[Optional[form.Parts]] = []


DIR_ENV = "PROMPTLINT_FAST_TOKENIZER_DIR"  # another directory for the forms (the test suite shares one per session)


def base() -> str:
    """The directory no link is followed below (safe_write's anchor)."""
    return os.environ.get(DIR_ENV) or os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")


def path_of(sha256: str, suffix: str = ".bpe") -> str:
    if os.environ.get(DIR_ENV):
        return os.path.join(base(), sha256 + suffix)
    return os.path.join(base(), "promptlint", "tokenizers", sha256 + suffix)


_KEPT: Dict[str, form.Parts] = {}  # the one form read ahead (vetting) for the load that follows


def _read(path, keep: bool = False) -> Optional[form.Parts]:
    kept = _KEPT.pop(str(path), None)
    if kept is not None:
        return kept
    try:
        # mapped, not read: the engine reads a few pages of its tables (forms are replaced whole, never rewritten)
        blob, st = bounded_io.map_bytes(path, bounded_io.MAX_TOKENIZER_BYTES)
    except OSError:
        return None
    note, state = _check_note(path, st, form.checksum(blob))
    verified = note is not None and _noted(note) == state
    parts = form.decode(blob, verified=verified)
    if parts is not None and not verified and note is not None:
        _write(note, state.encode("ascii"))
    if keep and parts is not None:
        _KEPT.clear()
        _KEPT[str(path)] = parts
    return parts


# A form's CRC-32 covers all of it (5.7 MB for cl100k_base: ~2.5 ms a run). It is computed once per
# state of the file: a note in the forms' directory, named for the form's path, records the file's
# device, inode, size, mtime and ctime (which no one sets back: any write or metadata change moves
# it) and the checksum that matched; a run that finds the same state maps the form without summing
# it. A form replaced, rewritten, touched or truncated has another state and is summed again.


def _check_note(path, st, said: Optional[int]):
    """(the note's path, the state it must record), or (None, "") for bytes that are not a form."""
    if said is None:
        return None, ""
    name = _sha256(os.fsencode(os.path.abspath(path))).hexdigest()
    state = f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {said}\n"
    return path_of(name, ".checked"), state


def _noted(note: str) -> str:
    try:
        return bounded_io.read_text(note, 256)
    except (OSError, UnicodeDecodeError):
        return ""


def user_form(sha256: str, keep: bool = False) -> Optional[form.Parts]:
    """The intact form in the user cache named for ``sha256`` (``keep``: held for the next read)."""
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        return None
    return _read(path_of(sha256), keep)


def packaged() -> Optional[form.Parts]:
    """The shipped form of the embedded tokenizer (read and checked once per process)."""
    if not _PACKAGED:
        _PACKAGED.append(_read(PACKAGED))
    return _PACKAGED[0]


def candidates(sha256: str, embedded: bool) -> Iterator[form.Parts]:
    """Intact compact forms that may hold ``sha256``'s tokenizer, the shipped one first."""
    if embedded and packaged() is not None:
        yield packaged()
    parts = user_form(sha256)
    if parts is not None:
        yield parts


def save(sha256: str, blob: bytes) -> None:
    _write(path_of(sha256), blob)


def known_unfit(sha256: str) -> bool:
    try:
        note = bounded_io.read_text(path_of(sha256, ".unfit"), 4096)
    except (OSError, UnicodeDecodeError):
        return False
    return note.split("\n", 1)[0] == form.tokenizers_version()


def mark_unfit(sha256: str, reason: str) -> None:
    _write(path_of(sha256, ".unfit"), f"{form.tokenizers_version()}\n{reason}\n".encode("utf-8"))


def _write(path: str, data: bytes) -> None:
    try:  # never through a link below the user's cache directory; a cache that cannot be written only costs time
        safe_write.write_bytes(path, data, anchor=base(), parents=True, private=True)
    except OSError:
        pass
