"""Subcommands: each module has add_parser(subparsers) and run(args) -> exit code.

Module top levels import the standard library only (`--help` must stay fast).
"""
