"""`promptlint daemon start|stop|status|restart`: the warm daemon `check` forwards to (as dmypy)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser(
        "daemon",
        help="start, stop or inspect the warm daemon that answers `check` for this project",
        description="One daemon per project root (the closest configuration file's directory, else the current "
        "directory) and installation keeps tokenizers and modules loaded; `promptlint check` forwards to it when it "
        "runs. Never in CI (CI or GITHUB_ACTIONS set).",
    )
    p.add_argument("action", choices=["start", "stop", "status", "restart"])
    p.add_argument("--idle-timeout", type=float, default=None, metavar="SECONDS",
                   help="exit after this long without a request (default: 900)")


def run(args) -> int:
    import sys

    from promptlint.commands import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
    from promptlint.daemon import client, protocol

    root, _ = client.project()
    if args.action in ("start", "restart") and client.in_ci():
        raise UsageError("no daemon in CI (CI or GITHUB_ACTIONS is set): `promptlint check` runs in its own process there")
    if args.action in ("start", "restart") and protocol.socket_path(root, create=True) is None:
        raise UsageError("no private directory for the daemon's socket (set XDG_RUNTIME_DIR to a directory only you can enter)")
    idle = client.DEFAULT_IDLE if args.idle_timeout is None else args.idle_timeout
    if idle <= 0:
        raise UsageError("--idle-timeout must be a positive number of seconds")
    running = client.status(root)
    if args.action == "status":
        if not running:
            print(f"Daemon not running for {root}.")
            return EXIT_FINDINGS
        print(f"Daemon running for {running['root']}: pid {running['pid']}, {running['requests']} requests, "
              f"{running.get('parses', 0)} tokenizer parses, {running.get('tokenizers_held', 0)} tokenizers held, up {running['uptime']} s, idle timeout {running['idle_timeout']} s.")
        return EXIT_OK
    if args.action in ("stop", "restart"):
        if running:
            client.stop(root)
            print(f"Daemon stopped (pid {running['pid']}).")
        elif args.action == "stop":
            print(f"Daemon not running for {root}.")
        if args.action == "stop":
            return EXIT_OK
    elif running:
        print(f"Daemon already running for {root} (pid {running['pid']}).")
        return EXIT_OK
    started = client.start(root, idle)
    if not started:
        print(f"promptlint: error: the daemon for {root} did not start (see {protocol.socket_path(root).with_suffix('.log')})", file=sys.stderr)
        return EXIT_ERROR
    print(f"Daemon started for {root} (pid {started['pid']}).")
    return EXIT_OK
