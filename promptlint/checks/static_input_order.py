"""The order family (M201-M203): a static input whose order, not its content, changes the prompt.

- M201 unsorted-json-keys: a static mapping rendered in insertion order; the variant
  inserts the same keys in reverse order (deeply, including mappings inside lists).
- M202 tool-order-unstable: the same `tools` in another order (reversed, rotated).
- M203 document-order-unstable: the same for `documents` and any list a samples file
  declares `order = "unordered"`.

Templates that sort (Jinja's own `tojson`, `dictsort`, `|sort`) render identically
for the variant, so they never fire.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from promptlint import registry

if TYPE_CHECKING:
    from promptlint.checks.interface import Run
    from promptlint.records import Finding

CODES = registry.implements(__name__, "M201", "M202", "M203")

TOOL_NAMES = ("tools", "functions", "tool_schemas")
DOCUMENT_NAMES = ("documents", "docs", "context_documents", "retrieved_documents", "passages", "chunks")


def plan(run: "Run") -> list:
    """The order variants this check renders (prefetched and tokenized in one batch)."""
    out = []
    for var in run.scenario.variables.values():
        if var.kind != "static":
            continue
        if run.enabled("M201") and _has_mapping(var.value):
            out.append({var.name: _reverse_keys(var.value)})
        if isinstance(var.value, list) and len(var.value) >= 2:
            code = _list_code(run, var)
            if code and run.enabled(code):
                out += [{var.name: permuted} for _, permuted in _permutations(var.value)]
    return out


def check(run: "Run") -> List["Finding"]:
    findings: List["Finding"] = []
    for var in run.scenario.variables.values():
        if var.kind != "static":
            continue
        if run.enabled("M201") and _has_mapping(var.value):
            variant_value = _reverse_keys(var.value)
            if variant_value != var.value or _key_orders(variant_value) != _key_orders(var.value):
                f = _compare(run, "M201", var, variant_value, _describe_keys(var.value))
                if f:
                    findings.append(f)
        if isinstance(var.value, list) and len(var.value) >= 2:
            code = _list_code(run, var)
            if code and run.enabled(code):
                for how, permuted in _permutations(var.value):
                    f = _compare(run, code, var, permuted, f"{var.name} {how}: {_names(var.value)} → {_names(permuted)}")
                    if f:
                        findings.append(f)
                        break
    return findings


def _list_code(run: "Run", var) -> Optional[str]:
    order = getattr(var, "order", None) or run.scenario_order(var.name)
    if var.name.lower() in TOOL_NAMES:
        return "M202"
    if var.name.lower() in DOCUMENT_NAMES or order == "unordered":
        return "M203"
    return None


def _compare(run: "Run", code: str, var, variant_value: Any, described: str) -> Optional["Finding"]:
    variant = run.sample(**{var.name: variant_value})
    if variant.ids == run.base().ids:
        return None
    cmp = run.compare(variant)
    if cmp.lost_blocks <= 0:
        return None
    location = run.locate(run.first_divergent_char(variant))
    pinned = run.scenario_order(var.name) == "pinned" or (code == "M202" and run.scenario_tools_pinned())
    what = {
        "M201": f"`{var.name}` is serialized in insertion order",
        "M202": f"the order of `{var.name}` changes the prompt",
        "M203": f"the order of `{var.name}` changes the prompt",
    }[code]
    message = f"{what} before the per-request content: {cmp.lost_blocks:,} of {cmp.ideal_eligible_blocks:,} eligible KV blocks lost when it changes"
    help_text = {
        "M201": "sort the keys where the mapping is built (json.dumps(sort_keys=True)) or render it with `tojson(sort_keys=true)` / `dictsort`",
        "M202": "sort tools by name where the list is built (or `|sort(attribute='name')` in the template), or pin the order",
        "M203": "sort the documents by a stable key before rendering, or pin the order",
    }[code]
    notes = [f"variant: {described}"]
    notes.append(
        f"{run.profile.name}, block {cmp.block_size}: eligible {cmp.eligible_blocks:,} blocks with the other order, "
        f"{cmp.ideal_eligible_blocks:,} with a stable one"
    )
    f = run.finding(code, message, location, variable=var.name, variant=variant, cmp=cmp, help=help_text, notes=notes)
    if pinned:
        f.severity = "info"
        f.notes.append("the samples file declares this order pinned: reported as a note")
    f.variant_description = described
    return f


# ----------------------------------------------------------------- value helpers


def _has_mapping(value: Any) -> bool:
    if isinstance(value, dict):
        return len(value) >= 2 or any(_has_mapping(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_mapping(v) for v in value)
    return False


def _reverse_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reverse_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(v) for v in value]
    return value


def _key_orders(value: Any) -> list:
    if isinstance(value, dict):
        return [list(value)] + [o for v in value.values() for o in _key_orders(v)]
    if isinstance(value, list):
        return [o for v in value for o in _key_orders(v)]
    return []


def _describe_keys(value: Any) -> str:
    orders = [o for o in _key_orders(value) if len(o) >= 2]
    if not orders:
        return "keys inserted in reverse order"
    first = orders[0]
    return f"keys inserted in reverse order ({', '.join(first)} → {', '.join(reversed(first))})"


def _permutations(items: list) -> List[Tuple[str, list]]:
    out = [("reversed", list(reversed(items)))]
    if len(items) > 2:
        out.append(("rotated by one", items[1:] + items[:1]))
    return out


def _name(item: Any) -> str:
    if isinstance(item, dict):
        if isinstance(item.get("name"), str):
            return item["name"]
        fn = item.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return fn["name"]
        for key in ("title", "id"):
            if isinstance(item.get(key), (str, int)):
                return str(item[key])
        return "{…}"
    text = str(item)
    return text if len(text) <= 24 else text[:21] + "…"


def _names(items: list) -> str:
    return ", ".join(_name(i) for i in items)
