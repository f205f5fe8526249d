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
