"""Functions as values (``flow``): an arrow or function expression evaluated where it is written keeps
the bindings it closes over, so a prompt factory's result can be called later.

``const make = (opts) => () => `...${opts.team}`; const system = make({ team }); system()`` and
``function createPrompts(p) { return { system() { return `...${p}` } } }; prompts.system()`` give the
text the inner function returns with the outer call's arguments bound. A ``Closure`` rides on
``Val.instance`` (where an object of a linted class rides); ``is_object`` tells the two apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from promptlint.pysource.flow import Val
from promptlint.tssource.instances import Instance


@dataclass(frozen=True, eq=False)
class Closure:
    flow: Any  # the module's Flow
    node: Any  # the function node
    env: Dict[str, Val] = field(default_factory=dict)  # the enclosing calls' bindings (and an arrow's `this`)


def of(v: Optional[Val]) -> Optional[Closure]:
    inst = v.instance if v is not None else None
    return inst if isinstance(inst, Closure) else None


def is_object(v: Optional[Val]) -> bool:
    """Whether ``v`` is an object of a class of the linted modules (not a function value)."""
    return v is not None and isinstance(v.instance, Instance)


def call(c: Closure, args, depth: int, this: Optional[Val] = None) -> Val:
    """The value ``c`` returns with ``args`` (a method of an object literal: ``this`` is the object)."""
    if this is not None and c.node.type == "arrow_function":
        this = None  # an arrow's `this` is where it was written
    return c.flow.call_function(c.node, args, depth + 1, outer=c.env, this=this)
