"""M102 duplicated-special-token: the served ids carry the same special token twice in a row.

Typically the template emits `bos_token` and the completions path (add_special_tokens=True)
adds another, so the request shares zero blocks with chat-endpoint traffic. (Python code
that sends a chat template's text to a completions endpoint is found by the Python analyzer.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from promptlint import figures, registry
from promptlint.checks.variants import describe
from promptlint.compare import Comparison, shared_prefix

if TYPE_CHECKING:
    from promptlint.checks.interface import Run
    from promptlint.records import Finding

CODES = registry.implements(__name__, "M102")


def check(run: "Run") -> List["Finding"]:
    base = run.base()
    ids = base.ids
    specials = {i: t for t, i in run.tokenizer.added_tokens(special_only=True).items()}
    for i in range(len(ids) - 1):
        if ids[i] == ids[i + 1] and ids[i] in specials:
            break
    else:
        return []
    token = specials[ids[i]]
    chat_ids = run.tokenizer.encode(base.text, add_special_tokens=False).ids
    if run.add_special_tokens and i == 0 and chat_ids[:1] == [ids[0]]:
        path = f"the template emits `{token}` and the completions path (add_special_tokens=True) adds another"
    else:
        path = f"`{token}` appears twice in a row in the render"
    offset = base.encoding.offsets[i + 1][0] if i + 1 < len(base.encoding.offsets) else 0
    location = run.locate(min(offset, max(len(base.text) - 1, 0)))
    # Against chat-endpoint traffic (the same render, add_special_tokens=False): P is this request's.
    shared = shared_prefix(ids, chat_ids)
    cmp = Comparison(shared, len(ids), len(ids), run.profile.block_size)
    message = f"duplicated special token `{token}` at token {i + 1}: {path}"
    notes = []
    if run.add_special_tokens:
        notes.append(
            f"such requests share {cmp.eligible_blocks} blocks with chat-endpoint traffic "
            f"(first divergent token #{shared}); {cmp.lost_blocks:,} of {cmp.ideal_eligible_blocks:,} eligible blocks lost"
        )
    f = run.finding(
        "M102",
        message,
        location,
        help="send pre-rendered chat prompts with add_special_tokens=False, or drop `bos_token` from the template",
        notes=notes,
    )
    if run.add_special_tokens:
        token_pair = figures.divergent_token(
            run.tokenizer, ids, chat_ids, shared, figures.token_offset(base.encoding.offsets, base.text, shared)
        )
        figures.attach(f, token_pair, cmp, None)
        describe(f, "the same render through the chat endpoint (add_special_tokens=False)")
        f.evidence = figures.evidence(base.text, base.text, True, variant_add_special_tokens=False)
    return [f]
