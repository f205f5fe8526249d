"""One path for the figures of a comparison finding, whoever measured it.

Template checks, chat-template checks and the Python analyzer all get the first divergent
token, the shared prefix and the block arithmetic from these functions, so the same hazard
carries the same figures everywhere (the wording comes from the rule files). The arithmetic
itself is ``promptlint.arithmetic.compare``; this module turns it into the records' fields.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

from promptlint.arithmetic.compare import Comparison, shared_prefix
from promptlint.arithmetic.compare import compare as measure  # noqa: F401 - the base against a variant: S, P (the variant's), ideal S, B
from promptlint.base.records import Arithmetic, DivergentToken


def ideal_shared(base_ids: Sequence[int], per_request_ids: Optional[Sequence[int]], prompt_len: int) -> int:
    """S if only the genuinely per-request inputs differed (``per_request_ids``: the base with
    every per-request input changed); the whole prompt P when nothing is per-request."""
    if per_request_ids is None:
        return prompt_len
    return shared_prefix(base_ids, per_request_ids)


def token_offset(offsets: Sequence[Tuple[int, int]], text: str, index: int) -> int:
    """Character offset of token ``index`` in ``text`` (the end of the text past the last token)."""
    return offsets[index][0] if index < len(offsets) else len(text)


def divergent_token(tokenizer, base_ids: Sequence[int], variant_ids: Sequence[int], index: int, char_offset: int) -> DivergentToken:
    """The token pair at ``index`` (None on the side that has already ended)."""
    base_id = base_ids[index] if index < len(base_ids) else None
    variant_id = variant_ids[index] if index < len(variant_ids) else None
    return DivergentToken(index, base_id, variant_id, tokenizer.token_text(base_id), tokenizer.token_text(variant_id), char_offset)


def evidence(base_text: str, variant_text: str, add_special_tokens: bool, **extra: Any) -> Dict[str, Any]:
    """Both renders (JSON `evidence` with --evidence), then anything the comparison adds."""
    out: Dict[str, Any] = {"base_render": base_text, "variant_render": variant_text, "add_special_tokens": add_special_tokens}
    out.update(extra)
    return out


def of(token: DivergentToken, cmp: Comparison, proof: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """A comparison finding's figures, as ``kernel.finding``'s keywords: its first divergent token,
    its block arithmetic and the renders behind them."""
    return {"first_divergent_token": token, "arithmetic": Arithmetic.from_comparison(cmp), "evidence": proof}


def blocks(n: int) -> str:
    """``1 block``, ``2 blocks`` (thousands separated)."""
    return f"{n:,} block" if n == 1 else f"{n:,} blocks"
