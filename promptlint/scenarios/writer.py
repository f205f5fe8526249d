"""A scenario as a samples file: what promptlint understood of a template, to start from.

Every input is written in the table form with its kind, sub-kind, value (and variant when it is
not the kind's default), after comments saying why it was read that way. Loading the file back
gives the same scenario, so checking with it gives the same findings as checking without it.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, time
from typing import Any, List, Optional

from promptlint.scenarios.model import Scenario, Variable

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_WIDTH = 100  # values longer than this go one item per line

HEADER = """\
# Inputs of {template} as promptlint understood them: {how}.
# kind: static = the same on every request; per-request = differs by request (the question,
# retrieved text, the conversation), so the ideal shared prefix ends at the first of them;
# volatile = differs on every request even for the same question (time, ids).
# Edit values and kinds to match your application; checking with this file as it is gives the
# same findings as checking without it. docs/configuration.md describes the format.
"""


class UnwritableValue(ValueError):
    """A value TOML cannot hold (null)."""


def samples_text(scenario: Scenario, template: str, declared_in: Optional[str] = None) -> str:
    how = "inferred from the template" if declared_in is None else f"declared in {declared_in}, the rest inferred"
    out = [HEADER.format(template=template, how=how)]
    if scenario.tools_order:
        out.append(f"tools-order = {toml_value(scenario.tools_order)}\n")
    for var in scenario.variables.values():
        out.append(_table(var, declared_in))
    return "\n".join(out)


def _table(var: Variable, declared_in: Optional[str]) -> str:
    lines = [f"[variables.{toml_key(var.name)}]"]
    if var.declared:
        lines.append(f"# declared in {declared_in}" if declared_in else "# declared")
    lines += [f"# {why}" for why in var.why]
    lines.append(f"kind = {toml_value(var.kind)}")
    if var.sub_kind:
        lines.append(f"sub-kind = {toml_value(var.sub_kind)}")
    if var.order:
        lines.append(f"order = {toml_value(var.order)}")
    if var.sort_key is not None:
        lines.append(f"sort-key = {toml_value(var.sort_key)}")
    lines.append(f"value = {toml_value(var.value, _where(var.name))}")
    if var.variant is not None:
        lines.append(f"variant = {toml_value(var.variant, _where(var.name))}")
    return "\n".join(lines) + "\n"


def _where(name: str) -> str:
    return f"variables.{name}"


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    # JSON's escapes are TOML's basic-string escapes; TOML also wants DEL escaped
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any, where: str = "value", indent: int = 0, inline: bool = False) -> str:
    """``value`` as TOML; lists of long items go one item per line, except inside an inline table."""
    if value is None:
        raise UnwritableValue(f"{where} is null, which TOML cannot hold")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, dict):
        items = ", ".join(f"{toml_key(str(k))} = {toml_value(v, f'{where}.{k}', inline=True)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        parts: List[str] = [toml_value(v, f"{where}[{i}]", indent + 4, inline) for i, v in enumerate(value)]
        flat = "[" + ", ".join(parts) + "]"
        if inline or (len(flat) <= _WIDTH and "\n" not in flat):
            return flat
        pad = " " * (indent + 4)
        return "[\n" + "".join(f"{pad}{p},\n" for p in parts) + " " * indent + "]"
    raise UnwritableValue(f"{where} is a {type(value).__name__}, which a samples file cannot hold")
