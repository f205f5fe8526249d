"""How a render error names text: literally when the template wrote it, by length and hash when computed.

A template can read a file into a variable (`{% set s %}{% include '.env' %}{% endset %}`) and use
the text as an include name, a mapping key, an attribute name or a `raise_exception` message; the
error that follows would print it into annotations, the job log and a PR comment. So every
message that names something a template supplied asks ``shown``: a name written in the template
source (a string constant or an identifier of any template this environment parsed, or an
include choice the scenario declared, or the file's own name) keeps today's wording; anything
else appears as ``a computed name (37 characters, id 1a2b3c4d)`` (the id: a keyed hash, equal for
equal text within a run). ``scrub`` applies the same decision to the Python string literals
(reprs) inside an exception's text; ``exception_text`` describes, unshown, the text of exception
types that name data without repr().
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import os
import re
from typing import FrozenSet, Iterable

from promptlint.base import lazy_re

# type names Python's and Jinja's messages quote ("'str' object is not callable"): not data
_TYPE_WORDS = frozenset(
    [n for n, v in vars(builtins).items() if isinstance(v, type)]
    + ["NoneType", "function", "builtin_function_or_method", "method", "generator", "Undefined", "LintUndefined",
       "NamedUndefined", "Namespace", "TemplateNamespace", "Markup", "LoopContext", "Macro", "Cycler", "Joiner",
       "datetime", "date", "time", "timedelta", "dict_items", "dict_keys", "dict_values", "TemplateDict"]
)
# a Python string literal as repr() writes one, opened after a non-word character ("can't" is no quote)
_PY_STRING = re.compile(r"""(?<![\w'"])(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")""")


def clip(value, limit: int = 200) -> str:
    """A template-controlled value (an exception's text, a name) fit for a one-line message:
    line breaks and control characters escaped, cut at ``limit`` characters."""
    text = str(value)
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text[: limit + 1])
    return text if len(text) <= limit else text[:limit] + "…"


def literal_texts(env) -> FrozenSet[str]:
    """Every string constant and identifier in the templates ``env`` parsed, and the names the
    scenario declared (``declare``): the text a message may repeat as it is."""
    from jinja2 import nodes

    memo = env.__dict__.setdefault("_promptlint_literals", {})
    out = set(env.__dict__.get("_promptlint_declared", ()))
    for source, tree in list(getattr(env, "_parsed", {}).items()):
        known = memo.get(source)
        if known is None:
            known = set()
            for node in tree.find_all((nodes.Const, nodes.Name, nodes.Getattr, nodes.NSRef, nodes.Filter,
                                       nodes.Test, nodes.Keyword, nodes.Macro)):
                value = getattr(node, "value", None) if isinstance(node, nodes.Const) else None
                for text in (value, getattr(node, "name", None), getattr(node, "attr", None), getattr(node, "key", None)):
                    if isinstance(text, str):
                        known.add(text)
            memo[source] = known
        out |= known
    return frozenset(out)


def declare(env, names: Iterable[str]) -> None:
    """Names the template's inputs resolve to by declaration (a samples file's include choices)."""
    env.__dict__.setdefault("_promptlint_declared", set()).update(n for n in names if isinstance(n, str))


# The short hash is keyed with a secret of this process (forked workers share it): the same text
# gets the same id within a run, and a template that slices a file into one-character names
# cannot invert a plain sha256 of each slice from the log.
_KEY = os.urandom(32)


def computed(text: str, what: str = "name") -> str:
    """The description of computed text: its length and a short keyed hash, never the text."""
    digest = hmac.new(_KEY, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:8]
    return f"a computed {what} ({len(text):,} characters, id {digest})"


def shown(value, env, quote: str = "'{}'", what: str = "name") -> str:
    """``value`` as a message may show it: quoted as before when the template wrote it literally,
    else ``computed``. The one decision for include names, keys, attributes and raised messages."""
    text = value if isinstance(value, str) else str(value)
    if env is not None and text in literal_texts(env):
        return quote.format(clip(text))
    return computed(text, what)


def scrub(message: str, env) -> str:
    """``message`` with every Python string literal in it passed through ``shown`` (type names kept)."""

    def one(match) -> str:
        quoted = match.group(0)
        try:
            import ast

            inner = ast.literal_eval(quoted)
        except (ValueError, SyntaxError):
            inner = quoted[1:-1]
        if not isinstance(inner, str):
            inner = quoted[1:-1]
        if inner in _TYPE_WORDS:
            return quoted
        return shown(inner, env, quote=quoted[0] + "{}" + quoted[0])

    return _PY_STRING.sub(one, str(message))


def type_repr(obj) -> str:
    """Jinja's ``object_type_repr`` (what an undefined message names the object by): a type, not data."""
    from jinja2.utils import object_type_repr

    return object_type_repr(obj)


# exception types whose messages quote what they name with repr() (``scrub`` finds it); any other
# type's text (`unknown encoding: <the text>`) is described, not shown
_REPR_QUOTING = frozenset(
    ["TypeError", "ValueError", "KeyError", "IndexError", "ZeroDivisionError", "OverflowError", "AttributeError",
     "FilterArgumentError", "TemplateRuntimeError", "SecurityError", "RecursionError"]
)


_CHAR_CODE = lazy_re.compile(r" \(0x[0-9a-fA-F]+\)")
# CPython names a keyword argument it refuses without repr() ("got an unexpected keyword argument
# 'x'"): a computed name (`f(**{text: 1})`, `x|truncate(**{text: 1})`) would carry quotes of its
# own past ``scrub``; everything from the opening quote on is one name, the fixed wording the rest
_KEYWORD_LAST = lazy_re.compile(r"(?P<head>\S+\(\) got (?:an unexpected keyword argument|multiple values for argument)) '(?P<name>.*)", re.S)
_KEYWORD_FIRST = lazy_re.compile(r"'(?P<name>.*)' (?P<tail>is an invalid keyword argument for \S+\(\))", re.S)


def _keyword_text(text: str, env):
    """The message of a refused keyword argument, its name through ``shown``; None for any other text."""
    m = _KEYWORD_LAST.fullmatch(text)
    if m:
        name = m.group("name")
        name = name[:-1] if name.endswith("'") and name.count("'") == 1 else name  # 3.12 adds "Did you mean"
        return f"{m.group('head')} {shown(name, env)}"
    m = _KEYWORD_FIRST.fullmatch(text)
    if m:
        return f"{shown(m.group('name'), env)} {m.group('tail')}"
    return None


def exception_text(e: BaseException, env) -> str:
    """The text of an exception out of a template's code, fit for a message: scrubbed when its type
    quotes with repr(), else its length and hash."""
    text = _CHAR_CODE.sub("", str(e))  # "unsupported format character 'Q' (0x51)": the code is the character
    if isinstance(e, TypeError):
        keyword = _keyword_text(text, env)
        if keyword is not None:
            return clip(keyword)
    if type(e).__name__ in _REPR_QUOTING and type(e).__module__ in ("builtins", "jinja2.exceptions"):
        return clip(scrub(text, env))
    return computed(text, "message")


def undefined_text(message, env) -> str:
    """Jinja's undefined message (``'x' is undefined``, ``'dict object' has no attribute 'k'``)
    rebuilt from its parts with the name through ``shown``."""
    from jinja2.utils import missing

    hint, obj, name = getattr(message, "parts", (None, None, None))
    if hint is None and not hasattr(message, "parts"):  # not ours (an undefined made elsewhere)
        return clip(scrub(str(message or ""), env))
    if hint:
        return clip(scrub(hint, env))
    if obj is missing:
        return f"{shown(name, env)} is undefined"
    return f"'{clip(type_repr(obj))}' has no attribute {shown(name, env)}"
