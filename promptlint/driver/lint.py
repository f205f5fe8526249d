"""The driver of a check run: discover -> (cache) -> analyzer -> suppressions -> a LintResult.

A run is ``plan_run`` (discover, group the files by tokenizer, answer from the manifest) ->
``execute`` (the files left, here or in workers; its state accumulates in the plan, never in a
result) -> ``finish`` (discovery order, merges, manifest, cache; the one place its ``Result`` is
built). ``lint(paths, settings)`` does the three for one tokenizer; a check of several models or
with a baseline is a plan of several runs (promptlint.driver.check_plan), which says per group of
files which tokenizers no later step needs: ``let_go`` is the one place a tokenizer is released.
What the analyzers stand on (Context, the tokenizer provider, the finding factory) is
``promptlint.analysis.kernel``; which analyzer takes which file is ``promptlint.analyzers``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from promptlint import analyzers
from promptlint.doors import bounded_io
from promptlint.analysis import kernel
from promptlint.base import registry
from promptlint.driver import suppress
from promptlint.project.config import Settings, ignored_for_file
from promptlint.project.discovery import discover
from promptlint.base.paths import RealPaths, based, not_read, relative, typed
from promptlint.base.records import Finding, Result, SourceLine, finding_from_dict


LintResult = Result  # the run's record (promptlint.base.records): what every reporter formats


def empty_result(settings: Settings) -> LintResult:
    """A result for a run that lints nothing (an excluded --stdin-filename)."""
    state = _state(settings)
    return LintResult(tokenizer=state.spec, engine=state.engine, block_size=state.block_size)


def _state(settings: Settings) -> "_RunState":
    from promptlint.arithmetic.compare import engine_profile

    # resolving the tokenizer raises TokenizerError before any work
    return _RunState(kernel.tokenizer_spec(settings), settings.engine,
                     engine_profile(settings.engine, settings.block_size).block_size)


@dataclass
class Request:
    """What one check asks for: the targets, editor buffers (or stdin) and how to treat the cache."""

    paths: Sequence[str] = ()
    overrides: Optional[Dict[str, str]] = None  # path -> its text (an editor buffer, stdin): no discovery for these
    force_exclude: bool = False
    use_cache: bool = True
    evidence: bool = False
    jobs: Optional[int] = None  # worker processes (promptlint.driver.parallel); None or 1: this process
    progress: Optional[Callable[[int, int], None]] = None  # told (done, total) after each file
    debug: bool = False  # PROMPTLINT_DEBUG, read by the front end: a file's internal error raises instead of an E002
    memo: Optional[object] = None  # a resident Workspace's ResidentMemo (promptlint.driver.resident), else None


@dataclass
class _RunState:
    """What a run accumulates before its Result is built (``finish``): no reporter sees it."""

    spec: object  # the tokenizer spec (kernel.tokenizer_spec), resolved before any work
    engine: str
    block_size: int
    files: int = 0
    missing: List[Finding] = dataclasses.field(default_factory=list)  # E005: paths given that do not exist


@dataclass
class Plan:
    """A run before any file is analysed: what to analyse, in which order (files sharing a
    tokenizer together), what the manifest already answers, and the state the run shares."""

    request: Request
    state: _RunState
    ctx: kernel.Context
    cache: object
    files: List[Path]
    order: "_Plan"
    done: List[Tuple[List[Finding], List[str]]]  # per file, in discovery order
    todo: List["_Todo"]
    run: Optional["_Run"] = None
    manifest: Optional[object] = None
    # group key (a directory tokenizer's sha256, None: the run's own) -> the tokenizers no later step of
    # the check needs once that group is done (the check plan's; promptlint.driver.check_plan.releases)
    releases: Dict[Optional[str], Tuple[str, ...]] = dataclasses.field(default_factory=dict)
    real: RealPaths = dataclasses.field(default_factory=RealPaths)  # the run's resolved directories
    listed: Dict[str, Optional[frozenset]] = dataclasses.field(default_factory=dict)  # the run's directory listings

    def groups(self) -> List[Optional[str]]:
        """The group keys of the files left to analyse, in the order they are analysed here."""
        return list(dict.fromkeys(self.order.key(item.i) for item in self.todo))

    def uses(self, key: Optional[str]) -> Tuple[str, ...]:
        """The tokenizer a group's files load: a directory's, or the run's own (never the embedded one)."""
        sha = key if key is not None else (self.run.tok_sha if self.run is not None else None)
        return (sha,) if sha and not sha.startswith("embedded:") else ()


def lint(
    paths: Sequence[str],
    settings: Settings,
    force_exclude: bool = False,
    overrides: Optional[Dict[str, str]] = None,
    use_cache: bool = True,
    evidence: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
    shared: Optional[Dict[object, object]] = None,
    jobs: Optional[int] = None,
    debug: bool = False,
) -> LintResult:
    """Lint ``paths`` (or the configured templates) with one tokenizer: plan, execute, finish.
    ``shared``: what the runs of several models share (the Workspace passes it). A library
    caller with several models, a baseline or a resident pool uses promptlint.driver.Workspace."""
    request = Request(paths, overrides, force_exclude, use_cache, evidence, jobs, progress, debug)
    plan = plan_run(request, settings, shared)
    execute(plan)
    return finish(plan)


def plan_run(request: Request, settings: Settings, shared: Optional[Dict[object, object]] = None) -> Plan:
    """Discover the files, group them by tokenizer, answer what the manifest holds."""
    from promptlint.project.cache import Cache

    state = _state(settings)
    provider = kernel.TokenizerProvider(state.spec)
    cache = Cache(settings.root, enabled=request.use_cache)
    cache.kept = request.memo
    overrides = request.overrides
    real = RealPaths()  # each directory resolved once for discovery and the checks below
    if overrides and not request.paths:  # stdin / editor buffers only: no discovery
        files, missing = [], []
    else:
        kinds = analyzers if request.memo is None else request.memo.kinds(analyzers)
        files, missing = discover(request.paths, settings.root, settings.templates, settings.exclude, request.force_exclude,
                                  kinds=kinds, real=real, base=settings.base)
    if overrides:
        files = [Path(p) for p in overrides] + [f for f in files if str(f) not in overrides]
    ctx = kernel.Context(settings, provider, kernel.rule_filter(settings), shared=shared, resident=request.memo is not None,
                         buffers={os.path.abspath(p): t for p, t in (overrides or {}).items()})
    state.missing = [kernel.file_error(raw, "E005", reason) for raw, reason in missing]
    # Work in the plan's order (files sharing a tokenizer together, each released after its last
    # file); results and notices are put back in discovery order, as if linted one by one.
    plan = Plan(request, state, ctx, cache, files, _plan(files, settings, cache, real), [([], [])] * len(files), [], real=real)
    _consult_manifest(plan)
    # on its own, a run keeps its own tokenizer and lets each directory's go after its group (a check
    # of several steps plans this over all of them: promptlint.driver.check_plan)
    groups = plan.groups()
    plan.releases = dict(zip(groups, releases_after([plan.uses(g) for g in groups], keep=plan.uses(None))))
    return plan


def _consult_manifest(plan: Plan) -> None:
    """Files refused or answered by the manifest are done; the rest are the plan's todo."""
    settings, state, ctx, cache, request = plan.ctx.settings, plan.state, plan.ctx, plan.cache, plan.request
    tok_sha = None
    settings_key = _settings_key(settings)
    for i in plan.order.order:
        path = plan.files[i]
        state.files += 1
        text = (request.overrides or {}).get(str(path))
        refused = None if text is not None else not_read(path, settings.root, plan.real)
        if refused:
            plan.done[i] = ([kernel.file_error(ctx.display(path), "E005", refused)], [])
            continue
        if tok_sha is None:
            tok_sha = kernel.tokenizer_sha(state.spec, cache)  # verifies a pinned sha without loading the tokenizer
        if plan.manifest is None and cache.enabled:
            from promptlint.project.manifest import Manifest

            plan.manifest = Manifest(cache, settings_key, tok_sha, request.evidence, settings.base, kept=request.memo)
        nb = before = None
        if text is None and plan.manifest is not None:  # an editor buffer or stdin is never in the manifest
            nb = _neighbourhood(path, plan.listed)
            hit = _from_manifest(plan.manifest, path, nb, request.memo)
            if hit is not None:
                plan.done[i] = hit
                continue
            before = _lstat(path)  # before the read: a change during the run leaves a stale stamp
        plan.todo.append(_Todo(i, text, nb, before))
    plan.run = _Run(plan.files, ctx, cache, settings_key, tok_sha, request.evidence, request.debug)


def execute(plan: Plan) -> None:
    """Analyse the plan's todo (here or in workers), recording each answer in the manifest; each
    group's tokenizers go when the check plan says no later step needs them."""
    files, request, manifest = plan.files, plan.request, plan.manifest
    if request.progress is not None:
        request.progress(0, len(files))
    finished = len(files) - len(plan.todo)
    for item, (found, notices, seen) in _analyse(plan):
        plan.done[item.i] = (found, notices)
        if "sha" in seen and manifest is not None and item.nb is not None:
            manifest.record(files[item.i], item.before, seen["sha"], item.nb, seen["deps"],
                            [f.to_dict(evidence=request.evidence, internal=True) for f in found], notices)
        finished += 1
        if request.progress is not None and finished < len(files):
            request.progress(finished, len(files))
    if request.progress is not None:
        request.progress(len(files), len(files))


def releases_after(units: Sequence[Tuple[str, ...]], keep: Tuple[str, ...] = ()) -> List[Tuple[str, ...]]:
    """Per unit of work, given the tokenizers each loads in the order they run: the ones to let go
    when it ends -- those the next unit does not load too (after the last: all but ``keep``). So a
    model's tokenizer is parsed once for its consecutive steps, and one directory's at a time is held."""
    out = []
    for k, uses in enumerate(units):
        following = units[k + 1] if k + 1 < len(units) else keep
        out.append(tuple(sha for sha in uses if sha not in following))
    return out


def let_go(shas: Sequence[str]) -> None:
    """The one place a run releases tokenizers: after the step that, in the check's plan, is the last
    to need them (promptlint.driver.check_plan); the pool's policy decides what that means (a
    transient pool forgets them, a resident one keeps them within its budget)."""
    from promptlint.pools.tokenizers import active

    pool = active()
    for sha in shas:
        pool.release(sha)


def finish(plan: Plan) -> LintResult:
    """Put the answers in discovery order, merge what includes repeat, save the manifest, prune the
    cache: the run's Result, built here once."""
    state, ctx, cache = plan.state, plan.ctx, plan.cache
    provider, spec, tok_sha = ctx.tokenizer, state.spec, plan.run.tok_sha if plan.run else None
    findings: List[Finding] = []
    errors: List[Finding] = list(state.missing)
    notices: List[str] = []
    for found, said in plan.done:
        for f in found:
            (errors if f.code.startswith("E") else findings).append(f)
        notices.extend(said)
    notices.extend(ctx.notices)
    sha = provider.loaded.sha256 if provider.loaded is not None else tok_sha
    memo = plan.request.memo  # a resident process keeps the records: its caller may write the files after its reply
    if plan.manifest is not None:
        if memo is None or not memo.defer(functools.partial(plan.manifest.save, time.time_ns())):
            plan.manifest.save()
    if memo is None or not memo.defer(cache.prune):  # held: after the entries the run wrote later
        cache.prune()
    if cache.warning:
        notices.append(cache.warning)
    for warning in memo.warnings() if memo is not None else ():  # an earlier reply's held writes
        if warning not in notices:
            notices.append(warning)
    if spec.embedded and provider.used:
        notices.append(
            "no tokenizer configured: figures use the embedded cl100k_base tokenizer and are approximate "
            "until the model's tokenizer is pinned (`tokenizer` in [tool.promptlint])"
        )
    return LintResult(
        findings=sorted(merge_included_findings(prefer_sent(findings)), key=lambda f: f.sort_key),
        errors=sorted(merge_included(errors), key=lambda f: f.sort_key),
        files=state.files, tokenizer=spec, tokenizer_sha256=sha, notices=notices, engine=state.engine,
        block_size=state.block_size,
    )


def _from_manifest(manifest, path: Path, nb: str, memo=None) -> Optional[Tuple[List[Finding], List[str]]]:
    hit = manifest.lookup(path, nb)
    if hit is None:
        return None
    try:
        if memo is not None:  # a resident process: rebuilt once while the record is kept
            return memo.findings(hit[0], _decoded), list(hit[1])
        return _decoded(hit[0]), list(hit[1])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None  # a record this code cannot read: analyse the file


def _decoded(dicts: List[Dict]) -> List[Finding]:
    return [finding_from_dict(d) for d in dicts]


def _lstat(path: Path):
    import os

    try:
        return os.lstat(path)
    except OSError:
        return None


@dataclass
class _Todo:
    """A file the run analyses: its index, its text when given, and its manifest stamp."""

    i: int  # index into the run's files
    text: Optional[str]  # an editor buffer or stdin, else None (read from disk)
    nb: Optional[str]  # the neighbourhood stamp the manifest records it under (None: not recorded)
    before: Optional[object]  # lstat before the read


@dataclass
class _UnitResult:
    """What a unit of files came to in the process that analysed it."""

    results: List[Tuple[List[Finding], List[str], Dict]]  # per file: findings, notices, seen
    parses: int  # tokenizers the unit parsed
    used_tokenizer: bool  # whether the run's tokenizer was asked for
    cache_wrote: bool
    cache_warning: Optional[str]
    pid: int  # the process that analysed it (a unit a dead worker left is analysed by the driver)
    cache_written: int = 0  # bytes the unit wrote into the cache (the driver's prune estimate adds them)


class _Run:
    """One file's analysis as the driver does it, in this process or in a forked worker."""

    def __init__(self, files, ctx, cache, settings_key, tok_sha, evidence, debug=False):
        self.files, self.ctx, self.cache = files, ctx, cache
        self.settings_key, self.tok_sha, self.evidence, self.debug = settings_key, tok_sha, evidence, debug
        self.expired = 0  # unvetted tokenizers this process stopped at their deadline (EXPIRED_RUNS: no more are run)
        from promptlint.pools.tokenizers import active, windowed

        self.pool = active()  # the Workspace's: a worker installs it again (whatever thread it forked from)
        self.windowed = windowed()

    def one(self, item: _Todo, analyse: bool = True):
        ctx = self.ctx
        start = len(ctx.notices)
        seen: Dict = {}
        found = _check_one(self, self.files[item.i], item.text, seen, analyse)
        notices = ctx.notices[start:]
        del ctx.notices[start:]
        return None if found is None else (found, notices, seen)

    def unit(self, unit: Tuple[List[_Todo], Optional[str], Tuple[str, ...]]) -> _UnitResult:
        """In a worker: analyse a unit's files, then let go what the plan says its group is the last
        to need (a whole directory group; nothing for a chunk of the run's own files)."""
        from promptlint.pools.tokenizers import installed
        from promptlint.tokenization.tokens import parse_count

        items, sha, releases = unit
        written = self.cache.written
        with installed(self.pool, self.windowed):
            parses = parse_count()
            results = [found for _, found in _step(self, items, sha, releases)]
            parses = parse_count() - parses
        return _UnitResult(results, parses, self.ctx.tokenizer.used, self.cache.wrote, self.cache.warning, os.getpid(),
                           self.cache.written - written)

    def group(self, items: List[_Todo], sha: Optional[str]):
        """Yield (item, (findings, notices, seen)) for files sharing one tokenizer (``sha``: a model
        directory's; None: the run's). An unpinned tokenizer with unvetted
        regexes (a directory's own, or a configured one without its pin) is parsed and run only
        in a forked child under the per-file deadline (promptlint.doors.deadline_child): a regex that
        backtracks without end or panics costs the files that use it an E-finding each, never
        the run."""
        tokenizer = self._unvetted(items[0], sha)
        if tokenizer is not None:
            yield from self._in_child(items, tokenizer)
        else:
            for item in items:
                yield item, self.one(item)

    def _unvetted(self, item: _Todo, sha: Optional[str]) -> Optional[str]:
        """The display name of the group's tokenizer when it may run only under a deadline, else None."""
        from dataclasses import replace

        from promptlint.tokenization.tokens import needs_deadline, resolve

        if sha is None:  # the run's own: unpinned and unvetted (kernel.tokenizer_spec marks it)
            spec = self.ctx.tokenizer.spec
            return spec.display if self.tok_sha and needs_deadline(spec, self.tok_sha) else None
        directory = analyzers.tokenizer_dir(self.files[item.i])
        if directory is None:
            return None
        spec = replace(resolve(str(directory)), vet=True)
        return self.ctx.display(spec.path) if needs_deadline(spec, sha) else None

    def _in_child(self, items: List[_Todo], tokenizer: str):
        from promptlint.doors import deadline_child
        from promptlint.tokenization.tokens import allow_unvetted, note_parses, parse_count

        deadline = self.ctx.settings.analysis_timeout + CHILD_GRACE_S
        if not deadline_child.available():  # no fork: in this process, where loading it is refused (an E-finding)
            for item in items:
                yield item, self.one(item)
            return
        if self.expired >= EXPIRED_RUNS:  # many hostile tokenizers cost the run a few deadlines, not one each
            for item in items:
                yield item, self._answer(item, deadline_child.Expired(0.0), deadline, tokenizer)
            return

        def setup() -> None:
            os.environ["TOKENIZERS_PARALLELISM"] = "false"  # no thread pool in a forked child
            allow_unvetted()

        start, written = parse_count(), self.cache.written

        def finish():
            return parse_count() - start, self.ctx.tokenizer.used, self.cache.wrote, self.cache.warning, self.cache.written - written

        # quiet: a Rust panic prints its message and backtrace to fd 2; the answer says it in one line
        answers = deadline_child.run(items, self.one, deadline, setup, finish, quiet=True)
        stopped = False
        try:
            while True:
                try:
                    k, value = next(answers)
                except StopIteration as stop:
                    tail = stop.value
                    break
                if isinstance(value, deadline_child.Expired) and not stopped:
                    stopped = True
                    self.expired += 1
                yield items[k], self._answer(items[k], value, deadline, tokenizer)
        finally:
            answers.close()
        if tail is not None:
            parses, used, wrote, warning, written = tail
            note_parses(parses)
            self.ctx.tokenizer.used = self.ctx.tokenizer.used or used
            self.cache.wrote = self.cache.wrote or wrote
            self.cache.written += written
            self.cache.warning = self.cache.warning or warning

    def _answer(self, item: _Todo, value, deadline: float, tokenizer: str):
        """A child's answer for one file; a deadline, a death or a failure is that file's E-finding."""
        from promptlint.doors import deadline_child

        display = self.ctx.display(self.files[item.i])
        if isinstance(value, deadline_child.Expired):
            what = (f"did not finish within {deadline:g} s" if value.seconds else
                    f"was not run: {EXPIRED_RUNS} unvetted tokenizers of this run already ran out of time")
            message = (f"not analysed: the unpinned tokenizer {tokenizer} {what}; its regex patterns are not among the known "
                       "tokenizer families' and can backtrack without end. Fix or replace that tokenizer.json, or pin a "
                       "tokenizer you trust (`tokenizer` with `tokenizer-sha256`)")
            return [kernel.file_error(display, "E006", message)], [], {}
        if isinstance(value, deadline_child.Died):
            message = (f"not analysed: the process running the unpinned tokenizer {tokenizer}, whose regex patterns are not "
                       f"among the known tokenizer families', ended ({value.how}); fix or replace that tokenizer.json, or "
                       "pin a tokenizer you trust (`tokenizer` with `tokenizer-sha256`)")
            return [kernel.file_error(display, "E002", message)], [], {}
        if isinstance(value, deadline_child.Failed) and value.kind == "TokenizerError":
            from promptlint.tokenization.tokens import TokenizerError

            raise TokenizerError(value.message)  # the run's tokenizer cannot be used: exit 2, as in this process
        if isinstance(value, deadline_child.Failed):
            message = (f"internal error while analysing this file ({value.kind}); a bug: please report it "
                       "(PROMPTLINT_DEBUG=1 shows the traceback)")
            return [kernel.file_error(display, "E002", message)], [], {}
        return value


CHILD_GRACE_S = 5.0  # a child's deadline per file: the analysis budget, plus time to parse and start
EXPIRED_RUNS = 2  # unvetted tokenizers a process stops at their deadline before it runs no more of them


def _step(run: _Run, items: List[_Todo], sha: Optional[str], releases: Tuple[str, ...]):
    """One group of the plan, then what no later step needs (``let_go``), also when the group stops early."""
    try:
        yield from run.group(items, sha)
    finally:
        let_go(releases)


def _analyse(lint_plan: Plan):
    """Yield (item, (findings, notices, seen)) for every item: in this process, in the plan's order,
    one group after the other (``_step``); or in worker processes (promptlint.driver.parallel)."""
    from promptlint.driver import parallel

    todo, plan, run, jobs, releases = lint_plan.todo, lint_plan.order, lint_plan.run, lint_plan.request.jobs, lint_plan.releases
    if run.cache.enabled and parallel.workers_for(len(todo), len(todo), jobs):
        misses = []
        for item in todo:  # what the cache holds is answered here: no fork, no tokenizer for it
            hit = run.one(item, analyse=False)
            if hit is None:
                misses.append(item)
            else:
                yield item, hit
        todo = misses
    groups: Dict[Optional[str], List[_Todo]] = {}
    for item in todo:
        groups.setdefault(plan.key(item.i), []).append(item)
    workers = parallel.workers_for(len(groups.get(None, ())) + len(groups) - (None in groups), len(todo), jobs)
    if workers and not parallel.heavy_enough([str(run.files[item.i]) for item in todo]):
        workers = 0  # a few small files (a commit's Python modules): forking costs more than it wins
    if not workers:
        for sha, items in groups.items():
            yield from _step(run, items, sha, releases.pop(sha, ()))
        return
    mine = groups.pop(None, [])
    mine = [mine[k] for k in parallel.heaviest_first([str(run.files[item.i]) for item in mine])]
    chunks = [(chunk, None, ()) for chunk in parallel.chunks(mine, workers)]  # the run's own: let go here, after all
    # whole directory groups first (the longest); a worker lets its group's tokenizer go after it
    units = [(items, sha, releases.pop(sha, ())) for sha, items in groups.items()] + chunks
    if chunks and mine and run._unvetted(mine[0], None) is None:
        run.ctx.tokenizer.preload()  # before the fork: the workers share its memory (never an unvetted one: a child parses it)
        # each worker's share of what the run will encode: what the tokenizer builds for that, built once here
        from promptlint.pools.tokenizers import windowed

        run.ctx.tokenizer.expect(parallel.encode_volume([str(run.files[item.i]) for item in mine], not windowed()) // workers)
    analyzers.preimport([str(run.files[item.i]) for item in todo])  # once here, not again in each worker
    for k, out in parallel.run(units, run.unit, workers):
        _merge(run, out)
        yield from zip(units[k][0], out.results)


def _merge(run: _Run, out: _UnitResult) -> None:
    """What a worker's unit changed in its copy of the run's state."""
    from promptlint.tokenization.tokens import note_parses

    if out.pid == os.getpid():
        return  # analysed here: nothing to carry over
    note_parses(out.parses)
    run.ctx.tokenizer.used = run.ctx.tokenizer.used or out.used_tokenizer
    run.cache.wrote = run.cache.wrote or out.cache_wrote
    run.cache.written += out.cache_written
    if out.cache_warning and not run.cache.warning:
        run.cache.warning = out.cache_warning


def merge_included(errors: List[Finding]) -> List[Finding]:
    """An error inside an included file, met through every includer (and the file itself), once:
    at the included file, naming every includer."""
    notes_of: Dict[Tuple, List[str]] = {}  # key -> the notes of every error met under it
    first_of: Dict[Tuple, Finding] = {}
    for f in errors:
        key = (f.code, f.path, f.line, f.column, f.message)
        if key not in first_of:
            first_of[key], notes_of[key] = f, list(f.notes)
            continue
        notes = notes_of[key]
        notes += [n for n in f.notes if n not in notes]
    out: List[Finding] = []
    for key, f in first_of.items():
        notes = notes_of[key]
        includers = [n[len("included by "):] for n in notes if n.startswith("included by ")]
        if len(includers) > 1:
            notes = [n for n in notes if not n.startswith("included by ")] + [f"included by {', '.join(includers)}"]
        out.append(f if tuple(notes) == f.notes else dataclasses.replace(f, notes=notes))
    return out


_IN_RENDER = re.compile(r"^in the render of (.+), which includes or extends ")


def prefer_sent(findings: List[Finding]) -> List[Finding]:
    """A Python or TS/JS prompt module's hazard judged on its own ("the call that sends it is not in the linted
    files") is dropped where a linted importer reported the same place with the request that sends it
    (pysource.project); two importers sending it keep one finding, the others named in a note."""
    if not any(f.path.endswith((".py", ".pyi") + suppress.SCRIPT_SUFFIXES) for f in findings):
        return findings  # only the Python and TS/JS front ends report in an imported module
    from promptlint.pysource.project import NOT_SEEN_NOTE, SENT_NOTE

    def sent(f: Finding) -> bool:
        return any(n.startswith(SENT_NOTE) for n in f.notes)

    places = {(f.path, f.line, f.column) for f in findings if sent(f)}
    if not places:
        return findings
    out: List[Finding] = []
    kept: Dict[Tuple, Finding] = {}
    at: Dict[Tuple, List[int]] = {}  # key -> where findings with it are in ``out`` (a merge replaces them all)
    for f in findings:
        place = (f.path, f.line, f.column)
        is_sent = sent(f)
        if place in places and not is_sent and any(NOT_SEEN_NOTE in n for n in f.notes):
            continue
        key = (f.code,) + place
        if is_sent and key in kept:
            first = kept[key]
            also = [n for n in f.notes if n.startswith(SENT_NOTE) and n not in first.notes]
            more = tuple(s for s in f.sent_by if s not in first.sent_by)
            kept[key] = first = dataclasses.replace(first, notes=tuple(first.notes) + tuple(f"also {n}" for n in also),
                                                    sent_by=tuple(first.sent_by) + more)
            for k in at.get(key, ()):
                out[k] = first
            continue
        if is_sent:
            kept[key] = f
        at.setdefault(key, []).append(len(out))
        out.append(f)
    return out


def merge_included_findings(findings: List[Finding]) -> List[Finding]:
    """A finding in an included file, met through the file itself and through each includer, once:
    at the included file's own line, listing its includers. The included file's own analysis is
    kept when it was linted; else the includer's render losing the most blocks. An includer whose
    render measures it differently keeps its own figures as a note."""
    groups: Dict[Tuple, List[Finding]] = {}
    order: List[Tuple] = []
    for f in findings:
        key = (f.code, f.path, f.line, f.column, f.variable)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(f)
    out: List[Finding] = []
    for key in order:
        group = groups[key]
        if len(group) == 1:
            out.append(group[0])
            continue
        via = {id(f): _includer(f) for f in group}
        own = [f for f in group if via[id(f)] is None]
        keep = own[0] if own else max(group, key=lambda f: f.arithmetic.lost_blocks if f.arithmetic is not None else 0)
        includers = list(dict.fromkeys(via[id(f)] for f in group if via[id(f)] is not None))
        notes = [n for n in keep.notes if not _IN_RENDER.match(n)]
        if via[id(keep)] is not None:
            notes.append(f"measured in the render of {via[id(keep)]}")
        notes.append(f"included by {', '.join(includers)}")
        for f in group:
            if f is not keep and via[id(f)] is not None and f.message != keep.message:
                notes.append(f"in the render of {via[id(f)]}: {f.message}")
        out.append(dataclasses.replace(keep, notes=list(dict.fromkeys(notes))))  # cached findings stay as stored
    return out


def _includer(f: Finding) -> Optional[str]:
    for n in f.notes:
        m = _IN_RENDER.match(n)
        if m:
            return m.group(1)
    return None


@dataclass
class _Plan:
    """The order to analyse the files in, and each file's tokenizer group."""

    order: List[int]  # indices into the files, in the order to analyse them (each group released after it)
    keys: Optional[List[Optional[str]]] = None  # per file: its directory tokenizer's sha256, None: the run's

    def key(self, i: int) -> Optional[str]:
        return self.keys[i] if self.keys is not None else None


def _plan(files: List[Path], settings: Settings, cache, real: Optional[RealPaths] = None) -> _Plan:
    """Group the files by the tokenizer their analyzer loads (model directories sharing a
    tokenizer.json by content: copies, symlinks, hard links), groups in order of first appearance,
    so that a run holds one directory tokenizer at a time, not all of them. A configured tokenizer
    is every file's: nothing to plan."""
    if settings.tokenizer or not files:  # (one file is planned too: its directory's tokenizer may need a deadline)
        return _Plan(list(range(len(files))))
    dirs = [None if not_read(path, settings.root, real) else analyzers.tokenizer_dir(path) for path in files]
    wanted = [d / "tokenizer.json" for d in dirs if d is not None]
    shas = iter(kernel.tokenizer_file_shas(wanted, cache) if wanted else [])
    keys: List[Optional[str]] = [None if d is None else next(shas) for d in dirs]  # None: the run's tokenizer
    first: Dict[Optional[str], int] = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    order = sorted(range(len(files)), key=lambda i: first[keys[i]])  # stable: discovery order within a group
    return _Plan(order, keys)


def _check_one(run: "_Run", path: Path, text: Optional[str], seen: Optional[Dict] = None,
               analyse: bool = True) -> Optional[List[Finding]]:
    """One file's findings: analysed (or from the cache), filtered, suppressed, with their source lines;
    ``seen`` gets the content's sha256 and the dependencies' digests when the result may be remembered.
    With ``analyse=False``: None when the cache does not hold them."""
    ctx = run.ctx
    settings = ctx.settings

    def keep(f: Finding) -> bool:
        rel = relative(based(f.path, settings.base), settings.root)  # a display path is the caller's
        return ctx.is_enabled(f.code) and not ignored_for_file(f.code, rel, settings.per_file_ignores)

    raw, text = _analysed(run, path, text, seen, analyse)
    if raw is None:
        return None
    complete = not any(f.code.startswith("E") for f in raw)  # else nothing can be called unused
    sources = _Sources(ctx.display(path), text, settings.root, settings.base)
    out = []
    for f in apply_suppressions([f for f in raw if keep(f)], sources, ctx, complete):
        if f.code == suppress.UNUSED and not keep(f):
            continue
        if f.source_line is None:  # the linted text of its line (a copy: findings are frozen)
            f = dataclasses.replace(f, source_line=sources.line(f.path, f.line, f.column))
        out.append(f)
    return out


class _Sources:
    """The text of the linted file (as linted: an editor buffer or stdin wins over the disk) and of
    the other files its findings point into (includes), read once each; never a file whose real
    path leaves the project (its text must not reach the output)."""

    def __init__(self, primary: str, text: Optional[str], root: Path, base: Path):
        self.primary = primary
        self.root, self.base = root, base  # base: the run's directory, which display paths are relative to
        self.texts: Dict[str, Optional[str]] = {primary: text} if text is not None else {}

    def text(self, display: str) -> Optional[str]:
        if display not in self.texts:
            try:
                path = based(display, self.base)
                self.texts[display] = None if not_read(path, self.root) else bounded_io.read_text(path)
            except (OSError, UnicodeDecodeError):
                self.texts[display] = None
        return self.texts[display]

    def line(self, display: str, line: int, column: int) -> Optional[SourceLine]:
        text = self.text(display)
        return SourceLine.of(text, line, column) if text is not None else None


def apply_suppressions(findings: List[Finding], sources: _Sources, ctx: kernel.Context, complete: bool = True) -> List[Finding]:
    """Drop findings silenced by `promptlint: ignore/disable` comments; add PL100 for unused ones."""
    return suppress.apply(findings, sources.primary, sources.text, ctx.is_enabled, _ALL_CODES, complete)


class _AllCodes(Sequence):
    """Every rule code, from the rule files' names, only when a suppression comment needs them
    (no rule TOML is parsed for it)."""

    def _codes(self) -> List[str]:
        return sorted(registry.known_codes())

    def __getitem__(self, index):
        return self._codes()[index]

    def __len__(self) -> int:
        return len(self._codes())

    def __iter__(self):
        return iter(self._codes())


_ALL_CODES = _AllCodes()


def lint_file(path: Path, ctx: kernel.Context, text: Optional[str] = None) -> List[Finding]:
    """Read ``path`` (unless its text is given) and run the analyzer for its kind."""
    if text is None and path.is_dir():
        text = ""  # a model directory: its analyzer reads the files it needs
    if text is None:
        text_or_error = kernel.read_source(path, typed(path, ctx.settings.base))  # E005 names it as the user typed it
        if isinstance(text_or_error, Finding):
            return [text_or_error]
        text = text_or_error
    analyzer = analyzers.analyzer_for(path)
    if analyzer is None:
        analyzer = importlib.import_module("promptlint.analyzers.jinja_template")
    return analyzer.lint_file(path, text, ctx)


def _analysed(run: "_Run", path: Path, text, seen=None, analyse=True):
    """One file's analysis; a bug that input from a pull request triggers costs that file, not the run
    (with ``debug``, PROMPTLINT_DEBUG as the front end read it, the bug raises)."""
    from promptlint.tokenization.tokens import BudgetExceeded, PromptNotText, TokenizerCrashed, TokenizerError, TokenizerUnvetted, native_panic

    ctx = run.ctx
    try:
        return _cached_lint_file(run, path, text, seen, analyse)
    except TokenizerError:
        raise  # the tokenizer is the run's, not the file's: exit 2
    except (PromptNotText, TokenizerCrashed, TokenizerUnvetted) as e:  # what this file renders, or its directory's tokenizer
        return [kernel.file_error(ctx.display(path), "E002", str(e))], text
    except BudgetExceeded as e:
        return [kernel.file_error(ctx.display(path), "E006", str(e))], text
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as e:  # a bug, or a native library's panic (a BaseException): it costs this file, not the run
        if run.debug:
            raise
        if type(e).__name__ == "DeadlineExceeded":  # a render deadline that fired after its guard: still the limit
            message = f"the analysis ran past `render-timeout` ({ctx.settings.render_timeout:g} s)"
            return [kernel.file_error(ctx.display(path), "E006", message)], text
        if native_panic(e):
            first = str(e).strip().splitlines()
            message = (f"a native library crashed while analysing this file ({type(e).__name__}: "
                       f"{first[0][:120] if first else 'no message'}); check the tokenizer it uses, or exclude the file")
        else:
            message = (f"internal error while analysing this file ({type(e).__name__}); a bug: please report it "
                       "(PROMPTLINT_DEBUG=1 shows the traceback)")
        return [kernel.file_error(ctx.display(path), "E002", message)], text


def _cached_lint_file(run: "_Run", path: Path, text: Optional[str], seen: Optional[Dict] = None,
                      analyse: bool = True) -> Tuple[Optional[List[Finding]], Optional[str]]:
    """(findings, the file's text) — from the cache when nothing it depends on changed.

    The text is returned so that suppression comments and source lines are read from the same
    bytes, not a second read.
    """
    from promptlint.project.cache import sha256_bytes

    ctx, cache, evidence = run.ctx, run.cache, run.evidence
    if text is None and path.is_dir():
        content = b""  # a model directory: its files enter the key through _neighbourhood()
    elif text is None:
        shown = typed(path, ctx.settings.base)  # E005 names the file as the user typed it
        raw = kernel.read_source_bytes(path, shown)
        if isinstance(raw, Finding):
            return [raw], None
        content = raw
        decoded = kernel.decode_source(path, content, shown)
        if isinstance(decoded, Finding):
            return [decoded], None
        text = decoded
    else:
        content = text.encode("utf-8", "surrogatepass")
    key = cache.key(path, content, run.settings_key + _neighbourhood(path), run.tok_sha)
    entry = cache.get(key)
    if entry is not None and (entry.get("evidence") is True or not evidence):
        try:
            findings = [finding_from_dict(d) for d in entry["findings"]]
            notices = entry.get("notices") or []
            if isinstance(notices, list) and all(isinstance(n, str) for n in notices):
                ctx.notices.extend(notices)  # as the analysis said them, so a warm run prints what a cold one does
                if seen is not None:
                    seen.update(sha=sha256_bytes(content), deps=entry.get("deps") or {})
                return findings, text
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # a damaged or foreign entry is a miss, and is overwritten below
    if not analyse:
        return None, text
    ctx.deps = []
    start = len(ctx.notices)
    findings = _within_budget(path, ctx, text)
    # renders are stored only for a run that reports them (--evidence): they can be megabytes
    deps = cache.put(key, [f.to_dict(evidence=evidence, internal=True) for f in findings], ctx.deps, evidence=evidence,
                     notices=ctx.notices[start:])
    if seen is not None and deps is not None:
        seen.update(sha=sha256_bytes(content), deps=deps)
    return findings, text


def _within_budget(path: Path, ctx: kernel.Context, text: Optional[str]) -> List[Finding]:
    """lint_file under the per-file budget (`analysis-timeout`, `max-encoded-tokens`): past it the
    file's findings are one E006, also when a check swallowed the exception (the budget's state
    is sticky)."""
    from promptlint.tokenization.tokens import BudgetExceeded, budget

    with budget(ctx.settings.analysis_timeout, ctx.settings.max_encoded_tokens) as spent:
        try:
            findings = lint_file(path, ctx, text)
        except BudgetExceeded:
            findings = []
    if spent.exceeded is not None:
        return [kernel.file_error(ctx.display(path), "E006", spent.exceeded)]
    return findings


_NEIGHBOURS = ("tokenizer_config.json", "chat_template.jinja", "tokenizer.json")


def _neighbourhood(path: Path, listed: Optional[Dict[str, Optional[frozenset]]] = None) -> str:
    """Size and mtime of the files an analysis may read beside ``path`` without naming them as
    dependencies: samples files (which may appear or disappear), a model directory's chat-template
    files and tokenizer_config.json (special tokens). (os calls on strings: a warm run makes these
    stats for every file.) ``listed``: the run's memo of each directory's names (casefolded, as a
    case-insensitive file system finds them), so that a directory of 200 modules is listed once
    instead of stat-ing nine absent neighbours per file; a name not listed is not there."""
    import os

    name = str(path)
    directory = name if os.path.isdir(name) else os.path.dirname(name)
    names = _listed(directory, listed) if listed is not None else None
    if names is not None and not names:
        return ""  # none of the names below is in the directory (most directories of a project)
    stem = path.name.rsplit(".", 1)[0]
    candidates = [os.path.join(directory, n) for n in _NEIGHBOURS]
    candidates += [os.path.join(directory, f"{s}.samples.{ext}") for s in (stem, "chat_template", "tokenizer_config") for ext in ("toml", "json")]
    if names is not None:
        candidates = [c for c in candidates if os.path.basename(c).casefold() in names]
    extra = os.path.join(directory, "chat_templates")
    if (names is None or "chat_templates" in names) and os.path.isdir(extra):
        candidates += sorted(os.path.join(extra, n) for n in os.listdir(extra))
    parts = []
    for c in candidates:
        try:
            st = os.stat(c)
        except OSError:
            continue
        parts.append(f"{os.path.basename(c)}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def _listed(directory: str, listed: Dict[str, Optional[frozenset]]) -> Optional[frozenset]:
    """The casefolded names in ``directory`` that ``_neighbourhood`` may look for (the neighbours,
    samples files, ``chat_templates``), listed once per run (None: it cannot be listed)."""
    if directory not in listed:
        try:
            listed[directory] = frozenset(n for n in (n.casefold() for n in os.listdir(directory or "."))
                                          if n in _NEIGHBOUR_NAMES or n.endswith(_SAMPLES_ENDINGS))
        except (OSError, ValueError):
            listed[directory] = None
    return listed[directory]


_NEIGHBOUR_NAMES = frozenset(_NEIGHBOURS) | {"chat_templates"}
_SAMPLES_ENDINGS = (".samples.toml", ".samples.json")


def _settings_key(settings: Settings) -> str:
    import hashlib

    return hashlib.sha256(repr(settings.cache_key()).encode("utf-8")).hexdigest()
