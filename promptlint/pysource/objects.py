"""Values across functions, classes and modules: imported names, objects and their attributes.

``flow.Flow`` asks this module when a name, an attribute or a call is not local to the function
it evaluates:

- a name imported from another linted module (``from prompts import SYSTEM``, ``import prompts``
  then ``prompts.SYSTEM``): its module-level value there, evaluated by that module's ``Flow``;
- a call of an imported function (its ``return`` expressions, parameters bound to the call's
  arguments), of a class of the linted files (an ``Instance``: the class and its constructor's
  arguments), or of a method on such an object (``self`` bound to it, inherited methods found on
  the bases);
- an attribute of an object: what the class writes to it (``self.x = v`` in any method, then
  ``self.x.append(v)``, ``self.x += v``, ``self.x[k] = v`` in source order; class-body fields,
  a dataclass field given to the constructor; a ``@property``).

Modules are found and parsed by ``pysource.project`` (bounded); without a project only the
module's own classes are followed. (This module imports no other of the package: ``flow`` imports
it, and reaches it back through the ``Flow`` objects it passes.)
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

MAX_BASES = 8


@dataclass(eq=False)
class Instance:
    """An object of a class of the linted files."""

    flow: Any  # the Flow of the module that defines the class
    cls: ast.ClassDef
    env: Optional[Dict[str, Any]]  # the constructor's parameters bound to its arguments; None: not known (`self` in a method)
    origin: Optional[ast.AST] = None  # the constructor call that made it: one object, however many copies of its value
    reader: Optional[ast.AST] = None  # the function that sends it (its calls of the object's methods are the ones that count)


def _load(flow, module: str, level: int, need=None):
    return flow.project.load(flow, module, level, need) if flow.project is not None else None


def resolve(flow, name: str, depth: int = 0, need=None) -> Optional[Tuple[Any, Optional[str]]]:
    """(the Flow of a linted module, a name in it) for an imported ``name``; (module flow, None) when the
    name is a module itself; None when it is not imported from a linted file. ``need``: byte strings one
    of which the module must contain to be parsed at all (a wrapper must call an SDK)."""
    spec = flow.index.imports.get(name)
    if spec is None or flow.project is None or depth > 4:
        return None
    memo = flow.__dict__.setdefault("_resolved", {})
    if (name, need) not in memo:
        memo[(name, need)] = _resolve(flow, name, spec, depth, need)
    return memo[(name, need)]


def _resolve(flow, name: str, spec, depth: int, need):
    module, level, attr = spec
    if attr is None:
        m = _load(flow, module, level, need)
        return (m, None) if m is not None else None
    sub = _load(flow, f"{module}.{attr}" if module else attr, level, need)  # `from pkg import prompts`
    if sub is not None:
        return sub, None
    m = _load(flow, module, level, need)
    if m is None:
        return None
    if attr not in m.index.functions and attr not in m.index.classes and attr in m.index.imports:
        return resolve(m, attr, depth + 1, need)  # a re-export: `from .prompts import SYSTEM` in a package's __init__
    return m, attr


# a module whose bytes hold none of these makes no LLM call (sinks.LLM_CALL_SUFFIXES' method names)
CALL_MARKERS = (b"create(", b"stream(", b"parse(", b"completion(", b"count_tokens(", b"converse", b"invoke_model",
                b"generate_content", b"generate(", b"chat(", b"invoke(", b"from_messages(", b"apply_chat_template",
                b"complete(", b"complete_async(", b"chat_completion(", b"acreate(")


def module_value(m, attr: str, depth: int):
    """A module-level constant of module ``m`` (its last assignment in the module)."""
    if depth > m.MAX_DEPTH or attr in m.index.functions or attr in m.index.classes:
        return None
    return m._binding(None, attr, (10**9, 0), depth + 1, {})


def imported_value(flow, name: str, depth: int):
    r = resolve(flow, name)
    if r is None or r[1] is None:
        return None
    return module_value(r[0], r[1], depth)


def module_attribute(flow, node: ast.Attribute, env, depth: int):
    """``prompts.SYSTEM`` where ``prompts`` is a linted module imported here."""
    if not isinstance(node.value, ast.Name) or node.value.id in env:
        return None
    r = resolve(flow, node.value.id)
    if r is None or r[1] is not None:
        return None
    return module_value(r[0], node.attr, depth)


# ----------------------------------------------------------------------------- classes


def class_attribute(flow, node: ast.Attribute, env, depth: int):
    """``Prompts.SYSTEM``: a class-body value read through the class (of the linted files, bases too);
    ``Mode.SUPPORT.value`` of an enum member: the member's value. None for anything else."""
    if isinstance(node.value, ast.Name) and node.value.id in env:
        return None
    target, attr = node.value, node.attr
    if attr == "value" and isinstance(target, ast.Attribute):
        target, attr = target.value, target.attr
    if not isinstance(target, (ast.Name, ast.Attribute)) or depth > flow.MAX_DEPTH:
        return None
    found = find_class(flow, target)
    if found is None:
        return None
    for f, c in mro(found[0], found[1]):
        entries = [e for e in f.index.attrs.get((c.name, attr), ()) if e.scope is None and e.kind == "assign"]
        if entries:
            return field_default(f, entries[-1].value, {}, depth + 1)
    return None


def find_class(flow, node: ast.AST) -> Optional[Tuple[Any, ast.ClassDef]]:
    """The class a name or ``module.Name`` denotes, in this module or an imported linted one."""
    if isinstance(node, ast.Name):
        if node.id in flow.index.classes:
            return flow, flow.index.classes[node.id]
        r = resolve(flow, node.id)
        if r is not None and r[1] is not None and r[1] in r[0].index.classes:
            return r[0], r[0].index.classes[r[1]]
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        r = resolve(flow, node.value.id)
        if r is not None and r[1] is None and node.attr in r[0].index.classes:
            return r[0], r[0].index.classes[node.attr]
    return None


def mro(flow, cls: ast.ClassDef) -> Iterator[Tuple[Any, ast.ClassDef]]:
    """The class, then its bases found in the linted files, depth first (bounded)."""
    seen = set()
    stack = [(flow, cls)]
    while stack and len(seen) < MAX_BASES:
        f, c = stack.pop(0)
        if id(c) in seen:
            continue
        seen.add(id(c))
        yield f, c
        for b in c.bases:
            found = find_class(f, b)
            if found is not None:
                stack.append(found)


def method(flow, cls: ast.ClassDef, name: str):
    for f, c in mro(flow, cls):
        m = f.index.methods.get((c.name, name))
        if m is not None:
            return f, m
    return None


def generic_self(flow, scope, node: ast.AST):
    """``self`` in a method analysed on its own: an object of the method's class whose constructor
    arguments are those of the class's calls in this module (``Flow._param`` of ``__init__``)."""
    cls = flow.index.classes.get(flow.index.class_of.get(id(scope), ""))
    if cls is None:
        return flow.opaque(node, node.id, node.id)
    out = flow.opaque(node, node.id, node.id)
    out.instance = Instance(flow, cls, None)
    return out


def instantiate(caller, node: ast.Call, cflow, cls: ast.ClassDef, scope, env, depth: int):
    """``Cls(...)``: an object whose constructor parameters (or dataclass fields) hold the arguments."""
    found = method(cflow, cls, "__init__")
    if found is not None:
        iflow, init = found
        ctor = caller.bind_arguments(node, init, scope, env, depth, iflow, skip_self=True)
    else:
        fields = [n for _, c in reversed(list(mro(cflow, cls))) for n in c_fields(_, c)]
        ctor = {}
        for i, a in enumerate(node.args):
            if isinstance(a, ast.Starred):
                break
            if i < len(fields):
                ctor[fields[i]] = caller.ev(a, scope, env, depth + 1)
        for k in node.keywords:
            if k.arg:
                ctor[k.arg] = caller.ev(k.value, scope, env, depth + 1)
    out = caller.opaque(node)
    out.add(*ctor.values())
    out.instance = Instance(cflow, cls, ctor, node)
    return out


def annotated(flow, ann: Optional[ast.AST], node: ast.AST):
    """A parameter annotated with a class of the linted files (``ctx: RequestContext``, ``Optional[...]``,
    ``X | None``, ``"X"``) that no call binds: an object of that class whose constructor arguments are not known
    (its fields hold their defaults: a ``default_factory``'s value, what ``__post_init__`` writes)."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        sides = [s for s in (ann.left, ann.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        ann = sides[0] if len(sides) == 1 else None
    elif isinstance(ann, ast.Subscript) and (flow.name_of(ann.value) or "").rsplit(".", 1)[-1] == "Optional":
        ann = ann.slice
    found = find_class(flow, ann) if ann is not None else None
    if found is None:
        return None
    out = flow.opaque(node)
    out.instance = Instance(found[0], found[1], {}, ann)
    return out


def c_fields(flow, cls: ast.ClassDef) -> List[str]:
    return flow.index.fields.get(cls.name, [])


def call(caller, node: ast.Call, receiver, scope, env, depth: int):
    """The value of a call that leaves the function: a method of a known object, an imported function,
    a class of the linted files; None for anything else."""
    if depth > caller.MAX_DEPTH:
        return None
    f = node.func
    if isinstance(f, ast.Attribute) and receiver is not None and receiver.instance is not None:
        inst = receiver.instance
        found = method(inst.flow, inst.cls, f.attr)
        if found is None:
            return None
        mflow, m = found
        return caller._call_local(node, m, scope, env, depth, callee=mflow, bound=receiver)
    made = _made_by_cls(caller, f, scope, env)
    if made is not None:  # `cls(...)` in a class method (`Prompt.from_file(path)`): an object of that class
        return instantiate(caller, node, made[0], made[1], scope, env, depth)
    owner = find_class(caller, f.value) if isinstance(f, ast.Attribute) else None
    if owner is not None:  # `Persona.system()`: a class or static method called on the class
        found = method(owner[0], owner[1], f.attr)
        if found is None:
            return None
        this = caller.opaque(f.value)
        this.instance = Instance(owner[0], owner[1], None)
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in found[1].decorator_list)
        return caller._call_local(node, found[1], scope, env, depth, callee=found[0], bound=None if static else this)
    cls = find_class(caller, f)
    if cls is not None:
        return instantiate(caller, node, cls[0], cls[1], scope, env, depth)
    target = None
    if isinstance(f, ast.Name) and f.id not in env:
        r = resolve(caller, f.id)
        if r is not None and r[1] is not None:
            target = (r[0], r[0].index.functions.get(r[1]))
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id not in env:
        r = resolve(caller, f.value.id)
        if r is not None and r[1] is None:
            target = (r[0], r[0].index.functions.get(f.attr))
    if target is None or target[1] is None:
        return _called_object(caller, node, scope, env, depth)
    return caller._call_local(node, target[1], scope, env, depth, callee=target[0])


def _made_by_cls(caller, f: ast.AST, scope, env) -> Optional[Tuple[Any, ast.ClassDef]]:
    """(module, class) when ``f`` is the ``cls`` of the ``@classmethod`` being evaluated: the class it is bound
    to (a subclass through which it was called), else the class that defines it."""
    if not (isinstance(f, ast.Name) and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(isinstance(d, ast.Name) and d.id == "classmethod" for d in scope.decorator_list)):
        return None
    a = scope.args.posonlyargs + scope.args.args
    if not a or a[0].arg != f.id:
        return None
    bound = env.get(f.id) if env else None
    if bound is not None and bound.instance is not None:
        return bound.instance.flow, bound.instance.cls
    cls = caller.index.classes.get(caller.index.class_of.get(id(scope), ""))
    return (caller, cls) if cls is not None else None


def _called_object(caller, node: ast.Call, scope, env, depth: int):
    """``system_prompt()`` where ``system_prompt`` is an object of a class of the linted files: its ``__call__``."""
    f = node.func
    index = caller.index
    if isinstance(f, ast.Name):  # a name bound here or imported (not a builtin, not a parameter's value)
        if f.id in env or not (f.id in index.imports or (index.sid(scope), f.id) in index.bindings
                               or (0, f.id) in index.bindings):
            return None
    elif not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in index.imports):
        return None
    obj = caller.ev(f, scope, env or None, depth + 1)
    if obj.instance is None:
        return None
    found = method(obj.instance.flow, obj.instance.cls, "__call__")
    if found is None:
        return None
    return caller._call_local(node, found[1], scope, env, depth, callee=found[0], bound=obj)


def callees(caller, node: ast.Call, scope) -> List[Tuple[Any, ast.AST, Any]]:
    """``callee``'s answer as a list, and for a method called on an object picked from a table
    (``AGENTS[mode].run(q)``, ``AGENTS.get(mode, default).run(q)``, ``REGISTRY[kind]().run(q)``, through a
    name bound to the pick): that method of each object of the table (``Flow.picks``)."""
    plain = caller._plain_getattr(node)
    node = plain if isinstance(plain, ast.Call) else node  # `getattr(agent, "run")(q)`: `agent.run(q)`
    f = node.func
    out = []
    if isinstance(f, ast.Attribute) and isinstance(f.value, (ast.Name, ast.Subscript, ast.Call)):
        for obj in caller.picks(f.value, scope) or ():  # each of them, not only the first a value merge keeps
            m = method(obj.instance.flow, obj.instance.cls, f.attr)
            if m is not None:
                out.append((m[0], m[1], obj))
    if out:
        return out
    found = callee(caller, node, scope)
    return [found] if found is not None else []


def callee(caller, node: ast.Call, scope) -> Optional[Tuple[Any, ast.AST, Any]]:
    """(its Flow, the function, the object it is called on or None) for a call of a function of another
    linted module or of a method of a known object; None for anything else (a module's own functions)."""
    f = node.func
    if isinstance(f, ast.Name):
        r = resolve(caller, f.id, need=CALL_MARKERS)
        if r is not None and r[1] is not None and r[1] in r[0].index.functions:
            return r[0], r[0].index.functions[r[1]], None
        return None
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call):  # `Bot().answer(q)`: an object made here
        receiver = caller.ev(f.value, scope)
        if receiver.instance is None:
            return None
        found = method(receiver.instance.flow, receiver.instance.cls, f.attr)
        return (found[0], found[1], receiver) if found is not None else None
    if not isinstance(f, ast.Attribute) or not isinstance(f.value, (ast.Name, ast.Attribute)):
        return None
    if isinstance(f.value, ast.Name):
        r = resolve(caller, f.value.id, need=CALL_MARKERS)
        if r is not None and r[1] is None:
            fn = r[0].index.functions.get(f.attr)
            return (r[0], fn, None) if fn is not None else None
    root = f.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    if root.id in caller.index.imports:  # `os.path.join`: a module; `conv.send()`: an object a linted module made
        r = resolve(caller, root.id)
        if r is None or r[1] is None or r[1] in r[0].index.functions or r[1] in r[0].index.classes:
            return None
    receiver = caller.ev(f.value, scope)
    if receiver.instance is None:
        return None
    found = method(receiver.instance.flow, receiver.instance.cls, f.attr)
    return (found[0], found[1], receiver) if found is not None else None


# ----------------------------------------------------------------------------- attributes


def attribute(obj, attr: str, depth: int, scope=None):
    """What an object's attribute holds: the values its class (and bases) write to it, in order, and what
    calls of its methods from outside the class add (``_outside_calls``); ``scope``: the function reading it."""
    inst: Instance = obj.instance
    merge = inst.flow.merge
    if depth > inst.flow.MAX_DEPTH:
        return None
    if inst.env is not None and attr in inst.env and attr not in _init_params(inst):
        return inst.env[attr]  # a dataclass field given to the constructor
    for f, c in mro(inst.flow, inst.cls):
        entries = f.index.attrs.get((c.name, attr))
        prop = f.index.methods.get((c.name, attr))
        if prop is not None and any(_is_property(d) for d in prop.decorator_list):
            returns = f.index.returns.get(id(prop), [])
            me = prop.args.args[0].arg if prop.args.args else "self"
            env = {me: obj} if inst.env is not None else {}
            return merge([f.ev(r, prop, env, depth + 1) for r in returns]) if returns else None
        if not entries:
            continue
        bases = [e for e in entries if e.kind == "assign"]
        if not bases:
            continue
        vals = [field_default(f, e.value, {}, depth + 1) if e.scope is None
                else f.ev(e.value, e.scope, _env_for(obj, e.scope), depth + 1) for e in bases]
        out = merge(vals)
        out = type(out)(out.parts, list(out.hazards), list(out.items) if out.items is not None else None,
                        dict(out.mapping) if out.mapping is not None else None, out.unordered, out.names, out.node,
                        out.instance, merged=out.merged)
        first = bases[0].pos
        called = _outside_calls(obj, [e.scope for e in entries if e.kind != "assign" and e.pos > first], depth,
                                inst.reader if inst.reader is not None else scope)
        for e in entries:
            if e.kind != "assign" and e.pos > first and id(e.scope) not in called:
                f._mutate(out, e, e.scope, _env_for(obj, e.scope), depth + 1)
        for _, method_, env in sorted(called_in_order(called), key=lambda c: c[0]):
            for e in entries:  # the method's writes to the attribute, its parameters bound to that call's arguments
                if e.scope is method_ and e.kind != "assign" and e.pos > first:
                    f._mutate(out, e, e.scope, env, depth + 1)
        return out
    return None


MAX_OUTSIDE_CALLS = 16  # calls of one object's mutating methods followed per attribute


def _outside_calls(obj, methods, depth: int, reader) -> Dict[int, list]:
    """id(method) -> [(where, method, env)] for each call of ``obj``'s methods that write the attribute
    (``conv.add_system(f"{now}")``) made outside the class, in the linted module or a module it reaches:
    the object is the same when its constructor call is (``Instance.origin``). ``where`` orders the calls:
    (the caller's module, line, column). Methods called nowhere outside are left to the class's own order.
    When the function that reads (or sends) the object calls them itself, only its calls count: a module-level
    object filled by two request handlers is filled once per request."""
    inst: Instance = obj.instance
    if inst.origin is None or inst.env is None or depth > inst.flow.MAX_DEPTH:
        return {}
    wanted = {}
    for m in methods:
        if m is not None and m.name != "__init__":
            wanted.setdefault(m.name, m)
    if not wanted:
        return {}
    flows = _flows(inst.flow)
    memo = inst.flow.__dict__.setdefault("_outside", {})
    key = (id(inst.origin), id(reader), tuple(sorted(wanted)), len(flows), depth > inst.flow.MAX_DEPTH // 2)
    if key not in memo:
        memo[key] = _find_outside_calls(obj, wanted, flows, depth, reader)
    return memo[key]


def _find_outside_calls(obj, wanted: Dict[str, Any], flows: list, depth: int, reader) -> Dict[int, list]:
    inst: Instance = obj.instance
    out: Dict[int, list] = {}
    seen = 0
    for k, caller in enumerate(flows):
        by_name = _method_calls(caller)
        for name in wanted:
            for call, scope in by_name.get(name, ()):
                if seen >= MAX_OUTSIDE_CALLS:
                    break
                receiver = caller.ev(call.func.value, scope, None, depth + 1)
                if receiver.instance is None or receiver.instance.origin is not inst.origin:
                    continue
                found = method(inst.flow, inst.cls, name)
                if found is None or found[1] is not wanted[name]:
                    continue
                seen += 1
                env = caller.bind_arguments(call, found[1], scope, {}, depth + 1, found[0], obj)
                out.setdefault(id(found[1]), []).append(((k, call.lineno, call.col_offset), found[1], env, scope))
    if any(c[3] is reader for calls in out.values() for c in calls):
        out = {key: [c for c in calls if c[3] is reader] for key, calls in out.items()}
    return {key: [c[:3] for c in calls] for key, calls in out.items() if calls}


def _method_calls(flow) -> Dict[str, list]:
    """Method name -> its calls on something other than ``self``/``cls`` in the module, indexed once per Flow."""
    table = flow.__dict__.get("_method_calls")
    if table is None:
        table = flow.__dict__["_method_calls"] = {}
        for call, scope in flow.index.calls:
            f = call.func
            if isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and f.value.id in ("self", "cls")):
                table.setdefault(f.attr, []).append((call, scope))
    return table


def called_in_order(called: Dict[int, list]) -> list:
    return [c for calls in called.values() for c in calls]


def _flows(flow) -> list:
    """The linted module first, then the other modules this analysis has loaded (bounded by the project)."""
    project = flow.project
    if project is None:
        return [flow]
    if project.main is not None:
        _side_effect_imports(project.main)
    out = [project.main] if project.main is not None else []
    out += [f for f in project.flows.values() if f is not None and f is not project.main]
    return out


def _side_effect_imports(flow) -> None:
    """Load the modules the linted module imports and never names again (``import setup_prompts  # registers
    the prompts``): they run for what they do to shared objects, so their calls of an object's methods count.
    Once per module."""
    if "_side_imports" in flow.__dict__:
        return
    flow.__dict__["_side_imports"] = True
    source = flow.source
    for name in sorted(flow.index.imports):
        # named once in the text (its import) is never used: a scan of the text, cheaper than a walk of the tree
        if len(re.findall(r"(?<![\w.])" + re.escape(name) + r"\b", source)) <= 1:
            resolve(flow, name)


def read_from(obj, scope):
    """``obj`` (a Val) as the function ``scope`` sends it: its method calls there are the ones that fill it."""
    if obj is None or obj.instance is None or obj.instance.origin is None:
        return obj
    from dataclasses import replace

    out = obj.__class__(obj.parts, list(obj.hazards), obj.items, obj.mapping, obj.unordered, obj.names, obj.node,
                        replace(obj.instance, reader=scope), merged=obj.merged)
    return out


def render(caller, obj, node: ast.AST, scope, depth: int, conversion: str = "str"):
    """What ``str(obj)`` (``conversion="repr"``: ``repr(obj)``, ``f"{obj!r}"``) is for an object of a class of the
    linted files: its ``__str__`` (else ``__format__``, else ``__repr__``, as Python falls back) return value,
    ``self`` bound to it, or a dataclass's generated repr ``Cls(field=value, ...)``; None when the class
    defines none of them."""
    inst: Instance = obj.instance
    names = ("__repr__",) if conversion == "repr" else ("__str__", "__format__", "__repr__")
    for name in names:
        found = method(inst.flow, inst.cls, name)
        if found is not None:
            call = ast.copy_location(ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[], keywords=[]), node)
            return caller._call_local(call, found[1], scope, {}, depth + 1, callee=found[0], bound=obj)
    return _dataclass_repr(obj, depth)


def _dataclass_repr(obj, depth: int):
    """``Cls(a='x', b=...)``: the repr ``@dataclass`` writes (and ``str()`` falls back to), each field's value quoted."""
    inst: Instance = obj.instance
    if not any(_is_dataclass(d) for d in inst.cls.decorator_list):
        return None
    parts: list = [f"{inst.cls.name}("]
    out = None
    for i, name in enumerate(n for f, c in reversed(list(mro(inst.flow, inst.cls))) for n in c_fields(f, c)):
        v = attribute(obj, name, depth + 1)
        if v is None:
            continue
        out = v if out is None else out.add(v)
        parts.append(f"{', ' if i else ''}{name}='")
        parts.extend(v.parts if v.parts is not None else [f"<{name}>"])
        parts.append("'")
    parts.append(")")
    text = inst.flow.opaque(obj.node or inst.cls)
    text.parts = parts
    return text.add(out) if out is not None else text


def fields_of(obj, depth: int):
    """An object of a linted model or dataclass as the dict of its fields (``.model_dump()``, ``.dict()``)."""
    inst: Instance = obj.instance
    out = inst.flow.opaque(obj.node or inst.cls)
    out.mapping = {}
    for name in (n for f, c in reversed(list(mro(inst.flow, inst.cls))) for n in c_fields(f, c)):
        v = attribute(obj, name, depth + 1)
        if v is not None:
            out.mapping[name] = v
            out.add(v)
    return out


def _is_dataclass(d: ast.AST) -> bool:
    target = d.func if isinstance(d, ast.Call) else d
    if isinstance(d, ast.Call) and any(k.arg == "repr" and isinstance(k.value, ast.Constant) and k.value.value is False
                                       for k in d.keywords):
        return False
    name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
    return name in ("dataclass", "define", "frozen", "attrs")


# dataclasses.field / pydantic.Field / attrs: where a field's default is written
_FIELD_CALLS = ("field", "Field", "attr.ib", "attrib", "attr.field")


def field_default(flow, value: ast.AST, env, depth: int):
    """The value of a class-body field's default: ``field(default=x)`` -> x; ``field(default_factory=lambda: e)``
    -> e; ``field(default_factory=f)`` -> what calling f gives (``datetime.now``: a clock); else ``value``'s."""
    if isinstance(value, ast.Call):
        name = flow.name_of(value.func) or ""
        if name in _FIELD_CALLS or name.rsplit(".", 1)[-1] in ("field", "Field"):
            for k in value.keywords:
                if k.arg == "default":
                    return flow.ev(k.value, None, env, depth)
                if k.arg in ("default_factory", "factory"):
                    if isinstance(k.value, ast.Lambda):
                        return flow.ev(k.value.body, None, env, depth)
                    return flow.called(k.value, None, env, depth)
    return flow.ev(value, None, env, depth)


def _init_params(inst: Instance) -> set:
    found = method(inst.flow, inst.cls, "__init__")
    return set(found[0].index.params(found[1])) if found is not None else set()


def _env_for(obj, scope) -> Dict[str, Any]:
    """The names a method sees when it writes an attribute of ``obj``: ``self`` and, in ``__init__``,
    the constructor's arguments (a method analysed on its own: none, its parameters come from its callers)."""
    inst: Instance = obj.instance
    if scope is None or inst.env is None:
        return {}
    a = scope.args.posonlyargs + scope.args.args
    env: Dict[str, Any] = {a[0].arg: obj} if a else {}
    if scope.name == "__init__":
        env.update(inst.env)
    return env


def _is_property(d: ast.AST) -> bool:
    name = d.attr if isinstance(d, ast.Attribute) else d.id if isinstance(d, ast.Name) else ""
    return name in ("property", "cached_property")
