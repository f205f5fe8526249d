"""The result cache: `.promptlint_cache/` at the project root, keyed by content hashes.

Like ruff's and black's caches, but keyed by content rather than mtime (pre-commit stashes
and checks out files, and a Jinja include makes one file's mtime insufficient):

- an entry's key hashes the file's bytes, the resolved settings, the tokenizer's sha256,
  promptlint's version and the working directory (finding paths are shown relative to it);
- an entry also records every other file the analysis read (includes, samples files) with
  its hash, and is a hit only when all of them are unchanged;
- writes are atomic (temp file + rename), so concurrent runs never see half an entry;
  anything unreadable is a miss; a cache that cannot be written is skipped with one warning.

The directory ignores itself (`.gitignore` with `*`) and carries a `CACHEDIR.TAG`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from promptlint import __version__, bounded_io

DIR_NAME = ".promptlint_cache"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by promptlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


_CODE_STAMP: Optional[str] = None


def code_stamp() -> str:
    """Size and mtime of promptlint's own files: a development checkout that changes its rules or
    code never serves results computed by older code (releases also differ by version)."""
    global _CODE_STAMP
    if _CODE_STAMP is None:
        from promptlint.registry import rules_dir

        parts = []
        for root in (Path(__file__).parent, rules_dir()):
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = [d for d in dirnames if d != "__pycache__"]
                for name in filenames:
                    if name.endswith((".py", ".toml", ".json")):
                        st = os.stat(os.path.join(dirpath, name))
                        parts.append(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}")
        _CODE_STAMP = sha256_bytes("\n".join(sorted(parts)).encode("utf-8"))
    return _CODE_STAMP


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_hash(path: Path) -> Optional[str]:
    try:
        return sha256_bytes(bounded_io.read_bytes(path))
    except OSError:
        return None


class Cache:
    def __init__(self, root: Path, enabled: bool = True):
        self.dir = Path(root) / DIR_NAME / __version__
        self.enabled = enabled
        self.warning: Optional[str] = None
        self._ready = False

    # ------------------------------------------------------------------ keys

    def key(self, path: Path, content: bytes, settings_key: str, tokenizer_sha: str) -> str:
        h = hashlib.sha256()
        for part in (__version__, code_stamp(), os.getcwd(), str(Path(path)), settings_key, tokenizer_sha):
            h.update(part.encode("utf-8", "surrogateescape") + b"\0")
        h.update(content)
        return h.hexdigest()

    # ------------------------------------------------------------------ entries

    def get(self, key: str) -> Optional[Dict]:
        if not self.enabled:
            return None
        try:
            entry = json.loads((self.dir / "entries" / key[:2] / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("findings"), list):
            return None
        for dep, digest in (entry.get("deps") or {}).items():
            if file_hash(Path(dep)) != digest:
                return None
        return entry

    def put(self, key: str, findings: List[Dict], deps: Iterable[Path]) -> None:
        if not self.enabled:
            return
        entry = {"findings": findings, "deps": {str(Path(d).resolve()): file_hash(Path(d)) for d in deps}}
        self._write(self.dir / "entries" / key[:2] / f"{key}.json", json.dumps(entry, ensure_ascii=False))

    # ------------------------------------------------------------------ small memos

    def memo_get(self, name: str) -> Dict:
        if not self.enabled:
            return {}
        try:
            data = json.loads((self.dir / f"{name}.json").read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError, UnicodeDecodeError):
            return {}

    def memo_put(self, name: str, data: Dict) -> None:
        if self.enabled:
            self._write(self.dir / f"{name}.json", json.dumps(data))

    # ------------------------------------------------------------------ io

    def _prepare(self) -> bool:
        if self._ready:
            return True
        top = self.dir.parent
        try:
            top.mkdir(parents=True, exist_ok=True)
            if not (top / ".gitignore").exists():
                self._atomic(top / ".gitignore", "# Automatically created by promptlint.\n*\n")
            if not (top / "CACHEDIR.TAG").exists():
                self._atomic(top / "CACHEDIR.TAG", CACHEDIR_TAG)
        except OSError as e:
            self._disable(f"cannot write the cache at {top} ({e.strerror or e}); continuing without it")
            return False
        self._ready = True
        return True

    def _write(self, target: Path, text: str) -> None:
        if not self._prepare():
            return
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._atomic(target, text)
        except OSError as e:
            self._disable(f"cannot write the cache at {self.dir.parent} ({e.strerror or e}); continuing without it")

    @staticmethod
    def _atomic(target: Path, text: str) -> None:
        fd, tmp = tempfile.mkstemp(dir=str(target.parent), prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _disable(self, message: str) -> None:
        self.enabled = False
        self.warning = message


def clean(root: Path) -> bool:
    """Remove the cache directory under ``root``; True when there was one."""
    target = Path(root) / DIR_NAME
    if not target.exists():
        return False
    shutil.rmtree(target, ignore_errors=True)
    return True
