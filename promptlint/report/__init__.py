"""Reporters: turn a check result (``records.Result``) into text. One module per format.

A format is one module of this package that declares its name, ``FORMAT = "sarif"``, its
``KIND`` ("human": a person reads it in a terminal, a progress bar may go with it; "json": a
machine document, written as valid UTF-8 JSON whatever the file names hold; "text": anything
else), and ``write(result, context, stream)``. The package finds the formats itself: adding one
is adding its module, nothing else (``promptlint check --output-format``'s choices, ``--report-file``
and the tests read ``formats()``).

A reporter only formats: it prints what the result and its findings carry (the linted source
lines, the block size, the positions) and what the ``records.ReportContext`` says of the world
around the run (the working directory, the CI's repository root, colour, ``--annotate``,
``--evidence``); it opens no file and reads neither the environment nor the working directory
(tests/test_architecture.py checks both).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Dict

DEFAULT = "full"
KINDS = ("human", "json", "text")
_FORMATS: Dict[str, str] = {}  # format name -> module name (filled once: the package's modules do not change)


def formats() -> Dict[str, str]:
    """Every format: name -> module, the default first, then by name."""
    if not _FORMATS:
        found = {}
        for info in pkgutil.iter_modules(__path__):
            module = importlib.import_module(f"{__name__}.{info.name}")
            name = getattr(module, "FORMAT", None)
            if name is None:
                continue  # a helper shared by the formats (style, locations, new_marks)
            if name in found:
                raise RuntimeError(f"output format {name!r} is declared twice: by {found[name]} and by {module.__name__}")
            if getattr(module, "KIND", None) not in KINDS or not callable(getattr(module, "write", None)):
                raise RuntimeError(f"{module.__name__}: a format declares KIND (one of {', '.join(KINDS)}) and write()")
            found[name] = module.__name__
        _FORMATS.update((name, found[name]) for name in sorted(found, key=lambda n: (n != DEFAULT, n)))
    return _FORMATS


def get(name: str):
    """The module of format ``name``. One whose module bears its name (`full`, the default) is
    imported alone: a one-template check need not import the other eight reporters to find it."""
    if not _FORMATS:
        module = _named(name)
        if module is not None:
            return module
    return importlib.import_module(formats()[name])


def _named(name: str):
    """The module ``<package>.<name>`` when it declares FORMAT = ``name`` (what ``formats()`` would
    map ``name`` to), else None."""
    guess = name.replace("-", "_")
    if not guess.isidentifier():
        return None
    try:
        module = importlib.import_module(f"{__name__}.{guess}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{guess}":
            raise
        return None
    if getattr(module, "FORMAT", None) != name or getattr(module, "KIND", None) not in KINDS \
            or not callable(getattr(module, "write", None)):
        return None
    return module


def known(name: str) -> bool:
    """Whether ``name`` is a format: one whose module bears its name is found alone (``--output-format
    concise`` need not import the other eight reporters to be accepted)."""
    if not _FORMATS and isinstance(name, str) and _named(name) is not None:
        return True
    return name in formats()


def kind(name: str) -> str:
    """The format's KIND: "human", "json" or "text"."""
    return get(name).KIND


def __getattr__(name: str):
    if name == "FORMATS":  # the name table, found on first use
        return formats()
    raise AttributeError(name)
