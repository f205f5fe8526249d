"""Finding and reading a project's configuration file (promptlint.toml, or pyproject.toml's
[tool.promptlint]): no dataclasses, no schema, so the daemon's forwarding client can find the
project it forwards for without importing the settings machinery of project/config.py."""

from __future__ import annotations

from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself is not imported: ~5 ms of a forwarded check (annotations are strings)
    from typing import Any, Dict, Optional, Tuple

from promptlint.doors import bounded_io
from promptlint.base.toml_io import kept_loads


class ConfigError(Exception):
    """Invalid configuration: exits 2 with this one-line message."""


def find_config(start: Path) -> Optional[Tuple[Path, Dict[str, Any]]]:
    """The closest promptlint.toml or pyproject.toml with [tool.promptlint], walking up from ``start``."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for directory in [start, *start.parents]:
        for name in ("promptlint.toml", "pyproject.toml"):
            candidate = directory / name
            if not candidate.is_file():
                continue
            data = read_config_file(candidate)
            if data is not None:
                return candidate, data
    return None


def read_config_file(path: Path, shown: Optional[Path] = None) -> Optional[Dict[str, Any]]:
    """The promptlint table of ``path``, or None when the file does not configure promptlint;
    ``shown``: how messages name it (as the user typed it)."""
    shown = path if shown is None else shown
    try:
        data = kept_loads(bounded_io.read_text(path))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{shown}: cannot read the configuration file ({e})") from None
    except ValueError as e:
        raise ConfigError(f"{shown}: invalid TOML: {e}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        return tool.get("promptlint") if isinstance(tool, dict) and "promptlint" in tool else None
    return data
