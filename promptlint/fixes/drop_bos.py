"""M102: drop the template's own copy of the doubled special token (a BOS the serving path adds).

The finding names the token (`<s>`); the candidates remove, one at a time, each place of the
source that writes it: its literal text, or a `{{ bos_token }}`-style expression that renders it
(the tag and, when it stands alone on its line, the line). The verifier keeps the first after
which the served ids no longer carry the token twice and nothing new is reported. Unsafe: the
served ids change (one BOS instead of two).
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from promptlint.fixes import Proposal, tags as jtags


def propose(source: str, finding, run) -> Tuple[List[Proposal], Optional[str]]:
    m = re.search(r"duplicated special token `([^`]+)`", finding.message)
    if m is None:
        return [], "the finding names no special token"
    token = m.group(1)
    out: List[Proposal] = []
    for tag in jtags.scan(source):
        if tag.kind == "expr" and tag.body(source).strip() == "bos_token":
            start, end = tag.start, tag.end
            if not source[jtags.line_start(source, start):start].strip() and source[end:jtags.line_end(source, end)].strip() == "":
                end = jtags.line_end(source, end)
            out.append(Proposal(finding.code, source[:start] + source[end:], f"remove `{source[tag.start:tag.end]}`", measure=measure))
    for hit in re.finditer(re.escape(token), source):
        if any(t.start <= hit.start() < t.end for t in jtags.scan(source)):
            continue  # inside a tag: a string literal, handled as text only outside tags
        out.append(Proposal(finding.code, source[: hit.start()] + source[hit.end():], f"remove the literal `{token}`",
                            measure=measure))
        break
    if not out:
        return [], f"the template does not write `{token}` itself: the doubled token comes from the input or an include"
    return out, None


def measure(run, original_run) -> int:
    """Eligible blocks per request the fixed template's served ids share with the original
    template's chat-endpoint traffic (its render encoded without special tokens): what M102 measured."""
    from promptlint.arithmetic.compare import Comparison, shared_prefix

    ids = run.base().ids
    chat_ids = original_run.tokenizer.encode(original_run.base().text, add_special_tokens=False).ids
    cmp = Comparison(shared_prefix(ids, chat_ids), len(ids), len(ids), run.profile.block_size)
    return min(cmp.eligible_blocks, cmp.ideal_eligible_blocks)
