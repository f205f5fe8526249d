"""The tokenizer pool: every parsed tokenizer a run holds, and the one policy that lets them go.

It holds, by the tokenizer.json content's sha256 (copies, symlinks and hard links share a parse):
the parsed tokenizers, the ``LoadedTokenizer`` around each per file and tokenizer_config.json,
the engine encoders built from them (promptlint.tokenization.engine_tokenize: llama.cpp's), and the copies of
the embedded tokenizer with a template's special texts added (promptlint.chat.special). A
release drops a tokenizer and everything built from it together.

The release policy is the pool's: a *transient* pool (a `check` command) forgets a tokenizer when
the driver says no remaining file needs it; a *resident* pool (the daemon, the language server)
keeps what it parsed for the next request within a memory budget — at most ``RESIDENT_COUNT``
tokenizers and ``RESIDENT_BYTES`` of tokenizer.json text between them (a parsed tokenizer takes
12-19 times its JSON's size: ~400 MB at most), the least recently used going first.

The ``Workspace`` installs its pool for the length of a run (``installed``) and always restores
the one before; code below the driver asks for ``active()``. Outside any workspace (a library
call, a test calling ``tokens.load``) the process's transient pool answers.
"""

from __future__ import annotations

import contextvars
from collections import OrderedDict
from typing import Callable, Dict, Optional, Tuple

RESIDENT_COUNT = 4
RESIDENT_BYTES = 24 * 1024 * 1024
MAX_SPECIAL_COPIES = 4  # copies of the embedded tokenizer with a template's special texts (a full parse is ~25 MB; the engine's own copy far less)


class TokenizerPool:
    def __init__(self, resident: bool = False, max_count: int = RESIDENT_COUNT, max_bytes: int = RESIDENT_BYTES):
        self.resident = resident
        self.max_count, self.max_bytes = max_count, max_bytes
        self.parsed: Dict[str, object] = {}  # sha256 -> tokenizers.Tokenizer (insertion order: least recently used first)
        self.loaded: Dict[Tuple, object] = {}  # (sha256, file, config, config stamp) -> LoadedTokenizer
        self.sizes: Dict[str, int] = {}  # sha256 -> bytes of its tokenizer.json, for the byte budget
        self.encoders: Dict[Tuple[str, str], object] = {}  # (sha256, engine) -> an engine's encoder
        self.copies: "OrderedDict[Tuple[str, ...], object]" = OrderedDict()  # special texts -> embedded copy
        self.base_json: Dict[str, str] = {}  # the embedded tokenizer's serialization, for its copies
        self.parses = 0  # tokenizer.json texts parsed for this pool (workers' parses included)
        self.unvetted_allowed = False  # a forked child under a deadline may parse unvetted tokenizers

    # ------------------------------------------------------------------ holding

    def parsed_for(self, sha: str, parse: Callable[[], Tuple[object, int]]) -> object:
        """The parse of ``sha``, made by ``parse() -> (tokenizer, bytes of its JSON)`` when not held;
        marked most recently used."""
        if sha in self.parsed:
            self.parsed[sha] = self.parsed.pop(sha)
            return self.parsed[sha]
        tokenizer, size = parse()
        self.parsed[sha] = tokenizer
        self.sizes[sha] = size
        self.parses += 1
        if self.resident:
            self._evict(keep=sha)
        return tokenizer

    def loaded_for(self, key: Tuple, make: Callable[[], object]) -> object:
        if key not in self.loaded:
            self.loaded[key] = make()
        sha = key[0]
        if sha in self.parsed:  # most recently used
            self.parsed[sha] = self.parsed.pop(sha)
        return self.loaded[key]

    def encoder(self, sha: str, engine: str, build: Callable[[], object]) -> object:
        key = (sha, engine)
        if key not in self.encoders:
            self.encoders[key] = build()
        return self.encoders[key]

    def special_copy(self, texts: Tuple[str, ...], build: Callable[[], object]) -> object:
        if texts in self.copies:
            self.copies.move_to_end(texts)
            return self.copies[texts]
        self.copies[texts] = build()
        while len(self.copies) > MAX_SPECIAL_COPIES:
            self.copies.popitem(last=False)
        return self.copies[texts]

    def serialized(self, sha: str, make: Callable[[], str]) -> str:
        """The JSON of the embedded tokenizer ``sha`` (its copies are parsed from it): made once."""
        if sha not in self.base_json:
            self.base_json.clear()
            self.base_json[sha] = make()
        return self.base_json[sha]

    # ------------------------------------------------------------------ letting go

    def release(self, sha: str) -> None:
        """No remaining file of this run needs ``sha``: a transient pool forgets it (objects handed
        out stay usable; the memory goes when they do); a resident one keeps it within its budget."""
        if self.resident:
            self._evict()
        else:
            self._forget(sha)

    def _forget(self, sha: str) -> None:
        self.parsed.pop(sha, None)
        self.sizes.pop(sha, None)
        for key in [k for k in self.loaded if k[0] == sha]:
            del self.loaded[key]
        for key in [k for k in self.encoders if k[0] == sha]:
            del self.encoders[key]

    def _evict(self, keep: Optional[str] = None) -> None:
        """Drop the least recently used parses (never ``keep``) until the budget holds."""
        while len(self.parsed) > 1 and (len(self.parsed) > self.max_count or sum(self.sizes.values()) > self.max_bytes):
            self._forget(next(s for s in self.parsed if s != keep))

    def held(self) -> int:
        return len(self.parsed)


_DEFAULT = TokenizerPool()  # outside any Workspace: transient, like a `check` run's
# (the pool, whether variants are encoded in windows): the Workspace's while it checks
_ACTIVE: "contextvars.ContextVar[Optional[Tuple[TokenizerPool, bool]]]" = contextvars.ContextVar("promptlint_tokenizer_pool",
                                                                                              default=None)


def active() -> TokenizerPool:
    """The pool of the run in progress (the Workspace's), else the process's transient one."""
    current = _ACTIVE.get()
    return current[0] if current is not None else _DEFAULT


def windowed() -> bool:
    """Are variants encoded in windows around their edit (promptlint.tokenization.window_encode)? The
    Workspace's choice (PROMPTLINT_FULL_ENCODE=1, read by the front end, says no); outside one: yes."""
    current = _ACTIVE.get()
    return current[1] if current is not None else True


class installed:
    """``with installed(pool):`` — ``pool`` answers ``active()`` (and ``windowed``: ``windowed()``)
    until the block ends, then the one before."""

    def __init__(self, pool: TokenizerPool, windowed: bool = True):
        self.pool, self.windowed = pool, windowed

    def __enter__(self) -> TokenizerPool:
        self.token = _ACTIVE.set((self.pool, self.windowed))
        return self.pool

    def __exit__(self, *exc) -> bool:
        _ACTIVE.reset(self.token)
        return False
