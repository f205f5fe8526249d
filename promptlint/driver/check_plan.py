"""A check as one plan: its steps, which tokenizers each loads, and when each tokenizer goes.

``plan`` lays out every step before any runs. Per model (the configured tokenizer, or each of
`tokenizers` in the file's order): the lint run of the working tree (promptlint.driver.lint:
plan_run), and with ``--baseline REF`` the working tree's measurements, REF's measurements and
REF's lint run (promptlint.driver.baseline; REF's files are exported when the check is planned).
A model's steps follow each other, so its tokenizer is parsed once for all of them.

The plan knows which tokenizers each unit of work loads -- a lint run's group of files (a model
directory's tokenizer, or the run's own), a tree's measurements -- and gives each unit the ones
the next unit does not load (``lint.releases_after``): they are let go when it ends
(``lint.let_go``, the one place a tokenizer is released), so a check holds one model's or one
directory's tokenizer at a time. A check of one model keeps its own for what follows (a fix's
re-check).

``execute`` runs the steps in order; ``finish`` builds the Result once: each run's, the models'
merged (promptlint.driver.models), the baseline compared and the findings marked.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from promptlint.analysis import kernel
from promptlint.driver import lint
from promptlint.project.config import Settings
from promptlint.tokenization.tokens import TokenizerError


@dataclass
class Measure:
    """One tree measured with one model's settings (baseline.measure_tree): a step of the plan."""

    paths: Sequence[str]
    settings: Settings
    force_exclude: bool
    shared: Optional[dict]
    model: Optional[str]
    debug: bool
    uses: Tuple[str, ...] = ()  # the tokenizers it loads: the model's, and the model directories' it measures
    releases: Tuple[str, ...] = ()
    out: list = field(default_factory=list)

    def run(self) -> None:
        from promptlint.driver.baseline import measure_tree

        provider = kernel.TokenizerProvider(kernel.tokenizer_spec(self.settings))
        self.out = measure_tree(self.paths, self.settings, self.force_exclude, provider, self.shared, self.debug)
        for m in self.out:
            m.model = self.model


@dataclass
class Model:
    """One model's steps: the working tree's run, and the baseline's measurements and REF's run."""

    name: Optional[str]  # None: the one configured tokenizer
    settings: Settings
    now: lint.Plan
    measure_now: Optional[Measure] = None
    measure_then: Optional[Measure] = None
    ref: Optional[lint.Plan] = None

    def steps(self) -> list:
        return [s for s in (self.now, self.measure_now, self.measure_then, self.ref) if s is not None]


@dataclass
class CheckPlan:
    """A check as one plan: per model its lint run, and the baseline's tree when there is one."""

    models: List[Model]
    several: bool  # `tokenizers`: the results are merged, each model's tokenizer goes after its steps
    ref_tree: Optional[object] = None  # baseline.RefTree
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)  # the export's temporary directory

    def close(self) -> None:
        self.stack.close()


def plan(request: lint.Request, settings: Settings, baseline: Optional[str]) -> CheckPlan:
    """Every step of the check, before any runs; raises TokenizerError (a model's tokenizer cannot be
    used) and, with a baseline, git_tree.GitError. The caller closes the plan (``close``)."""
    from promptlint.driver.models import model_settings

    several = bool(settings.tokenizers)
    models: List[Tuple[Optional[str], Settings]] = model_settings(settings) if several else [(None, settings)]
    shared: Dict[str, Optional[dict]] = {k: ({} if several else None) for k in ("now", "measure_now", "measure_then", "ref")}
    out = CheckPlan([], several)
    try:
        for i, (name, model) in enumerate(models):
            with _named(name):
                out.models.append(Model(name, model, lint.plan_run(_told(request, i, len(models)), model, shared["now"])))
        if baseline:
            _plan_baseline(out, request, baseline, shared)
        _plan_releases(out)
    except BaseException:
        out.close()
        raise
    return out


def _plan_baseline(out: CheckPlan, request: lint.Request, ref: str, shared) -> None:
    from promptlint.driver import baseline

    out.ref_tree = tree = baseline.export(ref, request.paths, out.models[0].settings, out.stack)
    for m in out.models:
        m.measure_now = Measure(request.paths, m.settings, request.force_exclude, shared["measure_now"], m.name, request.debug)
        if tree.paths is None:
            continue
        old = dataclasses.replace(m.settings, root=tree.tree_root)
        m.measure_then = Measure(tree.paths, old, request.force_exclude, shared["measure_then"], m.name, request.debug)
        with _named(m.name):
            ref_request = lint.Request(tree.paths, None, request.force_exclude, False, False, request.jobs, None, request.debug)
            m.ref = lint.plan_run(ref_request, old, shared["ref"])


def _plan_releases(out: CheckPlan) -> None:
    """Per unit of work, in the order the steps run, what it loads; then what each lets go."""
    units: List[Tuple[Tuple[str, ...], Callable[[Tuple[str, ...]], None]]] = []
    for m in out.models:
        for step in m.steps():
            if isinstance(step, Measure):
                step.uses = _measure_uses(step, m)
                units.append((step.uses, lambda shas, step=step: setattr(step, "releases", shas)))
                continue
            step.releases = {}
            for key in step.groups():
                units.append((step.uses(key), lambda shas, step=step, key=key: step.releases.__setitem__(key, shas)))
    keep = () if out.several else out.models[0].now.uses(None)  # one model: its tokenizer stays for what follows
    for (_, assign), shas in zip(units, lint.releases_after([uses for uses, _ in units], keep)):
        assign(shas)


def _measure_uses(step: Measure, model: Model) -> Tuple[str, ...]:
    """What a tree's measurements load: the model's tokenizer, and each model directory's of the
    tree (the lint run of the same tree grouped its files by them)."""
    run = model.now if step is model.measure_now else model.ref
    own = model.now.uses(None)
    dirs = () if run is None or run.order.keys is None else tuple(k for k in run.order.keys if k is not None)
    return tuple(dict.fromkeys(own + dirs))


def execute(check: CheckPlan) -> None:
    """Run the steps in order; each lets go what the plan says no later step needs."""
    for m in check.models:
        with _named(m.name):
            for step in m.steps():
                if isinstance(step, Measure):
                    step.run()
                    left = step.releases
                else:
                    lint.execute(step)
                    left = tuple(sha for shas in step.releases.values() for sha in shas)  # groups not run here
                    step.releases = {}
                lint.let_go(left)


def finish(check: CheckPlan):
    """The check's Result, built once: each run finished, the models merged, the baseline concluded."""
    from promptlint.driver.models import merge

    now = [(m.name, lint.finish(m.now)) for m in check.models]
    result = merge(now) if check.several else now[0][1]
    if check.ref_tree is None:
        return result
    from promptlint.driver import baseline

    refs = [(m.name, lint.finish(m.ref)) for m in check.models if m.ref is not None]
    old = (merge(refs) if check.several else refs[0][1]) if refs else None
    after = [x for m in check.models for x in m.measure_now.out]
    before = [x for m in check.models if m.measure_then is not None for x in m.measure_then.out]
    pairs = [(m.name, m.settings) for m in check.models]
    return baseline.conclude(check.ref_tree, check.models[0].settings, pairs, result, after, before, old)


def _told(request: lint.Request, i: int, n: int) -> lint.Request:
    """The request of model ``i`` of ``n``: one progress bar over every model's run."""
    progress = request.progress
    if progress is None or n == 1:
        return request

    def told(done, total):
        progress(i * total + done, total * n)

    return dataclasses.replace(request, progress=told)


@contextlib.contextmanager
def _named(name: Optional[str]):
    """A model's tokenizer that cannot be used is named by its entry (`tokenizers.NAME: ...`)."""
    try:
        yield
    except TokenizerError as e:
        if name is None:
            raise
        raise TokenizerError(f"tokenizers.{name}: {e}") from None
