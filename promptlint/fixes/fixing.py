"""`check --fix` / `--unsafe-fixes` / `--diff` / `--add-suppressions`: the file-writing front end of fixes.

Only findings that survived selection, per-file ignores and suppression comments (the lint
result's findings) are fixed. Templates go through ``promptlint.fixes`` (each fix proven by
re-rendering and re-checking); a Python builder's analyzer offers its own codemods with
``fix(path, text, display, findings) -> (new_text, fixed_findings)``. Which fixes are allowed
is the rule file's `[fix]` safety for that kind of source.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from promptlint.doors import bounded_io
from promptlint.base.records import Finding


@dataclass
class FixRun:
    fixed: List[Finding] = field(default_factory=list)
    diffs: List[str] = field(default_factory=list)
    outcomes: list = field(default_factory=list)  # promptlint.fixes.Outcome, templates only
    unsafe_available: List[Finding] = field(default_factory=list)  # fixes --unsafe-fixes would try


def apply_fixes(result, write: bool, unsafe: bool = False, settings=None) -> Tuple[List[Finding], List[str]]:
    """(fixed findings, unified diffs); writes the files when ``write``."""
    run = run_fixes(result, write, unsafe, settings)
    return run.fixed, run.diffs


def run_fixes(result, write: bool, unsafe: bool = False, settings=None) -> FixRun:
    """Fix every file of ``result``; templates need ``settings`` (to re-check as the run did)."""
    by_path: Dict[str, List[Finding]] = {}
    for f in result.findings:
        by_path.setdefault(f.path, []).append(f)
    out = FixRun()
    for display, findings in sorted(by_path.items()):
        path = opened(display, settings)
        read = _read(path)
        if read is None:
            continue
        text, newline = read
        new_text, fixed = fix_source(path, display, text, findings, settings, unsafe)
        out.fixed += fixed.fixed
        out.outcomes += fixed.outcomes
        out.unsafe_available += fixed.unsafe_available
        if new_text == text:
            continue
        if write:
            write_source(path, new_text, newline, settings, "--fix")
        else:
            out.diffs.append(unified_diff(display, text, new_text))
    return out


def opened(display: str, settings) -> Path:
    """The file a finding names: its display path is the run's (relative to the caller's directory,
    ``settings.base``; a daemon request's is not this process's)."""
    from promptlint.base.paths import based

    base = getattr(settings, "base", None)
    return Path(display) if base is None else based(display, base)


def fix_source(path: Path, display: str, text: str, findings: List[Finding], settings, unsafe: bool = False) -> Tuple[str, FixRun]:
    """One source's text with its fixes applied (``findings``: that file's, as linted) and what
    was fixed; writes nothing. `check --fix` and the language server's `source.fixAll` share it."""
    from promptlint.analyzers import analyzer_for
    from promptlint.fixes import SAFE, safety

    out = FixRun()
    analyzer = analyzer_for(path)
    if analyzer is None:
        return text, out
    if analyzer.__name__.endswith((".jinja_template", ".chat_template")):
        if settings is None:
            return text, out
        from promptlint.fixes import chat, templates

        fix_text = chat.fix_text if analyzer.__name__.endswith(".chat_template") else templates.fix_text
        new_text, outcomes = fix_text(path, display, text, findings, settings, unsafe)
        by_finding = {(o.code, o.line, o.column): o for o in outcomes}
        for f in findings:
            o = by_finding.get((f.code, f.line, f.column))
            if o is not None and o.applied:
                out.fixed.append(f)
            elif o is not None and o.safety != SAFE and not unsafe:
                out.unsafe_available.append(f)
        out.outcomes += [o for o in outcomes if o.applied or o.safety == SAFE or unsafe]
        return new_text, out
    if hasattr(analyzer, "fix"):
        kind = "python" if display.endswith((".py", ".pyi")) else "template"
        allowed = [f for f in findings if safety(f.code, kind) == SAFE or (unsafe and safety(f.code, kind))]
        new_text, done = analyzer.fix(path, text, display, allowed) if allowed else (text, [])
        rest = [f for f in allowed if f not in done]
        if rest and kind == "python":  # made here, sent from another module: proven on the senders (fixes/sent.py)
            from promptlint.fixes import sent

            new_text, more = sent.fix(analyzer, path, display, new_text, rest, settings)
            done = list(done) + more
        out.fixed.extend(done)
        return new_text, out
    return text, out


def write_source(path: Path, text: Optional[str], newline: str, settings, option: str) -> None:
    """Write a fixed source through promptlint.doors.safe_write (``newline``: "" keeps the text's line
    ends, "\r\n" writes CRLF); ``text`` None only checks that it could be. A link on the way, a
    linked or hard-linked file is refused: ``UsageError``, exit 2 (the files fixed before it stay
    fixed)."""
    from promptlint.doors import safe_write
    from promptlint.commands import UsageError

    within = (settings.root,) if settings is not None and getattr(settings, "root", None) else ()
    base = getattr(settings, "base", None)
    if base is not None:  # named as the user typed it, from their directory (a daemon request's)
        from promptlint.base.paths import typed

        path = typed(path, base)
    try:
        if text is None:
            safe_write.check_target(path, within=within, cwd=base)
        else:
            safe_write.write_text(path, text, within=within, newline=newline, cwd=base)
    except OSError as e:
        why = f"not written: {e}" if isinstance(e, safe_write.WriteRefused) else f"cannot write ({e.strerror or e})"
        raise UsageError(f"{option}: {path}: {why}") from None


def unified_diff(display: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), *_labels(display)))


def _read(path: Path) -> Optional[Tuple[str, str]]:
    """(text with \\n line ends, the line end to write back): fixes work on \\n, and a file whose
    lines all end in CRLF keeps CRLF, so a fix changes only the lines it fixes."""
    if not path.is_file():
        return None
    try:
        raw = bounded_io.read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    crlf = raw.count("\r\n")
    newline = "\r\n" if crlf and crlf == raw.count("\n") else ""
    return raw.replace("\r\n", "\n").replace("\r", "\n"), newline


def _labels(display: str) -> Tuple[str, str]:
    if Path(display).is_absolute():
        return display, display
    return f"a/{display}", f"b/{display}"
