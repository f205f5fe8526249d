"""``Workspace``: the one owner of what a run holds, and the one way to check.

A Workspace owns the ``Settings``, the tokenizer pool (promptlint.pools.tokenizers: every parsed
tokenizer, engine encoder and special-token copy, with the pool's release policy and memory
budget), the renders the models' runs share, and the run's options (cache, evidence, workers).
``check(targets, buffers)`` plans the run -- one tokenizer, or one run per configured model
(promptlint.driver.models) merged, plus a baseline when asked (promptlint.driver.baseline) -- executes it and
returns the ``LintResult``. Callers never choose between those paths.

The `check` command makes one per command (transient: a tokenizer goes when no remaining file
needs it). The daemon and the language server keep one alive (``resident=True``): its pool keeps
what it parsed for the next request within the budget, and it analyses in its own process (its
warmth is the point). While a check runs the Workspace installs its pool and always restores the
one before, so nothing below the driver keeps a tokenizer in a module global.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from promptlint.project.config import Settings
from promptlint.driver.lint import LintResult, Request, empty_result, execute, finish, plan_run
from promptlint.pools.tokenizers import TokenizerPool, installed
from promptlint.tokenization.tokens import TokenizerError


class Workspace:
    def __init__(self, settings: Settings, *, resident: bool = False, use_cache: bool = True, evidence: bool = False,
                 jobs: Optional[int] = None, pool: Optional[TokenizerPool] = None):
        self.settings = settings
        self.resident = resident
        self.use_cache, self.evidence = use_cache, evidence
        self.jobs = None if resident else jobs  # a resident process analyses where its tokenizers are
        self.pool = pool if pool is not None else TokenizerPool(resident=resident)
        from promptlint.doors import bounded_io

        self.read_policy = bounded_io.current_policy()  # untrusted mode's, when the command set one before making it

    def with_settings(self, settings: Settings, **options) -> "Workspace":
        """The same pool (what a resident process keeps) under another request's settings and options
        (``use_cache``, ``evidence``, ``jobs``)."""
        kept = dict(use_cache=self.use_cache, evidence=self.evidence, jobs=self.jobs)
        kept.update(options)
        return Workspace(settings, resident=self.resident, pool=self.pool, **kept)._keeping(self)

    def _keeping(self, other: "Workspace") -> "Workspace":
        if self.read_policy is None:
            self.read_policy = other.read_policy
        return self

    def installed(self) -> "_Installed":
        """``with ws.installed():`` what runs inside (a check, a fix's re-check, `--show-inferred`)
        uses this workspace's tokenizer pool and read policy; the ones before are restored after."""
        return _Installed(self)

    def check(self, targets: Sequence[str] = (), buffers: Optional[Mapping[str, str]] = None, *, force_exclude: bool = False,
              progress: Optional[Callable[[int, int], None]] = None, baseline: Optional[str] = None) -> LintResult:
        """Check ``targets`` (or the configured templates); ``buffers`` maps a path to its text (an
        editor buffer, stdin: linted as that file, no discovery when there are no targets; an empty
        mapping checks nothing). ``baseline``: a git revision to measure against (result.baseline)."""
        if buffers is not None and not buffers and not targets:
            return empty_result(self.settings)  # an excluded --stdin-filename: nothing to lint
        request = Request(list(targets), dict(buffers) if buffers else None, force_exclude, self.use_cache, self.evidence,
                          self.jobs, progress)
        with self.installed():
            result = self._models(request) if self.settings.tokenizers else self._one(request, self.settings, None)
            if baseline:
                result.baseline = self.baseline(baseline, targets, result, force_exclude=force_exclude)
        return result

    def baseline(self, ref: str, targets: Sequence[str], result: LintResult, *, force_exclude: bool = False):
        """``check --baseline REF``: REF's tree linted and measured beside this one (promptlint.driver.baseline);
        raises GitError or TokenizerError."""
        from promptlint.driver.baseline import compare_with

        with self.installed():
            return compare_with(ref, list(targets), self.settings, result, force_exclude=force_exclude, jobs=self.jobs)

    def _one(self, request: Request, settings: Settings, shared: Optional[Dict[object, object]]) -> LintResult:
        plan = plan_run(request, settings, shared)
        execute(plan)
        return finish(plan)

    def _models(self, request: Request) -> LintResult:
        """One run per configured model, merged (promptlint.driver.models); the renders every model's run
        needs are made once (``shared``); each model's tokenizer goes to the pool's policy after its run."""
        from promptlint.driver.models import merge, model_settings

        runs: List[Tuple[str, LintResult]] = []
        models = model_settings(self.settings)
        progress = request.progress
        shared: dict = {}
        for i, (name, model) in enumerate(models):
            told = None
            if progress is not None:  # one bar over every model's run
                def told(done, total, i=i):
                    progress(i * total + done, total * len(models))
            try:
                result = self._one(dataclasses.replace(request, progress=told), model, shared)
            except TokenizerError as e:
                raise TokenizerError(f"tokenizers.{name}: {e}") from None
            runs.append((name, result))
            if result.tokenizer_sha256 and not result.tokenizer_sha256.startswith("embedded:"):
                self.pool.release(result.tokenizer_sha256)  # the next model's run needs its own tokenizer only
        return merge(runs)


class _Installed:
    def __init__(self, ws: Workspace):
        from promptlint.doors import bounded_io

        self.contexts = [installed(ws.pool), bounded_io.policy_installed(ws.read_policy)]

    def __enter__(self):
        for c in self.contexts:
            c.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        for c in reversed(self.contexts):
            c.__exit__(*exc)
        return False
