"""Conversations: what an SDK really sent, request after request (`promptlint conversation`, the
pytest plugin).

The pipeline, one module per step: ``capture`` (the record of one sent request), ``readers``
(JSON Lines, HAR 1.2 and OTLP JSON captures into records, one error line per bad record),
``grouping`` (records into conversations), ``shapes`` (a body as its provider builds the prompt:
model, tools, system, messages, the parameters that reach the prompt), ``fields`` (the first
field that broke the prefix, and its family), ``render`` (a body's prompt text, tokens and
breakpoint positions), ``reuse`` (each provider's or engine's own rule for what it reuses),
``analysis`` (figures and findings per request), ``report`` (the summary and JSON), ``plugin``
(the pytest plugin that records requests sent through httpx), ``bodies`` (its recorded bodies parsed,
a conversation's repeated history once).
"""
