"""A git revision's files, written into a fresh directory from git objects.

``check --baseline REF`` lints the project as it was at REF without touching the user's work
tree, index or HEAD: ``git ls-tree`` lists REF's entries and ``git cat-file --batch`` streams
their blobs. The blobs come from a pull request, so they are untrusted: each is bounded,
paths with ``..``/``.git`` components are refused, a symlink is recreated only when its target
stays inside the exported tree, and no file is written through a symlink (promptlint.doors.safe_write).
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Tuple

from promptlint.doors import bounded_io, safe_write

MAX_BLOB_BYTES = bounded_io.MAX_TOKENIZER_BYTES  # the largest file any reader accepts
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
MAX_LINK_BYTES = 4096


class GitError(Exception):
    """A one-line reason the revision cannot be read (no repository, unknown revision...)."""


@dataclass
class Exported:
    commit: str
    files: int = 0
    skipped: List[Tuple[str, str]] = field(default_factory=list)  # (path, why): not written


def _git(top: Path, *args: str, input: Optional[bytes] = None) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(top), *args], input=input, capture_output=True, check=False)
    except FileNotFoundError:
        raise GitError(f"git is not installed (needed for {'untrusted mode' if 'safe.directory=*' in args else '--baseline'})") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(message[-1] if message else f"git {args[0]} failed")
    return done.stdout


def toplevel(start: Path) -> Path:
    """The work tree holding ``start``."""
    try:
        out = _git(start, "rev-parse", "--show-toplevel")
    except GitError:
        raise GitError(f"{start} is not inside a git work tree; --baseline compares against a git revision") from None
    return Path(os.fsdecode(out.rstrip(b"\n")))


def tracked_files(start: Path) -> Optional[Tuple[str, frozenset]]:
    """(the real path of the work tree holding ``start``, the real paths of the files git tracks in
    it), or None outside any git work tree. A tracked symbolic link is left out: its target counts
    only if git tracks the target itself (a committed `a.j2 -> .env` reads nothing). A work tree git
    cannot list (git missing, a checkout owned by another user) is a ``GitError``, never "no
    limit". Only the index is read: no hook, filter or fsmonitor of the repository runs."""
    start = Path(os.path.realpath(start))
    if not any((d / ".git").exists() for d in [start, *start.parents]):
        return None
    safe = ("-c", "safe.directory=*", "-c", "core.fsmonitor=false")  # CI checkouts are often owned by another uid
    try:
        top = os.path.realpath(os.fsdecode(_git(start, *safe, "rev-parse", "--show-toplevel").rstrip(b"\n")))
        listing = _git(Path(top), *safe, "ls-files", "-s", "-z", "--full-name")
    except GitError as e:
        raise GitError(f"untrusted mode reads only the files git tracks, and git cannot list them here: {e}") from None
    files = set()
    for record in listing.split(b"\0"):
        meta, _, raw_path = record.partition(b"\t")
        if not raw_path or meta.split()[:1] in ([b"120000"], [b"160000"]):  # links, submodules
            continue
        files.add(os.path.join(top, *os.fsdecode(raw_path).split("/")))
    return top, frozenset(files)


def resolve(top: Path, ref: str) -> str:
    """The commit ``ref`` names; ``auto``: the merge-base of HEAD and origin/HEAD."""
    if ref == "auto":
        try:
            upstream = _git(top, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/HEAD^{commit}").decode().strip()
        except GitError:
            raise GitError(
                "--baseline auto needs origin/HEAD (run `git remote set-head origin --auto`), or name a revision"
            ) from None
        try:
            return _git(top, "merge-base", "HEAD", upstream).decode().strip()
        except GitError:
            raise GitError("--baseline auto: HEAD and origin/HEAD have no common ancestor; name a revision") from None
    if ref.startswith("-"):
        raise GitError(f"--baseline {ref}: not a revision")
    try:
        return _git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").decode().strip()
    except GitError:
        raise GitError(
            f"--baseline {ref}: no such commit in this repository (in CI, fetch it: actions/checkout with fetch-depth: 0)"
        ) from None


def _entries(top: Path, commit: str, prefix: str):
    """(mode, oid, size or None, path) of every entry under ``prefix`` at ``commit``."""
    args = ["ls-tree", "-r", "-l", "-z", "--full-tree", commit]
    if prefix:
        args += ["--", prefix]
    for record in _git(top, *args).split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        parts = meta.split()
        if len(parts) != 4:
            continue
        mode, _kind, oid, size = (p.decode("ascii", "replace") for p in parts)
        yield mode, oid, (int(size) if size.isdigit() else None), os.fsdecode(raw_path)


def _safe_relative(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") and p.lower() != ".git" for p in parts)


def _link_stays_inside(path: str, target: str) -> bool:
    if not target or target.startswith("/") or "\0" in target:
        return False
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return not (joined == ".." or joined.startswith("../"))


def export(top: Path, commit: str, dest: Path, prefix: str = "",
           keep: Optional[Callable[[str, int], Optional[str]]] = None) -> Exported:
    """Write the files under ``prefix`` (a POSIX path relative to ``top``) at ``commit`` into ``dest``;
    ``keep(path, size)``: why a file is not wanted (None: it is), asked before its blob is read."""
    out = Exported(commit)
    wanted: List[Tuple[str, str, str]] = []  # (mode, oid, path)
    total = 0
    for mode, oid, size, path in _entries(top, commit, prefix):
        if not _safe_relative(path):
            out.skipped.append((path, "unsafe path"))
        elif mode == "160000":
            out.skipped.append((path, "submodule"))
        elif mode == "120000":
            wanted.append((mode, oid, path))
        elif mode not in ("100644", "100755"):
            out.skipped.append((path, f"mode {mode}"))
        elif size is None or size > MAX_BLOB_BYTES:
            out.skipped.append((path, "larger than any file promptlint reads"))
        elif keep is not None and (unwanted := keep(path, size)) is not None:
            out.skipped.append((path, unwanted))
        else:
            total += size
            if total > MAX_TOTAL_BYTES:
                raise GitError(f"{commit[:12]}: more than {MAX_TOTAL_BYTES >> 30} GiB under {prefix or 'the root'}; "
                               "lint a smaller project root")
            wanted.append((mode, oid, path))
    if not wanted:
        return out
    blobs = _cat_blobs(top, [oid for _, oid, _ in wanted])
    for (mode, oid, path), data in zip(wanted, blobs):
        if data is None:
            out.skipped.append((path, "unreadable object"))
            continue
        try:
            _write(dest, path, mode, data, out)
        except safe_write.WriteRefused:
            out.skipped.append((path, "below a symlink"))
        except OSError as e:  # a path twice, a file where a directory is: a malformed tree
            out.skipped.append((path, e.strerror or str(e)))
    _drop_escaping_links(dest, [p for m, _, p in wanted if m == "120000"], out)
    return out


def _drop_escaping_links(dest: Path, links: List[str], out: Exported) -> None:
    """Remove the symlinks whose real target leaves ``dest``: a lexically inside target can still
    leave it through another link (``d/e -> ../..``, ``d/l -> e/../x``); once every link exists,
    ``realpath`` sees the real resolution. Removing one only makes others dangle, never escape."""
    import stat

    base = os.path.realpath(dest)
    for path in links:
        link = dest / path
        # looked up with no link followed on the way: a name below another link (a crafted tree
        # with `a/b` both a link and a directory) was never written there
        st = safe_write.lstat(link, anchor=dest)
        if st is not None and stat.S_ISLNK(st.st_mode) and os.path.commonpath([base, os.path.realpath(link)]) != base:
            safe_write.remove(link, anchor=dest, kinds=("link",))
            out.skipped.append((path, "symlink leading outside the tree"))


def _write(dest: Path, path: str, mode: str, data: bytes, out: Exported) -> None:
    """One entry, through promptlint.doors.safe_write anchored at ``dest``: no directory on the way is
    a link (``WriteRefused``), the file is new (O_EXCL, O_NOFOLLOW)."""
    if mode == "120000":
        link = data[:MAX_LINK_BYTES].decode("utf-8", "replace")
        if len(data) > MAX_LINK_BYTES or not _link_stays_inside(path, link):
            out.skipped.append((path, "symlink leading outside the tree"))
            return
        safe_write.symlink(link, dest / path, anchor=dest)
        return
    safe_write.create(dest / path, data, anchor=dest)
    out.files += 1


def _cat_blobs(top: Path, oids: List[str]) -> Iterator[Optional[bytes]]:
    """The content of each blob, in order (None for a missing or non-blob object), one at a time
    (written before the next is read: never the whole tree in memory); each object's size is read
    from its header and bounded before its bytes are read."""
    proc = subprocess.Popen(["git", "-C", str(top), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for oid in oids:
            proc.stdin.write(oid.encode("ascii") + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline(256).split()
            if len(header) != 3 or not header[2].isdigit():
                yield None  # "<oid> missing"
                continue
            size = int(header[2])
            if size > MAX_BLOB_BYTES:
                raise GitError(f"object {oid[:12]} is larger than git ls-tree said; the repository is inconsistent")
            data = proc.stdout.read(size)
            proc.stdout.read(1)  # the newline after each object
            yield data if header[1] == b"blob" and len(data) == size else None
    finally:
        if proc.stdin:
            proc.stdin.close()
        if proc.stdout:
            proc.stdout.close()
        proc.wait()
