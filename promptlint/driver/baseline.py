"""`check --baseline REF`: the working tree against a git revision, prompt by prompt.

The baseline is part of the check's plan (promptlint.driver.check_plan): REF's files under the
project root are exported from git objects into a temporary directory when the check is planned
(``export``; ``git_tree``: never a checkout over the user's tree); per model, the working tree and
REF's tree are measured (``measure_tree``: every file by its analyzer's ``measure`` -- every
template, chat template scenario and prompt a Python module sends: eligible blocks per request)
and REF's tree is linted with the same settings (a lint run of the plan, no result cache: the
directory is gone afterwards). At the end ``conclude`` pairs the measurements
(``measurements.compare``) and marks each current finding "existing" or "new".
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from promptlint import analyzers
from promptlint.project import git_tree
from promptlint.analysis import kernel
from promptlint.doors import safe_write
from promptlint.project.config import Settings
from promptlint.arithmetic.cost import price_deltas
from promptlint.project.discovery import discover
from promptlint.base.measurements import Baseline, Measurement, compare, exit_failing, mark_findings  # noqa: F401 - exit_failing re-exported
from promptlint.base.paths import based, not_read, relative
from promptlint.tokenization.tokens import BudgetExceeded, PromptNotText, TokenizerCrashed, TokenizerUnvetted, budget

FAIL_ON = ("regression", "new-finding", "any")


def measure_tree(paths: Sequence[str], settings: Settings, force_exclude: bool, provider, shared=None,
                 debug: bool = False) -> List[Measurement]:
    """Every measurable file's measurements; paths relative to ``settings.root``; ``shared``: what
    several models' measurements share (kernel.Context.shared); ``debug``: a file's internal error raises."""
    files, _ = discover(paths, settings.root, settings.templates, settings.exclude, force_exclude, kinds=analyzers)
    ctx = kernel.Context(settings, provider, kernel.rule_filter(settings), shared=shared)
    out: List[Measurement] = []
    for path in files:
        if not_read(path, settings.root):
            continue
        analyzer = analyzers.analyzer_for(path) or importlib.import_module("promptlint.analyzers.jinja_template")  # as lint does
        measure = analyzer.measure  # every analyzer has one (analyzers.REQUIRED)
        text = "" if path.is_dir() else kernel.read_source(path)
        if not isinstance(text, str):
            out.append(Measurement(relative(path, settings.root), "base", error=f"{text.code} {text.message}"))
            continue
        try:
            with budget(settings.analysis_timeout, settings.max_encoded_tokens):  # as lint analyses it
                found = measure(path, text, ctx)
        except (PromptNotText, TokenizerCrashed, TokenizerUnvetted) as e:  # what it renders, or its directory's tokenizer
            found = [Measurement(relative(path, settings.root), "base", error=f"E002 {e}")]
        except BudgetExceeded as e:
            found = [Measurement(relative(path, settings.root), "base", error=f"E006 {e}")]
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as e:  # noqa: BLE001 - a bug or a native panic on one file costs that file's figure, not the run
            if debug:
                raise
            found = [Measurement(relative(path, settings.root), "base", error=f"E002 internal error ({type(e).__name__})")]
        for m in found:
            m.path = relative(path, settings.root)
        out.extend(found)
    return out


# What no reader of a lint run opens: model weights, archives, media, columnar data, binaries.
_NEVER_READ = frozenset((
    ".safetensors", ".bin", ".gguf", ".ggml", ".pt", ".pth", ".ckpt", ".onnx", ".h5", ".npy", ".npz", ".pkl",
    ".zip", ".gz", ".tgz", ".tar", ".xz", ".zst", ".bz2", ".7z",
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".mp3", ".mp4", ".wav", ".mov",
    ".parquet", ".pq", ".arrow", ".feather", ".db", ".sqlite",
    ".so", ".dylib", ".dll", ".exe", ".pyc", ".o", ".a", ".class", ".jar", ".whl",
))
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")  # read up to the tokenizer cap


def readable_by_lint(path: str, size: int) -> Optional[str]:
    """Why REF's file at ``path`` is not exported (None: it is): only what a lint run can open --
    templates, their includes and samples files, configuration and Python sources up to the
    source cap, a model directory's tokenizer files up to the tokenizer cap -- so a base tree full
    of data or weights costs neither its bytes on disk nor their reading."""
    from promptlint.doors import bounded_io

    name = posixpath.basename(path)
    if posixpath.splitext(name)[1].lower() in _NEVER_READ:
        return "not a file a lint run reads"
    limit = bounded_io.MAX_TOKENIZER_BYTES if name in _TOKENIZER_FILES else bounded_io.MAX_FILE_BYTES
    if size > limit:
        return f"larger than {limit:,} bytes: no reader of it takes it"
    return None


def _baseline_paths(paths: Sequence[str], settings: Settings, tree_root: Path) -> Optional[List[str]]:
    """What to lint in the exported tree: the command line's paths (default: the working
    directory) moved into it; ``[]`` when the configured ``templates`` apply; None when no path
    given lies inside the project root (nothing of it exists at the baseline)."""
    if not paths and settings.templates:
        return []
    root = os.path.abspath(settings.root)
    out = []
    for raw in paths or [str(settings.base)]:  # the front end joined typed paths to the run's base
        absolute = os.path.abspath(os.path.join(settings.base, raw))
        if os.path.commonpath([root, absolute]) == root:
            out.append(os.path.normpath(str(tree_root / os.path.relpath(absolute, root))))
    return out or None


@dataclass
class RefTree:
    """REF's files under the project root, exported for a check's baseline (the part of the check's
    plan that exists before any of its steps runs; promptlint.driver.check_plan)."""

    ref: str
    commit: str
    root: Path  # the working tree's project root, resolved
    tree_root: Path  # the same directory in the export
    skipped: object  # what the export left out (git_tree.Exported.skipped)
    paths: Optional[List[str]]  # what to lint and measure there; None: no path given lies in the project


def export(ref: str, paths: Sequence[str], settings: Settings, stack: contextlib.ExitStack) -> RefTree:
    """Export ``ref``'s tree into a temporary directory that ``stack`` removes. Raises git_tree.GitError."""
    root = Path(settings.root).resolve()
    top = git_tree.toplevel(root)
    commit = git_tree.resolve(top, ref)
    prefix = "" if root == top.resolve() else root.relative_to(top.resolve()).as_posix()
    tmp = stack.enter_context(safe_write.temporary_directory("promptlint-baseline-"))
    exported = git_tree.export(top, commit, tmp, prefix, keep=readable_by_lint)
    tree_root = tmp / prefix if prefix else tmp
    if prefix:
        try:
            safe_write.make_dirs(tree_root, anchor=tmp)
        except OSError as e:  # REF has a link, or a file, where the project root is
            raise git_tree.GitError(f"{commit[:12]}: {e}") from None
    tree_root = tree_root.resolve()
    return RefTree(ref, commit, root, tree_root, exported.skipped, _baseline_paths(paths, settings, tree_root))


def conclude(tree: RefTree, settings: Settings, models: Sequence[Tuple[Optional[str], Settings]], result,
             after: List[Measurement], before: List[Measurement], old) -> object:
    """The check's Result with its Baseline: the measurements paired, each finding marked new or
    existing against REF's (``old``: REF's lint result, merged over the models; None: nothing linted there)."""
    from promptlint.arithmetic.compare import engine_profile

    old_findings = []
    if old is not None:
        old_findings = [f for f in old.findings + old.errors if f.code != "E005" or "no such file" not in f.message]
    # findings name files from the run's directory (settings.base), the caller's
    old_rel = [relative(based(f.path, settings.base), tree.tree_root) for f in old_findings]
    current = result.findings + result.errors
    marks, fixed = mark_findings(current, [relative(based(f.path, settings.base), tree.root) for f in current], old_findings, old_rel)
    first = models[0][1]
    block = engine_profile(first.engine, first.block_size).block_size
    deltas = compare(before, after, [name for name, _ in models if name])
    price_deltas(settings.cost, deltas)
    described = [{"name": name, "engine": model.engine, "block_size": engine_profile(model.engine, model.block_size).block_size}
                 for name, model in models if name]
    return dataclasses.replace(
        result, findings=[dataclasses.replace(f, baseline=marks[id(f)]) for f in result.findings],
        errors=[dataclasses.replace(f, baseline=marks[id(f)]) for f in result.errors],
        baseline=Baseline(tree.ref, tree.commit, block, deltas, fixed, tree.skipped, described))


