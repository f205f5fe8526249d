"""The `check` front door (promptlint/__main__.py, daemon/client.forward_argv): with a daemon
answering, the client forwards its raw argv before argparse, the command modules or the reporters
are imported, and a usage error comes back as the in-process parser prints it. Real daemon, real
subprocesses (the fixtures of test_daemon.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from test_daemon import TIMEOUT, env, run, start, status  # noqa: F401 - env is the fixture

# The real entry point, with os._exit wrapped to report what the process imported before exiting.
PROBE = r"""
import json, os, sys
real = os._exit
def report(code):
    sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\n")
    sys.stderr.flush()
    real(code)
os._exit = report
sys.argv = ["promptlint", "check", "--output-format", "concise", "--", "prompts"]
from promptlint.__main__ import entry
entry()
"""

# Modules a forwarded check must not pay for: the parser, the commands, the reporters (and the
# `inspect` their listing used), the settings dataclasses, the rule registry, the heavy libraries.
HEAVY = ("argparse", "promptlint.cli", "promptlint.commands", "promptlint.report", "inspect", "dataclasses",
         "promptlint.project.config", "promptlint.base.registry", "promptlint.base.records", "jinja2", "tokenizers",
         "jsonschema")


def test_a_forwarded_check_imports_no_parser_command_or_reporter(env):
    _, before = start(env)
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=env["root"], capture_output=True, text=True,
                       env=env["env"], timeout=TIMEOUT)
    assert r.returncode == 1 and "M101" in r.stdout, r.stderr  # examples/ has an M101 finding
    modules = json.loads(r.stderr.rsplit("MODULES ", 1)[1])
    assert [m for m in modules if m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY))] == []
    assert status(env)[1] == before + 1  # the daemon answered it


USAGE_ERRORS = [
    ("--output-format", "nope"),  # an invalid choice: the usage lines, then the error
    ("--bogus-option",),  # unrecognized, no close option
    ("--output-formt", "json"),  # unrecognized, with the close option named
    ("-j", "0"),  # the type's own message
    ("--select",),  # a missing value
]


def test_a_usage_error_through_the_daemon_prints_what_the_in_process_run_prints(env):
    # COLUMNS: the in-process parser wraps its usage lines to 120 columns; the daemon (its output a
    # log file, 80 columns) must wrap to the client's.
    wide = {"COLUMNS": "120"}
    direct = [run(env, "check", *args, extra=dict(wide, PROMPTLINT_DAEMON="0")) for args in USAGE_ERRORS]
    _, before = start(env)
    through = [run(env, "check", *args, extra=wide) for args in USAGE_ERRORS]
    assert status(env)[1] == before + len(USAGE_ERRORS)  # each one was parsed by the daemon
    assert through == direct
    assert all(rc == 2 and out == b"" for rc, out, _ in direct)
    usage = direct[0][2].decode()
    assert usage.startswith("usage: promptlint check [-h]") and max(map(len, usage.splitlines()[:-1])) > 80
    assert direct[2][2].decode().splitlines()[-1].endswith("(--output-formt: did you mean --output-format?)")


def test_an_argv_the_raw_scan_cannot_decide_is_parsed_first(env):
    """`--no-d` is argparse's abbreviation of --no-daemon: in-process, the daemon not asked."""
    _, before = start(env)
    direct = run(env, "check", "--no-daemon", "--output-format", "concise")
    assert run(env, "check", "--no-d", "--output-format", "concise") == direct
    assert direct[0] == 1 and status(env)[1] == before


def test_building_the_parser_imports_no_shutil():
    """argparse's HelpFormatter imports shutil (and bz2, lzma) for the terminal's width on every
    add_argument; the parsers take the same width from promptlint.base.terminal instead. The help
    text itself is unchanged (test_cli's help tests; the width below)."""
    code = ("import sys\nfrom promptlint import cli\nparser = cli.build_parser()\n"
            "print(sorted(m for m in ('shutil', 'bz2', 'lzma') if m in sys.modules))\n"
            "print(max(len(line) for line in parser.format_help().splitlines()))")
    from conftest import REPO
    import os

    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="60")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    imported, widest = r.stdout.split("\n")[:2]
    assert imported == "[]"
    assert int(widest) <= 58  # wrapped to COLUMNS - 2, as HelpFormatter's own default
