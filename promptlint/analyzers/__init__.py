"""The registry of analyzers: one per kind of prompt source.

Each analyzer module declares the files it handles, ``FILES = Files(...)`` (suffixes, names
and a cheap byte prefilter: what a directory walk takes), optionally ``DIRECTORY`` (a
directory it lints as one target), ``handles(path)`` (what an explicit path is linted as) and
``lint_file(path, text, ctx)`` and ``measure(path, text, ctx)`` (the eligible blocks per request
of every prompt the file holds, for ``check --baseline``: a list of ``measurements.Measurement``;
an empty list when the kind of file holds no prompt). ``measure`` is required like ``lint_file``
(``modules`` refuses an analyzer without it), so the baseline comparison covers every kind of
source ``check`` analyses, including the next one. Discovery is given this module and asks it
(``walk_takes``, ``owned_directory``); it never imports an analyzer. The first analyzer whose
``handles`` accepts a path lints it; modules are imported on first use.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ANALYZERS = [
    "promptlint.analyzers.chat_template",  # before jinja_template: chat `.jinja` files are templates too
    "promptlint.analyzers.jinja_template",
    "promptlint.analyzers.yaml_prompt",  # YAML files whose block scalar holds a Jinja template
    "promptlint.analyzers.python_source",
    "promptlint.analyzers.ts_source",
    "promptlint.analyzers.launch_config",
]


REQUIRED = ("FILES", "handles", "lint_file", "measure")


class AnalyzerContractError(TypeError):
    """An analyzer module lacks part of the contract above (a programming error, not bad input)."""


# The package's analyzers that have no ``tokenizer_dir``: asking for one does not import them (a
# check of one template never imports the Python, TypeScript, YAML and launch-configuration
# analyzers; tests/test_cold_check_loads.py holds this to the modules).
NO_TOKENIZER_DIR = frozenset({"promptlint.analyzers.jinja_template", "promptlint.analyzers.yaml_prompt",
                              "promptlint.analyzers.python_source", "promptlint.analyzers.ts_source",
                              "promptlint.analyzers.launch_config"})

_MODULES: Dict[Tuple[str, ...], List] = {}  # the analyzer modules, imported once (a walk asks about every file it meets)
_IMPORTED: Dict[str, object] = {}  # name -> its module, imported and checked once (as far as a lookup needed)


def _module(name: str):
    module = _IMPORTED.get(name)
    if module is None:
        module = importlib.import_module(name)
        missing = [attr for attr in REQUIRED if not hasattr(module, attr)]
        if missing:
            raise AnalyzerContractError(f"{name}: an analyzer must declare {', '.join(missing)} (promptlint/analyzers/__init__.py)")
        _IMPORTED[name] = module
    return module


def modules() -> List:
    key = tuple(ANALYZERS)
    found = _MODULES.get(key)
    if found is not None:
        return found
    out = [_module(name) for name in ANALYZERS]
    _MODULES.clear()
    _MODULES[key] = out
    return out


def preimport(paths: List[str]) -> None:
    """Before a cold run forks its workers: import what analysing ``paths`` imports (each analyzer's
    ``WORKER_IMPORTS``, for the analyzers these paths need). Each worker would otherwise import
    jinja2 and the analysis modules again after the fork (~0.1 s of CPU each); imported once here,
    the workers share them, pages included."""
    wanted: List[str] = []
    for module in modules():
        names = getattr(module, "WORKER_IMPORTS", ())
        if names and any(module.handles(Path(p)) for p in paths):
            wanted += [n for n in names if n not in wanted]
    for name in wanted:
        importlib.import_module(name)


def analyzer_for(path: Path) -> Optional[object]:
    """The analyzer that lints an explicit path, or None (the analyzers after it are not imported)."""
    for name in list(ANALYZERS):
        module = _module(name)
        if module.handles(path):
            return module
    return None


def walk_takes(path: Path) -> bool:
    """Whether a directory walk lints this file: some analyzer's declaration takes it."""
    return any(module.FILES.walk_takes(path) for module in modules())


def walk_reads(path: Path) -> bool:
    """Whether deciding ``walk_takes(path)`` may read the file (an analyzer takes its name and has a
    byte prefilter): what a resident process remembers by the file's stamp."""
    return any(module.FILES.markers and module.FILES.matches_name(path) for module in modules())


def owned_directory(path: Path):
    """The ``OwnedDirectory`` declaration of an analyzer that lints ``path`` as one target, or None."""
    for module in modules():
        owned = getattr(module, "DIRECTORY", None)
        if owned is not None and owned.owns(path):
            return owned
    return None


def tokenizer_dir(path: Path) -> Optional[Path]:
    """The directory whose own tokenizer.json an analyzer loads for ``path`` instead of the run's
    (when none is configured), or None: what the driver plans by. A hint: a file no analyzer lints
    with that tokenizer only changes its place in the order of work."""
    for name in list(ANALYZERS):
        if name in NO_TOKENIZER_DIR:
            continue
        own = getattr(_module(name), "tokenizer_dir", None)
        directory = own(path) if own is not None else None
        if directory is not None:
            return directory
    return None
