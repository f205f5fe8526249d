"""promptlint: a prompt-layout linter for prefix-cache (KV cache) hazards.

Only the version lives here: `promptlint --version` must import nothing third-party.
"""

__version__ = "0.1.0"
