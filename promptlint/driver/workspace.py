"""``Workspace``: the one owner of what a run holds, and the one way to check.

A Workspace owns the ``Settings``, the tokenizer pool (promptlint.pools.tokenizers: every parsed
tokenizer, engine encoder and special-token copy, with the pool's release policy and memory
budget), the renders the models' runs share, and the run's options (cache, evidence, workers).
``check(targets, buffers)`` plans the check (promptlint.driver.check_plan) -- a lint run with one
tokenizer, or one per configured model (promptlint.driver.models), and with a baseline REF's tree
measured and linted beside it (promptlint.driver.baseline) -- executes it and returns the Result
its finish builds. Callers never choose between those paths.

The `check` command makes one per command (transient: a tokenizer goes when no remaining file
needs it). The daemon and the language server keep one alive (``resident=True``): its pool keeps
what it parsed for the next request within the budget, and it analyses in its own process (its
warmth is the point). While a check runs the Workspace installs its pool and always restores the
one before, so nothing below the driver keeps a tokenizer in a module global.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

from promptlint.project.config import Settings
from promptlint.driver.lint import LintResult, Request, empty_result
from promptlint.pools.tokenizers import TokenizerPool, installed


class Workspace:
    def __init__(self, settings: Settings, *, resident: bool = False, use_cache: bool = True, evidence: bool = False,
                 jobs: Optional[int] = None, pool: Optional[TokenizerPool] = None, debug: bool = False,
                 full_encode: bool = False):
        self.settings = settings
        self.resident = resident
        self.use_cache, self.evidence = use_cache, evidence
        # what the front end read from its environment (never read during a run): PROMPTLINT_DEBUG (a file's
        # internal error raises), PROMPTLINT_FULL_ENCODE (every variant encoded whole, not in a window)
        self.debug, self.full_encode = debug, full_encode
        self.jobs = None if resident else jobs  # a resident process analyses where its tokenizers are
        self.pool = pool if pool is not None else TokenizerPool(resident=resident)
        # a resident one keeps, between requests, what an unchanged file would cost again (promptlint.driver.resident)
        self.memo = None
        if resident:
            from promptlint.driver.resident import ResidentMemo

            self.memo = ResidentMemo()
        from promptlint.doors import bounded_io

        self.read_policy = bounded_io.current_policy()  # untrusted mode's, when the command set one before making it

    def with_settings(self, settings: Settings, **options) -> "Workspace":
        """The same pool (what a resident process keeps) under another request's settings and options
        (``use_cache``, ``evidence``, ``jobs``, ``debug``, ``full_encode``)."""
        kept = dict(use_cache=self.use_cache, evidence=self.evidence, jobs=self.jobs, debug=self.debug,
                    full_encode=self.full_encode)
        kept.update(options)
        return Workspace(settings, resident=self.resident, pool=self.pool, **kept)._keeping(self)

    def _keeping(self, other: "Workspace") -> "Workspace":
        if self.read_policy is None:
            self.read_policy = other.read_policy
        if other.memo is not None:
            self.memo = other.memo
        return self

    def installed(self) -> "_Installed":
        """``with ws.installed():`` what runs inside (a check, a fix's re-check, `--show-inferred`)
        uses this workspace's tokenizer pool and read policy; the ones before are restored after."""
        return _Installed(self)

    def check(self, targets: Sequence[str] = (), buffers: Optional[Mapping[str, str]] = None, *, force_exclude: bool = False,
              progress: Optional[Callable[[int, int], None]] = None, baseline: Optional[str] = None) -> LintResult:
        """Check ``targets`` (or the configured templates); ``buffers`` maps a path to its text (an
        editor buffer, stdin: linted as that file, no discovery when there are no targets; an empty
        mapping checks nothing). ``baseline``: a git revision to measure against (result.baseline).
        Raises TokenizerError, and with a baseline git_tree.GitError."""
        from promptlint.driver import check_plan

        if buffers is not None and not buffers and not targets:
            return empty_result(self.settings)  # an excluded --stdin-filename: nothing to lint
        if self.memo is not None and self.memo.later:
            self.memo.done_later(release=False)  # a previous request's held writes first, before anything reads them
        request = Request(list(targets), dict(buffers) if buffers else None, force_exclude, self.use_cache, self.evidence,
                          self.jobs, progress, self.debug, self.memo)
        with self.installed():
            plan = check_plan.plan(request, self.settings, baseline)
            try:
                check_plan.execute(plan)
                return check_plan.finish(plan)
            finally:
                plan.close()


class _Installed:
    def __init__(self, ws: Workspace):
        from promptlint.doors import bounded_io

        self.contexts = [installed(ws.pool, windowed=not ws.full_encode), bounded_io.policy_installed(ws.read_policy)]

    def __enter__(self):
        for c in self.contexts:
            c.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        for c in reversed(self.contexts):
            c.__exit__(*exc)
        return False
