"""The size caps on parsing and compiling a template, with the files it pulls in, together.

Jinja lexer tokens (the largest real chat template in tests/data has about 1,600) and characters
of generated Python handed to compile(), the one step no time limit can interrupt (measured in
docs/security.md: about 1 s and 150 MB per million). Not settings: a repository's configuration
may not raise them. ``render.Limits`` and each environment read them when made, so a caller may
pass smaller ones in a Limits and a test may lower them for a whole run.
"""

MAX_TEMPLATE_TOKENS = 200_000
MAX_COMPILED_CHARS = 3_000_000
