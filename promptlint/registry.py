"""Rule metadata, read at run time from the rule files (one TOML file per rule).

The files live in the repository's top-level ``rules/`` folder and ship inside the
wheel as the ``promptlint._rules`` package; a source checkout reads ``rules/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional

DOC_SECTIONS = (
    ("what-it-does", "What it does"),
    ("why-it-matters", "Why it matters"),
    ("example", "Example"),
    ("use-instead", "Use instead"),
    ("options", "Options"),
    ("references", "References"),
)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    miss_class: str
    severity: str
    summary: str
    docs: Dict[str, str]
    data: Dict[str, Any]
    cases: List[Dict[str, Any]] = field(default_factory=list, hash=False, compare=False)
    path: Optional[Path] = None

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


def rules_dir() -> Path:
    try:
        import promptlint._rules as packaged

        return Path(packaged.__file__).parent
    except ImportError:  # a source checkout that is not installed
        return Path(__file__).resolve().parent.parent / "rules"


@lru_cache(maxsize=None)
def known_codes() -> frozenset:
    """Every rule code, from the rule files' names alone (``M101.toml``): no TOML is parsed, so a
    warm run can validate selectors for free. A test checks each file's name equals its code."""
    return frozenset(p.stem for p in rules_dir().glob("*.toml"))


@lru_cache(maxsize=None)
def all_rules() -> Dict[str, Rule]:
    from promptlint.config import toml_loads

    out: Dict[str, Rule] = {}
    for path in sorted(rules_dir().glob("*.toml")):
        data = toml_loads(path.read_text(encoding="utf-8"))
        rule = Rule(
            code=data["code"],
            name=data["name"],
            miss_class=data.get("miss-class", "E"),
            severity=data.get("severity", "warning"),
            summary=data.get("summary", ""),
            docs=data.get("docs", {}),
            data=data.get("data", {}),
            cases=data.get("cases", []),
            path=path,
        )
        out[rule.code] = rule
    return out


def get(code: str) -> Rule:
    return all_rules()[code]


def lookup(code_or_name: str) -> Optional[Rule]:
    rules = all_rules()
    key = code_or_name.strip()
    if key.upper() in rules:
        return rules[key.upper()]
    for rule in rules.values():
        if rule.name == key:
            return rule
    return None
