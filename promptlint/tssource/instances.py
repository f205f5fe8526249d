"""Objects of the linted modules' classes, carried through the calls made on them (``flow``).

``new C(args)`` of a class of the linted modules (here or imported) is a ``Val`` whose ``instance``
names the class and whose ``mapping`` holds what the constructor wrote (``this.x = ...``, and
TypeScript's parameter properties, ``constructor(private readonly x: T)``). A method called on it
runs its writes to ``this`` in source order (``this.x = v``, ``this.x.k = v``, ``this.x.push(v)``,
each on the field as the object holds it, or as its initialiser makes it) with its parameters
bound to the call's arguments, and gives both its return value and the object afterwards: a
method that returns ``this`` is a fluent builder's step (``new RequestBuilder().system(s).user(q)
.build()``), and a call made for what it does (``b.system(s);``) changes the object its name
holds. A getter (``get system() {...}``) is read as a call. A field the calls seen did not write
is the class's own view of it (every write in any method, in source order: ``Flow.class_attr``),
so a registry filled by a method called elsewhere keeps its order hazards. Methods, getters,
fields and the constructor are looked up through the classes a class ``extends`` (here or
imported), nearest first: a base class's method that calls ``this.systemPrompt()`` runs the
subclass's override on a subclass's object.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from promptlint.pysource.flow import Val
from promptlint.tssource.index import MODULE
from promptlint.tssource.values import args_of, either, text

MAX_BASES = 8


@dataclass(frozen=True)
class Instance:
    """An object of a class of the linted modules: the module's ``Flow`` and the class's name."""

    flow: Any
    cls: str


def chain(flow, cls: str) -> List[Tuple[Any, str]]:
    """(flow, class) of ``cls`` and the classes it extends, nearest first."""
    out: List[Tuple[Any, str]] = []
    while len(out) < MAX_BASES and (flow, cls) not in out:
        out.append((flow, cls))
        base = flow.index.bases.get(cls)
        found = flow.class_named(base, MODULE) if base is not None else None
        if found is None:
            break
        flow, cls = found
    return out


def method(flow, cls: str, name: str):
    """(flow, class, method node) of the nearest class in the chain that defines ``name``, or None."""
    for f, c in chain(flow, cls):
        m = f.index.classes.get(c, {}).get(name)
        if m is not None:
            return f, c, m
    return None


def construct(flow, cls: str, args: List[Val], span, depth: int) -> Val:
    """``new cls(args)``: the object with what its constructor wrote."""
    state = Val(mapping={}, node=span, instance=Instance(flow, cls))
    found = method(flow, cls, "constructor")
    if found is None:
        return state
    return call(found[0], found[1], found[2], state, args, depth)[1]


def call_method(flow, receiver: Val, name: str, args: List[Val], node, depth: int) -> Optional[Val]:
    """``receiver.name(args)`` on an object of a linted class: the method's value (the object itself
    for ``return this``); the object afterwards is kept for ``node`` (``Flow.states``)."""
    inst = receiver.instance
    found = method(inst.flow, inst.cls, name)
    if found is None:
        return None
    result, after = call(found[0], found[1], found[2], receiver, args, depth + 1)
    flow.states[node.id] = after
    return result


def member(receiver: Val, prop: str, depth: int) -> Optional[Val]:
    """``receiver.prop`` on an object of a linted class (not written by the calls seen): a getter's
    value, else the class's view of the field; None when the class has neither."""
    inst = receiver.instance
    for f, c in chain(inst.flow, inst.cls):
        getter = f.index.getters.get((c, prop))
        if getter is not None:
            return call(f, c, getter, receiver, [], depth + 1)[0]
        if (c, prop) in f.index.attrs or (c, prop) in f.index.attr_mutations:
            return f.class_attr(c, prop, depth + 1)
    return None


def call(flow, cls: str, func, state: Val, args: List[Val], depth: int) -> Tuple[Val, Val]:
    """(the value ``func`` returns, the object after it) for a method of ``cls`` called on ``state``."""
    params = flow.index.param_list(func.child_by_field_name("parameters"))
    env = flow._bind_params(params, args, func.id, depth)
    after = Val(mapping=dict(state.mapping or {}), node=state.node, instance=state.instance or Instance(flow, cls))
    for p in params:  # `constructor(private readonly client: Client)` declares and sets a field
        if any(c.type in ("accessibility_modifier", "readonly") for c in p.children):
            pattern = p.child_by_field_name("pattern")
            if pattern is not None and text(pattern) in env:
                after.mapping[text(pattern)] = env[text(pattern)]
    sup = flow.index.super_calls.get(func.id)
    if sup is not None:  # `super(...)`: the base class's constructor runs first, with these arguments
        after = _super(flow, cls, sup, after, env, func.id, depth)
    env["this"] = after
    for e in flow.index.this_writes.get(func.id, []):
        _write(flow, cls, after, e, env, nested=e.scope != func.id, depth=depth)
    returns = flow.index.returns.get(func.id, [])
    if not returns:
        return Val(), after
    if all(r.type == "this" for r in returns):
        return after, after
    return either([flow.ev(r, func.id, env, depth + 1) for r in returns]), after


def _super(flow, cls: str, sup, state: Val, env, scope: int, depth: int) -> Val:
    """The object after ``super(args)`` in a constructor of ``cls``: the nearest base constructor run on it."""
    for f, c in chain(flow, cls)[1:]:
        ctor = f.index.classes.get(c, {}).get("constructor")
        if ctor is not None:
            args = [flow.ev(a, scope, env, depth + 1) for a in args_of(sup)]
            return call(f, c, ctor, state, args, depth + 1)[1]
    return state


def _write(flow, cls: str, after: Val, e, env, nested: bool, depth: int) -> None:
    """One write to ``this.<attr>`` applied to the object (in a nested callback: it may run any number
    of times, so a list it fills has no known items)."""
    attr = e.attr
    if e.kind == "assign" and not nested:
        after.mapping[attr] = flow.ev(e.value, e.scope, env, depth + 1) if e.value is not None else Val()
        return
    cur = after.mapping.get(attr)
    if cur is None:  # the field as the object starts: its initialiser (the class's other writes are not this call's)
        inst = after.instance
        cur = Val()
        for f, c in chain(inst.flow, inst.cls) if inst is not None else [(flow, cls)]:
            init = f.index.fields.get((c, attr))
            if init is not None:
                cur = f.ev(init, f.index.attr_scopes.get(init.id, MODULE), None, depth + 1)
                break
    out = Val(cur.parts, list(cur.hazards), list(cur.items) if cur.items is not None else None,
              dict(cur.mapping) if cur.mapping is not None else None, cur.unordered, cur.names, cur.node, cur.instance)
    if e.kind == "setkey" and out.mapping is None and not nested:
        out.mapping = {}
    unrolled = flow._mutate(out, e, e.scope, env, depth)
    if nested and out.unordered is None and not unrolled:
        out.items = None if e.kind in ("append", "prepend", "extend") else out.items
    after.mapping[attr] = out
