"""transformers' tokenizer of a corpus chat template, for the tests that render with it as the
independent renderer (tests/test_chat_fidelity.py, tests/test_chat_findings.py): each tokenizer file
parsed once per test process (0.5-2 s for a 150k vocabulary), not once per test module or template.
A template's special tokens and chat template are set on it at each call, so a caller gets the
tokenizer a fresh parse with that template's settings gives; rendering and encoding change nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

from chat_helpers import special_tokens

_PARSED: Dict[Path, object] = {}


def hf_tokenizer(path: Path, template: str, chat_template: str):
    from transformers import PreTrainedTokenizerFast

    path = Path(path).resolve()
    if path not in _PARSED:
        _PARSED[path] = PreTrainedTokenizerFast(tokenizer_file=str(path))
    tok = _PARSED[path]
    specials = special_tokens(template)
    for key in ("bos_token", "eos_token", "pad_token"):
        setattr(tok, key, specials.get(key))
    tok.chat_template = chat_template
    return tok
