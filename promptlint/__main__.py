"""`python -m promptlint` and the `promptlint` command (pyproject's console script).

The front door: a `check` this user's daemon answers is forwarded with its raw argv before
argparse, the command modules or the reporters are imported (daemon/client.forward_argv); the
daemon's parser reports a usage error as this process would. Everything else, and a `check` the
raw argv cannot decide, runs through ``cli.main``.
"""

import sys


def entry() -> None:
    argv = sys.argv[1:]
    forwarded = None
    if argv[:1] == ["check"]:
        import gc

        # A check is a batch run that ends without teardown. Its start imports ~280 modules whose
        # objects all survive, and the default thresholds (700, 10, 10) made ~50 young and several
        # middle collections traverse them: ~10% of a one-template run. Fewer, larger young
        # collections (mypy's setting) still free the cycles a run makes as it goes.
        gc.set_threshold(200_000, 30, 30)
        from promptlint.daemon import client

        forwarded = client.forward_argv(argv)
        if isinstance(forwarded, int):
            client.hard_exit(forwarded)
    if argv[:1] in (["check"], ["server"]):
        from promptlint.project import dataclass_code

        # A check run here, and the language server's first diagnostics: their ~50 dataclasses take
        # their generated methods' code from the user cache instead of compiling it again
        # (cli.entry keeps what this process compiled).
        dataclass_code.install()
    from promptlint import cli

    cli.entry(daemon_asked=forwarded is not None)


if __name__ == "__main__":
    entry()
