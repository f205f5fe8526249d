"""Assignments in exclusive branches (``flow``): ``switch (mode) { case "a": s = A; break; case "b": s = B }``
and ``if (x) s = A; else s = B`` leave ``s`` holding any one of them, so each is a value the name may
have, not only the one written last. The value before the statement stays possible when no branch
must run (an ``if`` without ``else``, a ``switch`` without ``default``).
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from promptlint.tssource.index import FUNCTIONS

_STOP = FUNCTIONS | {"program", "class_body"}


def _branches(node) -> Dict[int, Tuple[int, bool]]:
    """conditional statement id -> (the branch ``node`` is in, whether some branch must run)."""
    out: Dict[int, Tuple[int, bool]] = {}
    child, parent = node, node.parent
    while parent is not None and parent.type not in _STOP:
        if parent.type == "if_statement" and child.type in ("else_clause",) or (
                parent.type == "if_statement" and parent.child_by_field_name("consequence") is not None
                and parent.child_by_field_name("consequence").id == child.id):
            out[parent.id] = (child.id, parent.child_by_field_name("alternative") is not None)
        elif parent.type == "switch_body" and child.type in ("switch_case", "switch_default"):
            out[parent.id] = (child.id, any(c.type == "switch_default" for c in parent.named_children))
        child, parent = parent, parent.parent
    return out


def alternatives(entries: List, i: int) -> List[int]:
    """Indices of the entries whose value the name may hold after entry ``i`` (an assignment): ``i``,
    the assignments before it in other branches of a conditional that holds it, and the value before
    that conditional when no branch must run."""
    base = entries[i].value
    if base is None or i == 0:
        return [i]
    mine = _branches(base)
    if not mine:
        return [i]
    out = [i]
    for j in range(i - 1, -1, -1):
        e = entries[j]
        if e.kind not in ("assign", "for", "prop", "elem", "function"):
            continue  # a mutation (`s += x`, `xs.push(x)`), not a value of its own
        theirs = _branches(e.value) if e.value is not None else {}
        if any(s in theirs and theirs[s][0] != b for s, (b, _) in mine.items()):
            out.append(j)  # another branch of a conditional that holds `i`
            continue
        if any(s not in theirs and not total for s, (b, total) in mine.items()):
            out.append(j)  # before the conditional, which may run no branch
        break
    return out
