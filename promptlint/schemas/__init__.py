"""JSON Schemas shipped with the package (config and samples files), checked with jsonschema."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

_DIR = Path(__file__).parent


@lru_cache(maxsize=None)
def schema(name: str) -> dict:
    return json.loads((_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


def validate(name: str, data: Any, where: str = "") -> Optional[str]:
    """None when ``data`` is valid, else a one-line description of the first problem."""
    from promptlint.schemas import quick

    if quick.check(schema(name), data) is True:
        return None  # surely valid: no jsonschema import (~0.1 s before a cold run's workers fork)
    import jsonschema  # lazy: ~0.1 s, only for a document the quick check cannot vouch for

    validator = jsonschema.Draft202012Validator(schema(name))
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if not errors:
        return None
    e = errors[0]
    if e.validator == "anyOf" and isinstance(e.instance, dict) and e.context:
        # A variable table: explain against the table form, the branch the user meant.
        branch = [c for c in e.context if c.schema_path and c.schema_path[0] == 0]
        if branch:
            e = max(branch, key=lambda c: len(c.absolute_path))
    path = ".".join(str(p) for p in e.absolute_path)
    prefix = f"{where}." if where and path else where
    if e.validator == "additionalProperties":
        extra = sorted(set(e.instance) - set(e.schema.get("properties", {})))
        key = f"{prefix}{path}." if path else (f"{where}." if where else "")
        return f"unknown key `{key}{extra[0]}`" if extra else e.message
    location = f"`{prefix}{path}`" if (prefix or path) else "top level"
    if e.validator == "required":
        return f"{location}: {e.message.replace(' is a required property', '')} is required"
    if e.validator == "enum":
        return f"{location}: {e.instance!r} is not one of {', '.join(map(repr, e.validator_value))}"
    if e.validator == "type":
        return f"{location}: expected {e.validator_value}, got {type(e.instance).__name__} {e.instance!r}"
    return f"{location}: {e.message}"
