"""Whether a tokenizer.json's regexes are known ones: the pre-tokenizer, normalizer and decoder
patterns of the tokenizer families models ship, matched by their exact text.

`tokenizers` runs a ``{"Regex": ...}`` pattern in a backtracking engine (Oniguruma) inside one
native call that nothing interrupts: a nested quantifier takes minutes on 500 characters, and a
pattern that reaches the engine's retry limit panics (``PanicException``, a ``BaseException``).
A tokenizer whose every pattern is on this list runs in the process like a pinned one; any
other (a model directory's own tokenizer.json that a pull request can commit, unpinned) is
parsed and used only in a forked child with a deadline (promptlint.doors.deadline_child, driven by
promptlint.driver.lint). Byte-level, Metaspace and literal ``{"String": ...}`` splits have no pattern
to vet. Standard library only.
"""

from __future__ import annotations

import json
import re
from typing import List

# Collected from the tokenizers of the model families promptlint is tested against
# (tests/data/tokenizers and the shared corpus): GPT-2, cl100k / Llama 3, o200k (gpt-oss),
# Qwen2, Mistral Tekken, DeepSeek V3. Add a family's exact pattern text here once it is vetted.
KNOWN_PATTERNS = frozenset({
    # GPT-2 (a Split spelling of ByteLevel's built-in rule)
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    # cl100k_base, Llama 3
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # Qwen2 / Qwen2.5
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # Mistral Tekken
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?"
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # o200k (gpt-oss harmony)
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # DeepSeek V3 (three splits)
    r"\p{N}{1,3}",
    "[一-龥\u3040-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*"
    "|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
})

# A "Regex" key however it is spelled (JSON lets any letter be a \\u escape), then its value. Inside a
# JSON string a quote is always escaped, so a match whose opening quote is not escaped is an object
# key named "Regex", at any depth: found without parsing the vocabulary (most of the megabytes).
_REGEX_KEY = re.compile(r'"(?:R|\\u0052)(?:e|\\u0065)(?:g|\\u0067)(?:e|\\u0065)(?:x|\\u0078)"\s*:\s*')


def patterns(text: str) -> List[str]:
    """Every ``{"Regex": ...}`` pattern of a tokenizer.json text (a value that is neither a string
    nor a vocabulary id is kept as its repr: never a known pattern)."""
    decoder = json.JSONDecoder()
    found: List[str] = []
    for match in _REGEX_KEY.finditer(text):
        at = match.start()
        while at > 0 and text[at - 1] == "\\":  # the backslashes right before the quote
            at -= 1
        if (match.start() - at) % 2:  # an escaped quote: inside a string (a vocabulary entry such as `"Regex`)
            continue
        try:
            value, _ = decoder.raw_decode(text, match.end())
        except (ValueError, RecursionError):
            value = text[match.end():match.end() + 80]  # unreadable here: unknown, so never vetted
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            continue  # a vocabulary's token `Regex` and its id: a pattern is a string, nothing else parses
        found.append(value if isinstance(value, str) else repr(value))
    return found


def unknown_patterns(text: str) -> List[str]:
    """The patterns of a tokenizer.json text that are not known ones (empty: vetted)."""
    return sorted({p for p in patterns(text) if p not in KNOWN_PATTERNS})


def describe(unknown: List[str]) -> str:
    """What is unvetted, without quoting it (a pattern is file content: it never reaches the output)."""
    n = len(unknown)
    return f"{n} regex pattern{'s' if n != 1 else ''} not among the known tokenizer families'"
