"""Per-request figures of each template and their comparison with a baseline revision: plain
records that reporters print (``check --baseline``; docs/output-formats.md, "baseline").

A template's **eligible blocks per request** is measured on its base scenario: the request
rendered twice, the second time with every per-request and volatile input changed (the next
user's question, the clock a few seconds later, a new request id), as two consecutive requests
of that template are. With S the tokens the two renders share from the start and P the second
request's length, the second request can reuse ``floor(min(S, P - 1) / B)`` blocks of B tokens
(zero below a hosted API's minimum): the blocks of prefill every request after the first saves.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from promptlint.base.failing import exit_failing  # noqa: F401 - re-exported: its home is light (a plain check's exit code)

STATUSES = ("regression", "improvement", "unchanged", "new", "removed")
_PLURAL = {"regression": "regressions", "improvement": "improvements"}


@dataclass
class Measurement:
    """The eligible blocks per request of one template and scenario."""

    path: str  # POSIX, relative to the project root (the same in both trees)
    scenario: str  # "base" (inferred or a samples file) or the chat scenario's name
    template: Optional[str] = None  # a chat template's name when the source holds several
    prompt_tokens: Optional[int] = None  # P: the second request's length
    shared_tokens: Optional[int] = None  # S: what two consecutive requests share
    block_size: int = 16
    eligible_blocks: Optional[int] = None  # None: the template could not be rendered
    error: Optional[str] = None  # why not (an E code and its message)
    model: Optional[str] = None  # `tokenizers`: the model measured (None: the one tokenizer)

    @property
    def key(self) -> Tuple[str, str, str, str]:
        return (self.path, self.template or "", self.scenario, self.model or "")

    def figures(self) -> Optional[Dict[str, Any]]:
        if self.eligible_blocks is None:
            return None
        return {
            "eligible_blocks": self.eligible_blocks,
            "eligible_tokens": self.eligible_blocks * self.block_size,
            "prompt_tokens": self.prompt_tokens,
            "shared_tokens": self.shared_tokens,
        }


@dataclass
class TemplateDelta:
    """One template's measurement before and after, with the cost of the difference."""

    before: Optional[Measurement]
    after: Optional[Measurement]
    cost: Optional[Any] = None  # [tool.promptlint.cost]: a records.Cost of lost_tokens (negative: saved)

    @property
    def current(self) -> Measurement:
        return self.after if self.after is not None else self.before  # type: ignore[return-value]

    @property
    def status(self) -> str:
        if self.before is None:
            return "new"
        if self.after is None:
            return "removed"
        b, a = self.before.eligible_blocks, self.after.eligible_blocks
        if b == a:
            return "unchanged"
        if a is None or (b is not None and a < b):
            return "regression"  # fewer blocks, or no longer renders
        return "improvement"

    @property
    def delta_blocks(self) -> Optional[int]:
        """after - before (negative: a regression); None unless both were measured."""
        if self.before is None or self.after is None or self.before.eligible_blocks is None or self.after.eligible_blocks is None:
            return None
        return self.after.eligible_blocks - self.before.eligible_blocks

    @property
    def lost_tokens(self) -> Optional[int]:
        """Tokens of prefill each request recomputes that it reused at the baseline (negative: saved)."""
        d = self.delta_blocks
        return None if d is None else -d * self.current.block_size

    def to_dict(self) -> Dict[str, Any]:
        m = self.current
        return {
            "path": m.path,
            "template": m.template,
            "scenario": m.scenario,
            "status": self.status,
            "before": self.before.figures() if self.before else None,
            "after": self.after.figures() if self.after else None,
            "delta_blocks": self.delta_blocks,
            "lost_tokens": self.lost_tokens,
            "error": (self.after or self.before).error if (self.after or self.before) else None,  # type: ignore[union-attr]
            **({"cost": self.cost.to_dict()} if self.cost is not None else {}),
            **({"model": m.model, "block_size": m.block_size} if m.model is not None else {}),
        }


@dataclass
class Baseline:
    """The comparison of the working tree with revision ``ref``."""

    ref: str
    commit: str
    block_size: int
    deltas: List[TemplateDelta] = field(default_factory=list)
    fixed_findings: int = 0  # findings at the baseline that are gone
    skipped: List[Tuple[str, str]] = field(default_factory=list)  # baseline files not exported, and why
    models: List[Dict[str, Any]] = field(default_factory=list)  # `tokenizers`: each model's name, engine, block size

    def count(self, status: str) -> int:
        return sum(1 for d in self.deltas if d.status == status)

    @property
    def regressions(self) -> List[TemplateDelta]:
        return [d for d in self.deltas if d.status == "regression"]

    def to_dict(self, findings) -> Dict[str, Any]:
        marks = [f.baseline for f in findings]
        return {
            "ref": self.ref,
            "commit": self.commit,
            "block_size": self.block_size,
            "summary": {_PLURAL.get(s, s): self.count(s) for s in STATUSES},
            "findings": {"new": marks.count("new"), "existing": marks.count("existing"), "fixed": self.fixed_findings},
            "templates": [d.to_dict() for d in self.deltas],
            **({"models": [dict(m) for m in self.models]} if self.models else {}),
        }


def compare(before: List[Measurement], after: List[Measurement], models: Sequence[str] = ()) -> List[TemplateDelta]:
    """Pair the two trees' measurements by (path, template, scenario, model): regressions first,
    the largest loss first, then path order (a template's models in ``models``' order)."""
    before, after = _spread_file_errors(before, after), _spread_file_errors(after, before)
    old = {m.key: m for m in before}
    new = {m.key: m for m in after}
    deltas = [TemplateDelta(old.get(k), new.get(k)) for k in sorted(set(old) | set(new))]
    rank = {s: i for i, s in enumerate(STATUSES)}
    order = {name: i for i, name in enumerate(models)}

    def key(d: TemplateDelta):
        path, template, scenario, model = d.current.key
        return (rank[d.status], -(d.lost_tokens or 0), path, template, scenario, order.get(model, -1), model)

    return sorted(deltas, key=key)


def _spread_file_errors(rows: List[Measurement], other: List[Measurement]) -> List[Measurement]:
    """A file that cannot be read, parsed or loaded is one error row with no name; it stands for
    every prompt the other tree measured in that file (a Python module that no longer parses
    loses each of its prompts: regressions, not "new" and "removed")."""
    named: Dict[Tuple[str, str], List[Measurement]] = {}
    for m in other:
        named.setdefault((m.path, m.model or ""), []).append(m)
    keys, other_keys = {m.key for m in rows}, {o.key for o in other}
    out: List[Measurement] = []
    for m in rows:
        stands_for = [o for o in named.get((m.path, m.model or ""), []) if o.key not in keys]
        if m.error is None or m.template is not None or m.key in other_keys or not stands_for:
            out.append(m)
            continue
        out += [replace(m, template=o.template, scenario=o.scenario) for o in stands_for]
    return out


def finding_key(f, root_relative: str, loose: bool) -> Tuple:
    """What identifies a finding across revisions: its code, file and variable, and (unless
    ``loose``) its line's text; line numbers move when lines above are edited."""
    text = "" if loose or f.source_line is None else f.source_line.text.strip()
    return (f.code, root_relative, f.variable or "", text)


def mark_findings(current, current_paths, previous, previous_paths) -> Tuple[Dict[int, str], int]:
    """(id(finding) -> "existing"/"new" for each current finding, how many baseline findings are gone):
    matched by line text first, then by code, file and variable alone. The driver gives each
    finding its mark in a copy (``dataclasses.replace``: findings are frozen)."""
    marks = {id(f): "new" for f in current}
    unmatched = set(range(len(previous)))
    for loose in (False, True):
        pool: Dict[Tuple, List[int]] = {}
        for i in sorted(unmatched):
            pool.setdefault(finding_key(previous[i], previous_paths[i], loose), []).append(i)
        for f, rel in zip(current, current_paths):
            candidates = pool.get(finding_key(f, rel, loose)) if marks[id(f)] == "new" else None
            if candidates:
                unmatched.discard(candidates.pop(0))
                marks[id(f)] = "existing"
    return marks, len(unmatched)
