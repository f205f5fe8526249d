"""M202/M203: iterate the list in one order: `tools | sort(attribute="function.name")`.

Every place the template reads the list by its bare name in a `for` loop (or passes it to a
filter) gets `| sort(attribute=KEY)` right after the name. KEY is the first field of the
list's items that every item has and that tells them apart (`name`, `function.name`, `title`,
`id`, …), or the `sort-key` the samples file declares for it; a list of plain strings or numbers
is sorted as it is. Unsafe: the model sees the
items in another order than the application sent.
"""

from __future__ import annotations

import re
from typing import Any, List, Optional, Tuple

from promptlint.fixes import Proposal, tags as jtags

# fields tried in order; the first present in every item and distinct across them is the key
KEYS = ("name", "function.name", "title", "id", "key", "path", "url", "source")


def propose(source: str, finding, run) -> Tuple[List[Proposal], Optional[str]]:
    name = finding.variable
    var = run.scenario.variables.get(name) if name else None
    if var is None or not isinstance(var.value, list):
        return [], f"`{name}` is not a list promptlint renders"
    if var.sort_key is not None:  # the samples file declares it
        key = var.sort_key
        if not re.fullmatch(r"([A-Za-z_]\w*(\.[A-Za-z_]\w*)*)?", key):
            return [], f"the samples file's sort-key `{key}` is not a field name (dotted for nested fields: function.name)"
        if not sortable(var.value, key):
            field = f"field `{key}`" if key else "plain value"
            return [], f"the samples file's sort-key: not every item of `{name}` has a {field} of one comparable type"
    else:
        key = sort_key(var.value)
    if key is None:
        return [], f"the items of `{name}` have no field that tells every one apart (tried {', '.join(KEYS)}); declare one (sort-key in the samples file)"
    suffix = f' | sort(attribute="{key}")' if key else " | sort"
    edits = []
    for tag in jtags.scan(source):
        if tag.kind == "comment":
            continue
        body = tag.body(source)
        for at in _bare_uses(body, name):
            edits.append(tag.body_start + at)
    if not edits:
        return [], f"`{name}` is not iterated in this file (an include renders it)"
    text = source
    for at in sorted(edits, reverse=True):
        text = text[:at] + suffix + text[at:]
    what = f'`{name} | sort(attribute="{key}")`' if key else f"`{name} | sort`"
    out = [Proposal(finding.code, text, f"iterate {what}")]
    # the items' key order may vary too (a chat request's tools): also render each with sorted keys
    from promptlint.fixes import sort_keys

    keyed, _ = sort_keys.propose(text, finding, run)
    out += [Proposal(finding.code, p.text, f"iterate {what}, each rendered with sorted keys") for p in keyed]
    return out, None


def _bare_uses(body: str, name: str) -> List[int]:
    """Offsets just past each use of ``name`` as a whole value in ``body``: the iterable of a `for`,
    or the left side of a filter; not an attribute (`x.tools`), not already sorted, not a subscript."""
    plain = jtags.blank_strings(body)
    out = []
    for m in re.finditer(r"(?<![.\w])" + re.escape(name) + r"(?!\w)", plain):
        rest = plain[m.end():].lstrip()
        before = plain[: m.start()].rstrip()
        if rest.startswith((".", "[", "(", "=")) and not rest.startswith("=="):
            continue
        if re.match(r"\|\s*(sort|dictsort)\b", rest):
            continue
        if re.search(r"\bin$", before) or _ORDER_KEEPING.match(rest):
            out.append(m.end())
    return out


# filters whose output follows the list's order (`first`, `length` do not need a sorted list)
_ORDER_KEEPING = re.compile(r"\|\s*(tojson|join|map|selectattr|rejectattr|select|reject|list|unique|batch|slice)\b")


def sort_key(items: List[Any]) -> Optional[str]:
    """The attribute to sort ``items`` by; "" for scalars that sort as they are; None when none works."""
    if all(isinstance(i, str) for i in items) or all(isinstance(i, (int, float)) and not isinstance(i, bool) for i in items):
        return ""
    if not all(isinstance(i, dict) for i in items):
        return None
    for key in KEYS:
        if sortable(items, key) and len({_get(i, key) for i in items}) == len(items):
            return key
    return None


def sortable(items: List[Any], key: str) -> bool:
    """Every item has ``key`` (the item itself for "") and the values are all strings or all numbers."""
    values = [_get(i, key) if key else i for i in items]
    if any(v is None or isinstance(v, bool) for v in values):
        return False
    return all(isinstance(v, str) for v in values) or all(isinstance(v, (int, float)) for v in values)


def _get(item: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(item, dict) or part not in item:
            return None
        item = item[part]
    return item
