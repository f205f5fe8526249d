"""The result cache: `.promptlint_cache/` at the project root, keyed by content hashes.

Like ruff's and black's caches, but keyed by content rather than mtime (pre-commit stashes
and checks out files, and a Jinja include makes one file's mtime insufficient):

- an entry's key hashes the file's bytes, the resolved settings, the tokenizer's sha256,
  promptlint's version and the working directory (finding paths are shown relative to it);
- an entry also records every other path the analysis looked at (includes, samples files),
  with its hash, or as missing (an include name looked up where no file was: a file appearing
  there, a choice of `{% include [...] %}` or a nearer file shadowing a farther one, changes the
  resolution), and is a hit only when all of them are unchanged;
- writes are atomic (temp file + rename), so concurrent runs never see half an entry;
  anything unreadable is a miss; a cache that cannot be written is skipped with one warning;
- every read, write and deletion goes through ``promptlint.doors.safe_write`` anchored at the project
  root: a link committed anywhere on the way (`.promptlint_cache` itself, its version folder,
  `entries`, `entries/ab`, `manifests`) makes reads miss and writes refused (the cache is off for
  the run, one warning); pruning and ``clean`` delete only the names the cache writes and never
  enter a link.

A run first consults the run manifest (promptlint.project.manifest, in this directory): a file whose
stamps did not change is answered from it without being read or looked up here.

The directory ignores itself (`.gitignore` with `*`) and carries a `CACHEDIR.TAG`.

A pull request can commit a `.promptlint_cache/` of its own, and every input of a key is
predictable, so keys and memo names also hash a secret kept outside the project
(`$XDG_CACHE_HOME/promptlint/secret`, else `~/.cache/...`, mode 0600): entries written on another
machine, or crafted, are never read. The cache is capped (`MAX_BYTES`): a run that wrote entries
evicts the least recently written ones beyond the cap.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from promptlint import __version__
from promptlint.base import lazy_re
from promptlint.doors import bounded_io, safe_write

DIR_NAME = ".promptlint_cache"
MAX_BYTES = 64 * 1024 * 1024
_SIZE_MEMO = "size"  # prune's memo: the bytes it last found plus what runs wrote since
_WALK_EVERY = 100  # writing runs between two walks at most, whatever the memo says
GITIGNORE = "# Automatically created by promptlint.\n*\n"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by promptlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


_CODE_STAMP: Optional[str] = None


def code_stamp(fresh: bool = False) -> str:
    """Size and mtime of promptlint's own files: a development checkout that changes its rules or
    code never serves results computed by older code (releases also differ by version). ``fresh``
    re-reads them (the daemon compares per request)."""
    global _CODE_STAMP
    if _CODE_STAMP is None or fresh:
        from promptlint.base.code_files import code_stamp as stamp

        _CODE_STAMP = stamp(fresh=fresh)  # not fresh: the pass the templates' code cache took, if it did
    return _CODE_STAMP


_SECRET: List[bytes] = []


def machine_secret() -> bytes:
    """32 random bytes this user keeps outside every project; per process when it cannot be stored
    (then nothing written by another process is ever trusted: the cache only misses)."""
    if _SECRET:
        return _SECRET[0]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "promptlint", "secret")
    secret = b""
    try:
        secret = bytes.fromhex(bounded_io.read_text(path, 1024).strip())
    except (OSError, ValueError):
        pass
    if len(secret) != 32:
        secret = os.urandom(32)
        try:  # never through a link below the user's cache directory
            safe_write.write_text(path, secret.hex(), anchor=base, parents=True, private=True)
        except OSError:
            pass
    _SECRET.append(secret)
    return secret


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_hash(path: Path) -> Optional[str]:
    try:
        return sha256_bytes(bounded_io.read_bytes(path))
    except OSError:
        return None


def dep_digest(path: Path, root: Path) -> Optional[str]:
    """What a dependency looked like to the analysis: None when it did not exist (an include
    name looked up where no file was: a file appearing there changes the resolution), else its
    content hash. A path that leads outside the project through a symlink (an include the loader
    refused) is identified by its target and ``stat`` alone: its content is never read, not even
    to hash it."""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        return None
    from promptlint.render.files import inside

    real = os.path.realpath(path)
    if real != os.path.abspath(path) and not inside(real, (os.path.realpath(root),)):
        return f"link:{real}:{st.st_mode}:{st.st_size}:{st.st_mtime_ns}"
    if not stat.S_ISREG(st.st_mode):
        return f"special:{st.st_mode}"
    return file_hash(Path(path)) or "unreadable"


class Cache:
    def __init__(self, root: Path, enabled: bool = True):
        self.root = Path(root)
        self.dir = Path(root) / DIR_NAME / __version__
        self.enabled = enabled
        self.warning: Optional[str] = None
        self.wrote = False
        self.written = 0  # bytes this run wrote into the cache (its workers' included): prune's estimate
        self.kept = None  # a resident process's memo of the cache's size (promptlint.driver.resident), else None
        self._ready = False

    # ------------------------------------------------------------------ keys

    def key(self, path: Path, content: bytes, settings_key: str, tokenizer_sha: str) -> str:
        h = hashlib.sha256(machine_secret())
        # the run's base directory (which findings' names are relative to) is in settings_key (Settings.base)
        for part in (__version__, code_stamp(), str(Path(path)), settings_key, tokenizer_sha):
            h.update(part.encode("utf-8", "surrogateescape") + b"\0")
        h.update(content)
        return h.hexdigest()

    # ------------------------------------------------------------------ entries

    def get(self, key: str) -> Optional[Dict]:
        if not self.enabled:
            return None
        try:
            entry = json.loads(self.read(self.dir / "entries" / key[:2] / f"{key}.json", bounded_io.MAX_INPUT_BYTES))
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("findings"), list):
            return None
        deps = entry.get("deps") or {}
        if not isinstance(deps, dict):
            return None
        for dep, digest in deps.items():
            if not (digest is None or isinstance(digest, str)) or dep_digest(Path(dep), self.root) != digest:
                return None
        return entry

    def put(self, key: str, findings: List[Dict], deps: Iterable[Path], **extra) -> Optional[Dict[str, Optional[str]]]:
        """Store ``findings`` with the state of every path the analysis looked at, found or not
        (kept as looked up, links unresolved: a link that changes target changes the digest);
        returns those states (for the run manifest), None when the cache is off."""
        if not self.enabled:
            return None
        states = {os.path.abspath(d): dep_digest(Path(d), self.root) for d in deps}
        entry = {"findings": findings, "deps": states, **extra}
        # ASCII: a file name with an undecodable byte (a lone surrogate) must round-trip
        target, text = self.dir / "entries" / key[:2] / f"{key}.json", json.dumps(entry)
        self.wrote = True
        # a resident process holding its writes (the daemon: until its reply is sent) writes the entry
        # then; the run already has its findings, and ``written`` counts it now for prune's estimate
        if self.kept is not None and self._prepare() and self.kept.defer(functools.partial(self._write_later, target, text)):
            self.written += len(text)
            return states
        self._write(target, text)
        return states

    def _write_later(self, target: Path, text: str) -> None:
        """A held entry write, after the reply: a failure disables this run's cache as ``_write``
        does, and the next check of the process says so (its reply is the first one left)."""
        written = self.written
        self._write(target, text)
        self.written = written  # counted when it was held
        if self.warning is not None:
            self.kept.warn_next(self.warning)

    def prune(self, limit: Optional[int] = None) -> None:
        """Evict the oldest entries until the cache holds at most ``limit`` bytes (only after a run
        that wrote, so a warm run does not list the directory). Only files the cache writes are
        counted and deleted (``_written_by_cache``), and the walk never enters a link: a committed
        `entries -> /somewhere` loses nothing.

        The walk costs a one-file run more the fuller the cache is (~1,000 entries: tens of ms), so
        a memo keeps the size it found plus what runs wrote since (an overestimate: a rewritten
        manifest or entry counts again), and the directory is walked only when that passes the
        limit, every ``_WALK_EVERY`` writing runs (two runs racing on the memo lose one's count),
        or when the memo is missing or unreadable. A resident process (the daemon) counts in memory
        instead (``kept``: it walks when its writes since its last walk pass half the limit) and
        updates the file's memo when it walks, so what it wrote between its walks (under half the
        limit) is the most the memo can miss."""
        if not self.enabled or not self.wrote:
            return
        limit = MAX_BYTES if limit is None else limit
        kept = self.kept
        if kept is not None:
            if kept.cache_grew(str(self.dir), self.written, limit):
                return  # a resident process's own count since its last walk is far below the cap
        else:
            known = self.memo_get(_SIZE_MEMO)
            size, runs = known.get("bytes"), known.get("runs")
            if type(size) is int and type(runs) is int and size >= 0 and 0 <= runs < _WALK_EVERY and self.written > 0:
                estimate = size + self.written
                if estimate <= limit:
                    self.memo_put(_SIZE_MEMO, {"bytes": estimate, "runs": runs + 1})
                    return
        entries = []
        total = 0
        for rel, st in safe_write.walk(self.dir, anchor=self.root):
            if stat.S_ISREG(st.st_mode) and _PRUNABLE.match(rel):
                entries.append((st.st_mtime_ns, st.st_size, rel))
                total += st.st_size
        if total > limit:
            doomed = []
            for _mtime, size, rel in sorted(entries):
                doomed.append(rel)
                total -= size
                if total <= limit * 0.8:  # headroom, so the next runs do not prune again at once
                    break
            safe_write.remove_all(self.dir, doomed, anchor=self.root)
        if kept is not None:
            kept.cache_walked(str(self.dir), total)
        self.memo_put(_SIZE_MEMO, {"bytes": total, "runs": 0})  # a resident process's walk brings the file's memo up to date too

    # ------------------------------------------------------------------ small memos

    def memo_get(self, name: str) -> Dict:
        if not self.enabled:
            return {}
        try:
            data = json.loads(self.read(self.dir / self._memo_name(name), bounded_io.MAX_INPUT_BYTES))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError, UnicodeDecodeError):
            return {}

    def memo_put(self, name: str, data: Dict) -> None:
        if self.enabled:
            self._write(self.dir / self._memo_name(name), json.dumps(data))

    @staticmethod
    def _memo_name(name: str) -> str:
        return f"{name}-{hashlib.sha256(machine_secret() + name.encode()).hexdigest()[:16]}.json"

    # ------------------------------------------------------------------ io

    def read(self, path: Path, limit: int) -> bytes:
        """A file of the cache, opened with no link followed below the project root: a committed
        link anywhere on the way makes a miss (``OSError``)."""
        with safe_write.parent_of(path, anchor=self.root) as (dir_fd, name):
            return bounded_io.read_bytes(name, limit, dir_fd=dir_fd)

    def _prepare(self) -> bool:
        if self._ready:
            return True
        top = self.dir.parent
        try:
            # a committed link (the directory, its version folder, anything below) refuses the write
            safe_write.make_dirs(self.dir, anchor=self.root)
            for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
                if safe_write.lstat(top / name, anchor=self.root) is None:
                    safe_write.write_text(top / name, text, anchor=self.root, private=True)
        except OSError as e:
            self._disable(_cannot_write(top, e))
            return False
        self._ready = True
        return True

    def _write(self, target: Path, text: str) -> None:
        if not self._prepare():
            return
        try:
            safe_write.write_text(target, text, anchor=self.root, parents=True, private=True)
            self.written += len(text)  # characters: bytes for the ASCII JSON the cache writes
        except OSError as e:
            self._disable(_cannot_write(self.dir.parent, e))

    def _disable(self, message: str) -> None:
        self.enabled = False
        self.warning = message


def _cannot_write(top: Path, e: OSError) -> str:
    reason = str(e) if isinstance(e, safe_write.WriteRefused) else (e.strerror or str(e))
    return f"cannot write the cache at {top} ({reason}); continuing without it"


# What the cache writes below its version directory: entries, manifests (promptlint.project.manifest),
# memos, and the temporary files of writes a killed run left. Pruning and `clean` delete these
# names only.
_TEMP = r"(?:\.tmp-[^/]*|%s[^/]*)" % re.escape(safe_write.TEMP_PREFIX)
_PRUNABLE = lazy_re.compile(r"(?:entries/([0-9a-f]{2})/(?:\1[0-9a-f]{62}\.json|%s)|manifests/(?:[0-9a-f]{32}\.json|%s))\Z"
                       % (_TEMP, _TEMP))
_MEMO = lazy_re.compile(r"(?:[a-z][a-z-]*-[0-9a-f]{16}\.json|%s)\Z" % _TEMP)
_VERSION = lazy_re.compile(r"[0-9][0-9A-Za-z.+-]*\Z")
_CACHE_DIRS = lazy_re.compile(r"(?:entries|entries/[0-9a-f]{2}|manifests)\Z")


@dataclass
class Cleaned:
    """What `clean` did: whether there was a cache, what it removed and what it left."""

    found: bool = False  # there was a cache directory
    removed: int = 0  # files and directories removed
    left: List[str] = field(default_factory=list)  # entries the cache did not write, left in place


def clean(root: Path) -> Cleaned:
    """Remove what the cache wrote under ``root``: its files (by name, and `.gitignore` and
    `CACHEDIR.TAG` by content), its directories once empty; anything else, and every link, is
    left where it is (``left``). ``WriteRefused`` when `.promptlint_cache` itself is a link or not
    a directory."""
    root = Path(root)
    top = root / DIR_NAME
    st = safe_write.lstat(top, anchor=root)
    out = Cleaned(found=st is not None)
    if st is None:
        return out
    if not stat.S_ISDIR(st.st_mode):
        raise safe_write.WriteRefused(f"{top} is {safe_write.describe(st.st_mode)}, not a cache promptlint made; "
                                      "not removed (remove it yourself)")
    dirs = []
    for rel, est in list(safe_write.walk(top, anchor=root)):
        if stat.S_ISDIR(est.st_mode) and _cache_dir(rel):
            dirs.append(rel)
        elif stat.S_ISREG(est.st_mode) and _cache_file(top, rel):
            try:
                out.removed += safe_write.remove(top / rel, anchor=root)
            except OSError:
                out.left.append(rel)
        else:
            out.left.append(rel)
    for rel in sorted(dirs, key=lambda r: r.count("/"), reverse=True):
        out.removed += safe_write.remove_dir(top / rel, anchor=root)
    out.removed += safe_write.remove_dir(top, anchor=root)
    out.left.sort()
    return out


def _cache_dir(rel: str) -> bool:
    version, _, below = rel.partition("/")
    return _VERSION.match(version) is not None and (not below or _CACHE_DIRS.match(below) is not None)


def _cache_file(top: Path, rel: str) -> bool:
    version, _, below = rel.partition("/")
    if not below:
        return _ours_on_top(top, rel)
    return _VERSION.match(version) is not None and (_PRUNABLE.match(below) or _MEMO.match(below)) is not None


def _ours_on_top(top: Path, name: str) -> bool:
    """`.gitignore` and `CACHEDIR.TAG` as the cache writes them (a file of that name with other
    content is someone else's)."""
    expected = {".gitignore": GITIGNORE, "CACHEDIR.TAG": CACHEDIR_TAG}.get(name)
    if expected is None:
        return False
    try:
        with safe_write.parent_of(top / name, anchor=top.parent) as (dir_fd, leaf):
            return bounded_io.read_bytes(leaf, 4096, dir_fd=dir_fd) == expected.encode("utf-8")
    except OSError:
        return False
