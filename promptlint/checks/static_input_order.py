"""The order family (M201-M203): a static input whose order, not its content, changes the prompt.

- M201 unsorted-json-keys: a static mapping rendered in insertion order; the variant
  inserts the same keys in reverse order (deeply, including mappings inside lists).
- M202 tool-order-unstable: the same `tools` in another order (reversed, rotated).
- M203 document-order-unstable: the same for `documents` and any list a samples file
  declares `order = "unordered"`.

On a chat template a request list (`tools`, `documents`) is rendered verbatim by the model's
template: its order and its key order are one hazard with one fix (a canonical list built by
the client), so they are one finding (M202/M203) whose notes give both variants and whose
figures are the larger loss; M201 keeps the other mappings. Only what the frontend lets a
client vary is varied: behind vLLM's OpenAI server the tool envelope is rebuilt by pydantic
(`type`, `function`, `name`, `description`, `parameters` in declared order), so only the keys
inside `parameters` come from the client.

Templates that sort (Jinja's own `tojson`, `dictsort`, `|sort`) render identically
for the variant, so they never fire.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from promptlint.arithmetic import figures
from promptlint.base import registry

if TYPE_CHECKING:
    from promptlint.checks.interface import Run
    from promptlint.base.records import Finding

CODES = registry.implements(__name__, "M201", "M202", "M203")

TOOL_NAMES = ("tools", "functions", "tool_schemas")
DOCUMENT_NAMES = ("documents", "docs", "context_documents", "retrieved_documents", "passages", "chunks")


def plan(run: "Run") -> list:
    """The order variants this check renders (prefetched and tokenized in one batch)."""
    out = []
    for var in run.scenario.variables.values():
        if var.kind != "static":
            continue
        code = _list_code(run, var) if isinstance(var.value, list) else None
        merged = _merged(run, var, code)
        if (run.enabled("M201") or merged) and _has_mapping(var.value):
            if not merged or run.enabled(code):
                out.append({var.name: _key_variant(run, var, merged)[0]})
        if isinstance(var.value, list) and len(var.value) >= 2:
            if code and run.enabled(code):
                out += [{var.name: permuted} for _, permuted in _permutations(var.value)]
    return out


def check(run: "Run") -> List["Finding"]:
    findings: List["Finding"] = []
    for var in run.scenario.variables.values():
        if var.kind != "static":
            continue
        code = _list_code(run, var) if isinstance(var.value, list) else None
        merged = _merged(run, var, code)
        candidates: List["Finding"] = []
        if _has_mapping(var.value) and (run.enabled(code) if merged else run.enabled("M201")):
            variant_value, described = _key_variant(run, var, merged)
            if _key_orders(variant_value) != _key_orders(var.value):
                label, path = var.name, None
                if not merged:  # name the mapping whose order the prompt shows, not the input holding it
                    label, described, path = _diverging_mapping(run, var, variant_value, described)
                if path is not None and not var.declared and _keys_unseen(run, var, path):
                    # none of its keys reaches the prompt (`.values()` of a registry promptlint made up): the
                    # order of a collection, not a serialization's key order; M203 when declared unordered
                    f = None
                else:
                    f = _compare(run, code if merged else "M201", var, variant_value, described, label)
                if f and merged:
                    candidates.append(f)
                elif f:
                    findings.append(f)
        if isinstance(var.value, list) and len(var.value) >= 2 and code and run.enabled(code):
            for how, permuted in _permutations(var.value):
                f = _compare(run, code, var, permuted, f"{var.name} {how}: {_names(var.value)} → {_names(permuted)}")
                if f:
                    candidates.insert(0, f)
                    break
        if candidates:
            findings.append(_one_finding(run, var, candidates) if merged else candidates[0])
    return findings


def _merged(run: "Run", var, code: Optional[str]) -> bool:
    """A chat template's request list: order and key order are one finding (see the module docstring)."""
    return code is not None and run.conversation is not None


def _one_finding(run: "Run", var, candidates: List["Finding"]) -> "Finding":
    """The larger loss of the order and key-order variants, with both as notes."""
    worst = max(candidates, key=lambda f: (f.arithmetic.lost_blocks, -f.first_divergent_token.index))
    message = worst.message
    if len(candidates) > 1 or worst.variant_description.startswith("keys"):
        message = (
            f"`{var.name}` is rendered verbatim before the per-request content: its order and key order must be canonical: "
            f"{worst.arithmetic.lost_blocks:,} of {worst.arithmetic.ideal_eligible_blocks:,} eligible KV blocks lost when "
            f"{'the key order' if worst.variant_description.startswith('keys') else 'the order'} changes"
        )
    variants = [
        f"variant: {f.variant_description}: diverges at token {f.first_divergent_token.index:,}, "
        f"{f.arithmetic.lost_blocks:,} blocks lost{' (reported)' if f is worst and len(candidates) > 1 else ''}"
        for f in candidates
    ]
    notes = variants + [n for n in worst.notes if not n.startswith("variant: ")]
    frontend = run.conversation.frontend
    if frontend == "vllm":
        notes.append(
            "vLLM's OpenAI server rebuilds each tool's envelope in declared order (type, function; name, description, "
            "parameters): only the order inside `parameters` and the order of the list come from the client"
        )
    what = "sorted by name, each schema" if var.name.lower() in TOOL_NAMES else "in one stable order, each item"
    help_text = (
        f"build `{var.name}` in one canonical form on every client: {what} with its keys in one fixed order (one "
        "source, or a `json.loads(json.dumps(x, sort_keys=True))` round trip); the model's template renders it as sent, "
        "and changing the template would change the format the model was trained on"
    )
    # the candidates were measured to choose one: the reported finding is the worst's copy with both in its notes
    return dataclasses.replace(worst, message=message, notes=notes, help=help_text)


def _list_code(run: "Run", var) -> Optional[str]:
    order = getattr(var, "order", None) or run.scenario_order(var.name)
    if var.name.lower() in TOOL_NAMES:
        return "M202"
    if var.name.lower() in DOCUMENT_NAMES or order == "unordered":
        return "M203"
    return None


def _compare(run: "Run", code: str, var, variant_value: Any, described: str, label: Optional[str] = None) -> Optional["Finding"]:
    variant = run.sample(**{var.name: variant_value})
    if variant.ids == run.base().ids:
        return None
    cmp = run.compare(variant)
    if cmp.lost_blocks <= 0:
        return None
    location = run.locate(run.first_divergent_char(variant))
    pinned = run.scenario_order(var.name) == "pinned" or (code == "M202" and run.scenario_tools_pinned())
    label = label or var.name
    what = {
        "M201": f"`{label}` is serialized in insertion order",
        "M202": f"the order of `{var.name}` changes the prompt",
        "M203": f"the order of `{var.name}` changes the prompt",
    }[code]
    message = f"{what} before the per-request content: {cmp.lost_blocks:,} of {cmp.ideal_eligible_blocks:,} eligible KV blocks lost when it changes"
    help_text = {
        "M201": "sort the keys where the mapping is built (json.dumps(sort_keys=True)) or render it with `tojson(sort_keys=true)` / `dictsort`",
        "M202": "sort tools by name where the list is built (or `|sort(attribute='name')` in the template), or pin the order",
        "M203": "sort the documents by a stable key before rendering, or pin the order",
    }[code]
    if code in ("M202", "M203") and not var.declared and run.conversation is None:
        # the items are the inferred stand-ins (the template names none): say so, and how a caller that
        # already orders them stably declares it
        described = f"{described} (sample items promptlint made up: the template names none)"
        help_text += (
            f"; if the caller already builds `{var.name}` in one stable order, declare it in the samples file beside the "
            f"template: `[variables.{var.name}]` with `order = \"pinned\"` and its `value`"
        )
    notes = [
        f"{run.profile.name}, block {cmp.block_size}: eligible {figures.blocks(cmp.eligible_blocks)} with the other order, "
        f"{cmp.ideal_eligible_blocks:,} with a stable one"
    ]
    if pinned:
        notes.append("the samples file declares this order pinned: reported as a note")
    return run.finding(code, message, location, variable=label, variant=variant, cmp=cmp, help=help_text, notes=notes,
                       severity="info" if pinned else None, variant_description=described)


# ----------------------------------------------------------------- value helpers

MAX_MAPPINGS = 24  # sub-mappings tried one by one to find the one the prompt shows in insertion order


def _diverging_mapping(run: "Run", var, variant_value: Any, described: str) -> Tuple[str, str, Optional[tuple]]:
    """(its label, the variant's words, its path) of the mapping inside ``var`` whose key order the prompt
    shows first: each mapping of two or more keys is reversed alone, and the one that parts the render
    where reversing them all does is it (`guest.profile`, not `guest`, for `{{ guest.profile | tojson }}`)."""
    base = run.base().text
    full = run.sample(**{var.name: variant_value})
    if full.text == base:
        return var.name, described, None
    at = run.first_divergent_char(full)
    for path, keys in _mappings(var.value, ())[:MAX_MAPPINGS]:
        alone = run.sample(**{var.name: _reverse_at(var.value, path)})
        if alone.text != base and run.first_divergent_char(alone) == at:
            if not path:
                return var.name, described, path
            label = var.name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
            return label, f"keys of `{label}` inserted in reverse order ({', '.join(keys)} → {', '.join(reversed(keys))})", path
    return var.name, described, None


def _keys_unseen(run: "Run", var, path: tuple) -> bool:
    """The keys of the mapping at ``path`` never reach the prompt: renamed, the render is the same."""
    def renamed(value: Any, rest: tuple) -> Any:
        if not rest:
            return {f"{k}_": v for k, v in value.items()}
        head = rest[0]
        if isinstance(value, list):
            return [renamed(v, rest[1:]) if i == head else v for i, v in enumerate(value)]
        return {k: (renamed(v, rest[1:]) if k == head else v) for k, v in value.items()}

    return run.sample(**{var.name: renamed(var.value, path)}).text == run.base().text


def _mappings(value: Any, path: tuple) -> List[Tuple[tuple, list]]:
    """(path, keys) of every mapping of two or more keys in ``value``, outermost first."""
    out = []
    if isinstance(value, dict):
        if len(value) >= 2:
            out.append((path, [str(k) for k in value]))
        for k, v in value.items():
            out += _mappings(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _mappings(v, path + (i,))
    return out


def _reverse_at(value: Any, path: tuple) -> Any:
    """``value`` with the keys of the mapping at ``path`` (only that one) in reverse order."""
    if not path:
        return {k: value[k] for k in reversed(list(value))}
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        return [_reverse_at(v, rest) if i == head else v for i, v in enumerate(value)]
    return {k: (_reverse_at(v, rest) if k == head else v) for k, v in value.items()}


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


def _key_variant(run: "Run", var, merged: bool) -> Tuple[Any, str]:
    """The key-order variant and its description: every key, or (vLLM's tools) only inside `parameters`."""
    if merged and run.conversation.frontend == "vllm" and var.name.lower() in TOOL_NAMES:
        value = [_reverse_parameters(t) for t in var.value]
        for t in var.value:
            params = (t.get("function") or {}).get("parameters") if isinstance(t, dict) else None
            orders = [o for o in _key_orders(params) if len(o) >= 2]
            if orders:
                return value, (
                    f"keys inside `parameters` inserted in reverse order ({_name(t)}: "
                    f"{', '.join(orders[0])} → {', '.join(reversed(orders[0]))})"
                )
        return value, "keys inside `parameters` inserted in reverse order"
    if merged and var.value and isinstance(var.value[0], dict) and len(var.value[0]) >= 2:
        first = list(var.value[0])
        return _reverse_keys(var.value), (
            f"keys inserted in reverse order at every depth ({_name(var.value[0])}: "
            f"{', '.join(first)} → {', '.join(reversed(first))})"
        )
    return _reverse_keys(var.value), _describe_keys(var.value)


def _reverse_parameters(tool: Any) -> Any:
    if not isinstance(tool, dict) or not isinstance(tool.get("function"), dict):
        return tool
    fn = dict(tool["function"])
    if "parameters" in fn:
        fn["parameters"] = _reverse_keys(fn["parameters"])
    return {**tool, "function": fn}


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
