"""Jinja parse trees kept between runs, beside the generated code (render/code_cache.py).

The code cache spares a cold run Jinja's code generation and compile, but every text is still
lexed and parsed: the analyses read the tree (scenario inference, stand-ins, includes) and the
token budget charges the parse. That parse is a tenth of a cold run's CPU on the benchmark's 80
templates, spent again for texts that did not change. A tree depends only on the text and the
environment's parser settings (environments.parser_settings: the lexer's delimiters and options,
the extensions), with Jinja's version and promptlint's code (the extensions' parsers), which the
key holds; a hit is the tree this process would have parsed, with the number of Jinja tokens the
lexer counted, which the environment charges to its budget as a parse would.

Stored as the code cache stores its entries (the same secret and bounds, in a directory of their own:
an HMAC under the user's cache secret, then marshal): nested tuples of ``jinja2.nodes`` class names, field names
and plain values (str, int, float, bool, None; tuples of them). A tree holding anything else is
not kept; an entry naming anything but a ``jinja2.nodes`` class is not used. Nothing is kept where
the code cache keeps nothing (no secret yet, ``PYTHONDONTWRITEBYTECODE``): the process's own
trees (environments.PARSED) serve within it.
"""

from __future__ import annotations

import hashlib
from typing import Optional, Tuple

from jinja2 import nodes

from promptlint.render import code_cache

KIND = "trees"  # $XDG_CACHE_HOME/promptlint/trees/<interpreter tag>/<key>
_PLAIN = (str, int, float, bool, type(None))
_NODE, _LIST, _TUPLE, _ENV = 0, 1, 2, 3  # tags of what a stored value is (plain values are never tuples)


class _NotKept(Exception):
    """A tree holding a value this format does not store."""


def key(parser: tuple, source: str) -> str:
    """The entry's name: everything the tree depends on (module docstring); ``parser``:
    environments.parser_settings of the environment."""
    from jinja2 import __version__ as jinja_version

    fields = ("promptlint template tree 1", jinja_version, code_cache._code_stamp(), repr(parser))
    digest = hashlib.sha256(repr(fields).encode("utf-8"))
    digest.update(b"\0")
    digest.update(source.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def get(name: str, environment) -> Optional[Tuple[nodes.Template, int]]:
    """(the tree, its Jinja token count) kept under ``name``, its nodes naming ``environment``; None
    when none is kept or the entry is not one this module writes."""
    found = code_cache.read_entry(name, KIND)
    if not (isinstance(found, tuple) and len(found) == 2 and type(found[0]) is int and found[0] >= 0):
        return None
    tokens, stored = found
    try:
        tree = _decoded(stored, environment)
    except (_NotKept, TypeError, ValueError, IndexError, RecursionError):
        return None
    return (tree, tokens) if type(tree) is nodes.Template else None


def put(name: str, tree: nodes.Template, tokens: int) -> None:
    """Keep ``tree`` (as parsed: not yet folded by a compile) and its token count."""
    try:
        stored = _encoded(tree)
    except (_NotKept, RecursionError):
        return
    code_cache.write_entry(name, (tokens, stored), KIND)


def _encoded(node: nodes.Node) -> tuple:
    """(tag, class name, field names and values...) of ``node`` in its ``__dict__``'s order; its
    environment is stored as a place, not a value."""
    out = [_NODE, type(node).__name__]
    for field, value in node.__dict__.items():
        if field == "environment":
            value = (_ENV,)
        elif isinstance(value, nodes.Node):
            value = _encoded(value)
        elif type(value) is list:
            value = (_LIST, tuple(_encoded(v) if isinstance(v, nodes.Node) else _plain(v) for v in value))
        else:
            value = _plain(value)
        out += (field, value)
    if getattr(nodes, out[1], None) is not type(node):
        raise _NotKept(out[1])  # only Jinja's own node classes are named (an extension's own: not kept)
    return tuple(out)


def _plain(value) -> object:
    if type(value) in _PLAIN:
        return value
    if type(value) is tuple:
        return (_TUPLE, tuple(_plain(v) for v in value))
    raise _NotKept(type(value).__name__)


def _decoded(stored: tuple, environment) -> nodes.Node:
    """The node ``_encoded`` stored, built as ``copy_tree`` builds a copy (no ``__init__``)."""
    if stored[0] != _NODE:
        raise _NotKept("not a node")
    cls = getattr(nodes, stored[1], None)
    if not (isinstance(cls, type) and issubclass(cls, nodes.Node)):
        raise _NotKept(str(stored[1]))
    fields = {}
    for k in range(2, len(stored), 2):
        value = stored[k + 1]
        if type(value) is tuple:
            if value[0] == _NODE:
                value = _decoded(value, environment)
            elif value[0] == _LIST:
                value = [_decoded(v, environment) if type(v) is tuple and v[0] == _NODE else _value(v) for v in value[1]]
            elif value[0] == _ENV:
                value = environment
            else:
                value = _value(value)
        fields[stored[k]] = value
    if "environment" not in fields:
        raise _NotKept("no environment")
    new = object.__new__(cls)
    new.__dict__ = fields
    return new


def _value(stored) -> object:
    if type(stored) is tuple:
        if stored[0] != _TUPLE:
            raise _NotKept("not a value")
        return tuple(_value(v) for v in stored[1])
    if type(stored) not in _PLAIN:
        raise _NotKept(type(stored).__name__)
    return stored
