"""What a resident Workspace (the daemon, the language server) keeps from one check to the next.

A check of a project in which one file changed meets every other file again: the walk reads the
first bytes of each `.py` to see whether it builds prompts, the run manifest is read, authenticated
and decoded, and each unchanged file's recorded findings are rebuilt from their JSON. A `check`
command does that once and exits; a resident process does it per request, for the same answers.
``ResidentMemo`` keeps them, each under what it was computed from:

- the walk's verdict on a file (``walk_takes``: name, prefilter), by the file's stat stamp (size,
  mtime, ctime, inode, device, mode); a stamp younger than the manifest's racy window is not kept
  (a same-size rewrite in the same clock tick keeps its mtime). Only without a read policy
  (untrusted mode decides per command what may be read).
- the run manifest's records as this process last read or wrote them, by the manifest file's
  lstat stamp: a manifest another process wrote since is read again. Records validate themselves
  (each file's and dependency's stamp and digest are checked on lookup), so this only spares the read.
- the findings rebuilt from a record's list (the same list object while the record is kept):
  findings are frozen, so one Finding serves every request that reports it.
- the cache's size at its last walk plus what this process wrote since: the cache is walked to
  enforce its cap when that could matter (past half the cap) or a minute has passed, not after
  every request that wrote (other processes prune after their own writes).

And what it can do later: the writes a check makes for later processes -- the result cache's
entries, the run manifest (its records are already kept here for the next request) and the
cache's pruning. A caller that has a moment after its answer (the daemon: after the reply is
sent) ``hold``s writes for the request and ``flush``es them then; the files are the same, written
a few milliseconds later. A write still held when the next check starts is done first; one that
fails after its reply (a cache that cannot be written) is said by the next check's notices.
Without a hold (the language server, in-process callers) everything is written in the run.

Two more keep themselves where they live: the tokenizer pool's encodings (encode_memo) and the
linted Python modules' trees (pysource.project.keep_linted, under ``Context.resident``).

Everything is bounded and only ever answers what recomputing would.
"""

from __future__ import annotations

import json
import os
import stat
import time
from typing import Callable, Dict, List, Optional, Tuple

MAX_FILES = 20_000  # walk verdicts kept (then forgotten at once)
RACY_NS = 2_000_000_000  # as the manifest's (promptlint.project.manifest.RACY_NS)
CACHE_WALK_EVERY = 60.0  # seconds: the cache is walked (its size measured) at least this often when written


def _stamp(st: os.stat_result) -> Tuple[int, ...]:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode


class ResidentMemo:
    def __init__(self):
        self.sniffs: Dict[str, Tuple[Tuple[int, ...], bool]] = {}  # path -> (stat stamp, the walk takes it)
        self.reads_by_name: Dict[tuple, bool] = {}  # (a file name, the analyzers) -> whether the walk's verdict reads the file
        self.manifest: Optional[Tuple[str, str, Tuple[int, ...], Dict]] = None  # (path, key, lstat stamp, records)
        self.decoded: Dict[int, Tuple[list, list]] = {}  # id(a record's finding dicts) -> (that list, its Findings)
        self.encoded: Dict[int, Tuple[dict, str]] = {}  # id(a manifest record) -> (that record, its JSON text)
        self.cache_sizes: Dict[str, Tuple[int, float]] = {}  # cache directory -> (bytes at the last walk + since, when walked)
        self.later: Optional[List[Callable[[], None]]] = None  # while held: writes to do after the reply
        self.warned: List[str] = []  # what a write done after its reply could not say (the next check does)

    # ------------------------------------------------------------------ after the reply

    def hold(self) -> None:
        """Writes the next check would make at its end wait for ``flush`` (the caller's reply first)."""
        if self.later is None:
            self.later = []

    def defer(self, write: Callable[[], None]) -> bool:
        """Queue ``write`` when held (True); False: the caller writes now."""
        if self.later is None:
            return False
        self.later.append(write)
        return True

    def done_later(self, release: bool = True) -> None:
        """Do the held writes, in order (their own error handling disables a cache that cannot be
        written, as during a run); ``release``: stop holding."""
        later = self.later or []
        self.later = None if release else []
        for write in later:
            write()

    def flush(self) -> None:
        self.done_later(release=True)

    def warn_next(self, warning: str) -> None:
        if warning not in self.warned:
            self.warned.append(warning)

    def warnings(self) -> List[str]:
        """Warnings of writes done after an earlier reply (once each)."""
        said, self.warned = self.warned, []
        return said

    # ------------------------------------------------------------------ the walk

    def kinds(self, kinds):
        """``kinds`` (the analyzer registry discovery asks) with ``walk_takes`` remembered by stamp."""
        return _RememberedKinds(self, kinds)

    def walk_takes(self, path, compute: Callable[[object], bool]) -> bool:
        from promptlint.doors import bounded_io

        if bounded_io.current_policy() is not None:
            return compute(path)
        name = os.fspath(path)
        try:
            now = _stamp(os.stat(name))
        except (OSError, ValueError):
            return compute(path)
        hit = self.sniffs.get(name)
        if hit is not None and hit[0] == now:
            return hit[1]
        takes = compute(path)
        if max(now[1], now[2]) < time.time_ns() - RACY_NS:
            if len(self.sniffs) >= MAX_FILES:
                self.sniffs.clear()
            self.sniffs[name] = (now, takes)
        return takes

    # ------------------------------------------------------------------ the cache's size

    def cache_grew(self, directory: str, written: int, limit: int) -> bool:
        """A run wrote ``written`` bytes to the cache in ``directory``: True when the total of the last
        walk plus what this process wrote since stays under half of ``limit`` and that walk is recent,
        so no walk is needed to keep the cap. Other processes prune after their own writes."""
        last = self.cache_sizes.get(directory)
        if last is None or time.monotonic() - last[1] > CACHE_WALK_EVERY:
            return False
        total = last[0] + written
        if total > limit // 2:
            return False
        self.cache_sizes[directory] = (total, last[1])
        return True

    def cache_walked(self, directory: str, total: int) -> None:
        if len(self.cache_sizes) >= 64:
            self.cache_sizes.clear()
        self.cache_sizes[directory] = (total, time.monotonic())

    # ------------------------------------------------------------------ the run manifest

    def manifest_records(self, path, key: str) -> Optional[Dict]:
        """The records last read or written for the manifest at ``path`` under ``key``, when the file
        is still the one they came from; None: read it."""
        kept = self.manifest
        if kept is None or kept[0] != os.fspath(path) or kept[1] != key:
            return None
        now = self.stamp(path)
        return kept[3] if now is not None and now == kept[2] else None

    def remember_manifest(self, path, key: str, records: Dict, before: Optional[Tuple[int, ...]]) -> None:
        """``records`` are what the manifest at ``path`` holds now; ``before``: its stamp taken before
        it was read (None: just written by this process). Kept only when the stamp did not move."""
        now = self.stamp(path)
        if now is None or (before is not None and before != now):
            self.manifest = None
            return
        self.manifest = (os.fspath(path), key, now, records)
        live = {id(rec.get("findings")) for rec in records.values() if isinstance(rec, dict)}
        self.decoded = {k: v for k, v in self.decoded.items() if k in live}
        kept = {id(rec) for rec in records.values()}
        self.encoded = {k: v for k, v in self.encoded.items() if k in kept}

    def encoded_record(self, rec: dict) -> str:
        """A manifest record's JSON text (``separators=(",", ":")``), encoded once while the record is
        kept: records are never changed once made (project.manifest), so one object is one text."""
        hit = self.encoded.get(id(rec))
        if hit is not None and hit[0] is rec:
            return hit[1]
        text = json.dumps(rec, separators=(",", ":"))
        self.encoded[id(rec)] = (rec, text)
        return text

    @staticmethod
    def stamp(path) -> Optional[Tuple[int, ...]]:
        """A regular file's lstat stamp (None: missing, or not a regular file)."""
        try:
            st = os.lstat(path)
        except (OSError, ValueError):
            return None
        return _stamp(st) if stat.S_ISREG(st.st_mode) else None

    def findings(self, dicts: list, decode: Callable[[list], list]) -> list:
        """``decode(dicts)``, remembered while ``dicts`` (a kept record's list) lives."""
        hit = self.decoded.get(id(dicts))
        if hit is not None and hit[0] is dicts:
            return list(hit[1])
        found = decode(dicts)
        self.decoded[id(dicts)] = (dicts, found)
        return list(found)




class _RememberedKinds:
    def __init__(self, memo: ResidentMemo, kinds):
        self.memo, self.inner = memo, kinds

    def walk_takes(self, path) -> bool:
        # whether deciding may read the file depends on its name alone, for one set of analyzers (analyzers.walk_reads)
        key = (path.name, tuple(getattr(self.inner, "ANALYZERS", ())))
        reads = self.memo.reads_by_name.get(key)
        if reads is None:
            if len(self.memo.reads_by_name) >= MAX_FILES:
                self.memo.reads_by_name.clear()
            reads = self.memo.reads_by_name[key] = self.inner.walk_reads(path)
        if not reads:  # decided by its name: nothing to remember
            return self.inner.walk_takes(path)
        return self.memo.walk_takes(path, self.inner.walk_takes)

    def owned_directory(self, path):
        return self.inner.owned_directory(path)

