"""Plain records: the only thing reporters see.

A ``Finding`` is built complete once (``kernel.finding``: cause, severity, figures and the
variant's description go to the constructor) and is frozen: where the driver legitimately
derives a changed copy (the linted source line, the baseline mark, the cost, the models it
hits), it makes one with ``dataclasses.replace``. A ``Result`` is what a check run found, and
``ReportContext`` what a reporter may know of the world around it (paths, colour, CI roots).

`Finding.to_dict()` and `Result.to_dict()` are the documented JSON contract
(docs/output-formats.md): fields are only ever added, never renamed or removed. A finding also
carries the text of its source line as it was linted (``source_line``: the editor buffer or
stdin, not the file on disk), which reporters print and fingerprint; it is not part of the JSON
contract.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
import re
from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple


@dataclass(frozen=True)
class DivergentToken:
    """The first token where a variant's ids leave the base render's (S), with both tokens' texts."""

    index: int  # S: the first token that differs
    base_id: Optional[int]  # None when one sequence is a prefix of the other
    variant_id: Optional[int]
    base_text: str
    variant_text: str
    char_offset: int  # offset of the token in the base render


@dataclass(frozen=True)
class SentBy:
    """The call that sends a prompt whose hazard is made in another module (a Python finding is reported
    where the hazard is made; this is where the request goes): its file (display path), 1-based line and
    column, and the call's text."""

    path: str
    line: int
    column: int
    call: str


@dataclass(frozen=True)
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
        """From a ``promptlint.arithmetic.compare.Comparison``."""
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


# Lines as Jinja and Python count them (universal newlines), not str.splitlines(), which also
# breaks at form feeds, U+2028 and other characters neither counts as a line end.
_LINE_END = re.compile(r"\r\n|\r|\n")
SNIPPET_WIDTH = 160  # characters of a long source line a snippet keeps around the finding
_SNIPPET_BEFORE = 40


@dataclass(frozen=True)
class SourceLine:
    """The text of a finding's line, cut around the finding when the line is long."""

    text: str
    start_column: int = 1  # the line's column of text[0] (> 1: the start was cut)
    cut_end: bool = False  # the end of the line was cut
    start_byte: int = 0  # UTF-8 bytes of the line before text[0] (rdjson's byte columns)

    @classmethod
    def of(cls, source: str, line: int, column: int = 1) -> Optional["SourceLine"]:
        """Line ``line`` (1-based) of ``source``, or None when there is no such line."""
        if line < 1 or not source:
            return None
        pos = 0
        for _ in range(line - 1):
            m = _LINE_END.search(source, pos)
            if m is None:
                return None
            pos = m.end()
        m = _LINE_END.search(source, pos)
        end = m.start() if m else len(source)
        if pos == len(source) and line > 1 and m is None:
            return None  # past the last line (a text ending in a newline has no empty line after it)
        return cls.cut(source[pos:end], column)

    @classmethod
    def cut(cls, text: str, column: int = 1) -> "SourceLine":
        if len(text) <= SNIPPET_WIDTH:
            return cls(text)
        start = max(0, min(column - 1 - _SNIPPET_BEFORE, len(text) - SNIPPET_WIDTH))
        return cls(text[start : start + SNIPPET_WIDTH], start + 1, start + SNIPPET_WIDTH < len(text),
                   len(text[:start].encode("utf-8", "surrogatepass")))

    def byte_column(self, column: int) -> Optional[int]:
        """The 1-based UTF-8 byte column of code-point ``column``; None when it falls outside the kept part."""
        i = column - self.start_column
        if i < 0 or i > len(self.text):
            return None
        return self.start_byte + len(self.text[:i].encode("utf-8", "surrogatepass")) + 1

    def span(self, column: int, end_column: Optional[int] = None) -> str:
        """The text from ``column`` to ``end_column`` (exclusive; whole line when None) within the kept part."""
        first = max(column - self.start_column, 0)
        if end_column is None:
            return self.text
        return self.text[first : max(end_column - self.start_column, first)]


@dataclass(frozen=True)
class Cost:
    """What ``tokens_per_request`` prefill tokens recomputed by every request cost a day
    (``[tool.promptlint.cost]``; promptlint.arithmetic.cost computes it)."""

    tokens_per_request: int
    requests_per_day: float
    usd_per_day: Optional[float] = None  # with prices (a provider's table, or configured)
    gpu_seconds_per_day: Optional[float] = None  # with prefill-tokens-per-second
    priced_as: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"tokens_per_request": self.tokens_per_request, "requests_per_day": self.requests_per_day}
        if self.usd_per_day is not None:
            out["usd_per_day"] = round(self.usd_per_day, 6)
        if self.gpu_seconds_per_day is not None:
            out["gpu_seconds_per_day"] = round(self.gpu_seconds_per_day, 6)
        if self.priced_as:
            out["priced_as"] = self.priced_as
        return out

    def describe(self) -> str:
        """``160 tokens/request × 10,000 requests/day = $3.00/day`` (and GPU-seconds)."""
        amounts = []
        if self.usd_per_day is not None:
            amounts.append(f"${abs(self.usd_per_day):,.2f}/day")
        if self.gpu_seconds_per_day is not None:
            amounts.append(f"{abs(self.gpu_seconds_per_day):,.1f} GPU-s/day")
        head = f"{abs(self.tokens_per_request):,} tokens/request × {self.requests_per_day:,.0f} requests/day"
        saved = " saved" if self.tokens_per_request < 0 else ""
        return head + (" = " + ", ".join(amounts) + saved if amounts else saved) + (f" ({self.priced_as})" if self.priced_as else "")


@dataclass(frozen=True)
class ModelHit:
    """One deployed model a finding hits (``tokenizers``): its first divergent token and blocks."""

    model: str  # the name in `tokenizers`
    engine: str
    block_size: int
    first_divergent_token: Optional[DivergentToken] = None
    arithmetic: Optional[Arithmetic] = None

    def describe(self) -> str:
        """``qwen: first divergent token #25 '6' vs '7', 2 of 3 blocks lost (vllm, block 16)``."""
        t, a = self.first_divergent_token, self.arithmetic
        if t is None or a is None:
            return self.model

        def shown(text: str) -> str:
            return repr(text) if text else "(end of prompt)"

        return (f"{self.model}: first divergent token #{t.index:,} {shown(t.base_text)} vs {shown(t.variant_text)}, "
                f"{a.lost_blocks:,} of {a.ideal_eligible_blocks:,} blocks lost ({self.engine}, block {self.block_size})")

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"model": self.model, "engine": self.engine, "block_size": self.block_size}
        if self.first_divergent_token is not None:
            out["first_divergent_token"] = asdict(self.first_divergent_token)
        if self.arithmetic is not None:
            out.update(asdict(self.arithmetic))
        return out


@dataclass(frozen=True)
class StoredAt:
    """Where a template stored as a JSON string (tokenizer_config.json) sits in that file: the
    finding's own line and column are the template's; these are the JSON file's."""

    key: str  # the JSON key path, e.g. "chat_template" or "chat_template[1].template"
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Finding:
    """One finding, complete and frozen (built by ``kernel.finding``; changed copies by ``dataclasses.replace``)."""

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
    notes: Tuple[str, ...] = ()  # extra lines for humans
    evidence: Optional[Dict[str, Any]] = None  # with --evidence: both renders
    variant_description: Optional[str] = None  # the controlled change, in words
    stored_at: Optional[StoredAt] = None  # a template stored in JSON: its position in the JSON file
    source_line: Optional[SourceLine] = None  # the linted text of `line` (reporters; not in JSON)
    cause: Optional[str] = None  # M204: why the history does not grow as a prefix (docs/output-formats.md)
    baseline: Optional[str] = None  # check --baseline: "existing" (also at the baseline) or "new"
    cost: Optional[Cost] = None  # [tool.promptlint.cost]: what lost_tokens cost a day (a priced copy, after linting)
    models: Tuple[ModelHit, ...] = ()  # `tokenizers`: each model it hits (the merged copy, after linting)
    sent_by: Tuple[SentBy, ...] = ()  # a Python hazard made in one module and sent from another: the sending calls

    def __post_init__(self):
        # sequences given as lists are kept as tuples: a finding's notes cannot grow after it is built
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "models", tuple(self.models))
        object.__setattr__(self, "sent_by", tuple(self.sent_by))

    @property
    def sort_key(self):
        return (self.path, self.line, self.column, self.code)

    def to_dict(self, evidence: bool = False, internal: bool = False) -> Dict[str, Any]:
        """The JSON record; ``internal`` adds what only the result cache keeps (the source line)."""
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
        if self.cause:
            out["cause"] = self.cause
        if self.first_divergent_token is not None:
            out["first_divergent_token"] = asdict(self.first_divergent_token)
        if self.arithmetic is not None:
            out.update(asdict(self.arithmetic))
        if self.notes:
            out["notes"] = list(self.notes)
        if self.sent_by:
            out["sent_by"] = [asdict(s) for s in self.sent_by]
        if self.stored_at is not None:
            out["stored_at"] = asdict(self.stored_at)
        if self.baseline is not None:
            out["baseline"] = self.baseline
        if self.cost is not None:
            out["cost"] = self.cost.to_dict()
        if self.models:
            out["models"] = [m.to_dict() for m in self.models]
        if evidence and self.evidence is not None:
            out["evidence"] = self.evidence
        if internal and self.source_line is not None:
            out["source_line"] = asdict(self.source_line)
        return out


def finding_from_dict(d: Dict[str, Any]) -> Finding:
    """Rebuild a Finding from ``Finding.to_dict(evidence=..., internal=True)`` (the result cache);
    TypeError or KeyError for a record of another shape."""
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
        notes=tuple(d.get("notes", [])),
        evidence=d.get("evidence"),
        variant_description=d.get("variant"),
        cause=d.get("cause"),
        stored_at=StoredAt(**d["stored_at"]) if d.get("stored_at") else None,
        source_line=SourceLine(**d["source_line"]) if d.get("source_line") else None,
        sent_by=tuple(SentBy(**s) for s in d.get("sent_by", ())),
    )


class TokenizerShown(Protocol):
    """What a result says of its tokenizer (``tokens.TokenizerSpec`` is one; records import nothing above them)."""

    path: Path
    embedded: bool
    display: str


class BaselineShown(Protocol):
    """What a result says of its baseline (``measurements.Baseline`` is one: ``check --baseline``)."""

    ref: str
    commit: str
    block_size: int
    deltas: list
    fixed_findings: int
    models: list

    def count(self, status: str) -> int: ...

    def to_dict(self, findings: Sequence["Finding"]) -> Dict[str, Any]: ...


@dataclass(frozen=True)
class ModelRun:
    """One deployed model a check ran for (`tokenizers`): the `models` entries of the `json` document."""

    name: str
    path: Optional[str]  # its tokenizer.json; None: the embedded tokenizer
    sha256: Optional[str]
    engine: str
    block_size: int

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "path": self.path, "sha256": self.sha256, "engine": self.engine,
                "block_size": self.block_size}


@dataclass(frozen=True)
class Result:
    """What a check run found: the record every reporter formats (``to_dict`` is the `json` format).
    Built once, when the run finishes (promptlint.driver.lint.finish, models.merge); a later step
    (the cost, the baseline marks) derives a copy with ``dataclasses.replace``."""

    findings: List[Finding] = field(default_factory=list)  # hazards (M codes), PL notes
    errors: List[Finding] = field(default_factory=list)  # files that could not be analysed (E codes)
    files: int = 0
    tokenizer: Optional[TokenizerShown] = None
    tokenizer_sha256: Optional[str] = None
    notices: List[str] = field(default_factory=list)
    engine: str = "vllm"  # the profile the figures are for
    block_size: int = 16  # that profile's block (page) size
    baseline: Optional[BaselineShown] = None  # check --baseline (promptlint.driver.baseline)
    models: Tuple[ModelRun, ...] = ()  # `tokenizers`: every deployed model, in the configuration's order

    def to_dict(self, version: str, evidence: bool = False) -> Dict[str, Any]:
        """The `json` document (docs/output-formats.md), its fields in the contract's order."""
        spec = self.tokenizer
        out: Dict[str, Any] = {
            "version": version,
            "tokenizer": {
                "path": None if spec is None or spec.embedded else str(spec.path),
                "sha256": self.tokenizer_sha256,
                "embedded": bool(spec is not None and spec.embedded),
            },
            "engine": self.engine,
            "block_size": self.block_size,
            "files": self.files,
            "findings": [f.to_dict(evidence) for f in self.findings],
            "errors": [f.to_dict(evidence) for f in self.errors],
            # chat scenarios that could not be rendered (PL102 findings, listed on their own as well)
            "skipped_scenarios": [
                {"path": f.path, "line": f.line, "scenario": f.variable, "reason": f.message}
                for f in self.findings
                if f.code == "PL102"
            ],
        }
        if self.models:  # `tokenizers`: the models linted against ("tokenizer" is the first's)
            out["models"] = [m.to_dict() for m in self.models]
        if self.baseline is not None:  # check --baseline: the per-template comparison
            out["baseline"] = self.baseline.to_dict(self.findings + self.errors)
        return out


@dataclass(frozen=True)
class ReportContext:
    """All a reporter knows besides the result: the front end derives it from the process (the
    working directory, the environment, the terminal) so that no reporter reads them itself."""

    cwd: Path  # where relative finding paths are relative to
    git_root: Path  # the enclosing git work tree of cwd, else cwd
    ci_roots: Dict[str, Path] = field(default_factory=dict)  # GITHUB_WORKSPACE, CI_PROJECT_DIR when set
    color: bool = False  # ANSI colour (a terminal, no NO_COLOR; FORCE_COLOR)
    annotate: Optional[str] = None  # --annotate: "all" or "new" (github, markdown)
    evidence: bool = False  # --evidence: both renders in the JSON formats

    def root(self, ci_variable: Optional[str] = None) -> Path:
        """The repository root paths are reported against: ``$ci_variable`` when set, else the git work tree."""
        return self.ci_roots.get(ci_variable or "", self.git_root)
