"""Which files to lint: expand paths and directories, apply include/exclude globs."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Iterable, List, Sequence, Tuple

from promptlint import bounded_io

TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2", ".prompt")
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", ".promptlint_cache"}


CHAT_CONFIG = "tokenizer_config.json"
# a model directory's chat-template files: linted once, as the directory
MODEL_DIR_FILES = {CHAT_CONFIG, "chat_template.jinja"}


def is_model_dir(path: Path) -> bool:
    """A Hugging Face model directory: tokenizer.json + tokenizer_config.json."""
    return path.is_dir() and (path / "tokenizer.json").is_file() and (path / CHAT_CONFIG).is_file()


def is_template(path: Path) -> bool:
    name = path.name
    if ".samples." in name:
        return False
    if name == CHAT_CONFIG:
        return _has_chat_template(path)
    if path.suffix in TEMPLATE_SUFFIXES:
        return True
    return is_model_dir(path)


def _has_chat_template(path: Path) -> bool:
    return b'"chat_template"' in bounded_io.read_prefix(path, bounded_io.MAX_FILE_BYTES)


def _matches(rel: str, globs: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    for g in globs:
        g = g.rstrip("/")
        if fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(name, g) or rel.startswith(g + "/"):
            return True
        if g.startswith("**/") and fnmatch.fnmatch(rel, g[3:]):
            return True
    return False


def safe_resolve(path: Path) -> Path:
    """``path.resolve()``, or its absolute form when a symlink loop makes resolving fail."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # RuntimeError: "Symlink loop" before Python 3.13
        return Path(os.path.abspath(path))


_BASES: dict = {}


def _resolved_base(path: Path) -> Path:
    """``safe_resolve`` of a base directory (project root, working directory), memoised by its
    spelling and the directory's identity: relative() and display_path() run per file and per finding."""
    try:
        st = os.stat(path)
        key = (os.fspath(path), os.getcwd(), st.st_dev, st.st_ino)
    except OSError:
        return safe_resolve(Path(path))
    if key not in _BASES:
        if len(_BASES) > 64:
            _BASES.clear()
        _BASES[key] = safe_resolve(Path(path))
    return _BASES[key]


def relative(path: Path, root: Path) -> str:
    try:
        return safe_resolve(path).relative_to(_resolved_base(root)).as_posix()
    except ValueError:
        return path.as_posix()


def discover(
    paths: Sequence[str], root: Path, templates: Sequence[str], exclude: Sequence[str], force_exclude: bool = False
) -> Tuple[List[Path], List[Tuple[str, str]]]:
    """(files to lint, (path, reason) for paths that cannot be walked or do not exist).

    Explicit files are always taken unless force_exclude."""
    files: List[Path] = []
    problems: List[Tuple[str, str]] = []
    if not paths:
        if templates:
            for pattern in templates:
                files.extend(sorted(p for p in root.glob(pattern) if p.is_file()))
            files = [f for f in files if not _matches(relative(f, root), exclude)]
            return _unique(files), problems
        paths = ["."]
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for f in _walk(p, problems):
                if (is_template(f) or _walk_includes(f)) and not _matches(relative(f, root), exclude):
                    files.append(f)
        elif p.exists() or p.is_symlink():  # devices and FIFOs too: the reader refuses them by name
            if force_exclude and _matches(relative(p, root), exclude):
                continue
            files.append(p)
        else:
            problems.append((raw, f"no such file or directory: {raw}"))
    return _unique(files), problems


def escapes_root(path: Path, root: Path) -> bool:
    """A path inside the project root whose real path is outside it: a symlink (to a file, or a
    directory on the way) that a pull request can point at /proc/self/environ or /etc. Paths the
    user names outside the root are theirs and are not judged here."""
    base = _resolved_base(root)
    lexical = Path(os.path.abspath(path))
    try:
        lexical.relative_to(Path(os.path.abspath(root)))
    except ValueError:
        try:
            lexical.relative_to(base)
        except ValueError:
            return False
    try:
        safe_resolve(path).relative_to(base)
        return False
    except ValueError:
        return True


def _walk_includes(path: Path) -> bool:
    """Non-template files a directory walk lints: Python that talks to an LLM or builds chat
    messages, and launch configs that mention prefix caching (a byte-level prefilter;
    explicit paths are always linted). See docs/python.md."""
    if path.suffix in (".py", ".pyi"):
        from promptlint.analyzers.python_source import looks_like_prompt_code

        return looks_like_prompt_code(path)
    from promptlint.analyzers import launch_config

    return launch_config.handles(path) and launch_config.mentions_flags(path)


def _walk(directory: Path, problems: List[Tuple[str, str]]) -> Iterable[Path]:
    def unreadable(e: OSError) -> None:  # else os.walk skips the directory silently
        problems.append((str(e.filename or directory), f"cannot read the directory: {e.strerror or e}; fix its permissions or exclude it"))

    for dirpath, dirnames, filenames in os.walk(directory, onerror=unreadable, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        model_dir = is_model_dir(Path(dirpath))
        if model_dir:  # the directory is the target; its chat-template files are not linted separately
            yield Path(dirpath)
            dirnames[:] = [d for d in dirnames if d != "chat_templates"]
        for name in sorted(filenames):
            if model_dir and name in MODEL_DIR_FILES:
                continue
            yield Path(dirpath) / name


def _unique(files: List[Path]) -> List[Path]:
    seen = set()
    out = []
    for f in files:
        key = os.path.normcase(os.path.abspath(f))
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def is_excluded(path: Path, root: Path, exclude: Sequence[str]) -> bool:
    """Whether the configured ``exclude`` globs match ``path`` (what --force-exclude applies)."""
    return _matches(relative(path, root), exclude)


def display_path(path: Path) -> str:
    """How findings name a file: relative to the working directory when it is inside it."""
    try:
        return str(safe_resolve(Path(path)).relative_to(_resolved_base(Path.cwd())))
    except ValueError:
        return str(path)
