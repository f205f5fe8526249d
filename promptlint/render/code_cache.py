"""The Python code Jinja generates for a template, kept between runs in the user cache.

Compiling a template is parsing it (which promptlint does anyway: the analyses read the tree),
then generating Python source from the tree and compiling that: about a fifth of a cold run's
CPU on the benchmark's 80 templates, spent again on every run for templates that did not change
(a chat template, an include shared by many files). Jinja offers the same through its
``BytecodeCache``; this one is keyed by everything the generated code depends on, so a hit is the
code this process would have generated:

- the template's text, name and file name, and ``defer_init``;
- the environment: its class, parser settings (lexer delimiters, whitespace options, extensions),
  code generator class, ``optimized``, ``is_async``, ``autoescape``, ``finalize`` and the names of
  its filters and tests with how each is passed its context (what the code generator reads);
- the versions of Jinja and of the interpreter's bytecode, and promptlint's own code (the size and
  mtime of its files, as the result cache is keyed).

Each entry is one file ``$XDG_CACHE_HOME/promptlint/templates/<tag>/<key>``: an HMAC under the
user's cache secret, then the marshalled (Python source, code object, the names the recording code
generator collected while generating it) — a file another interpreter,
a damaged write or anyone without the secret produced is not read, and the template is compiled
as before. Nothing is written under ``PYTHONDONTWRITEBYTECODE``/``-B``, or when no secret is kept
yet (the result cache makes it on its first write); at most ``MAX_ENTRIES`` are kept (the oldest
half removed when a process's first write finds more).

Where the user cache keeps no code (no secret yet: a first run, a run without the result cache),
the process keeps it in memory instead, under the same key and so with the same hits, the last
``MEMORY_ENTRIES`` only: a text compiled by several environments of the run (an include of many
templates, a chat template analysed again) or by several in-process commands is generated once.
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import sys
import threading
from collections import OrderedDict
from typing import Dict, List, Optional, Set, Tuple

from promptlint.doors import bounded_io, safe_write

MAX_ENTRY_BYTES = 8 * 1024 * 1024  # one template's generated code (a 3,000-line template: ~1 MB)
MAX_ENTRIES = 4096
_SECRETS: Dict[str, Optional[bytes]] = {}  # memo: the kept secret, by user cache directory (read once per process)
_STAMP: List[str] = []  # memo: promptlint's code stamp (constant for the process's life)
_PRUNED: Set[str] = set()  # entry directories this process has counted (a listing costs ~1 ms per 1,000 entries)
MEMORY_ENTRIES = 64  # a template's generated code is ~10 kB-1 MB of Python with its code object
# memo: key -> what ``get`` returns, where the user cache keeps none (a pure function of the key, as the files)
_MEMORY: "OrderedDict[str, Tuple[str, object, Optional[List[str]]]]" = OrderedDict()
_MEMORY_LOCK = threading.Lock()


def key(env, parser: tuple, source: str, name: Optional[str], filename: Optional[str], defer_init: bool) -> str:
    """The entry's name: a digest of everything the generated code depends on (module docstring);
    ``parser``: the environment's parser settings (environments.parser_settings)."""
    from jinja2 import __version__ as jinja_version
    from jinja2.utils import _PassArg

    def passed(table) -> list:
        return sorted((n, str(_PassArg.from_obj(f))) for n, f in table.items())

    autoescape = env.autoescape if isinstance(env.autoescape, bool) else _qualname(env.autoescape)
    finalize = None if env.finalize is None else (_qualname(env.finalize), str(_PassArg.from_obj(env.finalize)))
    fields = (
        "promptlint template code 1", jinja_version, _code_stamp(), repr(parser),
        _qualname(type(env)), [_qualname(c) for c in env.code_generator_class.__mro__], env.optimized, env.is_async, autoescape, finalize,
        passed(env.filters), passed(env.tests), name, filename, defer_init,
    )
    digest = hashlib.sha256(repr(fields).encode("utf-8"))
    digest.update(b"\0")
    digest.update(source.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def get(name: str) -> Optional[Tuple[str, object, Optional[List[str]]]]:
    """(generated Python source, code object, the names its code generator recorded) kept under ``name``, or None."""
    if _state() is None:
        with _MEMORY_LOCK:
            hit = _MEMORY.get(name)
            if hit is not None:
                _MEMORY.move_to_end(name)
            return hit
    found = read_entry(name)
    if not isinstance(found, tuple) or len(found) != 3:
        return None
    python, code, resolved = found
    if not isinstance(python, str) or type(code).__name__ != "code" or not (resolved is None or isinstance(resolved, list)):
        return None
    return python, code, resolved


def put(name: str, python: str, code, resolved: Optional[List[str]] = None) -> None:
    """Keep a template's generated code and the names its generator recorded (a cache that cannot be
    written only costs a later compile)."""
    if _state() is None:
        with _MEMORY_LOCK:
            _MEMORY[name] = (python, code, None if resolved is None else list(resolved))
            while len(_MEMORY) > MEMORY_ENTRIES:
                _MEMORY.popitem(last=False)
        return
    write_entry(name, (python, code, resolved))


def read_entry(name: str, kind: str = "templates") -> Optional[object]:
    """What ``write_entry`` kept under ``name`` in the ``kind`` directory (marshalled, under the user's
    cache secret), or None: none kept, no secret kept, or a file this user's promptlint did not write."""
    state = _state(kind)
    if state is None:
        return None
    _, directory, secret = state
    try:
        data = bounded_io.read_bytes(os.path.join(directory, name), MAX_ENTRY_BYTES + 64)
    except (OSError, ValueError):
        return None
    mac, body = data[:32], data[32:]
    if not hmac.compare_digest(mac, _mac(body, secret)):
        return None
    try:
        return marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None


def write_entry(name: str, value, kind: str = "templates") -> None:
    """Keep ``value`` (marshallable) under ``name`` in the ``kind`` directory; nothing without a secret,
    under ``PYTHONDONTWRITEBYTECODE``, for a value too large, or when the cache cannot be written."""
    state = _state(kind)
    if state is None or sys.dont_write_bytecode:
        return
    base, directory, secret = state
    try:
        body = marshal.dumps(value)
    except ValueError:
        return
    if len(body) > MAX_ENTRY_BYTES:
        return
    try:
        _prune(base, directory)
        safe_write.write_bytes(os.path.join(directory, name), _mac(body, secret) + body, anchor=base, parents=True,
                               private=True)
    except OSError:
        pass


def _prune(base: str, directory: str) -> None:
    """Once per process and directory, before its first write: over ``MAX_ENTRIES``, the oldest half goes."""
    if directory in _PRUNED:
        return
    _PRUNED.add(directory)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    if len(names) < MAX_ENTRIES:
        return
    aged = []
    for n in names:
        try:
            aged.append((os.stat(os.path.join(directory, n)).st_mtime_ns, n))
        except OSError:
            continue
    aged.sort()
    for _, n in aged[: len(aged) // 2]:
        try:
            safe_write.remove(os.path.join(directory, n), anchor=base)
        except OSError:
            pass


def _state(kind: str = "templates") -> Optional[Tuple[str, str, bytes]]:
    """(user cache directory, this interpreter's entry directory for ``kind``, the secret), or None when no
    secret is kept."""
    from importlib.util import MAGIC_NUMBER

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if base not in _SECRETS:
        secret = None
        try:  # the secret cache.machine_secret keeps (render stands below the project layer that makes it)
            secret = bytes.fromhex(bounded_io.read_text(os.path.join(base, "promptlint", "secret"), 1024).strip())
        except (OSError, ValueError):
            pass
        _SECRETS[base] = secret if secret is not None and len(secret) == 32 else None
    secret = _SECRETS[base]
    if secret is None:
        return None
    tag = f"{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}"
    return base, os.path.join(base, "promptlint", kind, tag), secret


def _code_stamp() -> str:
    if not _STAMP:
        from promptlint.base.code_files import code_stamp

        _STAMP.append(code_stamp(fresh=False))  # the run's result cache takes the same: one pass
    return _STAMP[0]


def _mac(body: bytes, secret: bytes) -> bytes:
    return hmac.new(secret, body, hashlib.sha256).digest()


def _qualname(obj) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"
