"""The run manifest: one file that lets a run in which nothing changed answer from a `stat` per file.

The result cache (promptlint.project.cache) is keyed by content, so even a warm run reads and hashes
every template, reads one entry per template and re-hashes every include it names. The manifest
records, for one working directory and one set of settings, each file's final result (findings
after suppressions, with their source lines, and its notices) together with what it was computed
from: the file's stamp (size, mtime, ctime, inode, device) and content hash, its neighbourhood
(samples files beside it), and every dependency's stamp and digest (includes, samples files: what
the analysis recorded through ``ctx.depend``). A run reads it once; a file whose stamp and whose
dependencies' stamps are unchanged is answered from it without being read. A changed stamp is
verified by content hash (a touched file with the same bytes stays warm); a changed hash is a miss,
and the file goes through the result cache as before.

Safety, as the cache's: it lives in the same directory (read and written through ``Cache``, which
follows no link below the project root), its name and its contents are authenticated with the user's secret (a
manifest written elsewhere, committed or edited is ignored), it is read with a size bound and
counts towards the cache's cap. Stamps taken within ``RACY_NS`` of the write are not trusted (as
git's "racily clean" entries): a same-size rewrite within the clock's resolution keeps its mtime,
so such files are verified by hash on the next run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from promptlint import __version__
from promptlint.doors import bounded_io
from promptlint.project.cache import Cache, code_stamp, dep_digest, machine_secret, sha256_bytes

MAX_BYTES = 8 * 1024 * 1024  # a manifest larger than this keeps only the current run's files
RACY_NS = 2_000_000_000  # FAT's 2 s mtime resolution bounds every clock a stamp may come from
EMPTY = sha256_bytes(b"")  # a model directory's "content" (its files are its neighbourhood)


def stamp(st: os.stat_result) -> List[int]:
    from promptlint.tokenization.tokens import file_stamp  # size, mtime, ctime, inode, device

    return file_stamp(st)


class Manifest:
    """Per-file results of earlier runs under one run key (see the module docstring)."""

    def __init__(self, cache: Cache, settings_key: str, tok_sha: str, evidence: bool, base: Optional[Path] = None,
                 kept=None):
        """``kept``: a resident process's memo (promptlint.driver.resident.ResidentMemo) holding the
        records it last read or wrote, used while the file is unchanged."""
        self.cache = cache
        self.kept = kept
        self.base = base  # the run's directory: files are recorded by the names the user typed from it
        secret = machine_secret()
        # settings_key holds the run's base directory (Settings.base): the names its findings carry
        ident = "\0".join((__version__, str(cache.root), settings_key, str(evidence)))
        self.path = cache.dir / "manifests" / (hashlib.sha256(secret + ident.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".json")
        self.key = hashlib.sha256(secret + "\0".join((code_stamp(), tok_sha)).encode()).hexdigest()
        self.files: Dict[str, Dict] = self._load() if cache.enabled else {}
        self.seen: Dict[str, Dict] = {}  # this run's records, validated or new
        self.dirty = False

    # ------------------------------------------------------------------ reading

    def _load(self) -> Dict[str, Dict]:
        if self.kept is None:
            return self._read()
        files = self.kept.manifest_records(self.path, self.key)
        if files is None:
            before = self.kept.stamp(self.path)
            files = self._read()
            self.kept.remember_manifest(self.path, self.key, files, before)
        return files

    def _read(self) -> Dict[str, Dict]:
        try:
            raw = self.cache.read(self.path, MAX_BYTES + 128)
        except (OSError, bounded_io.InputRefused):
            return {}
        mac, _, body = raw.partition(b"\n")
        if not hmac.compare_digest(mac, _mac(body).encode()):
            return {}  # written by another user or machine, or edited: never trusted
        try:
            data = json.loads(body)
        except ValueError:
            return {}
        if not isinstance(data, dict) or data.get("key") != self.key or not isinstance(data.get("files"), dict):
            return {}  # other code or another tokenizer: every record is stale
        return data["files"]

    def lookup(self, path: Path, neighbourhood: str) -> Optional[Tuple[List[Dict], List[str]]]:
        """(finding dicts, notices) recorded for ``path`` when nothing it was computed from changed."""
        name = self._name(path)
        rec = self.files.get(name)
        if not isinstance(rec, dict) or rec.get("nb") != neighbourhood:
            return None
        try:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                return None  # a link may change target (and the path findings show) keeping the target's bytes
            now = stamp(st)
            fresh = dict(rec)
            if now != rec["stamp"]:
                if _content_digest(path, st) != rec["sha"]:
                    return None
                fresh["stamp"] = now
            deps = {}
            for dep, (dep_stamp, digest) in rec["deps"].items():
                current = _dep_stamp(dep)
                if current != dep_stamp or current is None:
                    if dep_digest(Path(dep), self.cache.root) != digest:
                        return None
                deps[dep] = [current, digest]
            fresh["deps"] = deps
            findings, notices = rec["findings"], rec["notices"]
            if not (isinstance(findings, list) and isinstance(notices, list) and all(isinstance(n, str) for n in notices)):
                return None
        except (OSError, KeyError, TypeError, ValueError, AttributeError):
            return None
        if fresh != rec:
            self.dirty = True
        else:
            fresh = rec  # the same object: compared by identity and encoded once by a resident process
        self.seen[name] = fresh
        return findings, notices

    # ------------------------------------------------------------------ writing

    def record(self, path: Path, before: Optional[os.stat_result], sha: str, neighbourhood: str,
               deps: Dict[str, Optional[str]], findings: List[Dict], notices: List[str]) -> None:
        """Remember ``path``'s result; ``before`` was taken before its content was read (so a change
        during the run leaves a stamp that no longer matches), ``deps`` maps each dependency to the
        digest the analysis saw. A dependency that changed since then is not recorded at all."""
        if before is None or stat.S_ISLNK(before.st_mode):
            return
        recorded = {}
        for dep, digest in deps.items():
            dep_stamp = _dep_stamp(dep)  # before the digest: a change after it makes the stamp stale
            if dep_digest(Path(dep), self.cache.root) != digest:
                return
            recorded[dep] = [dep_stamp, digest]
        self.seen[self._name(path)] = {"stamp": stamp(before), "sha": sha, "nb": neighbourhood, "deps": recorded,
                                "findings": findings, "notices": notices}
        self.dirty = True

    def _name(self, path: Path) -> str:
        from promptlint.base.paths import typed

        return str(path) if self.base is None else typed(path, self.base)

    def save(self, finished: Optional[int] = None) -> None:
        """Write the manifest when this run learnt something (never on a warm run with old stamps).
        ``finished``: when the run ended (time.time_ns()), for a write deferred past it: stamps racy
        then stay distrusted however late the write comes."""
        if not (self.dirty and self.cache.enabled):
            return
        horizon = (time.time_ns() if finished is None else finished) - RACY_NS
        seen = {name: _distrust_racy(rec, horizon) for name, rec in self.seen.items()}
        files = {**self.files, **seen}
        if files == self.files:
            return  # only racy stamps were re-verified: nothing new to remember
        body = self._body(files)
        if len(body) > MAX_BYTES:
            files = seen
            body = self._body(files)
            if len(body) > MAX_BYTES:
                return
        self.cache._write(self.path, _mac(body) + "\n" + body)
        self.cache.wrote = True
        if self.kept is not None and self.cache.enabled:  # written: what the file holds now
            self.kept.remember_manifest(self.path, self.key, files, None)

    def _body(self, files: Dict[str, Dict]) -> str:
        """``json.dumps({"key": ..., "files": files}, separators=(",", ":"))``; a resident process
        joins each record's text as it last encoded it (records are never changed once made)."""
        if self.kept is None:
            return json.dumps({"key": self.key, "files": files}, separators=(",", ":"))
        encode = self.kept.encoded_record
        parts = [json.dumps(name) + ":" + encode(rec) for name, rec in files.items()]
        return '{"key":' + json.dumps(self.key) + ',"files":{' + ",".join(parts) + "}}"


def _mac(body) -> str:
    if isinstance(body, str):
        body = body.encode("utf-8")
    return hmac.new(machine_secret(), body, hashlib.sha256).hexdigest()


def _dep_stamp(dep: str) -> Optional[List[int]]:
    try:
        return stamp(os.stat(dep))
    except OSError:
        return None  # missing: dep_digest (one stat) confirms it is still missing


def _content_digest(path: Path, st: os.stat_result) -> Optional[str]:
    if stat.S_ISDIR(st.st_mode):
        return EMPTY
    if not stat.S_ISREG(st.st_mode):
        return None  # never read a FIFO or a device to hash it
    try:
        return sha256_bytes(bounded_io.read_bytes(path))
    except (OSError, bounded_io.InputRefused):
        return None


def _distrust_racy(rec: Dict, horizon: int) -> Dict:
    """``rec`` with each stamp whose mtime or ctime is not safely older than this write replaced by
    None (re-hash next time): a same-size rewrite in the same clock tick would keep it. A copy when
    anything changes: a record, once made, is never changed (a resident process keeps its text)."""

    def racy(s) -> bool:
        return s is not None and (s[1] >= horizon or s[2] >= horizon)

    deps = rec["deps"]
    if not racy(rec["stamp"]) and not any(racy(pair[0]) for pair in deps.values()):
        return rec
    return {**rec, "stamp": None if racy(rec["stamp"]) else rec["stamp"],
            "deps": {dep: [None if racy(pair[0]) else pair[0], pair[1]] for dep, pair in deps.items()}}
