"""Token ids for log rows that carry none: re-render the captured messages with the pinned
chat template and tokenize with the pinned tokenizer. Rows get ``tokens_source=derived``.

This is a plain sandboxed render in the manner of transformers' ``apply_chat_template``
(trim_blocks, lstrip_blocks, ``add_generation_prompt``); the full renderer of the
chat-template issue replaces it when available. The rendered text never leaves this
function.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional


def make_deriver(tokenizer_path: str, template_path: str, sha256: Optional[str] = None) -> Callable[[Dict[str, Any]], Optional[List[int]]]:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from promptlint import tokens

    tok = tokens.load(tokens.resolve(tokenizer_path, sha256))
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])

    def raise_exception(msg: str) -> None:
        raise ValueError(msg)

    env.globals["raise_exception"] = raise_exception
    with open(template_path, encoding="utf-8") as f:
        template = env.from_string(f.read())
    special = tok.special_tokens

    def derive(inputs: Dict[str, Any]) -> Optional[List[int]]:
        try:
            text = template.render(messages=inputs.get("messages") or [], tools=inputs.get("tools"),
                                   add_generation_prompt=True, **special)
        except Exception:  # a row that does not render is left usage-only
            return None
        return tok.encode(text, add_special_tokens=False).ids

    return derive
