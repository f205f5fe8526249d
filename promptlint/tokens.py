"""The pinned tokenizer: resolve, verify (sha256), load once per process, encode.

`tokenizers` is imported only when something must actually be tokenized.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from promptlint import bounded_io

EMBEDDED_NAME = "cl100k_base (embedded)"
_EMBEDDED_FILE = Path(__file__).parent / "data" / "cl100k_base.tokenizer.json.gz"


class TokenizerError(Exception):
    """A tokenizer problem that stops the run (exit code 2)."""


@dataclass(frozen=True)
class TokenizerSpec:
    """Where the tokenizer comes from; resolved but not yet loaded."""

    path: Optional[Path]  # tokenizer.json, or None for the embedded default
    sha256: Optional[str]  # expected sha256 (pin), if any
    config_path: Optional[Path] = None  # tokenizer_config.json beside it, if any

    @property
    def embedded(self) -> bool:
        return self.path is None

    @property
    def display(self) -> str:
        return EMBEDDED_NAME if self.path is None else str(self.path)


def resolve(path: Optional[str], sha256: Optional[str] = None) -> TokenizerSpec:
    """Turn a `--tokenizer` value (file or model directory) into a spec.

    A pin without a path pins the embedded tokenizer: it is checked, never ignored."""
    if not path:
        return TokenizerSpec(None, sha256.strip().lower() if sha256 else None)
    p = Path(path)
    config = None
    if p.exists() and not p.is_dir() and not bounded_io.is_regular_file(p):
        raise TokenizerError(f"{p}: not a regular file (a device, FIFO or socket); point the tokenizer at a tokenizer.json file")
    if p.is_dir():
        config = p / "tokenizer_config.json"
        p = p / "tokenizer.json"
        if not p.is_file():
            raise TokenizerError(
                f"{p}: no tokenizer.json in the model directory; point --tokenizer at a tokenizer.json file"
            )
        if not config.is_file():
            config = None
    elif not p.exists():
        raise TokenizerError(f"{p}: tokenizer file not found; fix the `tokenizer` path or pass --tokenizer")
    elif p.name == "tokenizer.json" and (p.parent / "tokenizer_config.json").is_file():
        config = p.parent / "tokenizer_config.json"
    if sha256:
        sha256 = sha256.strip().lower()
    return TokenizerSpec(p, sha256 or None, config)


def file_stamp(st: os.stat_result) -> List[int]:
    """What must match for a memoised sha256 to be trusted. Size and mtime alone can be kept by an
    in-place edit (`touch -r`, or a same-size write within the clock's resolution); the inode
    change time cannot be set from user space, and device + inode catch a replaced file."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def file_sha256(path: Path) -> str:
    return bounded_io.sha256_file(path, bounded_io.MAX_TOKENIZER_BYTES)


@dataclass
class Encoding:
    ids: List[int]
    offsets: List[Tuple[int, int]]  # character span of each token in the text


@dataclass
class LoadedTokenizer:
    spec: TokenizerSpec
    sha256: str
    _tok: object = field(repr=False)
    special_tokens: Dict[str, str] = field(default_factory=dict)  # bos_token -> "<s>", ...
    _added: Optional[list] = field(default=None, repr=False)

    def encode(self, text: str, add_special_tokens: bool = False) -> Encoding:
        try:
            enc = self._tok.encode(text, add_special_tokens=add_special_tokens)
        except Exception as e:  # tokenizers raises plain Exception ("Missing [UNK] token ...")
            raise self._cannot_encode(e) from None
        return Encoding(list(enc.ids), [tuple(o) for o in enc.offsets])

    def encode_batch(self, texts: List[str], add_special_tokens: bool = False) -> List[Encoding]:
        """Several texts at once: the Rust side spreads them over every core."""
        try:
            encs = self._tok.encode_batch(texts, add_special_tokens=add_special_tokens)
        except Exception as e:
            raise self._cannot_encode(e) from None
        return [Encoding(list(e.ids), [tuple(o) for o in e.offsets]) for e in encs]

    def _cannot_encode(self, e: Exception) -> "TokenizerError":
        return TokenizerError(
            f"{self.spec.display}: the tokenizer cannot encode the prompt ({e}); "
            "check that it is the model's complete tokenizer.json"
        )

    def token_text(self, token_id: Optional[int]) -> str:
        if token_id is None:
            return ""
        return self._tok.decode([token_id], skip_special_tokens=False)

    def id_to_token(self, token_id: int) -> Optional[str]:
        return self._tok.id_to_token(token_id)

    def added_tokens(self, special_only: bool = False) -> Dict[str, int]:
        """Added-token texts and their ids (what the tokenizer matches as one token in any text)."""
        if self._added is None:
            self._added = [(t.content, i, bool(t.special)) for i, t in self._tok.get_added_tokens_decoder().items()]
        return {text: i for text, i, special in self._added if special or not special_only}


_LOADED: Dict[Tuple[Optional[str], str], LoadedTokenizer] = {}
_EMBEDDED_SHA256: List[str] = []


def _embedded_json() -> bytes:
    import gzip  # only for the embedded tokenizer

    return gzip.decompress(_EMBEDDED_FILE.read_bytes())


def embedded_sha256() -> str:
    """sha256 of the embedded tokenizer.json (decompressed), as a pin names it."""
    if not _EMBEDDED_SHA256:
        _EMBEDDED_SHA256.append(hashlib.sha256(_embedded_json()).hexdigest())
    return _EMBEDDED_SHA256[0]


def check_pin(spec: TokenizerSpec, sha: str) -> None:
    """Stop the run when the tokenizer in use is not the pinned one."""
    if spec.sha256 and spec.sha256 != sha:
        raise TokenizerError(
            f"{spec.display}: the tokenizer changed: expected sha256 {spec.sha256}, found {sha}; re-pin it or restore it"
        )


def load(spec: TokenizerSpec) -> LoadedTokenizer:
    """Load (once per process) and verify the tokenizer named by ``spec``."""
    if spec.path is None:
        raw = _embedded_json()
        sha = embedded_sha256()
        check_pin(spec, sha)
        key = (None, sha)
        if key not in _LOADED:
            _LOADED[key] = LoadedTokenizer(spec, sha, _from_str(raw.decode("utf-8"), spec))
        return _LOADED[key]
    sha = _cached_sha256(spec.path)
    check_pin(spec, sha)
    key = (str(spec.path.resolve()), sha)
    if key not in _LOADED:
        try:
            text = bounded_io.read_text(spec.path, bounded_io.MAX_TOKENIZER_BYTES)
        except (OSError, UnicodeDecodeError):
            raise TokenizerError(f"{spec.path}: not a tokenizer.json file (not UTF-8 text)") from None
        tok = LoadedTokenizer(spec, sha, _from_str(text, spec))
        tok.special_tokens = _special_tokens(spec.config_path)
        _LOADED[key] = tok
    return _LOADED[key]


_SHA256: Dict[Tuple[str, int, int], str] = {}


def _cached_sha256(path: Path) -> str:
    """tokenizer_file_sha256 memoised per process on (path, file_stamp), so a long-running process
    (the language server) re-lints without re-hashing a multi-megabyte tokenizer.json."""
    try:
        st = path.stat()
    except OSError as e:
        raise _unreadable(path, e) from None
    key = (str(path.resolve()), *file_stamp(st))
    if key not in _SHA256:
        _SHA256[key] = tokenizer_file_sha256(path)
    return _SHA256[key]


def tokenizer_file_sha256(path: Path) -> str:
    """The sha256 of a tokenizer file; ``TokenizerError`` when it cannot be read."""
    try:
        return file_sha256(path)
    except OSError as e:
        raise _unreadable(path, e) from None


def _unreadable(path: Path, e: OSError) -> TokenizerError:
    return TokenizerError(f"{path}: cannot read the tokenizer ({e.strerror or e}); check the path")


def _from_str(text: str, spec: TokenizerSpec):
    from tokenizers import Tokenizer  # lazy: only when something must be tokenized

    try:
        return Tokenizer.from_str(text)
    except Exception as e:  # tokenizers raises a bare Exception; diagnose only on failure
        try:
            json.loads(text)
        except ValueError:
            raise TokenizerError(
                f"{spec.display}: not a tokenizer.json file (invalid or truncated JSON); restore it from the model repository"
            ) from None
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise TokenizerError(f"{spec.display}: not a Hugging Face tokenizer.json ({first})") from None


SPECIAL_TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def _special_tokens(config_path: Optional[Path]) -> Dict[str, str]:
    """Special-token strings from tokenizer_config.json (plain strings or {"content": ...})."""
    if config_path is None:
        return {}
    try:
        data = json.loads(bounded_io.read_text(config_path, bounded_io.MAX_TOKENIZER_BYTES))
    except (OSError, ValueError, UnicodeDecodeError):
        raise TokenizerError(f"{config_path}: invalid tokenizer_config.json (not readable JSON)") from None
    return special_tokens_of(data) if isinstance(data, dict) else {}


def special_tokens_of(config: Dict) -> Dict[str, str]:
    """The named special-token strings of a tokenizer_config.json mapping, as transformers passes them."""
    out = {}
    for key in SPECIAL_TOKEN_KEYS:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            out[key] = value
    return out


def env_tokenizer_threads() -> None:
    # The Rust thread pool is pointless for short single encodes; avoid fork warnings in workers.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
