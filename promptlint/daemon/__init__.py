"""The warm daemon (as mypy's dmypy): one process per project root keeps the tokenizers and
promptlint's modules loaded; `promptlint check` forwards its argv to it over a Unix socket.

`protocol` (frames, the socket's place) and `client` stand below `cli`, which calls the client;
`server` stands above it (it runs `cli.main` per request) and is started as a separate process
(`python -m promptlint.daemon`), so nothing imports it back.
"""
