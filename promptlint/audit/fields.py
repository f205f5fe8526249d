"""Typed readers for the fields of one trace row: a wrong type is a :class:`RowError` naming
the field, never a Python conversion error, a NaN that slips through or a silent default.

Messages describe a bad value by its type or number, never by its text: rows carry prompts,
and the audit writes no prompt text anywhere (not even in an error).
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Optional, Sequence

from promptlint.operators.captured import token_id_error
from promptlint.base.jsonl import surrogate_message

_FP = re.compile(r"[0-9a-fA-F]{16}")
_HEX_LOWER = re.compile(r"[0-9a-f]*")


class RowError(ValueError):
    """What is wrong with one row (the reader prefixes ``file:line:``)."""


def kind(v: Any) -> str:
    """A value's JSON type, for messages (never the value itself)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return f"the number {v!r}" if not isinstance(v, int) or abs(v) < 10**20 else "a huge number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _plain_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def count(v: Any, name: str, minimum: int = 0, strings: bool = False) -> int:
    """A whole number >= ``minimum`` (an integral float such as 16.0 is accepted; with
    ``strings``, a decimal string too: OTLP-JSON and some proxies write integers as strings)."""
    if strings and isinstance(v, str) and v.strip().isdigit():
        v = int(v.strip())
    if not _plain_number(v) or (isinstance(v, float) and not (math.isfinite(v) and v.is_integer())):
        raise RowError(f"`{name}` must be a whole number >= {minimum}, not {kind(v)}")
    if v < minimum:
        raise RowError(f"`{name}` must be a whole number >= {minimum}, not {int(v)}")
    return int(v)


def opt_count(v: Any, name: str, minimum: int = 0, strings: bool = False) -> Optional[int]:
    """:func:`count`, or None when the field is absent (null)."""
    return None if v is None else count(v, name, minimum, strings)


def number(v: Any, name: str, default: Optional[float] = None, minimum: Optional[float] = None) -> Optional[float]:
    """A finite number (or a string holding one, as some loggers write timestamps); ``default`` when null."""
    if v is None:
        return default
    x: Optional[float] = None
    if _plain_number(v):
        x = float(v) if not isinstance(v, int) or abs(v) < 2**63 else math.inf
    elif isinstance(v, str):
        try:
            x = float(v)
        except ValueError:
            x = None
    if x is None or not math.isfinite(x):
        raise RowError(f"`{name}` must be a finite number, not {'a non-numeric string' if isinstance(v, str) else kind(v)}")
    if minimum is not None and x < minimum:
        raise RowError(f"`{name}` must be >= {minimum:g}, not {x:g}")
    return x


def text(v: Any, name: str) -> str:
    """A string that is Unicode text (no lone surrogate: it is written to UTF-8 output)."""
    if not isinstance(v, str):
        raise RowError(f"`{name}` must be a string, not {kind(v)}")
    bad = surrogate_message(v, f"`{name}`")
    if bad:
        raise RowError(bad)
    return v


def label(v: Any, name: str) -> str:
    """An opaque label (instance, tenant, revision, request id): a string or a whole number; "-" when absent."""
    if v is None or v == "":
        return "-"
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if not isinstance(v, str):
        raise RowError(f"`{name}` must be a string label, not {kind(v)}")
    return text(v, name)


def obj(v: Any, name: str) -> Dict[str, Any]:
    """An object; {} when absent."""
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise RowError(f"`{name}` must be an object, not {kind(v)}")
    return v


def arr(v: Any, name: str) -> List[Any]:
    """A list; [] when absent."""
    if v is None:
        return []
    if not isinstance(v, list):
        raise RowError(f"`{name}` must be a list, not {kind(v)}")
    return v


def objects(v: Any, name: str) -> List[Dict[str, Any]]:
    """A list of objects; [] when absent."""
    out = arr(v, name)
    for i, x in enumerate(out):
        if not isinstance(x, dict):
            raise RowError(f"`{name}[{i}]` must be an object, not {kind(x)}")
    return out


def token_ids(v: Any, name: str) -> List[int]:
    """A list of token ids: whole numbers in [0, 2^32). Anything else in it is an error,
    never taken as text or skipped."""
    err = token_id_error(v, f"`{name}`")
    if err:
        raise RowError(err)
    return v


def flag_values(v: Any, name: str, keys: Sequence[str]) -> Dict[str, bool]:
    """The known flags of a ``flags`` object; each true, false or null."""
    d = obj(v, name)
    out = {}
    for k in keys:
        if k in d:
            x = d[k]
            if x is not None and not isinstance(x, bool) and x not in (0, 1):
                raise RowError(f"`{name}.{k}` must be true or false, not {kind(x)}")
            out[k] = bool(x)
    return out


def fingerprints(v: Any, name: str) -> List[str]:
    """A list of fingerprints (see :func:`fingerprint`); lower-case hex strings pass in one C-level check."""
    fps = arr(v, name)
    if fps and set(map(type, fps)) == {str} and set(map(len, fps)) == {16} and _HEX_LOWER.fullmatch("".join(fps)):
        return fps
    return [fingerprint(x, f"{name}[{i}]") for i, x in enumerate(fps)]


def fingerprint(v: Any, name: str) -> str:
    """A 16-hex-digit fingerprint (an integer is taken as its 64-bit value)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return "%016x" % (v & 0xFFFFFFFFFFFFFFFF)
    if isinstance(v, str) and _FP.fullmatch(v):
        return v.lower()
    raise RowError(f"`{name}` must be a fingerprint of 16 hex digits, not "
                   f"{'a string of another form' if isinstance(v, str) else kind(v)}")
