"""The pinned tokenizer: resolve, verify (sha256), load (one parse per content while held), encode.

`tokenizers` is imported only when something must actually be tokenized.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from promptlint.doors import bounded_io

EMBEDDED_NAME = "cl100k_base (embedded)"
_EMBEDDED_FILE = Path(__file__).parent.parent / "data" / "cl100k_base.tokenizer.json.gz"


class TokenizerError(Exception):
    """A tokenizer problem that stops the run (exit code 2)."""


class TokenizerUnvetted(Exception):
    """An unpinned tokenizer (a model directory's own tokenizer.json, or a configured one without its
    pin) has regexes outside the known families' and this process may not run them
    (promptlint.tokenization.tokenizer_vetting); the file's problem (an E-finding)."""


class TokenizerCrashed(Exception):
    """The tokenizer's native code panicked on this file's prompt (a Rust ``PanicException``, a
    ``BaseException`` that no ``except Exception`` would stop); the file's problem (an E-finding)."""


class BudgetExceeded(Exception):
    """The file's analysis went over its budget of time or tokens encoded (an E006 finding)."""


class PromptNotText(Exception):
    """A rendered prompt no tokenizer (and no server) takes: a lone surrogate, which a `\\ud800`
    escape in a samples or tokenizer_config.json string, or `"%c"|format(0xd800)` in a template,
    puts there. The file's problem (an E-finding), not the tokenizer's."""


def _not_text(texts) -> Optional[PromptNotText]:
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            return PromptNotText(
                f"the rendered prompt is not valid Unicode text (a lone surrogate {text[e.start]!r} at character "
                f"{e.start:,}); a `\\u` escape in the samples file or tokenizer_config.json, or the template, put it there"
            )
        except (AttributeError, TypeError):
            continue
    return None


@dataclass(frozen=True)
class TokenizerSpec:
    """Where the tokenizer comes from; resolved but not yet loaded."""

    path: Optional[Path]  # tokenizer.json, or None for the embedded default
    sha256: Optional[str]  # expected sha256 (pin), if any
    config_path: Optional[Path] = None  # tokenizer_config.json beside it, if any
    vet: bool = False  # untrusted (a directory's own, or unpinned): unknown regexes only where a deadline can stop them

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
    """Token ids and each token's character span in the encoded text."""

    ids: List[int]
    offsets: List[Tuple[int, int]]  # character span of each token in the text


@dataclass
class LoadedTokenizer:
    """A parsed tokenizer with the spec it was loaded for and its configuration's special tokens."""

    spec: TokenizerSpec
    sha256: str
    _tok: object = field(repr=False)
    special_tokens: Dict[str, str] = field(default_factory=dict)  # bos_token -> "<s>", ...
    _added: Optional[list] = field(default=None, repr=False)
    # a resident pool's encodings remembered between requests (promptlint.tokenization.encode_memo); None: none
    memo: Optional[object] = field(default=None, repr=False, compare=False)

    def encode(self, text: str, add_special_tokens: bool = False) -> Encoding:
        memo = self.memo
        if memo is not None:
            hit = memo.get(text, add_special_tokens)
            if hit is not None:
                _charge(len(hit[0]))
                return Encoding(*hit)
        try:
            enc = self._tok.encode(text, add_special_tokens=add_special_tokens)
        except Exception as e:  # tokenizers raises plain Exception ("Missing [UNK] token ...")
            raise _not_text([text]) or self._cannot_encode(e) from None
        except BaseException as e:
            raise self._crashed(e) from None
        ids, offsets = enc.ids, enc.offsets
        _charge(len(ids))
        if offsets and type(offsets[0]) is not tuple:  # tokenizers and the fast engine give tuples already
            offsets = [tuple(o) for o in offsets]
        out = Encoding(ids if type(ids) is list else list(ids), offsets if type(offsets) is list else list(offsets))
        if memo is not None:
            memo.put(text, add_special_tokens, out.ids, out.offsets)
        return out

    def encode_batch(self, texts: List[str], add_special_tokens: bool = False) -> List[Encoding]:
        """Several texts at once: the Rust side spreads them over every core."""
        memo = self.memo
        out: List[Optional[Encoding]] = [None] * len(texts)
        if memo is not None:
            for k, text in enumerate(texts):
                hit = memo.get(text, add_special_tokens)
                if hit is not None:
                    out[k] = Encoding(*hit)
        todo = [k for k, e in enumerate(out) if e is None]
        if todo:
            batch = texts if len(todo) == len(texts) else [texts[k] for k in todo]
            try:
                encs = self._tok.encode_batch(batch, add_special_tokens=add_special_tokens)
            except Exception as e:
                raise _not_text(batch) or self._cannot_encode(e) from None
            except BaseException as e:
                raise self._crashed(e) from None
            for k, e in zip(todo, encs):
                out[k] = Encoding(list(e.ids), [tuple(o) for o in e.offsets])
                if memo is not None:
                    memo.put(texts[k], add_special_tokens, out[k].ids, out[k].offsets)
        _charge(sum(len(e.ids) for e in out))
        return out  # type: ignore[return-value]

    def expect(self, chars: int) -> None:
        """This process (or each worker forked from it) will encode at least ``chars`` characters: an
        engine that switches to another model past some volume builds it now (promptlint.fastbpe.engine)."""
        expect = getattr(self._tok, "expect", None)
        if expect is not None:
            expect(chars)

    def _crashed(self, e: BaseException) -> BaseException:
        """A native panic as the file's error; anything else (^C, a render deadline) as it was."""
        if not native_panic(e):
            return e
        first = str(e).strip().splitlines()
        return TokenizerCrashed(
            f"{self.spec.display}: the tokenizer crashed on this file's prompt ({type(e).__name__}: "
            f"{first[0][:120] if first else 'no message'}); its pre-tokenizer or normalizer regex cannot handle "
            "the text: fix the tokenizer.json or configure a vetted tokenizer"
        )

    def _cannot_encode(self, e: Exception) -> "TokenizerError":
        return TokenizerError(
            f"{self.spec.display}: the tokenizer cannot encode the prompt ({e}); "
            "check that it is the model's complete tokenizer.json"
        )

    # What other modules need of the parsed tokenizer, so that none reaches into it.

    def added_tokens_decoder(self) -> Dict[int, object]:
        """id -> the backend's AddedToken (content, special, lstrip/rstrip, normalized, single_word)."""
        return self._tok.get_added_tokens_decoder()

    @property
    def normalizer(self):
        return self._tok.normalizer

    @property
    def pre_tokenizer(self):
        return self._tok.pre_tokenizer

    @property
    def post_processor(self):
        return self._tok.post_processor

    def serialized(self) -> str:
        """The tokenizer.json text of the parse (engine encoders and special-token copies are built from it)."""
        return self._tok.to_str()

    def probe_ids(self, text: str, add_special_tokens: bool = False) -> List[int]:
        """Ids of a short probe the code makes itself (what the post-processor adds, which pre-tokenizer
        this is): not charged to the file's budget, no panic translation (no input of the file's)."""
        return list(self._tok.encode(text, add_special_tokens=add_special_tokens).ids)

    def token_to_id(self, text: str) -> Optional[int]:
        return self._tok.token_to_id(text)

    def with_special_texts(self, texts, serialized: Callable[[], str]) -> "LoadedTokenizer":
        """A copy that matches each of ``texts`` as one special token: the fast engine's own copy
        (milliseconds, the same ids: promptlint.fastbpe.special_copy), else one parsed from
        ``serialized()`` (this tokenizer's JSON) with the texts added."""
        from dataclasses import replace

        fast = getattr(self._tok, "with_special_tokens", None)
        copy = fast(list(texts)) if fast is not None else None
        if copy is None:
            from tokenizers import Tokenizer

            from promptlint.fastbpe.special_copy import added_tokens

            copy = Tokenizer.from_str(serialized())
            copy.add_special_tokens(added_tokens(list(texts)))
        return replace(self, _tok=copy, _added=None, memo=None)

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


# Parsed tokenizers live in the run's tokenizer pool (promptlint.pools.tokenizers), keyed by
# their content's sha256, so copies, symlinks and hard links of one tokenizer.json share one
# parse; what differs per directory (the special tokens of its tokenizer_config.json) lives in
# the LoadedTokenizer around it, keyed by that config file too.
_EMBEDDED_SHA256: List[str] = []  # memo of a constant: the embedded file's sha256


def native_panic(e: BaseException) -> bool:
    """A panic of native (Rust, pyo3) code: a ``BaseException`` that is not Python's own
    (^C, exit, a generator closing) nor promptlint's render deadline, which is an Exception's
    sibling on purpose (promptlint.render.sandbox.DeadlineExceeded)."""
    if isinstance(e, (Exception, KeyboardInterrupt, SystemExit, GeneratorExit)):
        return False
    return type(e).__name__ != "DeadlineExceeded"


# ------------------------------------------------------------------ the per-file analysis budget


class _Budget:
    def __init__(self, seconds: float, max_tokens: int):
        import time

        self.deadline = time.monotonic() + seconds
        self.seconds, self.max_tokens = seconds, max_tokens
        self.tokens = 0
        self.exceeded: Optional[str] = None  # sticky: a check that swallowed the exception cannot hide it


_BUDGET: List[Optional[_Budget]] = [None]


class budget:
    """``with budget(seconds, max_tokens) as b:`` around one file's analysis: every encode through a
    LoadedTokenizer counts its tokens, and past either bound raises BudgetExceeded (and records it
    in ``b.exceeded``, which the driver reads afterwards)."""

    def __init__(self, seconds: float, max_tokens: int):
        self.state = _Budget(seconds, max_tokens)

    def __enter__(self) -> _Budget:
        self.saved = _BUDGET[0]
        _BUDGET[0] = self.state
        return self.state

    def __exit__(self, *exc) -> bool:
        _BUDGET[0] = self.saved
        return False


class not_charged:
    """``with not_charged():`` around work done for the run, not the file (parsing a tokenizer,
    copying one): its time does not count against the current file's budget."""

    def __enter__(self):
        import time

        self.start = time.monotonic()
        return self

    def __exit__(self, *exc) -> bool:
        import time

        b = _BUDGET[0]
        if b is not None:
            b.deadline += time.monotonic() - self.start
        return False


def _charge(tokens: int) -> None:
    b = _BUDGET[0]
    if b is None:
        return
    import time

    b.tokens += tokens
    if b.exceeded is None and b.tokens > b.max_tokens:
        b.exceeded = (f"the analysis encoded more than {b.max_tokens:,} tokens (`max-encoded-tokens`); the template renders "
                      "more text than a prompt layout needs to show its hazards: lint it with smaller samples")
    elif b.exceeded is None and time.monotonic() > b.deadline:
        b.exceeded = (f"the analysis took longer than {b.seconds:g} s (`analysis-timeout`); lint it with smaller samples "
                      "or raise the limit")
    if b.exceeded is not None:
        raise BudgetExceeded(b.exceeded)


def parse_count() -> int:
    """How many tokenizer.json texts the active pool has parsed (each distinct content once, until released)."""
    return _pool().parses


def note_parses(n: int) -> None:
    """Count parses a forked worker made for this run (promptlint.driver.parallel)."""
    _pool().parses += n


def held_count() -> int:
    """How many parsed tokenizers the active pool holds (the daemon reports it)."""
    return _pool().held()


def _pool():
    from promptlint.pools.tokenizers import active

    return active()


def _embedded_json() -> bytes:
    import gzip  # only for the embedded tokenizer

    return gzip.decompress(_EMBEDDED_FILE.read_bytes())


def embedded_sha256() -> str:
    """sha256 of the embedded tokenizer.json (decompressed), as a pin names it: as its shipped
    compact form records it (a test holds the two together), else hashed."""
    if not _EMBEDDED_SHA256:
        from promptlint import fastbpe  # fast-load hook

        _EMBEDDED_SHA256.append(fastbpe.embedded_sha256() or hashlib.sha256(_embedded_json()).hexdigest())
    return _EMBEDDED_SHA256[0]


def check_pin(spec: TokenizerSpec, sha: str) -> None:
    """Stop the run when the tokenizer in use is not the pinned one."""
    if spec.sha256 and spec.sha256 != sha:
        raise TokenizerError(
            f"{spec.display}: the tokenizer changed: expected sha256 {spec.sha256}, found {sha}; re-pin it or restore it"
        )


def load(spec: TokenizerSpec) -> LoadedTokenizer:
    """Load and verify the tokenizer named by ``spec``: parsed once per content while the active
    pool holds it, with the special tokens of ``spec``'s own tokenizer_config.json."""
    pool = _pool()
    if spec.path is None:
        sha = embedded_sha256()
        check_pin(spec, sha)
        return pool.loaded_for((sha, None, None, ()), lambda: _remembering(LoadedTokenizer(
            spec, sha, _parsed(pool, sha, spec, lambda: _embedded_json().decode("utf-8"))), pool))
    sha = cached_sha256(spec.path)
    check_pin(spec, sha)
    config = spec.config_path
    # a LoadedTokenizer per file named (its error messages name it) and per config file; the parse is shared
    key = (sha, str(spec.path.absolute()), None if config is None else str(config.absolute()), _stamp_of(config))

    def make() -> LoadedTokenizer:
        tok = LoadedTokenizer(spec, sha, _parsed(pool, sha, spec, lambda: _vetted_text(spec, sha, pool)))
        tok.special_tokens = _special_tokens(config)
        return _remembering(tok, pool)

    return pool.loaded_for(key, make)


def _remembering(tok: LoadedTokenizer, pool) -> LoadedTokenizer:
    """A resident pool's tokenizer remembers its encodings for the next request (encode_memo); a
    run's remembers its most recent ones (a fifth of a cold run's characters are texts it encoded
    before: variants rendering alike, chat templates of one family rendering the same scenario)."""
    from promptlint.tokenization.encode_memo import RUN_CHARS, EncodeMemo

    tok.memo = EncodeMemo() if pool.resident else EncodeMemo(RUN_CHARS)
    return tok


def _parsed(pool, sha: str, spec: TokenizerSpec, text):
    def parse():
        with not_charged():  # once per run: not the first file's cost
            return _parse(sha, spec, text)  # (tokenizer, the file's size, as the budget is stated)

    return pool.parsed_for(sha, parse)


# ------------------------------------------------------------------ fast load (promptlint.fastbpe)
# THE HOOK where a tokenizer is loaded: a proven compact form of this content when there is one
# (the embedded tokenizer ships one), else the tokenizer.json parsed as ever, and its compact form
# written for the next run. Only formed for tokenizers whose regexes are the known families', so
# the vetting in ``text`` is never skipped for one that needs it.


def _parse(sha: str, spec: TokenizerSpec, text) -> Tuple[object, int]:
    from promptlint import fastbpe

    fast = fastbpe.load(sha, embedded=spec.path is None)
    if fast is not None:
        return fast
    source = text()
    tok = _from_str(source, spec)
    fastbpe.remember(sha, source, tok)
    return tok, len(source.encode("utf-8"))


# ------------------------------------------------------------------ untrusted tokenizers

_VETTING: Dict[str, List[str]] = {}  # memo of a pure function of the content: sha256 -> its unvetted patterns (empty: vetted)


def allow_unvetted() -> None:
    """The active pool may parse and run unvetted tokenizers: a child under a deadline calls it
    (promptlint.doors.deadline_child via the driver), never the process that reports."""
    _pool().unvetted_allowed = True


def needs_deadline(spec: TokenizerSpec, sha: str) -> bool:
    """Whether ``spec``'s tokenizer may be run only where a deadline can stop it: an untrusted,
    unpinned tokenizer.json with regexes outside the known families' (promptlint.tokenization.tokenizer_vetting)."""
    return bool(spec.vet and spec.path is not None and not spec.sha256 and _unvetted(spec.path, sha))


def _unvetted(path: Path, sha: str, text: Optional[str] = None) -> List[str]:
    from promptlint.tokenization.tokenizer_vetting import unknown_patterns

    if sha not in _VETTING:
        from promptlint import fastbpe  # fast-load hook: a proven compact form exists only for vetted content

        if text is None and fastbpe.vetted(sha, keep=sha not in _pool().parsed):
            _VETTING[sha] = []
            return []
        try:
            _VETTING[sha] = unknown_patterns(text if text is not None else _read_tokenizer(path))
        except TokenizerError:
            return []  # unreadable: loading it says why
    return _VETTING[sha]


def _vetted_text(spec: TokenizerSpec, sha: str, pool) -> str:
    text = _read_tokenizer(spec.path)
    if spec.vet and not spec.sha256 and not pool.unvetted_allowed:
        unknown = _unvetted(spec.path, sha, text)
        if unknown:
            from promptlint.tokenization.tokenizer_vetting import describe

            raise TokenizerUnvetted(
                f"{spec.display}: this unpinned tokenizer has {describe(unknown)}, which could hang or crash this "
                "process; `check` runs it in a separate process with a deadline. To use it here, pin it "
                "(`tokenizer` with `tokenizer-sha256`), or use a tokenizer of a known family"
            )
    return text


def _read_tokenizer(path: Path) -> str:
    try:
        return bounded_io.read_text(path, bounded_io.MAX_TOKENIZER_BYTES)
    except (OSError, UnicodeDecodeError):
        raise TokenizerError(f"{path}: not a tokenizer.json file (not UTF-8 text)") from None


def _stamp_of(path: Optional[Path]) -> Tuple[int, ...]:
    """A tokenizer_config.json's file_stamp (an edit re-reads its special tokens), () when absent."""
    try:
        return tuple(file_stamp(path.stat())) if path is not None else ()
    except OSError:
        return ()


_SHA256: Dict[Tuple[str, int, int], str] = {}


def cached_sha256(path: Path, persistent: Optional[Dict] = None) -> str:
    """tokenizer_file_sha256 memoised per process on (path, file_stamp), so a long-running process
    (the language server) re-lints without re-hashing a multi-megabyte tokenizer.json; ``persistent``
    (resolved path -> stamp + [sha], kept across runs by the caller) is consulted and updated too."""
    try:
        st = path.stat()
    except OSError as e:
        raise _unreadable(path, e) from None
    resolved = str(path.resolve())
    stamp = file_stamp(st)
    key = (resolved, *stamp)
    if key not in _SHA256:
        known = persistent.get(resolved) if persistent is not None else None
        if isinstance(known, list) and len(known) == len(stamp) + 1 and known[:-1] == stamp and isinstance(known[-1], str):
            _SHA256[key] = known[-1]
        else:
            _SHA256[key] = tokenizer_file_sha256(path)
    if persistent is not None:
        persistent[resolved] = stamp + [_SHA256[key]]
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
