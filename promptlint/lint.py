"""The check pipeline: discover -> settings -> scenarios -> render -> tokenize -> compare -> rules.

``lint(paths, settings)`` returns a ``Report`` of plain records; reporters format it.
"""

from __future__ import annotations

import importlib

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from promptlint import bounded_io, registry, suppress
from promptlint.config import Settings, code_enabled, ignored_for_file
from promptlint.discovery import discover, escapes_root, relative
from promptlint.records import Finding
from promptlint.tokens import LoadedTokenizer, TokenizerSpec, load, resolve

MAX_FILE_BYTES = bounded_io.MAX_FILE_BYTES


@dataclass
class Report:
    findings: List[Finding] = field(default_factory=list)  # hazards (M codes)
    errors: List[Finding] = field(default_factory=list)  # files that could not be analysed (E codes)
    files: int = 0
    tokenizer: Optional[TokenizerSpec] = None
    tokenizer_sha256: Optional[str] = None
    notices: List[str] = field(default_factory=list)


class TokenizerProvider:
    """Loads the pinned tokenizer on first use only (a run with nothing to tokenize never pays for it)."""

    def __init__(self, spec: TokenizerSpec):
        self.spec = spec
        self.loaded: Optional[LoadedTokenizer] = None

    def __call__(self) -> LoadedTokenizer:
        if self.loaded is None:
            self.loaded = load(self.spec)
        return self.loaded


def tokenizer_spec(settings: Settings) -> TokenizerSpec:
    return resolve(settings.tokenizer, settings.tokenizer_sha256)


def lint(
    paths: Sequence[str],
    settings: Settings,
    force_exclude: bool = False,
    overrides: Optional[Dict[str, str]] = None,
    use_cache: bool = True,
    evidence: bool = False,
) -> Report:
    """Lint ``paths`` (or the configured templates); ``overrides`` maps a path to its text (stdin)."""
    from promptlint.cache import Cache

    report = Report()
    spec = tokenizer_spec(settings)  # raises TokenizerError before any work
    report.tokenizer = spec
    provider = TokenizerProvider(spec)
    cache = Cache(settings.root, enabled=use_cache)
    if overrides and not paths:  # stdin / editor buffers only: no discovery
        files, missing = [], []
    else:
        files, missing = discover(paths, settings.root, settings.templates, settings.exclude, force_exclude)
    if overrides:
        files = [Path(p) for p in overrides] + [f for f in files if str(f) not in overrides]
    is_enabled = _enabled(settings)
    ctx = Context(settings, provider, is_enabled)
    tok_sha = None
    settings_key = _settings_key(settings)
    for raw, reason in missing:
        report.errors.append(file_error(raw, "E005", reason))
    for path in files:
        report.files += 1
        text = (overrides or {}).get(str(path))
        if text is None and escapes_root(path, settings.root):
            report.errors.append(file_error(ctx.display(path), "E005", (
                "a symlink that leads outside the project root: not read; "
                "pass the target's real path to lint it")))
            continue
        if tok_sha is None:
            tok_sha = tokenizer_sha(spec, cache)  # verifies a pinned sha without loading the tokenizer

        def keep(f: Finding) -> bool:
            rel = relative(Path(f.path), settings.root)
            return is_enabled(f.code) and not ignored_for_file(f.code, rel, settings.per_file_ignores)

        raw, text = _lint_one(path, ctx, text, cache, settings_key, tok_sha, evidence)
        complete = not any(f.code.startswith("E") for f in raw)  # else nothing can be called unused
        for f in apply_suppressions([f for f in raw if keep(f)], path, text, ctx, complete):
            if f.code == suppress.UNUSED and not keep(f):
                continue
            (report.errors if f.code.startswith("E") else report.findings).append(f)
    report.notices.extend(ctx.notices)
    report.findings.sort(key=lambda f: f.sort_key)
    report.errors = merge_included(report.errors)
    report.errors.sort(key=lambda f: f.sort_key)
    if provider.loaded is not None:
        report.tokenizer_sha256 = provider.loaded.sha256
    elif tok_sha is not None:
        report.tokenizer_sha256 = tok_sha
    cache.prune()
    if cache.warning:
        report.notices.append(cache.warning)
    if spec.embedded and (provider.loaded is not None):
        report.notices.append(
            "no tokenizer configured: figures use the embedded cl100k_base tokenizer and are approximate "
            "until the model's tokenizer is pinned (`tokenizer` in [tool.promptlint])"
        )
    return report


def merge_included(errors: List[Finding]) -> List[Finding]:
    """An error inside an included file, met through every includer (and the file itself), once:
    at the included file, naming every includer."""
    out: List[Finding] = []
    by_key: Dict[Tuple, Finding] = {}
    for f in errors:
        key = (f.code, f.path, f.line, f.column, f.message)
        first = by_key.get(key)
        if first is None:
            by_key[key] = f
            out.append(f)
            continue
        for n in f.notes:
            if n not in first.notes:
                first.notes.append(n)
    for f in out:
        includers = [n[len("included by "):] for n in f.notes if n.startswith("included by ")]
        if len(includers) > 1:
            rest = [n for n in f.notes if not n.startswith("included by ")]
            f.notes = rest + [f"included by {', '.join(includers)}"]
    return out


def apply_suppressions(
    findings: List[Finding], path: Path, text: Optional[str], ctx: "Context", complete: bool = True
) -> List[Finding]:
    """Drop findings silenced by `promptlint: ignore/disable` comments; add PL100 for unused ones."""
    primary = ctx.display(path)

    def read(display: str) -> Optional[str]:
        if display == primary and text is not None:
            return text
        try:
            return bounded_io.read_text(display)
        except (OSError, UnicodeDecodeError):
            return None

    return suppress.apply(findings, primary, read, ctx.is_enabled, _ALL_CODES, complete)


class _AllCodes(Sequence):
    """Every rule code, read from the rule files only when a suppression comment needs them
    (a warm run over files without comments parses no rule TOML)."""

    def _codes(self) -> List[str]:
        return list(registry.all_rules())

    def __getitem__(self, index):
        return self._codes()[index]

    def __len__(self) -> int:
        return len(self._codes())

    def __iter__(self):
        return iter(self._codes())


_ALL_CODES = _AllCodes()


def _enabled(settings: Settings) -> Callable[[str], bool]:
    cache: Dict[str, bool] = {}

    def is_enabled(code: str) -> bool:
        if code not in cache:
            cache[code] = code_enabled(code, settings.select, settings.ignore)
        return cache[code]

    return is_enabled


@dataclass
class Context:
    """What analyzers share across one run."""

    settings: Settings
    tokenizer: Callable[[], LoadedTokenizer]
    is_enabled: Callable[[str], bool]
    notices: List[str] = field(default_factory=list)  # informational notes analyzers add (stderr)
    deps: List[Path] = field(default_factory=list)  # other files the current analysis read

    def depend(self, path: Path) -> None:
        """Record a file (include, samples file) whose change must invalidate the cached result."""
        self.deps.append(Path(path))

    @staticmethod
    def display(path: Path) -> str:
        from promptlint.discovery import display_path

        return display_path(path)


def lint_file(path: Path, ctx: "Context", text: Optional[str] = None) -> List[Finding]:
    """Read ``path`` (unless its text is given) and run the analyzer for its kind."""
    from promptlint.analyzers import analyzer_for

    if text is None and path.is_dir():
        text = ""  # a model directory: its analyzer reads the files it needs
    if text is None:
        text_or_error = _read_text(path)
        if isinstance(text_or_error, Finding):
            return [text_or_error]
        text = text_or_error
    analyzer = analyzer_for(path)
    if analyzer is None:
        analyzer = importlib.import_module("promptlint.analyzers.jinja_template")
    return analyzer.lint_file(path, text, ctx)


def _lint_one(path: Path, ctx: "Context", text, cache, settings_key, tok_sha, evidence):
    """One file; a bug that input from a pull request triggers costs that file, not the run."""
    import os

    from promptlint.tokens import TokenizerError

    try:
        return _cached_lint_file(path, ctx, text, cache, settings_key, tok_sha, evidence)
    except TokenizerError:
        raise  # the tokenizer is the run's, not the file's: exit 2
    except (Exception, RecursionError) as e:
        if os.environ.get("PROMPTLINT_DEBUG"):
            raise
        message = (f"internal error while analysing this file ({type(e).__name__}); a bug: please report it "
                   "(PROMPTLINT_DEBUG=1 shows the traceback)")
        return [file_error(ctx.display(path), "E002", message)], text


def _cached_lint_file(
    path: Path, ctx: "Context", text: Optional[str], cache, settings_key: str, tok_sha: str, evidence: bool = False
) -> Tuple[List[Finding], Optional[str]]:
    """(findings, the file's text) — from the cache when nothing it depends on changed.

    The text is returned so that suppression comments are read from the same bytes, not a second read.
    """
    from promptlint.records import finding_from_dict

    if text is None and path.is_dir():
        content = b""  # a model directory: its files enter the key through _neighbourhood()
    elif text is None:
        raw = _read_bytes(path)
        if isinstance(raw, Finding):
            return [raw], None
        content = raw
        decoded = _decode(path, content)
        if isinstance(decoded, Finding):
            return [decoded], None
        text = decoded
    else:
        content = text.encode("utf-8", "surrogatepass")
    key = cache.key(path, content, settings_key + _neighbourhood(path), tok_sha)
    entry = cache.get(key)
    if entry is not None and (entry.get("evidence") is True or not evidence):
        try:
            return [finding_from_dict(d) for d in entry["findings"]], text
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # a damaged or foreign entry is a miss, and is overwritten below
    ctx.deps = []
    findings = lint_file(path, ctx, text)
    # renders are stored only for a run that reports them (--evidence): they can be megabytes
    cache.put(key, [f.to_dict(evidence=evidence) for f in findings], ctx.deps, evidence=evidence)
    return findings, text


_NEIGHBOURS = ("tokenizer_config.json", "chat_template.jinja", "tokenizer.json")


def _neighbourhood(path: Path) -> str:
    """Size and mtime of the files an analysis may read beside ``path`` without naming them as
    dependencies: samples files (which may appear or disappear), a model directory's chat-template
    files and tokenizer_config.json (special tokens)."""
    directory = path if path.is_dir() else path.parent
    stem = path.name.rsplit(".", 1)[0]
    candidates = [directory / n for n in _NEIGHBOURS]
    candidates += [directory / f"{s}.samples.{ext}" for s in (stem, "chat_template", "tokenizer_config") for ext in ("toml", "json")]
    extra = directory / "chat_templates"
    if extra.is_dir():
        candidates += sorted(extra.iterdir())
    parts = []
    for c in candidates:
        try:
            st = c.stat()
        except OSError:
            continue
        parts.append(f"{c.name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def _settings_key(settings: Settings) -> str:
    import hashlib

    return hashlib.sha256(repr(settings.cache_key()).encode("utf-8")).hexdigest()


def tokenizer_sha(spec: TokenizerSpec, cache) -> str:
    """The tokenizer's sha256 without loading it (memoised by tokens.file_stamp), checked against the pin."""
    from promptlint.tokens import EMBEDDED_NAME, TokenizerError, check_pin, embedded_sha256, file_stamp

    if spec.path is None:
        if spec.sha256:
            check_pin(spec, embedded_sha256())
        return "embedded:" + EMBEDDED_NAME
    try:
        st = spec.path.stat()
    except OSError as e:
        raise TokenizerError(f"{spec.path}: cannot read the tokenizer ({e.strerror}); check the path") from None
    memo = cache.memo_get("tokenizers")
    key = str(spec.path.resolve())
    stamp = file_stamp(st)
    known = memo.get(key)
    if isinstance(known, list) and len(known) == len(stamp) + 1 and known[:-1] == stamp:
        sha = known[-1]
    else:
        sha = _tokenizer_file_sha256(spec.path)
        memo[key] = stamp + [sha]
        cache.memo_put("tokenizers", memo)
    check_pin(spec, sha)
    return sha


def _tokenizer_file_sha256(path: Path) -> str:
    from promptlint.tokens import TokenizerError, file_sha256

    try:
        return file_sha256(path)
    except OSError as e:
        raise TokenizerError(f"{path}: cannot read the tokenizer ({e.strerror or e}); check the path") from None


def _read_bytes(path: Path):
    display = str(path)
    try:
        return bounded_io.read_bytes(path, MAX_FILE_BYTES)
    except bounded_io.InputRefused as e:
        return file_error(display, "E005", str(e))
    except OSError as e:
        return file_error(display, "E005", f"cannot read the file: {e.strerror or e}")


def _decode(path: Path, raw: bytes):
    display = str(path)
    if b"\x00" in raw:
        return file_error(display, "E005", "binary file (contains NUL bytes); exclude it from the templates")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        return file_error(display, "E005", f"not UTF-8 text (invalid byte at offset {e.start}); save the file as UTF-8", line)


def _read_text(path: Path):
    """The file's text, or an E005 finding (too large, unreadable, binary, not UTF-8)."""
    raw = _read_bytes(path)
    return raw if isinstance(raw, Finding) else _decode(path, raw)


def file_error(path: str, code: str, message: str, line: Optional[int] = None) -> Finding:
    rule = registry.get(code)
    line = line or 1
    return Finding(code, rule.name, rule.miss_class, rule.severity, message, str(path), line, 1, line, 1)


def name_patterns():
    """Volatile and per-request name roles from the M101 rule file's [data] table."""
    from promptlint.scenarios.names import name_patterns as patterns

    return patterns()
