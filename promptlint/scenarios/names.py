"""Kinds by role: what an input is, read from the words of its name.

Names are split into lower-case words at camelCase humps, ``-``, ``_``, ``.`` and digits
(``currentDateTime``, ``current-date-time`` and ``current_date_time`` are all current, date,
time), then matched against the roles in ``promptlint/data/name_words.toml`` ``[[roles]]``, in
order. The word lists are data of their own (no rule owns them: M101, M204 and the Python
analyzer all classify names) so they can be read, documented and extended without code.
A name whose first word is a switch's (``include_``, ``use_``, ``is_``: ``flag-prefixes``) is
configuration before any role is tried: ``include_follow_up_questions`` is not a question.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")


def name_words(name: str) -> Tuple[str, ...]:
    """``currentDateTime`` -> ('current', 'date', 'time'); ``HTTPRequest_id2`` -> ('http', 'request', 'id', '2')."""
    return tuple(w.lower() for w in re.split(r"[\W_]+", _HUMP.sub("_", name)) if w)


def _fits(word: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase``, with a pattern of no wildcard compared as the text it is and one
    whose only wildcard is a final ``*`` (``chunk*``, ``*``: every wildcard in the shipped lists) as
    the prefix it is: what fnmatch's compiled regex would answer, without compiling them on a
    cold run."""
    if "?" in pattern or "[" in pattern or "*" in pattern[:-1]:
        return fnmatch.fnmatchcase(word, pattern)
    if pattern.endswith("*"):
        return word.startswith(pattern[:-1])
    return word == pattern


def _any(word: str, patterns: Iterable[str]) -> Optional[str]:
    for p in patterns:
        if _fits(word, p):
            return p
    return None


@dataclass(frozen=True)
class Role:
    """One row of ``[[data.roles]]``: which names have this kind (and sub-kind)."""

    kind: str
    sub_kind: Optional[str]
    words: Tuple[str, ...] = ()  # any word of the name matches one
    heads: Tuple[str, ...] = ()  # the last word matches one ...
    qualifiers: Tuple[str, ...] = ()  # ... and every other word matches one of these
    names: Tuple[str, ...] = ()  # the whole name (words joined by `_`) matches one
    unless: Tuple[str, ...] = ()  # any word matching one of these cancels the role
    qualified: bool = False  # a head alone is not enough: `customer_info` is a record, `info` may be anything

    @classmethod
    def from_data(cls, row: Dict[str, Any]) -> "Role":
        low = lambda key: tuple(str(p).lower() for p in row.get(key, ()))  # noqa: E731
        return cls(row["kind"], row.get("sub-kind"), low("words"), low("heads"), low("qualifiers"), low("names"), low("unless"),
                   bool(row.get("qualified", False)))

    def match(self, words: Sequence[str]) -> Optional[str]:
        """Why ``words`` have this role (a phrase for a samples-file comment), or None."""
        if not words or any(_any(w, self.unless) for w in words):
            return None
        single = len(words) == 1
        for w in words:
            if _any(w, self.words):
                return f"is `{w}`" if single else f"include `{w}`"
        head, rest = words[-1], words[:-1]
        if _any(head, self.heads) and all(_any(w, self.qualifiers) for w in rest) and (rest or not self.qualified):
            return f"is `{head}`" if single else f"end in `{head}`"
        joined = "_".join(words)
        if any(_fits(joined, p) for p in self.names):
            return f"match `{joined}`"
        return None


@dataclass(frozen=True)
class Classified:
    """The kind a variable's name says it has, and why."""

    kind: str
    sub_kind: Optional[str]
    why: str  # "the name's words (current, date, time) include `time`"


STATIC = Classified("static", None, "")


_MEMO_SIZE = 4096


@dataclass(frozen=True)
class NamePatterns:
    """Which inputs are volatile (by sub-kind) or per-request, from their names (data/name_words.toml).

    ``roles`` are tried in order; ``static_words`` mark a name as configuration or authored text
    (``max_messages``, ``few_shot_examples``), which no per-request role overrides;
    ``history_fields`` are item fields that make an unnamed list a conversation; ``flag_prefixes``
    are first words that make a name a switch (configuration, before any role).
    """

    roles: Tuple[Role, ...] = ()
    static_words: Tuple[str, ...] = ()
    history_fields: Tuple[str, ...] = ()
    flag_prefixes: Tuple[str, ...] = ()
    # name -> its Classified / whether it is static: pure in the name and these (frozen) patterns,
    # and asked for the same few names by every template
    _classified: Dict[str, Classified] = field(default_factory=dict, init=False, repr=False, compare=False)
    _static: Dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def from_data(cls, data: Dict[str, Any]) -> "NamePatterns":
        return cls(
            tuple(Role.from_data(r) for r in data.get("roles", [])),
            tuple(w.lower() for w in data.get("static-words", [])),
            tuple(w.lower() for w in data.get("history-fields", [])),
            tuple(w.lower() for w in data.get("flag-prefixes", [])),
        )

    def classify(self, name: str) -> Classified:
        found = self._classified.get(name)
        if found is None:
            if len(self._classified) >= _MEMO_SIZE:  # a long-lived process (daemon) keeps no unbounded memo
                self._classified.clear()
            found = self._classified[name] = self._classify(name)
        return found

    def _classify(self, name: str) -> Classified:
        words = name_words(name)
        said = f"the name's words ({', '.join(words)})" if len(words) > 1 else "the name"
        flag = self.flag_word(name)
        if flag is not None:  # a switch's words describe what it switches, not what it holds
            return Classified("static", None, f"the name starts with `{flag}`, as a switch's does")
        static = self.is_static_name(name)
        for role in self.roles:
            if role.kind == "per-request" and static:
                continue
            why = role.match(words)
            if why is not None:
                return Classified(role.kind, role.sub_kind, f"{said} {why}")
        return STATIC

    def kind_of(self, name: str) -> Tuple[str, Optional[str]]:
        """(kind, volatile sub-kind or None): the Python analyzer's view of a name."""
        c = self.classify(name)
        return c.kind, (c.sub_kind if c.kind == "volatile" else None)

    def flag_word(self, name: str) -> Optional[str]:
        """The first word of a switch's name (``include`` of ``include_sources``), or None; one word alone is no switch."""
        words = name_words(name)
        return words[0] if len(words) > 1 and _any(words[0], self.flag_prefixes) else None

    def is_static_name(self, name: str) -> bool:
        found = self._static.get(name)
        if found is None:
            if len(self._static) >= _MEMO_SIZE:
                self._static.clear()
            found = self._static[name] = self.flag_word(name) is not None or any(_any(w, self.static_words) for w in name_words(name))
        return found

    def history_field(self, fields: Iterable[str]) -> Optional[str]:
        """A field of a list's items that says the list is a conversation (``role``, ``speaker``)."""
        for f in fields:
            words = name_words(f)
            if words and _any(words[-1], self.history_fields):
                return f
        return None


NAME_WORDS = Path(__file__).resolve().parent.parent / "data" / "name_words.toml"
_PATTERNS: Optional[NamePatterns] = None  # the shipped word lists, parsed once (constant data)


def name_patterns() -> NamePatterns:
    """The patterns of ``data/name_words.toml`` (read once)."""
    global _PATTERNS
    if _PATTERNS is None:
        from promptlint.base.toml_io import shipped

        _PATTERNS = NamePatterns.from_data(shipped(NAME_WORDS))  # through its JSON copy in the user's cache
    return _PATTERNS


__all__: List[str] = ["Classified", "NamePatterns", "Role", "name_patterns", "name_words"]
