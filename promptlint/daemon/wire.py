"""The daemon's frame headers as JSON text, without the json package on the forwarding client.

``import json`` imports re, enum and collections: on the two-core machine about as long as the
interpreter's own start, paid by every forwarded check for two small headers. CPython's
accelerator module ``_json`` -- what json itself runs underneath -- encodes a string and scans a
document on its own; these two functions use it and give what ``json.dumps(value)`` and
``json.loads(text)`` give (tests/test_daemon_wire.py compares them). Where ``_json`` is missing
(another Python implementation) or refuses, json is imported and used.
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # pragma: no cover - CPython has it
    _json = None


def dumps(value) -> str:
    """``json.dumps(value)``: str, int, float, bool, None, and lists, tuples and str-keyed dicts of them."""
    if _json is None:
        import json

        return json.dumps(value)
    return _encode(value)


def _encode(value) -> str:
    if isinstance(value, str):
        return _json.encode_basestring_ascii(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            import json

            return json.dumps(value)  # NaN, Infinity: json's spelling
        return float.__repr__(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_encode(v) for v in value) + "]"
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            if not isinstance(k, str):
                import json

                return json.dumps(value)  # json's own key coercions (ints, None, ...)
            parts.append(_json.encode_basestring_ascii(k) + ": " + _encode(v))
        return "{" + ", ".join(parts) + "}"
    import json

    return json.dumps(value)  # raises json's TypeError for what it cannot encode


class _Scanning:
    """What ``_json.make_scanner`` reads from a decoder: json.JSONDecoder's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(float)  # "NaN", "Infinity", "-Infinity", as json reads them


_WHITESPACE = " \t\n\r"


def loads(text: str):
    """``json.loads(text)``; raises ValueError where json does."""
    if _json is None:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    scan = _json.make_scanner(_Scanning())
    try:
        value, end = scan(text, start)
    except StopIteration as e:
        raise ValueError(f"Expecting value: char {e.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value
