"""The language server for editors (`promptlint server`) and the strict LSP framing in front of it."""
