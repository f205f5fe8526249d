"""Command-line entry point.

Each subcommand lives in ``promptlint/commands/<name>.py`` with two functions,
``add_parser(subparsers)`` and ``run(args) -> int``. Command modules import only the
standard library at module level, so building the parser (and ``--help`` /
``--version``) never imports a third-party package.
"""

from __future__ import annotations

import argparse
import contextvars
import functools
import importlib
import os
import re
import sys
from typing import List, Optional

from promptlint import __version__

from promptlint.commands import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError  # noqa: F401 - re-exported

# name -> module under promptlint.commands (order = order in --help)
COMMANDS = [
    "check",
    "render",
    "samples",
    "rule",
    "diff",
    "conversation",
    "hashes",
    "tokenize",
    "audit",
    "clean",
    "server",
    "daemon",
]


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors name the closest option or command to a typo (as pip does)."""

    def _get_formatter(self):
        # HelpFormatter's default width (the terminal's columns - 2), without its `import shutil`
        from promptlint.base import terminal

        return self.formatter_class(prog=self.prog, width=terminal.columns() - 2)

    def error(self, message: str):  # type: ignore[override]
        import difflib

        wrong = re.match(r"argument COMMAND: invalid choice: '([^']*)'", message)
        if wrong:
            close = difflib.get_close_matches(wrong.group(1), COMMANDS, n=1)
            message = f"unknown command '{wrong.group(1)}'" + (f" (did you mean '{close[0]}'?)" if close else "")
        elif message.startswith("unrecognized arguments: "):
            options = [o for a in self._actions for o in a.option_strings]
            hints = []
            for arg in message[len("unrecognized arguments: "):].split():
                close = difflib.get_close_matches(arg.split("=", 1)[0], options, n=1) if arg.startswith("-") else []
                if close:
                    hints.append(f"{arg.split('=', 1)[0]}: did you mean {close[0]}?")
            if hints:
                message += " (" + "; ".join(hints) + ")"
        super().error(message)


def build_parser(only: Optional[str] = None, parser_class=None) -> argparse.ArgumentParser:
    """The full parser; with ``only``, just that subcommand (parsing its arguments is the same,
    without importing and building the other eight: a pre-commit run parses `check` alone);
    ``parser_class``: a ``_Parser`` whose messages go elsewhere than sys (a daemon request's console)."""
    parser = (parser_class or _Parser)(
        prog="promptlint",
        description="Find prompt-layout hazards that break the KV prefix cache, in tokens and blocks.",
    )
    parser.add_argument("--version", action="version", version=f"promptlint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else [only]:
        module = importlib.import_module(f"promptlint.commands.{name}")
        module.add_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None, daemon_asked: bool = False) -> int:
    """``daemon_asked``: the front door (promptlint/__main__.py) already asked the daemon, which
    did not answer: a `check` runs in this process."""
    from promptlint.doors.line_guard import guarded

    with guarded():  # every line on stdout and stderr through one escaping step (promptlint/doors/line_guard.py)
        return _main(argv, daemon_asked)


def _main(argv: Optional[List[str]] = None, daemon_asked: bool = False) -> int:
    first = (sys.argv[1:] if argv is None else argv)[:1]
    parser = build_parser(first[0] if first and first[0] in COMMANDS else None)
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the subcommand's parser: its usage, and the options a typo was close to
        commands = parser._subparsers._group_actions[0].choices if parser._subparsers else {}
        commands.get(getattr(args, "command", None), parser).error("unrecognized arguments: " + " ".join(extra))
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_ERROR
    module = importlib.import_module(f"promptlint.commands.{args.command}")
    import contextvars

    # A context of its own: what the command sets in context variables (untrusted mode's read
    # policy, an installed tokenizer pool) lasts one command, also for in-process callers.
    return contextvars.copy_context().run(_run, module, args, argv, daemon_asked)


def _run(module, args, argv, daemon_asked: bool = False) -> int:
    def command() -> int:
        if args.command == "check" and not daemon_asked and not _untrusted(args):  # a running daemon answers for this project (docs/performance.md)
            from promptlint.daemon.client import forward_check

            forwarded = forward_check(sys.argv[1:] if argv is None else argv, args)
            if forwarded is not None:
                return forwarded
        return module.run(args)

    return _handled(command, sys.stderr, os.environ)


def _handled(command, err, environ) -> int:
    """``command()``'s exit code; a usage error, ^C, a closed pipe or a bug is one line on ``err``."""
    try:
        return command()
    except UsageError as e:
        from promptlint.doors.line_guard import one_line

        print(f"promptlint: error: {one_line(e)}", file=err)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("promptlint: interrupted", file=err)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as e:  # never a bare traceback for users (a native panic is a BaseException); PROMPTLINT_DEBUG=1 shows it
        if environ.get("PROMPTLINT_DEBUG"):
            raise
        from promptlint.doors.line_guard import one_line

        if _input_error(e):  # a tokenizer that cannot be used or crashed on its input: the input's fault
            print(f"promptlint: error: {one_line(e)}", file=err)
            return EXIT_ERROR
        print(
            f"promptlint: internal error: {type(e).__name__}: {one_line(e)} (a bug: please report it; "
            "PROMPTLINT_DEBUG=1 shows the traceback)",
            file=err,
        )
        return EXIT_ERROR


def serve_check(argv: List[str], console, workspace, environ, columns: Optional[int] = None) -> int:
    """A `check` the daemon was asked for, run in its resident ``workspace`` with the request's
    ``console`` (its streams and stdin) and ``environ`` (read, never installed): the exit code.
    Nothing of the process (sys.std*, os.environ) is swapped; argparse's messages go to the console,
    wrapped to the client's terminal ``columns`` (a usage error reads as it would in the client)."""
    from promptlint.commands import check

    parser = _served_parser()
    token = _SERVED.set((console, columns))
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            parser._subparsers._group_actions[0].choices["check"].error("unrecognized arguments: " + " ".join(extra))
    except SystemExit as e:  # --help, or a usage error argparse printed
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_ERROR)
    finally:
        _SERVED.reset(token)
    if getattr(args, "command", None) != "check":
        print("promptlint: error: the daemon runs `check` only", file=console.err)
        return EXIT_ERROR
    return _handled(lambda: check.run(args, console, workspace), console.err, environ)


# The request a served parser is parsing for: (its console, its terminal's columns). Set around one
# parse (serve_check); the parser itself is built once per process (_served_parser).
_SERVED = contextvars.ContextVar("promptlint_served_request", default=(None, None))


class _ServedParser(_Parser):
    """A daemon request's parser: argparse's messages go to the request's console, wrapped to its
    client's terminal columns (a usage error reads as it would in the client)."""

    def _print_message(self, message, file=None):
        console, _ = _SERVED.get()
        if console is None:  # not parsing a request (argparse formats while the parser is built)
            return super()._print_message(message, file)
        if message:
            (console.out if file is sys.stdout else console.err).write(message)

    def _get_formatter(self):
        _, columns = _SERVED.get()
        if not columns:
            return super()._get_formatter()
        return self.formatter_class(prog=self.prog, width=columns - 2)  # HelpFormatter's default: the terminal's columns - 2


@functools.lru_cache(maxsize=1)
def _served_parser() -> argparse.ArgumentParser:
    """`check`'s parser for daemon requests, built once (~1.5 ms a request): parsing leaves a parser
    as it was (append actions copy their default list), and what a request changes is its console."""
    return build_parser("check", _ServedParser)


def _input_error(e: BaseException) -> bool:
    """A tokenizer the command was given that cannot be used, or that crashed on the input (its
    module is loaded when one was raised, so this imports nothing)."""
    tokens = sys.modules.get("promptlint.tokenization.tokens")
    if tokens is not None and isinstance(e, (tokens.TokenizerError, tokens.TokenizerCrashed, tokens.TokenizerUnvetted)):
        return True
    return type(e).__name__ == "PanicException"  # pyo3's, from a tokenizer called directly


def _untrusted(args) -> bool:
    from promptlint.commands.options import untrusted_wanted

    return untrusted_wanted(args)


def entry(daemon_asked: bool = False) -> None:
    """The `promptlint` command after its front door (promptlint/__main__.py): ``main()``, then for
    `check` a quick exit once the output is flushed (daemon/client.hard_exit). Other commands may
    have exit hooks to run (Ray's shutdown in `audit --ray`) and exit normally."""
    argv = sys.argv[1:]
    code = main(daemon_asked=daemon_asked)
    keep = sys.modules.get("promptlint.project.dataclass_code")
    if keep is not None:  # installed by the front door (check, server)
        keep.save()
    if argv[:1] != ["check"]:
        raise SystemExit(code)
    from promptlint.daemon.client import hard_exit

    hard_exit(code)
