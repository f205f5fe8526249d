"""Jinja's lexer with its text-scanning rule rewritten to an equivalent, linear-time regex.

Jinja finds the next tag after template text with ``(.*?)(?:TAGS)``: a lazy repeat that tries
every tag alternative at every character, about 100 ns per character of prose (a third of a
prose-heavy template's parse). When every tag starts with ``{`` (the default delimiters, no line
statements or line comments), the same match is ``((?:[^{]++|(?!TAGS)\\{)*+)(?:TAGS)``: runs of
other characters are skipped in one step and the tags are tried only at a ``{``. It matches
where the original matches, with the same groups (the prefix adds none: TAGS inside the
lookahead has its groups made non-capturing), and fails where it fails (possessive: no
backtracking). Any other configuration keeps Jinja's own lexer.
"""

from __future__ import annotations

import copy
import re
import sys
from typing import Dict

from jinja2.lexer import get_lexer

_PREFIX = "(.*?)(?:"
_FAST: Dict[int, tuple] = {}  # id(Jinja's lexer) -> (that lexer, ours)


def fast_lexer(environment):
    """The lexer for ``environment``: Jinja's (cached per configuration), with the faster root rule."""
    lexer = get_lexer(environment)
    known = _FAST.get(id(lexer))
    if known is not None and known[0] is lexer:
        return known[1]
    ours = _rewritten(lexer, environment)
    if len(_FAST) > 64:  # configurations a process meets are few; never grow without bound
        _FAST.clear()
    _FAST[id(lexer)] = (lexer, ours)
    return ours


def _rewritten(lexer, environment):
    if sys.version_info < (3, 11):  # possessive quantifiers (`++`, `*+`) came with Python 3.11's re
        return lexer
    if environment.line_statement_prefix is not None or environment.line_comment_prefix is not None:
        return lexer
    starts = (environment.block_start_string, environment.variable_start_string, environment.comment_start_string)
    if not all(s.startswith("{") for s in starts):
        return lexer
    root = lexer.rules["root"]
    pattern = root[0].pattern.pattern
    if not (pattern.startswith(_PREFIX) and pattern.endswith(")")):
        return lexer
    tags = pattern[len(_PREFIX) : -1]
    plain = _without_groups(tags)
    if plain is None:
        return lexer
    fast = re.compile(rf"((?:[^{{]++|(?!{plain})\{{)*+)(?:{tags})", root[0].pattern.flags)
    if fast.groups != root[0].pattern.groups or fast.groupindex != root[0].pattern.groupindex:
        return lexer
    ours = copy.copy(lexer)
    ours.rules = dict(lexer.rules)
    ours.rules["root"] = [root[0]._replace(pattern=fast), *root[1:]]
    return ours


def _without_groups(pattern: str):
    """``pattern`` with every capturing group (named or not) made non-capturing; None when it holds
    a construct this does not rewrite safely (a character class, a backreference)."""
    if "[" in pattern or "(?P=" in pattern or re.search(r"\\[1-9]", pattern):
        return None
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if ch == "(":
            if pattern.startswith("(?P<", i):
                out.append("(?:")
                i = pattern.index(">", i) + 1
                continue
            if not pattern.startswith("(?", i):
                out.append("(?:")
                i += 1
                continue
        out.append(ch)
        i += 1
    # a group this missed would show in the rewritten rule's group count, which _rewritten compares
    # with the original's before using it (compiling ``plain`` alone to count them cost a compile)
    return "".join(out)
