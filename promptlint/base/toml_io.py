"""TOML text -> a mapping: the one place that picks tomllib (3.11+) or tomli.

A leaf (standard library only) so that rule metadata, configuration, samples and scenario
files read TOML the same way without importing each other. The TOML files promptlint ships (its
rule files, data/name_words.toml) are read through a JSON copy in the user's cache (``shipped``).
"""

from __future__ import annotations

import os
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing itself is not imported: ~5 ms of a forwarded check (annotations are strings)
    from pathlib import Path
    from typing import Any, Dict, Optional, Union

_COPY_FORMAT = "1"  # bump when what a copy holds changes


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


def shipped(path: Union[str, Path]) -> Dict[str, Any]:
    """A TOML file promptlint ships, parsed: through a JSON copy in the user's cache
    (``$XDG_CACHE_HOME/promptlint/toml/``, default ``~/.cache``) named for the file's path, size
    and mtime (one copy per file: writing one removes the file's earlier ones). tomllib takes ~5 ms for a 15 KB rule file and a cold one-template check reads two of
    them and the name lists; the copy loads in a tenth of that, and a run that parses no other TOML
    never imports tomllib. A copy that is missing or unreadable costs the parse (and is written
    again); a file JSON cannot hold (a date) is parsed every time. ``OSError`` and ``ValueError``
    as reading and parsing ``path`` raise them."""
    from promptlint.base.digest import sha256
    from promptlint.doors import bounded_io

    st = os.stat(path)
    where = sha256(os.path.realpath(path).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    stamp = sha256(f"{_COPY_FORMAT}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:16]
    return _through_copy(f"{where}-{stamp}.json", lambda: toml_loads(bounded_io.read_text(path)), f"{where}-")


KEPT_TEXTS = 64  # parsed configuration texts kept (the oldest copies go past this)


def kept_loads(text: str) -> Dict[str, Any]:
    """``toml_loads(text)`` for a configuration text a run reads every time (pyproject.toml's
    [tool.promptlint], promptlint.toml, the user's config.toml), through a JSON copy in the user's
    cache named for the text's sha256 and this Python's version: the parse is a function of those
    alone, so a copy serves any file with the same bytes. A warm run then never imports tomllib
    (~8 ms with its regular expressions, most of what a run answered from the manifest parses).
    A text that does not parse raises every time; one JSON cannot hold (a date) is parsed every
    time; a copy that is missing or unreadable costs the parse. At most ``KEPT_TEXTS`` copies."""
    from promptlint.base.digest import sha256

    raw = text.encode("utf-8", "surrogatepass")
    key = sha256(f"{_COPY_FORMAT}\0{sys.version_info[0]}.{sys.version_info[1]}\0".encode() + raw).hexdigest()[:32]
    return _through_copy(f"text-{key}.json", lambda: toml_loads(text), None)


def _through_copy(name: str, parse, earlier: Optional[str]) -> Dict[str, Any]:
    """The table the JSON copy ``name`` (in the user cache's toml folder) holds, else ``parse()``'s,
    written there when JSON holds every value as it was. After a write: ``earlier``, the prefix of
    this file's older copies to remove; None: keep the newest ``KEPT_TEXTS`` content-named copies."""
    import json

    from promptlint.doors import bounded_io

    base = _user_cache()
    folder = os.path.join(base, "promptlint", "toml")
    copy = os.path.join(folder, name)
    try:
        data = json.loads(bounded_io.read_bytes(copy))
        if isinstance(data, dict):
            return data
    except (OSError, ValueError):  # InputRefused is an OSError
        pass
    data = parse()
    try:
        dumped = json.dumps(data)
        if json.loads(dumped) == data:  # every value JSON can hold, as it was
            from promptlint.doors import safe_write

            safe_write.write_text(copy, dumped, anchor=base, parents=True, private=True)
            if earlier is not None:  # this file's copies of earlier versions (a checkout's edits)
                for old in os.listdir(folder):
                    if old.startswith(earlier) and old != name:
                        safe_write.remove(os.path.join(folder, old), anchor=base)
            else:
                _keep_newest(folder, base, "text-", KEPT_TEXTS)
    except (OSError, TypeError, ValueError):  # a cache that cannot be written only costs the next run the parse
        pass
    return data


def _keep_newest(folder: str, base: str, prefix: str, keep: int) -> None:
    """Remove the oldest ``prefix`` copies in ``folder`` past ``keep`` (only after writing one)."""
    from promptlint.doors import safe_write

    found = []
    for entry in os.scandir(folder):
        if entry.name.startswith(prefix) and entry.is_file(follow_symlinks=False):
            found.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
    for _, name in sorted(found)[:-keep] if len(found) > keep else []:
        safe_write.remove(os.path.join(folder, name), anchor=base)


def _user_cache() -> str:
    base = os.environ.get("XDG_CACHE_HOME", "")
    return base if os.path.isabs(base) else os.path.join(os.path.expanduser("~"), ".cache")
