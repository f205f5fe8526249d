"""M201: render the mapping with its keys sorted.

- `{% for k, v in settings.items() %}` -> `{% for k, v in settings | dictsort %}` (and
  `settings.keys()` -> `settings.keys() | sort`);
- `{{ settings | tojson }}` -> `{{ settings | tojson(sort_keys=true) }}`, only where the
  environment's `tojson` takes `sort_keys` (transformers'; plain Jinja's sorts already).

The edit applies wherever the template reads the mapping: by its name, or through a name a
`for` loop or a `set` binds from it. Safe: the same keys and values, in sorted order.
"""

from __future__ import annotations

import re
from typing import List, Optional, Set, Tuple

from promptlint.fixes import Proposal, tags as jtags


def propose(source: str, finding, run) -> Tuple[List[Proposal], Optional[str]]:
    name = finding.variable
    if not name:
        return [], "the finding names no input"
    name = re.match(r"[^.\[]*", name).group(0)  # a mapping inside an input (`guest.profile`): the input's reads
    tags = [t for t in jtags.scan(source) if t.kind != "comment"]
    names = _aliases(source, tags, name)
    sorts_keys = takes_sort_keys(run.loaded.env)
    edits: List[Tuple[int, int, str]] = []  # (start, end, replacement) in source offsets
    for tag in tags:
        body = tag.body(source)
        plain = jtags.blank_strings(body)
        if not names & set(jtags.names(body)):
            continue
        for m in re.finditer(r"\.(items|keys)\(\s*\)", plain):
            if not _reads(plain[: m.start()], names):
                continue
            repl = " | dictsort" if m.group(1) == "items" else ".keys() | sort"
            edits.append((tag.body_start + m.start(), tag.body_start + m.end(), repl))
        if sorts_keys:
            for m in re.finditer(r"\|\s*tojson\b(\s*\(([^()]*)\))?", plain):
                args = m.group(2)
                if m.group(1) is None:
                    edits.append((tag.body_start + m.end(), tag.body_start + m.end(), "(sort_keys=true)"))
                elif "sort_keys" in args:
                    a = body.index("sort_keys", m.start())
                    v = re.match(r"sort_keys\s*=\s*\w+", body[a:])
                    if v and not v.group(0).endswith("true"):
                        edits.append((tag.body_start + a, tag.body_start + a + v.end(), "sort_keys=true"))
                else:
                    close = m.end() - 1  # the ")"
                    sep = ", " if args.strip() else ""
                    edits.append((tag.body_start + close, tag.body_start + close, sep + "sort_keys=true"))
    if not edits:
        if not sorts_keys and "tojson" in source:
            return [], "this environment's `tojson` takes no `sort_keys`; sort the keys where the mapping is built"
        return [], f"no `.items()` loop or `tojson` over `{name}` in this file"
    text = source
    for start, end, repl in sorted(edits, reverse=True):
        text = text[:start] + repl + text[end:]
    return [Proposal(finding.code, text, f"render `{name}` with sorted keys")], None


def takes_sort_keys(env) -> bool:
    """Whether ``env``'s `tojson` accepts `sort_keys` (tried, not assumed)."""
    try:
        return env.from_string("{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}").render().startswith('{"a"')
    except Exception:
        return False


def _aliases(source: str, tags, name: str) -> Set[str]:
    """``name`` and the names bound from it (`for t in name…`, `set t = name…`), transitively."""
    names = {name}
    changed = True
    while changed:
        changed = False
        for tag in tags:
            if tag.kind != "stmt" or tag.keyword not in ("for", "set="):
                continue
            body = jtags.blank_strings(tag.body(source))
            head, sep, expr = body.partition(" in " if tag.keyword == "for" else "=")
            if not sep or not names & set(jtags.names(expr)):
                continue
            bound = set(jtags.names(head.replace("for", " ", 1) if tag.keyword == "for" else head.replace("set", " ", 1)))
            if bound - names:
                names |= bound
                changed = True
    return names


def _reads(before: str, names: Set[str]) -> bool:
    """Whether the expression ending at the end of ``before`` starts with one of ``names`` (`a.b.c`)."""
    m = re.search(r"([A-Za-z_]\w*)((?:\.\w+|\[[^\]]*\])*)$", before)
    return bool(m) and m.group(1) in names
