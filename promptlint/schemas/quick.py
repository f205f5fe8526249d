"""A three-valued check of a document against the shipped JSON Schemas, without jsonschema.

Importing jsonschema costs ~0.1 s (attrs, referencing, its format checkers), paid before a cold
run's workers fork, for a configuration that is almost always valid. This module knows the few
keywords the shipped schemas use (Draft 2020-12 semantics, as jsonschema applies them) and answers
True (surely valid), False (surely invalid) or None (not sure: a keyword or a value type it does
not know). Only True is acted on (schemas.validate skips jsonschema); anything else goes to
jsonschema, which also words the message, so every error a user sees is the one it always was.
"""

from __future__ import annotations

import re
from typing import Any, Optional

# Keywords that never constrain a value.
_ANNOTATIONS = frozenset(("$schema", "$id", "title", "description", "default", "examples", "$comment"))
_KNOWN = frozenset((
    "type", "enum", "properties", "additionalProperties", "required", "minProperties", "items", "minItems",
    "minLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "anyOf", "oneOf", "not",
)) | _ANNOTATIONS
_SCALARS = (str, bool, int, float, type(None))


def check(schema: Any, value: Any) -> Optional[bool]:
    """True: ``value`` is valid against ``schema``; False: it is not; None: not decided here."""
    if schema is True or (isinstance(schema, dict) and schema.keys() <= _ANNOTATIONS):
        return True  # {} accepts anything (a TOML datetime too)
    if schema is False:
        return False
    if not isinstance(schema, dict) or not schema.keys() <= _KNOWN:
        return None
    if not isinstance(value, (dict, list) + _SCALARS):
        return None  # a TOML date or time: jsonschema's own type rules decide
    verdicts = [_type(schema, value), _enum(schema, value), _object(schema, value), _array(schema, value),
                _string(schema, value), _number(schema, value), _combined(schema, value)]
    if False in verdicts:
        return False
    return None if None in verdicts else True


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "null"


def _is(value: Any, name: str) -> bool:
    kind = _kind(value)
    if name == "integer":  # 1.0 is an integer in JSON Schema
        return kind == "number" and (isinstance(value, int) or value.is_integer())
    return kind == name


def _type(schema: dict, value: Any) -> Optional[bool]:
    if "type" not in schema:
        return True
    names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if not all(n in ("boolean", "number", "integer", "string", "object", "array", "null") for n in names):
        return None
    return any(_is(value, n) for n in names)


def _enum(schema: dict, value: Any) -> Optional[bool]:
    if "enum" not in schema:
        return True
    if not isinstance(value, str) or not all(isinstance(e, str) for e in schema["enum"]):
        return None  # jsonschema's equality (1 == 1.0, True != 1, deep) is not redone here
    return value in schema["enum"]


def _object(schema: dict, value: Any) -> Optional[bool]:
    if not isinstance(value, dict):
        return True  # object keywords ignore other values
    if not all(isinstance(k, str) for k in value):
        return None
    props = schema.get("properties", {})
    out: list = [all(k in value for k in schema.get("required", ())),
                 len(value) >= schema.get("minProperties", 0)]
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if False in out:
            break
        out.append(check(props[key], item) if key in props else check(extra, item))
    return False if False in out else None if None in out else True


def _array(schema: dict, value: Any) -> Optional[bool]:
    if not isinstance(value, list):
        return True
    if len(value) < schema.get("minItems", 0):
        return False
    out = [check(schema["items"], item) for item in value] if "items" in schema else []
    if False in out:
        return False
    return None if None in out else True


def _string(schema: dict, value: Any) -> Optional[bool]:
    if not isinstance(value, str):
        return True
    if len(value) < schema.get("minLength", 0):
        return False
    return "pattern" not in schema or re.search(schema["pattern"], value) is not None  # jsonschema's rule: search


def _number(schema: dict, value: Any) -> Optional[bool]:
    if _kind(value) != "number":
        return True
    if "minimum" in schema and value < schema["minimum"]:
        return False
    if "maximum" in schema and value > schema["maximum"]:
        return False
    return not ("exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"])


def _combined(schema: dict, value: Any) -> Optional[bool]:
    out: list = []
    if "anyOf" in schema:
        each = [check(s, value) for s in schema["anyOf"]]
        out.append(True if True in each else None if None in each else False)
    if "oneOf" in schema:
        each = [check(s, value) for s in schema["oneOf"]]
        out.append(None if None in each else each.count(True) == 1)
    if "not" in schema:
        inner = check(schema["not"], value)
        out.append(None if inner is None else not inner)
    if False in out:
        return False
    return None if None in out else True
