"""`python -m promptlint.daemon ROOT SOCKET IDLE_SECONDS`: the daemon process (see server.py)."""

import sys

from promptlint.daemon.server import main

sys.exit(main(sys.argv[1:]))
