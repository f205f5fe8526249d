"""Prompt-building Python code: find prompt text, follow simple flow, report cache hazards.

One job per module:

- ``sinks``: what counts as a prompt sink (LLM client calls, message dicts) and as a
  volatile, serializing or unordered source;
- ``flow``: a module index and a small evaluator that follows values through local
  assignments, returns, parameters and module constants (docs/python.md);
- ``rules``: hazards reaching sinks -> findings, measuring literal prompts in tokens;
- ``fixes``: the safe fixes (``sort_keys=True``, ``sorted(...)``) as libcst codemods.

Analysis uses the standard library's ``ast`` (libcst's parser alone takes about a second
on a 2,000-line module); libcst is imported only by ``fixes``, when ``--fix``/``--diff``
rewrites a file, so formatting and comments survive.
"""
