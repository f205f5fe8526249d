"""Chat-template sources: a `.jinja` file, a `tokenizer_config.json`, or a model directory.

transformers reads the template from `chat_template.jinja` when a model directory has one
(5.x; named extras in `chat_templates/<name>.jinja`), else from the `chat_template` key of
`tokenizer_config.json`: a string, or a list of ``{"name", "template"}`` entries. The
special-token strings (``bos_token``...) come from `tokenizer_config.json`, as plain strings
or ``{"content": ...}`` objects.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from promptlint.doors import bounded_io
from promptlint.render import clip
from promptlint.render.files import MAX_TEMPLATE_BYTES, FileRefused, decode_template, read_confined, real_roots
from promptlint.tokenization.tokens import special_tokens_of

CONFIG_NAME = "tokenizer_config.json"
TEMPLATE_FILE = "chat_template.jinja"
TEMPLATES_DIR = "chat_templates"
# transformers 5.x `special_tokens_map`: the named string tokens only

# how a template walks the conversation: `for m in messages`, `messages[0]`, `messages|selectattr`
_USE = r"\bin\s+{0}\b|\b{0}\s*\[|\b{0}\s*\|"
_MESSAGES_USE = re.compile(_USE.format("messages"))
# `{% set loop_messages = messages %}`, `{%- set msgs = messages[1:] %}`: a name bound to the messages
_ALIAS = re.compile(r"\{%-?\s*set\s+([A-Za-z_]\w{0,80})\s*=\s*([^%]{0,400}?)-?%\}")
# what only a chat template reads (the renderer of a chat request passes these)
_CHAT_MARKERS = re.compile(r"\b(?:add_generation_prompt|bos_token|eos_token|raise_exception|strftime_now)\b")


class SourceError(Exception):
    def __init__(self, path: Path, message: str, code: str = "E005"):
        super().__init__(message)
        self.path = path
        self.message = message
        self.code = code


@dataclass
class ChatSource:
    """One chat template (or a set of named ones) and what transformers passes beside it."""

    path: Path  # the file findings point at (the .jinja file or tokenizer_config.json)
    templates: Dict[str, str]  # name -> template text; a single template is named "default"
    special_tokens: Dict[str, str] = field(default_factory=dict)
    additional_special_tokens: List[str] = field(default_factory=list)  # 4.x passes these too
    embedded: Dict[str, str] = field(default_factory=dict)  # name -> JSON key path, when inside JSON
    model_dir: Optional[Path] = None  # the model directory, when there is one (its tokenizer)
    single: bool = True  # one template (not a dict of named templates)

    def select(self, has_tools: bool) -> str:
        """transformers' `get_chat_template`: `tool_use` when tools are given, else `default`."""
        if self.single:
            return "default"
        if has_tools and "tool_use" in self.templates:
            return "tool_use"
        if "default" in self.templates:
            return "default"
        raise SourceError(
            self.path,
            "this model has several chat templates and none is named `default`: "
            f"available {', '.join(sorted(self.templates)[:20])}" + (", ..." if len(self.templates) > 20 else ""),
            "E002",
        )


def looks_like_chat_template(text: str) -> bool:
    """A `.jinja` file that walks the messages (directly or through a name bound to them, as
    `{% set loop_messages = messages %}`) and reads roles or what a chat renderer passes
    (`add_generation_prompt`, `bos_token`, ...): a chat template."""
    return walks_messages(text) and ("role" in text or bool(_CHAT_MARKERS.search(text)))


def is_chat_template_anywhere(text: str) -> bool:
    """Any Jinja file (`.j2`, `.jinja2` too) that walks the messages and asks whether to add the
    generation prompt: only a chat template is rendered with `add_generation_prompt`."""
    return walks_messages(text) and "add_generation_prompt" in text


def walks_messages(text: str) -> bool:
    """Whether ``text`` iterates, indexes or filters `messages` or a name bound to it (aliases of
    aliases too; bounded: at most 20 names)."""
    if _MESSAGES_USE.search(text):
        return True
    names, bound = ["messages"], [(m.group(1), m.group(2)) for m in _ALIAS.finditer(text)]
    grew = True
    while grew and len(names) < 20:
        grew = False
        for name, value in bound:
            if name not in names and any(re.search(r"\b%s\b" % known, value) for known in names):
                names.append(name)
                grew = True
                if re.search(_USE.format(re.escape(name)), text):
                    return True
    return False


def is_model_dir(path: Path) -> bool:
    # bounded_io's predicates never raise (a path too long to stat is simply not a model directory)
    return (bounded_io.is_directory(path) and bounded_io.is_regular_file(path / "tokenizer.json")
            and bounded_io.is_regular_file(path / CONFIG_NAME))


def handles(path: Path) -> bool:
    if bounded_io.is_directory(path):
        return is_model_dir(path)
    if path.name == CONFIG_NAME or path.name == TEMPLATE_FILE:
        return True
    # A `.jinja` file is a bare chat template when it walks the messages (the Hugging Face
    # convention); `.prompt` files are application templates, and so is any file whose samples
    # file has [variables].
    # A `.j2`/`.jinja2` file is one only when it does what only a chat template does (walks the
    # messages and reads `add_generation_prompt`).
    if path.suffix in (".jinja", ".j2", ".jinja2") and ".samples." not in path.name and not _has_app_samples(path):
        try:
            head = bounded_io.read_prefix(path, 200_000).decode("utf-8", "replace")
        except OSError:
            return False
        return looks_like_chat_template(head) if path.suffix == ".jinja" else is_chat_template_anywhere(head)
    return False


def _has_app_samples(path: Path) -> bool:
    stem = path.name.rsplit(".", 1)[0]
    for suffix in (".samples.toml", ".samples.json"):
        sidecar = path.with_name(stem + suffix)
        try:
            text = bounded_io.read_text(sidecar, errors="replace")
        except OSError:
            continue
        return "variables" in text
    return False


def model_roots(directory: Path) -> tuple:
    """Where the files of a model directory may resolve to: the directory itself, and for a
    Hugging Face hub snapshot (`models--org--name/snapshots/<rev>/`, files linked into
    `../../blobs/`) that blobs directory. A link anywhere else is refused."""
    roots = [directory]
    if directory.absolute().parent.name == "snapshots":
        roots.append(directory.absolute().parent.parent / "blobs")
    return real_roots(roots)


def _user_named(path: Path) -> tuple:
    """A file the user named is read where it is (its real directory)."""
    return real_roots([Path(os.path.realpath(path)).parent])


def _read(path: Path, roots: tuple, limit: int) -> bytes:
    try:
        return read_confined(str(path), roots, limit, path.name, roots_name="its directory")
    except FileRefused as e:
        raise SourceError(path, e.message, e.code) from None


def read_template(path: Path, roots: tuple) -> str:
    try:
        return decode_template(_read(path, roots, MAX_TEMPLATE_BYTES), path.name)
    except FileRefused as e:
        raise SourceError(path, e.message, e.code) from None


def read_config(path: Path, roots: Optional[tuple] = None) -> Dict[str, Any]:
    """A tokenizer_config.json, inside ``roots`` (default: its model directory's)."""
    data = _read(path, model_roots(path.parent) if roots is None else roots, bounded_io.MAX_TOKENIZER_BYTES)
    try:
        data = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise SourceError(path, f"invalid {path.name}: not JSON ({clip(e)})", "E005") from None
    if not isinstance(data, dict):
        raise SourceError(path, f"invalid {path.name}: expected a JSON object")
    return data


def _additional(config: Dict[str, Any]) -> List[str]:
    out = []
    for value in config.get("additional_special_tokens") or []:
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            out.append(value)
    return out


def _templates_from_config(path: Path, config: Dict[str, Any]):
    raw = config.get("chat_template")
    if raw is None:
        return None
    if isinstance(raw, str):
        return {"default": raw}, {"default": "chat_template"}, True
    if isinstance(raw, list):
        templates, keys = {}, {}
        for i, entry in enumerate(raw):
            if not (isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("template"), str)):
                raise SourceError(path, f"invalid chat_template[{i}] in {path.name}: expected {{\"name\", \"template\"}}")
            templates[entry["name"]] = entry["template"]
            keys[entry["name"]] = f"chat_template[{i}].template"
        return templates, keys, False
    raise SourceError(path, f"invalid chat_template in {path.name}: expected a string or a list of named templates")


def load_source(path: Path, text: Optional[str] = None) -> ChatSource:
    """The chat template(s) of ``path`` (a .jinja file, a tokenizer_config.json or a model dir)."""
    path = Path(path)
    if path.is_dir():
        return _from_model_dir(path)
    if path.name == CONFIG_NAME:
        config = json.loads(text) if text is not None else read_config(path, _user_named(path))
        if path.parent.joinpath(TEMPLATE_FILE).is_file() and text is None:
            pass  # the config file was named explicitly: lint its own template
        found = _templates_from_config(path, config)
        if found is None:
            raise SourceError(path, f"{path.name} has no `chat_template`", "E005")
        templates, keys, single = found
        return ChatSource(path, templates, special_tokens_of(config), _additional(config), keys, None, single)
    # a .jinja template: special tokens from a tokenizer_config.json beside it, if any
    if text is None:  # a file the user named: read where it is
        text = read_template(path, _user_named(path))
    config_path = path.parent / CONFIG_NAME
    config = read_config(config_path) if config_path.is_file() else {}
    model_dir = path.parent if is_model_dir(path.parent) else None
    return ChatSource(path, {"default": text}, special_tokens_of(config), _additional(config), {}, model_dir, True)


def _from_model_dir(directory: Path) -> ChatSource:
    roots = model_roots(directory)
    config_path = directory / CONFIG_NAME
    config = read_config(config_path, roots)
    specials, extra = special_tokens_of(config), _additional(config)
    template_file = directory / TEMPLATE_FILE
    if template_file.is_file():
        named = {"default": read_template(template_file, roots)}
        extra_dir = directory / TEMPLATES_DIR
        if extra_dir.is_dir():
            for f in sorted(extra_dir.glob("*.jinja")):
                named[f.stem] = read_template(f, roots)
        src = ChatSource(template_file, named, specials, extra, {}, directory, len(named) == 1)
        return src
    found = _templates_from_config(config_path, config)
    if found is None:
        raise SourceError(config_path, f"no chat template in {directory}: neither {TEMPLATE_FILE} nor `chat_template` in {CONFIG_NAME}")
    templates, keys, single = found
    return ChatSource(config_path, templates, specials, extra, keys, directory, single)


def json_line_of_key(file_text: str, key: str = "chat_template") -> int:
    """1-based line of ``"key"`` in a JSON text (1 when not found)."""
    i = file_text.find(f'"{key}"')
    return file_text.count("\n", 0, i) + 1 if i >= 0 else 1
