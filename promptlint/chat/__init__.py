"""Hugging Face chat templates: where they come from, how a request reaches them, scenarios.

- ``source``: a `.jinja` chat template, a `tokenizer_config.json` (one template or named
  ones), or a model directory; the special-token strings the template receives.
- ``request``: what `apply_chat_template` (transformers 5.x / 4.x) and vLLM's OpenAI server
  do to messages, tools and kwargs before the template sees them.
- ``scenarios``: built-in conversations and chat samples files.
- ``run``: renders + tokenizes scenarios for the checks (a ``TemplateRun`` for chats).
"""
