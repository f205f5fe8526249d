"""Two OpenAI Chat Completions bodies compared field by field (`promptlint diff`): which message
and which field differ, in the order they matter to a prefix cache.

The order: ``model`` (two models never share a cache), the tools in order (each tool's name,
description, parameter schema, then its other keys), the messages in order (each one's role,
name, content, tool calls, tool_call_id, then its other keys), the fields the chat template
also reads (``chat_template_kwargs``, ``add_generation_prompt``, ``continue_final_message``,
``documents``, ``tool_choice``), then every other field (sampling parameters: they do not change
the prompt). Each field that differs is one row with the path to the first difference inside it
(``messages[2].content``, ``tools[0].function.parameters.properties.city.type``) and what
differs there: a character offset for text, "only in the base/variant", or the same keys in
another order (which changes the JSON a template renders, hence the tokens).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Tuple

TEMPLATE_FIELDS = ("chat_template_kwargs", "add_generation_prompt", "continue_final_message", "documents", "tool_choice")
MESSAGE_FIELDS = ("role", "name", "content", "tool_calls", "tool_call_id")
TOOL_FIELDS = (("name", ("function", "name")), ("description", ("function", "description")),
               ("parameters", ("function", "parameters")))
_MISSING = object()
_SHOWN = 60  # characters of a value shown


@dataclass
class Difference:
    path: str  # where the first difference inside the field is: "messages[2].content"
    field: str  # model | tool | tool name | tool description | tool schema | message | role | name | content | ...
    what: str  # "text differs at character 31", "only in the variant", "same keys in another order", ...
    base: Optional[str]  # the differing values, shortened (None: absent on that side)
    variant: Optional[str]
    message: Optional[int] = None  # the message index, for a message's field
    tool: Optional[int] = None  # the tool index, for a tool's field
    in_prompt: bool = True  # False: a field the chat template does not read (model, sampling parameters)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def compare(base: dict, variant: dict) -> List[Difference]:
    """Every differing field, in the order above."""
    out: List[Difference] = []
    _field(out, base.get("model", _MISSING), variant.get("model", _MISSING), "model", "model", in_prompt=False)
    _listed(out, base.get("tools", _MISSING), variant.get("tools", _MISSING), "tools", "tool", _tool)
    _listed(out, base.get("messages", _MISSING), variant.get("messages", _MISSING), "messages", "message", _message)
    for key in TEMPLATE_FIELDS:
        _field(out, base.get(key, _MISSING), variant.get(key, _MISSING), key, key)
    seen = set(("model", "tools", "messages") + TEMPLATE_FIELDS)
    for key in [k for k in base if k not in seen] + [k for k in variant if k not in seen and k not in base]:
        _field(out, base.get(key, _MISSING), variant.get(key, _MISSING), key, key, in_prompt=False)
    return out


def _listed(out, a, b, name: str, item: str, each) -> None:
    if not isinstance(a, list) or not isinstance(b, list):
        _field(out, a, b, name, name)
        return
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else _MISSING
        y = b[i] if i < len(b) else _MISSING
        if isinstance(x, dict) and isinstance(y, dict):
            each(out, x, y, f"{name}[{i}]", i)
        else:
            _field(out, x, y, f"{name}[{i}]", item, **{item: i})


def _tool(out, a: dict, b: dict, path: str, i: int) -> None:
    before = len(out)
    for label, keys in TOOL_FIELDS:
        _field(out, _get(a, keys), _get(b, keys), f"{path}.{'.'.join(keys)}",
               "tool schema" if label == "parameters" else f"tool {label}", tool=i)
    _field(out, _without_named(a), _without_named(b), path, "tool", tool=i)  # its other keys, and their order
    fa, fb = a.get("function"), b.get("function")
    if len(out) == before and isinstance(fa, dict) and isinstance(fb, dict) and list(fa) != list(fb):
        out.append(Difference(f"{path}.function", "tool", "same keys in another order", _show(list(fa)), _show(list(fb)), tool=i))


def _without_named(tool: dict) -> dict:
    """The tool with the fields compared on their own taken out of its function."""
    function = tool.get("function")
    if not isinstance(function, dict):
        return tool
    named = {keys[-1] for _, keys in TOOL_FIELDS}
    return {**tool, "function": {k: v for k, v in function.items() if k not in named}}


def _message(out, a: dict, b: dict, path: str, i: int) -> None:
    for key in MESSAGE_FIELDS:
        _field(out, a.get(key, _MISSING), b.get(key, _MISSING), f"{path}.{key}", key, message=i)
    rest = [k for k in a if k not in MESSAGE_FIELDS] + [k for k in b if k not in MESSAGE_FIELDS and k not in a]
    for key in rest:
        _field(out, a.get(key, _MISSING), b.get(key, _MISSING), f"{path}.{key}", key, message=i)


def _get(d: dict, keys: Tuple[str, ...]) -> Any:
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return _MISSING
        d = d[k]
    return d


def _field(out, a, b, path: str, field: str, in_prompt: bool = True, message: Optional[int] = None,
           tool: Optional[int] = None) -> None:
    found = _first(a, b, path)
    if found is not None:
        where, what, x, y = found
        out.append(Difference(where, field, what, _show(x), _show(y), message, tool, in_prompt))


def _first(a, b, path: str):
    """(path, what, base value, variant value) of the first difference inside a value, or None."""
    if a is _MISSING and b is _MISSING:
        return None
    if a is _MISSING or b is _MISSING:
        return (path, "only in the variant" if a is _MISSING else "only in the base", a, b)
    if type(a) is not type(b):
        return (path, f"{_kind(a)} in the base, {_kind(b)} in the variant", a, b)
    if isinstance(a, dict):
        for key in list(a) + [k for k in b if k not in a]:
            found = _first(a.get(key, _MISSING), b.get(key, _MISSING), f"{path}.{key}" if path else key)
            if found is not None:
                return found
        if list(a) != list(b):
            return (path, "same keys in another order", list(a), list(b))
        return None
    if isinstance(a, list):
        for i in range(min(len(a), len(b))):
            found = _first(a[i], b[i], f"{path}[{i}]")
            if found is not None:
                return found
        if len(a) != len(b):
            i = min(len(a), len(b))
            return (f"{path}[{i}]", "only in the variant" if len(a) < len(b) else "only in the base",
                    a[i] if i < len(a) else _MISSING, b[i] if i < len(b) else _MISSING)
        return None
    if isinstance(a, str):
        if a == b:
            return None
        n = min(len(a), len(b))
        c = next((i for i in range(n) if a[i] != b[i]), n)
        return (path, f"text differs at character {c}", a[c:], b[c:])
    return None if a == b else (path, "value differs", a, b)


def _kind(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(type(v), "a number")


def _show(v) -> Optional[str]:
    if v is _MISSING:
        return None
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
