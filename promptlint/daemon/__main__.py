"""`promptlint.daemon ROOT SOCKET IDLE_SECONDS` run as the main module: the daemon process (see
server.py). The client starts it isolated (`python -I`, promptlint.doors.interpreters.command)."""

import sys

if __name__ == "__main__":  # importing the module (the architecture tests walk every module) starts nothing
    from promptlint.daemon.server import main

    sys.exit(main(sys.argv[1:]))
