"""Calls and constructors in the TS/JS evaluator (``flow``): volatile values, dates and their
text, JSON, ``Object.*``, arrays (``join``, ``map``, ``sort``), ``Map``/``Set``, local and
imported functions, SDK records (LangChain messages, Bedrock commands, Vercel ``tool``)."""

from __future__ import annotations

from typing import List, Optional

from promptlint.pysource.flow import Hazard, Hole, Part, Val
from promptlint.tssource import closures, instances, names
from promptlint.tssource.values import args_of, either, joined, js_json, single_volatile, string_value, text

MAX_MAPPED = 64  # `.map(cb)` over a known array is evaluated item by item up to this length

_STR_METHODS = {"trim": "strip", "trimStart": "lstrip", "trimEnd": "rstrip", "toUpperCase": "upper",
                "toLowerCase": "lower"}
DEDENT_TAGS = {"dedent", "outdent", "stripIndent", "stripIndents", "endent"}


def evaluate(flow, node, scope: int, env, depth: int) -> Val:
    callee = node.child_by_field_name("function")
    name = flow.name_of(callee)
    args = args_of(node)
    ev = lambda n: flow.ev(n, scope, env, depth)  # noqa: E731
    sub = names.volatile_call(name)
    if sub is not None:
        return flow.volatile(node, sub, name)
    method = text(callee.child_by_field_name("property")) if callee is not None and callee.type == "member_expression" else None
    receiver_node = callee.child_by_field_name("object") if method is not None else None
    receiver = ev(receiver_node) if receiver_node is not None else None
    if node.child_by_field_name("arguments") is not None and node.child_by_field_name("arguments").type == "template_string":
        v = ev(args[0])  # a tagged template: dedent`...` keeps the text (its indentation is the code's)
        return _dedent(v) if (name or "").rsplit(".", 1)[-1] in DEDENT_TAGS else v
    if receiver is not None and single_volatile(receiver):
        return _volatile_text(flow, receiver, method, args, node)
    if method == "update" and len(args) == 1 and receiver_node.type == "call_expression" \
            and (flow.name_of(receiver_node.child_by_field_name("function")) or "").endswith(("createHash", "createHmac")):
        data = ev(args[0])  # a digest of a value of the moment changes with it
        if single_volatile(data):
            return data
    if method in ("format", "formatToParts") and not args and _made_by(flow, receiver_node, scope, "DateTimeFormat"):
        return flow.volatile(node, "timestamp", "Intl.DateTimeFormat")  # `fmt.format()` formats the current time
    if closures.is_object(receiver):  # a method of a linted class, on its object
        v = instances.call_method(flow, receiver, method, [ev(a) for a in args], node, depth)
        if v is not None:
            return v
    held = closures.of((receiver.mapping or {}).get(method)) if receiver is not None else None
    if held is not None:  # `prompts.system()`: a function an object holds (a factory's object literal)
        return closures.call(held, [ev(a) for a in args], depth, this=receiver)
    if (name or "").rsplit(".", 1)[-1] in ("useMemo", "computed") and args:  # React/Vue: the callback's value
        target = flow.callable_of(args[0], scope, env, depth)
        if target is not None:
            return target[0].call_function(target[1], [], depth + 1, outer=target[2])
    if name in names.NUMERIC_WRAPPERS and args:
        first = ev(args[0])
        if single_volatile(first):
            return first
    if name == "JSON.stringify":
        return _stringify(flow, node, args, ev)
    if name in ("Object.keys", "Object.values", "Object.entries") and args:
        return _object_view(flow, args[0], name.rsplit(".", 1)[-1], ev)
    if name == "Object.fromEntries" and args:
        x = ev(args[0])
        out = Val(unordered=x.unordered, node=flow.span(node)).add(x)
        return out
    if name == "Object.assign" and args:
        vals = [ev(a) for a in args]
        out = Val(mapping={}, node=flow.span(node)).add(*vals)
        for v in vals:
            if v.mapping is None or out.mapping is None:
                out.mapping = None
            else:
                out.mapping.update(v.mapping)
            out.unordered = out.unordered or v.unordered
        return out
    if name in ("Array.from", "Promise.all", "Promise.allSettled", "structuredClone", "String", "Array.of") and args:
        x = ev(args[0]) if name != "Array.of" else Val(items=[ev(a) for a in args])
        if name == "Array.from" and len(args) > 1:
            return _mapped(flow, x, args[1], scope, env, depth, node)
        return x
    if name in names.SORTING_FUNCTIONS or (name or "").rsplit(".", 1)[-1] in ("sortBy", "orderBy"):
        x = ev(args[0]) if args else Val()
        return Val(hazards=[h for h in x.hazards if not (h.kind == "unordered" and not h.in_text)], names=x.names)
    unordered = names.unordered_call(name)
    if unordered is not None:
        return Val(unordered=(flow.span(node), unordered))
    if method is not None and receiver is not None:
        v = _method(flow, node, method, receiver, receiver_node, args, scope, env, depth)
        if v is not None:
            return v
    if method == "fromTemplate" and args:  # LangChain.js prompt templates: the template text
        v = ev(args[0])
        owner = (name or "").rsplit(".", 2)[-2] if "." in (name or "") else ""
        if owner.endswith("MessagePromptTemplate"):
            role = owner[: -len("MessagePromptTemplate")].lower() or "message"
            return Val(mapping={"role": Val(parts=[role]), "content": v}, node=flow.span(node)).add(v)
        return v
    if name in ("tool", "ai.tool", "getGenerativeModel") or (method == "getGenerativeModel" and args):
        return ev(args[0]) if args else Val()
    target = flow.callable_of(callee, scope, env, depth)
    if target is not None:  # a function declared or imported, or one a call made (`const system = make(opts)`)
        other, func, outer = target
        return other.call_function(func, [ev(a) for a in args], depth + 1, outer=outer)
    if callee is not None and callee.type == "identifier" and _made_by(flow, callee, scope, None):
        return flow.volatile(node, "id", name)  # `newId()`, made by `customAlphabet(...)`: a fresh id per call
    if args and (name or "").rsplit(".", 1)[-1] in DEDENT_TAGS:
        return _dedent(ev(args[0]))  # `dedent(`...`)` called, not tagged
    if args and _is_formatter(name, method):
        first = ev(args[0])  # format(new Date(), "yyyy-MM-dd"), new Intl.DateTimeFormat(...).format(now)
        if single_volatile(first):
            return first
    return flow.opaque(node)


def _made_by(flow, node, scope: int, ctor: Optional[str]) -> bool:
    """Whether ``node`` is (or names a binding made by) a ``new``/call of a name ending in ``ctor``
    (``Intl.DateTimeFormat``), or, for ``ctor`` None, a call of an id generator factory."""
    if node is not None and node.type in ("identifier", "shorthand_property_identifier"):
        name, node = node, flow._declared_value(node, scope)
        imp = flow.index.imports.get(text(name)) if node is None else None
        if imp is not None and imp.value is not None and imp.module.startswith(".") and flow.project is not None:
            found = flow.project.exported_node(flow.fs_path, imp.module, imp.value)  # `import { traceId } from "./ids"`
            return found is not None and _made_by(found[0], found[1], 0, ctor)
    if node is None or node.type not in ("new_expression", "call_expression"):
        return False
    made = flow.name_of(node.child_by_field_name("constructor") or node.child_by_field_name("function"))
    return names.id_factory(made) if ctor is None else (made or "").endswith(ctor)


def _text(v: Val) -> Optional[str]:
    return "".join(v.parts) if v.parts is not None and all(isinstance(p, str) for p in v.parts) else None


def _is_formatter(name: Optional[str], method: Optional[str]) -> bool:
    """A call that turns its first argument into text (a date formatter, ``String``, an escaper)."""
    last = method or (name or "").rsplit(".", 1)[-1]
    return last.lower().startswith("format") or last in ("String", "encodeURIComponent", "escape", "toString", "lightFormat")


def construct(flow, node, scope: int, env, depth: int) -> Val:
    ctor = node.child_by_field_name("constructor")
    name = flow.name_of(ctor) or text(ctor)
    last = name.rsplit(".", 1)[-1]
    args = args_of(node)
    ev = lambda n: flow.ev(n, scope, env, depth)  # noqa: E731
    if last == "Date":
        if not args:
            return flow.volatile(node, "timestamp", "Date")
        inner = ev(args[0])
        return inner if single_volatile(inner) else flow.opaque(node).add(inner)
    if last in ("Set", "Map", "WeakMap") and args:
        x = ev(args[0])
        out = Val(items=x.items, unordered=x.unordered, node=flow.span(node)).add(x)
        pairs = x.items if last != "Set" and x.items is not None else None
        if pairs and all(p.items is not None and len(p.items) == 2 and _text(p.items[0]) is not None for p in pairs):
            out.mapping = {_text(p.items[0]): p.items[1] for p in pairs}  # `new Map([["chat", A], ...])`: `.get("chat")`
            out.items = list(out.mapping.values())
        return out
    if last in ("Set", "Map"):
        return Val(items=[], node=flow.span(node))
    if last in names.REQUEST_COMMANDS and args:
        return ev(args[0])
    owner = flow.instance_of(node, scope, depth)
    if owner is not None:  # `new RequestBuilder()`: an object of a linted class
        return instances.construct(owner[0], owner[1], [ev(a) for a in args], flow.span(node), depth + 1)
    if last.endswith("Message") and last[:1].isupper() and args:
        v = ev(args[0])  # LangChain: new SystemMessage("...") / new SystemMessage({ content })
        out = Val(mapping=dict(v.mapping) if v.mapping is not None else {"content": v}, node=flow.span(node)).add(v)
        out.mapping.setdefault("role", Val(parts=[last[: -len("Message")].lower() or "message"]))
        return out
    if args and args[0].type == "object":
        v = ev(args[0])  # an SDK client or a record: its options
        out = flow.opaque(node)
        out.mapping, out.node = v.mapping, flow.span(node)
        return out.add(v)
    return flow.opaque(node)


# ------------------------------------------------------------------ pieces


def _volatile_text(flow, receiver: Val, method: Optional[str], args, node) -> Val:
    """A method on a volatile value (``new Date().toISOString()``): still volatile, maybe coarser."""
    h = receiver.parts[0]
    sub = h.sub
    if method in names.DATE_METHODS and names.DATE_METHODS[method] is not None:
        sub = names.DATE_METHODS[method]
    elif method in ("slice", "substring", "substr") and [text(a) for a in args[:2]] == ["0", "10"] and sub == "timestamp":
        sub = "date"
    elif method == "split" and args and string_value(args[0]) == "T" and sub == "timestamp":
        sub = "date"
    return Val([Hole(h.kind, h.label, h.node, sub)], list(receiver.hazards), names=receiver.names)


def _stringify(flow, node, args, ev) -> Val:
    """``JSON.stringify(data, replacer, indent)``: the exact text when the data is known; a hazard
    when the data's key or item order comes from an unordered source (insertion order is kept)."""
    data = ev(args[0]) if args else Val()
    indent = ""
    if len(args) > 2:
        a = args[2]
        indent = " " * min(10, int(text(a))) if a.type == "number" and text(a).isdigit() else (string_value(a) or "")
    replacer = len(args) > 1 and args[1].type not in ("null", "undefined")
    parts = None if replacer else js_json(data, indent, skip=lambda x: closures.of(x) is not None)
    unstable = data.unordered is not None or any(h.kind == "unordered" for h in data.hazards)
    kept = [h for h in data.hazards if h.kind != "unordered"] if unstable else list(data.hazards)
    out = Val(parts=parts if parts is not None else [Hole("static", flow.text_of(node), flow.span(node))],
              hazards=kept, names=data.names)
    if unstable:
        out.hazards.append(Hazard("json", flow.span(node), flow.text_of(node), fix=None))
    return out


def _object_view(flow, arg, which: str, ev) -> Val:
    x = ev(arg)
    out = Val(unordered=x.unordered).add(x)
    if x.mapping is not None and x.unordered is None:
        if which == "keys":
            out.items = [Val(parts=[k]) for k in x.mapping]
        elif which == "values":
            out.items = list(x.mapping.values())
        else:
            out.items = [Val(items=[Val(parts=[k]), v]) for k, v in x.mapping.items()]
    return out


def _method(flow, node, method: str, receiver: Val, receiver_node, args, scope, env, depth) -> Optional[Val]:
    ev = lambda n: flow.ev(n, scope, env, depth)  # noqa: E731
    if method == "get" and len(args) == 1 and receiver.mapping and receiver.unordered is None:
        key = _text(ev(args[0]))  # a Map of prompts: the one named, or any of them
        return receiver.mapping.get(key) or Val() if key is not None else either(list(receiver.mapping.values()))
    if method == "join":
        return _join(flow, node, receiver, receiver_node, ev(args[0]) if args else Val(parts=[","]), scope)
    if method in ("reduce", "reduceRight") and args:
        return _reduced(flow, node, method, receiver, receiver_node, args, scope, env, depth)
    if method in names.SORTING_METHODS:
        return Val(items=None, hazards=[h for h in receiver.hazards if not (h.kind == "unordered" and not h.in_text)],
                   names=receiver.names)
    if method in ("keys", "values", "entries") and not args:
        return Val(items=receiver.items if method == "values" else None, unordered=receiver.unordered).add(receiver)
    if method == "map" and args:
        return _mapped(flow, receiver, args[0], scope, env, depth, node)
    if method in names.ORDERED_ARRAY_METHODS and (receiver.items is not None or receiver.unordered is not None):
        out = Val(unordered=receiver.unordered).add(receiver)
        for a in args:
            out.add(ev(a))
        if method == "concat" and receiver.items is not None:
            more = [ev(a) for a in args]
            if all(m.items is not None for m in more):
                out.items = receiver.items + [i for m in more for i in m.items]
        elif method in ("slice", "filter") and receiver.items is not None and not args and method == "slice":
            out.items = list(receiver.items)
        return out
    if receiver.parts is not None and all(isinstance(p, str) for p in receiver.parts):
        literal = "".join(receiver.parts)
        consts = [string_value(a) for a in args]
        if method in _STR_METHODS and not args:
            return Val(parts=[getattr(literal, _STR_METHODS[method])()])
        if method in ("replace", "replaceAll") and len(args) == 2 and None not in consts:
            return Val(parts=[literal.replace(consts[0], consts[1], -1 if method == "replaceAll" else 1)])
        if method == "concat":
            vals = [ev(a) for a in args]
            if all(v.parts is not None for v in vals):
                return Val(parts=joined(list(receiver.parts) + [p for v in vals for p in v.parts])).add(*vals)
        if method == "repeat" and len(args) == 1 and args[0].type == "number" and text(args[0]).isdigit():
            return Val(parts=[literal * min(int(text(args[0])), 1000)])
        if method == "toString":
            return receiver
    if method in ("toString", "trim", "trimEnd", "trimStart") and receiver.parts is not None:
        return receiver
    return None


def _join(flow, node, receiver: Val, receiver_node, sep: Val, scope: Optional[int] = None) -> Val:
    out = Val().add(receiver, sep)
    flow.iterate(receiver, receiver_node, out, in_text=True, scope=scope)
    for h in receiver.hazards:  # an unordered list being joined: its text order is the hazard now
        if h.kind == "unordered":
            h.in_text = True
    if receiver.items is not None and sep.parts is not None and all(i.parts is not None for i in receiver.items):
        parts: List[Part] = []
        for i, item in enumerate(receiver.items):
            if i:
                parts.extend(sep.parts)
            parts.extend(item.parts)
        out.parts = joined(parts)
    else:
        out.parts = [Hole("static", flow.text_of(node), flow.span(node))]
    return out


def _reduced(flow, node, method: str, receiver: Val, receiver_node, args, scope, env, depth) -> Val:
    """``xs.reduce((acc, x) => ..., init)``: folded item by item when the array and the callback are
    known; else the callback's value for one item, built in ``xs``'s order: text folded from an
    unordered ``xs`` (a directory listing) has its order (M203), an object or a list carries it on."""
    out = Val(unordered=receiver.unordered).add(receiver)
    target = flow.callable_of(args[0], scope, env, depth)
    init = flow.ev(args[1], scope, env, depth) if len(args) > 1 else None
    if target is None:
        return out.add(init)
    other, func, outer = target
    items = receiver.items
    if items is not None and receiver.unordered is None and 0 < len(items) + (init is not None) <= MAX_MAPPED:
        order = list(enumerate(items))[::-1 if method == "reduceRight" else 1]
        acc = init if init is not None else order.pop(0)[1]
        for i, item in order:
            acc = other.call_function(func, [acc, item, Val(parts=[str(i)])], depth + 1, outer=outer)
        return acc.add(receiver)
    sample = other.call_function(func, [init if init is not None else flow.opaque(args[0], "acc"),
                                        flow.opaque(args[0], "item")], depth + 1, outer=outer)
    out.add(sample)
    if sample.parts is not None and sample.mapping is None and sample.items is None:  # text folded item by item
        out.parts = [Hole("static", flow.text_of(node), flow.span(node))]
        out.unordered = None
        flow.iterate(receiver, receiver_node, out, in_text=True, scope=scope)
    return out


def _mapped(flow, receiver: Val, fn, scope, env, depth, node) -> Val:
    """``xs.map(x => ...)``: item by item when the array and the callback are known, else the
    callback's hazards with the array's order (an arrow written here sees ``this`` and the bindings
    around it)."""
    out = Val(unordered=receiver.unordered).add(receiver)
    target = flow.callable_of(fn, scope, env, depth)
    if target is None:
        return out
    other, func, outer = target
    if receiver.items is not None and len(receiver.items) <= MAX_MAPPED:
        out.items = []
        for i, item in enumerate(receiver.items):
            v = other.call_function(func, [item, Val(parts=[str(i)])], depth + 1, outer=outer)
            out.add(v)
            out.items.append(v)
        return out
    sample = other.call_function(func, [flow.opaque(fn, "item")], depth + 1, outer=outer)
    return out.add(Val(hazards=[h for h in sample.hazards]))


def _dedent(v: Val) -> Val:
    """``dedent`...```: the common leading indentation of the literal lines removed, first and last blank
    lines dropped (what the ``dedent`` package does to a template's strings before it interpolates)."""
    if v.parts is None:
        return v
    import textwrap

    holes = [p for p in v.parts if not isinstance(p, str)]
    s = "".join(p if isinstance(p, str) else "\0" for p in v.parts)  # a value stands where it is written
    lines = s.split("\n")
    if lines and not lines[0].strip():
        lines = lines[1:]
    if lines and not lines[-1].strip():
        lines = lines[:-1]
    pieces = textwrap.dedent("\n".join(lines)).split("\0")
    parts: List[Part] = [pieces[0]]
    for hole, piece in zip(holes, pieces[1:]):
        parts += [hole, piece]
    return Val(parts=joined(parts), hazards=v.hazards, names=v.names)
