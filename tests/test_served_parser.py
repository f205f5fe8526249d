"""A daemon's `check` parser is built once per process (cli._served_parser) and each request's
argparse messages still go to that request's console, wrapped to its own terminal's columns."""

from __future__ import annotations

import io

from promptlint import cli
from promptlint.commands.check import Console


def _serve(argv, columns):
    out, err = io.StringIO(), io.StringIO()
    code = cli.serve_check(["check", *argv], Console(out, err, io.BytesIO(), environ={}, cwd="."), None, {}, columns)
    return code, out.getvalue(), err.getvalue()


def test_one_parser_serves_every_request_with_its_own_console_and_columns(monkeypatch):
    cli._served_parser.cache_clear()
    built = []
    real = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda *a, **k: built.append(a) or real(*a, **k))
    wide = _serve(["--output-format", "nope"], 200)
    narrow = _serve(["--output-format", "nope"], 40)
    assert len(built) == 1  # built for the first request, reused by the second
    for code, out, err in (wide, narrow):
        assert code == 2 and out == "" and "invalid choice: 'nope'" in err
    # argparse wraps the usage to each request's columns (HelpFormatter: columns - 2): the narrow
    # request's usage takes more lines than the wide one's, though the parser is the same object
    usage = [len([line for line in err.splitlines() if not line.startswith("promptlint check: error")])
             for _, _, err in (wide, narrow)]
    assert usage[0] < usage[1]
    assert max(len(line) for line in wide[2].splitlines()[:-1]) > 80  # wider than the 80-column default
    help_code, help_out, help_err = _serve(["--help"], 80)
    assert help_code == 0 and help_out.startswith("usage: promptlint check") and help_err == ""
