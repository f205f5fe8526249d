"""The terminal's width as ``shutil.get_terminal_size().columns`` gives it (COLUMNS, else the size
of the terminal on stdout, else 80), without importing shutil: argparse's HelpFormatter imports
it (and with it bz2 and lzma, ~10 ms) to learn this one number, for every option a parser adds."""

from __future__ import annotations

import os
import sys


def columns() -> int:
    try:
        value = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        value = 0
    if value > 0:
        return value
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80
