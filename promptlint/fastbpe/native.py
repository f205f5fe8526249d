"""`tokenizers`' native module alone, for the fast engine's cold path.

The engine asks `tokenizers` for one thing on a cold run: a `Tokenizer` built from the form's tiny
JSON (and the version the form was proven with). The package's ``__init__`` also imports its
Python wrappers (five ``implementations``, the component shims, enums): ~5 ms of a one-template
check, against ~3 ms for the extension itself. So the extension module ``tokenizers.tokenizers``
is loaded alone, from the directory the package would be imported from, under its own name: a
later ``import tokenizers`` (the real model, the proof, a parsed tokenizer.json) finds it in
``sys.modules`` and builds the package around the same module, so every class is the same
object either way. Anything unexpected (no such extension, a meta-path finder that serves the
package otherwise, an import error) imports the package as before.
"""

from __future__ import annotations

import sys

_NAME = "tokenizers.tokenizers"


def module():
    """The native module (what ``tokenizers`` re-exports: ``Tokenizer``, ``__version__``, ...)."""
    found = sys.modules.get(_NAME)
    if found is not None:
        return found
    if "tokenizers" not in sys.modules:  # the package imported already holds its module (above)
        try:
            return _alone()
        except Exception:  # not laid out as expected: the package's own import decides
            sys.modules.pop(_NAME, None)
    import tokenizers

    return sys.modules.get(_NAME) or tokenizers


def _alone():
    import importlib.util
    from importlib.machinery import ExtensionFileLoader, PathFinder

    package = importlib.util.find_spec("tokenizers")  # sys.meta_path's answer, as `import` would get it
    if package is None or not package.submodule_search_locations:
        raise ImportError("tokenizers is not a package here")
    spec = PathFinder.find_spec(_NAME, list(package.submodule_search_locations))
    if spec is None or not isinstance(spec.loader, ExtensionFileLoader):
        raise ImportError("no tokenizers extension module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[_NAME] = mod  # as the import system does before running a module
    spec.loader.exec_module(mod)
    return mod
