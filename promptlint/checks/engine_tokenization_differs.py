"""M105 engine-tokenization-differs: text the configured engine tokenizes differently.

Only llama.cpp differs from the pinned Hugging Face tokenizer today (no NFC normalizer;
end-of-generation-looking vocabulary texts promoted to control tokens): see
promptlint/tokenization/engine_tokenize.py. Checked on the base render, so both template text and
sample inputs are covered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from promptlint.base import registry

if TYPE_CHECKING:
    from promptlint.checks.interface import Run
    from promptlint.base.records import Finding

CODES = registry.implements(__name__, "M105")

_CAUSE = {
    "nfc": "is not NFC-normalized: the pinned tokenizer normalizes it, llama.cpp does not",
    "control-text": "looks like an end-of-generation marker: llama.cpp encodes it as one control token",
    "split": "is split into words differently by llama.cpp's own pre-tokenizer (its Unicode tables predate the tokenizer's)",
    "other": "is tokenized differently by the engine",
}


def check(run: "Run") -> List["Finding"]:
    if run.engine != "llamacpp":
        return []
    from promptlint.tokenization.engine_tokenize import tokenization_differences

    base = run.base()
    pinned = run.pinned_tokenizer
    out = []
    for diff in tokenization_differences(base.text, pinned, run.engine, run.add_special_tokens):
        start, end = diff.span
        snippet = base.text[start:end]
        location = run.locate(start)
        shown = snippet.encode("unicode_escape").decode("ascii") if not snippet.isprintable() else snippet
        out.append(
            run.finding(
                "M105",
                f"`{shown}` {_CAUSE.get(diff.cause, _CAUSE['other'])}; figures for llamacpp use the engine's ids",
                location,
                help="use NFC-normalized text and avoid literal control-token texts, or keep --engine llamacpp so figures follow the engine",
                notes=[
                    f"pinned tokenizer: {list(diff.pinned_ids)}",
                    f"llama.cpp:        {list(diff.engine_ids)}",
                ],
            )
        )
    return out
