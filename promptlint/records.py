"""Plain finding records: the only thing reporters see.

`Finding.to_dict()` is the documented JSON contract (docs/output-formats.md):
fields are only ever added, never renamed or removed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class DivergentToken:
    index: int  # S: the first token that differs
    base_id: Optional[int]  # None when one sequence is a prefix of the other
    variant_id: Optional[int]
    base_text: str
    variant_text: str
    char_offset: int  # offset of the token in the base render


@dataclass
class Arithmetic:
    """The comparison behind a finding, for the selected engine profile."""

    prompt_tokens: int
    shared_tokens: int
    ideal_shared_tokens: int
    block_size: int
    eligible_blocks: int
    ideal_eligible_blocks: int
    lost_blocks: int
    lost_tokens: int

    @classmethod
    def from_comparison(cls, cmp) -> "Arithmetic":
        """From a ``promptlint.compare.Comparison``."""
        return cls(
            prompt_tokens=cmp.prompt_len,
            shared_tokens=cmp.shared,
            ideal_shared_tokens=cmp.ideal_shared,
            block_size=cmp.block_size,
            eligible_blocks=cmp.eligible_blocks,
            ideal_eligible_blocks=cmp.ideal_eligible_blocks,
            lost_blocks=cmp.lost_blocks,
            lost_tokens=cmp.lost_tokens,
        )


@dataclass
class Finding:
    code: str
    name: str
    miss_class: str
    severity: str  # "error" | "warning" | "info"
    message: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    variable: Optional[str] = None
    help: Optional[str] = None
    first_divergent_token: Optional[DivergentToken] = None
    arithmetic: Optional[Arithmetic] = None
    notes: List[str] = field(default_factory=list)  # extra lines for humans
    evidence: Optional[Dict[str, Any]] = None  # with --evidence: both renders
    variant_description: Optional[str] = None  # the controlled change, in words

    @property
    def sort_key(self):
        return (self.path, self.line, self.column, self.code)

    def to_dict(self, evidence: bool = False) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "code": self.code,
            "name": self.name,
            "miss_class": self.miss_class,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
        }
        if self.variable is not None:
            out["variable"] = self.variable
        if self.help:
            out["help"] = self.help
        if self.variant_description:
            out["variant"] = self.variant_description
        if self.first_divergent_token is not None:
            out["first_divergent_token"] = asdict(self.first_divergent_token)
        if self.arithmetic is not None:
            out.update(asdict(self.arithmetic))
        if self.notes:
            out["notes"] = list(self.notes)
        if evidence and self.evidence is not None:
            out["evidence"] = self.evidence
        return out


def finding_from_dict(d: Dict[str, Any]) -> Finding:
    """Rebuild a Finding from ``Finding.to_dict(evidence=True)`` (the result cache); TypeError or
    KeyError for a record of another shape."""
    for key, kind in (("code", str), ("name", str), ("severity", str), ("message", str), ("path", str),
                      ("line", int), ("column", int), ("end_line", int), ("end_column", int)):
        if not isinstance(d[key], kind):
            raise TypeError(f"cache record field {key!r} is not {kind.__name__}")
    arith_keys = [f for f in Arithmetic.__dataclass_fields__]
    arithmetic = Arithmetic(**{k: d[k] for k in arith_keys}) if all(k in d for k in arith_keys) else None
    t = d.get("first_divergent_token")
    return Finding(
        code=d["code"],
        name=d["name"],
        miss_class=d["miss_class"],
        severity=d["severity"],
        message=d["message"],
        path=d["path"],
        line=d["line"],
        column=d["column"],
        end_line=d["end_line"],
        end_column=d["end_column"],
        variable=d.get("variable"),
        help=d.get("help"),
        first_divergent_token=DivergentToken(**t) if t else None,
        arithmetic=arithmetic,
        notes=list(d.get("notes", [])),
        evidence=d.get("evidence"),
        variant_description=d.get("variant"),
    )
