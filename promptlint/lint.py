"""The check pipeline: discover -> settings -> scenarios -> render -> tokenize -> compare -> rules.

``lint(paths, settings)`` returns a ``Report`` of plain records; reporters format it.
"""

from __future__ import annotations

import importlib

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from promptlint import registry
from promptlint.config import Settings, code_enabled, ignored_for_file
from promptlint.discovery import discover, relative
from promptlint.records import Finding
from promptlint.tokens import LoadedTokenizer, TokenizerSpec, load, resolve

MAX_FILE_BYTES = 2_000_000


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
) -> Report:
    """Lint ``paths`` (or the configured templates); ``overrides`` maps a path to its text (stdin)."""
    report = Report()
    spec = tokenizer_spec(settings)  # raises TokenizerError before any work
    report.tokenizer = spec
    provider = TokenizerProvider(spec)
    files, missing = discover(paths, settings.root, settings.templates, settings.exclude, force_exclude)
    if overrides:
        files = [Path(p) for p in overrides] + [f for f in files if str(f) not in overrides]
    is_enabled = _enabled(settings)
    ctx = Context(settings, provider, is_enabled)
    for raw in missing:
        report.errors.append(file_error(raw, "E005", f"no such file or directory: {raw}"))
    for path in files:
        report.files += 1
        text = (overrides or {}).get(str(path))
        for f in lint_file(path, ctx, text):
            rel = relative(Path(f.path), settings.root)
            if not is_enabled(f.code) or ignored_for_file(f.code, rel, settings.per_file_ignores):
                continue
            (report.errors if f.code.startswith("E") else report.findings).append(f)
    report.notices.extend(ctx.notices)
    report.findings.sort(key=lambda f: f.sort_key)
    report.errors.sort(key=lambda f: f.sort_key)
    if provider.loaded is not None:
        report.tokenizer_sha256 = provider.loaded.sha256
    if spec.embedded and (provider.loaded is not None):
        report.notices.append(
            "no tokenizer configured: figures use the embedded cl100k_base tokenizer and are approximate "
            "until the model's tokenizer is pinned (`tokenizer` in [tool.promptlint])"
        )
    return report


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

    @staticmethod
    def display(path: Path) -> str:
        from promptlint.analysis import _display

        return _display(path)


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


def _read_text(path: Path):
    display = str(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return file_error(display, "E005", f"file is larger than {MAX_FILE_BYTES:,} bytes; exclude it or split it")
        raw = path.read_bytes()
    except OSError as e:
        return file_error(display, "E005", f"cannot read the file: {e.strerror or e}")
    if b"\x00" in raw:
        return file_error(display, "E005", "binary file (contains NUL bytes); exclude it from the templates")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        return file_error(display, "E005", f"not UTF-8 text (invalid byte at offset {e.start}); save the file as UTF-8", line)


def file_error(path: str, code: str, message: str, line: Optional[int] = None) -> Finding:
    rule = registry.get(code)
    line = line or 1
    return Finding(code, rule.name, rule.miss_class, rule.severity, message, str(path), line, 1, line, 1)


_PATTERNS = None


def name_patterns():
    """Volatile and per-request name patterns from the M101 rule file's [data] table."""
    global _PATTERNS
    if _PATTERNS is None:
        from promptlint.scenarios import NamePatterns

        data = registry.get("M101").data
        volatile = tuple((sub, tuple(p.lower() for p in pats)) for sub, pats in data.get("volatile-names", {}).items())
        _PATTERNS = NamePatterns(volatile, tuple(p.lower() for p in data.get("per-request-names", [])))
    return _PATTERNS
