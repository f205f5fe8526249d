"""Stand-ins for the filters, tests and globals an application registers in its own Jinja environment.

Jinja resolves a filter or test name when it compiles a template, so `{{ x | input_signature }}`
fails to compile unless the environment knows the name. promptlint never imports the
application's code: each parse scans the AST and registers, before anything compiles, a stub for
every filter, test or called global the environment does not have:

- zero-config: an unknown filter returns its input unchanged, an unknown test is false and an
  unknown global call returns a text sample (a called name whose words say time, such as
  `get_current_time()`, returns the time, varied as a volatile value);
- ``[tool.promptlint.jinja]`` declares a name's behaviour with one of ``KINDS``.

What was stubbed, and where first, is kept on the environment (``stubbed``) for the one note per
file the analyzer reports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

ROLES = ("filters", "tests", "globals")
# kind -> roles it applies to; what each does is in ``_make`` and docs/configuration.md
KINDS: Dict[str, Tuple[str, ...]] = {
    "identity": ("filters", "tests", "globals"),  # the input (a global: its first argument); a test: its truth
    "text": ("filters", "globals"),  # a text sample naming the stub
    "json": ("filters", "globals"),  # json.dumps of the input, keys in their order
    "json-sorted": ("filters", "globals"),  # the same, keys sorted
    "empty": ("filters", "globals"),  # ""
    "volatile-timestamp": ("filters", "globals"),  # the time: varied per request (M101)
    "volatile-id": ("filters", "globals"),  # a request id: varied per request (M101)
    "true": ("tests",),
    "false": ("tests",),
}
DEFAULTS = {"filters": "identity", "tests": "false", "globals": "text"}
_SINGULAR = {"filters": "filter", "tests": "test", "globals": "global"}
VOLATILE = {"volatile-timestamp": "timestamp", "volatile-id": "id"}
_DOES = {
    ("filters", "identity"): "returns its input unchanged",
    ("globals", "identity"): "returns its first argument",
    ("tests", "identity"): "is the value's truth",
    ("tests", "true"): "is true",
    ("tests", "false"): "is false",
    **{(r, "text"): "returns a text sample" for r in ("filters", "globals")},
    **{(r, "json"): "returns its input as JSON" for r in ("filters", "globals")},
    **{(r, "json-sorted"): "returns its input as JSON, keys sorted" for r in ("filters", "globals")},
    **{(r, "empty"): "returns nothing" for r in ("filters", "globals")},
    **{(r, "volatile-timestamp"): "returns the time, changed per request" for r in ("filters", "globals")},
    **{(r, "volatile-id"): "returns a request id, changed per request" for r in ("filters", "globals")},
}
_VOLATILE_VALUES = {"timestamp": "2025-03-14 09:26:53", "id": "req-7f3c9a2e41"}


@dataclass(frozen=True)
class Stubbed:
    """A filter, test or global the template uses that the environment stands in for."""

    role: str  # filters | tests | globals
    name: str
    kind: str
    declared: bool  # from the configuration (True) or assumed (False)
    template: Optional[str]  # where it is first used
    line: int

    @property
    def key(self) -> str:
        """The context name a volatile stub reads its value from (a scenario variable)."""
        return f"{self.name}()" if self.role == "globals" else f"| {self.name}"

    def label(self) -> str:
        return f"{self.name}()" if self.role == "globals" else self.name


def check_declared(declared: Mapping[str, Mapping[str, str]]) -> Optional[str]:
    """A problem with a ``[tool.promptlint.jinja]`` table (a kind that does not apply), else None."""
    for role, table in declared.items():
        for name, kind in table.items():
            if role not in KINDS.get(kind, ()):
                allowed = ", ".join(k for k, roles in KINDS.items() if role in roles)
                return f"`jinja.{role}.{name}` = {kind!r}: {_SINGULAR[role]} stubs are one of {allowed}"
    return None


def install(env, declared: Optional[Mapping[str, Mapping[str, str]]] = None, classify=None) -> None:
    """Make ``env`` stub unknown names on every parse; ``declared`` maps role -> name -> kind."""
    env.promptlint_stub_config = {role: dict((declared or {}).get(role, {})) for role in ROLES}
    env.promptlint_stub_classify = classify
    env.stubbed = {}  # (role, name) -> Stubbed, in first-use order
    for role, table in env.promptlint_stub_config.items():  # declared names exist from the start
        for name, kind in table.items():
            _register(env, role, name, kind)


def scan(env, ast, template: Optional[str]) -> None:
    """Register a stub for every unknown filter, test and called global in ``ast``."""
    if not hasattr(env, "stubbed"):
        return
    from jinja2 import nodes

    found_nodes = _nodes_by_type(ast)
    assigned = _assigned_names(found_nodes)
    found = []
    for node in _of(found_nodes, (nodes.Filter, nodes.Test, nodes.Call)):
        if isinstance(node, nodes.Filter) and node.name:
            found.append(("filters", node.name, node.lineno))
            found += _named_by_argument(node)
        elif isinstance(node, nodes.Test):
            found.append(("tests", node.name, node.lineno))
        elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) and node.node.ctx == "load":
            if node.node.name not in assigned:
                found.append(("globals", node.node.name, node.lineno))
    env.stub_attrs = getattr(env, "stub_attrs", set()) | {n.attr for n in _of(found_nodes, (nodes.Getattr,))}
    for owner, method, line in _namespace_calls(env, found_nodes, assigned, env.promptlint_stub_classify):
        found.append(("globals", f"{owner}.{method}", line))
    for role, name, line in found:
        if (role, name) in env.stubbed:
            continue
        declared = env.promptlint_stub_config[role].get(name)
        if declared is None and _known(env, role, name):
            continue
        kind = declared or _assumed_kind(env, role, name)
        env.stubbed[(role, name)] = Stubbed(role, name, kind, declared is not None, template, line or 1)
        if declared is None or "." in name:
            _register(env, role, name, kind)


def volatile_stubs(env):
    """The stubs whose value changes per request: (Stubbed, sub-kind, value)."""
    for s in getattr(env, "stubbed", {}).values():
        if s.kind in VOLATILE:
            sub = VOLATILE[s.kind]
            yield s, sub, _VOLATILE_VALUES[sub]


def note(env) -> Optional[Tuple[Optional[str], int, str]]:
    """(template, line, message) of the one note naming every assumed stub, or None."""
    assumed = [s for s in getattr(env, "stubbed", {}).values() if not s.declared]
    if not assumed:
        return None
    parts = []
    for role in ROLES:
        these = [s for s in assumed if s.role == role]
        if these:
            noun = _SINGULAR[role] + ("s" if len(these) > 1 else "")
            parts.append(noun + " " + ", ".join(f"`{s.label()}` ({_DOES[(role, s.kind)]})" for s in these))
    first = assumed[0]
    message = (
        "the application's own Jinja names are rendered by stand-ins (promptlint never imports your code): "
        + "; ".join(parts) + "; declare what each does in [tool.promptlint.jinja] (`filters = { name = \"json\" }`, see "
        "docs/configuration.md)"
    )
    return first.template, first.line, message


# ------------------------------------------------------------------------------ internals


def _known(env, role: str, name: str) -> bool:
    if "." in name:  # `datetime.now`: a method of a namespace stand-in
        owner, method = name.split(".", 1)
        return isinstance(env.globals.get(owner), _Namespace) and hasattr(env.globals[owner], method)
    if role == "filters":
        return name in env.filters
    if role == "tests":
        return name in env.tests
    return name in env.globals


# Leading verbs of a function's name (`new_request_id()`, `get_current_time()`): the rest names what it returns.
_CALL_VERBS = {"get", "new", "make", "create", "generate", "gen", "fetch", "compute", "build", "current", "next", "random"}


def _returned_name(name: str) -> str:
    """What a called global's name says it returns: `helpers.new_request_id` -> `request_id`."""
    from promptlint.scenarios.names import name_words

    words = name_words(name.rsplit(".", 1)[-1])
    while len(words) > 1 and words[0] in _CALL_VERBS:
        words = words[1:]
    return "_".join(words)


def _assumed_kind(env, role: str, name: str) -> str:
    classify = env.promptlint_stub_classify
    if role == "globals" and classify is not None:
        c = classify(name)
        if c.kind != "volatile":
            c = classify(_returned_name(name))
        if c.kind == "volatile" and c.sub_kind in ("timestamp", "date", "time"):
            return "volatile-timestamp"
        if c.kind == "volatile" and c.sub_kind == "id":
            return "volatile-id"
    return DEFAULTS[role]


def _nodes_by_type(ast) -> list:
    """The nodes scan reads, in ``find_all``'s order, gathered in one walk of the tree (not one per kind)."""
    from jinja2 import nodes

    return list(ast.find_all((nodes.Filter, nodes.Test, nodes.Call, nodes.Getattr, nodes.Macro, nodes.Name, nodes.FromImport, nodes.Import)))


def _of(found: list, types: tuple) -> list:
    """``ast.find_all(types)`` from the nodes ``_nodes_by_type`` gathered (the same nodes, in the same order)."""
    return [n for n in found if isinstance(n, types)]


def _assigned_names(found: list) -> set:
    """Names the template itself binds (macros, imports, set/for targets): a call of one is not a global."""
    from jinja2 import nodes

    out = set()
    for n in _of(found, (nodes.Macro, nodes.Name, nodes.FromImport, nodes.Import)):
        if isinstance(n, nodes.Macro):
            out.add(n.name)
        elif isinstance(n, nodes.Name) and n.ctx in ("store", "param"):
            out.add(n.name)
        elif isinstance(n, nodes.Import):
            out.add(n.target)
        elif isinstance(n, nodes.FromImport):
            out.update(x[1] if isinstance(x, tuple) else x for x in n.names)
    return out


_TEST_ARG = {"select": 0, "reject": 0, "selectattr": 1, "rejectattr": 1}


def _named_by_argument(node):
    """Filters and tests named by a string argument: `map("f")`, `select("t")`, `selectattr("a", "t")`."""
    from jinja2 import nodes

    args = node.args
    if node.name == "map" and args and isinstance(args[0], nodes.Const) and isinstance(args[0].value, str):
        return [("filters", args[0].value, node.lineno)]
    i = _TEST_ARG.get(node.name)
    if i is not None and len(args) > i and isinstance(args[i], nodes.Const) and isinstance(args[i].value, str):
        return [("tests", args[i].value, node.lineno)]
    return []


_VALUE_METHODS: list = []  # methods of the values a sample can hold (built once)


def _value_methods() -> set:
    if not _VALUE_METHODS:
        from promptlint.scenarios.shapes import DATETIME_METHODS

        _VALUE_METHODS.append(frozenset(set(dir(str)) | set(dir(dict)) | set(dir(list)) | DATETIME_METHODS))
    return _VALUE_METHODS[0]


def _namespace_calls(env, found: list, assigned: set, classify=None):
    """(owner, method, line) for each `owner.method(...)` whose owner the application passes in as a
    module or helper object (`datetime.now()`, `uuid.uuid4()`, `helpers.format_price(p)`): a name used
    only to call methods no sample value has (not text, mapping, list or date-time methods), or a
    clock module read for the time (`time.time()`, `date.today()`: see ``_clock_namespace``)."""
    from jinja2 import nodes

    value_methods = _value_methods()
    receivers, calls = set(), []
    for call in _of(found, (nodes.Call,)):
        target = call.node
        if isinstance(target, nodes.Getattr) and isinstance(target.node, nodes.Name) and target.node.ctx == "load":
            receivers.add(id(target.node))
            calls.append((target.node.name, target.attr, call.lineno))
    other_uses = {n.name for n in _of(found, (nodes.Name,)) if n.ctx == "load" and id(n) not in receivers}
    owners = {}
    for owner, method, line in calls:
        owners.setdefault(owner, []).append((method, line))
    for owner, methods in owners.items():
        if owner in assigned or owner in other_uses or owner.startswith("_"):
            continue
        if owner in env.globals and not isinstance(env.globals[owner], _Namespace):
            continue
        if any(m.startswith("_") for m, _ in methods):
            continue
        if any(m in value_methods for m, _ in methods) and not _clock_namespace(owner, methods, classify):
            continue  # an input of a known shape (`question.strip()`, `doc.get("title")`)
        for method, line in methods:
            yield owner, method, line


def _clock_namespace(owner: str, methods, classify) -> bool:
    """Is ``owner`` a clock module or class read for the time (`time.time()`, `datetime.date()`), not a
    date-time value whose parts are read (`meeting.time()`, `now.strftime(..)`)? Its name is one word
    that says time or date and it is called for a reading whose name says so too."""
    if classify is None:
        return False

    def clock(name: str) -> bool:
        c = classify(name)
        return c.kind == "volatile" and c.sub_kind in ("timestamp", "date", "time")

    from promptlint.scenarios.names import name_words

    return len(name_words(owner)) == 1 and clock(owner) and any(clock(m) for m, _ in methods)


class _Namespace:
    """A module or helper object the application puts in the template's globals; each method the
    template calls on it is a stand-in (set as an attribute by ``_register``)."""

    def __init__(self, name: str):
        self._name = name

    def __str__(self) -> str:
        return f"sample {self._name} text"


def _register(env, role: str, name: str, kind: str) -> None:
    table = {"filters": env.filters, "tests": env.tests, "globals": env.globals}[role]
    if "." in name:
        owner, method = name.split(".", 1)
        namespace = table.get(owner)
        if not isinstance(namespace, _Namespace):
            namespace = table[owner] = _Namespace(owner)
        setattr(namespace, method, _make(role, name, kind, getattr(env, "stub_attrs", set())))
        return
    table[name] = _make(role, name, kind, getattr(env, "stub_attrs", set()))


def _make(role: str, name: str, kind: str, attrs=frozenset()):
    from jinja2 import pass_context

    if role == "tests":
        if kind == "identity":
            return lambda value, *a, **k: bool(value)
        return (lambda *a, **k: True) if kind == "true" else (lambda *a, **k: False)
    sample = f"sample {name} text"
    if kind in VOLATILE:
        key = f"{name}()" if role == "globals" else f"| {name}"
        fallback = _VOLATILE_VALUES[VOLATILE[kind]]

        @pass_context
        def volatile(context, *args, **kwargs):
            return _volatile_result(context.get(key, fallback), VOLATILE[kind])

        return volatile
    if kind == "empty":
        return lambda *a, **k: ""
    if kind == "text":
        return lambda *a, **k: _SampleText(sample, name, attrs)
    if kind in ("json", "json-sorted"):
        sort = kind == "json-sorted"

        def dump(*args, **kwargs):
            value = args[0] if args else kwargs
            return json.dumps(value, ensure_ascii=False, sort_keys=sort, default=str)

        return dump
    # identity
    if role == "globals":
        return lambda *a, **k: a[0] if a else _SampleText(sample, name, attrs)
    return lambda value, *a, **k: value


# ------------------------------------------------------------------------- what stand-ins return
# The application's real function returns an object the template goes on using (`now().strftime(...)`,
# `uuid4().hex`, `get_user().name`): a stand-in's result is text that also answers those uses.

_NOT_ATTRIBUTES = {"jinja_pass_arg", "unsafe_callable", "alters_data", "jinja_async_variant"}  # Jinja probes these


def _volatile_result(value: Any, sub: str) -> str:
    """A volatile stand-in's value as text; a time also answers datetime's methods and fields."""
    from datetime import date, datetime

    if isinstance(value, (datetime, date)):
        moment = value if isinstance(value, datetime) else datetime(value.year, value.month, value.day)
        return _ClockText(value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat(), moment)
    text = str(value)
    if sub == "timestamp":
        try:
            return _ClockText(text, datetime.fromisoformat(text.strip().replace("Z", "+00:00")))
        except ValueError:
            return text
    return _IdText(text)


class _ClockText(str):
    """A time as the text `{{ now() }}` prints, answering `.strftime()`, `.isoformat()`, `.year`, ..."""

    def __new__(cls, text: str, moment=None):
        if moment is None:  # `type(s)(result)` (the sandbox's `.format`): the result is plain text
            return str(text)
        obj = super().__new__(cls, text)
        obj._moment = moment
        return obj

    def __getattr__(self, name: str):
        if name.startswith("_") or name in _NOT_ATTRIBUTES:
            raise AttributeError(name)
        return getattr(self._moment, name)

    def strftime(self, fmt):
        from promptlint.render.sandbox import check_strftime_format

        return self._moment.strftime(check_strftime_format(fmt))

    # Used as a number (`time.time() | int`, `now() - 60`, `ts // 3600`), a time is its Unix epoch,
    # as the clock functions that return numbers give it: text arithmetic would hide the change.
    def _epoch(self) -> float:
        import calendar

        m = self._moment
        return calendar.timegm(m.utctimetuple()) + m.microsecond / 1e6

    def __float__(self) -> float:
        return self._epoch()

    def __int__(self) -> int:
        return int(self._epoch())

    def __round__(self, ndigits=None):
        return round(self._epoch(), ndigits)

    def _number(op, text=None):  # noqa: N805 - builds the methods below
        def method(self, other):
            if isinstance(other, (int, float)) and not isinstance(other, bool):
                return op(self._epoch(), other)
            return text(self, other) if text is not None else NotImplemented

        return method

    __add__ = _number(lambda a, b: a + b, str.__add__)
    __radd__ = _number(lambda a, b: b + a)
    __sub__ = _number(lambda a, b: a - b)
    __rsub__ = _number(lambda a, b: b - a)
    __mul__ = _number(lambda a, b: a * b, str.__mul__)
    __rmul__ = _number(lambda a, b: b * a, str.__rmul__)
    __truediv__ = _number(lambda a, b: a / b)
    __floordiv__ = _number(lambda a, b: a // b)
    __mod__ = _number(lambda a, b: a % b, str.__mod__)
    del _number

    def replace(self, *args, **kwargs):  # datetime's `replace(microsecond=0)`, else str's
        if kwargs or (args and not isinstance(args[0], str)):
            return _ClockText(str(self._moment.replace(*args, **kwargs)), self._moment.replace(*args, **kwargs))
        return str.replace(self, *args, **kwargs)


class _IdText(str):
    """An id as text, answering uuid's `.hex`."""

    @property
    def hex(self) -> str:
        return self.replace("-", "")


class _SampleText(str):
    """A text sample of an unknown function's result; a field the templates read on it is another
    sample (`get_user().name`), and calling it gives itself."""

    def __new__(cls, text: str, name: str, attrs):
        obj = super().__new__(cls, text)
        obj._name, obj._attrs = name, attrs
        return obj

    def __getattr__(self, attr: str):
        if attr.startswith("_") or attr in _NOT_ATTRIBUTES or attr not in self._attrs:
            raise AttributeError(attr)
        return _SampleText(f"sample {self._name}.{attr} text", f"{self._name}.{attr}", self._attrs)

    def __call__(self, *args, **kwargs):
        return self
