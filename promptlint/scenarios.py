"""Scenarios: the sample inputs a template is rendered with, and what each input is.

Each variable has a value and a kind:
- ``static``: the same for every request (the default for a given value);
- ``per-request``: legitimately differs per request (the user's question); it marks
  where shared material ends;
- ``volatile``: differs on every request even for the same question (time, ids),
  with a sub-kind (timestamp, date, time, id) so variants are realistic.

A sidecar samples file (``system.samples.toml`` beside ``system.j2``, or ``.json``)
declares them; without one, a scenario is inferred from the template alone.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from promptlint import bounded_io

SPEC_KEYS = {"value", "kind", "sub-kind", "variant", "order"}


class SamplesError(Exception):
    def __init__(self, path: Path, message: str):
        super().__init__(message)
        self.path = path
        self.message = message


@dataclass
class Variable:
    name: str
    value: Any
    kind: str = "static"
    sub_kind: Optional[str] = None
    variant: Any = None  # explicit second value, if the samples file gives one
    declared: bool = False  # from a samples file (True) or inferred (False)
    order: Optional[str] = None  # lists: "pinned" or "unordered" (samples file)

    def variant_value(self) -> Any:
        if self.variant is not None:
            return self.variant
        if self.kind == "volatile":
            return volatile_variant(self.value, self.sub_kind)
        return per_request_variant(self.value)


@dataclass
class Scenario:
    variables: Dict[str, Variable] = field(default_factory=dict)
    samples_path: Optional[Path] = None
    tools_order: Optional[str] = None  # "pinned": tool order is fixed by the application

    def values(self, **overrides: Any) -> Dict[str, Any]:
        out = {name: v.value for name, v in self.variables.items()}
        out.update(overrides)
        return out

    def of_kind(self, kind: str) -> List[Variable]:
        return [v for v in self.variables.values() if v.kind == kind]


# ---------------------------------------------------------------- samples files


def samples_path_for(template: Path) -> Optional[Path]:
    stem = template.name.rsplit(".", 1)[0] if "." in template.name else template.name
    for suffix in (".samples.toml", ".samples.json"):
        candidate = template.with_name(stem + suffix)
        if candidate.is_file():
            return candidate
    return None


def _parse_samples(path: Path, text: str) -> Any:
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except ValueError as e:
            raise SamplesError(path, f"invalid JSON: {e}") from None
    from promptlint.toml_io import toml_loads

    try:
        return toml_loads(text)
    except ValueError as e:
        raise SamplesError(path, f"invalid TOML: {e}") from None


def _step(moment, delta):
    """The next request's value; the previous one at the end of the calendar (9999-12-31), where
    only the difference matters."""
    try:
        return moment + delta
    except OverflowError:
        return moment - delta


def load_samples(path: Path) -> Dict[str, Any]:
    """Parse and validate a samples file; raises SamplesError with a one-line reason."""
    try:
        text = bounded_io.read_text(path)
    except bounded_io.InputRefused as e:
        raise SamplesError(path, f"cannot read the samples file: {e}") from None
    except OSError as e:
        raise SamplesError(path, f"cannot read the samples file ({e.strerror})") from None
    except UnicodeDecodeError:
        raise SamplesError(path, "samples file is not UTF-8 text") from None
    try:
        data = _parse_samples(path, text)
        from promptlint.schemas import validate

        problem = validate("samples", data)
    except RecursionError:  # json, tomllib and jsonschema all recurse per nesting level
        raise SamplesError(path, "invalid samples file: values nested too deeply; flatten them") from None
    if problem:
        raise SamplesError(path, f"invalid samples file: {problem}")
    return data


def scenario_from_samples(data: Dict[str, Any], path: Path) -> Scenario:
    scenario = Scenario(samples_path=path, tools_order=data.get("tools-order"))
    for name, entry in (data.get("variables") or {}).items():
        if isinstance(entry, dict) and entry and set(entry) <= SPEC_KEYS and ("value" in entry or "kind" in entry):
            if "value" not in entry:
                raise SamplesError(path, f"variables.{name}: a `value` is required")
            kind = entry.get("kind", "static")
            sub = entry.get("sub-kind")
            if kind == "volatile" and sub is None:
                sub = guess_sub_kind(name, entry["value"])
            scenario.variables[name] = Variable(name, entry["value"], kind, sub, entry.get("variant"), True, entry.get("order"))
        else:
            scenario.variables[name] = Variable(name, entry, "static", None, None, True)
    return scenario


# ---------------------------------------------------------------- inference


@dataclass(frozen=True)
class NamePatterns:
    """Which variable names are volatile (by sub-kind) or per-request: data from rules/M101.toml."""

    volatile: Tuple[Tuple[str, Tuple[str, ...]], ...]
    per_request: Tuple[str, ...]

    def kind_of(self, name: str) -> Tuple[str, Optional[str]]:
        low = name.lower()
        for sub, patterns in self.volatile:
            if any(fnmatch.fnmatchcase(low, p) for p in patterns):
                return "volatile", sub
        if any(fnmatch.fnmatchcase(low, p) for p in self.per_request):
            return "per-request", None
        return "static", None


def infer_scenario(asts, known: Iterable[str], patterns: NamePatterns, declared: Optional[Scenario] = None) -> Scenario:
    """Fill in every undeclared variable of the template (and its includes) not in ``declared``."""
    from jinja2 import meta

    if not isinstance(asts, (list, tuple)):
        asts = [asts]
    scenario = declared or Scenario()
    shapes = _Shapes()
    names = set()
    for ast in asts:
        shapes.visit(ast)
        names |= meta.find_undeclared_variables(ast)
    for name in sorted(names):
        if name in scenario.variables or name in known:
            continue
        kind, sub = patterns.kind_of(name)
        value = _placeholder(name, shapes.shape(name), kind, sub)
        scenario.variables[name] = Variable(name, value, kind, sub)
    return scenario


def template_asts(env, ast, limit: int = 50) -> list:
    """The template's AST plus those of the templates it includes/imports/extends (by constant name)."""
    from jinja2 import meta

    out, seen, queue = [ast], set(), [ast]
    while queue and len(out) < limit:
        node = queue.pop()
        for ref in meta.find_referenced_templates(node):
            if ref is None or ref in seen:
                continue
            seen.add(ref)
            try:
                source, _, _ = env.loader.get_source(env, ref)
                sub = env.parse(source)
            except Exception:  # a missing include is reported when rendering
                continue
            out.append(sub)
            queue.append(sub)
    return out


class _Shapes:
    """How each name is used: iterated (list), subscripted or .items() (mapping), else text."""

    def __init__(self):
        self.iterated: Dict[str, Optional[str]] = {}  # name -> loop variable
        self.keys: Dict[str, List[str]] = {}
        self.items_called: set = set()

    def visit(self, node) -> None:
        from jinja2 import nodes

        for n in node.find_all((nodes.For, nodes.Getattr, nodes.Getitem, nodes.Call)):
            if isinstance(n, nodes.For):
                it = n.iter
                if isinstance(it, nodes.Filter) and it.node is not None:
                    it = it.node
                if isinstance(it, nodes.Name):
                    target = n.target.name if isinstance(n.target, nodes.Name) else None
                    self.iterated[it.name] = target
            elif isinstance(n, nodes.Getattr) and isinstance(n.node, nodes.Name):
                if n.attr in ("items", "keys", "values"):
                    self.items_called.add(n.node.name)
                else:
                    self.keys.setdefault(n.node.name, []).append(n.attr)
            elif isinstance(n, nodes.Getitem) and isinstance(n.node, nodes.Name):
                if isinstance(n.arg, nodes.Const) and isinstance(n.arg.value, str):
                    self.keys.setdefault(n.node.name, []).append(n.arg.value)

    def shape(self, name: str, depth: int = 0):
        if depth > 3:
            return "text"
        if name in self.iterated:
            loop_var = self.iterated[name]
            item = self.shape(loop_var, depth + 1) if loop_var else "text"
            return ("list", item)
        if name in self.keys or name in self.items_called:
            keys = list(dict.fromkeys(self.keys.get(name, []))) or ["key_a", "key_b"]
            return ("mapping", keys)
        return "text"


def _placeholder(name: str, shape, kind: str, sub: Optional[str]):
    if kind == "volatile":
        return volatile_value(sub)
    if kind == "per-request" and shape == "text":
        return PER_REQUEST_SAMPLES[0]
    return _shaped(name, shape)


def _shaped(name: str, shape, index: int = 0):
    if shape == "text":
        return f"sample {name}" if index == 0 else f"sample {name} {index + 1}"
    if shape[0] == "list":
        return [_shaped(name, shape[1], i) for i in range(2)]
    return {k: f"sample {name} {k}" + (f" {index + 1}" if index else "") for k in shape[1]}


# ---------------------------------------------------------------- realistic variants

PER_REQUEST_SAMPLES = ("How do I reset my password?", "Where is my order #4417?")
_BASE_CLOCK = datetime(2025, 3, 14, 9, 26, 53)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_IDS = ("7f3c9a2e-4b1d-4e8a-9c6f-2d5e8b1a0c34", "c1a9e4d2-8f3b-4a7c-b5e6-9d0f1e2a3b4c")


def guess_sub_kind(name: str, value: Any) -> str:
    low = name.lower()
    if "date" in low or low in ("today", "day"):
        return "date"
    if low.endswith("_id") or low in ("uuid", "nonce", "id"):
        return "id"
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        return "date"
    return "timestamp"


def volatile_value(sub: Optional[str]) -> str:
    if sub == "date":
        return _BASE_CLOCK.date().isoformat()
    if sub == "time":
        return _BASE_CLOCK.strftime("%H:%M:%S")
    if sub == "id":
        return _IDS[0]
    return _BASE_CLOCK.isoformat(sep=" ")


def volatile_variant(value: Any, sub: Optional[str]) -> Any:
    """A second realistic value: seconds later, a day later, or another id of the same shape."""
    if not isinstance(value, str):
        return _rotate(str(value)) if not isinstance(value, (list, dict)) else value
    v = value.strip()
    if sub == "id" and value == _IDS[0]:
        return _IDS[1]
    if sub == "id":
        # Real ids keep their constant prefix ("req-", "trace_"): only the random part changes.
        m = re.match(r"^([A-Za-z]+[-_:])(?=.*\d)", value)
        if m and not _UUID.fullmatch(v):
            return m.group(1) + _rotate(value[m.end():])
    if sub in (None, "timestamp", "date", "time"):
        try:
            if sub == "date" or re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
                return value.replace(v, _step(date.fromisoformat(v), timedelta(days=1)).isoformat())
            if sub == "time" and re.fullmatch(r"\d{2}:\d{2}(:\d{2})?", v):
                t = datetime.strptime(v, "%H:%M:%S" if v.count(":") == 2 else "%H:%M")
                fmt = "%H:%M:%S" if v.count(":") == 2 else "%H:%M"
                delta = timedelta(seconds=7) if v.count(":") == 2 else timedelta(minutes=1)
                return value.replace(v, _step(t, delta).strftime(fmt))
            dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
            sep = "T" if "T" in v else " "
            out = _step(dt, timedelta(seconds=7)).isoformat(sep=sep)
            return value.replace(v, out.replace("+00:00", "Z") if v.endswith("Z") else out)
        except ValueError:
            pass
    return _rotate(value)


def _rotate(text: str) -> str:
    """Same shape, different characters: digits and letters shifted by one."""
    out = []
    for ch in text:
        if ch.isdigit():
            out.append(str((int(ch) + 1) % 10))
        elif "a" <= ch <= "z":
            out.append(chr((ord(ch) - 97 + 1) % 26 + 97))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - 65 + 1) % 26 + 65))
        else:
            out.append(ch)
    changed = "".join(out)
    return changed if changed != text else text + "-2"


def per_request_variant(value: Any) -> Any:
    if isinstance(value, str):
        if value == PER_REQUEST_SAMPLES[0]:
            return PER_REQUEST_SAMPLES[1]
        return "Different request: " + value[::-1]
    if isinstance(value, list):
        return [per_request_variant(v) for v in value] or ["another request"]
    if isinstance(value, dict):
        return {k: per_request_variant(v) for k, v in value.items()}
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    return value
