"""Suppression comments, and PL100 for the ones that suppress nothing.

Jinja (any linted file)::

    {{ now }} {# promptlint: ignore[M101] #}          this line
    {# promptlint: ignore[M101] #}                     alone on a line: this line and the next
    {# promptlint: disable[M2] #} ... {# promptlint: enable[M2] #}   a range of lines

Python files also take ``# promptlint: ignore[M101]`` (and ``disable``/``enable``); TypeScript and
JavaScript files ``// promptlint: ignore[M101]`` and ``/* promptlint: ignore[M101] */``.
Codes are rule codes or prefixes (``M1``), comma-separated; text after the closing
bracket is a free-form reason. A suppression that matches no finding of an enabled
rule, names an unknown code, or an ``enable`` without its ``disable`` is reported as
PL100 ``unused-suppression`` (ruff's RUF100).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from promptlint.base import lazy_re, registry
from promptlint.base.records import Finding

UNUSED = registry.implements(__name__, "PL100")[0]
MARKER = "promptlint:"
VERBS = ("ignore", "disable", "enable")

_BODY = r"promptlint:\s*(?P<verb>[A-Za-z_-]*)\s*(?:\[(?P<codes>[^\]\n]*)\])?"
JINJA_RE = re.compile(r"\{#[-+]?\s*" + _BODY + r"[^\n]*?[-+]?#\}")
PYTHON_RE = lazy_re.compile(r"(?<!\{)#\s*" + _BODY + r"[^\n]*")
SCRIPT_RE = lazy_re.compile(r"(?://\s*" + _BODY + r"[^\n]*|/\*\s*" + _BODY.replace("?P<verb>", "?P<verb2>").replace("?P<codes>", "?P<codes2>") + r"[^\n]*?\*/)")
SCRIPT_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")


@dataclass
class Directive:
    """One `promptlint:` comment: its verb, its codes and where it stands."""

    verb: str
    codes: Tuple[str, ...]
    line: int  # 1-based
    column: int  # 1-based, first character of the comment
    end_column: int  # exclusive
    standalone: bool  # nothing but whitespace and comments on its line
    text: str
    used: Set[str] = field(default_factory=set)  # the codes that suppressed something


@dataclass
class Range:
    """The lines one directive silences a code on."""

    code: str
    start: int
    end: int  # inclusive; a disable without enable runs to the end of the file
    directive: Directive


def is_python(path: str) -> bool:
    return path.endswith(".py") or path.endswith(".pyi")


def is_script(path: str) -> bool:
    """TypeScript and JavaScript: ``//`` and ``/* */`` comments."""
    return path.endswith(SCRIPT_SUFFIXES)


def _group(m, name: str):
    """A group of PYTHON_RE/JINJA_RE, or of either alternative of SCRIPT_RE."""
    value = m.group(name)
    if value is None and name + "2" in m.re.groupindex:
        value = m.group(name + "2")
    return value


def parse(text: str, python: bool = False, script: bool = False) -> List[Directive]:
    """Every suppression comment in ``text``, in order."""
    if MARKER not in text:
        return []
    out: List[Directive] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if MARKER not in line:
            continue
        matches = list(JINJA_RE.finditer(line))
        if python or script:
            taken = [m.span() for m in matches]
            regex = SCRIPT_RE if script else PYTHON_RE
            matches += [m for m in regex.finditer(line) if not any(a <= m.start() < b for a, b in taken)]
            matches.sort(key=lambda m: m.start())
        if not matches:
            continue
        rest = line
        for m in reversed(matches):
            rest = rest[: m.start()] + rest[m.end() :]
        standalone = not rest.strip()
        for m in matches:
            codes = tuple(c.strip().upper() for c in (_group(m, "codes") or "").split(",") if c.strip())
            out.append(
                Directive((_group(m, "verb") or "").lower(), codes, lineno, m.start() + 1, m.end() + 1, standalone, m.group(0))
            )
    return out


def _matches(code: str, selector: str) -> bool:
    return code.startswith(selector)


def known_selector(selector: str, all_codes: Sequence[str]) -> bool:
    return any(c.startswith(selector) for c in all_codes)


class FileSuppressions:
    def __init__(self, directives: List[Directive], last_line: int):
        self.directives = directives
        self.problems: List[Tuple[Directive, str]] = []  # malformed or unmatched directives
        self.ignores: Dict[int, List[Directive]] = {}
        self.ranges: List[Range] = []
        open_: Dict[str, List[Directive]] = {}
        for d in directives:
            if d.verb not in VERBS:
                self.problems.append((d, f"unknown suppression `{d.verb or '(none)'}`: use ignore[...], disable[...] or enable[...]"))
            elif not d.codes:
                self.problems.append((d, f"`{d.verb}` needs rule codes: `promptlint: {d.verb}[M101]`"))
            elif d.verb == "ignore":
                self.ignores.setdefault(d.line, []).append(d)
                if d.standalone:
                    self.ignores.setdefault(d.line + 1, []).append(d)
            elif d.verb == "disable":
                for c in d.codes:
                    open_.setdefault(c, []).append(d)
            else:  # enable
                unmatched = []
                for c in d.codes:
                    if open_.get(c):
                        start = open_[c].pop()
                        self.ranges.append(Range(c, start.line, d.line, start))
                    else:
                        unmatched.append(c)
                if unmatched:
                    codes = ", ".join(unmatched)
                    self.problems.append((d, f"`enable[{codes}]` without a matching `disable[{codes}]` before it"))
        for c, starts in open_.items():
            for start in starts:
                self.ranges.append(Range(c, start.line, last_line, start))

    def suppresses(self, f: Finding) -> bool:
        hit = False
        for d in self.ignores.get(f.line, ()):
            for c in d.codes:
                if _matches(f.code, c):
                    d.used.add(c)
                    hit = True
        for r in self.ranges:
            if r.start <= f.line <= r.end and _matches(f.code, r.code):
                r.directive.used.add(r.code)
                hit = True
        return hit


def apply(
    findings: List[Finding],
    primary: str,
    read: Callable[[str], Optional[str]],
    is_enabled: Callable[[str], bool],
    all_codes: Sequence[str],
    judge_unused: bool = True,
) -> List[Finding]:
    """Drop suppressed findings; add PL100 findings for ``primary`` (the linted file's display path).

    ``read(path)`` returns a file's text (None when unreadable). Findings in other files
    (includes) are suppressed by comments in those files. ``judge_unused`` is False when
    the analysis did not complete (an E finding), so nothing can be called unused.
    """
    cache: Dict[str, Optional[FileSuppressions]] = {}

    def for_path(path: str) -> Optional[FileSuppressions]:
        if path not in cache:
            text = read(path)
            directives = parse(text, is_python(path), is_script(path)) if text else []
            cache[path] = FileSuppressions(directives, text.count("\n") + 1) if directives else None
        return cache[path]

    kept = [f for f in findings if not ((s := for_path(f.path)) is not None and s.suppresses(f))] if findings else []
    own = for_path(primary)
    if own is None or not is_enabled(UNUSED):
        return kept
    extra: List[Finding] = []
    for d, message in own.problems:
        extra.append(_finding(primary, d, message))
    for d in own.directives:
        if d.verb not in ("ignore", "disable") or not d.codes:
            continue
        unknown = [c for c in d.codes if not known_selector(c, all_codes)]
        if unknown:  # a typo suppresses nothing whether or not the analysis completed
            extra.append(_finding(primary, d, f"unknown rule code in suppression: {', '.join(unknown)}"))
        if judge_unused:
            unused = [
                c
                for c in d.codes
                if c not in unknown and c not in d.used and any(is_enabled(k) for k in all_codes if k.startswith(c))
            ]
            if unused:
                codes = ", ".join(unused)
                where = "on this line" if d.verb == "ignore" and not d.standalone else (
                    "on this line or the next" if d.verb == "ignore" else "in the disabled range"
                )
                extra.append(_finding(primary, d, f"unused suppression: no {codes} finding {where}"))
    return kept + extra


def _finding(path: str, d: Directive, message: str) -> Finding:
    from promptlint.analysis.kernel import finding

    return finding(UNUSED, path, message, d.line, d.column, d.line, d.end_column, help="remove the comment, or correct its codes")


def comment_for(code: str, python: bool = False, script: bool = False) -> str:
    """The comment an editor inserts to suppress ``code`` on a line."""
    if script:
        return f"// promptlint: ignore[{code}]"
    return f"# promptlint: ignore[{code}]" if python else f"{{# promptlint: ignore[{code}] #}}"


def add_code(line: str, code: str, python: bool = False, script: bool = False) -> Optional[str]:
    """``line`` with ``code`` added to its existing ignore comment, or None when it has none."""
    regex = SCRIPT_RE if script else PYTHON_RE if python else JINJA_RE
    for m in regex.finditer(line):
        found = "codes" if m.group("codes") is not None else "codes2" if "codes2" in regex.groupindex else "codes"
        if (_group(m, "verb") or "").lower() == "ignore" and m.group(found) is not None:
            codes = [c.strip() for c in m.group(found).split(",") if c.strip()]
            if code in codes:
                return line
            start, end = m.span(found)
            return line[:start] + ", ".join(codes + [code]) + line[end:]
    return None
