"""What a run holds in memory and may hand to the next one: the tokenizer pool (pools/tokenizers.py).

A pool is an object a ``Workspace`` (promptlint/driver/workspace.py) owns and installs for the
length of a run; no module keeps a pool of its own.
"""
