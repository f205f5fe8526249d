"""The warm daemon (as mypy's dmypy): one process per project root and installation keeps the
tokenizers and promptlint's modules loaded; `promptlint check` forwards its argv to it over a Unix
socket. Only the user turns it on (client.py); `identity` says which installation it serves.

`protocol` (frames, the socket's place) and `client` stand below `cli`, which calls the client;
`server` stands above it (it runs `cli.main` per request) and is started as a separate process
(`python -I`, module `promptlint.daemon`), so nothing imports it back.
"""
