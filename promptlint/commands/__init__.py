"""Subcommands: each module has add_parser(subparsers) and run(args) -> exit code.

Module top levels import the standard library only (`--help` must stay fast). The exit codes
and ``UsageError`` live here, below both the commands and ``promptlint.cli`` (which loads the
commands by name), so imports run one way: cli -> commands.
"""

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class UsageError(Exception):
    """A usage, configuration or tokenizer problem: one line on stderr, exit 2."""
