"""The TS/JS evaluator: what text and hazards can reach an expression, as ``pysource.flow.Val``.

It follows, within a module: ``const``/``let``/``var`` bindings (the latest above the use in the
same function, any in an enclosing one), destructuring, mutations (``push``, ``Map.set``,
``Set.add``, ``o[k] = v``, ``+=``) including from closures, function calls (declarations, arrows,
``this.`` methods) with parameters bound to the arguments or, inside a function, to the module's
own call sites; class fields and ``this.x = ...``; and across the linted files a module imports
with a relative specifier (``project``). Template literals, ``+``, ``join``, ``map`` over known
arrays and ``JSON.stringify`` of known data give exact text, so token figures are exact.

Unordered sources are those whose order is not the code's: directory listings and collections
filled inside ``async`` callbacks (completion order); ``Object.keys``, spread, ``Array.from`` and
``Map``/``Set`` iteration keep their source's order, stable or not.
"""

from __future__ import annotations

import bisect
from typing import Dict, List, Optional, Tuple

from promptlint.pysource.flow import Hazard, Hole, Val, merge
from promptlint.tssource import branches, calls, closures, instances, names
from promptlint.tssource.index import FUNCTIONS, LOOPS, MODULE, Entry, ModuleIndex
from promptlint.tssource.values import Span, args_of, decode_fragment, either, joined, single_volatile, string_value, text

MAX_DEPTH = 10
MAX_CALL_SITES = 4
MAX_OBJECT_CALLS = 64  # method calls on one object applied to it, in source order
KEY_ALIASES = {"systemInstruction": "system_instruction", "cacheControl": "cache_control"}
PROVIDER_OPTIONS = ("providerOptions", "experimental_providerMetadata", "providerMetadata")
ASYNC_ORDER = "a collection filled inside an async callback (completion order)"
_ARITHMETIC = frozenset({"-", "*", "/", "%", "**", "|", "&", "^", ">>", "<<", ">>>"})


class Flow:
    """The evaluator of one module (``project``: the linted modules it may import)."""

    def __init__(self, path: str, index: ModuleIndex, kind_of, project=None, fs_path: Optional[str] = None,
                 source: bytes = b""):
        self.path = path  # as findings show it
        self._source = source
        self.fs_path = fs_path or path  # where relative imports resolve from
        self.index = index
        self.project = project
        self._kind_of = kind_of
        self._kinds: Dict[str, Tuple[str, Optional[str]]] = {}
        self._spans: Dict[int, Span] = {}
        self._memo: Dict[Tuple[int, int], Val] = {}
        self._active: set = set()
        self.states: Dict[int, Val] = {}  # a method call on an object -> the object after it (tssource.instances)
        self._assigned_memo: Dict[Tuple[int, str], list] = {}

    @property
    def display(self) -> str:  # what a finding reported in this module shows (pysource's Flow has it too)
        return self.path

    @property
    def source(self) -> str:  # its text: columns and source lines of a finding reported here
        return self._source.decode("utf-8", "replace")

    # ------------------------------------------------------------------ helpers
    def span(self, node) -> Span:
        s = self._spans.get(node.id)
        if s is None:
            s = self._spans[node.id] = Span(node, self.path)
        return s

    def text_of(self, node, limit: int = 60) -> str:
        seg = node.text if isinstance(node, Span) else " ".join(text(node).split())
        return seg if len(seg) <= limit else seg[: limit - 3] + "..."

    def kind_of(self, name: str) -> Tuple[str, Optional[str]]:
        k = self._kinds.get(name)
        if k is None:
            k = self._kinds[name] = self._kind_of(name)
        return k

    def name_of(self, node) -> Optional[str]:
        """The dotted name of a callee (``a.b.c``; ``?`` for a call in the chain), first segment
        mapped through package imports (``randomUUID`` from "crypto" -> ``crypto.randomUUID``)."""
        parts = []
        while node is not None and node.type == "member_expression":
            parts.append(text(node.child_by_field_name("property")))
            node = node.child_by_field_name("object")
        if node is None:
            return None
        if node.type == "call_expression" and _required(node) is not None:
            parts.append(_required(node))  # `require("os").hostname()`: the module's name
        elif node.type == "identifier":
            head = text(node)
            imp = self.index.imports.get(head)
            if imp is not None and not imp.module.startswith("."):
                head = imp.module if imp.name in ("*", "default") else f"{imp.module}.{imp.name}"
            parts.append(head)
        elif node.type == "this":
            parts.append("this")
        elif parts:
            parts.append("?")
        else:
            return None
        return ".".join(reversed(parts))

    def opaque(self, node, label: Optional[str] = None, name: Optional[str] = None) -> Val:
        label = label or self.text_of(node)
        kind, sub = self.kind_of(name) if name else ("static", None)
        span = self.span(node)
        v = Val(parts=[Hole(kind, label, span, sub)], names=frozenset([name]) if name else frozenset())
        if kind == "volatile":
            v.hazards.append(Hazard("volatile", span, label, sub))
        return v

    def volatile(self, node, sub: str, name: Optional[str] = None) -> Val:
        span, label = self.span(node), self.text_of(node)
        return Val(parts=[Hole("volatile", label, span, sub)], hazards=[Hazard("volatile", span, label, sub)],
                   names=frozenset([name]) if name else frozenset())

    # ------------------------------------------------------------------ entry point
    def ev(self, node, scope: int, env: Optional[Dict[str, Val]] = None, depth: int = 0) -> Val:
        if node is None:
            return Val()
        if depth > MAX_DEPTH:
            return self.opaque(node)
        key = (node.id, scope)
        if not env and key in self._memo:
            return self._memo[key]
        if key in self._active:
            return self.opaque(node)
        self._active.add(key)
        try:
            handler = _EVALUATORS.get(node.type)
            v = getattr(self, handler)(node, scope, env or {}, depth) if handler else self.opaque(node)
        finally:
            self._active.discard(key)
        if not env:
            self._memo[key] = v
        return v

    # ------------------------------------------------------------------ literals
    def _string(self, node, scope, env, depth) -> Val:
        return Val(parts=["".join(decode_fragment(c) for c in node.named_children)])

    def _template(self, node, scope, env, depth) -> Val:
        out = Val(parts=[])
        for c in node.named_children:
            if c.type == "template_substitution":
                expr = c.named_children[0] if c.named_children else None
                v = self.ev(expr, scope, env, depth) if expr is not None else Val(parts=[""])
                out.add(v)
                out.parts.extend(v.parts if v.parts is not None else [Hole("static", self.text_of(expr), self.span(expr))])
            else:
                out.parts.append(decode_fragment(c))
        out.parts = joined(out.parts)
        return out

    def _this(self, node, scope, env, depth) -> Val:
        """``this`` in a method called on a known object: that object (else unknown)."""
        state = env.get("this")
        return state if state is not None else self.opaque(node, "this")

    def _literal(self, node, scope, env, depth) -> Val:
        t = node.type
        if t in ("null", "undefined"):
            return Val()
        return Val(parts=[text(node)])

    def _inner(self, node, scope, env, depth) -> Val:
        """Parentheses, ``await``, ``x!``, ``x as T``, ``x satisfies T``: the value of x."""
        kids = [c for c in node.named_children if c.type != "comment"]
        return self.ev(kids[0], scope, env, depth) if kids else Val()

    def _binary(self, node, scope, env, depth) -> Val:
        op = text(node.child_by_field_name("operator"))
        left = self.ev(node.child_by_field_name("left"), scope, env, depth)
        right = self.ev(node.child_by_field_name("right"), scope, env, depth)
        if op == "+":
            out = Val().add(left, right)
            if left.parts is not None and right.parts is not None:
                out.parts = joined(left.parts + right.parts)
            return out
        if op in ("??", "||", "&&"):
            return either([left, right])
        if op in _ARITHMETIC:  # `Date.now() - start`, `Date.now() / 1000`: still a value of the moment
            for side in (left, right):
                if single_volatile(side):
                    return Val(side.parts, list(side.hazards), names=side.names).add(left, right)
        return self.opaque(node).add(left, right)

    def _unary(self, node, scope, env, depth) -> Val:
        """``+new Date()``, ``-x``, ``~~x``: a number of ``x`` (a volatile one stays volatile)."""
        op = text(node.child_by_field_name("operator"))
        inner = self.ev(node.child_by_field_name("argument"), scope, env, depth)
        if op in ("+", "-", "~") and single_volatile(inner):
            return inner
        return self.opaque(node).add(inner) if op in ("+", "-", "~") else self.opaque(node)

    def _ternary(self, node, scope, env, depth) -> Val:
        return either([self.ev(node.child_by_field_name(k), scope, env, depth) for k in ("consequence", "alternative")])

    def _array(self, node, scope, env, depth) -> Val:
        out = Val(items=[])
        for elt in node.named_children:
            if elt.type == "comment":
                continue
            if elt.type == "spread_element":
                inner = elt.named_children[0]
                v = self.ev(inner, scope, env, depth)
                out.add(v)
                out.unordered = out.unordered or v.unordered
                if out.items is not None and v.items is None and v.unordered is None:
                    # `[system, ...history]`: the known items keep their place, the unknown rest is
                    # one item of unknown content (a conversation so far, extra tools)
                    out.items.append(Val(mapping={"content": self.opaque(inner)}, node=self.span(inner)))
                    continue
                out.items = out.items + v.items if out.items is not None and v.items is not None else None
                continue
            v = self.ev(elt, scope, env, depth)
            out.add(v)
            if out.items is not None:
                out.items.append(v)
        return out

    def _object(self, node, scope, env, depth) -> Val:
        out = Val(mapping={}, node=self.span(node))
        for c in node.named_children:
            if c.type == "pair":
                k, v_node = c.child_by_field_name("key"), c.child_by_field_name("value")
                key = _key(k)
                v = self.ev(v_node, scope, env, depth)
                out.add(v)
                if key is None:
                    out.mapping = None if out.mapping is None else out.mapping
                    out.unordered = out.unordered or v.unordered
                elif out.mapping is not None:
                    out.mapping[KEY_ALIASES.get(key, key)] = v
            elif c.type == "shorthand_property_identifier":
                v = self._name(c, scope, env, depth)
                out.add(v)
                if out.mapping is not None:
                    out.mapping[text(c)] = v
            elif c.type == "spread_element":
                v = self.ev(c.named_children[0], scope, env, depth)
                out.add(v)
                out.unordered = out.unordered or v.unordered
                if out.mapping is not None and v.mapping is not None:
                    out.mapping.update(v.mapping)
            elif c.type == "method_definition" and out.mapping is not None:  # `{ system() { ... } }`
                key = _key(c.child_by_field_name("name"))
                if key is not None:
                    v = self._function_value(c, scope, env, depth)
                    if any(x.type == "get" for x in c.children[:2]):  # `get system() { ... }`: read as a call
                        v = self.call_function(c, [], depth + 1, outer=env, this=out)
                        out.add(v)
                    out.mapping[key] = v
        if out.mapping is not None:
            _provider_options(out)
            _user_input(out)
        return out

    # ------------------------------------------------------------------ names
    def _name(self, node, scope, env, depth) -> Val:
        name = text(node)
        if name in env:
            return env[name]
        if name == "undefined":
            return Val()
        s = scope
        pos = node.start_byte
        while True:
            if (s, name) in self.index.declared:
                v = self._binding(s, name, pos, depth, env if s == scope else {})
                if v is not None:
                    return _named(v, name)
                node_scope = self.index.scope_node.get(s)
                if node_scope is not None and name in self._params_of(node_scope):
                    return _named(self._param(s, node_scope, name, node, depth), name)
                break
            if s == MODULE:
                break
            s, pos = self.index.parent.get(s, MODULE), 1 << 60
        imp = self.index.imports.get(name)
        if imp is not None and self.project is not None and imp.value is not None:
            v = self.project.exported(self.fs_path, imp.module, imp.value, depth + 1)
            if v is not None:
                return v
        return self.opaque(node, name, name)

    def _binding(self, scope: int, name: str, pos: int, depth: int, env) -> Optional[Val]:
        entries = self.index.bindings.get((scope, name))
        if not entries:
            return None
        before = entries[:bisect.bisect_left(entries, pos, key=_pos)] or entries[:1]  # sorted by position
        base_i = None
        for i, e in enumerate(before):
            if e.kind in ("assign", "for", "prop", "elem", "function"):
                base_i = i
        if base_i is None:
            return None
        base = before[base_i]
        if base.kind == "function":
            return Val(parts=[Hole("static", name, self.span(base.value))], node=self.span(base.value))
        if base.kind == "assign" and base_i > 0:  # `switch (mode) { case ...: s = ... }`: any branch's value
            alts = [self.ev(before[j].value, scope, env, depth + 1) for j in branches.alternatives(before, base_i)]
            v = either(alts)
        else:
            v = self.ev(base.value, scope, env, depth + 1)
        if base.kind == "for":
            elem = self.opaque(base.value, self.text_of(base.value), name)
            v = elem.add(Val(hazards=[h for h in v.hazards], names=v.names))
        elif base.kind == "prop" and base.value is not None and text(base.value) == "process.env":
            return self.env_value(base.target or base.value, base.key)
        elif base.kind == "prop":  # `const { question, team } = await req.json()`: two values, not one
            v = (v.mapping or {}).get(base.key) or self.opaque(base.target or base.value, f"{name}", name).add(v)
        elif base.kind == "elem":
            v = v.items[base.key] if v.items is not None and base.key < len(v.items) \
                else self.opaque(base.target or base.value, name, name).add(v)
        out = Val(v.parts, list(v.hazards), list(v.items) if v.items is not None else None,
                  dict(v.mapping) if v.mapping is not None else None, v.unordered, v.names, v.node, v.instance)
        calls = 0
        for e in before[base_i + 1:]:
            if e.call is not None and closures.is_object(out):
                calls += 1  # `b.add(x);` statements on an object: a bounded number (each re-reads `b`)
                if calls > MAX_OBJECT_CALLS:
                    continue
            self._mutate(out, e, scope, env, depth)
        return out

    def _mutate(self, out: Val, e: Entry, scope: int, env, depth) -> bool:
        """Apply one mutation to ``out``; True when a loop's pushes were applied item by item."""
        if e.call is not None and closures.is_object(out):
            # `b.system(text);` (or `b.add(x)`) on an object of a linted class: its method may rewrite it
            self.ev(e.call, scope, env, depth + 1)
            after = self.states.get(e.call.id)
            if after is not None:
                out.parts, out.items, out.mapping, out.instance = after.parts, after.items, after.mapping, after.instance
            return False
        if e.kind == "call":
            return False
        v = self.ev(e.value, scope, env, depth + 1) if e.value is not None else Val()
        out.add(v)
        looped = bool(e.loops) or e.async_cb is not None
        unrolled = self._unrolled(e, scope, env, depth) if looped and out.items is not None \
            and e.kind in ("append", "prepend") else None
        if unrolled is not None:  # `for (const s of SECTIONS) parts.push(...)`: one value per known item
            out.add(*unrolled)
            out.items = out.items + unrolled if e.kind == "append" else list(reversed(unrolled)) + out.items
            return True
        if e.kind in ("aug", "assign"):
            if e.kind == "assign":
                out.parts, out.items, out.mapping, out.unordered = v.parts, v.items, v.mapping, v.unordered
            elif out.parts is not None and v.parts is not None and not looped:
                out.parts = joined(out.parts + v.parts)
            else:
                out.parts = None if v.parts is None or looped else out.parts
        elif e.kind == "append":
            out.items = out.items + [v] if out.items is not None and not looped else None
        elif e.kind == "prepend":  # unshift
            out.items = [v] + out.items if out.items is not None and not looped else None
        elif e.kind == "extend":
            out.items = out.items + v.items if out.items is not None and v.items is not None and not looped else None
            out.unordered = out.unordered or v.unordered
        elif e.kind == "setkey":
            if out.mapping is not None and not looped:
                out.mapping[e.key] = v
            else:
                out.mapping = None
        elif e.kind == "setitem":
            out.mapping = None
            out.items = None
        if e.async_cb is not None and e.kind in ("append", "prepend", "extend", "setitem", "setkey") and out.unordered is None:
            out.unordered = (self.span(e.async_cb), ASYNC_ORDER)
        if out.unordered is None:
            for loop in e.loops:
                if loop.type not in LOOPS:  # the iterable of a `for ... of`
                    self._iterate(self.ev(loop, scope, env, depth + 1), loop, out, scope=scope)
        return False

    def _unrolled(self, e: Entry, scope: int, env, depth) -> Optional[List[Val]]:
        """The values a push in one loop over a known, ordered array adds, item by item, the loop's
        variable bound to each (``for (const s of xs)``, ``xs.forEach((s) => ...)``); else None."""
        if e.async_cb is not None or len(e.loops) != 1 or e.value is None or depth > MAX_DEPTH:
            return None
        loop = e.loops[0]
        var = _loop_variable(loop) if loop.type not in LOOPS else None
        if var is None:
            return None
        it = self.ev(loop, scope, env, depth + 1)
        if it.items is None or it.unordered is not None or len(it.items) > calls.MAX_MAPPED:
            return None
        out = []
        for item in it.items:
            inner = dict(env) if env else {}
            inner[var] = item
            out.append(self.ev(e.value, scope, inner, depth + 1))
        return out

    def _params_of(self, func) -> List[str]:
        params = func.child_by_field_name("parameters") or func.child_by_field_name("parameter")
        return self.index.param_names(params)

    def _function_name(self, func) -> Optional[str]:
        name = func.child_by_field_name("name")
        if name is not None:
            return ("this." if func.type == "method_definition" else "") + text(name)
        parent = func.parent
        if parent is not None and parent.type == "variable_declarator":
            n = parent.child_by_field_name("name")
            return text(n) if n is not None else None
        return None

    def _param(self, scope: int, func, name: str, node, depth: int) -> Val:
        params = self.index.param_list(func.child_by_field_name("parameters") or func.child_by_field_name("parameter"))
        fname = self._function_name(func)
        if fname == "this.constructor":  # a constructor's arguments: the module's `new C(...)`
            fname = self.index.class_of.get(func.id)
        vals = []
        for call, caller in self.index.call_sites.get(fname or "", [])[:MAX_CALL_SITES]:
            args = args_of(call)
            bound = self._bind_params(params, [self.ev(a, caller, None, depth + 1) for a in args], scope, depth)
            if name in bound:
                vals.append(bound[name])
        if not vals:
            bound = self._bind_params(params, [], scope, depth)
            if name in bound and not _is_unknown(bound[name]):
                vals.append(bound[name])
        return merge(vals) if vals else self.opaque(node, name, name)

    def _bind_params(self, params, args: List[Val], scope: int, depth: int) -> Dict[str, Val]:
        """Parameters -> values: positional arguments, object destructuring, defaults."""
        out: Dict[str, Val] = {}
        for i, p in enumerate(params):
            arg = args[i] if i < len(args) else None
            pattern, default = p, None
            if p.type in ("required_parameter", "optional_parameter"):
                pattern, default = p.child_by_field_name("pattern"), p.child_by_field_name("value")
            elif p.type == "assignment_pattern":
                pattern, default = p.child_by_field_name("left"), p.child_by_field_name("right")
            if pattern is None:
                continue
            if arg is None and default is not None:
                arg = self.ev(default, MODULE, None, depth + 1)
            if pattern.type == "identifier":
                out[text(pattern)] = arg if arg is not None else self.opaque(pattern, text(pattern), text(pattern))
            elif pattern.type == "object_pattern":
                for c in pattern.named_children:
                    key, local, dflt = None, None, None
                    if c.type == "shorthand_property_identifier_pattern":
                        key = local = text(c)
                    elif c.type == "pair_pattern":
                        key, local = _key(c.child_by_field_name("key")), c.child_by_field_name("value")
                        local = text(local) if local is not None and local.type == "identifier" else None
                    elif c.type == "object_assignment_pattern":
                        left = c.child_by_field_name("left")
                        key = local = text(left)
                        dflt = c.child_by_field_name("right")
                    if key is None or local is None:
                        continue
                    v = (arg.mapping or {}).get(key) if arg is not None else None
                    if v is None and dflt is not None:
                        v = self.ev(dflt, MODULE, None, depth + 1)
                    out[local] = v if v is not None else self.opaque(c, local, local)
        return out

    # ------------------------------------------------------------------ members
    def _member(self, node, scope, env, depth) -> Val:
        name = self.name_of(node)
        obj, prop = node.child_by_field_name("object"), text(node.child_by_field_name("property"))
        if name in names.VOLATILE_PROPERTIES:
            return self.volatile(node, names.VOLATILE_PROPERTIES[name], name)
        if name and name.startswith("process.env."):
            return self.env_value(node, prop)
        if obj is not None and obj.type == "this":
            state = env.get("this")
            if state is not None and state.mapping is not None and prop in state.mapping:
                return state.mapping[prop]  # written by the calls made on this object
            cls = self._class_of(scope)
            if not cls:
                return self.opaque(node, name=prop)
            if state is None or state.instance is None:  # any object of the class: the class's view
                state = Val(mapping={}, instance=instances.Instance(self, cls))
            v = instances.member(state, prop, depth)
            return v if v is not None else self.opaque(node, name=prop)
        if obj is not None and obj.type == "identifier" and self.project is not None:
            imp = self.index.imports.get(text(obj))
            if imp is not None and imp.name == "*" and imp.module.startswith("."):
                v = self.project.exported(self.fs_path, imp.module, prop, depth + 1)
                if v is not None:
                    return v
        static = self.class_named(obj, scope)
        if static is not None:  # `Prompts.SYSTEM`: a static field or getter of a linted class
            v = instances.member(Val(instance=instances.Instance(*static)), prop, depth)
            if v is not None:
                return v
        base = self.ev(obj, scope, env, depth)
        if base.mapping is not None and prop in base.mapping:
            return base.mapping[prop]
        if closures.is_object(base):
            v = instances.member(base, prop, depth)
            if v is not None:
                return v
        if single_volatile(base):
            return base
        out = self.opaque(node, name=prop)
        return out.add(base)

    def env_value(self, node, variable: str) -> Val:
        """``process.env.X`` (``process.env["X"]``, ``const { X } = process.env``): per process when X names
        the process or replica, else a deployment constant (unknown text)."""
        if variable in names.PER_PROCESS_ENV:
            return self.volatile(node, "process", variable)
        return self.opaque(node, f"process.env.{variable}", variable)

    def class_attr(self, cls: str, prop: str, depth: int) -> Val:
        """The class's view of a field: every value written to it (field initialisers, ``this.x = v`` in any
        method, each in the function that writes it), then the methods' ``this.x.push/set(...)`` and
        ``this.x.k = v`` in source order."""
        values = self.index.attrs.get((cls, prop), [])
        if values:
            out = either([self.ev(v, self.index.attr_scopes.get(v.id, MODULE), None, depth + 1) for v in values[:MAX_CALL_SITES]])
        else:
            out = Val(mapping={})  # filled only by `this.x.k = v`
        out = Val(out.parts, list(out.hazards), list(out.items) if out.items is not None else None,
                  dict(out.mapping) if out.mapping is not None else None, out.unordered, out.names, out.node, out.instance)
        mutations = self.index.attr_mutations.get((cls, prop), [])
        for e in mutations:  # methods fill it: `this.tools.set(...)`
            self._mutate(out, e, e.scope, {}, depth)
        if mutations and out.unordered is None:
            out.items = None if any(e.loops or e.async_cb for e in mutations) else out.items
        return out

    def class_named(self, node, scope: int):
        """(flow, class) when ``node`` names a class of the linted modules (here or imported), else None."""
        if node is None or node.type != "identifier":
            return None
        name = text(node)
        if name in self.index.classes:
            return self, name
        imp = self.index.imports.get(name)
        if imp is not None and self.project is not None and imp.value is not None:
            other = self.project.flow(self.fs_path, imp.module)
            cls = other.exported_class(imp.value) if other is not None else None
            if cls is not None:
                return other, cls
        return None

    def exported_class(self, exported: str) -> Optional[str]:
        """The class of this module an export names (``export default class Prompter``, ``export default
        Prompter``, an anonymous ``export default class {}``, ``export { A as B }``), or None."""
        node = self.index.exports.get(exported)
        if node is None and exported == "default":  # `import P from "./p.cjs"`: its `module.exports`
            node = self.index.exports.get("module.exports")
        if node is None:
            return exported if exported in self.index.classes else None
        if node.type in ("class", "class_declaration", "abstract_class_declaration"):
            name = node.child_by_field_name("name")
            node = name if name is not None else None
            cls = text(node) if node is not None else "default"
        else:
            cls = text(node) if node.type in ("identifier", "type_identifier") else None
        return cls if cls in self.index.classes else None

    def _subscript(self, node, scope, env, depth) -> Val:
        obj, index = node.child_by_field_name("object"), node.child_by_field_name("index")
        key = string_value(index)
        if key is not None and obj is not None and obj.type == "member_expression" and text(obj) == "process.env":
            return self.env_value(node, key)
        base = self.ev(obj, scope, env, depth)
        if key is not None and base.mapping is not None and key in base.mapping:
            return base.mapping[key]
        if index is not None and index.type == "number" and base.items is not None:
            i = int(text(index)) if text(index).isdigit() else -1
            if 0 <= i < len(base.items):
                return base.items[i]
        if single_volatile(base):
            return base
        if key is None and index is not None and index.type != "number":
            i = self.ev(index, scope, env, depth)
            if single_volatile(i):  # `TIPS[Math.floor(Math.random() * TIPS.length)]`: a pick that changes
                return self.volatile(node, "id").add(base, i)
            if base.mapping and base.unordered is None:  # `PROMPTS[mode]`: one of the table's values
                return either(list(base.mapping.values())).add(i)
        return self.opaque(node).add(base)

    def _class_of(self, scope: int) -> Optional[str]:
        s = scope
        while s != MODULE:
            cls = self.index.class_of.get(s)
            if cls:
                return cls
            s = self.index.parent.get(s, MODULE)
        return None

    # ------------------------------------------------------------------ calls
    def _call(self, node, scope, env, depth) -> Val:
        return calls.evaluate(self, node, scope, env, depth)

    def _new(self, node, scope, env, depth) -> Val:
        return calls.construct(self, node, scope, env, depth)

    def _function_value(self, node, scope, env, depth) -> Val:
        """A function written as a value: it keeps the bindings around it (``closures``)."""
        return Val(parts=[Hole("static", "function", self.span(node))], node=self.span(node),
                   instance=closures.Closure(self, node, dict(env) if env else {}))

    def function_of(self, callee, scope: int, depth: int):
        """(flow, function node) a callee names in this module or a linted module it imports, or None."""
        if callee is None:
            return None
        if callee.type in FUNCTIONS:
            return self, callee
        if callee.type in ("identifier", "shorthand_property_identifier"):
            name = text(callee)
            s = scope
            while True:
                entries = self.index.bindings.get((s, name))
                if entries:
                    for e in reversed(entries):
                        if e.kind == "function":
                            return self, e.value
                        if e.kind == "assign" and e.value is not None and e.value.type in FUNCTIONS:
                            return self, e.value
                    return None
                if s == MODULE:
                    break
                s = self.index.parent.get(s, MODULE)
            imp = self.index.imports.get(name)
            if imp is not None and self.project is not None and imp.value is not None:
                return self.project.exported_function(self.fs_path, imp.module, imp.value, depth + 1)
            return None
        if callee.type == "member_expression":
            obj, prop = callee.child_by_field_name("object"), text(callee.child_by_field_name("property"))
            if obj is not None and obj.type == "this":
                cls = self._class_of(scope)
                found = instances.method(self, cls, prop) if cls else None
                return (found[0], found[2]) if found is not None else None
            found = self._static_or_literal_method(obj, prop, scope, depth)
            if found is not None:
                return found
            owner = self.instance_of(obj, scope, depth)
            if owner is not None:  # `registry.list()` with `registry = new ToolRegistry()`
                found = instances.method(owner[0], owner[1], prop)
                if found is not None:
                    return found[0], found[2]
            if obj is not None and obj.type == "identifier" and self.project is not None:
                imp = self.index.imports.get(text(obj))
                if imp is not None and imp.name == "*" and imp.module.startswith("."):
                    return self.project.exported_function(self.fs_path, imp.module, prop, depth + 1)
        return None

    def _static_or_literal_method(self, obj, prop: str, scope: int, depth: int):
        """``Prompts.system()`` (a static method of a class of the linted modules) and ``prompts.system()``
        (a method or function property of an object literal bound to a name, here or imported)."""
        if obj is None or obj.type != "identifier" or depth > MAX_DEPTH:
            return None
        name = text(obj)
        if name in self.index.classes:
            method = self.index.classes[name].get(prop)
            return (self, method) if method is not None else None
        value = self._declared_value(obj, scope)
        if value is not None:
            return _literal_method(self, value, prop)
        imp = self.index.imports.get(name)
        if imp is not None and self.project is not None and imp.value is not None:
            other = self.project.flow(self.fs_path, imp.module)
            if other is None:
                return None
            cls = other.exported_class(imp.value)
            if cls is not None:
                method = other.index.classes[cls].get(prop)
                return (other, method) if method is not None else None
            exported = other.index.exports.get(imp.value)
            if exported is not None and exported.type == "identifier":
                value = other._declared_value(exported, MODULE)
            else:
                value = exported
            return _literal_method(other, value, prop) if value is not None else None
        return None

    def _declared_value(self, ident, scope: int):
        """The node a name is declared with (``const x = <node>``), in the scope chain, or None."""
        s = scope
        while True:
            entries = self.index.bindings.get((s, text(ident)))
            if entries:
                assigned = [e.value for e in entries if e.kind == "assign" and e.value is not None]
                return assigned[0] if len(assigned) == 1 else None
            if s == MODULE:
                return None
            s = self.index.parent.get(s, MODULE)

    def instance_of(self, node, scope: int, depth: int):
        """(flow, class name) when ``node`` is an instance of a class of the linted modules: ``new C()``,
        or a name or ``this.x`` bound to one."""
        if node is None or depth > MAX_DEPTH:
            return None
        if node.type == "new_expression":
            return self.class_named(node.child_by_field_name("constructor"), scope)
        if node.type in ("await_expression", "parenthesized_expression", "non_null_expression", "as_expression"):
            kids = [c for c in node.named_children if c.type != "comment"]
            return self.instance_of(kids[0], scope, depth + 1) if kids else None
        if node.type == "call_expression":  # a fluent step: `new B().system(s)`, a method that returns `this`
            f = node.child_by_field_name("function")
            owner = self.instance_of(f.child_by_field_name("object"), scope, depth + 1) \
                if f is not None and f.type == "member_expression" else None
            if owner is None:  # a factory: `createAgent()`, `await Agent.create()`, `Agent.getInstance()`
                target = self.function_of(f, scope, depth + 1)
                if target is None:
                    return None
                other, func = target
                for r in other.index.returns.get(func.id, [])[:MAX_CALL_SITES]:
                    found = other.instance_of(r, func.id, depth + 1) if r.type != "this" else None
                    if found is not None:
                        return found
                return None
            found = instances.method(owner[0], owner[1], text(f.child_by_field_name("property")))
            returns = found[0].index.returns.get(found[2].id, []) if found is not None else []
            return owner if returns and all(r.type == "this" for r in returns) else None
        values = []
        if node.type == "identifier":
            s = scope
            while True:
                entries = self.index.bindings.get((s, text(node)))
                if entries:
                    values = self._assigned(s, text(node), entries)
                    break
                if s == MODULE:
                    imp = self.index.imports.get(text(node))  # `import { agent } from "./agent"`
                    if imp is not None and self.project is not None and imp.value is not None:
                        other = self.project.flow(self.fs_path, imp.module)
                        exported = other.index.exports.get(imp.value) if other is not None else None
                        if exported is not None:
                            return other.instance_of(exported, MODULE, depth + 1)
                    break
                s = self.index.parent.get(s, MODULE)
        elif node.type == "member_expression" and (node.child_by_field_name("object") or node).type == "this":
            cls = self._class_of(scope)
            values = self.index.attrs.get((cls, text(node.child_by_field_name("property"))), []) if cls else []
        for v in values:
            found = self.instance_of(v, scope, depth + 1)
            if found is not None:
                return found
        return None

    def _assigned(self, scope: int, name: str, entries) -> list:
        """The values a name is assigned (``const b = new B()``), once per name."""
        key = (scope, name)
        if key not in self._assigned_memo:
            self._assigned_memo[key] = [e.value for e in entries if e.kind == "assign"]
        return self._assigned_memo[key]

    def call_function(self, func, args: List[Val], depth: int, outer: Optional[Dict[str, Val]] = None,
                      this: Optional[Val] = None) -> Val:
        """The value a function returns with its parameters bound to ``args`` (merged over returns);
        ``outer``: the bindings a function value closes over (``closures``); a generator gives the list
        of what it yields (of unknown length when it yields in a loop)."""
        params = self.index.param_list(func.child_by_field_name("parameters") or func.child_by_field_name("parameter"))
        env = dict(outer) if outer else {}
        env.update(self._bind_params(params, args, func.id, depth))
        if this is not None:
            env["this"] = this
        env = env or {"": Val()}
        yields = self.index.yields.get(func.id)
        if yields is not None:
            out = Val(items=[])
            for y, looped in yields:
                v = self.ev(y, func.id, env, depth + 1)
                out.add(v)
                out.items = out.items + [v] if out.items is not None and not looped else None
            return out
        returns = self.index.returns.get(func.id, [])
        if not returns:
            return Val()
        return either([self.ev(r, func.id, env, depth + 1) for r in returns])

    def callable_of(self, callee, scope: int, env, depth: int):
        """(flow, function, the bindings it closes over) a callee names or holds, or None: a function
        declared or imported (``function_of``), or a function value a call made (``closures``)."""
        if callee is not None and callee.type in FUNCTIONS:
            return self, callee, env  # an arrow written here: `this` and the bindings around it
        target = self.function_of(callee, scope, depth)
        if target is not None:
            return target[0], target[1], None
        if callee is None or callee.type != "identifier" or depth > MAX_DEPTH:
            return None  # (a function an object holds: `calls.evaluate` reads it off the object it has)
        c = closures.of(self.ev(callee, scope, env, depth + 1))
        return (c.flow, c.node, c.env) if c is not None else None

    def iterate(self, v: Val, node, out: Val, in_text: bool = False, scope: Optional[int] = None) -> None:
        self._iterate(v, node, out, in_text, scope)

    def _iterate(self, v: Val, node, out: Val, in_text: bool = False, scope: Optional[int] = None) -> None:
        """``v`` is iterated in order at ``node``: an unordered ``v`` makes the result's order unstable
        (reported at ``node``, or at the listing itself when ``node`` is a name that only holds it:
        ``const files = fg.sync(...); files.reduce(...)``)."""
        if v is None or v.unordered is None or node is None:
            return
        origin, what = v.unordered
        span = self.span(node)
        if scope is not None and node.type == "identifier" and getattr(origin, "path", None) == self.path:
            held = self._declared_value(node, scope)
            while held is not None and held.type in ("await_expression", "parenthesized_expression") and held.named_children:
                held = held.named_children[0]
            if held is not None and (held.start_point[0] + 1, held.start_point[1]) == (origin.lineno, origin.col_offset) \
                    and (held.end_point[0] + 1, held.end_point[1]) == (origin.end_lineno, origin.end_col_offset):
                span = origin
        if any(h.kind == "unordered" and h.node is span for h in out.hazards):
            return
        out.hazards.append(Hazard("unordered", span, self.text_of(node), origin=origin, origin_label=what,
                                  fix=None, in_text=in_text))


# ------------------------------------------------------------------ small helpers


def _required(call) -> Optional[str]:
    """The package ``require("os")`` names ("node:" dropped), else None."""
    f = call.child_by_field_name("function")
    if f is None or f.type != "identifier" or text(f) != "require":
        return None
    args = args_of(call)
    spec = string_value(args[0]) if len(args) == 1 else None
    return spec[5:] if spec and spec.startswith("node:") else spec


def _literal_method(flow: "Flow", value, prop: str):
    """(flow, function) for ``{ prop(...) {...} }`` or ``{ prop: (...) => ... }``, else None."""
    while value is not None and value.type in ("parenthesized_expression", "as_expression", "satisfies_expression"):
        value = value.named_children[0] if value.named_children else None
    if value is None or value.type != "object":
        return None
    for c in value.named_children:
        if c.type == "method_definition" and text(c.child_by_field_name("name")) == prop:
            return flow, c
        if c.type == "pair" and _key(c.child_by_field_name("key")) == prop:
            v = c.child_by_field_name("value")
            if v is not None and v.type in FUNCTIONS:
                return flow, v
    return None


def _user_input(out: Val) -> None:
    """``{ role: "user", content: `${q} ...` }``: what a user message holds that promptlint cannot
    write down is that request's input (per-request), whatever the variable is called."""
    role, content = out.mapping.get("role"), out.mapping.get("content")
    if role is None or role.parts != ["user"] or content is None or content.parts is None:
        return
    if any(isinstance(p, Hole) and p.kind == "static" for p in content.parts):
        parts = [Hole("per-request", p.label, p.node, p.sub) if isinstance(p, Hole) and p.kind == "static" else p
                 for p in content.parts]
        out.mapping["content"] = Val(parts, list(content.hazards), content.items, content.mapping, content.unordered,
                                     content.names, content.node)


def _key(k) -> Optional[str]:
    if k is None:
        return None
    if k.type in ("property_identifier", "identifier", "number"):
        return text(k)
    if k.type == "string":
        return string_value(k)
    return None  # computed key


def _loop_variable(iterable) -> Optional[str]:
    """The name a loop binds to each item of ``iterable``: ``for (const s of it)``, ``it.forEach((s) => ...)``."""
    parent = iterable.parent
    if parent is None:
        return None
    if parent.type == "for_in_statement":
        if not any(c.type == "of" for c in parent.children):
            return None  # `for ... in` walks keys
        left = parent.child_by_field_name("left")
        if left is not None and left.type in ("lexical_declaration", "variable_declaration"):
            left = next((c.child_by_field_name("name") for c in left.named_children if c.type == "variable_declarator"), None)
        return text(left) if left is not None and left.type == "identifier" else None
    call = parent.parent if parent.type == "member_expression" else None
    if call is None or call.type != "call_expression" or text(parent.child_by_field_name("property")) != "forEach":
        return None
    args = args_of(call)
    fn = args[0] if args else None
    if fn is None or fn.type not in FUNCTIONS:
        return None
    params = fn.child_by_field_name("parameters") or fn.child_by_field_name("parameter")
    first = params if params is not None and params.type == "identifier" else (
        params.named_children[0] if params is not None and params.named_children else None)
    if first is not None and first.type in ("required_parameter", "optional_parameter"):
        first = first.child_by_field_name("pattern")
    return text(first) if first is not None and first.type == "identifier" else None


def _pos(e: Entry) -> int:
    return e.pos


def _named(v: Val, name: str) -> Val:
    if name in v.names:
        return v
    return Val(v.parts, list(v.hazards), v.items, v.mapping, v.unordered, v.names | {name}, v.node, v.instance)


def _is_unknown(v: Val) -> bool:
    return v.parts is not None and len(v.parts) == 1 and isinstance(v.parts[0], Hole) and v.parts[0].kind == "static" \
        and v.mapping is None and v.items is None


def _provider_options(out: Val) -> None:
    """Vercel AI SDK: ``providerOptions.anthropic.cacheControl`` (or ``bedrock.cachePoint``) on a message
    or part is a breakpoint on that block: written as the ``cache_control`` the request layout reads.
    A message whose content is a string gets it on a one-block content list, where Anthropic puts it."""
    m = out.mapping
    for key in PROVIDER_OPTIONS:
        po = m.pop(key, None)
        if po is None or po.mapping is None:
            continue
        for provider in ("anthropic", "bedrock"):
            opts = po.mapping.get(provider)
            marker = None
            if opts is not None and opts.mapping is not None:
                marker = opts.mapping.get("cache_control") or opts.mapping.get("cachePoint")
            if marker is not None:
                m["cache_control"] = marker
    if "cache_control" in m and "role" in m and "content" in m and m["content"].items is None:
        content = m["content"]
        m["content"] = Val(items=[Val(mapping={"type": Val(parts=["text"]), "text": content,
                                               "cache_control": m.pop("cache_control")})]).add(content)


_EVALUATORS = {
    "string": "_string",
    "template_string": "_template",
    "number": "_literal",
    "true": "_literal",
    "false": "_literal",
    "null": "_literal",
    "undefined": "_literal",
    "identifier": "_name",
    "this": "_this",
    "shorthand_property_identifier": "_name",
    "parenthesized_expression": "_inner",
    "await_expression": "_inner",
    "non_null_expression": "_inner",
    "as_expression": "_inner",
    "satisfies_expression": "_inner",
    "type_assertion": "_inner",
    "binary_expression": "_binary",
    "ternary_expression": "_ternary",
    "unary_expression": "_unary",
    "array": "_array",
    "object": "_object",
    "member_expression": "_member",
    "subscript_expression": "_subscript",
    "call_expression": "_call",
    "new_expression": "_new",
    "arrow_function": "_function_value",
    "function_expression": "_function_value",
    "function": "_function_value",
}
