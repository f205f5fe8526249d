"""TOML text -> a mapping: the one place that picks tomllib (3.11+) or tomli.

A leaf (standard library only) so that rule metadata, configuration, samples and scenario
files read TOML the same way without importing each other.
"""

from __future__ import annotations

import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself is not imported: ~5 ms of a forwarded check (annotations are strings)
    from typing import Any, Dict


def toml_loads(text: str) -> Dict[str, Any]:
    """Parse TOML; ``ValueError`` with the parser's one-line reason when it is not valid."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(str(e)) from None
