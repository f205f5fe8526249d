"""Samples files: ``<stem>.samples.toml`` (or ``.json``) beside a template declares its inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from promptlint.doors.bounded_io import is_regular_file
from promptlint.scenarios.model import (
    PER_REQUEST_SUB_KINDS,
    SPEC_KEYS,
    VOLATILE_SUB_KINDS,
    SamplesError,
    Scenario,
    Variable,
)

SUFFIXES = (".samples.toml", ".samples.json")


def samples_stem(template: Path) -> str:
    return template.name.rsplit(".", 1)[0] if "." in template.name else template.name


def samples_path_for(template: Path) -> Optional[Path]:
    stem = samples_stem(template)
    for suffix in SUFFIXES:
        candidate = template.with_name(stem + suffix)
        if is_regular_file(candidate):  # never raises: a 255-byte template name makes this one too long
            return candidate
    return None


def default_samples_path(template: Path) -> Path:
    """Where `promptlint samples --write` puts a template's samples file."""
    return template.with_name(samples_stem(template) + SUFFIXES[0])


def _parse_samples(path: Path, text: str) -> Any:
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except ValueError as e:
            raise SamplesError(path, f"invalid JSON: {e}") from None
    from promptlint.base.toml_io import toml_loads

    try:
        return toml_loads(text)
    except ValueError as e:
        raise SamplesError(path, f"invalid TOML: {e}") from None


def load_samples(path: Path, roots: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Parse and validate a samples file; raises SamplesError with a one-line reason. ``roots``
    (resolved): where the file may lead, as for the template's includes (a sidecar linked to a
    file elsewhere, or into version-control metadata, is refused unread: its keys and values
    would reach the messages and the evidence)."""
    import os

    from promptlint.doors import bounded_io
    from promptlint.base.paths import vcs_metadata
    from promptlint.render.files import inside

    if roots is not None:
        real = os.path.realpath(path)
        if not inside(real, roots) or vcs_metadata(real, roots):
            raise SamplesError(path, "the samples file resolves outside the project or into version-control "
                               "metadata (a symbolic link leads there); refused, nothing was read")
    try:
        text = bounded_io.read_text(path)
    except bounded_io.InputRefused as e:
        raise SamplesError(path, f"cannot read the samples file: {e}") from None
    except OSError as e:
        raise SamplesError(path, f"cannot read the samples file ({e.strerror})") from None
    except UnicodeDecodeError:
        raise SamplesError(path, "samples file is not UTF-8 text") from None
    try:
        data = _parse_samples(path, text)
        from promptlint.schemas import validate

        problem = validate("samples", data)
    except RecursionError:  # json, tomllib and jsonschema all recurse per nesting level
        raise SamplesError(path, "invalid samples file: values nested too deeply; flatten them") from None
    if problem:
        raise SamplesError(path, f"invalid samples file: {problem}")
    return data


def scenario_from_samples(data: Dict[str, Any], path: Path) -> Scenario:
    """The declared variables. A value that looks like a date, time, epoch or UUID is volatile unless
    its entry declares a `kind`."""
    from promptlint.scenarios.values import guess_sub_kind, looks_volatile

    scenario = Scenario(samples_path=path, tools_order=data.get("tools-order"))
    scenario.include_choices = {k: list(v) for k, v in (data.get("include-choices") or {}).items()}
    for name, entry in (data.get("variables") or {}).items():
        if isinstance(entry, dict) and entry and set(entry) <= SPEC_KEYS and ("value" in entry or "kind" in entry):
            if "value" not in entry:
                raise SamplesError(path, f"variables.{name}: a `value` is required")
            value = entry["value"]
            sub = entry.get("sub-kind")
            if "kind" in entry:
                kind = entry["kind"]
            else:
                looks = looks_volatile(value)
                kind = "volatile" if looks or sub in VOLATILE_SUB_KINDS else "per-request" if sub in PER_REQUEST_SUB_KINDS else "static"
                sub = sub or looks
            _check_sub_kind(path, name, kind, sub)
            if kind == "volatile" and sub is None:
                sub = guess_sub_kind(name, value)
            scenario.variables[name] = Variable(
                name, value, kind, sub, entry.get("variant"), True, entry.get("order"), entry.get("sort-key")
            )
        else:
            looks = looks_volatile(entry)
            kind = "volatile" if looks else "static"
            scenario.variables[name] = Variable(name, entry, kind, looks, None, True)
    return scenario


def _check_sub_kind(path: Path, name: str, kind: str, sub: Optional[str]) -> None:
    # a volatile value's sub-kind shapes its variant, so it must be one of the volatile ones
    if kind == "volatile" and sub is not None and sub not in VOLATILE_SUB_KINDS:
        raise SamplesError(
            path, f"variables.{name}: sub-kind `{sub}` does not go with kind `volatile` (one of {', '.join(VOLATILE_SUB_KINDS)})"
        )
