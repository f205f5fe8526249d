"""One pass over a TS/JS module: scopes, bindings, mutations, returns, calls, imports, exports.

Scopes are functions (declarations, expressions, arrows, methods) and the module (id 0). A
binding is recorded in the scope that declares the name; a mutation (``x.push(v)``,
``m.set(k, v)``, ``o[k] = v``, ``x += v``) in the scope that declares ``x``, even from a closure,
with the enclosing loops and, when it happens inside an ``async`` callback of another scope,
that callback: such a collection fills in completion order, not in source order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from promptlint.tssource.values import string_value, text

FUNCTIONS = {"function_declaration", "generator_function_declaration", "function_expression", "function",
             "arrow_function", "method_definition", "generator_function"}
LOOPS = {"for_in_statement", "for_statement", "while_statement", "do_statement"}
MUTATORS = {"push": "append", "unshift": "prepend", "add": "append", "set": "setitem", "splice": "setitem"}
MODULE = 0
# a promise's callbacks run as each promise settles; an event listener's as each event arrives
CONTINUATIONS = {"then", "catch", "finally", "on", "once", "addListener", "prependListener", "addEventListener",
                 "subscribe"}
ITERATING = {"forEach", "map", "flatMap", "filter", "reduce", "reduceRight", "some", "every", "find", "findIndex"}
# nodes the walk never enters: leaves, and TypeScript's types (no value is made in them)
SKIP = frozenset({
    "identifier", "property_identifier", "shorthand_property_identifier", "private_property_identifier",
    "string_fragment", "escape_sequence", "number", "true", "false", "null", "undefined", "this", "super",
    "comment", "regex", "hash_bang_line", "statement_identifier", "type_identifier", "predefined_type",
    "type_annotation", "type_arguments", "type_parameters", "interface_declaration", "type_alias_declaration",
    "ambient_declaration", "abstract_method_signature", "index_signature", "method_signature", "property_signature",
    "implements_clause", "accessibility_modifier", "override_modifier", "jsx_text",
})


@dataclass
class Entry:
    pos: int  # start byte
    kind: str  # assign | aug | for | prop | elem | append | extend | setitem | setkey | function
    value: object  # a tree-sitter node (or None)
    loops: Tuple[object, ...] = ()
    key: object = None  # prop: the property name; elem: the index; setkey: the key
    async_cb: object = None  # the async callback the mutation runs in (completion order)
    attr: Optional[str] = None  # a write to `this.<attr>` (ModuleIndex.this_writes)
    scope: int = MODULE  # the function the write is in
    call: object = None  # `x.m(...)`: the call, for when x holds an object of a linted class (tssource.instances)
    target: object = None  # prop/elem: the name a destructuring binds (each its own value, its own place)


@dataclass
class Import:
    module: str  # the specifier as written ("./prompts", "openai", "node:crypto" -> "crypto")
    name: str  # "default", "*", or the exported name
    required: bool = False  # `const x = require("m")`: x is the module's `module.exports`, not a namespace

    @property
    def value(self) -> Optional[str]:
        """The export the imported name is, used as a value (None: an ESM namespace, `import * as ns`)."""
        if self.name == "*":
            return "module.exports" if self.required else None
        return self.name


class ModuleIndex:
    def __init__(self, root):
        self.root = root
        self.parent: Dict[int, int] = {}  # scope -> enclosing scope
        self.scope_node: Dict[int, object] = {}
        self.declared: Dict[Tuple[int, str], bool] = {}
        self.bindings: Dict[Tuple[int, str], List[Entry]] = {}
        self.returns: Dict[int, List[object]] = {}
        self.calls: List[Tuple[object, int]] = []  # (call_expression | new_expression, scope)
        self.calls_in: Dict[int, List[object]] = {}  # scope -> the calls made directly in it
        self.call_sites: Dict[str, List[Tuple[object, int]]] = {}
        self.objects: List[Tuple[object, int]] = []
        self.imports: Dict[str, Import] = {}
        self.exports: Dict[str, object] = {}  # exported name -> identifier node or expression node
        self.reexports: List[Tuple[str, Optional[str], Optional[str]]] = []  # (module, name or None=*, as)
        self.classes: Dict[str, Dict[str, object]] = {}  # class -> method -> node
        self.class_of: Dict[int, str] = {}  # method (or arrow inside a class) scope -> class
        self.members: set = set()  # scopes that are a class's methods (declared, or arrow fields)
        self.attrs: Dict[Tuple[str, str], List[object]] = {}  # (class, attr) -> assigned values
        self.attr_mutations: Dict[Tuple[str, str], List[Entry]] = {}  # (class, attr) -> this.x.push/set/add, this.x.k = v
        self.attr_scopes: Dict[int, int] = {}  # an assigned value's node id -> the function it is written in
        # method -> its writes to `this` in source order (`this.x = v`, `this.x.k = v`, `this.x.push(v)`), nested
        # functions' included: what a call of the method does to an object (tssource.instances)
        self.this_writes: Dict[int, List[Entry]] = {}
        self.getters: Dict[Tuple[str, str], object] = {}  # (class, name) -> `get name() {...}`
        self.fields: Dict[Tuple[str, str], object] = {}  # (class, name) -> its initialiser (`tools = new Map()`)
        self.bases: Dict[str, object] = {}  # class -> the expression it `extends`
        self.super_calls: Dict[int, object] = {}  # constructor -> its `super(...)` call (the base's constructor runs)
        self.yields: Dict[int, List[Tuple[object, bool]]] = {}  # generator -> (yielded value, inside a loop)
        self._pending: List[Tuple[int, str, Entry, int]] = []  # mutations resolved after the walk
        self._param_names: Dict[int, List[str]] = {}  # a memo: parameters node -> the names they bind
        self._walk()
        for scope, name, entry, origin in self._pending:
            self._resolve(scope, name, entry, origin)
        for entries in self.bindings.values():
            entries.sort(key=lambda e: e.pos)

    # ------------------------------------------------------------------ walk
    def _walk(self) -> None:
        stack = [(self.root, MODULE, (), None)]
        while stack:
            node, scope, loops, cls = stack.pop()
            t = node.type
            if t in FUNCTIONS:
                inner = self._function(node, scope, cls)
                body = node.child_by_field_name("body")
                params = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
                if params is not None:
                    self._params(params, inner)
                if body is not None:
                    if body.type != "statement_block":
                        self.returns.setdefault(inner, []).append(body)
                    stack.append((body, inner, (), cls))
                if params is not None:
                    stack.append((params, scope, (), cls))  # default values run in the caller's... close enough
                continue
            if t in ("class_declaration", "class", "abstract_class_declaration"):
                name = node.child_by_field_name("name")
                body = node.child_by_field_name("body")
                # `export default class { ... }`: a class without a name, imported by its default name
                cls_name = text(name) if name is not None else (
                    "default" if node.parent is not None and node.parent.type == "export_statement" else None)
                if name is not None:
                    self._declare(scope, cls_name, Entry(node.start_byte, "assign", node))
                if cls_name is not None:
                    self.classes.setdefault(cls_name, {})
                    base = _extends(node)
                    if base is not None:
                        self.bases[cls_name] = base
                if body is not None:
                    stack.append((body, scope, loops, cls_name))
                continue
            if t in ("public_field_definition", "field_definition") and cls:
                name = node.child_by_field_name("name") or node.child_by_field_name("property")
                value = node.child_by_field_name("value")
                if name is not None and value is not None:
                    self.attrs.setdefault((cls, text(name)), []).append(value)
                    self.attr_scopes[value.id] = scope
                    self.fields[(cls, text(name))] = value
                    if value.type in FUNCTIONS:  # `private build = () => ...`: a method
                        self.classes.setdefault(cls, {})[text(name)] = value
                        self.members.add(value.id)
            self._record(node, t, scope, loops, cls)
            if t == "call_expression" and cls:
                self._this_mutation(node, scope, loops, cls)
            if t == "for_in_statement" and node.child_by_field_name("right") is not None:
                loops = loops + (node.child_by_field_name("right"),)  # what `for ... of` iterates
            elif t in LOOPS:
                loops = loops + (node,)
            stack.extend((child, scope, loops, cls) for child in reversed(node.named_children) if child.type not in SKIP)

    def _function(self, node, scope: int, cls: Optional[str]) -> int:
        inner = node.id
        self.parent[inner] = scope
        self.scope_node[inner] = node
        self.returns.setdefault(inner, [])
        name = node.child_by_field_name("name")
        if node.type == "method_definition" and cls and name is not None:
            accessor = next((c.type for c in node.children[:3] if c.type in ("get", "set")), None)
            if accessor == "get":
                self.getters[(cls, text(name))] = node
            elif accessor is None:
                self.classes.setdefault(cls, {})[text(name)] = node
            self.class_of[inner] = cls
            self.members.add(inner)
            if text(name) == "constructor":  # `constructor(private readonly system: string)` declares a field
                for p in self.param_list(node.child_by_field_name("parameters")):
                    pattern = p.child_by_field_name("pattern") if p.type in ("required_parameter", "optional_parameter") else None
                    if pattern is not None and pattern.type == "identifier" and any(
                            c.type in ("accessibility_modifier", "readonly") for c in p.children):
                        self.attrs.setdefault((cls, text(pattern)), []).append(pattern)
                        self.attr_scopes[pattern.id] = inner
        elif cls and node.type == "arrow_function":
            self.class_of[inner] = cls  # an arrow's `this` is its class's (a field, or inside a method)
        elif name is not None and node.type in ("function_declaration", "generator_function_declaration"):
            self._declare(scope, text(name), Entry(node.start_byte, "function", node))
        return inner

    def _params(self, params, scope: int) -> None:
        for p in self.param_names(params):
            self.declared[(scope, p)] = True

    @staticmethod
    def param_list(params) -> List[object]:
        if params is None:
            return []
        if params.type == "identifier":  # `x => ...`
            return [params]
        return [c for c in params.named_children if c.type not in ("comment",)]

    def param_names(self, params) -> List[str]:
        if params is None:
            return []
        names = self._param_names.get(params.id)  # asked at each name's lookup: once per function
        if names is None:
            names = self._param_names[params.id] = [n for p in self.param_list(params) for n in _pattern_names(p)]
        return names

    def _declare(self, scope: int, name: str, entry: Entry) -> None:
        self.declared[(scope, name)] = True
        self.bindings.setdefault((scope, name), []).append(entry)

    def _record(self, node, t: str, scope: int, loops, cls) -> None:
        if t == "variable_declarator":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if value is not None and name is not None and _is_require(value):
                self._require(name, _module(string_value(value.child_by_field_name("arguments").named_children[0])))
            elif name is not None:
                self._pattern(scope, name, value, node.start_byte, loops, "assign")
        elif t == "for_in_statement":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None:
                if left.type in ("lexical_declaration", "variable_declaration"):
                    left = next((c.child_by_field_name("name") for c in left.named_children
                                 if c.type == "variable_declarator"), None) or left
                self._pattern(scope, left, right, node.start_byte, loops, "for")
        elif t == "assignment_expression":
            self._assignment(node, scope, loops, cls)
        elif t == "augmented_assignment_expression":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                self._mutation(scope, text(left), Entry(node.start_byte, "aug", node.child_by_field_name("right"), loops))
        elif t == "return_statement":
            value = node.named_children[0] if node.named_children else None
            if value is not None and scope != MODULE:
                self.returns.setdefault(scope, []).append(value)
        elif t in ("call_expression", "new_expression"):
            self._call(node, t, scope, loops)
        elif t == "yield_expression" and scope != MODULE:
            value = node.named_children[0] if node.named_children else None
            if value is not None:  # `yield* inner()` yields inner's items: the call's value is the items' list
                delegate = any(c.type == "*" for c in node.children[:2])
                self.yields.setdefault(scope, []).append((value, bool(loops) or delegate))
        elif t == "object":
            self.objects.append((node, scope))
        elif t == "import_statement":
            self._import(node)
        elif t == "export_statement":
            self._export(node)

    def _pattern(self, scope: int, target, value, pos: int, loops, kind: str) -> None:
        if target.type == "identifier":
            self._declare(scope, text(target), Entry(pos, kind, value, loops))
        elif target.type == "object_pattern":
            for c in target.named_children:
                if c.type == "shorthand_property_identifier_pattern":
                    self._declare(scope, text(c), Entry(pos, "prop", value, loops, key=text(c), target=c))
                elif c.type == "pair_pattern":
                    k, v = c.child_by_field_name("key"), c.child_by_field_name("value")
                    if v is not None and v.type == "identifier":
                        self._declare(scope, text(v), Entry(pos, "prop", value, loops, key=text(k), target=v))
                elif c.type == "object_assignment_pattern":
                    left = c.child_by_field_name("left")
                    if left is not None and left.type == "shorthand_property_identifier_pattern":
                        self._declare(scope, text(left), Entry(pos, "prop", value, loops, key=text(left), target=left))
        elif target.type == "array_pattern":
            for i, c in enumerate(target.named_children):
                if c.type == "identifier":
                    self._declare(scope, text(c), Entry(pos, "elem", value, loops, key=i, target=c))

    def _assignment(self, node, scope: int, loops, cls) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None:
            return
        if left.type == "identifier":
            self._mutation(scope, text(left), Entry(node.start_byte, "assign", right, loops))
        elif left.type == "member_expression":
            obj, prop = left.child_by_field_name("object"), left.child_by_field_name("property")
            if obj is not None and obj.type == "this" and cls:
                self.attrs.setdefault((cls, text(prop)), []).append(right)
                if right is not None:
                    self.attr_scopes[right.id] = scope
                self._this_write(scope, Entry(node.start_byte, "assign", right, loops, attr=text(prop)))
            elif obj is not None and obj.type == "member_expression" and cls \
                    and (obj.child_by_field_name("object") or obj).type == "this":  # `this.params.system = v`
                attr = text(obj.child_by_field_name("property"))
                entry = Entry(node.start_byte, "setkey", right, loops, key=text(prop), attr=attr)
                self.attr_mutations.setdefault((cls, attr), []).append(entry)
                self._this_write(scope, entry)
            elif obj is not None and obj.type == "member_expression" and text(obj) == "module.exports":
                self.exports[text(prop)] = right  # `module.exports.systemPrompt = ...`
            elif obj is not None and obj.type == "identifier":
                if text(obj) == "module" and text(prop) == "exports":
                    self.exports["module.exports"] = right
                elif text(obj) == "exports":
                    self.exports[text(prop)] = right
                else:
                    self._mutation(scope, text(obj), Entry(node.start_byte, "setkey", right, loops, key=text(prop)))
        elif left.type == "subscript_expression":
            obj = left.child_by_field_name("object")
            if obj is not None and obj.type == "identifier":
                self._mutation(scope, text(obj), Entry(node.start_byte, "setitem", right, loops))

    def _call(self, node, t: str, scope: int, loops) -> None:
        self.calls.append((node, scope))
        self.calls_in.setdefault(scope, []).append(node)
        f = node.child_by_field_name("function") or node.child_by_field_name("constructor")
        if f is None:
            return
        if f.type == "identifier":
            self.call_sites.setdefault(text(f), []).append((node, scope))
        elif f.type == "super":  # `super(...)` in a constructor: the base class's constructor with these arguments
            s = scope
            while s != MODULE and s not in self.members:
                s = self.parent.get(s, MODULE)
            if s != MODULE:
                self.super_calls[s] = node
        elif text(f) == "Object.assign":  # Object.assign(target, ...sources) fills target
            args = node.child_by_field_name("arguments")
            values = [c for c in args.named_children if c.type != "comment"] if args is not None else []
            if len(values) > 1 and values[0].type == "identifier":
                self._mutation(scope, text(values[0]), Entry(node.start_byte, "setitem", values[-1], loops))
        elif f.type == "member_expression":
            obj, prop = f.child_by_field_name("object"), f.child_by_field_name("property")
            method = text(prop)
            if obj is not None and obj.type == "this":
                self.call_sites.setdefault("this." + method, []).append((node, scope))
            if obj is not None and obj.type == "identifier" and method not in MUTATORS and _is_statement(node):
                # `builder.system(text);`: a method may write the object's fields (tssource.instances)
                self._mutation(scope, text(obj), Entry(node.start_byte, "call", None, loops, call=node))
            if obj is not None and obj.type == "identifier" and method in MUTATORS:
                args = node.child_by_field_name("arguments")
                values = args.named_children if args is not None else []
                value = values[-1] if values else None
                kind = MUTATORS[method]
                if value is not None and value.type == "spread_element":
                    kind, value = "extend", value.named_children[0] if value.named_children else None
                self._mutation(scope, text(obj), Entry(node.start_byte, kind, value, loops, call=node))

    def _this_mutation(self, node, scope: int, loops, cls: str) -> None:
        """``this.tools.set(k, v)`` in a method: a mutation of the class's attribute, in completion
        order when it runs inside an async callback of the method."""
        f = node.child_by_field_name("function")
        if f is None or f.type != "member_expression":
            return
        obj, method = f.child_by_field_name("object"), text(f.child_by_field_name("property"))
        if method not in MUTATORS or obj is None or obj.type != "member_expression":
            return
        if (obj.child_by_field_name("object") or obj).type != "this":
            return
        args = node.child_by_field_name("arguments")
        values = args.named_children if args is not None else []
        entry = Entry(node.start_byte, MUTATORS[method], values[-1] if values else None, loops)
        _, entry.async_cb, iterables = self._crossed(scope, lambda s: s in self.members)  # up to the method
        entry.loops = iterables + tuple(loops)
        entry.attr = text(obj.child_by_field_name("property"))
        self.attr_mutations.setdefault((cls, entry.attr), []).append(entry)
        self._this_write(scope, entry)

    def _this_write(self, scope: int, entry: Entry) -> None:
        """A write to ``this`` in the method enclosing ``scope`` (an arrow's ``this`` is its method's)."""
        entry.scope = scope
        s = scope
        while s != MODULE and s not in self.members:
            s = self.parent.get(s, MODULE)
        if s != MODULE:
            self.this_writes.setdefault(s, []).append(entry)

    def _mutation(self, scope: int, name: str, entry: Entry) -> None:
        self._pending.append((scope, name, entry, scope))

    def _resolve(self, scope: int, name: str, entry: Entry, origin: int) -> None:
        """Bind a mutation in the scope that declares ``name``, noting the callbacks on the way: an
        ``async`` one or a promise continuation (``.then(cb)``) runs in completion order; one an array
        method calls per item (``xs.forEach(cb)``) runs in ``xs``'s order, like a ``for ... of`` loop."""
        s, async_cb, iterables = self._crossed(scope, lambda s: (s, name) in self.declared)
        if s != scope:
            entry.loops = iterables  # the closure's own loops are not the declaring scope's
        entry.async_cb = async_cb
        self.bindings.setdefault((s, name), []).append(entry)

    def _crossed(self, scope: int, stop) -> Tuple[int, object, Tuple[object, ...]]:
        """(the scope reached, the completion-order callback crossed, the iterables whose items the
        crossed callbacks run for, outermost first) from ``scope`` up to the first scope ``stop`` takes."""
        s, async_cb, iterables = scope, None, []
        while s != MODULE and not stop(s):
            node = self.scope_node.get(s)
            if node is not None:
                method, receiver = _callback_of(node)
                if async_cb is None and (_is_async(node) or method in CONTINUATIONS):
                    async_cb = node
                elif method in ITERATING and receiver is not None:
                    iterables.append(receiver)
            s = self.parent.get(s, MODULE)
        return s, async_cb, tuple(reversed(iterables))

    def _require(self, name, module: Optional[str]) -> None:
        """``const x = require("m")`` and ``const { a, b: c } = require("m")``: imports."""
        if module is None:
            return
        if name.type == "identifier":
            self.imports[text(name)] = Import(module, "*", required=True)
        elif name.type == "object_pattern":
            for c in name.named_children:
                if c.type == "shorthand_property_identifier_pattern":
                    self.imports[text(c)] = Import(module, text(c))
                elif c.type == "pair_pattern":
                    k, v = c.child_by_field_name("key"), c.child_by_field_name("value")
                    if v is not None and v.type == "identifier":
                        self.imports[text(v)] = Import(module, text(k))

    def _import(self, node) -> None:
        source = _module(string_value(node.child_by_field_name("source")))
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if clause is None or source is None:
            return
        for c in clause.named_children:
            if c.type == "identifier":
                self.imports[text(c)] = Import(source, "default")
            elif c.type == "namespace_import":
                ident = next((x for x in c.named_children if x.type == "identifier"), None)
                if ident is not None:
                    self.imports[text(ident)] = Import(source, "*")
            elif c.type == "named_imports":
                for spec in c.named_children:
                    if spec.type != "import_specifier":
                        continue
                    name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
                    self.imports[text(alias or name)] = Import(source, text(name))

    def _export(self, node) -> None:
        source = _module(string_value(node.child_by_field_name("source")))
        decl = node.child_by_field_name("declaration")
        value = node.child_by_field_name("value")
        if decl is not None:
            if decl.type in ("lexical_declaration", "variable_declaration"):
                for d in decl.named_children:
                    n = d.child_by_field_name("name") if d.type == "variable_declarator" else None
                    if n is not None and n.type == "identifier":
                        self.exports[text(n)] = n
            else:
                n = decl.child_by_field_name("name")
                if n is not None:
                    self.exports[text(n)] = n
                    if any(c.type == "default" for c in node.children):
                        self.exports["default"] = n
            return
        if value is not None:  # export default <expression>
            self.exports["default"] = value
            return
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if clause is None:
            if source is not None:
                self.reexports.append((source, None, None))  # export * from "./x"
            return
        for spec in clause.named_children:
            if spec.type != "export_specifier":
                continue
            name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
            if source is not None:
                self.reexports.append((source, text(name), text(alias or name)))
            else:
                self.exports[text(alias or name)] = name


def _pattern_names(p) -> List[str]:
    if p.type == "identifier":
        return [text(p)]
    if p.type in ("required_parameter", "optional_parameter"):
        inner = p.child_by_field_name("pattern")
        return _pattern_names(inner) if inner is not None else []
    if p.type == "assignment_pattern":
        left = p.child_by_field_name("left")
        return _pattern_names(left) if left is not None else []
    if p.type == "rest_pattern":
        return [n for c in p.named_children for n in _pattern_names(c)]
    if p.type in ("object_pattern", "array_pattern"):
        out = []
        for c in p.named_children:
            if c.type in ("shorthand_property_identifier_pattern",):
                out.append(text(c))
            elif c.type == "pair_pattern":
                v = c.child_by_field_name("value")
                out += _pattern_names(v) if v is not None else []
            elif c.type == "object_assignment_pattern":
                left = c.child_by_field_name("left")
                out += [text(left)] if left is not None else []
            else:
                out += _pattern_names(c)
        return out
    return []


def _extends(cls) -> Optional[object]:
    """The expression a class declaration extends (``class A extends Base``), or None."""
    heritage = next((c for c in cls.named_children if c.type == "class_heritage"), None)
    if heritage is None:
        return None
    clause = next((c for c in heritage.named_children if c.type == "extends_clause"), None)
    if clause is not None:  # TypeScript
        return clause.child_by_field_name("value") or (clause.named_children[0] if clause.named_children else None)
    return heritage.named_children[0] if heritage.named_children else None  # JavaScript


def _is_statement(call) -> bool:
    """A call whose value is dropped (``b.add(x);``, ``await b.load();``): called for what it does."""
    parent = call.parent
    if parent is not None and parent.type == "await_expression":
        parent = parent.parent
    return parent is not None and parent.type == "expression_statement"


def _callback_of(fn) -> Tuple[Optional[str], object]:
    """(method, receiver) when a function is an argument of ``receiver.method(...)``, else (None, None)."""
    args = fn.parent
    call = args.parent if args is not None and args.type == "arguments" else None
    callee = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
    if callee is None or callee.type != "member_expression":
        return None, None
    return text(callee.child_by_field_name("property")), callee.child_by_field_name("object")


def _is_async(node) -> bool:
    return any(c.type == "async" for c in node.children[:2])


def _is_require(value) -> bool:
    if value.type != "call_expression":
        return False
    f, args = value.child_by_field_name("function"), value.child_by_field_name("arguments")
    return (f is not None and text(f) == "require" and args is not None and len(args.named_children) == 1
            and args.named_children[0].type == "string")


def _module(spec: Optional[str]) -> Optional[str]:
    if spec is None:
        return None
    return spec[5:] if spec.startswith("node:") else spec
