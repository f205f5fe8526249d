"""Dated per-provider tables shipped with promptlint (hosted cache minimums, prices), with a
user's file merged over them: per provider, its ``models`` entries are added to or replace the
shipped ones, and its other keys (``as_of``, ``source``, ...) replace the shipped values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Union

from promptlint.doors import bounded_io


def merged(
    shipped: Path,
    override: Optional[Union[str, Path]],
    what: str,
    error: Callable[[str], Exception],
    models_of: Callable[[Path, str, Any], Dict[str, Any]],
    keys_hint: str = "",
) -> Dict[str, dict]:
    """The ``shipped`` table, with ``override`` (a JSON file) merged over it. ``models_of(path,
    provider, block)`` validates one provider block of the override and returns its models, or
    raises ``error``; ``what`` names the file in messages ("the price table")."""
    table = {k: v for k, v in json.loads(shipped.read_text(encoding="utf-8")).items() if not k.startswith("_")}
    if override is None:
        return table
    path = Path(override)
    try:
        user = json.loads(bounded_io.read_text(path))
    except OSError as e:
        raise error(f"{path}: cannot read {what} ({e.strerror or e}); check the path") from None
    except (ValueError, UnicodeDecodeError):
        raise error(f"{path}: not valid JSON; {what} is a JSON object per provider") from None
    if not isinstance(user, dict):
        raise error(f"{path}: expected a JSON object keyed by provider{keys_hint}")
    for provider, block in user.items():
        if provider.startswith("_"):
            continue
        models = models_of(path, provider, block)
        entry = dict(table.get(provider, {}))
        entry.update({k: v for k, v in block.items() if k != "models"})
        entry["models"] = {**table.get(provider, {}).get("models", {}), **models}
        if "as_of" not in block and models:
            entry["as_of"] = f"{entry.get('as_of', '?')} + {path.name}"
        table[provider] = entry
    return table


def stale(table: Dict[str, dict], today: str, max_age_days: int) -> Dict[str, str]:
    """The providers whose block is older than ``max_age_days`` on ``today`` (ISO dates), with
    their ``as_of``: a figure from such a block may be wrong, and the report says so."""
    from datetime import date

    def parsed(text: str):
        parts = (str(text).split(" ")[0].split("-") + ["1", "1"])[:3]
        try:
            return date(int(parts[0]), int(parts[1]), int(parts[2]))
        except ValueError:
            return None

    now = parsed(today)
    out = {}
    for provider, block in table.items():
        when = parsed(block.get("as_of", "")) if isinstance(block, dict) else None
        if now is not None and (when is None or (now - when).days > max_age_days):
            out[provider] = str(block.get("as_of", "?")) if isinstance(block, dict) else "?"
    return out
