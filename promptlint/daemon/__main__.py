"""`python -m promptlint.daemon ROOT SOCKET IDLE_SECONDS`: the daemon process (see server.py)."""

import sys

if __name__ == "__main__":  # importing the module (the architecture tests walk every module) starts nothing
    from promptlint.daemon.server import main

    sys.exit(main(sys.argv[1:]))
