"""`check --baseline REF`: the working tree against a git revision, prompt by prompt.

REF's files under the project root are exported from git objects into a temporary directory
(``git_tree``: never a checkout over the user's tree), linted there with the working tree's
settings and tokenizer (no result cache: the directory is gone afterwards), and every file is
measured in both trees by its analyzer's ``measure`` (every template, chat template scenario and
prompt a Python module sends: eligible blocks per request). The result pairs the measurements
(``measurements.compare``) and marks each current finding "existing" or "new".
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import posixpath
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
from promptlint.driver.models import merge, model_settings
from promptlint.base.paths import not_read, relative
from promptlint.tokenization.tokens import BudgetExceeded, PromptNotText, TokenizerCrashed, TokenizerError, TokenizerUnvetted, budget

FAIL_ON = ("regression", "new-finding", "any")


def measure_tree(paths: Sequence[str], settings: Settings, force_exclude: bool, provider, shared=None) -> List[Measurement]:
    """Every measurable file's measurements; paths relative to ``settings.root``; ``shared``: what
    several models' measurements share (kernel.Context.shared)."""
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
            if os.environ.get("PROMPTLINT_DEBUG"):
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
    for raw in paths or ["."]:
        absolute = os.path.abspath(raw)
        if os.path.commonpath([root, absolute]) == root:
            out.append(os.path.normpath(str(tree_root / os.path.relpath(absolute, root))))
    return out or None


def compare_with(ref: str, paths: Sequence[str], settings: Settings, result, force_exclude: bool = False,
                 jobs: Optional[int] = None) -> Baseline:
    """The Baseline of the working tree (``result``: its lint result) against ``ref``; marks
    ``result``'s findings. With ``tokenizers``, every model is measured (rows per model) and REF's
    findings are those of every model, merged as in check. Raises git_tree.GitError."""
    from promptlint.arithmetic.compare import engine_profile

    root = Path(settings.root).resolve()
    top = git_tree.toplevel(root)
    commit = git_tree.resolve(top, ref)
    prefix = "" if root == top.resolve() else root.relative_to(top.resolve()).as_posix()
    models: List[Tuple[Optional[str], Settings]] = model_settings(settings) if settings.tokenizers else [(None, settings)]
    with safe_write.temporary_directory("promptlint-baseline-") as tmp:
        exported = git_tree.export(top, commit, tmp, prefix, keep=readable_by_lint)
        tree_root = tmp / prefix if prefix else tmp
        if prefix:
            try:
                safe_write.make_dirs(tree_root, anchor=tmp)
            except OSError as e:  # REF has a link, or a file, where the project root is
                raise git_tree.GitError(f"{commit[:12]}: {e}") from None
        old_paths = _baseline_paths(paths, settings, tree_root.resolve())
        before, after, old_runs = [], [], []
        # several models share each tree's renders (an application template sees no tokenizer)
        shared_now, shared_then, shared_lint = ({}, {}, {}) if settings.tokenizers else (None, None, None)
        for name, model in models:
            try:
                old_run, measured = _measure_model(paths, old_paths, model, tree_root.resolve(), force_exclude,
                                                   (shared_now, shared_then, shared_lint), jobs)
            except TokenizerError as e:
                raise TokenizerError(f"tokenizers.{name}: {e}" if name else str(e)) from None
            for m in measured[0] + measured[1]:
                m.model = name
            after += measured[0]
            before += measured[1]
            if old_run is not None:
                old_runs.append((name, old_run))
        old_findings, old_root = [], tree_root.resolve()
        if old_runs:
            old = merge(old_runs) if settings.tokenizers else old_runs[0][1]
            old_findings = [f for f in old.findings + old.errors if f.code != "E005" or "no such file" not in f.message]
        old_rel = [relative(Path(f.path), old_root) for f in old_findings]
    current = result.findings + result.errors
    marks, fixed = mark_findings(current, [relative(Path(f.path), root) for f in current], old_findings, old_rel)
    result.findings = [dataclasses.replace(f, baseline=marks[id(f)]) for f in result.findings]
    result.errors = [dataclasses.replace(f, baseline=marks[id(f)]) for f in result.errors]
    first = models[0][1]
    block = engine_profile(first.engine, first.block_size).block_size
    deltas = compare(before, after, [name for name, _ in models if name])
    price_deltas(settings.cost, deltas)
    described = [{"name": name, "engine": model.engine, "block_size": engine_profile(model.engine, model.block_size).block_size}
                 for name, model in models if name]
    return Baseline(ref, commit, block, deltas, fixed, exported.skipped, described)


def _measure_model(paths, old_paths, settings: Settings, tree_root: Path, force_exclude: bool, shared, jobs=None):
    """One model's (REF's lint result or None, (measurements here, measurements at REF)); its
    tokenizer is loaded once for the three and released after them when other models follow."""
    from promptlint.driver.lint import lint
    from promptlint.tokenization.tokens import release

    shared_now, shared_then, shared_lint = shared
    provider = kernel.TokenizerProvider(kernel.tokenizer_spec(settings))
    after = measure_tree(paths, settings, force_exclude, provider, shared_now)
    before, old = [], None
    if old_paths is not None:
        old_settings = dataclasses.replace(settings, root=tree_root)
        before = measure_tree(old_paths, old_settings, force_exclude, provider, shared_then)
        old = lint(old_paths, old_settings, force_exclude=force_exclude, use_cache=False, shared=shared_lint, jobs=jobs)
    if shared_now is not None and provider.loaded is not None and not provider.loaded.sha256.startswith("embedded:"):
        release(provider.loaded.sha256)  # the next model needs its own tokenizer only
    return old, (after, before)


