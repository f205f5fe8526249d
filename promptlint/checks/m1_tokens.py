"""M1 hazards in token identity that are not about a changing value.

- M102 duplicated-special-token: the served ids carry the same special token twice in a
  row (the template emits `bos_token` and the completions path adds another), so the
  request shares zero blocks with chat-endpoint traffic.
- M103 special-token-text-in-input: a per-request sample value contains the text of a
  special token, and the pinned tokenizer encodes it as the control token.
- M104 token-boundary-merge: the first divergent token starts before the first divergent
  character (BPE merged shared text with the variable part) and that costs a block.
"""

from __future__ import annotations

from typing import List, Optional

from promptlint.checks import describe, short
from promptlint.compare import Comparison, eligible_tokens, shared_prefix
from promptlint.records import Arithmetic, Finding

CODES = ("M102", "M103", "M104")


def plan(run) -> list:
    """The variants M104 renders (prefetched and tokenized in one batch)."""
    if not run.enabled("M104"):
        return []
    return [
        {var.name: var.variant_value()}
        for var in run.scenario.variables.values()
        if var.kind in ("per-request", "volatile")
    ]


def check(run) -> List[Finding]:
    findings: List[Finding] = []
    if run.enabled("M102"):
        findings += _duplicated_special(run)
    if run.enabled("M103"):
        findings += _special_text_in_inputs(run)
    if run.enabled("M104"):
        findings += _boundary_merges(run)
    return findings


# ---------------------------------------------------------------- M102


def _special_ids(run) -> dict:
    return {i: t for t, i in run.tokenizer.added_tokens(special_only=True).items()}


def _duplicated_special(run) -> List[Finding]:
    base = run.base()
    ids = base.ids
    specials = _special_ids(run)
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
    # Against chat-endpoint traffic (the same render, add_special_tokens=False).
    shared = 0
    while shared < min(len(ids), len(chat_ids)) and ids[shared] == chat_ids[shared]:
        shared += 1
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
        f.first_divergent_token = _pair(run, ids, chat_ids, shared, base)
        f.arithmetic = Arithmetic.from_comparison(cmp)
        describe(f, "the same render through the chat endpoint (add_special_tokens=False)")
        f.evidence = {"base_render": base.text, "variant_render": base.text, "add_special_tokens": True, "variant_add_special_tokens": False}
    return [f]


# ---------------------------------------------------------------- M103


def _special_text_in_inputs(run) -> List[Finding]:
    specials = run.tokenizer.added_tokens(special_only=True)
    if not specials:
        return []
    out = []
    for name, value in run.text_inputs():
        for text in _strings(value):
            hits = [t for t in specials if t and t in text]
            if not hits:
                continue
            token = max(hits, key=len)
            tid = specials[token]
            if tid not in run.tokenizer.encode(text, add_special_tokens=False).ids:
                continue  # the tokenizer does not match it as a control token
            defused = _replace_deep(value, token, token.replace("<", "< ").replace("[", "[ "))
            variant = run.sample(**{name: defused})
            cmp = run.compare(variant)
            location = run.locate(run.first_divergent_char(variant))
            f = run.finding(
                "M103",
                f"per-request input `{name}` contains `{token}`, which the tokenizer encodes as control token {tid}, not text",
                location,
                variable=name,
                variant=variant,
                cmp=cmp,
                help="strip or escape special-token text in user input before rendering (or encode with split_special_tokens)",
                notes=["a prompt-injection path: user text can close the turn or forge a role"],
            )
            describe(f, f"`{name}` with `{token}` defused to text: {short(text)} → {short(_replace_deep(text, token, token.replace('<', '< ').replace('[', '[ ')))}")
            out.append(f)
            break
    return out


def _strings(value) -> List[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _replace_deep(value, old: str, new: str):
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: _replace_deep(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_deep(v, old, new) for v in value]
    return value


# ---------------------------------------------------------------- M104


def _boundary_merges(run) -> List[Finding]:
    out = []
    base = run.base()
    for var in run.scenario.variables.values():
        if var.kind not in ("per-request", "volatile"):
            continue
        variant = run.sample(**{var.name: var.variant_value()})
        P = len(variant.ids)
        B = run.profile.block_size
        merge = boundary_merge(run, variant, block_size=B)
        if merge is None:
            continue
        shared, char, clean = merge
        now, ideal = eligible_tokens(shared, P, B) // B, eligible_tokens(clean, P, B) // B
        if ideal <= now:
            continue
        cmp = Comparison(shared, P, clean, B)
        location = run.locate(char)
        tok_start = base.encoding.offsets[shared][0]
        f = run.finding(
            "M104",
            f"the text before `{var.name}` merges into its first token: the shared prefix ends at token {shared} "
            f"(character {tok_start:,}) instead of {clean} (character {char:,}): {ideal - now} KV block{'s' if ideal - now != 1 else ''} lost",
            location,
            variable=var.name,
            variant=variant,
            cmp=cmp,
            help=f"put a hard boundary (a newline or a space) right before `{var.name}`",
        )
        describe(f, f"`{var.name}` changed: {short(var.value)} → {short(var.variant_value())}")
        out.append(f)
    return out


def boundary_merge(run, variant, block_size: Optional[int] = None) -> Optional[tuple]:
    """(token S, first divergent char, tokens of the shared text alone) when BPE merged across the boundary.

    With ``block_size``, merges that cannot cost a block are skipped before re-encoding: the shared
    text alone has at most one token per merged character, so it cannot reach the next block
    boundary when ``S + merged characters`` does not.
    """
    base = run.base()
    a, b = base.ids, variant.ids
    s = shared_prefix(a, b)
    if s >= len(a) or s >= len(base.encoding.offsets):
        return None
    char = run.first_divergent_char(variant)
    tok_start = base.encoding.offsets[s][0]
    if tok_start >= char:
        return None
    if block_size is not None:
        cap = len(variant.ids) - 1
        upper = s + (char - tok_start)
        if min(upper, cap) // block_size <= min(s, cap) // block_size:
            return None
    clean = len(run.tokenizer.encode(base.text[:char], add_special_tokens=run.add_special_tokens).ids)
    if clean <= s:
        return None
    return s, char, clean


def _pair(run, ids, other, s, base):
    from promptlint.records import DivergentToken

    a = ids[s] if s < len(ids) else None
    b = other[s] if s < len(other) else None
    off = base.encoding.offsets[s][0] if s < len(base.encoding.offsets) else len(base.text)
    return DivergentToken(s, a, b, run.tokenizer.token_text(a), run.tokenizer.token_text(b), off)

