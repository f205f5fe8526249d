"""Shared fixtures for the chat-template tests: corpus templates paired with local tokenizers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict

DATA = Path(__file__).parent / "data"
TEMPLATES = DATA / "chat_templates"
TOKENIZERS = DATA / "tokenizers"
META = json.loads((TEMPLATES / "meta.json").read_text(encoding="utf-8"))["templates"]

# llama3's tokenizer may not be copied (licence): Llama-family templates use a stand-in for the text check.
STAND_IN = {"llama3": "qwen2.5"}


def template_names():
    return sorted(META)


def tokenizer_name(template: str) -> str:
    name = META[template]["corpus_tokenizer"]
    return STAND_IN.get(name, name)


def special_tokens(template: str) -> Dict[str, str]:
    meta = META[template]
    out = {}
    for key, meta_key in (("bos_token", "bos"), ("eos_token", "eos"), ("pad_token", "pad")):
        if meta.get(meta_key):
            out[key] = meta[meta_key]
    return out


_FILES: Dict[str, Path] = {}


def tokenizer_file(template: str, workdir: Path) -> Path:
    """The template's tokenizer.json. Special tokens that the corpus templates of this tokenizer
    name but its vocabulary lacks (stand-ins) are added once, as transformers would add them."""
    from tokenizers import AddedToken, Tokenizer

    name = tokenizer_name(template)
    if name in _FILES:
        return _FILES[name]
    original = TOKENIZERS / name / "tokenizer.json"
    wanted = sorted({v for t in META if tokenizer_name(t) == name for v in special_tokens(t).values()})
    tok = Tokenizer.from_file(str(original))
    missing = [s for s in wanted if tok.token_to_id(s) is None]
    target = original
    if missing:
        target = workdir / "tokenizers" / name / "tokenizer.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in missing])
        tok.save(str(target))
    _FILES[name] = target
    return target


def model_dir(template: str, workdir: Path, as_config: bool = True) -> Path:
    """A model directory: tokenizer.json (symlink) + tokenizer_config.json with the template."""
    d = workdir / "models" / template.replace(".jinja", "")
    if d.is_dir():
        return d
    d.mkdir(parents=True)
    os.symlink(tokenizer_file(template, workdir).resolve(), d / "tokenizer.json")
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    config = {**special_tokens(template), "tokenizer_class": "PreTrainedTokenizerFast"}
    if as_config:
        config["chat_template"] = text
    else:
        (d / "chat_template.jinja").write_text(text, encoding="utf-8")
    (d / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False), encoding="utf-8")
    return d
