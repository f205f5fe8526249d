"""The hardened sandbox every promptlint render runs in (templates are untrusted input).

On top of Jinja's ``ImmutableSandboxedEnvironment`` (no ``_private``/dunder attributes,
no mutation of lists/dicts/sets, ``str.format`` routed through the sandbox):

- an unsafe attribute *raises* ``SecurityError`` at the access instead of returning an
  undefined value (Jinja's default lets ``{% if ''.__class__ %}`` or a transformers-style
  lenient undefined pass silently);
- value-size guards on the operations that can blow a small template up into gigabytes
  inside a single C call that no time limit can interrupt: ``*``, ``**``, ``+``, ``%``,
  ``~``, and the padding/replacing/joining string methods and filters. A guard raises
  ``ValueTooLarge`` (reported as E006) *before* the allocation;
- a cooperative deadline check on every sandboxed call, as a last resort where neither
  the alarm signal nor the watchdog (see ``promptlint.render.limits``) can run.
"""

from __future__ import annotations

import re
import types
from functools import update_wrapper
from typing import Any, Callable, Dict, Optional

from jinja2 import Undefined, pass_environment
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError, SandboxedFormatter

from promptlint.base import lazy_re
from promptlint.render import caps

# Integers may not grow beyond this many bits in one operation (a 10**300000-sized
# power takes seconds of uninterruptible C time; chat templates never need one).
MAX_INT_BITS = 100_000
# Format widths/precisions (``%999999999d``, ``{:>999999999}``, ``center(10**9)``)
# beyond the value-size limit are refused.
_PRINTF_SPEC = lazy_re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[a-zA-Z%]")
_NUMBER = re.compile(r"\d+")


# E006 messages name the cap that refused (render/caps.py, or a Limits' own)
def _tokens_message(cap: int) -> str:
    return f"the template and the files it pulls in have more than {cap:,} Jinja tokens together; split it"


def _compile_message(cap: int) -> str:
    return f"the template and the files it pulls in compile to more than {cap:,} characters of Python together; split it"


class TemplateTooLarge(Exception):
    """A template (with what it pulls in) too large to parse or compile within the limits (E006)."""

    def __init__(self, message: str, name: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.name = name


class ValueTooLarge(Exception):
    """A template operation would build a value over the size limit (E006)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class DeadlineExceeded(BaseException):
    """The render ran out of time (E006): its CPU time, or the wall backstop.

    A ``BaseException`` so that no ``except Exception`` inside Jinja, a filter or the
    template's own data objects can swallow it.
    """


def _is_dunder(name: Any) -> bool:
    return isinstance(name, str) and name.startswith("__") and name.endswith("__") and len(name) > 4


def _size(value: Any) -> int:
    try:
        return len(value)
    except Exception:
        return 0


class GuardedCodeGenerator(CodeGenerator):
    """Jinja's code generator, with ``~`` (string concatenation) size-checked, that stops as soon
    as the template (with what was compiled before it) outgrows the generated-code budget:
    generating the code costs about as much as compiling it."""

    _written = 0

    def write(self, x: str) -> None:
        self._written += len(x)
        env = self.environment
        if self._written + getattr(env, "compiled_chars", 0) > env.max_compiled_chars:
            raise TemplateTooLarge(_compile_message(env.max_compiled_chars), self.name)
        super().write(x)

    def visit_Concat(self, node, frame) -> None:
        self.write("environment.checked_concat(")
        super().visit_Concat(node, frame)
        self.write(")")


# Introspection names that have no business in a prompt template: reaching for them is a probe
# whatever the object (transformers 5.x's restricted `dict` global has no `mro`; a mapping may even
# hold the key). Jinja's own unsafe generator/coroutine attributes are among them.
_PROBE_NAMES = frozenset(
    {
        "mro", "gi_frame", "gi_code", "gi_yieldframe", "cr_frame", "cr_code", "ag_frame", "ag_code",
        "f_globals", "f_back", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next",
        "func_globals", "func_code", "func_closure", "im_func", "im_self",
    }
)


def is_probe(name: Any) -> bool:
    """A name no template may reach for on any object: dunder-prefixed or introspection."""
    return isinstance(name, str) and (name.startswith("__") or name in _PROBE_NAMES)


def _is_private(name: Any) -> bool:
    return isinstance(name, str) and name.startswith("_")


class HardenedSandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+", "%"})
    code_generator_class = GuardedCodeGenerator

    #: the largest string/list a template may build; render() sets it from the output limit
    max_value_size: int = 1_000_000
    #: the current render's limit (render.limits.Deadline), or None
    deadline: Optional[Any] = None
    #: the parse and compile caps (render/caps.py's when made; load_template sets its Limits')
    max_template_tokens: int
    max_compiled_chars: int

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_template_tokens, self.max_compiled_chars = caps.MAX_TEMPLATE_TOKENS, caps.MAX_COMPILED_CHARS
        self.filters["attr"] = _attr_filter
        self.tokens_used = 0
        self.compiled_chars = 0
        self._counted_sources: Dict[str, int] = {}  # text -> its tokens: a text parsed again is not counted twice
        self._oversized_sources: set = set()
        self._guard_filters()
        if "lipsum" in self.globals:
            self.globals["lipsum"] = _guard_lipsum(self.globals["lipsum"], self)

    # ------------------------------------------------------------ parse and compile budgets

    def _tokenize(self, source, name, filename=None, state=None):
        from jinja2.lexer import TokenStream

        if source in self._oversized_sources:  # did not fit before; the budget only shrinks
            raise TemplateTooLarge(_tokens_message(self.max_template_tokens), name)
        stream = super()._tokenize(source, name, filename, state)
        if source in self._counted_sources:
            return stream
        return TokenStream(self._counting(stream, source, name), name, filename)

    def _counting(self, stream, source, name):
        n, left = 0, self.max_template_tokens - self.tokens_used
        for token in stream:
            n += 1
            if n > left:
                self._oversized_sources.add(source)
                raise TemplateTooLarge(_tokens_message(self.max_template_tokens), name)
            yield token
        self.tokens_used += n
        self._counted_sources[source] = n

    def tokens_of(self, source: str) -> Optional[int]:
        """How many Jinja tokens this environment counted for ``source`` (None: not lexed to the end)."""
        return self._counted_sources.get(source)

    def charge_tokens(self, source: str, name: Optional[str], n: int) -> None:
        """Count the ``n`` tokens of ``source`` as lexing it here would have (its tree was parsed by an
        environment with the same parser settings): the same budget, the same refusal."""
        if source in self._oversized_sources:
            raise TemplateTooLarge(_tokens_message(self.max_template_tokens), name)
        if source in self._counted_sources:
            return
        if n > self.max_template_tokens - self.tokens_used:
            self._oversized_sources.add(source)
            raise TemplateTooLarge(_tokens_message(self.max_template_tokens), name)
        self.tokens_used += n
        self._counted_sources[source] = n

    def _compile(self, source: str, filename: str):
        self.compiled_chars += len(source)
        if self.compiled_chars > self.max_compiled_chars:
            raise TemplateTooLarge(_compile_message(self.max_compiled_chars))
        return super()._compile(source, filename)

    # ------------------------------------------------------------ attributes

    def unsafe_undefined(self, obj: Any, attribute: Any):
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe")

    def getattr(self, obj: Any, attribute: str) -> Any:
        if is_probe(attribute):  # refused before looking: a mapping holding the key is no excuse
            self.unsafe_undefined(obj, attribute)
        value = super().getattr(obj, attribute)
        if isinstance(value, Undefined) and _is_private(attribute):
            self.unsafe_undefined(obj, attribute)  # `_x` that is neither a safe attribute nor an item
        return value

    def getitem(self, obj: Any, argument: Any) -> Any:
        if is_probe(argument):
            self.unsafe_undefined(obj, argument)
        value = super().getitem(obj, argument)
        if isinstance(value, Undefined) and _is_private(argument):
            self.unsafe_undefined(obj, argument)
        return value

    def checked_attr(self, obj: Any, name: Any) -> Any:
        """The ``attr`` filter: Jinja's returns a silent undefined for a name the object lacks."""
        from jinja2.filters import do_attr

        if is_probe(name):
            self.unsafe_undefined(obj, name)
        value = do_attr(self, obj, name)
        if isinstance(value, Undefined) and _is_private(name):
            self.unsafe_undefined(obj, name)
        return value

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(value, (type, types.ModuleType, types.FrameType, types.CodeType, types.TracebackType)):
            return False  # a class or module reached through a public name
        return super().is_safe_attribute(obj, attr, value)

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 - Jinja's signature
        deadline = __self.deadline
        if deadline is not None and deadline.passed():
            raise DeadlineExceeded()
        if args and _is_strftime(__obj):  # a date or time the samples (or inference) passed in
            args = (check_strftime_format(args[0]),) + args[1:]
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Optional[Callable[..., str]]:
        """Sandbox ``str.format``/``format_map`` (sizes too) and size-check string methods."""
        if isinstance(value, types.MethodDescriptorType) and value.__objclass__ is str and value.__name__ in (
            "format",
            "format_map",
        ):
            raise SecurityError("the unbound str.format method is not available in templates")
        if not isinstance(value, (types.MethodType, types.BuiltinMethodType)):
            return None
        owner = getattr(value, "__self__", None)
        if not isinstance(owner, str):
            return None
        name = value.__name__
        if name in ("format", "format_map"):
            return self._sized_format(value, owner, name == "format_map")
        check = _STR_METHOD_CHECKS.get(name)
        if check is None:
            return None
        env = self

        def guarded(*args, **kwargs):
            if name == "join" and args and not isinstance(args[0], (list, tuple)):
                args = (list(args[0]),) + args[1:]  # estimate without consuming an iterator
            estimate = check(owner, args, kwargs)
            if estimate > env.max_value_size:
                raise ValueTooLarge(
                    f"str.{name}() would build a string of about {estimate:,} characters "
                    f"(limit {env.max_value_size:,})"
                )
            return value(*args, **kwargs)

        return update_wrapper(guarded, value)

    def _sized_format(self, method, fmt: str, is_format_map: bool):
        formatter = _SizedFormatter(self)
        if type(fmt) is not str:  # Markup: keep Jinja's escaping formatter
            base = super().wrap_str_format(method)
            return base

        def wrapper(*args, **kwargs):
            if is_format_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                kwargs, args = args[0], ()
            formatter.total = len(fmt)
            return formatter.vformat(fmt, args, kwargs)

        return update_wrapper(wrapper, method)

    # ------------------------------------------------------------ operators

    def call_binop(self, context, operator: str, left: Any, right: Any) -> Any:
        limit = self.max_value_size
        if operator == "**":
            if isinstance(left, int) and isinstance(right, int) and right > 0:
                bits = max(left.bit_length(), 1) * right
                if abs(left) > 1 and bits > MAX_INT_BITS:
                    raise ValueTooLarge(f"`**` would build an integer of about {bits:,} bits")
        elif operator == "*":
            if isinstance(left, int) and isinstance(right, int):
                bits = left.bit_length() + right.bit_length()
                if bits > MAX_INT_BITS:
                    raise ValueTooLarge(f"`*` would build an integer of about {bits:,} bits")
            else:
                seq, n = (left, right) if isinstance(right, int) else (right, left)
                if isinstance(n, int) and not isinstance(seq, (int, float)):
                    estimate = _size(seq) * max(n, 0)
                    if estimate > limit:
                        raise ValueTooLarge(f"`*` would build a value of {estimate:,} items (limit {limit:,})")
        elif operator == "+":
            if not isinstance(left, (int, float)) and not isinstance(right, (int, float)):
                estimate = _size(left) + _size(right)
                if estimate > limit:
                    raise ValueTooLarge(f"`+` would build a value of {estimate:,} items (limit {limit:,})")
        elif operator == "%" and isinstance(left, str):
            estimate = _printf_estimate(left, right)
            if estimate > limit:
                raise ValueTooLarge(f"`%` formatting would build about {estimate:,} characters (limit {limit:,})")
        return super().call_binop(context, operator, left, right)

    def checked_concat(self, value: Any) -> Any:
        if _size(value) > self.max_value_size:
            raise ValueTooLarge(f"`~` built a string of {len(value):,} characters (limit {self.max_value_size:,})")
        return value

    # ------------------------------------------------------------ filters

    def _guard_filters(self) -> None:
        for name, check in _FILTER_CHECKS.items():
            original = self.filters.get(name)
            if original is not None and not getattr(original, "_promptlint_guarded", False):
                self.filters[name] = _guard_filter(self, name, original, check)

    def guard_new_filters(self) -> None:
        """Guard filters installed after construction (e.g. transformers' ``tojson``)."""
        self._guard_filters()


@pass_environment
def _attr_filter(environment, obj, name):
    return environment.checked_attr(obj, name)


def _guard_filter(env: HardenedSandbox, name: str, original, check):
    skip = 1 if getattr(original, "jinja_pass_arg", None) is not None else 0  # eval_ctx/environment first

    def guarded(*args, **kwargs):
        if name == "join" and len(args) > skip and not isinstance(args[skip], (list, tuple, str)):
            args = args[:skip] + (list(args[skip]),) + args[skip + 1 :]
        estimate = check(args[skip:], kwargs)
        if estimate > env.max_value_size:
            raise ValueTooLarge(
                f"the `{name}` filter would build about {estimate:,} characters (limit {env.max_value_size:,})"
            )
        return original(*args, **kwargs)

    guarded = update_wrapper(guarded, original)
    guarded._promptlint_guarded = True
    return guarded


def _guard_lipsum(original, env: HardenedSandbox):
    def lipsum(n=5, html=True, min=20, max=100):
        if not isinstance(n, int) or not isinstance(max, int) or n * max * 12 > env.max_value_size:
            raise ValueTooLarge(f"lipsum({n!r}, max={max!r}) would build more than {env.max_value_size:,} characters")
        return original(n, html, min, max)

    return lipsum


class _SizedFormatter(SandboxedFormatter):
    """Jinja's sandboxed ``str.format`` that also refuses oversized results, field by field."""

    total = 0

    def format_field(self, value: Any, format_spec: str) -> Any:
        for number in _NUMBER.findall(format_spec or ""):
            if len(number) > 9 or int(number) > self._env.max_value_size:
                raise ValueTooLarge(f"format width {number} is larger than the value-size limit")
        out = super().format_field(value, format_spec)
        self.total += len(out)
        if self.total > self._env.max_value_size:
            raise ValueTooLarge(f"str.format() would build more than {self._env.max_value_size:,} characters")
        return out


def check_strftime_format(fmt: Any) -> str:
    """A ``strftime`` format, refusing padding widths (``%0999999999Y``) that inflate it: the C
    library pads inside one call, before any size check could see the result."""
    fmt = str(fmt)
    if len(fmt) > 1000 or re.search(r"%[-_0^#]*\d{4,}", fmt):
        raise ValueTooLarge("strftime() format is too long or pads a field to thousands of characters")
    return fmt


def _is_strftime(obj: Any) -> bool:
    """``obj`` is the bound ``strftime`` of a date, time or datetime value."""
    import datetime

    return getattr(obj, "__name__", None) == "strftime" and isinstance(
        getattr(obj, "__self__", None), (datetime.date, datetime.time)
    )


# ---------------------------------------------------------------- size estimates


def _int_arg(args, kwargs, index: int, name: str, default: int = 0) -> int:
    v = args[index] if len(args) > index else kwargs.get(name, default)
    return v if isinstance(v, int) else default


def _str_arg(args, kwargs, index: int, name: str, default: str = "") -> str:
    v = args[index] if len(args) > index else kwargs.get(name, default)
    return v if isinstance(v, str) else str(v)


def _replace_estimate(s: str, old: str, new: str, count: int = -1) -> int:
    if len(new) <= len(old):
        return len(s)
    n = s.count(old) if old else len(s) + 1
    if count is not None and count >= 0:
        n = min(n, count)
    return len(s) + n * (len(new) - len(old))


def _join_estimate(sep: str, items) -> int:
    items = list(items) if not isinstance(items, (list, tuple)) else items
    return sum(_size(x) if isinstance(x, str) else len(str(x)) for x in items) + max(len(items) - 1, 0) * len(sep)


def _printf_estimate(fmt: str, values: Any) -> int:
    specs = _PRINTF_SPEC.findall(fmt)
    if isinstance(values, tuple):
        args = list(values)
    elif isinstance(values, dict):
        args = list(values.values())
    else:
        args = [values]
    widest_arg = max((len(x) if isinstance(x, str) else len(str(x)) if not isinstance(x, (list, dict, tuple)) else _size(x) * 8 for x in args), default=0)
    estimate = len(fmt) + len(specs) * widest_arg
    for width, precision in specs:
        for n in (width, precision):
            if n == "*":
                estimate += max((a for a in args if isinstance(a, int)), default=0)
            elif n:
                estimate += int(n) if len(n) <= 12 else 10**12
    return estimate


_STR_METHOD_CHECKS: Dict[str, Callable[[str, tuple, dict], int]] = {
    "center": lambda s, a, k: max(len(s), _int_arg(a, k, 0, "width")),
    "ljust": lambda s, a, k: max(len(s), _int_arg(a, k, 0, "width")),
    "rjust": lambda s, a, k: max(len(s), _int_arg(a, k, 0, "width")),
    "zfill": lambda s, a, k: max(len(s), _int_arg(a, k, 0, "width")),
    "expandtabs": lambda s, a, k: len(s) + s.count("\t") * _int_arg(a, k, 0, "tabsize", 8),
    "replace": lambda s, a, k: _replace_estimate(
        s, _str_arg(a, k, 0, "old"), _str_arg(a, k, 1, "new"), _int_arg(a, k, 2, "count", -1)
    ),
    "join": lambda s, a, k: _join_estimate(s, a[0] if a else k.get("iterable", ())),
    "translate": lambda s, a, k: len(s) * max([_size(v) for v in (a[0] if a and isinstance(a[0], dict) else {}).values()] + [1]),
}


def _filter_value(a):
    return a[0] if a else ""


def _indent_estimate(a, k) -> int:
    s = str(_filter_value(a))
    width = a[1] if len(a) > 1 else k.get("width", 4)
    w = len(width) if isinstance(width, str) else (width if isinstance(width, int) else 4)
    return len(s) + (s.count("\n") + 1) * max(w, 0)


def _tojson_estimate(a, k) -> int:
    indent = a[1] if len(a) > 1 else k.get("indent")
    w = len(indent) if isinstance(indent, str) else (indent if isinstance(indent, int) else 0)
    return 0 if w <= 1000 else w * 1000


_FILTER_CHECKS = {
    "center": lambda a, k: max(len(str(_filter_value(a))), _int_arg(a, k, 1, "width", 80)),
    "indent": _indent_estimate,
    "format": lambda a, k: _printf_estimate(str(_filter_value(a)), tuple(a[1:]) if len(a) > 1 else dict(k)),
    "replace": lambda a, k: _replace_estimate(
        str(_filter_value(a)), _str_arg(a, k, 1, "old"), _str_arg(a, k, 2, "new"), _int_arg(a, k, 3, "count", -1)
    ),
    "join": lambda a, k: _join_estimate(_str_arg(a, k, 1, "d"), a[0] if a and isinstance(a[0], (list, tuple)) else ()),
    "batch": lambda a, k: _int_arg(a, k, 1, "linecount", 1),
    "slice": lambda a, k: _int_arg(a, k, 1, "slices", 1),
    "wordwrap": lambda a, k: len(str(_filter_value(a))) * (1 + len(_str_arg(a, k, 3, "wrapstring"))),
    "tojson": _tojson_estimate,
}
