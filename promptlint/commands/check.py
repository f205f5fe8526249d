"""`promptlint check [PATH ...]`: lint templates for prefix-cache hazards."""

from __future__ import annotations

import sys
from typing import Optional

from promptlint.doors import bounded_io
from promptlint.commands.options import add_chat_options, add_common_tokenizer_options, settings_from_args


def add_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        help="lint prompt templates for prefix-cache hazards",
        description="Render templates with sample inputs, tokenize them with the pinned tokenizer, "
        "compare controlled variants and report what breaks the KV prefix cache.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: configured templates, else .)")
    add_common_tokenizer_options(p)
    from promptlint.commands.options import add_trust_options

    add_trust_options(p)
    from promptlint.report import DEFAULT

    # the choices set after add_argument, which formats the metavar (iterating them) once to check it
    p.add_argument("--output-format", default=None, help=f"default: {DEFAULT}").choices = _Formats()
    p.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="lint the text read from stdin as if it were the file PATH (for editors); takes no PATH arguments",
    )
    p.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to enable (e.g. M1,E)")
    p.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to disable")
    p.add_argument("--template-env", choices=["jinja2", "transformers"], help="Jinja environment for application templates")
    add_chat_options(p)
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument(
        "--baseline", metavar="REF",
        help="also measure every template at git revision REF (`auto`: the merge-base with origin/HEAD) and report "
        "the eligible blocks per request before and after; marks each finding new or existing",
    )
    p.add_argument(
        "--fail-on", choices=["regression", "new-finding", "any"], default=None,
        help="what makes the exit code 1: a template losing blocks per request, a finding the baseline did not have, "
        "or any finding (default: regression with --baseline, else any)",
    )
    p.add_argument(
        "--annotate", choices=["all", "new"], default=None,
        help="github format: annotate every finding, or only the findings the baseline does not have "
        "(default: new with --baseline, else all)",
    )
    p.add_argument(
        "--report-file", metavar="FORMAT=PATH", action="append", default=[],
        help="also write the report in FORMAT to PATH (repeatable; e.g. sarif=promptlint.sarif)",
    )
    p.add_argument("--evidence", action="store_true", help="put both renders of each comparison into the JSON output")
    p.add_argument("--force-exclude", action="store_true", help="apply `exclude` to paths given explicitly too")
    p.add_argument("--daemon", action="store_true",
                   help="forward to this project's daemon, starting one if none runs (or PROMPTLINT_DAEMON=1, or `daemon = true` "
                   "in ~/.config/promptlint/config.toml); never in CI")
    p.add_argument("--no-daemon", action="store_true", help="run in this process even when a daemon is running (or PROMPTLINT_DAEMON=0)")
    p.add_argument("--no-cache", action="store_true", help="ignore and do not write the result cache (.promptlint_cache/)")
    p.add_argument(
        "-j", "--jobs", type=_jobs, metavar="N",
        help="worker processes for the files to analyse (default: PROMPTLINT_JOBS, else one per CPU, at most 8; 1: this process)",
    )
    p.add_argument(
        "--fix", action="store_true",
        help="apply safe fixes (sorted keys; Python: sort_keys=True, sorted(...)), each template fix proven by re-checking, "
        "and report what remains",
    )
    p.add_argument(
        "--unsafe-fixes", action="store_true",
        help="with --fix or --diff, also apply the fixes that change the text the model sees (move a volatile line, sort tools)",
    )
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of writing them; exit 1 if any")
    p.add_argument(
        "--add-suppressions", action="store_true",
        help="write a suppression comment ({# promptlint: ignore[CODE] #}, # promptlint: ignore[CODE]) for every finding",
    )
    p.add_argument(
        "--show-inferred", action="store_true",
        help="full output: also print each application template's inferred samples (as `promptlint samples` does)",
    )


class _Formats:
    """--output-format's choices: the formats the report package holds, found (each reporter
    imported) only when argparse asks, for a value given, --help or an error message."""

    def __contains__(self, name) -> bool:
        from promptlint.report import known

        return known(name)

    def __iter__(self):
        from promptlint.report import formats

        return iter(list(formats()))


def _kind(fmt) -> str:
    """The output format's KIND (promptlint/report): "human" may have a progress bar, "json" keeps stdout a document."""
    from promptlint import report

    return report.kind(fmt or report.DEFAULT)


def _jobs(raw: str) -> int:
    import argparse

    if not raw.isdigit() or int(raw) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {raw!r}")
    return int(raw)


def _write(fmt: str, result, args, stream, console: "Console") -> None:
    """Write the result in ``fmt``. JSON output stays valid UTF-8 when a file name is not: the surrogate
    escapes Python gives undecodable name bytes are written as JSON `\\udcXX` escapes, which a
    JSON parser returns as the same string (``os.fsencode`` of it gives the original bytes)."""
    from promptlint import report
    from promptlint.commands.report_context import from_process

    from pathlib import Path

    # --annotate: which findings get an annotation (github; markdown counts the rest)
    context = from_process(stream, getattr(args, "annotate", None), args.evidence, environ=console.environ,
                           cwd=Path(console.cwd))
    if report.kind(fmt) != "json":
        report.get(fmt).write(result, context, stream)
        return
    import io
    import re

    buffer = io.StringIO()
    report.get(fmt).write(result, context, buffer)
    stream.write(re.sub("[\udc80-\udcff]", lambda m: "\\u%04x" % ord(m.group()), buffer.getvalue()))


def _report_files(specs):
    """(format, path) of each --report-file FORMAT=PATH."""
    from promptlint.commands import UsageError
    from promptlint.report import formats

    out = []
    for spec in specs:
        known = formats()
        fmt, sep, path = spec.partition("=")
        if not sep or not path or fmt not in known:
            raise UsageError(f"--report-file {spec}: expected FORMAT=PATH with FORMAT one of {', '.join(known)}")
        out.append((fmt, path))
    return out


def _report_file_error(fmt: str, path: str, e: OSError):
    from promptlint.commands import UsageError
    from promptlint.doors.safe_write import WriteRefused

    why = f"not written: {e}" if isinstance(e, WriteRefused) else f"cannot write ({e.strerror or e}); check the path"
    return UsageError(f"--report-file {fmt}={path}: {why}")


def _check_report_files(report_files, root, base) -> None:
    """Refuse a report path before the run does its work (a link on the way, a hard-linked or
    special target, a missing directory); the write looks again."""
    from promptlint.doors import safe_write

    for fmt, path in report_files:
        try:
            safe_write.check_target(path, within=(root,), cwd=base)
        except OSError as e:
            raise _report_file_error(fmt, path, e) from None


def _write_file(fmt: str, path: str, result, args, root, console: "Console") -> None:
    """Write the report through promptlint.doors.safe_write: never through a link the repository
    committed (the Action's `promptlint.sarif -> .git/config`), and complete or not at all."""
    from pathlib import Path

    from promptlint.doors import safe_write

    try:  # named as typed, from the caller's directory
        with safe_write.replacing(path, within=(root,), cwd=Path(console.cwd), errors="surrogateescape") as fh:
            _write(fmt, result, args, fh, console)
    except OSError as e:
        raise _report_file_error(fmt, path, e) from None


def _fix_summary(fix_run, out) -> None:
    """One line per template fix (what it won back, or why it was not applied), then the unsafe ones left."""
    for outcome in fix_run.outcomes:
        print(outcome.summary(), file=out)
    left = fix_run.unsafe_available
    if left:
        where = ", ".join(f"{f.code} {f.path}:{f.line}:{f.column}" for f in left[:5]) + (", ..." if len(left) > 5 else "")
        print(f"{len(left):,} unsafe fix{'es' if len(left) != 1 else ''} available with --unsafe-fixes ({where}).", file=out)


class Console:
    """What a check's caller brings: where its output goes, where its stdin comes from, its
    environment and its working directory -- the process's, or a daemon request's
    (promptlint.daemon.server), passed down instead of swapped into ``sys``, ``os.environ`` or the
    process's working directory. The environment is read here, by the front end, once."""

    def __init__(self, out=None, err=None, stdin=None, environ=None, cwd=None):
        import os

        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.stdin = stdin if stdin is not None else sys.stdin.buffer  # bytes
        self.environ = dict(os.environ if environ is None else environ)
        # the base every typed path is relative to: a daemon request's always; None: the user's own process
        self.cwd = os.getcwd() if cwd is None else str(cwd)

    def flag(self, name: str) -> bool:
        """A switch variable (PROMPTLINT_FULL_ENCODE): set to anything but "" or "0"."""
        return self.environ.get(name, "") not in ("", "0")


def run(args, console: Optional[Console] = None, workspace=None) -> int:
    """The command; ``console``: its streams (default: the process's); ``workspace``: a resident
    Workspace to check in (the daemon's: its pool stays warm), else one made for this command."""
    console = console or Console()
    out, err = console.out, console.err
    from promptlint.commands import EXIT_FINDINGS, EXIT_OK, UsageError
    from promptlint.driver.workspace import Workspace
    from promptlint.tokenization.tokens import TokenizerError

    baseline_ref = getattr(args, "baseline", None)
    fail_on = getattr(args, "fail_on", None) or ("regression" if baseline_ref else "any")
    if fail_on != "any" and not baseline_ref:
        raise UsageError(f"--fail-on {fail_on} compares with a baseline: add --baseline REF")
    if getattr(args, "annotate", None) == "new" and not baseline_ref:
        raise UsageError("--annotate new annotates the findings a baseline does not have: add --baseline REF")
    report_files = _report_files(getattr(args, "report_file", []) or [])
    from promptlint.driver import parallel

    try:
        jobs = parallel.jobs_wanted(getattr(args, "jobs", None), console.environ)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if baseline_ref and getattr(args, "stdin_filename", None):
        raise UsageError("--baseline compares the project's files with a git revision: it does not apply to --stdin-filename")
    if getattr(args, "show_inferred", False) and (args.output_format or "full") != "full":
        raise UsageError("--show-inferred prints in the full output format; drop --output-format or use `promptlint samples`")
    stdin_name = getattr(args, "stdin_filename", None)
    overrides = None
    from pathlib import Path

    from promptlint.base.paths import based

    base = Path(console.cwd)  # the caller's directory: every path typed on its command line is relative to it
    args.paths = [str(based(p, base)) for p in args.paths]
    if stdin_name:
        from pathlib import Path

        if args.paths:
            raise UsageError("--stdin-filename lints stdin only: give no PATH arguments")
        settings = settings_from_args(args, start=Path(stdin_name), environ=console.environ, base=base)
        try:
            text = bounded_io.read_stream(console.stdin, bounded_io.MAX_FILE_BYTES, "stdin").decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError("stdin is not UTF-8 text") from None
        except bounded_io.InputRefused as e:
            raise UsageError(f"{stdin_name}: {e}; promptlint checks templates up to this size") from None
        overrides = {str(based(stdin_name, base)): text}
        if args.force_exclude:
            from promptlint.project.discovery import is_excluded

            if is_excluded(based(stdin_name, base), settings.root, settings.exclude):
                overrides = {}  # excluded: lint nothing, as ruff does
    else:
        settings = settings_from_args(args, environ=console.environ, base=base)
    _check_report_files(report_files, settings.root, base)
    from promptlint.tokenization.window_encode import FULL_ENCODE_ENV

    options = dict(use_cache=not args.no_cache, evidence=args.evidence, jobs=jobs, debug=bool(console.environ.get("PROMPTLINT_DEBUG")),
                   full_encode=console.flag(FULL_ENCODE_ENV))
    ws = workspace.with_settings(settings, **options) if workspace is not None else Workspace(settings, **options)
    with ws.installed():  # the whole command (fixes re-check too) uses the workspace's tokenizer pool
        return _checked(args, console, ws, settings, overrides, report_files, baseline_ref, fail_on)


def _checked(args, console: Console, ws, settings, overrides, report_files, baseline_ref, fail_on) -> int:
    from promptlint.commands import EXIT_FINDINGS, EXIT_OK, UsageError
    from promptlint.tokenization.tokens import TokenizerError

    if baseline_ref:
        from promptlint.project.git_tree import GitError  # only with a baseline: a plain check starts no git
    else:
        GitError = TokenizerError  # without a baseline nothing here runs git
    out, err = console.out, console.err
    fixing = getattr(args, "fix", False) or getattr(args, "diff", False)
    # the baseline is a part of the check's plan; a fix measures the tree it leaves (below)
    first_baseline = None if fixing or getattr(args, "add_suppressions", False) else baseline_ref
    try:
        from promptlint.base import progress

        # a bar only for people: a terminal's stderr, a human format (docs/cli.md)
        with progress.Bar("checking", "file", progress.wanted(err, console.environ) and _kind(args.output_format) == "human",
                          every_update=True, file=err) as bar:
            result = ws.check(args.paths, overrides, force_exclude=args.force_exclude, progress=bar, baseline=first_baseline)
    except (GitError, TokenizerError) as e:
        raise UsageError(str(e)) from None
    fmt = args.output_format or "full"
    fixed = []
    fix_run = None
    if getattr(args, "add_suppressions", False):
        if args.fix or args.diff:
            raise UsageError("--add-suppressions writes comments for the findings as they are: run it without --fix/--diff")
        from promptlint.fixes.suppressions import add_suppressions

        added, skipped = add_suppressions(result, settings)
        n = sum(added.values())
        print(f"Added {n:,} suppression comment{'s' if n != 1 else ''} in {len(added):,} file{'s' if len(added) != 1 else ''}.",
              file=out)
        if skipped:
            print(f"promptlint: note: {skipped:,} finding{'s' if skipped != 1 else ''} left without a comment (a line ending "
                  "inside a tag or a string, or a template stored in JSON)", file=err)
        return EXIT_FINDINGS if skipped and not args.exit_zero else EXIT_OK
    if fixing:
        from promptlint.fixes.fixing import run_fixes

        fix_run = run_fixes(result, write=not args.diff, unsafe=getattr(args, "unsafe_fixes", False), settings=settings)
        fixed = fix_run.fixed
        if args.diff:
            out.write("".join(fix_run.diffs))
            _fix_summary(fix_run, err)
            n = len(fixed)
            print(f"Would fix {n:,} finding{'s' if n != 1 else ''}." if n else "No fixes available.", file=err)
            return EXIT_FINDINGS if fix_run.diffs and not args.exit_zero else EXIT_OK
        if fixed or baseline_ref:  # report what remains after the rewrite, measured against the baseline
            try:
                result = ws.check(args.paths, force_exclude=args.force_exclude, baseline=baseline_ref)
            except (GitError, TokenizerError) as e:
                raise UsageError(str(e)) from None
    if settings.cost is not None:  # [tool.promptlint.cost]: what each finding's lost tokens cost a day
        import dataclasses

        from promptlint.arithmetic.cost import price_findings

        result = dataclasses.replace(result, findings=price_findings(settings.cost, result.findings))
    _write(fmt, result, args, out, console)
    for report_fmt, report_path in report_files:
        _write_file(report_fmt, report_path, result, args, settings.root, console)
    if getattr(args, "show_inferred", False):
        from promptlint.commands.samples import show_inferred

        show_inferred(args.paths, settings, args.force_exclude, overrides or {}, out)
    if fix_run is not None:
        _fix_summary(fix_run, err if _kind(fmt) == "json" else out)
    if fixed:
        n = len(fixed)
        where = ", ".join(f"{f.code} {f.path}:{f.line}:{f.column}" for f in fixed[:5]) + (", ..." if n > 5 else "")
        print(f"Fixed {n:,} finding{'s' if n != 1 else ''} ({where}).", file=err if fmt == "json" else out)
    from promptlint.doors.line_guard import one_line

    for notice in result.notices:
        print(f"promptlint: note: {one_line(notice)}", file=err)
    if args.exit_zero:
        return EXIT_OK
    # Notes (severity "info", e.g. an order the samples file declares pinned) never fail a run.
    from promptlint.base.failing import exit_failing  # not driver.baseline (git machinery) nor measurements (its records)

    return EXIT_FINDINGS if exit_failing(result, result.baseline, fail_on) else EXIT_OK
