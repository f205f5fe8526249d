"""What a template is rendered with: a Scenario of Variables, each with a value and a kind.

Each variable has a value and a kind:
- ``static``: the same for every request (the default for a given value);
- ``per-request``: legitimately differs per request (the user's question, retrieved text,
  the conversation so far); it marks where shared material ends;
- ``volatile``: differs on every request even for the same question (time, ids),
  with a sub-kind (timestamp, date, time, id) so variants are realistic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

SPEC_KEYS = {"value", "kind", "sub-kind", "variant", "order", "sort-key"}
KINDS = ("static", "per-request", "volatile")
VOLATILE_SUB_KINDS = ("timestamp", "date", "time", "id")
PER_REQUEST_SUB_KINDS = ("input", "retrieved", "history")


class SamplesError(Exception):
    def __init__(self, path: Path, message: str):
        super().__init__(message)
        self.path = path
        self.message = message


@dataclass
class Variable:
    """One input of a scenario: its value, its kind and the variant a check compares."""

    name: str
    value: Any
    kind: str = "static"
    sub_kind: Optional[str] = None
    variant: Any = None  # explicit second value, if the samples file (or inference) gives one
    declared: bool = False  # from a samples file (True) or inferred (False)
    order: Optional[str] = None  # lists: "pinned" or "unordered" (samples file)
    sort_key: Optional[str] = None  # lists: the field M202/M203 fixes sort by (samples file; "" = the items)
    why: Tuple[str, ...] = field(default=(), compare=False)  # inferred: how its kind and shape were read

    @property
    def path(self) -> Tuple[str, ...]:
        """A field of another input (`user.last_login_at`): (root, field, ...); () for an input itself.
        Template names cannot hold a dot, so a dotted name always means a field."""
        return tuple(self.name.split(".")) if "." in self.name and not self.name.endswith("()") and not self.name.startswith("|") else ()

    def variant_value(self) -> Any:
        from promptlint.scenarios.values import per_request_variant, volatile_variant

        if self.variant is not None:
            return self.variant
        if self.kind == "volatile":
            return volatile_variant(self.value, self.sub_kind)
        return per_request_variant(self.value)


@dataclass
class Scenario:
    """The inputs a template is rendered with, and what the samples file says of their order."""

    variables: Dict[str, Variable] = field(default_factory=dict)
    samples_path: Optional[Path] = None
    tools_order: Optional[str] = None  # "pinned": tool order is fixed by the application
    sort_keys: Dict[str, str] = field(default_factory=dict)  # chat: tools/documents -> the field fixes sort by
    include_choices: Dict[str, List[str]] = field(default_factory=dict)  # include input -> file names to try
    unresolved_includes: List[str] = field(default_factory=list)  # include inputs rendered as empty

    def values(self, **overrides: Any) -> Dict[str, Any]:
        """The render's context: every input, with ``overrides``; a field variable (`user.last_login_at`)
        is set inside its root's value (a copy)."""
        fields = {name: v for name, v in self.variables.items() if v.path}
        out = {name: v.value for name, v in self.variables.items() if name not in fields}
        out.update((k, v) for k, v in overrides.items() if k not in fields)
        for name, var in fields.items():
            root = var.path[0]
            if root in out:
                out[root] = set_field(out[root], var.path[1:], overrides.get(name, var.value))
        return out

    def of_kind(self, kind: str) -> List[Variable]:
        return [v for v in self.variables.values() if v.kind == kind]


def set_field(value: Any, path: Tuple[str, ...], new: Any) -> Any:
    """``value`` with the field at ``path`` set to ``new``: mappings along the way are copied; a value
    that is not a mapping there is returned as it is."""
    if not path:
        return new
    if not isinstance(value, dict):
        return value
    out = dict(value)
    out[path[0]] = set_field(value.get(path[0], {}) if len(path) > 1 else None, path[1:], new)
    return out
