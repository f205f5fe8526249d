"""The code of the methods ``@dataclass`` generates, compiled once and kept between runs.

A dataclass compiles its generated ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and (frozen)
``__setattr__``/``__delattr__`` from source text when its class statement runs: one ``exec`` of a
string per method (``dataclasses._create_fn``). A one-template `check` creates ~50 such classes
as it imports, and compiling the same texts again on every run was ~60 ms: a fifth of the run.

``install()`` gives the ``dataclasses`` module an ``exec`` of its own that takes each text's code
object from a table (compiled as ``exec`` of the string compiles it: file name ``<string>``, no
inherited future flags) and runs it as before; ``save()`` keeps the table in the user cache
(marshal, as a ``.pyc`` keeps a module's code) for the next run. The functions are the same: the
same code, run with the same globals and namespace by the ``dataclasses`` module's own logic.

The file is named for the interpreter's bytecode magic and authenticated with an HMAC under the
user's cache secret (``cache.machine_secret``, as the run manifest is): a file another
interpreter, a damaged write or anyone without the secret produced is not read, and the texts
are compiled as before.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
from typing import Dict, List, Set

from promptlint.doors import bounded_io, safe_write

_MAX_BYTES = 4 * 1024 * 1024  # a larger table keeps only the texts of the process that writes it
_TABLE: Dict[str, object] = {}  # source text -> its compiled code (read from the user cache, then added to)
_USED: Set[str] = set()  # the texts this process executed (what a table over the bound keeps)
_NEW: List[int] = [0]  # texts compiled in this process that the kept table lacks


def _compiled_exec(source, globals=None, locals=None, *args, **kwargs):
    if globals is None:  # exec's default: the caller's namespaces (this frame's are not theirs)
        caller = sys._getframe(1)
        globals, locals = caller.f_globals, caller.f_locals if locals is None else locals
    if not isinstance(source, str) or args or kwargs:
        return builtins.exec(source, globals, locals, *args, **kwargs)
    _USED.add(source)
    code = _TABLE.get(source)
    if code is None:
        code = compile(source, "<string>", "exec", dont_inherit=True)
        _TABLE[source] = code
        _NEW[0] += 1
    return builtins.exec(code, globals, locals)


def install() -> None:
    """From now on, dataclasses created in this process use the kept code (read once here)."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is _compiled_exec:
        return
    _TABLE.update(_read())
    dataclasses.exec = _compiled_exec  # found before the builtin by the module's own `exec(...)` calls


def uninstall() -> None:
    import dataclasses

    if getattr(dataclasses, "exec", None) is _compiled_exec:
        del dataclasses.exec


def save() -> None:
    """Keep the table when this process compiled texts it lacked (a cache that cannot be written
    only costs the next run its compiling); not under PYTHONDONTWRITEBYTECODE / -B, which asks
    that no bytecode be written (a kept table is still read, as Python still reads .pyc files)."""
    if not _NEW[0] or sys.dont_write_bytecode:
        return
    try:
        body = marshal.dumps(_TABLE)
        if len(body) > _MAX_BYTES:  # texts of dataclasses no longer in the code piled up: keep this process's
            body = marshal.dumps({text: _TABLE[text] for text in _USED if text in _TABLE})
    except ValueError:  # an object marshal cannot write: keep nothing
        return
    if len(body) > _MAX_BYTES:
        return
    base, path = _path()
    try:
        from promptlint.project.cache import machine_secret

        safe_write.write_bytes(path, _mac(body, machine_secret()) + body, anchor=base, parents=True, private=True)
        _NEW[0] = 0
    except OSError:
        pass


def _read() -> Dict[str, object]:
    import hmac

    base, path = _path()
    try:
        data = bounded_io.read_bytes(path, _MAX_BYTES + 64)
        # the file cache.machine_secret keeps, read here without importing that module (and its
        # dataclass, which would be compiled before the table is read)
        secret = bytes.fromhex(bounded_io.read_text(os.path.join(base, "promptlint", "secret"), 1024).strip())
    except (OSError, ValueError):
        return {}
    mac, body = data[:32], data[32:]
    if len(secret) != 32 or not hmac.compare_digest(mac, _mac(body, secret)):
        return {}
    try:
        table = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and type(v).__name__ == "code"}


def _mac(body: bytes, secret: bytes) -> bytes:
    import hashlib
    import hmac

    return hmac.new(secret, body, hashlib.sha256).digest()


def _path():
    """(the user cache directory, the table's file), named for this interpreter's bytecode."""
    from importlib.util import MAGIC_NUMBER

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = f"{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}"
    return base, os.path.join(base, "promptlint", "code", f"dataclasses-{tag}.marshal")
