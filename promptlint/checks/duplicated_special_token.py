"""M102 duplicated-special-token: the served ids carry a special token twice where one belongs.

Typically the template emits `bos_token` and the completions path (add_special_tokens=True)
adds another, so the request shares zero blocks with chat-endpoint traffic. The two need not be
adjacent: a newline or spaces between them, or a BOS again after text (an include that opens with
its own), are the same hazard; a chat format's EOS after each turn is not (see find_duplicate). (Python code
that sends a chat template's text to a completions endpoint is found by the Python analyzer.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from promptlint.arithmetic import figures
from promptlint.base import registry
from promptlint.arithmetic.compare import Comparison, shared_prefix

if TYPE_CHECKING:
    from promptlint.checks.interface import Run
    from promptlint.base.records import Finding

CODES = registry.implements(__name__, "M102")


def find_duplicate(tokenizer, ids: Sequence[int], specials: Dict[int, str]) -> Optional[Tuple[int, int, str]]:
    """(first copy, second copy, how) of the first special token that appears twice where one belongs:
    twice in a row ("adjacent"); a BOS or EOS again with only whitespace since its last copy
    ("whitespace"); a BOS again after text that no end-of-sequence token closed ("after text").
    A chat format that closes each turn with EOS and opens the next with BOS (Llama 2's
    ``</s><s>[INST]``) repeats both legitimately: each copy follows different text or a closing token."""
    bos, eos = sequence_tokens(tokenizer, specials)
    last: Dict[int, int] = {}  # special id -> index of its previous copy
    blank: Dict[int, bool] = {}  # token id -> whether its text is whitespace only
    before = -1  # index of the previous special token
    # Only special tokens are judged, each against the previous token that is not whitespace: found
    # by walking back from it (to the previous special token at most, so each token is looked at
    # once), not by decoding every token of a long render.
    for i in [k for k, t in enumerate(ids) if t in specials]:
        t = ids[i]
        prev = before  # index of the previous token that is not whitespace
        for j in range(i - 1, before, -1):
            u = ids[j]
            if u not in blank:
                blank[u] = not tokenizer.token_text(u).strip()
            if not blank[u]:
                prev = j
                break
        if i > 0 and ids[i - 1] == t:
            return i - 1, i, "adjacent"
        if t in last and (t in bos or t in eos) and prev == last[t]:
            return last[t], i, "whitespace"
        if t in bos and t in last and (prev < 0 or ids[prev] not in specials):
            return last[t], i, "after text"
        last[t] = i
        before = i
    return None


def sequence_tokens(tokenizer, specials: Dict[int, str]) -> Tuple[Set[int], Set[int]]:
    """Ids of the tokens that open (BOS) and close (EOS) a sequence: those the post-processor puts
    around a text when asked for special tokens, and the configured `bos_token`/`eos_token`."""
    by_text = {t: i for i, t in specials.items()}
    plain = tokenizer.encode("a", add_special_tokens=False).ids
    added = tokenizer.encode("a", add_special_tokens=True).ids
    at = next((k for k in range(len(added) - len(plain) + 1) if added[k:k + len(plain)] == plain), 0)
    bos = {t for t in added[:at] if t in specials}
    eos = {t for t in added[at + len(plain):] if t in specials}
    names = getattr(tokenizer, "special_tokens", {}) or {}
    for key, into in (("bos_token", bos), ("eos_token", eos)):
        if names.get(key) in by_text:
            into.add(by_text[names[key]])
    return bos, eos


def check(run: "Run") -> List["Finding"]:
    base = run.base()
    ids = base.ids
    specials = {i: t for t, i in run.tokenizer.added_tokens(special_only=True).items()}
    found = find_duplicate(run.tokenizer, ids, specials)
    if found is None:
        return []
    first, second, why = found
    token = specials[ids[second]]
    chat_ids = run.tokenizer.encode(base.text, add_special_tokens=False).ids
    if run.add_special_tokens and first == 0 and len(ids) > len(chat_ids) and why != "after text":
        # the first copy is the one the post-processor prepends: the template wrote the second
        gap = "" if second == 1 else " after whitespace"
        path = f"the template emits `{token}`{gap} and the completions path (add_special_tokens=True) adds another"
    elif why == "adjacent":
        path = f"`{token}` appears twice in a row in the render"
    elif why == "whitespace":
        path = f"`{token}` appears twice in the render with only whitespace between (token {first} and token {second})"
    else:
        path = (f"`{token}` begins the prompt and appears again at token {second}, after text and not after an end of "
                "sequence: a second BOS the model reads as a new document")
    offset = base.encoding.offsets[second][0]
    location = run.locate(min(offset, max(len(base.text) - 1, 0)))
    # Against chat-endpoint traffic (the same render, add_special_tokens=False): P is this request's.
    shared = shared_prefix(ids, chat_ids)
    cmp = Comparison(shared, len(ids), len(ids), run.profile.block_size)
    message = f"duplicated special token `{token}` at token {second}: {path}"
    notes = []
    if run.add_special_tokens:
        notes.append(
            f"such requests share {cmp.eligible_blocks} blocks with chat-endpoint traffic "
            f"(first divergent token #{shared}); {cmp.lost_blocks:,} of {cmp.ideal_eligible_blocks:,} eligible blocks lost"
        )
    measured = {}
    if run.add_special_tokens:
        token_pair = figures.divergent_token(
            run.tokenizer, ids, chat_ids, shared, figures.token_offset(base.encoding.offsets, base.text, shared)
        )
        proof = figures.evidence(base.text, base.text, True, variant_add_special_tokens=False)
        measured = dict(figures.of(token_pair, cmp, proof),
                        variant_description="the same render through the chat endpoint (add_special_tokens=False)")
    f = run.finding(
        "M102",
        message,
        location,
        help="send pre-rendered chat prompts with add_special_tokens=False, or drop `bos_token` from the template",
        notes=notes,
        **measured,
    )
    return [f]
