"""Shared fixtures for the chat-template tests: corpus templates paired with local tokenizers."""

from __future__ import annotations

import json
import os
import re
from collections import OrderedDict
from pathlib import Path
from typing import Dict, Optional

DATA = Path(__file__).parent / "data"
TEMPLATES = DATA / "chat_templates"
TOKENIZERS = DATA / "tokenizers"
META = json.loads((TEMPLATES / "meta.json").read_text(encoding="utf-8"))["templates"]

# llama3's tokenizer may not be copied (licence): Llama-family templates use a stand-in for the text check.
STAND_IN = {"llama3": "qwen2.5"}
# The real tokenizers behind the stand-in templates add their BOS in the post-processor (Llama 3, Hermes 3,
# Gemma, Command R; not Granite): the stand-in does the same, so the completions path doubles it as it would.
STAND_IN_ADDS_BOS = ("<|begin_of_text|>", "<bos>", "<BOS_TOKEN>")
# Control tokens a stand-in (or not-exact-fit) template writes (`<|start_header_id|>`, `<|START_RESPONSE|>`, `<start_of_turn>`):
# special tokens in the real vocabularies, so the stand-in gets them too (else BPE merges across them).
_CONTROL = re.compile(r"<\|[A-Za-z_]+\|>|<(?:start|end)_of_turn>")


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
# Where the derived tokenizer files go: the session's directory shared by the xdist workers (set by
# tests/conftest.py), so each is built once per test run, not once per worker; else the caller's workdir.
SHARED_DIR: Optional[Path] = None


def stand_in_bos(template: str) -> str:
    """The BOS a stand-in tokenizer's post-processor adds for ``template`` ("" when none)."""
    meta = META[template]
    if tokenizer_name(template) == meta["corpus_tokenizer"]:
        return ""
    return meta.get("bos") if meta.get("bos") in STAND_IN_ADDS_BOS else ""


def tokenizer_file(template: str, workdir: Path) -> Path:
    """The template's tokenizer.json. Special tokens that the corpus templates of this tokenizer
    name but its vocabulary lacks (stand-ins) are added once, as transformers would add them; a
    stand-in also gets the control tokens its templates write and the real tokenizer's BOS post-processor."""
    name = tokenizer_name(template)
    key = f"{name}+{stand_in_bos(template)}"
    if key not in _FILES:
        made = _made(key, workdir)
        if made is None:
            _derive(name, workdir)
            made = _made(key, workdir)
        _FILES[key] = made
    return _FILES[key]


def _directory(key: str, workdir: Path) -> Path:
    return (SHARED_DIR or workdir) / "tokenizers" / key.replace("|", "_").replace("<", "").replace(">", "")


def _made(key: str, workdir: Path) -> Optional[Path]:
    """The file of ``key`` when this or another test process of the run made it (each is written whole)."""
    directory = _directory(key, workdir)
    if (directory / "tokenizer.json").is_file():
        return directory / "tokenizer.json"
    if (directory / "original").is_file():  # nothing to add: the original file itself
        return TOKENIZERS / key.split("+", 1)[0] / "tokenizer.json"
    return None


def _derive(name: str, workdir: Path) -> None:
    """Every stand-in file of tokenizer ``name`` (one per BOS its templates' post-processor adds), from
    one parse of the original (a 150k vocabulary parses in 0.5-2 s): the missing special tokens are
    the same for all of them; each BOS variant then sets a post-processor of its own, "" first (the
    original's)."""
    from tokenizers import AddedToken, Tokenizer, processors

    users = [t for t in META if tokenizer_name(t) == name]
    wanted = {v for t in users for v in special_tokens(t).values()}
    for t in users:
        if not META[t].get("tokenizer_is_exact_fit") or tokenizer_name(t) != META[t]["corpus_tokenizer"]:
            wanted |= set(_CONTROL.findall((TEMPLATES / t).read_text(encoding="utf-8")))
    tok = Tokenizer.from_file(str(TOKENIZERS / name / "tokenizer.json"))
    missing = sorted(s for s in wanted if tok.token_to_id(s) is None)
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in missing])
    for bos in sorted({stand_in_bos(t) for t in users}):  # "" first: the original post-processor
        directory = _directory(f"{name}+{bos}", workdir)
        directory.mkdir(parents=True, exist_ok=True)
        if not (missing or bos):
            (directory / "original").touch()
            continue
        if bos:
            template_processing = processors.TemplateProcessing(
                single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tok.token_to_id(bos))]
            )
            tok.post_processor = processors.Sequence([processors.ByteLevel(trim_offsets=False), template_processing])
        partial = directory / f"tokenizer.json.{os.getpid()}.part"
        tok.save(str(partial))
        os.replace(partial, directory / "tokenizer.json")  # whole or absent for another process


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



# `tokenizers`' own parse of a test tokenizer file, for the tests that check an index by a plain encode:
# one parse per file and test process (0.5-2 s for a 150k vocabulary), not one per check. A file of
# tests/data/tokenizers is tests/reference_tokenizers.py's parse (shared with the other tests); a derived
# stand-in file is held here, the few most recent only (a parsed 150k vocabulary is ~100 MB).
_PLAIN: "OrderedDict[Path, object]" = OrderedDict()
_PLAIN_KEEP = 3


def plain_tokenizer(path: Path):
    """The `tokenizers.Tokenizer` of ``path`` (a tokenizer.json or a symlink to one), for reading only
    (encode, token_to_id): a test that adds tokens parses its own."""
    from tokenizers import Tokenizer

    path = Path(path).resolve()
    if path.name == "tokenizer.json" and path.parent.parent == TOKENIZERS.resolve():
        from reference_tokenizers import reference

        return reference(path.parent.name)
    if path not in _PLAIN:
        _PLAIN[path] = Tokenizer.from_file(str(path))
        while len(_PLAIN) > _PLAIN_KEEP:
            _PLAIN.popitem(last=False)
    _PLAIN.move_to_end(path)
    return _PLAIN[path]
