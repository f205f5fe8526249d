"""Shape inference: what structure each template input must have, from every use of it.

A ``Shape`` collects the evidence of one input or part of one (iterated, a field read,
compared with a literal, passed to ``|join``, tested ``is mapping``, ...). Shapes are
union-find nodes, so a loop variable, a ``{% set %}`` alias, a macro parameter or a
namespace attribute that stands for part of an input *is* that part: evidence on any of
them lands on the input. ``Walker`` walks a template's AST (following constant includes,
imports and extends) in scope order and returns one root shape per input.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Tuple

# evidence categories (what a use says about the value)
LIST, MAPPING, TEXT, NUMBER, BOOL, DATETIME = "list", "mapping", "text", "number", "bool", "datetime"
FIELD = "field"  # a field read: a mapping, unless the field is only tested and the value is used as text
WEAK_LIST = "list-weak"  # `is iterable`, `|length`: lists and strings both allow it
PRINTED, TESTED = "printed", "tested"  # printed / used as a condition: any value allows it
METHOD = "method"  # `tool.describe()`: the value is called, a method of an application object
KEYED = "keyed"  # `{% for k in m %}{{ m[k] }}`: indexed by its own items, so a mapping iterated by its keys

MAPPING_METHODS = {"items", "keys", "values", "get", "setdefault"}
TEXT_METHODS = {
    "strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "casefold", "split", "rsplit",
    "splitlines", "startswith", "endswith", "replace", "find", "rfind", "format", "zfill", "center",
    "ljust", "rjust", "isdigit", "isalpha", "isspace", "isupper", "islower", "encode", "partition", "removeprefix",
    "removesuffix", "swapcase", "expandtabs",
}
LIST_METHODS = {"append", "extend", "insert", "pop", "index", "count", "remove"}
DATETIME_METHODS = {"strftime", "isoformat", "timestamp", "date", "time", "weekday", "isoweekday", "astimezone", "ctime", "timetuple"}
DATETIME_ATTRS = {"year", "month", "day", "hour", "minute", "second", "microsecond", "tzinfo"}

SAME_LIST_FILTERS = {"sort", "unique", "reverse", "list", "select", "reject", "selectattr", "rejectattr"}
ITEM_FILTERS = {"first", "last", "random"}
TEXT_FILTERS = {
    "upper", "lower", "title", "capitalize", "trim", "replace", "truncate", "wordwrap", "wordcount", "center",
    "indent", "striptags", "urlize", "urlencode", "format",
}
PASS_FILTERS = {"safe", "e", "escape", "forceescape", "default", "d"}
NUMBER_FILTERS = {"round", "abs", "filesizeformat"}
EQUALITY_TESTS = {"equalto", "eq", "==", "sameas"}
ORDER_TESTS = {"gt", "ge", "lt", "le", ">", ">=", "<", "<=", "greaterthan", "lessthan"}


class Shape:
    """What a value must be for the template to render: evidence, fields, items, compared literals."""

    __slots__ = ("_link", "uses", "fields", "_element", "eq", "ne", "avoid", "lengths")

    def __init__(self) -> None:
        self._link: Optional[Shape] = None
        self.uses: Dict[str, Tuple[str, str]] = {}  # label -> (category, first location)
        self.fields: Dict[str, Shape] = {}
        self._element: Optional[Shape] = None  # list items, mapping values
        self.eq: List[Any] = []  # literals it is compared equal to (branches it selects)
        self.ne: List[Any] = []
        self.avoid: List[Any] = []  # literals that select a branch raising an error
        self.lengths: List[Tuple[str, int]] = []  # (op, n): `|length op n` selects a branch raising an error

    def find(self) -> "Shape":
        root = self
        while root._link is not None:
            root = root._link
        node = self
        while node._link is not None and node._link is not root:  # path compression
            node._link, node = root, node._link
        return root

    def use(self, category: str, label: str, where: str) -> None:
        r = self.find()
        r.uses.setdefault(label, (category, where))

    def categories(self) -> set:
        return {c for c, _ in self.find().uses.values()}

    def field(self, name: str) -> "Shape":
        r = self.find()
        if name not in r.fields:
            r.fields[name] = Shape()
        return r.fields[name].find()

    def element(self) -> "Shape":
        r = self.find()
        if r._element is None:
            r._element = Shape()
        return r._element.find()

    def element_if_any(self) -> Optional["Shape"]:
        r = self.find()
        return r._element.find() if r._element is not None else None

    def literal(self, value: Any, equal: bool = True, avoid: bool = False) -> None:
        """Record a comparison with ``value``; under ``avoid`` the comparison guards a raised error."""
        r = self.find()
        if avoid:
            equal = not equal  # `{% if x != "a" %}{{ raise_exception(..) }}`: x must be "a"
            if not equal:
                if value not in r.avoid:
                    r.avoid.append(value)
                return
        bucket = r.eq if equal else r.ne
        if value not in bucket:
            bucket.append(value)


def union(a: Shape, b: Shape) -> Shape:
    """Make ``a`` and ``b`` one shape (a loop variable and the items it walks, a parameter and an argument)."""
    ra, rb = a.find(), b.find()
    if ra is rb:
        return ra
    rb._link = ra  # link first: merging cyclic shapes (recursive loops) terminates
    for label, use in rb.uses.items():
        ra.uses.setdefault(label, use)
    for name, sub in rb.fields.items():
        if name in ra.fields:
            union(ra.fields[name], sub)
        else:
            ra.fields[name] = sub
    if rb._element is not None:
        if ra._element is None:
            ra._element = rb._element
        else:
            union(ra._element, rb._element)
    for v in rb.eq:
        ra.literal(v, True)
    for v in rb.ne:
        ra.literal(v, False)
    for v in rb.avoid:
        ra.literal(v, True, avoid=True)
    ra.lengths.extend(c for c in rb.lengths if c not in ra.lengths)
    return ra


def _reaches(a: Shape, b: Shape, depth: int = 0) -> bool:
    """Is ``b`` part of ``a`` (a field or item of it, at any depth)?"""
    ra, rb = a.find(), b.find()
    if ra is rb:
        return True
    if depth > 8:
        return False
    subs = list(ra.fields.values()) + ([ra._element] if ra._element is not None else [])
    return any(_reaches(s, rb, depth + 1) for s in subs)


def _strong(shape: Shape) -> bool:
    r = shape.find()
    return bool(r.fields or r._element is not None or r.categories() - {TESTED, PRINTED})


def _join_alternatives(chosen: Shape, alternatives: List[Shape]) -> None:
    """A name the branches of an if assign differently (`content = message.content.content` or
    `message.content`; `tools = custom_tools` or the input `tools`): its later uses are evidence for
    each alternative they fit. Later branches first (an `else` is usually the common case); an
    alternative that contradicts the uses, or is part of one already joined, is left alone."""
    for alt in reversed(alternatives):
        if _reaches(chosen, alt) or _reaches(alt, chosen):
            continue
        if _strong(chosen) and _strong(alt) and form_of(chosen) != form_of(alt):
            continue
        union(chosen, alt)


def form_of(shape) -> str:
    """What the value is: list, tuple, mapping, datetime, number, bool or text, by weight of evidence."""
    r = shape.find()
    cats = r.categories()
    item = r.element_if_any()
    if r.fields and all(k.startswith("#") for k in r.fields):
        return "tuple"
    if KEYED in cats:
        return MAPPING
    item_structured = item is not None and bool(item.fields or item.element_if_any() is not None or item.categories() - {PRINTED, TESTED, TEXT})
    if LIST in cats and (item_structured or not (r.fields or TEXT in cats)):
        return LIST  # a text is iterable too: with text evidence, only structured items make it a list
    if TEXT in cats and r.fields and all(_probe_only(f) for f in r.fields.values()) and MAPPING not in cats:
        return TEXT  # `{% if x.content is defined %}` on a value also used as text: a text
    if r.fields or MAPPING in cats:
        if DATETIME in cats and set(r.fields) <= DATETIME_ATTRS:
            return DATETIME
        return MAPPING
    if DATETIME in cats:
        return DATETIME
    if NUMBER in cats and TEXT not in cats:
        return NUMBER
    if WEAK_LIST in cats and not cats & {TEXT, PRINTED, NUMBER}:
        return LIST
    if BOOL in cats and not cats & {TEXT, NUMBER}:
        return BOOL
    if cats and cats <= {TESTED}:
        return BOOL
    return TEXT


def tested_only(shape) -> Optional[str]:
    """Where a value only ever decides a branch (``{% if x %}``, ``a if x else b``, ``x is defined``,
    ``x == true``): no field, item or text of it reaches the prompt, so it is a switch. None otherwise."""
    r = shape.find()
    if r.fields or r.element_if_any() is not None or not r.uses:
        return None
    if not r.categories() <= {TESTED, BOOL} or any(not isinstance(v, bool) for v in r.eq + r.ne + r.avoid):
        return None
    return min((w for _, w in r.uses.values()), key=_line_order)


def _line_order(where: str):
    """`line 4` before `line 12`; an include's lines after the template's own."""
    head, _, n = where.rpartition("line ")
    return (head, int(n) if n.isdigit() else 0)


def _probe_only(shape) -> bool:
    """A field only tested (``is defined``, ``if x.y``): text lacks it too, without failing."""
    r = shape.find()
    return not r.fields and r.element_if_any() is None and r.categories() <= {TESTED}


class Pairs:
    """``x.items()`` / ``x|dictsort``: iterating gives (key, value) pairs of mapping ``of``."""

    def __init__(self, of: Shape):
        self.of = of


class Loop:
    """The ``loop`` variable of a for loop over ``items`` (``loop.previtem`` is an item)."""

    def __init__(self, items: Optional[Shape]):
        self.items = items


class Length:
    """``x|length``: comparing it with a number in a raising branch's test constrains the item count."""

    def __init__(self, of: Shape):
        self.of = of


_MIRROR = {"lt": "gt", "gt": "lt", "lteq": "gteq", "gteq": "lteq"}
_NEGATE = {"eq": "ne", "ne": "eq", "lt": "gteq", "gteq": "lt", "gt": "lteq", "lteq": "gt"}
WANT = "want"  # the `avoid` flag under `not`: the values should make the test true


class DictLit:
    """A mapping literal the template builds (`{% set names = {"string": "str"} %}`): looking a
    value up in it says which values the template expects."""

    def __init__(self, keys: List[Any]):
        self.keys = keys


class MacroRef:
    def __init__(self, name: str):
        self.name = name


class ImportRef:
    pass


LOCAL = object()  # a name the template assigns from something that is not an input


class Either:
    """A name an `{% if %}` branch may assign: after the if it is the input of that name or one of ``alternatives``."""

    def __init__(self, alternatives: List[Shape]):
        self.alternatives = list(alternatives)
        self.resolved: Optional[Shape] = None


_SPECIAL = {"loop", "self", "caller", "varargs", "kwargs", "super"}


class Scope:
    def __init__(self, parent: Optional["Scope"] = None):
        self.parent = parent
        self.names: Dict[str, Any] = {}

    def lookup(self, name: str) -> Tuple[bool, Any]:
        scope: Optional[Scope] = self
        while scope is not None:
            if name in scope.names:
                return True, scope.names[name]
            scope = scope.parent
        return False, None


class Walker:
    """Walks a template and the templates it includes/imports/extends; ``inputs`` maps each input to its shape."""

    def __init__(self, templates: Dict[str, Any], main: str, known=()):
        self.templates = templates  # name -> parsed AST
        self.main = main
        self.known = set(known)
        self.inputs: Dict[str, Shape] = {}
        self.macros: Dict[str, List[Tuple[str, Shape]]] = {}
        self.macro_nodes: Dict[str, Any] = {}
        self.walked: set = set()  # template names walked
        self._stack: List[str] = []
        self._macros_walked: set = set()
        self.avoid = False  # walking the test of a branch that raises an error
        # (shape of a name after an if, the values its branches may give it): joined after the walk
        self.pending: List[Tuple[Shape, List[Shape]]] = []

    # ------------------------------------------------------------------ entry

    def run(self) -> Dict[str, Shape]:
        from jinja2 import nodes

        for name, ast in self.templates.items():
            for m in ast.find_all(nodes.Macro):
                if m.name not in self.macros:
                    self.macros[m.name] = [(a.name, Shape()) for a in m.args]
                    self.macro_nodes[m.name] = (name, m)
        self.template(self.main, Scope())
        for mname, (tname, node) in list(self.macro_nodes.items()):  # macros imported from elsewhere
            if mname not in self._macros_walked:
                self._stack.append(tname)
                self.macro(node, Scope())
                self._stack.pop()
        for chosen, alternatives in self.pending:
            _join_alternatives(chosen, alternatives)
        return {n: s.find() for n, s in self.inputs.items()}

    def template(self, name: str, scope: Scope) -> None:
        ast = self.templates.get(name)
        if ast is None or name in self._stack or len(self._stack) > 20:
            return
        self.walked.add(name)
        self._stack.append(name)
        try:
            self.block(ast.body, scope)
        finally:
            self._stack.pop()

    def where(self, node) -> str:
        line = getattr(node, "lineno", None) or 1
        current = self._stack[-1] if self._stack else self.main
        return f"line {line}" if current == self.main else f"{current} line {line}"

    # ------------------------------------------------------------------ statements

    def block(self, body, scope: Scope) -> None:
        for node in body:
            self.stmt(node, scope)

    def stmt(self, node, scope: Scope) -> None:
        from jinja2 import nodes

        if isinstance(node, nodes.Output):
            for n in node.nodes:
                if not isinstance(n, nodes.TemplateData):
                    self.printed(n, scope)
        elif isinstance(node, nodes.If):
            self.if_stmt(node, scope)
        elif isinstance(node, nodes.For):
            self.for_loop(node, scope)
        elif isinstance(node, nodes.Assign):
            self.assign(node.target, self.expr(node.node, scope), scope, node)
        elif isinstance(node, nodes.AssignBlock):
            self.block(node.body, scope)
            if node.filter is not None:
                self.expr(node.filter, scope)
            self.assign(node.target, None, scope, node)
        elif isinstance(node, nodes.Macro):
            scope.names[node.name] = MacroRef(node.name)
            self.macro(node, scope)
        elif isinstance(node, nodes.CallBlock):
            self.expr(node.call, scope)
            inner = Scope(scope)
            for a in node.args:
                inner.names[a.name] = LOCAL
            self.block(node.body, inner)
        elif isinstance(node, nodes.FilterBlock):
            self.expr(node.filter, scope)
            self.block(node.body, scope)
        elif isinstance(node, nodes.With):
            inner = Scope(scope)
            for target, value in zip(node.targets, node.values):
                self.assign(target, self.expr(value, scope), inner, node)
            self.block(node.body, inner)
        elif isinstance(node, nodes.Include):
            for name in self.template_names(node.template, scope):
                self.template(name, scope)  # an include sees the includer's variables, loop variables too
        elif isinstance(node, nodes.Extends):
            for name in self.template_names(node.template, scope):
                self.template(name, Scope())
        elif isinstance(node, nodes.Import):
            self.template_names(node.template, scope)
            scope.names[node.target] = ImportRef()
        elif isinstance(node, nodes.FromImport):
            self.template_names(node.template, scope)
            for item in node.names:
                name, alias = item if isinstance(item, tuple) else (item, item)
                scope.names[alias] = MacroRef(name)
        elif isinstance(node, nodes.ExprStmt):
            self.expr(node.node, scope)
        else:  # Block, Scope, OverlayScope, ScopedEvalContextModifier, extension nodes
            for child in node.iter_child_nodes():
                if isinstance(child, nodes.Stmt):
                    self.stmt(child, scope)
                elif isinstance(child, nodes.Expr):
                    self.expr(child, scope)

    def if_stmt(self, node, scope: Scope) -> None:
        """Each branch in its own scope; a name a branch assigns is, after the if, either that value
        or what it was before (an input's shape gets the value's evidence too)."""
        assigned: Dict[str, List[Any]] = {}
        branches = [(node.test, node.body)] + [(e.test, e.body) for e in node.elif_] + [(None, node.else_)]
        for test, body in branches:
            if test is not None:  # a branch that raises an error: values should make its test false
                self.cond(test, scope, avoid=self._raises(body))
            inner = Scope(scope)
            self.block(body, inner)
            for name, value in inner.names.items():
                assigned.setdefault(name, []).append(value)
        for name, values in assigned.items():
            alternatives: List[Shape] = []
            partial = False  # some branch only maybe assigns it (an if inside the branch)
            for v in values:
                if isinstance(v, Either):
                    partial = True
                    alternatives += v.alternatives + ([v.resolved] if v.resolved is not None else [])
                elif isinstance(v, Shape):
                    alternatives.append(v)
            found, bound = scope.lookup(name)
            every = not partial and len(values) == len(branches) and bool(node.else_)
            if isinstance(bound, Either):
                bound.alternatives.extend(alternatives)
                continue
            if not every:
                if isinstance(bound, Shape):
                    alternatives.insert(0, bound)
                elif not found:
                    scope.names[name] = Either(alternatives)  # also the input of that name, if read later
                    continue
            chosen = Shape()
            self.pending.append((chosen, alternatives))
            scope.names[name] = chosen

    @staticmethod
    def _raises(body) -> bool:
        """Does this branch body call `raise_exception` (or another raise*) directly?"""
        from jinja2 import nodes

        for stmt in body:
            if isinstance(stmt, (nodes.Output, nodes.ExprStmt)):
                for call in stmt.find_all(nodes.Call):
                    if isinstance(call.node, nodes.Name) and call.node.name.startswith("raise"):
                        return True
        return False

    def template_names(self, node, scope: Scope) -> List[str]:
        """Constant template names of an include/import/extends (a list tries each)."""
        from jinja2 import nodes

        if isinstance(node, nodes.Const) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, (nodes.List, nodes.Tuple)):
            return [n.value for n in node.items if isinstance(n, nodes.Const) and isinstance(n.value, str)]
        self.expr(node, scope)
        return []

    def for_loop(self, node, scope: Scope) -> None:
        from jinja2 import nodes

        it = self.expr(node.iter, scope)
        inner = Scope(scope)
        items: Optional[Shape] = None
        if isinstance(it, Pairs):
            value = it.of.element()
            if isinstance(node.target, nodes.Tuple) and len(node.target.items) == 2:
                self.assign(node.target.items[0], None, inner, node)
                self.assign(node.target.items[1], value, inner, node)
            else:
                self.assign(node.target, None, inner, node)
        elif isinstance(it, Shape):
            it.use(LIST, "iterated", self.where(node))
            items = it.element()
            if isinstance(node.target, nodes.Tuple):
                items.use(LIST, "unpacked", self.where(node))
                for i, t in enumerate(node.target.items):
                    self.assign(t, items.field(f"#{i}"), inner, node)
            else:
                self.assign(node.target, items, inner, node)
        else:
            self.assign(node.target, None, inner, node)
        inner.names["loop"] = Loop(it if isinstance(it, Shape) else None)
        if node.test is not None:
            self.cond(node.test, inner)
        self.block(node.body, inner)
        self.block(node.else_, scope)

    def assign(self, target, value: Any, scope: Scope, node) -> None:
        from jinja2 import nodes

        if isinstance(target, nodes.Name):
            scope.names[target.name] = value if value is not None else LOCAL
        elif isinstance(target, nodes.NSRef):
            found, ns = scope.lookup(target.name)
            if found and isinstance(ns, Shape):
                slot = ns.field(target.attr)
                if isinstance(value, Shape):
                    union(slot, value)
        elif isinstance(target, nodes.Tuple):
            for t in target.items:
                self.assign(t, None, scope, node)

    def macro(self, node, scope: Scope) -> None:
        self._macros_walked.add(node.name)
        inner = Scope(scope)
        params = dict(self.macros.get(node.name, []))
        for arg in node.args:
            inner.names[arg.name] = params.get(arg.name) or Shape()
        for arg, default in zip(node.args[len(node.args) - len(node.defaults):], node.defaults):
            self.typed_by_const(inner.names[arg.name], default, "default")
        for special in ("caller", "varargs", "kwargs"):
            inner.names.setdefault(special, LOCAL)
        self.block(node.body, inner)

    # ------------------------------------------------------------------ expressions

    def printed(self, node, scope: Scope) -> None:
        s = self.expr(node, scope)
        if isinstance(s, Shape):
            s.use(PRINTED, "printed", self.where(node))

    def cond(self, node, scope: Scope, avoid: bool = False) -> None:
        """A condition; ``avoid``: its branch raises an error, so values should make it false."""
        saved = self.avoid
        self.avoid = avoid
        try:
            s = self.expr(node, scope)
        finally:
            self.avoid = saved
        if isinstance(s, Shape):
            s.use(TESTED, "tested", self.where(node))

    def typed_by_const(self, shape: Shape, const, how: str) -> None:
        from jinja2 import nodes

        if not isinstance(const, nodes.Const):
            return
        v = const.value
        if isinstance(v, bool):
            shape.use(BOOL, f"{how} {v}", self.where(const))
        elif isinstance(v, (int, float)):
            shape.use(NUMBER, f"{how} {v}", self.where(const))
        elif isinstance(v, str):
            shape.use(TEXT, f"{how} text", self.where(const))

    def expr(self, node, scope: Scope) -> Any:
        """The shape ``node`` denotes (a Shape, Pairs, Loop, MacroRef) or None, recording evidence on the way."""
        avoid, self.avoid = self.avoid, False  # only a test's own comparisons guard the raising branch
        try:
            return self._expr(node, scope, avoid)
        finally:
            self.avoid = avoid

    def _expr(self, node, scope: Scope, avoid: bool) -> Any:
        from jinja2 import nodes

        if node is None or isinstance(node, nodes.Const):
            return None
        if isinstance(node, nodes.Name):
            found, bound = scope.lookup(node.name)
            if isinstance(bound, Either):
                if bound.resolved is None:
                    bound.resolved = Shape()
                    self.pending.append((bound.resolved, [self.name(node.name)] + bound.alternatives))
                return bound.resolved
            if found:
                return None if bound is LOCAL else bound
            return self.name(node.name)
        if isinstance(node, nodes.Getattr):
            return self.getattr(self.expr(node.node, scope), node.attr, node)
        if isinstance(node, nodes.Getitem):
            return self.getitem(node, scope)
        if isinstance(node, nodes.Call):
            return self.call(node, scope)
        if isinstance(node, nodes.Filter):
            return self.filter(node, scope)
        if isinstance(node, nodes.Test):
            self.test(node, scope, avoid)
            return None
        if isinstance(node, nodes.Compare):
            self.compare(node, scope, avoid)
            return None
        if isinstance(node, nodes.CondExpr):
            self.cond(node.test, scope)
            a, b = self.expr(node.expr1, scope), self.expr(node.expr2, scope)
            return a if isinstance(a, Shape) else b
        if isinstance(node, (nodes.And, nodes.Or)):
            self.avoid = avoid
            a = self.expr(node.left, scope)
            self.avoid = avoid
            b = self.expr(node.right, scope)
            if isinstance(a, Shape):
                a.use(TESTED, "tested", self.where(node))
            if isinstance(node, nodes.Or):
                return a if isinstance(a, Shape) else b
            return b
        if isinstance(node, nodes.Not):
            # under a raising branch, `not (...)` is a test the values should make true
            self.cond(node.node, scope, avoid=WANT if avoid is True else False)
            return None
        if isinstance(node, (nodes.Neg, nodes.Pos)):
            s = self.expr(node.node, scope)
            if isinstance(s, Shape):
                s.use(NUMBER, "arithmetic", self.where(node))
            return None
        if isinstance(node, nodes.Concat):
            for n in node.nodes:
                self.printed(n, scope)
            return None
        if isinstance(node, nodes.BinExpr):
            return self.arithmetic(node, scope)
        if isinstance(node, nodes.Slice):
            for part in (node.start, node.stop, node.step):
                s = self.expr(part, scope)
                if isinstance(s, Shape):
                    s.use(NUMBER, "slice bound", self.where(node))
            return None
        if isinstance(node, nodes.Dict):
            for pair in node.items:
                self.expr(pair.value, scope)
            return DictLit([p.key.value for p in node.items if isinstance(p.key, nodes.Const)])
        for child in node.iter_child_nodes():  # List, Tuple, Pair, Keyword, MarkSafe, ...
            self.expr(child, scope)
        return None

    def name(self, name: str) -> Any:
        if name in self.known or name in _SPECIAL:
            return None
        if name in self.macros:
            return MacroRef(name)
        shape = self.inputs.get(name)
        if shape is None:
            shape = self.inputs[name] = Shape()
        return shape

    def getattr(self, base: Any, attr: str, node) -> Any:
        if isinstance(base, Shape):
            if attr in DATETIME_ATTRS:
                base.use(DATETIME, f".{attr}", self.where(node))
            base.use(FIELD, f".{attr}", self.where(node))
            return base.field(attr)
        if isinstance(base, Loop) and attr in ("previtem", "nextitem") and base.items is not None:
            return base.items.element()
        if isinstance(base, ImportRef):
            return MacroRef(attr)
        return None

    def getitem(self, node, scope: Scope) -> Any:
        from jinja2 import nodes

        base = self.expr(node.node, scope)
        arg = node.arg
        if isinstance(base, DictLit):
            key = self.expr(arg, scope)
            if isinstance(key, Shape):
                for k in base.keys:
                    key.literal(k)
            return None
        if isinstance(arg, nodes.Slice):
            self.expr(arg, scope)
            return base if isinstance(base, Shape) else None
        if not isinstance(base, Shape):
            self.expr(arg, scope)
            return self.getattr(base, arg.value, node) if isinstance(arg, nodes.Const) and isinstance(arg.value, str) else None
        if isinstance(arg, nodes.Const) and isinstance(arg.value, str):
            base.use(FIELD, f"[{arg.value!r}]", self.where(node))
            return base.field(arg.value)
        if isinstance(arg, nodes.Const) and isinstance(arg.value, int):
            base.use(LIST, f"[{arg.value}]", self.where(node))
            return base.element()
        if isinstance(arg, nodes.Neg) and isinstance(arg.node, nodes.Const):
            base.use(LIST, f"[-{arg.node.value}]", self.where(node))
            return base.element()
        key = self.expr(arg, scope)
        if isinstance(key, Shape) and key.categories() & {NUMBER}:
            base.use(LIST, "[index]", self.where(node))
        elif isinstance(key, Shape) and base.element_if_any() is key.find():
            base.use(KEYED, "indexed by its own items", self.where(node))  # its items are its keys: a mapping
        return base.element()

    def call(self, node, scope: Scope) -> Any:
        from jinja2 import nodes

        target = node.node
        if isinstance(target, nodes.Getattr):
            obj = self.expr(target.node, scope)
            if isinstance(obj, Shape):
                return self.method(obj, target.attr, node, scope)
            callee = self.getattr(obj, target.attr, target)
        else:
            callee = self.expr(target, scope)
        args = [self.expr(a, scope) for a in node.args]
        kwargs = {k.key: self.expr(k.value, scope) for k in node.kwargs}
        self.expr(node.dyn_args, scope)
        self.expr(node.dyn_kwargs, scope)
        if isinstance(callee, MacroRef):
            params = self.macros.get(callee.name, [])
            by_name = dict(params)
            for (_, param), value in zip(params, args):
                if isinstance(value, Shape):
                    union(param, value)
            for key, value in kwargs.items():
                if key in by_name and isinstance(value, Shape):
                    union(by_name[key], value)
            return None
        if isinstance(callee, Loop) and callee.items is not None:  # `loop(children)` in a recursive for
            for value in args:
                if isinstance(value, Shape):
                    union(callee.items, value)
            return None
        if isinstance(target, nodes.Name):
            if target.name == "range":
                for value in args:
                    if isinstance(value, Shape):
                        value.use(NUMBER, "range()", self.where(node))
            elif target.name in ("namespace", "dict"):
                ns = Shape()  # not an input: its attributes stand for whatever is stored in them
                for key, value in kwargs.items():
                    if isinstance(value, Shape):
                        union(ns.field(key), value)
                    else:
                        ns.field(key)
                return ns
        return None

    def method(self, obj: Shape, method: str, node, scope: Scope) -> Any:
        from jinja2 import nodes

        where = self.where(node)
        args = [self.expr(a, scope) for a in node.args]
        for k in node.kwargs:
            self.expr(k.value, scope)
        if method in MAPPING_METHODS:
            obj.use(MAPPING, f".{method}()", where)
            if method == "items":
                return Pairs(obj)
            if method == "keys":
                keys = Shape()
                keys.element().use(TEXT, "key", where)
                return keys
            if method == "values":
                values = Shape()
                union(values.element(), obj.element())
                return values
            first = node.args[0] if node.args else None
            if isinstance(first, nodes.Const) and isinstance(first.value, str):
                return obj.field(first.value)
            return obj.element()
        if method in TEXT_METHODS:
            obj.use(TEXT, f".{method}()", where)
            if method in ("split", "rsplit", "splitlines"):
                parts = Shape()
                parts.element().use(TEXT, "part", where)
                return parts
            return None
        if method in DATETIME_METHODS:
            obj.use(DATETIME, f".{method}()", where)
            return None
        if method in LIST_METHODS:
            obj.use(LIST, f".{method}()", where)
            if method in ("append", "insert") and args and isinstance(args[-1], Shape):
                union(obj.element(), args[-1])
            if method == "pop":
                return obj.element()
            return None
        # a method of an application object (`tool.to_tool_calling_prompt()`): the object is a record
        # whose field of that name is called; sample data gives it as text that can be called
        obj.use(FIELD, f".{method}()", where)
        obj.field(method).use(METHOD, f".{method}()", where)
        return None

    def filter(self, node, scope: Scope) -> Any:
        from jinja2 import nodes

        base = self.expr(node.node, scope) if node.node is not None else None
        for a in node.args:
            self.expr(a, scope)
        kwargs = {k.key: k.value for k in node.kwargs}
        for v in kwargs.values():
            self.expr(v, scope)
        self.expr(node.dyn_args, scope)
        self.expr(node.dyn_kwargs, scope)
        name, where = node.name, self.where(node)
        const_args = [a.value if isinstance(a, nodes.Const) else None for a in node.args]
        attribute = kwargs.get("attribute")
        attribute = attribute.value if isinstance(attribute, nodes.Const) and isinstance(attribute.value, str) else None
        if name in PASS_FILTERS:
            return base
        if not isinstance(base, Shape):
            if isinstance(base, Pairs) and name in ("list", "sort"):
                return base
            return None
        if name in SAME_LIST_FILTERS or name in ITEM_FILTERS or name in ("join", "map", "batch", "slice", "groupby", "sum"):
            base.use(LIST, f"|{name}", where)
        if name in ("selectattr", "rejectattr") and const_args and isinstance(const_args[0], str):
            f = base.element().field(const_args[0])
            if len(const_args) >= 3 and const_args[1] in EQUALITY_TESTS:
                f.literal(const_args[2])
            elif len(const_args) >= 3 and const_args[1] in ORDER_TESTS:
                f.use(NUMBER, f"|{name}({const_args[1]})", where)
            elif len(const_args) == 1:
                f.use(TESTED, "tested", where)
            return base
        if name in ("sort", "unique") and attribute:
            base.element().field(attribute)
        if name in SAME_LIST_FILTERS:
            return base
        if name in ITEM_FILTERS:
            return base.element()
        if name == "join":
            item = base.element().field(attribute) if attribute else base.element()
            item.use(PRINTED, "printed", where)
            return None
        if name == "map":
            if attribute:
                out = Shape()
                union(out.element(), base.element().field(attribute))
                return out
            return None
        if name in ("batch", "slice"):
            out = Shape()
            union(out.element(), base)
            return out
        if name in ("groupby",) and const_args and isinstance(const_args[0], str):
            base.element().field(const_args[0])
            return None
        if name in ("sum", "min", "max"):
            (base.element().field(attribute) if attribute else base.element()).use(NUMBER, f"|{name}", where)
            return None
        if name in ("length", "count"):
            base.use(WEAK_LIST, f"|{name}", where)
            return Length(base)
        if name in ("dictsort", "items"):
            base.use(MAPPING, f"|{name}", where)
            return Pairs(base)
        if name == "attr" and const_args and isinstance(const_args[0], str):
            return self.getattr(base, const_args[0], node)
        if name in TEXT_FILTERS:
            base.use(TEXT, f"|{name}", where)
            return None
        if name in NUMBER_FILTERS:
            base.use(NUMBER, f"|{name}", where)
            return None
        if name in ("tojson", "pprint", "string", "int", "float", "bool"):
            base.use(PRINTED, f"|{name}", where)
        return None

    def test(self, node, scope: Scope, avoid: bool = False) -> None:
        from jinja2 import nodes

        base = self.expr(node.node, scope)
        for a in node.args:
            self.expr(a, scope)
        if not isinstance(base, Shape):
            return
        name, where = node.name, self.where(node)
        if name == "mapping":
            base.use(MAPPING, "is mapping", where)
        elif name == "string":
            base.use(TEXT, "is string", where)
        elif name in ("number", "integer", "float", "divisibleby", "even", "odd"):
            base.use(NUMBER, f"is {name}", where)
        elif name in ("sequence", "iterable"):
            base.use(WEAK_LIST, f"is {name}", where)
        elif name in ("boolean", "true", "false"):
            base.use(BOOL, f"is {name}", where)
        elif name in EQUALITY_TESTS and node.args and isinstance(node.args[0], nodes.Const):
            base.literal(node.args[0].value, avoid=avoid is True)
        elif name == "in" and node.args and isinstance(node.args[0], (nodes.List, nodes.Tuple)):
            for item in node.args[0].items:
                if isinstance(item, nodes.Const):
                    base.literal(item.value, avoid=avoid is True)
        else:
            base.use(TESTED, "tested", where)

    def compare(self, node, scope: Scope, avoid: bool = False) -> None:
        from jinja2 import nodes

        operands = [node.expr] + [op.expr for op in node.ops]
        shapes = [self.expr(n, scope) for n in operands]
        where = self.where(node)
        for i, op in enumerate(node.ops):
            left, right = operands[i], operands[i + 1]
            ls, rs = shapes[i], shapes[i + 1]
            if op.op in ("in", "notin"):
                if isinstance(ls, Shape) and isinstance(rs, DictLit):
                    for k in rs.keys:
                        ls.literal(k, op.op == "in", avoid is True)
                elif isinstance(ls, Shape) and isinstance(right, (nodes.List, nodes.Tuple)):
                    for item in right.items:
                        if isinstance(item, nodes.Const):
                            ls.literal(item.value, op.op == "in", avoid is True)
                if isinstance(rs, Shape):
                    rs.use(WEAK_LIST, "searched with `in`", where)  # a text, a list or a mapping all allow it
                continue
            for shape, other in ((ls, right), (rs, left)):
                if isinstance(shape, Length) and avoid and isinstance(other, nodes.Const) and type(other.value) is int:
                    op_name = op.op if shape is ls else _MIRROR.get(op.op, op.op)
                    if avoid is WANT:
                        op_name = _NEGATE.get(op_name, op_name)
                    shape.of.find().lengths.append((op_name, other.value))
                    continue
                if not isinstance(shape, Shape) or not isinstance(other, nodes.Const) or other.value is None:
                    continue
                v = other.value
                if op.op in ("eq", "ne"):
                    shape.literal(v, op.op == "eq", avoid is True)
                    if isinstance(v, bool):
                        shape.use(BOOL, "compared with a boolean", where)
                    elif isinstance(v, (int, float)):
                        shape.use(NUMBER, "compared with a number", where)
                    else:
                        shape.use(TEXT, "compared with text", where)
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    shape.use(NUMBER, "compared with a number", where)
            if op.op in ("lt", "gt", "lteq", "gteq"):
                for shape in (ls, rs):
                    if isinstance(shape, Shape) and not shape.categories() & {TEXT}:
                        shape.use(NUMBER, "ordered", where)

    def arithmetic(self, node, scope: Scope) -> Any:
        from jinja2 import nodes

        left, right = self.expr(node.left, scope), self.expr(node.right, scope)
        where = self.where(node)
        if isinstance(node, nodes.Add):
            for shape, other in ((left, node.right), (right, node.left)):
                if not isinstance(shape, Shape):
                    continue
                if isinstance(other, (nodes.List, nodes.Tuple)):
                    shape.use(LIST, "+ list", where)
                elif isinstance(other, nodes.Const) and isinstance(other.value, str):
                    shape.use(TEXT, "+ text", where)
                elif isinstance(other, nodes.Const) and isinstance(other.value, (int, float)):
                    shape.use(NUMBER, "arithmetic", where)
            # `a + b` of two inputs is not evidence they are the same value (text + text is common)
            return left if isinstance(left, Shape) and isinstance(node.right, (nodes.List, nodes.Tuple)) else None
        if isinstance(node, nodes.Mod) and isinstance(node.left, nodes.Const) and isinstance(node.left.value, str):
            if isinstance(right, Shape):
                right.use(PRINTED, "printed", where)  # "%s" % value
            return None
        for shape in (left, right):
            if isinstance(shape, Shape):
                shape.use(NUMBER, "arithmetic", where)
        return None


def walk(templates: Dict[str, Any], main: str, known=()) -> Tuple[Dict[str, Shape], set]:
    """Root shape per input of ``main`` (in first-use order), and the template names walked."""
    w = Walker(templates, main, known)
    return w.run(), w.walked


def leaves(shape: Shape, path: str = "", depth: int = 0, seen=None) -> Iterator[str]:
    """Paths of the fields a shape's value must have: ``.inputs.question``, ``[].role``."""
    seen = set() if seen is None else seen
    r = shape.find()
    if id(r) in seen or depth > 6:
        return
    seen = seen | {id(r)}
    if not r.fields and r._element is None:
        if path:
            yield path
        return
    for name, sub in r.fields.items():
        yield from leaves(sub, f"{path}.{name}" if not name.startswith("#") else f"{path}[{name[1:]}]", depth + 1, seen)
    if r._element is not None:
        yield from leaves(r._element, path + "[]", depth + 1, seen)
