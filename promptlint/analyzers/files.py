"""How an analyzer declares the files it handles (what a directory walk takes for it).

A declaration names files by suffix, exact name or name pattern, and may ask for a cheap
byte prefilter: a walk takes the file only when its first bytes contain one of ``markers``
(explicit paths are always linted). A directory an analyzer lints as one target (a model
directory) is an ``OwnedDirectory``: the walk yields the directory and skips the files and
subdirectories it owns.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import FrozenSet, Tuple

from promptlint.doors import bounded_io


@dataclass(frozen=True)
class Files:
    """The files an analyzer handles: by suffix, name or pattern, with an optional byte prefilter."""

    suffixes: Tuple[str, ...] = ()
    names: Tuple[str, ...] = ()
    name_patterns: Tuple[str, ...] = ()  # fnmatch, case-sensitive: "Dockerfile.*"
    markers: Tuple[bytes, ...] = ()  # the prefilter; empty: every file with a matching name
    sniff_bytes: int = bounded_io.MAX_FILE_BYTES  # how much of the file the prefilter reads
    take_unsniffable: bool = True  # a walk takes a file it cannot read (lint then reports why)
    never_infix: str = ""  # names containing this are never taken (".samples.": sidecar inputs)
    never_patterns: Tuple[str, ...] = ()  # names a walk never takes ("*.min.js": bundles)
    never_dirs: Tuple[str, ...] = ()  # a walk never takes a file under a directory of this name ("dist")

    def matches_name(self, path: Path) -> bool:
        name = path.name
        if self.never_infix and self.never_infix in name:
            return False
        return (
            path.suffix in self.suffixes
            or name in self.names
            or any(fnmatch.fnmatchcase(name, p) for p in self.name_patterns)
        )

    def walk_takes(self, path: Path) -> bool:
        """Whether a directory walk lints this file (its name matches and its bytes pass the prefilter)."""
        if not self.matches_name(path):
            return False
        if any(fnmatch.fnmatchcase(path.name, p) for p in self.never_patterns):
            return False
        if self.never_dirs and any(part in self.never_dirs for part in path.parts[:-1]):
            return False
        if not self.markers:
            return True
        if not bounded_io.is_regular_file(path):
            return self.take_unsniffable
        head = bounded_io.read_prefix(path, self.sniff_bytes)
        return any(m in head for m in self.markers)


@dataclass(frozen=True)
class OwnedDirectory:
    """A directory linted as one target: it holds all of ``required``; the walk skips what it owns."""

    required: Tuple[str, ...]
    files: FrozenSet[str] = frozenset()
    subdirs: FrozenSet[str] = frozenset()

    def owns(self, directory: Path) -> bool:
        return bounded_io.is_directory(directory) and all(bounded_io.is_regular_file(directory / name) for name in self.required)
