"""A `python -c` script that runs promptlint's real entry point with ``argv`` and, at its quick exit,
writes ``MODULES <json list>`` on stderr: the modules the run imported (not those the
interpreter's start had: an editable install's path finder imports pathlib from a .pth file)."""

from __future__ import annotations

import json

_PROBE = r"""
import os, sys
start = set(sys.modules)
real = os._exit
def report(code):
    modules = sorted(set(sys.modules) - start)
    import json  # after the count: whether the run imported json is a question
    sys.stderr.write("MODULES " + json.dumps(modules) + "\n")
    sys.stderr.flush()
    real(code)
os._exit = report
sys.argv = ["promptlint"] + ARGV
from promptlint.__main__ import entry
entry()
"""


def probe(*argv: str) -> str:
    return _PROBE.replace("ARGV", json.dumps(list(argv)))


def imported(stderr: str) -> list:
    return json.loads(stderr.rsplit("MODULES ", 1)[1])
