"""The rule registry: metadata from the rule files, and which module implements each code.

A rule is declared once, in its TOML file (one per rule: metadata, docs, pass/fail cases).
The files live in the repository's top-level ``rules/`` folder and ship inside the wheel as
the ``promptlint._rules`` package; a source checkout reads ``rules/``.

The module that decides a code's findings and their wording registers itself under that
code with ``implements(__name__, "M101")`` (E, M and PL codes alike); a code has exactly
one implementation (tests/test_architecture.py checks both directions). Other analyzers
may report the same code, taking its wording and figures from that module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from promptlint.base.code_files import rules_dir  # noqa: F401 - re-exported (its home is light: the daemon client stamps it)

# Where each rule's documentation lives: the one form every format and the language server link
# to (docs/output-formats.md, "Rule documentation links"). Until the project publishes its docs at a
# stable address this is the path in promptlint's repository (docs/rules/ is generated from rules/);
# an absolute URL here would make every link absolute, SARIF's `helpUri` included.
DOCS_URL = "docs/rules/{code}.md"

DOC_SECTIONS = (
    ("what-it-does", "What it does"),
    ("why-it-matters", "Why it matters"),
    ("example", "Example"),
    ("example-typescript", "Example in TypeScript"),
    ("use-instead", "Use instead"),
    ("fix-safety", "Fix safety"),
    ("options", "Options"),
    ("references", "References"),
)


@dataclass(frozen=True)
class Rule:
    """One rule file: its code, wording, documentation, data and pass/fail cases."""

    code: str
    name: str
    miss_class: str
    severity: str
    summary: str
    docs: Dict[str, str]
    data: Dict[str, Any]
    cases: List[Dict[str, Any]] = field(default_factory=list, hash=False, compare=False)
    path: Optional[Path] = None
    # `[fix]`: the safety of this rule's fix per kind of source ("template", "python"):
    # "safe" (the rendered text is unchanged up to an order the rule calls free) or "unsafe"
    fix: Dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    def fix_safety(self, source_kind: str) -> Optional[str]:
        """"safe", "unsafe", or None when this rule has no fix for that kind of source."""
        return self.fix.get(source_kind)

    @property
    def short_summary(self) -> str:
        """The summary's first sentence (``rule --all``, SARIF's shortDescription)."""
        return self.summary.split(". ")[0].rstrip(".") if self.summary else self.name

    @property
    def doc_url(self) -> str:
        return doc_url(self.code)

    def markdown(self) -> str:
        """The rule's documentation under ruff's headings (docs/rules/<CODE>.md)."""
        lines = [
            f"# {self.code} `{self.name}`",
            "",
            f"Miss class: **{self.miss_class}** · default severity: **{self.severity}**",
            "",
            self.summary,
            "",
        ]
        for key, title in DOC_SECTIONS:
            text = self.docs.get(key, "").strip()
            if text:
                lines += [f"## {title}", "", text, ""]
        return "\n".join(lines).rstrip() + "\n"


def doc_url(code: str) -> str:
    """The link to rule ``code``'s documentation (``DOCS_URL``)."""
    return DOCS_URL.format(code=code)


def is_absolute_url(url: str) -> bool:
    """An absolute URI (a scheme and a host): what SARIF's `helpUri` must be, and GitHub's upload checks."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return bool(parts.scheme and parts.netloc)


@lru_cache(maxsize=None)
def known_codes() -> frozenset:
    """Every rule code, from the rule files' names alone (``M101.toml``): no TOML is parsed, so a
    warm run can validate selectors for free. A test checks each file's name equals its code."""
    return frozenset(p.stem for p in rules_dir().glob("*.toml"))


@lru_cache(maxsize=None)
def all_rules() -> Dict[str, Rule]:
    return {code: _rule(code) for code in sorted(known_codes())}


def _rule(code: str) -> Rule:
    """One rule file parsed (a check that words its message from its rule's data parses that
    file, not all thirty: a cold one-template run asks for one or two)."""
    return _parsed_rule(rules_dir(), code)


@lru_cache(maxsize=None)
def _parsed_rule(directory: Path, code: str) -> Rule:  # memo by directory too: the rules a run reads are where rules_dir() says
    from promptlint.base.toml_io import shipped

    path = directory / f"{code}.toml"
    data = shipped(path)  # through its JSON copy in the user's cache
    return Rule(
        code=data["code"],
        name=data["name"],
        miss_class=data.get("miss-class", "E"),
        severity=data.get("severity", "warning"),
        summary=data.get("summary", ""),
        docs=data.get("docs", {}),
        data=data.get("data", {}),
        cases=data.get("cases", []),
        path=path,
        fix=data.get("fix", {}),
    )


def get(code: str) -> Rule:
    if code not in known_codes():
        raise KeyError(code)
    return _rule(code)


def lookup(code_or_name: str) -> Optional[Rule]:
    rules = all_rules()
    key = code_or_name.strip()
    if key.upper() in rules:
        return rules[key.upper()]
    for rule in rules.values():
        if rule.name == key:
            return rule
    return None


# ------------------------------------------------------------------ implementations

_IMPLEMENTED_BY: Dict[str, str] = {}


def implements(module: str, *codes: str) -> Tuple[str, ...]:
    """Register ``module`` as the implementation of ``codes``; returns them (a module's ``CODES``).

    Registering a code a second time from another module is a programming error.
    """
    for code in codes:
        owner = _IMPLEMENTED_BY.setdefault(code, module)
        if owner != module:
            raise RuntimeError(f"{code} is implemented twice: by {owner} and by {module}")
    return tuple(codes)


def implementations() -> Dict[str, str]:
    """code -> implementing module, for the modules imported so far."""
    return dict(_IMPLEMENTED_BY)
