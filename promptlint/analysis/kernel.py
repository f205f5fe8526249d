"""What every analyzer stands on, below both the analyzers and the driver (promptlint.driver.lint).

- ``Context``: what one run shares (settings, the tokenizer provider, the rule filter,
  notices, the files the current analysis read);
- ``TokenizerProvider``: the pinned tokenizer, loaded on first use; ``tokenizer_sha``: its
  sha256 without loading it, checked against the pin (through ``tokens.check_pin``, the one
  pin check);
- ``finding``/``file_error``: the one factory that turns a code and a place into a record,
  with the rule's name, class and severity from its rule file;
- ``read_source``: a file's text through the bounded reader, or the E005 finding saying why not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Union

from promptlint.doors import bounded_io
from promptlint.base import registry
from promptlint.project.config import Settings, code_enabled
from promptlint.base.paths import display_path
from promptlint.base.records import Arithmetic, DivergentToken, Finding, SourceLine, StoredAt
from promptlint.tokenization.tokens import (
    LoadedTokenizer, TokenizerSpec, cached_sha256, check_pin, embedded_sha256, load, resolve,
)

MAX_FILE_BYTES = bounded_io.MAX_FILE_BYTES

# The E family, one documented family: a file that cannot be analysed, reported through
# ``file_error``. Raised by the Jinja loader and renderer (E001 syntax, E002 render failed,
# E004 undefined, E006 limits, E007 sandbox: promptlint.render), samples files (E003:
# promptlint.scenarios), reading (E005: read_source here, promptlint.chat.source) and the
# Python parser (E008: promptlint.analyzers.python_source).
E_CODES = registry.implements(__name__, "E001", "E002", "E003", "E004", "E005", "E006", "E007", "E008")


class TokenizerProvider:
    """Loads the pinned tokenizer on first use only (a run with nothing to tokenize never pays for it)."""

    def __init__(self, spec: TokenizerSpec):
        self.spec = spec
        self.loaded: Optional[LoadedTokenizer] = None
        self.used = False  # asked for by an analysis (not only preloaded)

    def __call__(self) -> LoadedTokenizer:
        self.used = True
        if self.loaded is None:
            self.loaded = load(self.spec)
        return self.loaded

    def preload(self) -> None:
        """Load it now, before forking workers that will share it; a tokenizer that cannot load is
        left for the first analysis that needs it to report (a run may need none)."""
        from promptlint.tokenization.tokens import TokenizerError

        if self.loaded is None:
            try:
                self.loaded = load(self.spec)
            except TokenizerError:
                pass

    def expect(self, chars: int) -> None:
        """Each process about to share it (forked workers) will encode at least ``chars`` characters:
        what it builds for that volume is built once here, before the fork (tokens.LoadedTokenizer.expect)."""
        if self.loaded is not None:
            self.loaded.expect(chars)


def tokenizer_spec(settings: Settings) -> TokenizerSpec:
    """The run's tokenizer; an unpinned one is vetted before it runs in this process (the
    configuration naming it may come from a pull request: tokens.needs_deadline)."""
    from dataclasses import replace

    spec = resolve(settings.tokenizer, settings.tokenizer_sha256)
    return replace(spec, vet=True) if spec.path is not None and not spec.sha256 else spec


def tokenizer_sha(spec: TokenizerSpec, cache) -> str:
    """The tokenizer's sha256 without loading it, checked against the pin."""
    from promptlint.tokenization.tokens import EMBEDDED_NAME

    if spec.path is None:
        if spec.sha256:
            check_pin(spec, embedded_sha256())
        return "embedded:" + EMBEDDED_NAME
    sha = tokenizer_file_sha(spec.path, cache)
    check_pin(spec, sha)
    return sha


def tokenizer_file_sha(path: Path, cache) -> str:
    """A tokenizer file's sha256 (``TokenizerError`` when unreadable), memoised in ``cache``
    (across runs) and in the process by tokens.file_stamp."""
    return _file_shas([path], cache, strict=True)[0]


def tokenizer_file_shas(paths: List[Path], cache) -> List[Optional[str]]:
    """The sha256 of each tokenizer file (None when unreadable: loading it reports why), the key
    under which tokens.load shares one parse; the cache's memo is read and written once."""
    return _file_shas(paths, cache, strict=False)


def _file_shas(paths: List[Path], cache, strict: bool) -> List[Optional[str]]:
    from promptlint.tokenization.tokens import TokenizerError

    memo = cache.memo_get("tokenizers")
    before = dict(memo)
    out: List[Optional[str]] = []
    try:
        for path in paths:
            try:
                out.append(cached_sha256(path, memo))
            except TokenizerError:
                if strict:
                    raise
                out.append(None)
    finally:
        if memo != before:
            cache.memo_put("tokenizers", memo)
    return out


def rule_filter(settings: Settings) -> Callable[[str], bool]:
    """``is_enabled(code)`` for the run's select/ignore (memoised per code)."""
    known: Dict[str, bool] = {}

    def is_enabled(code: str) -> bool:
        if code not in known:
            known[code] = code_enabled(code, settings.select, settings.ignore)
        return known[code]

    return is_enabled


@dataclass
class Context:
    """What analyzers share across one run."""

    settings: Settings
    tokenizer: Callable[[], LoadedTokenizer]
    is_enabled: Callable[[str], bool]
    notices: List[str] = field(default_factory=list)  # informational notes analyzers add (stderr)
    deps: List[Path] = field(default_factory=list)  # other files the current analysis read
    # what the runs of several models (promptlint.driver.models) share: work that does not depend on the model
    shared: Optional[Dict[object, object]] = None
    # the run's unsaved texts by path (editor buffers, a fix under proof): a module another one imports is read from here first
    buffers: Dict[str, str] = field(default_factory=dict)
    # a resident process (daemon, language server): an analyzer may keep what it parsed for the next request
    resident: bool = False
    # path -> how findings name it: resolved once per run (a file is named per scenario and finding)
    _shown: Dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    # the module files analyses of this run looked for (pysource.project): what each candidate path
    # came to, so that the importers of one module find, resolve and read it once per run
    module_reads: Dict[tuple, object] = field(default_factory=dict, repr=False, compare=False)

    def depend(self, path: Path) -> None:
        """Record a file (include, samples file) whose change must invalidate the cached result."""
        self.deps.append(Path(path))

    def display(self, path: Path) -> str:
        """How findings name ``path``: relative to the run's base directory (the caller's)."""
        key = str(path)
        shown = self._shown.get(key)
        if shown is None:
            shown = self._shown[key] = display_path(path, self.settings.base)
        return shown


# ------------------------------------------------------------------------------ findings


MAX_MESSAGE = 1000


def finding(
    code: str,
    path: Union[str, Path],
    message: str,
    line: int = 1,
    column: int = 1,
    end_line: Optional[int] = None,
    end_column: Optional[int] = None,
    *,
    variable: Optional[str] = None,
    help: Optional[str] = None,
    notes: Iterable[str] = (),
    severity: Optional[str] = None,
    cause: Optional[str] = None,
    variant_description: Optional[str] = None,
    first_divergent_token: Optional[DivergentToken] = None,
    arithmetic: Optional[Arithmetic] = None,
    evidence: Optional[Dict[str, Any]] = None,
    stored_at: Optional[StoredAt] = None,
    source_line: Optional[SourceLine] = None,
) -> Finding:
    """A finding of ``code`` at ``path`` (a display path), complete: findings are frozen, so a
    check hands everything it knows here. Name, miss class and severity come from the rule file
    (``severity`` overrides it: a pinned order is a note). The end of the span defaults to its
    start. ``variant_description`` (the controlled change, in words) is the JSON `variant` and the
    first note; the figures (``first_divergent_token``, ``arithmetic``, ``evidence``) come from
    ``figures.of``. The message is one line of at most MAX_MESSAGE characters whatever it quotes
    (names, exception text: a pull request controls them; 10,000 chat-template names or a
    200,000-character variable name once made one line that long)."""
    from promptlint.render import clip

    message = clip(message, MAX_MESSAGE)
    rule = registry.get(code)
    return Finding(
        code=code,
        name=rule.name,
        miss_class=rule.miss_class,
        severity=severity or rule.severity,
        message=message,
        path=str(path),
        line=line,
        column=column,
        end_line=line if end_line is None else end_line,
        end_column=column if end_column is None else end_column,
        variable=variable,
        help=help,
        notes=((f"variant: {variant_description}",) if variant_description else ()) + tuple(notes),
        first_divergent_token=first_divergent_token,
        arithmetic=arithmetic,
        evidence=evidence,
        variant_description=variant_description,
        stored_at=stored_at,
        source_line=source_line,
        cause=cause,
    )


def file_error(path: Union[str, Path], code: str, message: str, line: Optional[int] = None, column: int = 1,
               **complete: Any) -> Finding:
    """An E finding: the file (or a line of it) could not be analysed; ``complete``: ``finding``'s keywords (notes)."""
    return finding(code, path, message, line or 1, column, **complete)


# ------------------------------------------------------------------------------ reading


def read_source_bytes(path: Path, shown: Optional[str] = None) -> Union[bytes, Finding]:
    """The file's bytes (at most MAX_FILE_BYTES, regular files only), or an E005 finding naming the
    file ``shown`` (default: ``path``; the driver passes the name the user typed)."""
    shown = str(path) if shown is None else shown
    try:
        return bounded_io.read_bytes(path, MAX_FILE_BYTES)
    except bounded_io.NotTracked as e:
        return file_error(shown, "E002", str(e))
    except bounded_io.InputRefused as e:
        return file_error(shown, "E005", str(e))
    except OSError as e:
        return file_error(shown, "E005", f"cannot read the file: {e.strerror or e}")


def decode_source(path: Path, raw: bytes, shown: Optional[str] = None) -> Union[str, Finding]:
    """UTF-8 text of a source file's bytes, or an E005 finding (binary, not UTF-8) naming ``shown``."""
    shown = str(path) if shown is None else shown
    if b"\x00" in raw:
        return file_error(shown, "E005", "binary file (contains NUL bytes); exclude it from the templates")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        return file_error(shown, "E005", f"not UTF-8 text (invalid byte at offset {e.start}); save the file as UTF-8", line)


def read_source(path: Path, shown: Optional[str] = None) -> Union[str, Finding]:
    """The file's text, or an E005 finding (too large, unreadable, binary, not UTF-8) naming ``shown``."""
    raw = read_source_bytes(path, shown)
    return raw if isinstance(raw, Finding) else decode_source(path, raw, shown)
