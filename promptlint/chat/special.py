"""Special tokens of a chat template checked without its model directory.

- ``from_tokenizer``: a bare `.jinja` file with `--tokenizer tokenizer.json` and no
  tokenizer_config.json still gets `bos_token`, `eos_token`, ... : from the post-processor's
  template (the special token it puts before the text is BOS, after it EOS) and, failing that,
  from the added special tokens' well-known texts (`<s>`, `<|begin_of_text|>`, `</s>`, ...).
- ``atomic``: with the embedded approximate tokenizer, the template's special-token texts
  (`<|im_start|>`, `<|im_end|>`, `[INST]`, ...) are added as special tokens to a copy of it for
  the run, as the model's own tokenizer has them: text before `<|im_end|>` never merges with it.
"""

from __future__ import annotations

import json
import re
from typing import Callable, Dict, Iterable, List, Tuple

# added special tokens by well-known text, per role, when the post-processor does not say
_KNOWN = {
    "bos_token": ("<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>", "<｜begin▁of▁sentence｜>", "[BOS]", "<|bos|>"),
    "eos_token": ("</s>", "<|end_of_text|>", "<eos>", "<|endoftext|>", "<｜end▁of▁sentence｜>", "[EOS]", "<|eos|>"),
    "unk_token": ("<unk>", "[UNK]", "<|unk|>"),
    "pad_token": ("<pad>", "<|pad|>", "[PAD]", "<｜▁pad▁｜>", "<|finetune_right_pad_id|>"),
}
# texts a chat template writes that are special tokens in the models that use them
_SPECIAL_TEXT = re.compile(
    r"<\|[A-Za-z0-9_]{1,40}\|>"  # ChatML, Llama 3, Phi: <|im_start|>, <|eot_id|>
    r"|<｜[^<>｜\s]{1,40}｜>"  # DeepSeek: <｜User｜>
    r"|\[/?(?:INST|AVAILABLE_TOOLS|TOOL_RESULTS|TOOL_CALLS|SYSTEM_PROMPT|THINK)\]"  # Mistral
    r"|</?s>|<(?:start|end)_of_turn>|<bos>|<eos>"  # Llama 2 / Mistral, Gemma
)


def from_tokenizer(loaded) -> Dict[str, str]:
    """``bos_token``/``eos_token``/... of a tokenizer.json without its tokenizer_config.json."""
    tok = loaded
    if not hasattr(tok, "added_tokens_decoder"):
        return {}
    try:
        specials = [str(t.content) for t in tok.added_tokens_decoder().values() if t.special]
    except Exception:
        specials = []
    out: Dict[str, str] = {}
    before, after = _post_processor_tokens(tok)
    if before:
        out["bos_token"] = before[0]
    if after:
        out["eos_token"] = after[-1]
    for key, texts in _KNOWN.items():
        if key not in out:
            found = next((t for t in texts if t in specials), None)
            if found is not None:
                out[key] = found
    return out


def _post_processor_tokens(tok) -> Tuple[List[str], List[str]]:
    """Special tokens the post-processor puts before and after a single sequence."""
    try:
        state = json.loads(tok.post_processor.__getstate__())
    except Exception:  # no post-processor, or one without a JSON state
        return [], []
    processors = state.get("processors", [state]) if isinstance(state, dict) else []
    for p in processors:
        if not isinstance(p, dict):
            continue
        if p.get("type") == "TemplateProcessing":
            before, after, seen = [], [], False
            for piece in p.get("single") or []:
                if "Sequence" in piece:
                    seen = True
                elif "SpecialToken" in piece:
                    (after if seen else before).append(piece["SpecialToken"].get("id"))
            return [t for t in before if isinstance(t, str)], [t for t in after if isinstance(t, str)]
        if p.get("type") in ("RobertaProcessing", "BertProcessing"):
            cls, sep = p.get("cls"), p.get("sep")
            return ([cls[0]] if cls else []), ([sep[0]] if sep else [])
    return [], []


# A bare template with no tokenizer_config.json and a tokenizer that does not say: the special
# tokens of the model family its own turn markers name (each family's tokenizer_config.json), first
# match wins; a template with no known marker gets Llama 2's `<s>`/`</s>`, the commonest pair.
# ChatML (Qwen 2/2.5/3) has no BOS: `bos_token` is the empty text, as the model's null renders.
_FAMILIES = (
    ("Llama 3", ("<|start_header_id|>", "<|eot_id|>"), {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}),
    ("gpt-oss (harmony)", ("<|start|>", "<|channel|>"), {"bos_token": "<|startoftext|>", "eos_token": "<|return|>"}),
    ("ChatML (Qwen)", ("<|im_start|>",), {"bos_token": "", "eos_token": "<|im_end|>"}),
    ("Gemma", ("<start_of_turn>",), {"bos_token": "<bos>", "eos_token": "<eos>"}),
    ("DeepSeek", ("<｜User｜>", "<｜Assistant｜>"), {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}),
    ("Command R", ("<|START_OF_TURN_TOKEN|>",), {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>"}),
    ("Granite", ("<|start_of_role|>",), {"bos_token": "<|end_of_text|>", "eos_token": "<|end_of_text|>"}),
    ("Phi-3", ("<|user|>", "<|end|>"), {"bos_token": "<s>", "eos_token": "<|endoftext|>"}),
    ("Mistral / Llama 2", ("[INST]",), {"bos_token": "<s>", "eos_token": "</s>"}),
)
_DEFAULT = ("Llama 2 (no family marker found)", {"bos_token": "<s>", "eos_token": "</s>"})


def assumed_special_tokens(templates: Iterable[str], have: Dict[str, str]) -> Tuple[str, Dict[str, str]]:
    """(family, the `bos_token`/`eos_token` ``have`` lacks): what a bare chat template is given when
    neither a tokenizer_config.json nor the tokenizer names them, so that no scenario fails on an
    undefined token. The caller says what was assumed."""
    text = "".join(templates)
    family, tokens = next(((name, tokens) for name, markers, tokens in _FAMILIES if any(m in text for m in markers)), _DEFAULT)
    return family, {key: value for key, value in tokens.items() if key not in have}


def fill_special_tokens(source, loaded, embedded: bool, shown: str) -> "str | None":
    """Give ``source`` (a ChatSource without its own special tokens) those ``check`` and ``render``
    both use: the tokenizer directory's tokenizer_config.json, else the tokenizer.json's own (never
    the embedded approximate one's), else the model family's (``assumed_special_tokens``). Returns
    the notice saying what was assumed (``shown``: the file as displayed), or None."""
    if source.special_tokens:
        return None
    source.special_tokens = dict(loaded.special_tokens) or ({} if embedded else from_tokenizer(loaded))
    family, assumed = assumed_special_tokens(source.templates.values(), source.special_tokens)
    if not assumed:
        return None
    source.special_tokens.update(assumed)
    given = ", ".join(f"`{key}` = {value!r}" for key, value in assumed.items())
    return (
        f"{shown}: no tokenizer_config.json gives the special tokens, so the render assumed {given} "
        f"({family}, from the template's own turn markers); lint the model directory or configure a tokenizer "
        "directory that has a tokenizer_config.json to use the model's own"
    )


def template_special_texts(source) -> List[str]:
    """The special-token texts a chat source uses: its configured ones and those its templates write."""
    texts = list(source.special_tokens.values()) + list(source.additional_special_tokens)
    for text in source.templates.values():
        texts += _SPECIAL_TEXT.findall(text)
    return sorted({t for t in texts if t})


# Copies of the embedded tokenizer with a template's special texts added, by that set of texts:
# templates sharing a set share a copy; the run's tokenizer pool keeps a few (least recently used
# goes first). A copy is the fast engine's (milliseconds, its tables shared: promptlint.fastbpe.special_copy);
# without the engine it is a full parse (~0.5 s, ~25 MB), so many templates with distinct texts
# cost time per file, not memory per file.


def atomic(provider: Callable, texts: Iterable[str]) -> Callable:
    """``provider`` (the embedded tokenizer) whose copy keeps ``texts`` as single special tokens."""
    key = tuple(sorted(set(texts)))
    if not key:
        return provider
    held: List[object] = []  # this file's copy stays usable even if another file's evicts it from the cache

    def load():
        if not held:
            held.append(_copy(provider, key))
        return held[0]

    return load


def _copy(provider: Callable, key: Tuple[str, ...]):
    from promptlint.pools.tokenizers import active
    from promptlint.tokenization.tokens import not_charged

    pool = active()

    def build():
        base = provider()
        with not_charged():  # shared by every template with these texts: not one file's analysis
            return base.with_special_texts(key, lambda: pool.serialized(base.sha256, base.serialized))

    return pool.special_copy(key, build)
