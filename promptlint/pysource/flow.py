"""A module index and a small evaluator: what text and hazards can reach an expression.

The evaluator follows, within one module:
- local assignments (``x = ...``, ``x += ...``, ``for x in ...``) in the same function,
  the latest one above the use;
- list and dict building statements on a name (``x.append``, ``x.extend``, ``x.insert``,
  ``x[k] = v``, ``x.update``), including inside ``for`` loops whose iterable is unordered;
- calls of functions and ``self.`` methods defined in the module: their ``return``
  expressions with the parameters bound to the call's arguments;
- parameters of module functions: the arguments at the module's own call sites;
- module-level constants.

- containers of known items item by item (comprehensions, dict views, loops unrolled, an item
  picked by a variable key is any of them), and assignments in the arms of an ``if``/``try``/
  ``match`` (each may be the value; the latest one that always runs hides the earlier ones).

- loops inside unrolled loops, long known lists within a per-module budget, and iterables of unknown items as
  one unknown item (known items around it keep their places); function values (a nested def returned, a
  lambda) called later; ``getattr`` with a constant name.

Objects and other modules are followed through pysource.objects, Jinja rendered from Python through
pysource.jinja_calls, prompt text and data read from project files through pysource.prompt_files. It does not follow globals
assigned inside functions, ``global``/``nonlocal``, or which arm runs. docs/python.md lists
this precisely.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import re
import string
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from promptlint.pysource import jinja_calls, objects, prompt_files, sinks

# one printf-style conversion: `%s`, `%(name)s`, `%-8.2f`, `%%`
_PRINTF = re.compile(r"%(?:\((?P<name>[^)]*)\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%])")

DUMPS = ("json.dumps", "orjson.dumps", "ujson.dumps", "simplejson.dumps")
MAX_DEPTH = 8
MAX_CALL_SITES = 4
MODULE = 0  # scope id of the module


@dataclass(frozen=True, eq=False)
class Hole:
    """A part of a prompt whose text is not a literal: a volatile value, a per-request input, or unknown."""

    kind: str  # "volatile" | "per-request" | "static"
    label: str  # source text or name, for messages
    node: ast.AST
    sub: Optional[str] = None  # volatile sub-kind: timestamp, date, time, id, number
    # items of an unordered collection joined into text (``sep.join(a_set)``): (the separator, ids of the
    # nodes of the order hazards it carries); pysource.orders renders stand-in items here in two orders
    order: Optional[Tuple[str, frozenset]] = None


@dataclass(eq=False)
class Hazard:
    kind: str  # "volatile" | "json" | "unordered" | "chat-text"
    node: ast.AST  # where it is reported (and fixed)
    label: str
    sub: Optional[str] = None
    origin: Optional[ast.AST] = None  # e.g. the set the iteration came from
    origin_label: str = ""
    fix: Optional[str] = None  # "sort-keys" | "sorted"
    in_text: bool = False  # the unordered iteration already produced text (sorted() of the list cannot help)


Part = Union[str, Hole]


@dataclass
class Val:
    parts: Optional[List[Part]] = None  # text, when the value is (or renders as) a string
    hazards: List[Hazard] = field(default_factory=list)
    items: Optional[List["Val"]] = None  # known list/tuple elements, in order
    mapping: Optional[Dict[str, "Val"]] = None  # dict literal with string keys
    # the collection itself has no stable order: (origin, what[, True: iterating it is reported at the origin, a
    # dict comprehension over a set, whose own loop is the one to sort])
    unordered: Optional[tuple] = None
    names: frozenset = frozenset()  # identifiers seen on the way (names, attributes), for salt checks
    node: Optional[ast.AST] = None  # the dict literal or constructor call a mapping came from (to point findings at)
    instance: Any = None  # an object of a class of the analysed files (pysource.objects.Instance)
    # a function value made in a function (a nested def or a lambda): (its node, the names it closes over, the
    # Flow of its module); calling it gives its return value with those names bound
    closure: Any = None
    # a mapping whose key order is made by merging parts, one of them of keys not known here (``{**DEFAULTS,
    # **overrides}``, ``dict(a, **b)``, ``a | b``, ``.update(b)``): its order is the caller's (the merge node)
    merged: Optional[ast.AST] = None

    def add(self, *others: Optional["Val"]) -> "Val":
        ids = None
        for o in others:
            if o is None:
                continue
            if o.hazards:
                if ids is None:
                    ids = {id(h) for h in self.hazards}
                for h in o.hazards:
                    if id(h) not in ids:
                        ids.add(id(h))
                        self.hazards.append(h)
            if o.names:
                self.names = self.names | o.names
        return self


def merge(vals: List[Val]) -> Val:
    """One of ``vals`` may be the value (branches, arms of a conditional, the items of a list indexed by a
    variable): the hazards of all, the text of the first that holds a volatile value (the case the finding
    measures), else of the first."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return Val()
    first = next((v for v in vals if _volatile_text(v)), vals[0]) if len(vals) > 1 else vals[0]
    out = Val(first.parts, [], first.items, first.mapping, first.unordered, frozenset(), first.node, first.instance,
              first.closure)
    out.add(*vals)
    out.merged = next((v.merged for v in vals if v.merged is not None), None)
    for v in vals[1:]:
        out.unordered = out.unordered or v.unordered
    if len(vals) > 1:
        out.names = out.names | EITHER
    return out


# in a value's names: it is one of several values (``merge``), so its text is not the only one it may have
EITHER = frozenset(["<either>"])


def _volatile_text(v: Val, depth: int = 0) -> bool:
    """Whether ``v``'s text (or the text of its items or fields, a message) holds a volatile value."""
    if v.parts is not None and any(isinstance(p, Hole) and p.kind == "volatile" for p in v.parts):
        return True
    if depth > 2:
        return False
    inner = (v.items or []) + list((v.mapping or {}).values())
    return any(_volatile_text(i, depth + 1) for i in inner[:64])


# ------------------------------------------------------------------- index


@dataclass
class Entry:
    pos: Tuple[int, int]
    kind: str  # assign | aug | for | unpack | append | extend | insert | setitem | update
    value: Optional[ast.AST]
    loops: Tuple[ast.AST, ...]  # enclosing for loops in the same function, outermost first
    keys: Tuple[ast.AST, ...] = ()  # setitem: the subscripts below the name, outermost first (`x[0]["k"] = v`)
    scope: Optional[ast.AST] = None  # attribute entries: the function that writes `self.<attr>` (None: the class body)
    # the branches it sits in, outermost first: (id of the if/try/match statement, which arm); entries in two
    # arms of one statement never both run, so neither hides the other (Flow._binding)
    arms: Tuple[Tuple[int, int], ...] = ()
    path: Tuple[int, ...] = ()  # "for" entries of a tuple target (`for name, body in pairs`): the element it binds
    # a name of another scope bound in a function (`global X` / `nonlocal X` then `X = ...`): that function, in which
    # the value is evaluated
    home: Optional[ast.AST] = None


# the entry kinds that change a container in place (a parameter so changed changes the caller's value)
_CHANGES = ("append", "extend", "insert", "insert0", "update", "setitem")  # not `+=`: a str parameter is rebound

# container methods that change the container in place -> the entry kind
_MUTATORS = {"append": "append", "extend": "extend", "insert": "insert", "update": "update", "appendleft": "insert0",
             "add": "append", "setdefault": "setdefault", "write": "aug"}  # io.StringIO().write(text): text += it


def _self_name(func) -> Optional[str]:
    """The first parameter of a method (``self``), None for a static method or a function without one."""
    if any(sinks.dotted(d) == "staticmethod" for d in func.decorator_list):
        return None
    a = func.args.posonlyargs + func.args.args
    return a[0].arg if a else None


# statements whose arms exclude each other (ast.Match and ast.TryStar are newer than Python 3.9)
_BRANCHES = tuple(getattr(ast, n) for n in ("If", "Try", "TryStar", "Match") if hasattr(ast, n))
_LEAVES = (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)


class Index:
    """One pass over the module: scopes, bindings, mutations, returns, calls, dicts."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.aliases: Dict[str, str] = {}
        self.functions: Dict[str, ast.AST] = {}
        self.nested: Dict[Tuple[int, str], ast.AST] = {}  # (scope id, name) -> a def inside that function
        self.methods: Dict[Tuple[str, str], ast.AST] = {}
        self.class_of: Dict[int, str] = {}
        self.bindings: Dict[Tuple[int, str], List[Entry]] = {}
        self.returns: Dict[int, List[ast.AST]] = {}
        # id(generator function) -> its `yield`/`yield from` expressions in source order, each with whether it sits
        # in a loop of that function
        self.yields: Dict[int, List[Tuple[ast.AST, bool]]] = {}
        self.call_sites: Dict[str, List[Tuple[ast.Call, Optional[ast.AST]]]] = {}
        self.calls: List[Tuple[ast.Call, Optional[ast.AST]]] = []
        self.dicts: List[Tuple[ast.Dict, Optional[ast.AST]]] = []
        self.raises: List[Tuple[ast.Raise, Optional[ast.AST]]] = []
        self.strings: List[ast.Constant] = []
        # across modules (pysource.objects): imported names -> (module, level, attribute or None for a module),
        # module-level classes, and what each class writes to its attributes (`self.x = v`, `self.x.append(v)`,
        # class-body fields), keyed (class name, attribute)
        self.imports: Dict[str, Tuple[str, int, Optional[str]]] = {}
        self.classes: Dict[str, ast.ClassDef] = {}
        self.attrs: Dict[Tuple[str, str], List[Entry]] = {}
        self.fields: Dict[str, List[str]] = {}  # class -> annotated class-body names, in order (dataclass fields)
        self._me: Dict[int, Optional[str]] = {}  # id(method) -> its first parameter's name
        # scope id -> [(arm, first position, last position)] of the if/try/match arms in it (Flow._binding)
        self.arm_spans: Dict[int, List[Tuple[Tuple[int, int], Tuple[int, int], Tuple[int, int]]]] = {}
        self._arms: Tuple[Tuple[int, int], ...] = ()
        # id(nested def or lambda) -> the function it is written in (a closure's free names are read there)
        self.enclosing: Dict[int, ast.AST] = {}
        self._declared: Dict[Tuple[int, str], ast.AST] = {}  # (function, name) -> the scope `global`/`nonlocal` names
        self._passes: List[Tuple[ast.AST, str, Entry, str]] = []
        self._walk(tree, None, (), None)
        self._keep_passes()
        for entries in list(self.bindings.values()) + list(self.attrs.values()):
            entries.sort(key=lambda e: e.pos)

    def _keep_passes(self) -> None:
        """A name passed to a function of this module that changes that parameter in place (``add_header(parts)``
        doing ``parts.append(...)``): a ``passed`` entry of the name, after the call; other calls bind nothing."""
        for scope, name, entry, callee in self._passes:
            func = self.functions.get(callee)
            if func is None:
                continue
            params = self.params(func)
            i = entry.path[0]
            if i < len(params) and any(e.kind in _CHANGES for e in self.bindings.get((id(func), params[i]), ())):
                self.bindings.setdefault((self.sid(scope), name), []).append(entry)
        self._passes = []

    @staticmethod
    def sid(scope: Optional[ast.AST]) -> int:
        return MODULE if scope is None else id(scope)

    def _bind(self, scope, name: str, entry: Entry) -> None:
        if self._arms:
            entry.arms = self._arms
        if scope is not None and self._declared:
            outer = self._declared.get((id(scope), name), ...)
            if outer is not ...:  # `global X` / `nonlocal X`: it binds the outer X, when the function runs: in an
                # arm of its own (either value: the outer assignment is not hidden, nor does it hide this one)
                entry.home, entry.arms = scope, ((id(scope), -1),) + entry.arms
                scope = outer
        self.bindings.setdefault((self.sid(scope), name), []).append(entry)

    def _walk(self, node: ast.AST, scope, loops, cls) -> None:
        stack = [(node, scope, loops, cls, ())]
        while stack:
            node, scope, loops, cls, arms = stack.pop()
            self._arms = arms
            t = type(node)
            if t in (ast.FunctionDef, ast.AsyncFunctionDef):
                if cls is None and scope is None:
                    self.functions[node.name] = node
                elif cls is None:  # a function defined in a function: a value of its scope (a closure)
                    self.nested[(self.sid(scope), node.name)] = node
                    self.enclosing[id(node)] = scope
                elif cls is not None:
                    self.methods[(cls, node.name)] = node
                    self.class_of[id(node)] = cls
                self.returns.setdefault(id(node), [])
                for d in node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d]:
                    stack.append((d, scope, loops, cls, arms))
                for stmt in reversed(node.body):
                    stack.append((stmt, node, (), cls, ()))
                continue
            if t is ast.ClassDef:
                if scope is None and cls is None:
                    self.classes[node.name] = node
                for stmt in reversed(node.body):
                    stack.append((stmt, scope if scope is not None else None, loops, node.name if scope is None else None, arms))
                for b in node.bases + node.decorator_list:
                    stack.append((b, scope, loops, cls, arms))
                continue
            if t is ast.Import:
                for a in node.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    self.imports[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], 0, None)
                continue
            if t is ast.Global or t is ast.Nonlocal:
                if scope is not None:
                    outer = None if t is ast.Global else self.enclosing.get(id(scope))
                    if t is ast.Global or outer is not None:
                        for n in node.names:
                            self._declared[(id(scope), n)] = outer
                continue
            if t is ast.Lambda and scope is not None:
                self.enclosing[id(node)] = scope
            if t is ast.ImportFrom:
                if node.module and not node.level:
                    for a in node.names:
                        self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                for a in node.names:
                    if a.name != "*":
                        self.imports[a.asname or a.name] = (node.module or "", node.level or 0, a.name)
                continue
            pos = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
            if t in _BRANCHES:
                self._branches(node, t, scope, loops, cls, arms, stack)
                continue
            if t in (ast.For, ast.AsyncFor):
                self._target(scope, node.target, Entry(pos, "for", node.iter, loops))
                stack.append((node.iter, scope, loops, cls, arms))
                for stmt in reversed(node.body + node.orelse):
                    stack.append((stmt, scope, loops + (node,), cls, arms))
                continue
            self._record(node, t, scope, loops, pos)
            if cls is not None:
                self._record_attr(node, t, scope, loops, pos, cls)
            for name in node._fields:
                if name == "ctx":
                    continue
                v = getattr(node, name, None)
                if type(v) is list:
                    for child in v:
                        if isinstance(child, ast.AST) and not isinstance(child, _LEAVES):
                            stack.append((child, scope, loops, cls, arms))
                elif isinstance(v, ast.AST) and not isinstance(v, _LEAVES):
                    stack.append((v, scope, loops, cls, arms))

    def _branches(self, node, t, scope, loops, cls, arms, stack) -> None:
        """An if/try/match statement: each arm's statements are walked with the arm added to their ``arms``
        (a try's ``else`` runs after its body: the same arm; ``finally`` runs always: no arm)."""
        if t is ast.If:
            groups = [(None, [node.test]), (0, node.body), (1, node.orelse)]
        elif t.__name__ == "Match":
            groups = [(None, [node.subject])] + [(i, [c.pattern] + ([c.guard] if c.guard else []) + c.body)
                                                  for i, c in enumerate(node.cases)]
        else:
            groups = [(0, node.body + node.orelse)] + [(i + 1, h.body) for i, h in enumerate(node.handlers)]
            groups.append((None, node.finalbody))
        spans = self.arm_spans.setdefault(self.sid(scope), [])
        for arm, stmts in reversed(groups):
            stmts = [s for s in stmts if s is not None]
            inner = arms if arm is None else arms + ((id(node), arm),)
            if arm is not None and stmts:
                last = stmts[-1]
                spans.append(((id(node), arm), (stmts[0].lineno, stmts[0].col_offset),
                              (last.end_lineno or last.lineno, last.end_col_offset or 0)))
            for stmt in reversed(stmts):
                stack.append((stmt, scope, loops, cls, inner))

    def _record(self, node: ast.AST, t: type, scope, loops, pos) -> None:
        """Note what a statement or expression node binds, returns, raises or calls."""
        if t in (ast.Assign, ast.AnnAssign, ast.AugAssign):
            # an assignment binds after its value is computed: `x = copy.deepcopy(x)` reads the x before it
            pos = (node.end_lineno or pos[0], node.end_col_offset or 0)
        if t is ast.Assign:
            for target in node.targets:
                self._target(scope, target, Entry(pos, "assign", node.value, loops))
        elif t is ast.AnnAssign and node.value is not None:
            self._target(scope, node.target, Entry(pos, "assign", node.value, loops))
        elif t is ast.AugAssign and isinstance(node.target, ast.Name):
            self._bind(scope, node.target.id, Entry(pos, "aug", node.value, loops))
        elif t is ast.NamedExpr and isinstance(node.target, ast.Name):
            self._bind(scope, node.target.id, Entry(pos, "assign", node.value, loops))
        elif t is ast.withitem and isinstance(node.optional_vars, ast.Name):  # `with open(path) as f`
            at = (node.context_expr.end_lineno or pos[0], node.context_expr.end_col_offset or 0)
            self._bind(scope, node.optional_vars.id, Entry(at, "assign", node.context_expr, loops))
        elif t is ast.Return:
            if scope is not None and node.value is not None:
                self.returns.setdefault(id(scope), []).append(node.value)
        elif t is ast.Raise:
            self.raises.append((node, scope))
        elif t is ast.Yield or t is ast.YieldFrom:
            if scope is not None:
                self.yields.setdefault(id(scope), []).append((node, bool(loops)))
        elif t is ast.Dict:
            self.dicts.append((node, scope))
        elif t is ast.Constant:
            if isinstance(node.value, str):
                self.strings.append(node)
        elif t is ast.Call:
            self._record_call(node, scope, loops, pos)

    def _record_call(self, node: ast.Call, scope, loops, pos) -> None:
        """A call site, and the container mutations (``x.append(v)``...) that bind ``x``."""
        self.calls.append((node, scope))
        f = node.func
        if isinstance(f, ast.Name):
            self.call_sites.setdefault(f.id, []).append((node, scope))
            for i, a in enumerate(node.args):
                if isinstance(a, ast.Name):  # kept when the function changes that parameter (_keep_passes)
                    after = (node.end_lineno or pos[0], node.end_col_offset or 0)
                    self._passes.append((scope, a.id, Entry(after, "passed", node, loops, path=(i,), arms=self._arms), f.id))
            if f.id == "shuffle" and node.args and isinstance(node.args[0], ast.Name):  # from random import shuffle
                self._bind(scope, node.args[0].id, Entry(pos, "shuffle", node, loops))
        elif isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Name) and f.value.id in ("self", "cls"):
                self.call_sites.setdefault("self." + f.attr, []).append((node, scope))
            if f.attr == "shuffle" and node.args and isinstance(node.args[0], ast.Name):  # random.shuffle(shots)
                self._bind(scope, node.args[0].id, Entry(pos, "shuffle", node, loops))
            if isinstance(f.value, ast.Name) and f.attr in _MUTATORS:
                kind = _MUTATORS[f.attr]
                # insert and update keep the call: its index, and update's keyword arguments
                value = node if kind in ("insert", "update") else (node.args[-1] if node.args else None)
                self._bind(scope, f.value.id, Entry(pos, kind, value, loops))

    def _target(self, scope, target: ast.AST, entry: Entry) -> None:
        if isinstance(target, ast.Name):
            self._bind(scope, target.id, entry)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                if isinstance(elt, ast.Starred):
                    elt = elt.value
                if isinstance(elt, ast.Name):
                    if entry.kind == "for":  # `for name, body in pairs`: element i of each item
                        self._bind(scope, elt.id, Entry(entry.pos, "for", entry.value, entry.loops,
                                                        path=entry.path + (target.elts.index(elt),)))
                    else:  # `system, user = render(q)`: element i of the value (unknown after a starred one)
                        at = target.elts.index(elt)
                        starred = any(isinstance(x, ast.Starred) for x in target.elts[:at + 1])
                        self._bind(scope, elt.id, Entry(entry.pos, "unpack", entry.value, entry.loops,
                                                        path=() if starred else (at,)))
        elif isinstance(target, ast.Subscript):
            keys = []
            while isinstance(target, ast.Subscript):
                keys.append(target.slice)
                target = target.value
            if isinstance(target, ast.Name):
                self._bind(scope, target.id, Entry(entry.pos, "setitem", entry.value, entry.loops, tuple(reversed(keys))))

    def _record_attr(self, node: ast.AST, t: type, scope, loops, pos, cls: str) -> None:
        """What a class writes to its attributes: `self.x = v`, `self.x += v`, `self.x.append(v)`,
        `self.x[k] = v` in its methods, and `x = v` / `x: T = v` / `x: T` in its body."""
        if scope is None:  # the class body
            if t is ast.AnnAssign and isinstance(node.target, ast.Name):
                self.fields.setdefault(cls, []).append(node.target.id)
                if node.value is not None:
                    self.attrs.setdefault((cls, node.target.id), []).append(Entry(pos, "assign", node.value, loops))
            elif t is ast.Assign:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.attrs.setdefault((cls, target.id), []).append(Entry(pos, "assign", node.value, loops))
            return
        me = self._me.get(id(scope), ...)
        if me is ...:
            me = self._me[id(scope)] = _self_name(scope)
        if me is None:
            return

        def attr_of(target) -> Optional[str]:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
                return target.attr
            return None

        def put(attr: Optional[str], kind: str, value, keys=()) -> None:
            if attr is not None:
                self.attrs.setdefault((cls, attr), []).append(Entry(pos, kind, value, loops, keys, scope))

        if t is ast.Assign or (t is ast.AnnAssign and node.value is not None):
            for target in node.targets if t is ast.Assign else [node.target]:
                if isinstance(target, ast.Subscript):
                    keys = []
                    while isinstance(target, ast.Subscript):
                        keys.append(target.slice)
                        target = target.value
                    put(attr_of(target), "setitem", node.value, tuple(reversed(keys)))
                else:
                    put(attr_of(target), "assign", node.value)
        elif t is ast.AugAssign:
            put(attr_of(node.target), "aug", node.value)
        elif t is ast.Call and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            kind = _MUTATORS[node.func.attr]
            value = node if kind in ("insert", "update") else (node.args[-1] if node.args else None)
            put(attr_of(node.func.value), kind, value)
        elif (t is ast.Call and isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) == 3
              and isinstance(node.args[0], ast.Name) and node.args[0].id == me
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            put(node.args[1].value, "assign", node.args[2])  # `setattr(self, "system", v)` is `self.system = v`

    def params(self, func: ast.AST) -> List[str]:
        a = func.args
        return [p.arg for p in a.posonlyargs + a.args] + ([a.vararg.arg] if a.vararg else []) + [p.arg for p in a.kwonlyargs]


# ------------------------------------------------------------------- evaluator


class Flow:
    MAX_DEPTH = MAX_DEPTH  # for pysource.objects and jinja_calls, which do not import this module
    merge = staticmethod(merge)
    Val = Val
    Hole = Hole

    def __init__(self, index: Index, source: str, kind_of, project=None, display: Optional[str] = None):
        self.index = index
        self.source = source
        self.project = project  # the other linted modules (pysource.project.Project), None: this module alone
        self.display = display
        self._kind_of = kind_of  # name -> (kind, sub): promptlint.scenarios.names.name_patterns().kind_of
        self._kinds: Dict[str, Tuple[str, Optional[str]]] = {}
        self._memo: Dict[Tuple[int, int], Val] = {}
        self._active: set = set()
        self._unroll_budget = MAX_MERGE  # items of long lists this module may still follow one by one
        self._rewritten: Dict[int, ast.AST] = {}  # id(a getattr call with a constant name) -> its plain form
        self._lines = [line.encode("utf-8") for line in source.splitlines(keepends=True)]

    # -- helpers
    def kind_of(self, name: str) -> Tuple[str, Optional[str]]:
        k = self._kinds.get(name)
        if k is None:
            k = self._kinds[name] = self._kind_of(name)
        return k

    def text_of(self, node: ast.AST, limit: int = 60) -> str:
        seg = self._segment(node) or type(node).__name__
        seg = " ".join(seg.split())
        return seg if len(seg) <= limit else seg[: limit - 3] + "..."

    def _segment(self, node: ast.AST) -> Optional[str]:
        """The node's source text (ast columns are UTF-8 byte offsets); like ast.get_source_segment, cached lines."""
        try:
            first, last = node.lineno - 1, node.end_lineno - 1
            start, end = node.col_offset, node.end_col_offset
        except AttributeError:
            return None
        if end is None or not (0 <= first <= last < len(self._lines)):
            return None
        if first == last:
            return self._lines[first][start:end].decode("utf-8", "replace")
        chunk = [self._lines[first][start:]] + self._lines[first + 1:last] + [self._lines[last][:end]]
        return b"".join(chunk).decode("utf-8", "replace")

    def name_of(self, node: ast.AST) -> Optional[str]:
        return sinks.canonical(sinks.dotted(node), self.index.aliases)

    def opaque(self, node: ast.AST, label: Optional[str] = None, name: Optional[str] = None) -> Val:
        label = label or self.text_of(node)
        kind, sub = ("static", None)
        if name:
            kind, sub = self.kind_of(name)
        hole = Hole(kind, label, node, sub)
        v = Val(parts=[hole], names=frozenset([name]) if name else frozenset())
        if kind == "volatile":
            v.hazards.append(Hazard("volatile", node, label, sub))
        return v

    def called(self, fn: ast.AST, scope, env, depth: int) -> Val:
        """What calling the callable ``fn`` with no arguments gives (a ``default_factory``): a clock or an id
        read at ``fn`` (``datetime.now``, ``uuid.uuid4``), else the value of the call."""
        name = self.name_of(fn)
        sub = sinks.volatile_sub(name)
        if sub is not None:
            label = self.text_of(fn) + "()"
            return Val(parts=[Hole("volatile", label, fn, sub)], hazards=[Hazard("volatile", fn, label, sub)],
                       names=frozenset([name]))
        return self._call(ast.copy_location(ast.Call(func=fn, args=[], keywords=[]), fn), scope, env or {}, depth)

    def as_text(self, v: Val, node: ast.AST, scope, depth: int, conversion: str = "str") -> Val:
        """``v`` as ``str()`` and formatting render it (``conversion="repr"``: as ``repr()``, ``!r`` and ``!a`` do):
        an object of a class of the linted files is what its ``__str__``/``__format__``/``__repr__`` (or a
        dataclass's generated repr) returns; anything else is ``v``."""
        if v.instance is None or depth > MAX_DEPTH:
            return v
        text = objects.render(self, v, node, scope, depth, conversion)
        return text if text is not None else v

    # -- entry point
    def ev(self, node: Optional[ast.AST], scope: Optional[ast.AST], env: Optional[Dict[str, Val]] = None, depth: int = 0) -> Val:
        if node is None:
            return Val()
        if depth > MAX_DEPTH:
            return self.opaque(node)
        key = (id(node), Index.sid(scope))
        if not env and key in self._memo:
            return self._memo[key]
        if key in self._active:
            return self.opaque(node)
        self._active.add(key)
        try:
            v = self._ev(node, scope, env or {}, depth)
        finally:
            self._active.discard(key)
        if not env:
            self._memo[key] = v
        return v

    def _ev(self, node, scope, env, depth) -> Val:
        handler = _EVALUATORS.get(type(node))
        if handler is None:
            return self.opaque(node)
        return getattr(self, handler)(node, scope, env, depth)

    # -- one evaluator per expression kind (_EVALUATORS maps node types to them)
    def _constant(self, node: ast.Constant, scope, env, depth) -> Val:
        if isinstance(node.value, str):
            return Val(parts=[node.value])
        if node.value is None:
            return Val()
        return Val(parts=[str(node.value)])

    def _fstring(self, node: ast.JoinedStr, scope, env, depth) -> Val:
        out = Val(parts=[])
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                out.parts.append(str(piece.value))
                continue
            v = self.as_text(self.ev(piece.value, scope, env, depth), piece.value, scope, depth,
                             "repr" if piece.conversion in (ord("r"), ord("a")) else "str")
            out.add(v)
            spec = _const_spec(piece.format_spec)
            if v.parts is not None and not (spec and len(v.parts) == 1 and isinstance(v.parts[0], Hole)):
                out.parts.extend(v.parts)
            elif v.parts and isinstance(v.parts[0], Hole):
                h = v.parts[0]
                out.parts.append(Hole(h.kind, h.label, h.node, _sub_from_format(spec, h.sub)))
            else:
                out.parts.append(Hole("static", self.text_of(piece.value), piece.value))
        return out

    def _binop(self, node: ast.BinOp, scope, env, depth) -> Val:
        left, right = self.ev(node.left, scope, env, depth), self.ev(node.right, scope, env, depth)
        if isinstance(node.op, ast.Add):
            out = Val().add(left, right)
            if left.items is not None or right.items is not None:  # `[system] + history + [question]`
                a = left.items if left.items is not None else self._unknown_items(left, node.left)
                b = right.items if right.items is not None else self._unknown_items(right, node.right)
                if a is not None and b is not None:
                    out.items = a + b
            elif left.parts is not None and right.parts is not None:
                out.parts = left.parts + right.parts
            return out
        if isinstance(node.op, ast.Mult):  # "=" * 40, [msg] * 2: repeated a constant number of times
            n, x = (_const_int(node.right), left) if _const_int(node.right) is not None else (_const_int(node.left), right)
            if n is not None and 0 <= n <= 10_000:
                out = Val().add(x)
                if x.parts is not None and x.items is None:
                    out.parts = x.parts * n
                elif x.items is not None:
                    out.items = x.items * n
                else:
                    out.parts = [Hole("static", self.text_of(node), node)]
                return out
        if isinstance(node.op, ast.Mod) and left.parts is not None and all(isinstance(p, str) for p in left.parts):
            return self._percent("".join(left.parts), node, right)
        if isinstance(node.op, (ast.BitOr, ast.BitAnd, ast.BitXor, ast.Sub)):
            # set algebra gives a set; so does any of it on a dict's keys()/items() view
            sides = (node.left,) if isinstance(node.op, ast.Sub) else (node.left, node.right)
            view = next((n for n in sides if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                         and n.func.attr in ("keys", "items") and not n.args), None)
            unordered = left.unordered or (right.unordered if not isinstance(node.op, ast.Sub) else None)
            if unordered or view is not None:
                return Val(unordered=unordered or (node, "a set operation on a dict view")).add(left, right)
            if isinstance(node.op, ast.BitOr) and (left.mapping is not None or right.mapping is not None):
                both = left.mapping is not None and right.mapping is not None  # `defaults | overrides` of dicts
                caller = self._caller_keys(left, node.left, scope) or self._caller_keys(right, node.right, scope)
                return Val(mapping={**left.mapping, **right.mapping} if both else None, node=node,
                           merged=left.merged or right.merged or (node if caller else None)).add(left, right)
        out = self.opaque(node)
        return out.add(left, right)

    def _sequence(self, node, scope, env, depth) -> Val:
        out = Val(items=[])
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                v = self.ev(elt.value, scope, env, depth)
                out.add(v)
                self._iterate(v, elt.value, out)
                more = v.items if v.items is not None else self._unknown_items(v, elt.value)
                if more is not None and out.items is not None:
                    out.items.extend(more)
                else:
                    out.items = None
                continue
            v = self.ev(elt, scope, env, depth)
            out.add(v)
            if out.items is not None:
                out.items.append(v)
        return out

    def _set(self, node: ast.Set, scope, env, depth) -> Val:
        out = Val(unordered=(node, "a set literal"))
        for elt in node.elts:
            out.add(self.ev(elt, scope, env, depth))
        return out

    def _dict(self, node: ast.Dict, scope, env, depth) -> Val:
        out = Val(mapping={}, node=node)
        for k, v_node in zip(node.keys, node.values):
            v = self.ev(v_node, scope, env, depth)
            out.add(v)
            if k is None:  # {**base, "k": v}: the spread mapping's keys, in its order
                out.unordered = out.unordered or v.unordered
                out.merged = out.merged or v.merged or (
                    node if len(node.keys) > 1 and self._caller_keys(v, v_node, scope) else None)
                out.mapping = {**out.mapping, **v.mapping} if out.mapping is not None and v.mapping is not None else None
            elif out.mapping is not None and isinstance(k, ast.Constant) and isinstance(k.value, str):
                out.mapping[k.value] = v
        return out

    def _either(self, node, scope, env, depth) -> Val:
        """`a if c else b`, `a or b`: either value may reach the sink."""
        values = [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.values
        return merge([self.ev(v, scope, env, depth) for v in values])

    def _subscript(self, node: ast.Subscript, scope, env, depth) -> Val:
        base = self.ev(node.value, scope, env, depth)
        key = node.slice
        if isinstance(key, ast.Constant):
            if base.mapping is not None and isinstance(key.value, str) and key.value in base.mapping:
                return base.mapping[key.value]
            if base.items is not None and isinstance(key.value, int) and -len(base.items) <= key.value < len(base.items):
                return base.items[key.value]
        if (isinstance(key, ast.Name) and env and key.id in env and base.mapping is not None and scope is not None
                and key.id in self.index.params(scope) and _default_of(scope, key.id) is None
                and "<either>" not in env[key.id].names):
            # `self._prompts[name]` in `get(self, name)` called `get("planner")`: the one key the call gives (a
            # parameter without a default, bound to one literal), not any of the entries
            lit = _literal_text(env[key.id])
            if lit is not None and lit in base.mapping:
                return base.mapping[lit]
        if not isinstance(key, (ast.Constant, ast.Slice)) and base.unordered is None:
            choices = list(base.mapping.values()) if base.mapping is not None else base.items
            if choices and len(choices) <= MAX_UNROLL:  # `PROMPTS[mode]`: one of the values, whichever the key
                return merge(choices).add(base, self.ev(key, scope, env, depth))
        if base.parts is not None and len(base.parts) == 1 and isinstance(base.parts[0], Hole) and base.parts[0].kind == "volatile":
            h = base.parts[0]  # `uuid4().hex[:8]`, `str(time.time())[-6:]`: part of a volatile value is still volatile
            return Val([Hole("volatile", self.text_of(node), h.node, h.sub)], list(base.hazards), names=base.names)
        out = self.opaque(node)
        return out.add(base)

    def _attribute(self, node: ast.Attribute, scope, env, depth) -> Val:
        v = objects.module_attribute(self, node, env, depth)  # `prompts.SYSTEM` of a linted module
        if v is not None:
            return v
        v = objects.class_attribute(self, node, env, depth)  # `Prompts.SYSTEM`, `Mode.SUPPORT.value`
        if v is not None:
            return self._named(v, node.attr)
        if _is_module_ref(node.value, self.index):
            out = self.opaque(node, name=node.attr)
            out.names = out.names | {node.attr}
            return out
        base = self.ev(node.value, scope, env, depth)
        if base.parts is not None and len(base.parts) == 1 and isinstance(base.parts[0], Hole) and base.parts[0].kind == "volatile":
            return base  # uuid4().hex, datetime.now().year: still the volatile value
        if base.instance is not None:  # `self.chunks.system`: what the class writes to the attribute
            v = objects.attribute(base, node.attr, depth, scope)
            if v is not None:
                return self._named(v, node.attr)
        out = self.opaque(node, name=node.attr)
        out.names = out.names | {node.attr}
        return out.add(base)

    def _lambda(self, node: ast.Lambda, scope, env, depth) -> Val:
        """``lambda now: f"..."``: a function value, called where it is used (``_closure_call``)."""
        return Val(parts=[Hole("static", self.text_of(node), node)], closure=(node, dict(env), self))

    def _closure_call(self, node: ast.Call, fn: Val, scope, env, depth) -> Val:
        """A call of a function value (``_name``'s nested def, ``_lambda``): its return expressions (a lambda's
        body) with the names it closed over and its parameters bound to this call's arguments."""
        func, closed, owner = fn.closure
        new_env = dict(closed)
        new_env.update(self.bind_arguments(node, func, scope, env, depth, owner))
        if isinstance(func, ast.Lambda):
            return owner.ev(func.body, func, new_env, depth + 1)
        returns = owner.index.returns.get(id(func), [])
        return merge([owner.ev(r, func, new_env, depth + 1) for r in returns]) if returns else self.opaque(node)

    def _inner(self, node, scope, env, depth) -> Val:
        """`await x`, `*x`, `(y := x)`: the value of x."""
        return self.ev(node.value, scope, env, depth)

    # -- names and parameters
    def _name(self, node: ast.Name, scope, env, depth) -> Val:
        name = node.id
        if name in env:
            return env[name]
        inner = self.index.nested.get((Index.sid(scope), name)) if scope is not None else None
        if inner is not None:  # `def build(): ...` then `return build`: the function with the names it sees
            return Val(parts=[Hole("static", name, node)], names=frozenset([name]), closure=(inner, dict(env), self))
        pos = (node.lineno, node.col_offset)
        v = self._binding(scope, name, pos, depth, env)
        if v is not None:
            return self._named(v, name)
        if scope is not None and name in self.index.params(scope):
            if self.index.class_of.get(id(scope)) and name == _self_name(scope):
                return objects.generic_self(self, scope, node)
            return self._named(self._param(scope, name, node, depth), name)
        outer = self.index.enclosing.get(id(scope)) if scope is not None else None
        while outer is not None:  # a closure's free name: what the function it is written in binds last
            v = self._binding(outer, name, (10**9, 0), depth, {})
            if v is not None:
                return self._named(v, name)
            if name in self.index.params(outer):
                return self._named(self._param(outer, name, node, depth), name)
            outer = self.index.enclosing.get(id(outer))
        if scope is not None:
            v = self._binding(None, name, (10**9, 0), depth, {})
            if v is not None:
                return self._named(v, name)
        v = objects.imported_value(self, name, depth)
        if v is not None:
            return self._named(v, name)
        return self.opaque(node, name, name)

    @staticmethod
    def _named(v: Val, name: str) -> Val:
        if name in v.names:
            return v
        return Val(v.parts, list(v.hazards), v.items, v.mapping, v.unordered, v.names | {name}, v.node, v.instance,
                   v.closure, v.merged)

    def _binding(self, scope, name, pos, depth, env) -> Optional[Val]:
        entries = self.index.bindings.get((Index.sid(scope), name))
        if not entries:
            return None
        before = [e for e in entries if e.pos < pos]
        bases = [i for i, e in enumerate(before) if e.kind in ("assign", "for", "unpack")]
        if not bases:
            if before:
                if scope is not None and not any(e.kind in ("assign", "for", "unpack", "aug") for e in entries):
                    return self._changed_here(scope, name, before, depth, env)
                return None
            # used above every assignment (a loop, or a later module constant): take the first
            before = entries[:1]
            if entries[0].kind not in ("assign", "for", "unpack"):
                return None
            bases = [0]
        sub_env = env if scope is not None else {}
        live = self._live_bases(scope, before, bases, pos)
        vals = []
        for base_i in live:
            rest = [e for e in before[base_i + 1:] if not _exclusive(e.arms, before[base_i].arms)]
            vals.append(self._bound_value(before[base_i], rest, name, scope, sub_env, depth))
        return vals[0] if len(vals) == 1 else merge(vals)

    def _changed_here(self, scope, name, before: List[Entry], depth, env) -> Optional[Val]:
        """A name of an enclosing function or of the module that this function changes in place without binding
        it (``SYSTEM_PARTS.insert(0, f"{now}")`` in a handler): the outer value with these changes applied."""
        if name in self.index.params(scope):
            return None
        outer = self.index.enclosing.get(id(scope))
        v = None
        while outer is not None and v is None:
            v = self._binding(outer, name, (10**9, 0), depth, {})
            outer = self.index.enclosing.get(id(outer))
        if v is None:
            v = self._binding(None, name, (10**9, 0), depth, {})
        if v is None:
            v = objects.imported_value(self, name, depth)
        if v is None:
            return None
        out = Val(v.parts, list(v.hazards), list(v.items) if v.items is not None else None,
                  dict(v.mapping) if v.mapping is not None else None, v.unordered, v.names, v.node, v.instance, v.closure,
                  v.merged)
        self._apply(out, before, 0, scope, env, depth)
        return out

    def _live_bases(self, scope, before: List[Entry], bases: List[int], pos) -> List[int]:
        """The assignments that may give the value at ``pos``: the latest one, and earlier ones in an arm of an
        if/try/match that the later ones do not always follow (``if a: p = X`` / ``else: p = Y``: both); an
        assignment in an arm the use cannot be in (the other arm of the if it sits in) is not one."""
        if not any(before[i].arms for i in bases):
            return [bases[-1]]
        spans = self.index.arm_spans.get(Index.sid(scope), ())
        here = {arm for arm, start, end in spans if start <= pos <= end}
        live: List[int] = []
        for i in reversed(bases):
            e = before[i]
            if _exclusive(e.arms, here):
                continue
            if any(before[j].arms == e.arms[:len(before[j].arms)] for j in live):
                continue  # a later assignment that always runs after this one
            live.append(i)
        return live or [bases[-1]]

    def _bound_value(self, base: Entry, rest: List[Entry], name: str, scope, sub_env, depth) -> Val:
        """The value one assignment gives, changed by the later statements on it (``rest``, in order)."""
        v = self.ev(base.value, base.home, {}, depth + 1) if base.home is not None else self.ev(base.value, scope, sub_env, depth + 1)
        if base.kind == "for":
            items = _items_of(v) if v.unordered is None else None
            picked = [_pick(i, base.path) for i in items] if items is not None and len(items) <= MAX_MERGE else None
            if picked and all(p is not None for p in picked):  # `for part in [a, b]`: one of the items
                elem = merge(picked)
                elem = Val(elem.parts, list(elem.hazards), elem.items, elem.mapping, elem.unordered,
                           elem.names | {name}, elem.node, elem.instance, merged=elem.merged).add(Val(hazards=v.hazards))
            else:
                elem = self.opaque(base.value, self.text_of(base.value), name)
                elem.add(Val(hazards=v.hazards, names=v.names))
            v = elem
        elif base.kind == "unpack":
            picked = _pick(v, base.path) if base.path and v.items is not None and v.unordered is None else None
            if picked is not None:  # the tuple's own element: its text, so the finding can measure where it sits
                v = Val(picked.parts, list(picked.hazards), picked.items, picked.mapping, picked.unordered,
                        picked.names | {name}, picked.node, picked.instance, picked.closure, picked.merged)
            else:
                v = self.opaque(base.value, name, name).add(v)
        out = Val(v.parts, list(v.hazards), list(v.items) if v.items is not None else None,
                  dict(v.mapping) if v.mapping is not None else None, v.unordered, v.names, v.node, v.instance, v.closure,
                  v.merged)
        self._apply(out, rest, 0, scope, sub_env, depth)
        return out

    def _apply(self, out: Val, rest: List[Entry], level: int, scope, env, depth) -> None:
        """Apply the later statements on a container to its value in order; the statements of a ``for`` loop
        over known items (``for s in sections: text += s.render()``, loops inside it too) once per item, with
        the loop variables bound; a loop over items not known (or too many) once, standing for its repeats.
        ``level``: how many of the entries' enclosing loops are bound in ``env`` already."""
        k = 0
        while k < len(rest):
            e = rest[k]
            if len(e.loops) > level:
                loop = e.loops[level]
                group = list(itertools.takewhile(lambda x: len(x.loops) > level and x.loops[level] is loop, rest[k:]))
                each = None if e.kind == "setdefault" else self._item_envs(loop.iter, loop.target, scope, env, depth, level)
                for item_env in each[1] if each is not None else ():
                    self._apply(out, group, level + 1, scope, item_env, depth)
                if each is not None:
                    self._iterate(each[0], loop.iter, out)  # a merged mapping's order (M201)
                    k += len(group)
                    continue
            else:
                group = [e]
            for g in group:  # once each, inside the loops not unrolled
                if g.home is not None:  # `global HISTORY` then `HISTORY.append(...)` in a function: in that function
                    self._mutate(out, g, g.home, {}, depth)
                    continue
                self._mutate(out, g if not level else dataclasses.replace(g, loops=g.loops[level:]),
                             scope, env, depth)
            k += len(group)

    def _item_envs(self, iter_node: ast.AST, target: ast.AST, scope, env, depth,
                   level: int = 0) -> Optional[Tuple[Val, List[dict]]]:
        """(the iterable's value, the names ``env`` with the loop target bound to each item in turn) when a loop
        or comprehension iterates known items in a stable order (``for name, body in pairs``); None otherwise."""
        it = self.ev(iter_node, scope, env or None, depth + 1)
        items = _items_of(it) if it.unordered is None else None
        targets = _target_paths(target)
        if items is None or targets is None or not self._may_unroll(len(items), level):
            return None
        runs = []
        for item in items:
            item_env = dict(env)
            for name, path in targets:
                picked = _pick(item, path)
                if picked is None:
                    return None
                item_env[name] = picked
            runs.append(item_env)
        return it, runs

    def _unknown_items(self, v: Val, node: ast.AST) -> Optional[List[Val]]:
        """The items of an iterable whose items are not known (a parameter, what an unknown call returns): one
        unknown item standing for any number of them, of the value's own kind (a per-request history stays
        per-request), so the known items around it keep their places (``[system, *history, question]``);
        None when ``v`` is not such a value (known items, a mapping, an object, a volatile value)."""
        if v.items is not None or v.mapping is not None or v.instance is not None or v.unordered is not None:
            return None
        if v.parts is None or len(v.parts) != 1 or not isinstance(v.parts[0], Hole) or v.parts[0].kind == "volatile":
            return None
        h = v.parts[0]
        return [Val(parts=[Hole(h.kind, f"the items of {self.text_of(node, 40)}", node)], names=v.names)]

    def _may_unroll(self, n: int, level: int = 0) -> bool:
        """Whether a loop or comprehension over ``n`` known items is followed item by item: up to MAX_UNROLL
        always (an outermost loop), a longer list (up to MAX_MERGE) or a loop inside an unrolled one while this
        module's budget of such items lasts."""
        if n <= MAX_UNROLL and not level:
            return True
        if n > MAX_MERGE or n > self._unroll_budget:
            return False
        self._unroll_budget -= n
        return True

    def _mutate(self, out: Val, e: Entry, scope, env, depth) -> None:
        """Apply one later statement on a container (``x.append(v)``, ``x[k] = v``, ``x.update(...)``) to its value."""
        if e.kind == "passed":  # `add_header(parts)`: the function's changes of its parameter, in order
            call = e.value
            func = self.index.functions.get(call.func.id)
            positional = [p.arg for p in func.args.posonlyargs + func.args.args] if func is not None else []
            if e.path[0] >= len(positional):  # an argument beyond the named parameters (*args, or a wrong call)
                return
            changes = [x for x in self.index.bindings.get((id(func), positional[e.path[0]]), ())
                       if x.kind in _CHANGES]
            if depth <= MAX_DEPTH and changes:
                self._apply(out, changes, 0, func, self.bind_arguments(call, func, scope, env, depth + 1, self), depth + 1)
            return
        if e.kind == "shuffle":  # the items in a new random order on every call: one volatile value
            label = self.text_of(e.value)
            item = Val(parts=[Hole("volatile", label, e.value, "number")], hazards=[Hazard("volatile", e.value, label, "number")])
            out.add(item)
            out.items, out.parts, out.mapping = [item], None, None
            return
        call = e.value if e.kind in ("insert", "update") and isinstance(e.value, ast.Call) else None
        if call is not None and e.kind == "update":
            v = self._mapping_call(call, lambda n: self.ev(n, scope, env, depth + 1), scope)
        elif call is not None:
            v = self.ev(call.args[-1], scope, env, depth + 1) if call.args else Val()
        else:
            v = self.ev(e.value, scope, env, depth + 1) if e.value is not None else Val()
        out.add(v)
        if e.kind == "aug":
            grown = self._grown_unordered(out, e, v, scope, env, depth) if e.loops and out.parts is not None else None
            if grown is not None:  # `text += f"- {d}"` for d in a set: the items, in no fixed order, in its place
                out.parts = out.parts + [grown]
            elif out.items is not None and (v.items is not None or self._unknown_items(v, e.value) is not None):
                out.items = out.items + (v.items if v.items is not None else self._unknown_items(v, e.value))
            elif out.parts is not None and v.parts is not None:
                out.parts = out.parts + v.parts
            else:
                out.parts = out.parts if v.parts is None else None
            if out.unordered is None:  # a set grown by `|=`/`-=` stays a set: its order is judged where it is iterated
                self._iterate(v, e.value, out)
        elif e.kind in ("append", "insert", "insert0"):
            at = _const_int(call.args[0]) if call is not None and len(call.args) == 2 else (0 if e.kind == "insert0" else None)
            # in a loop (not unrolled): its item once, standing for its repeats, so what follows keeps its place
            if out.items is not None and (not e.loops or e.kind == "append") and (at is not None or e.kind == "append"):
                items = list(out.items)
                if at is None or at >= len(items):
                    items.append(v)
                else:
                    items.insert(at if at >= 0 else max(0, len(items) + at), v)
                out.items = items
            else:
                out.items = None
        elif e.kind == "extend":
            self._iterate(v, e.value, out)
            if out.items is not None:
                more = v.items if v.items is not None else self._unknown_items(v, e.value)
                out.items = out.items + more if more is not None else None
        elif e.kind == "update":
            out.unordered = out.unordered or v.unordered
            if out.mapping and self._caller_keys(v, e.value, scope):
                out.merged = out.merged or e.value  # the caller's keys merged into a known dict
            if out.mapping is not None and v.mapping is not None and not e.loops:
                out.mapping = {**out.mapping, **v.mapping}
            elif out.mapping is not None:
                out.mapping = None
        elif e.kind == "setitem":
            # a key written as a name known to hold a literal (`self._prompts[name] = text` in `register("planner",
            # ...)`): that key, so a registry filled by name is a mapping
            keys = [_const_key(k) if _const_key(k) is not None or isinstance(k, ast.Slice) else
                    _literal_text(self.ev(k, scope, env, depth + 1)) for k in e.keys]
            updated = None if e.loops or any(k is None for k in keys) else _set_path(out, keys, v)
            if updated is not None:
                out.items, out.mapping = updated.items, updated.mapping
            elif len(e.keys) <= 1:
                out.mapping = None
        elif e.kind == "setdefault" and out.mapping is not None:
            out.mapping = None
        if out.unordered is None:  # a list or dict filled in a loop over an unordered collection
            for loop in e.loops:
                it = self.ev(loop.iter, scope, env, depth + 1)
                self._iterate(it, loop.iter, out)

    def _grown_unordered(self, out: Val, e: Entry, v: Val, scope, env, depth) -> Optional[Hole]:
        """A text grown (``+=``) in a loop over an unordered collection: one hole marked with the loop's
        order hazards (pysource.orders renders stand-in items there), the hazards added to ``out``."""
        loop_hazards = Val()
        for loop in e.loops:
            self._iterate(self.ev(loop.iter, scope, env, depth + 1), loop.iter, loop_hazards, in_text=True)
        if not loop_hazards.hazards or v.parts is None:
            return None
        out.add(loop_hazards)
        ids = frozenset(id(h.node) for h in loop_hazards.hazards)
        return Hole("static", self.text_of(e.value), e.value, order=("", ids))

    def _caller_keys(self, v: Val, node: ast.AST, scope) -> bool:
        """Whether the keys of ``v`` (written ``node``) are not known here or are given by the caller of the
        function ``scope`` (a parameter, ``**kwargs``): then a mapping merged from it has the caller's order."""
        if v.mapping is None:
            return True
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        names = set(self.index.params(scope)) - {"self", "cls"}
        if scope.args.kwarg is not None:
            names.add(scope.args.kwarg.arg)
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))

    def _mapping_call(self, call: ast.Call, ev, scope=None) -> Val:
        """The mapping ``dict(a, k=v)`` / ``x.update(a, k=v)`` builds from its arguments."""
        out = Val(mapping={})
        for a in call.args[:1]:
            x = ev(a)
            out.add(x)
            out.unordered = x.unordered
            out.mapping = dict(x.mapping) if x.mapping is not None else None
            out.merged = x.merged
        parts = call.args[:1] + call.keywords
        for k in call.keywords:
            x = ev(k.value)
            out.add(x)
            if k.arg is None:  # dict(a, **b)
                if len(parts) > 1 and (self._caller_keys(x, k.value, scope) or out.mapping is None):
                    out.merged = out.merged or x.merged or call
                out.mapping = {**out.mapping, **x.mapping} if out.mapping is not None and x.mapping is not None else None
            elif out.mapping is not None:
                out.mapping[k.arg] = x
        return out

    def _param(self, func, name: str, node: ast.AST, depth: int) -> Val:
        params = self.index.params(func)
        idx = params.index(name)
        cls = self.index.class_of.get(id(func))
        key = cls if cls and func.name == "__init__" else ("self." + func.name) if cls else func.name  # __init__: `Cls(...)`
        if cls and params and params[0] in ("self", "cls"):
            idx -= 1
        vals = []
        for call, caller in self.index.call_sites.get(key, [])[:MAX_CALL_SITES]:
            arg = None
            for kw in call.keywords:
                if kw.arg == name:
                    arg = kw.value
            if arg is None and 0 <= idx < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: idx + 1]):
                arg = call.args[idx]
            if arg is not None:
                vals.append(self.ev(arg, caller, None, depth + 1))
        if not vals:
            default = self._injected(func, name) or _default_of(func, name)
            if default is not None:
                vals.append(self.ev(default, None, None, depth + 1))
        typed = self._set_typed(func, name, node)
        if not vals and typed is None:  # `ctx: RequestContext`: an object of that class, its fields' defaults
            made = objects.annotated(self, _annotation_of(func, name), node)
            if made is not None:
                made.names = frozenset([name])
                return made
        if not vals:
            return typed or self.opaque(node, name, name)
        out = merge(vals)
        if typed is not None:  # the function's own annotation is the hazard, whatever the callers pass
            out.unordered = typed.unordered
        return out

    def _injected(self, func, name: str) -> Optional[ast.AST]:
        """A FastAPI-injected parameter (``x: T = Depends(provide)``, ``x: Annotated[T, Depends(provide)]``,
        ``Security(...)``; ``Depends()`` names the type itself): a call of the provider, whose return (an
        instance for a class) is the parameter's value. One rewritten node per parameter, so the memo keeps it."""
        ann, default = _annotation_of(func, name), _default_of(func, name)
        marks = [default] if default is not None else []
        if isinstance(ann, ast.Subscript) and (self.name_of(ann.value) or "").rsplit(".", 1)[-1] == "Annotated" \
                and isinstance(ann.slice, ast.Tuple) and ann.slice.elts:
            marks += ann.slice.elts[1:]
            ann = ann.slice.elts[0]
        dep = next((m for m in marks if isinstance(m, ast.Call)
                    and (self.name_of(m.func) or "").rsplit(".", 1)[-1] in INJECTORS), None)
        if dep is None:
            return None
        provider = dep.args[0] if dep.args else next((k.value for k in dep.keywords if k.arg == "dependency"), ann)
        if provider is None or not isinstance(provider, (ast.Name, ast.Attribute)):
            return None
        plain = self._rewritten.get(id(dep))
        if plain is None:
            plain = ast.copy_location(ast.Call(func=provider, args=[], keywords=[]), dep)
            plain.end_lineno, plain.end_col_offset = dep.end_lineno, dep.end_col_offset
            self._rewritten[id(dep)] = plain
        return plain

    def _set_typed(self, func, name: str, node: ast.AST) -> Optional[Val]:
        """``names: set[str]``: whatever the callers pass, the function iterates it in no fixed order."""
        ann = _annotation_of(func, name)
        if ann is None or not _is_set_type(ann):
            return None
        text = ann.value if isinstance(ann, ast.Constant) else ast.unparse(ann)
        return Val(unordered=(ann, f"the parameter `{name}` annotated `{text}`")).add(self.opaque(node, name, name))

    # -- iteration and comprehensions
    def _iterate(self, v: Val, node: ast.AST, out: Val, in_text: bool = False) -> None:
        """``v`` is iterated in order at ``node``: an unordered ``v`` makes the result's order unstable; a
        merged mapping's (``Val.merged``) keys come in the order its unknown part gives them (M201 there)."""
        if v is not None and v.merged is not None and node is not None and v.unordered is None \
                and not any(h.kind == "json" and h.node is node for h in out.hazards):
            out.hazards.append(Hazard("json", node, self.text_of(node)))
        if v is None or v.unordered is None or node is None:
            return
        origin, what = v.unordered[:2]
        if len(v.unordered) > 2 and v.unordered[2]:
            node = origin  # `{k: SPECS[k] for k in names & allowed}`: the dict's order is made at its own loop
        if any(h.kind == "unordered" and h.node is node for h in out.hazards):
            return
        out.hazards.append(Hazard("unordered", node, self.text_of(node), origin=origin, origin_label=what,
                                  fix="sorted", in_text=in_text))

    def _comprehension(self, node, scope, env, depth) -> Val:
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
            v = self._each(node, scope, env, depth)
            if v is not None:
                return v
        inner = dict(env)
        iter_vals = Val()
        unordered = None
        for gen in node.generators:
            it = self.ev(gen.iter, scope, inner or None, depth + 1)
            iter_vals.add(it)
            if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
                self._iterate(it, gen.iter, iter_vals)
            elif unordered is None and it.unordered is not None:
                unordered = (gen.iter, it.unordered[1], True) if isinstance(node, ast.DictComp) else it.unordered
            for target in _names_in(gen.target):
                inner[target] = self.opaque(gen.iter, self.text_of(gen.iter), target)
        if isinstance(node, ast.DictComp):
            elt = Val().add(self.ev(node.key, scope, inner, depth + 1), self.ev(node.value, scope, inner, depth + 1))
        else:
            elt = self.ev(node.elt, scope, inner, depth + 1)
        out = Val().add(Val(hazards=[h for h in elt.hazards]), iter_vals)
        if isinstance(node, ast.SetComp):
            out.unordered = (node, "a set comprehension")
        elif isinstance(node, ast.DictComp):
            out.unordered = unordered
        return out

    def _each(self, node, scope, env, depth) -> Optional[Val]:
        """``[s.render() for s in sections]`` over known items: the element once per item, in order (a
        condition keeps every item: the prompt may hold any of them); None when the items are not known."""
        gen = node.generators[0]
        each = self._item_envs(gen.iter, gen.target, scope, env, depth)
        if each is None:
            return None
        out = Val(items=[]).add(each[0])
        self._iterate(each[0], gen.iter, out)  # a merged mapping's order (M201)
        for inner in each[1]:
            for cond in gen.ifs:
                out.add(self.ev(cond, scope, inner, depth + 1))
            v = self.ev(node.elt, scope, inner, depth + 1)
            out.add(v)
            out.items.append(v)
        return out

    # -- calls
    def _call(self, node: ast.Call, scope, env, depth) -> Val:
        plain = self._plain_getattr(node)
        if plain is not None:  # `getattr(prompts, "SYSTEM")`, `getattr(agent, "run")(q)`: as written out
            return self.ev(plain, scope, env, depth)
        name = self.name_of(node.func)
        f = node.func
        ev = lambda n: self.ev(n, scope, env, depth)  # noqa: E731
        label = self.text_of(node)
        sub = sinks.volatile_sub(name)
        if sub is not None:
            hole = Hole("volatile", label, node, sub)
            return Val(parts=[hole], hazards=[Hazard("volatile", node, label, sub)], names=frozenset([name]))
        method = f.attr if isinstance(f, ast.Attribute) else None
        receiver = ev(f.value) if isinstance(f, ast.Attribute) and not _is_module_ref(f.value, self.index) else None

        if name in DUMPS:
            return self._dumps(node, name, ev)
        if method in ("from_messages", "from_template") and node.args and (sinks.dotted(f.value) or "").endswith("PromptTemplate"):
            x = ev(node.args[0])  # a LangChain prompt template: filled by .partial/.invoke/.format_messages below
            if method == "from_messages":
                return Val(items=x.items, node=node).add(x)
            chat = (sinks.dotted(f.value) or "").endswith("ChatPromptTemplate")
            return Val(items=[Val(items=[Val(parts=["human"]), x])] if chat else None, parts=None if chat else x.parts,
                       node=node).add(x)
        if receiver is not None and method in _TEMPLATE_METHODS and _is_prompt_template(receiver):
            values: Dict[str, Val] = {}
            if node.args and method != "partial":
                values.update(ev(node.args[0]).mapping or {})
            for k in node.keywords:
                if k.arg:
                    values[k.arg] = ev(k.value)
            return self.fill_template(receiver, values, node).add(*values.values())
        if method == "join" and node.args:
            return self._join(node, receiver, ev, label)
        if method in jinja_calls.RENDER_METHODS and receiver is not None and jinja_calls.is_template(self, receiver) \
                and not jinja_calls.is_builder(self, receiver):
            return jinja_calls.render(self, node, receiver, ev)
        if method == "run" and receiver is not None and jinja_calls.is_builder(self, receiver) and receiver.parts is not None:
            text = jinja_calls.render(self, node, receiver, ev)  # Haystack `PromptBuilder(template=...).run(**values)`
            return Val(mapping={"prompt": text}, node=node).add(text)
        if name in prompt_files.DATA_CALLS:  # prompts kept in a YAML/JSON/TOML file or text
            loaded = prompt_files.data(self, node, name, ev, scope)
            if loaded is not None:
                return loaded
        if method in ("read_text", "read") and self.project is not None:  # a prompt kept in a file of the project
            text = prompt_files.read(self, node, method, scope)
            if text is not None:
                return Val(parts=[text])
        made = jinja_calls.template(self, node, name, method, ev, scope)
        if made is not None:  # a Jinja template: rendered by `.render(...)` above
            return made
        if method == "format" and receiver is not None and receiver.parts is not None and all(isinstance(p, str) for p in receiver.parts):
            return self._format("".join(receiver.parts), node, ev).add(receiver)
        if method == "format_map" and node.args and receiver is not None and receiver.parts is not None \
                and all(isinstance(p, str) for p in receiver.parts):
            fields = ev(node.args[0])
            if fields.mapping is not None:
                return self._format("".join(receiver.parts), node, ev, fields.mapping).add(receiver, fields)
        if name == "string.Template" and node.args:  # substituted below, by `.substitute(...)`
            x = ev(node.args[0])
            return Val(x.parts, list(x.hazards), names=x.names, node=node)
        if method in ("substitute", "safe_substitute") and receiver is not None and receiver.parts is not None \
                and isinstance(receiver.node, ast.Call) and (sinks.dotted(receiver.node.func) or "").endswith("Template"):
            return self._substitute(receiver, node, ev)
        if name in ("sorted", "min", "max", "sum", "len", "any", "all"):
            x = ev(node.args[0]) if node.args else Val()
            out = Val(hazards=[h for h in x.hazards if not (h.kind == "unordered" and not h.in_text)], names=x.names)
            if name == "sorted" and x.items is not None:
                out.items = None
            return out
        if name in ("filter", "map") and len(node.args) == 2:
            return self._filter_map(node, name, scope, env, depth)
        if name in ("io.StringIO", "StringIO", "io.BytesIO"):
            return Val(parts=[]) if not node.args else ev(node.args[0])
        if method == "get" and receiver is not None and receiver.mapping is not None and node.args and receiver.unordered is None:
            key = _const_key(node.args[0])
            default = ev(node.args[1]) if len(node.args) > 1 else Val()
            if isinstance(key, str):
                return receiver.mapping[key] if key in receiver.mapping else default
            if len(receiver.mapping) <= MAX_UNROLL:  # `PROMPTS.get(mode, DEFAULT)`: any of them
                return merge(list(receiver.mapping.values()) + [default]).add(ev(node.args[0]))
        if name in ("list", "tuple", "enumerate", "reversed", "iter", "dict.fromkeys", "collections.OrderedDict", "OrderedDict", "dict"):
            return self._collection(node, name, ev, scope)
        if name in sinks.UNORDERED_CALLS:
            x = ev(node.args[0]) if node.args else Val()
            out = Val(unordered=(node, sinks.UNORDERED_CALLS[name]))
            return out.add(Val(hazards=[h for h in x.hazards if h.kind != "unordered"], names=x.names))
        if method in sinks.UNORDERED_METHODS and name not in ("glob.glob",):
            return Val(unordered=(node, sinks.UNORDERED_METHODS[method])).add(receiver)
        if method in sinks.SET_METHODS and receiver is not None and receiver.unordered:
            out = Val(unordered=receiver.unordered).add(receiver)
            for a in node.args:
                out.add(ev(a))
            return out
        if method in ("keys", "values", "items") and receiver is not None:
            out = Val(unordered=receiver.unordered, merged=receiver.merged).add(receiver)
            if receiver.mapping is not None and receiver.unordered is None and not node.args:  # insertion order
                m = receiver.mapping
                out.items = ([Val(parts=[k]) for k in m] if method == "keys" else list(m.values()) if method == "values"
                             else [Val(items=[Val(parts=[k]), v]).add(v) for k, v in m.items()])
            return out
        if method == "apply_chat_template":
            return self._apply_chat_template(node, ev, label)
        if name in sinks.TEXT_FUNCTIONS or name == "copy.deepcopy" or name == "copy.copy":
            x = ev(node.args[0]) if node.args else Val(parts=[""])
            if name in ("str", "format", "repr"):
                return self.as_text(x, node, scope, depth, "repr" if name == "repr" else "str")
            return x
        if method in ("copy", "deepcopy") and receiver is not None and not node.args:  # x.copy(): the same value
            return receiver
        if method in _RECORD_DUMPS and receiver is not None and not node.args:
            if receiver.mapping is not None:
                return receiver  # a record's fields as a dict: `Message(role=..., content=...).model_dump()`
            if receiver.instance is not None and objects.method(receiver.instance.flow, receiver.instance.cls, method) is None:
                return objects.fields_of(receiver, depth)  # an object of a linted pydantic model or dataclass
        if method in sinks.TEXT_METHODS and receiver is not None:
            return self._text_method(node, method, receiver, ev)
        if receiver is not None and receiver.parts is not None and len(receiver.parts) == 1 and isinstance(
                receiver.parts[0], Hole) and receiver.parts[0].kind == "volatile" and receiver.instance is None:
            h = receiver.parts[0]  # `datetime.now().astimezone()`, `rng.choice(...)`: still the volatile value
            return Val([Hole("volatile", label, h.node, h.sub)], list(receiver.hazards), names=receiver.names)
        known = receiver is not None and receiver.instance is not None and receiver.instance.env is not None
        func = None if known else self._local_function(node, scope)  # a known object dispatches on its own class
        if func is not None:
            return self._call_local(node, func, scope, env, depth)
        if receiver is not None and receiver.instance is not None and isinstance(f.value, (ast.Subscript, ast.Name, ast.Call)):
            v = self._dispatched_method(node, f, scope, env, depth)  # `AGENTS[mode].run(q)`: any of the objects
            if v is not None:
                return v
        if isinstance(f, ast.Name) and depth <= MAX_DEPTH:
            fn = self.ev(f, scope, env or None, depth + 1)
            if fn.closure is not None:  # `build = make_builder(POLICY); build()`, `fmt = lambda now: ...; fmt(t)`
                return self._closure_call(node, fn, scope, env, depth)
        v = objects.call(self, node, receiver, scope, env, depth)  # methods of objects, imported functions, classes
        if v is not None:
            return v
        v = self._dispatched(node, scope, env, depth)  # `BUILDERS[mode]()`: one of the functions of a table
        if v is not None:
            return v
        record = _record_fields(node, name, method)
        if record is not None:  # SDK types: types.Content(role=..., parts=[...]), SystemMessage(content=...)
            return self._record_value(node, record, ev)
        return self.opaque(node)

    def _plain_getattr(self, node: ast.Call) -> Optional[ast.AST]:
        """``getattr(x, "name")`` as ``x.name``, ``getattr(x, "name")(...)`` as ``x.name(...)`` (a constant name:
        the same attribute); None for any other call. One rewritten node per call, so the memo keeps it."""
        f = node.func
        inner = f if isinstance(f, ast.Call) else node
        if not (isinstance(inner.func, ast.Name) and inner.func.id == "getattr" and len(inner.args) in (2, 3)
                and isinstance(inner.args[1], ast.Constant) and isinstance(inner.args[1].value, str)
                and inner.args[1].value.isidentifier() and not inner.keywords):
            return None
        plain = self._rewritten.get(id(node))
        if plain is None:
            attr = ast.copy_location(ast.Attribute(value=inner.args[0], attr=inner.args[1].value, ctx=ast.Load()), inner)
            attr.end_lineno, attr.end_col_offset = inner.end_lineno, inner.end_col_offset
            plain = attr if inner is node else ast.copy_location(ast.Call(func=attr, args=node.args, keywords=node.keywords), node)
            if plain is not attr:
                plain.end_lineno, plain.end_col_offset = node.end_lineno, node.end_col_offset
            self._rewritten[id(node)] = plain
        return plain

    def _filter_map(self, node: ast.Call, name: str, scope, env, depth) -> Val:
        """``filter(None, parts)``: every item may stay; ``map(f, parts)``: ``f`` of each item, for a lambda
        (its body with the parameter bound) or a text method (``str.strip``: the item); else items not known."""
        fn, x = node.args
        seq = self.ev(x, scope, env, depth)
        out = Val().add(seq)
        self._iterate(seq, x, out)
        items = _items_of(seq) if seq.unordered is None else None
        if items is None or len(items) > MAX_UNROLL:
            return out
        if name == "filter":  # `filter(None, parts)` drops the Nones (a part left out)
            out.items = [i for i in items if not (i.parts is None and i.items is None and i.mapping is None
                                                  and i.instance is None and not i.hazards)]
            return out
        if isinstance(fn, ast.Lambda) and len(fn.args.args) == 1:
            arg = fn.args.args[0].arg
            out.items = [self.ev(fn.body, scope, {**env, arg: item}, depth + 1) for item in items]
        elif isinstance(fn, ast.Name) and fn.id == "str" or isinstance(fn, ast.Attribute) and sinks.dotted(fn.value) == "str":
            out.items = list(items)
        return out.add(*(out.items or []))

    def _dispatched(self, node: ast.Call, scope, env, depth) -> Optional[Val]:
        """A call of a function picked from a table (``BUILDERS[mode](user)``, ``BUILDERS.get(mode, default)()``,
        through a name bound to the pick): any of the table's functions (of the linted files), each called
        with this call's arguments; None when the callee is not such a pick."""
        if isinstance(node.func, ast.Attribute):
            return None
        found = self._pick_of(node.func, node, scope, env)  # `build = BUILDERS[mode]; build(user)`
        if found is None or depth > MAX_DEPTH:
            return None
        f, defaults = found
        table = self.ev(f.value, scope, env or None, depth + 1)
        choices = list((table.mapping or {}).values()) if table.items is None else list(table.items)
        targets = [c.parts[0].node for c in choices if c.parts and len(c.parts) == 1 and isinstance(c.parts[0], Hole)]
        targets += defaults
        if not targets or len(targets) > MAX_UNROLL:
            return None
        vals = []
        for target in targets:
            if not isinstance(target, (ast.Name, ast.Attribute)):
                continue
            owner = self._flow_of(target)
            call = ast.copy_location(ast.Call(func=target, args=[], keywords=[]), node)
            func = owner._local_function(call, None) if isinstance(target, ast.Name) else None
            if func is not None:
                owner_env = owner.bind_arguments(node, func, scope, env, depth, owner) if owner is self else None
                if owner_env is not None:
                    returns = owner.index.returns.get(id(func), [])
                    vals.append(merge([owner.ev(r, func, owner_env, depth + 1) for r in returns]))
                else:
                    vals.append(owner.ev(call, None, None, depth + 1))
            else:
                vals.append(owner.ev(call, None, None, depth + 1))
        return merge(vals) if vals else None

    def _dispatched_method(self, node: ast.Call, f: ast.Attribute, scope, env, depth) -> Optional[Val]:
        found = self._pick_of(f.value, node, scope, env)
        if found is None or isinstance(found[0].slice, ast.Constant) or depth > MAX_DEPTH:
            return None
        pick = found[0]
        defaults = [self.ev(a, scope, env or None, depth + 1) for a in found[1]]
        table = self.ev(pick.value, scope, env or None, depth + 1)
        choices = list((table.mapping or {}).values()) if table.items is None else list(table.items)
        choices = [c for c in choices + defaults if c.instance is not None]
        if len(choices) < 2 or len(choices) > MAX_UNROLL:
            return None
        vals = [objects.call(self, node, c, scope, env, depth) for c in choices]
        vals = [v for v in vals if v is not None]
        return merge(vals) if vals else None

    def _pick_of(self, node: ast.AST, at: ast.AST, scope, env) -> Optional[Tuple[ast.Subscript, List[ast.AST]]]:
        """(the subscript, the default's node if any) when ``node`` picks an item of a table: ``TABLE[key]``,
        ``TABLE.get(key, default)``, or a name bound to one of them above ``at``; None otherwise."""
        if isinstance(node, ast.Name) and node.id not in env:
            entries = self.index.bindings.get((Index.sid(scope), node.id)) or []
            picked = [e.value for e in entries if e.kind == "assign" and e.pos < (at.lineno, at.col_offset)]
            node = picked[-1] if picked else node
        defaults: List[ast.AST] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
            got = self._rewritten.get(id(node))
            if got is None:  # one node per call, so the memo keeps the table's value
                got = self._rewritten[id(node)] = ast.copy_location(ast.Subscript(value=node.func.value, slice=node.args[0],
                                                                                  ctx=ast.Load()), node)
            defaults, node = node.args[1:2], got
        return (node, defaults) if isinstance(node, ast.Subscript) else None

    def picks(self, node: ast.AST, scope, depth: int = 0) -> Optional[List[Val]]:
        """The objects ``node`` may be when it picks one from a table of the linted files: ``AGENTS[mode]`` of
        objects, ``AGENTS.get(mode, default)``, ``REGISTRY[kind](...)`` of classes (each made with those
        arguments), or a name bound to one of these; None when it is no such pick."""
        at = node
        if isinstance(node, ast.Name):
            entries = self.index.bindings.get((Index.sid(scope), node.id)) or []
            assigned = [e.value for e in entries if e.kind == "assign" and e.pos < (node.lineno, node.col_offset)]
            node = assigned[-1] if assigned else node
        made = node if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Attribute) and node.func.attr == "get") else None
        found = self._pick_of(made.func if made is not None else node, at, scope, {})
        if found is None or isinstance(found[0].slice, ast.Constant) or depth > MAX_DEPTH:
            return None
        table = self.ev(found[0].value, scope, None, depth + 1)
        choices = list((table.mapping or {}).values()) if table.items is None else list(table.items)
        choices += [self.ev(d, scope, None, depth + 1) for d in found[1]]
        if not choices or len(choices) > MAX_UNROLL:
            return None
        out = []
        for c in choices:
            if made is None:
                if c.instance is not None:
                    out.append(c)
                continue
            target = c.parts[0].node if c.parts and len(c.parts) == 1 and isinstance(c.parts[0], Hole) else None
            cls = objects.find_class(self._flow_of(target), target) if isinstance(target, (ast.Name, ast.Attribute)) else None
            if cls is not None:
                call = ast.copy_location(ast.Call(func=target, args=made.args, keywords=made.keywords), made)
                obj = objects.instantiate(self, call, cls[0], cls[1], scope, {}, depth + 1)
                obj.instance.origin = made
                out.append(obj)
        return out or None

    def _flow_of(self, node: ast.AST) -> "Flow":
        """The Flow of the module a syntax node belongs to (this one, or one the project loaded)."""
        if self.project is None:
            return self
        owner = self.project.owner(node)
        if owner is not None:
            return owner
        main = self.project.main
        return main if main is not None and (self is main or id(node) not in self.project.ids.get(id(self), ())) else self

    def _join(self, node: ast.Call, receiver, ev, label) -> Val:
        """``sep.join(items)``: the joined parts when every item is known text."""
        sep = receiver or Val(parts=[""])
        arg = node.args[0]
        x = ev(arg)
        out = Val().add(sep, x)
        self._iterate(x, arg, out, in_text=True)
        if x.items is not None and sep.parts is not None and any(i.parts is not None for i in x.items):
            parts: List[Part] = []
            for i, item in enumerate(x.items):
                if i:
                    parts.extend(sep.parts)
                # an item whose text is not known is one unknown part; the others keep theirs
                parts.extend(item.parts if item.parts is not None else [Hole("static", f"item {i} of {self.text_of(arg, 40)}", arg)])
            out.parts = parts
        elif x.items is None and x.parts and isinstance(x.parts[0], Hole) and x.parts[0].kind == "volatile":
            h = x.parts[0]  # `"\n".join(random.sample(examples, 3))`: the joined text changes as the value does
            out.parts = [Hole("volatile", label, h.node, h.sub)]
        else:
            unordered = frozenset(id(h.node) for h in out.hazards if h.kind == "unordered")
            glue = "".join(sep.parts) if sep.parts is not None and all(isinstance(p, str) for p in sep.parts) else "\n"
            out.parts = [Hole("static", label, node, order=(glue, unordered) if unordered else None)]
        return out

    def _collection(self, node: ast.Call, name: str, ev, scope=None) -> Val:
        """list(...), tuple(...), dict(...) and friends: same items, order hazards carried over."""
        if name == "dict":  # the call is where its keyword entries are written (findings point at them)
            out = self._mapping_call(node, ev, scope)
            out.node = out.node or node
            return out
        if not node.args:
            return Val(items=[] if name in ("list", "tuple") else None)
        x = ev(node.args[0])
        items = x.items if x.items is not None or name not in ("list", "tuple") else self._unknown_items(x, node.args[0])
        out = Val(items=items, mapping=x.mapping if name == "dict" else None).add(x)
        if name in ("dict.fromkeys", "dict", "collections.OrderedDict", "OrderedDict"):
            out.unordered = x.unordered
        else:
            self._iterate(x, node.args[0], out)
        return out

    def _apply_chat_template(self, node: ast.Call, ev, label) -> Val:
        """A chat template applied in code: text (tokenize=False) or opaque token ids."""
        out = Val()
        for a in list(node.args) + [k.value for k in node.keywords]:
            out.add(ev(a))
        if _kw_const(node, "tokenize") is False:
            out.parts = [Hole("static", label, node)]
            out.hazards.append(Hazard("chat-text", node, label))
        else:
            out = self.opaque(node).add(out)
        return out

    def _record_value(self, node: ast.Call, record, ev) -> Val:
        """An SDK record constructor: a mapping of its fields."""
        out = self.opaque(node)
        out.mapping = {k: ev(v) for k, v in record.items()}
        out.node = node
        for kw in node.keywords:
            if kw.arg is None:  # `Params(**settings)`: the spread mapping's fields, when known
                x = ev(kw.value)
                out.add(x)
                out.mapping = {**(x.mapping or {}), **out.mapping}
        for a in node.args:
            out.add(ev(a))
        return out.add(*out.mapping.values())

    def dumped(self, node: ast.AST, scope) -> Optional[Val]:
        """The data a ``json.dumps(...)`` call serializes, when ``node`` is that call or a local name
        assigned from one (Bedrock ``invoke_model(body=json.dumps(payload))``)."""
        if isinstance(node, ast.Name):
            entries = self.index.bindings.get((Index.sid(scope), node.id)) or self.index.bindings.get((MODULE, node.id)) or []
            before = [e for e in entries if e.kind == "assign" and e.pos < (node.lineno, node.col_offset)]
            if not before:
                return None
            node = before[-1].value
        if isinstance(node, ast.Call) and self.name_of(node.func) in DUMPS and node.args:
            return self.ev(node.args[0], scope)
        return None

    def _dumps(self, node: ast.Call, name: str, ev) -> Val:
        data = ev(node.args[0]) if node.args else Val()
        out = Val(parts=[Hole("static", self.text_of(node), node)]).add(data)
        sort = _kw_const(node, "sort_keys")
        if sort is not True and name != "orjson.dumps":
            has_star = any(k.arg is None for k in node.keywords)
            fix = None if has_star else "sort-keys"
            out.hazards.append(Hazard("json", node, self.text_of(node), fix=fix))
        return out

    def _percent(self, fmt: str, node: ast.BinOp, right: Val) -> Val:
        """``"Epoch %d: %s" % (time.time(), POLICY)``: printf-style formatting, as ``_format`` does
        ``str.format`` (a tuple's items in turn, a mapping's by ``%(name)s``, else the one value)."""
        out = Val(parts=[]).add(right)
        values = right.items if isinstance(node.right, ast.Tuple) and right.items is not None else [right]
        nodes = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        at, i = 0, 0
        for m in _PRINTF.finditer(fmt):
            out.parts.append(fmt[at:m.start()])
            at = m.end()
            if m.group("conv") == "%":
                out.parts.append("%")
                continue
            name = m.group("name")
            v = (right.mapping or {}).get(name) if name is not None else (values[i] if i < len(values) else None)
            where = nodes[i] if name is None and i < len(nodes) else node.right
            i += name is None
            if v is not None and v.parts is not None:
                out.parts.extend(v.parts)
            else:
                out.parts.append(Hole("static", self.text_of(where), where))
        out.parts.append(fmt[at:])
        out.parts = [p for p in out.parts if p != ""]
        return out

    def _format(self, fmt: str, node: ast.Call, ev, values: Optional[Dict[str, Val]] = None) -> Val:
        """``fmt.format(...)``; ``values``: the fields by name when they come from a mapping (``format_map``)."""
        out = Val(parts=[])
        auto = 0
        try:
            parsed = list(string.Formatter().parse(fmt))
        except ValueError:
            return self.opaque(node)
        kws = {k.arg: k.value for k in node.keywords if k.arg}
        if values is None and any(k.arg is None for k in node.keywords):  # `.format(**values)`, `.format(**locals())`
            values = self._spread_fields(parsed, node, ev, kws)
        if values is not None:
            kws = {k: ast.copy_location(ast.Name(id=f"__value_{k}", ctx=ast.Load()), node) for k in values}
            ev = lambda n, ev=ev: values[n.id[len("__value_"):]] if isinstance(n, ast.Name) and n.id.startswith("__value_") else ev(n)  # noqa: E731
        for literal, field_name, spec, conv in parsed:
            if literal:
                out.parts.append(literal)
            if field_name is None:
                continue
            head = field_name.split(".")[0].split("[")[0]
            if head == "":
                arg = node.args[auto] if auto < len(node.args) else None
                auto += 1
            elif head.isdigit():
                arg = node.args[int(head)] if int(head) < len(node.args) else None
            else:
                arg = kws.get(head)
            if arg is None:
                out.parts.append(Hole("static", field_name, node))
                continue
            v = self.as_text(ev(arg), arg, None, 0, "repr" if conv in ("r", "a") else "str")
            out.add(v)
            if v.parts is not None and head == field_name:
                if spec and len(v.parts) == 1 and isinstance(v.parts[0], Hole):
                    h = v.parts[0]
                    out.parts.append(Hole(h.kind, h.label, h.node, _sub_from_format(spec, h.sub)))
                else:
                    out.parts.extend(v.parts)
            else:
                out.parts.append(Hole("static", self.text_of(arg), arg))
        return out

    def _spread_fields(self, parsed, node: ast.Call, ev, kws) -> Dict[str, Val]:
        """The fields of ``fmt.format(a=x, **values)`` by name: the keywords, a spread mapping's keys, and for
        ``**locals()``/``**vars()`` each field's name as a local variable at the call."""
        values: Dict[str, Val] = {}
        for k in node.keywords:
            if k.arg is not None:
                values[k.arg] = ev(k.value)
            elif isinstance(k.value, ast.Call) and sinks.dotted(k.value.func) in ("locals", "vars") and not k.value.args:
                for _, field_name, _, _ in parsed:
                    head = (field_name or "").split(".")[0].split("[")[0]
                    if head.isidentifier() and head not in kws:
                        name = ast.Name(id=head, ctx=ast.Load(), lineno=node.lineno, col_offset=node.col_offset,
                                        end_lineno=node.lineno, end_col_offset=node.col_offset)
                        values[head] = ev(name)
            else:
                values.update(ev(k.value).mapping or {})
        return values

    def fill_template(self, template: Val, values: Dict[str, Val], node: ast.AST) -> Val:
        """A LangChain prompt template (``ChatPromptTemplate.from_messages``/``from_template``) with its
        ``{name}`` variables replaced by ``values``; a variable not given stays as written (``.partial``
        fills some, ``.invoke`` the rest). The result is a template too (the same constructor node)."""
        def fill(v: Val) -> Val:
            if v.parts is None:
                return v
            out = Val(parts=[]).add(v)
            for part in v.parts:
                if not isinstance(part, str):
                    out.parts.append(part)
                    continue
                try:
                    parsed = list(string.Formatter().parse(part))
                except ValueError:
                    out.parts.append(part)
                    continue
                for literal, field_name, spec, conv in parsed:
                    if literal:
                        out.parts.append(literal)
                    if field_name is None:
                        continue
                    if field_name in values:
                        x = self.as_text(values[field_name], node, None, 0)
                        out.add(x)
                        out.parts.extend(x.parts if x.parts is not None else [Hole("static", field_name, node)])
                    else:
                        out.parts.append("{" + field_name + (f":{spec}" if spec else "") + "}")
            return out

        if template.items is None:
            return Val(parts=fill(template).parts, node=template.node).add(template)
        items = []
        for item in template.items:
            if item.items is not None and len(item.items) == 2:  # ("system", "...")
                items.append(Val(items=[item.items[0], fill(item.items[1])]).add(item))
            elif item.mapping is not None and "content" in item.mapping:
                items.append(Val(mapping={**item.mapping, "content": fill(item.mapping["content"])}, node=item.node).add(item))
            else:
                items.append(item)
        return Val(items=items, node=template.node).add(template, *items)

    def _substitute(self, template: Val, node: ast.Call, ev) -> Val:
        """``string.Template(text).substitute(mapping, **kw)`` (and ``safe_substitute``): ``$name`` and ``${name}``
        replaced by the values given (keywords win over the mapping), ``$$`` by ``$``; a name not given stays."""
        values: Dict[str, Val] = {}
        out = Val(parts=[]).add(template)
        if node.args:
            m = ev(node.args[0])
            out.add(m)
            values.update(m.mapping or {})
        for k in node.keywords:
            x = ev(k.value)
            out.add(x)
            if k.arg:
                values[k.arg] = x
            elif x.mapping is not None:
                values.update(x.mapping)
        for part in template.parts:
            if not isinstance(part, str):
                out.parts.append(part)
                continue
            at = 0
            for m in string.Template.pattern.finditer(part):
                out.parts.append(part[at:m.start()])
                at = m.end()
                key = m.group("named") or m.group("braced")
                if m.group("escaped") is not None:
                    out.parts.append("$")
                elif key in values:
                    v = self.as_text(values[key], node, None, 0)
                    out.parts.extend(v.parts if v.parts is not None else [Hole("static", key, node)])
                else:
                    out.parts.append(m.group(0))
            out.parts.append(part[at:])
        out.parts = [p for p in out.parts if p != ""]
        return out

    def _text_method(self, node: ast.Call, method: str, receiver: Val, ev) -> Val:
        parts = receiver.parts
        if parts is not None and len(parts) == 1 and isinstance(parts[0], Hole):
            h = parts[0]
            sub = h.sub
            if method == "strftime" and node.args and isinstance(node.args[0], ast.Constant):
                sub = _sub_from_format(str(node.args[0].value), sub)
            elif method == "date":
                sub = "date"
            elif method == "hex" and h.sub == "id":
                sub = "id"
            return Val([Hole(h.kind, h.label, h.node, sub)], list(receiver.hazards), names=receiver.names)
        if method == "replace" and parts is not None and len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and node.args[0].value:
            return self._placeholder(node, parts, receiver, ev)
        if parts is not None and all(isinstance(p, str) for p in parts):
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if len(args) == len(node.args) and not node.keywords:
                try:
                    res = getattr(str, method)("".join(parts), *args)
                    if isinstance(res, str):
                        return Val(parts=[res], hazards=list(receiver.hazards), names=receiver.names)
                except (AttributeError, TypeError, ValueError):
                    pass
        return Val(parts=parts, hazards=list(receiver.hazards), names=receiver.names)

    def _placeholder(self, node: ast.Call, parts: List[Part], receiver: Val, ev) -> Val:
        """``TEMPLATE.replace("<<NOW>>", value)``: the value in place of each occurrence of the placeholder
        (in the known text parts; holes stay), so a volatile value keeps its position in the prompt."""
        old = node.args[0].value
        new = self.as_text(ev(node.args[1]), node.args[1], None, 0)
        fill = new.parts if new.parts is not None else [Hole("static", self.text_of(node.args[1]), node.args[1])]
        out = Val(parts=[], names=receiver.names).add(receiver)
        if any(isinstance(p, str) and old in p for p in parts):
            out.add(new)  # a placeholder the text does not hold puts nothing of the value in the prompt
        for p in parts:
            if not isinstance(p, str):
                out.parts.append(p)
                continue
            pieces = p.split(old)
            for i, piece in enumerate(pieces):
                if i:
                    out.parts.extend(fill)
                if piece:
                    out.parts.append(piece)
        return out

    def _local_function(self, node: ast.Call, scope) -> Optional[ast.AST]:
        f = node.func
        if isinstance(f, ast.Name):
            return self.index.functions.get(f.id)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls") and scope is not None:
            cls = self.index.class_of.get(id(scope))
            if cls:
                return self.index.methods.get((cls, f.attr))
        return None

    def _call_local(self, node: ast.Call, func, scope, env, depth, callee: "Flow" = None, bound: Optional[Val] = None) -> Val:
        """The value ``func`` returns for this call: its ``return`` expressions with its parameters bound
        to the call's arguments (evaluated here, in the caller) or to its defaults (in ``callee``, the
        module that defines it); ``bound``: the object a method is called on."""
        callee = callee or self
        new_env = self.bind_arguments(node, func, scope, env, depth, callee, bound)
        returns = callee.index.returns.get(id(func), [])
        typed = None
        if func.returns is not None and _is_set_type(func.returns):  # `def enabled() -> set[str]`
            text = func.returns.value if isinstance(func.returns, ast.Constant) else ast.unparse(func.returns)
            typed = Val(unordered=(func.returns, f"`{func.name}()` (returns `{text}`)"))
        yields = callee.index.yields.get(id(func)) if not returns else None
        if yields:  # a generator (`yield {"role": "system", ...}`): the items it yields, in order
            out = callee._generated(node, yields, func, new_env, depth)
        else:
            out = merge([callee.ev(r, func, new_env, depth + 1) for r in returns]) if returns else self.opaque(node)
        if typed is not None:
            out.unordered = out.unordered or typed.unordered
        return out

    def _generated(self, node: ast.Call, yields, func, env, depth) -> Val:
        """What a generator function's call yields, as a list: each ``yield`` once in source order (one in a loop
        stands for its repeats, as an item appended in a loop does), ``yield from`` the items of its iterable."""
        out = Val(items=[])
        for y, _ in yields:
            v = self.ev(y.value, func, env, depth + 1) if y.value is not None else Val(parts=["None"])
            out.add(v)
            if isinstance(y, ast.YieldFrom):
                more = _items_of(v) if v.unordered is None else None
                more = more if more is not None else self._unknown_items(v, y.value)
                self._iterate(v, y.value, out)
            else:
                more = [v]
            out.items = out.items + more if out.items is not None and more is not None else None
        out.node = node
        return out

    def bind_arguments(self, node: ast.Call, func, scope, env, depth, callee: "Flow", bound: Optional[Val] = None,
                       skip_self: Optional[bool] = None) -> Dict[str, Val]:
        params = callee.index.params(func)
        new_env: Dict[str, Val] = {}
        if skip_self is None:
            skip_self = bool(callee.index.class_of.get(id(func))) and bool(params) and (
                params[0] in ("self", "cls") or bound is not None)
        if skip_self and params:
            if bound is not None:
                new_env[params[0]] = bound
            params = params[1:]
        for i, a in enumerate(node.args):
            if isinstance(a, ast.Starred):
                break
            if i < len(params):
                new_env[params[i]] = self.ev(a, scope, env, depth + 1)
        for k in node.keywords:
            if k.arg and k.arg in params:
                new_env[k.arg] = self.ev(k.value, scope, env, depth + 1)
        for p in params:
            if p not in new_env:
                d = _default_of(func, p)
                new_env[p] = callee.ev(d, None, None, depth + 1) if d is not None else callee.opaque(func, p, p)
        for p in params:
            typed = callee._set_typed(func, p, func)
            if typed is not None:
                new_env[p] = merge([new_env[p]])
                new_env[p].unordered = typed.unordered
        return new_env


# ------------------------------------------------------------------- small helpers


def _record_fields(node: ast.Call, name: Optional[str], method: Optional[str]) -> Optional[Dict[str, ast.AST]]:
    """The fields of a call that builds a record: a class (a capitalized name) called with keyword
    arguments, or ``Part.from_text(text)``; None for any other call."""
    if method == "from_text":
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "text"), None)
        return {"text": arg} if arg is not None else None
    last = (name or "").rsplit(".", 1)[-1]
    if last.endswith("Message") and last[:1].isupper() and node.args and not isinstance(node.args[0], ast.Starred):
        # LangChain SystemMessage("...") / HumanMessage("..."): the content is the first argument
        fields = {k.arg: k.value for k in node.keywords if k.arg}
        fields.setdefault("content", node.args[0])
        return fields
    if not last[:1].isupper() or not node.keywords:  # `SamplingParams(**DECODING)` too: fields from the spread
        return None
    return {k.arg: k.value for k in node.keywords if k.arg}


def _annotation_of(func, name: str) -> Optional[ast.AST]:
    a = func.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs:
        if arg.arg == name:
            return arg.annotation
    return None


INJECTORS = ("Depends", "Security")  # FastAPI: the parameter's value is what the provider returns
SET_TYPES = {"set", "frozenset", "Set", "FrozenSet", "AbstractSet", "MutableSet", "KeysView"}


def _is_set_type(ann: ast.AST) -> bool:
    """``set[str]``, ``typing.Set[str]``, ``frozenset``, ``Optional[set[str]]``, ``set[str] | None``, ``"set[str]"``."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _is_set_type(ann.left) or _is_set_type(ann.right)
    if isinstance(ann, ast.Subscript):
        head = sinks.dotted(ann.value) or ""
        if head.rsplit(".", 1)[-1] == "Optional":
            return _is_set_type(ann.slice)
        return head.rsplit(".", 1)[-1] in SET_TYPES
    return (sinks.dotted(ann) or "").rsplit(".", 1)[-1] in SET_TYPES


def _const_int(node: ast.AST) -> Optional[int]:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        n = _const_int(node.operand)
        return -n if n is not None else None
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _literal_text(v: Val) -> Optional[str]:
    """The text of a value that is one plain literal (not one of several), else None."""
    if v.parts is None or not v.parts or not all(isinstance(p, str) for p in v.parts) or v.hazards or "<either>" in v.names:
        return None
    return "".join(v.parts)


def _const_key(node: ast.AST):
    """A subscript's constant key (a string or an int), else None."""
    n = _const_int(node)
    if n is not None:
        return n
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _set_path(base: Val, keys: list, value: Val) -> Optional[Val]:
    """``base`` with ``value`` stored under ``keys`` (``x[-1]["cache_control"] = {...}``), containers copied
    along the path (values are shared by the memo); None when the path does not lead into known containers."""
    key = keys[0]
    if isinstance(key, int):
        if base.items is None or not -len(base.items) <= key < len(base.items):
            return None
        inner = value if len(keys) == 1 else _set_path(base.items[key], keys[1:], value)
        if inner is None:
            return None
        items = list(base.items)
        items[key] = inner
        return Val(base.parts, list(base.hazards), items, base.mapping, base.unordered, base.names, base.node, base.instance,
                   merged=base.merged)
    if base.mapping is None:
        return None
    if len(keys) == 1:
        inner = value
    else:
        if key not in base.mapping:
            return None
        inner = _set_path(base.mapping[key], keys[1:], value)
        if inner is None:
            return None
    return Val(base.parts, list(base.hazards), base.items, {**base.mapping, key: inner}, base.unordered, base.names,
               base.node, base.instance, merged=base.merged)


# a record's fields as a dict (pydantic v2/v1, attrs/dataclass helpers, namedtuples)
_RECORD_DUMPS = {"model_dump", "dict", "to_dict", "_asdict"}

# LangChain prompt-template methods that fill its variables (``partial`` some, the others all)
_TEMPLATE_METHODS = {"partial", "invoke", "ainvoke", "format_messages", "aformat_messages", "format_prompt",
                     "aformat_prompt", "format"}


def _is_prompt_template(v: Val) -> bool:
    return isinstance(v.node, ast.Call) and isinstance(v.node.func, ast.Attribute) and v.node.func.attr in (
        "from_messages", "from_template") and (sinks.dotted(v.node.func.value) or "").endswith("PromptTemplate")


MAX_UNROLL = 32  # items of a known list a loop or comprehension is followed for, one by one
# longer known lists: followed item by item within a budget of MAX_MERGE items per module; beyond it, a loop
# variable is one item standing for them all (the one with a volatile value, if any: flow.merge), so a volatile
# item is not lost because its list is long
MAX_MERGE = 4096


def _items_of(v: Val) -> Optional[List[Val]]:
    """What iterating ``v`` gives, one value per item, when known: a list's or tuple's items, a dict's keys."""
    if v.items is not None:
        return v.items
    if v.mapping is not None and v.parts is None:
        return [Val(parts=[k]) for k in v.mapping]
    return None


def _pick(item: Val, path: Tuple[int, ...]) -> Optional[Val]:
    """Element ``path`` of an item (``for name, body in pairs``: 0 and 1); None when not known."""
    for i in path:
        if item.items is None or not -len(item.items) <= i < len(item.items):
            return None
        item = item.items[i]
    return item


def _target_paths(target: ast.AST, path: Tuple[int, ...] = ()) -> Optional[List[Tuple[str, Tuple[int, ...]]]]:
    """The names a loop target binds with the element each takes (``for i, (k, v) in ...``); None for others."""
    if isinstance(target, ast.Name):
        return [(target.id, path)]
    if isinstance(target, (ast.Tuple, ast.List)):
        out = []
        for i, elt in enumerate(target.elts):
            sub = _target_paths(elt, path + (i,))
            if sub is None:
                return None
            out += sub
        return out
    return None


def _exclusive(arms, other) -> bool:
    """Two sets of arms (``Entry.arms``) in different arms of one if/try/match: they never both run."""
    if not arms or not other:
        return False
    mine = dict(arms)
    return any(stmt in mine and mine[stmt] != arm for stmt, arm in other)


def _names_in(target: ast.AST) -> List[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _kw_const(node: ast.Call, name: str) -> Any:
    for k in node.keywords:
        if k.arg == name:
            return k.value.value if isinstance(k.value, ast.Constant) else ...
    return None


def _default_of(func, name: str) -> Optional[ast.AST]:
    a = func.args
    positional = a.posonlyargs + a.args
    offset = len(positional) - len(a.defaults)
    for i, p in enumerate(positional):
        if p.arg == name and i >= offset:
            return a.defaults[i - offset]
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        if p.arg == name:
            return d
    return None


def _const_spec(spec: Optional[ast.AST]) -> Optional[str]:
    if spec is None:
        return None
    if isinstance(spec, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in spec.values):
        return "".join(str(v.value) for v in spec.values)
    return None


# expression node type -> the Flow method that evaluates it (anything else is opaque)
_EVALUATORS = {
    ast.Constant: "_constant",
    ast.JoinedStr: "_fstring",
    ast.Name: "_name",
    ast.BinOp: "_binop",
    ast.List: "_sequence",
    ast.Tuple: "_sequence",
    ast.Set: "_set",
    ast.Dict: "_dict",
    ast.ListComp: "_comprehension",
    ast.GeneratorExp: "_comprehension",
    ast.SetComp: "_comprehension",
    ast.DictComp: "_comprehension",
    ast.Call: "_call",
    ast.IfExp: "_either",
    ast.BoolOp: "_either",
    ast.Subscript: "_subscript",
    ast.Attribute: "_attribute",
    ast.Await: "_inner",
    ast.Starred: "_inner",
    ast.NamedExpr: "_inner",
    ast.Lambda: "_lambda",
}


def _sub_from_format(spec: Optional[str], sub: Optional[str]) -> Optional[str]:
    if not spec or sub not in ("timestamp", "date", "time", None):
        return sub
    has_time = any(d in spec for d in ("%H", "%M", "%S", "%I", "%X", "%c", "%f", "%p"))
    has_date = any(d in spec for d in ("%Y", "%y", "%m", "%d", "%j", "%x", "%b", "%B", "%a", "%A"))
    if has_time and has_date:
        return "timestamp"
    if has_time:
        return "time"
    if has_date:
        return "date"
    return sub


def _is_module_ref(node: ast.AST, index: Index) -> bool:
    return isinstance(node, ast.Name) and node.id in index.aliases and "." not in index.aliases[node.id] or (
        isinstance(node, ast.Name) and node.id in ("json", "os", "glob", "time", "uuid", "random", "secrets", "datetime")
    )
