"""The two Jinja environments promptlint renders in, both sandboxed.

- ``jinja2``: plain Jinja defaults, as most applications render their own templates
  (Jinja's own ``tojson`` sorts keys and HTML-escapes).
- ``transformers``: what Hugging Face ``apply_chat_template`` uses (trim/lstrip blocks,
  loopcontrols, the ``generation`` tag, a ``tojson`` that keeps key order,
  ``raise_exception`` and ``strftime_now``), as in transformers 5.x: its restricted
  ``dict`` and ``namespace`` globals.
- ``transformers4``: the same for transformers 4.x, which keeps Jinja's own ``dict`` and
  ``namespace``.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from datetime import datetime
from typing import Callable, Optional

from jinja2 import Undefined, nodes
from jinja2.exceptions import TemplateError, TemplateSyntaxError, UndefinedError
from jinja2.ext import Extension
from jinja2.sandbox import SecurityError
from jinja2.utils import Namespace, internalcode

from promptlint.render import code_cache, tree_cache
from promptlint.render.sandbox import HardenedSandbox, check_strftime_format

from promptlint.render.trace import TracedTemplate

ENVIRONMENTS = ("jinja2", "transformers", "transformers4")


class UndefinedText(str):
    """Jinja's undefined message, with the parts it was made of: the render error rebuilds it
    naming a computed key or attribute by length and hash (render/shown.py), not its text."""

    parts: tuple = (None, None, None)  # (hint, obj, name)


class NamedUndefined(Undefined):
    """Jinja's ``Undefined``, its failure message carrying what it names (``UndefinedText``)."""

    __slots__ = ()

    @property
    def _undefined_message(self) -> str:
        text = UndefinedText(Undefined._undefined_message.fget(self))
        text.parts = (self._undefined_hint, self._undefined_obj, self._undefined_name)
        return text


class LintUndefined(NamedUndefined):
    """Undefined that fails loudly when printed or iterated, but may be tested.

    Printing an undefined value would silently drop text from the render and
    hide a hazard; ``{% if x.optional %}`` is fine.
    """

    __slots__ = ()

    def __str__(self) -> str:
        self._fail_with_undefined_error()
        return ""

    def __iter__(self):
        self._fail_with_undefined_error()
        return iter(())


class GenerationTag(Extension):
    """HF's `{% generation %}...{% endgeneration %}`: renders its body unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def hf_tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    """transformers' tojson: plain json.dumps, keys in insertion order, no HTML escaping."""
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


class LintEnvironment(HardenedSandbox):
    """The (hardened, see sandbox.py) sandbox, remembering the Python source Jinja generates for each template.

    The tracer reads it to tell literal chunks from expression chunks.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.python_sources = {}
        # source -> its AST: a text is parsed once per environment, though the analysis reads it
        # (scenario inference, includes) and Jinja compiles it. Analysers only read this tree;
        # each compile gets a copy (the compiler folds constants into the tree it is given).
        self._parsed = {}

    def _compile(self, source, filename):
        self.python_sources[filename] = source.splitlines()
        return super()._compile(source, filename)

    @property
    def lexer(self):
        """Jinja's lexer, its text-scanning rule replaced by an equivalent one (render/lexer.py)."""
        from promptlint.render.lexer import fast_lexer

        return fast_lexer(self)

    def _parse(self, source, name, filename):
        # the tree does not depend on name or filename (only a syntax error's message does, and
        # an error is not kept); the lexer and extensions are fixed for the environment's life
        ast = self._parsed.get(source)
        if ast is not None:
            return ast  # its stand-ins were registered by the first parse (scan is idempotent)
        settings = parser_settings(self)
        key = (settings, source)
        shared = PARSED.get(key)
        kept = None if shared is not None else tree_cache.key(settings, source)
        if shared is not None:  # parsed by another environment of this run (an include, a chat template's analysis)
            tree, tokens = shared
            self.charge_tokens(source, name, tokens)
            ast = copy_tree(tree, self)
        elif (shared := tree_cache.get(kept, self)) is not None:  # parsed by an earlier run (render/tree_cache.py)
            ast, tokens = shared
            self.charge_tokens(source, name, tokens)  # the budget a parse would have charged, before any use
            PARSED.put(key, shared)
        else:
            counted = self.tokens_of(source) is not None
            ast = super()._parse(source, name, filename)
            if not counted and self.tokens_of(source) is not None:
                PARSED.put(key, (ast, self.tokens_of(source)))
                tree_cache.put(kept, ast, self.tokens_of(source))
        if hasattr(self, "stubbed"):  # application templates: stand-ins before anything compiles
            from promptlint.render.stubs import scan

            scan(self, ast, name)
        self._parsed[source] = ast
        return ast

    @internalcode
    def compile(self, source, name=None, filename=None, raw=False, defer_init=False):
        """``Environment.compile``, from the environment's one parse of a text (a copy of it)."""
        if not isinstance(source, str):
            return super().compile(source, name, filename, raw, defer_init)
        try:  # as Jinja's compile does for a text
            parsed = self._parse(source, name, filename)  # always: its stand-ins and token charge are part of the run
            where = "<template>" if filename is None else filename
            kept = None if raw else code_cache.key(self, parser_settings(self), source, name, filename, defer_init)
            hit = code_cache.get(kept) if kept is not None else None
            if hit is not None:  # the code this environment generated for this text before (render/code_cache.py)
                return self._kept(hit, name, where)
            code = self._generate(copy_tree(parsed), name, filename, defer_init=defer_init)
            if raw:
                return code
            compiled = self._compile(code, where)
            resolved = getattr(self, "promptlint_resolved", {}).get(name)
            code_cache.put(kept, code, compiled, None if resolved is None else sorted(resolved))
            return compiled
        except TemplateSyntaxError:
            self.handle_exception(source=source)


    def _kept(self, hit, name, where):
        """What generating and compiling would have done, from a kept entry: the same generated-code
        budget (sandbox.GuardedCodeGenerator stops at it), the Python source the tracer reads, the
        names the recording generator collects (render.LoadedTemplate.undeclared)."""
        from promptlint.render.sandbox import TemplateTooLarge, _compile_message

        python, code, resolved = hit
        if self.compiled_chars + len(python) > self.max_compiled_chars:
            raise TemplateTooLarge(_compile_message(self.max_compiled_chars), name)
        self.compiled_chars += len(python)
        self.python_sources[where] = python.splitlines()
        if resolved is not None and hasattr(self, "promptlint_resolved"):
            self.promptlint_resolved.setdefault(name, set()).update(resolved)
        return code


def copy_tree(node, environment=None):
    """A copy of a Jinja AST sharing only leaves (names, constants): the nodes and their lists are
    new, which is all the compiler's constant folding replaces in place; ``environment`` (else the
    tree's own) is the one its nodes name. Recursing once per nesting level, it reaches no depth the
    parse that built the tree did not."""
    new = object.__new__(node.__class__)
    fields = {}
    for key, value in node.__dict__.items():
        if isinstance(value, nodes.Node):
            value = copy_tree(value, environment)
        elif type(value) is list:
            items = []
            for item in value:
                items.append(copy_tree(item, environment) if isinstance(item, nodes.Node) else item)
            value = items
        elif key == "environment" and environment is not None:
            value = environment
        fields[key] = value
    new.__dict__ = fields
    return new


def parser_settings(env) -> tuple:
    """Everything a parse depends on besides the text: the lexer's settings (what Jinja keys its
    lexer cache on) and the extensions (their tags, stream filters and preprocessing)."""
    return (
        type(env),
        env.block_start_string,
        env.block_end_string,
        env.variable_start_string,
        env.variable_end_string,
        env.comment_start_string,
        env.comment_end_string,
        env.line_statement_prefix,
        env.line_comment_prefix,
        env.trim_blocks,
        env.lstrip_blocks,
        env.newline_sequence,
        env.keep_trailing_newline,
        tuple(sorted(env.extensions)),
    )


class ParsedTrees:
    """The trees parsed in this process, by parser settings and text (content-keyed: never stale),
    least recently used dropped first. A text parsed by several environments (an include of many
    templates, a chat template the M204 analysis reads again) is lexed and parsed once; each other
    environment works on a copy (about a seventh of a parse)."""

    def __init__(self, size: int = 64):
        self.size = size
        self._trees: "OrderedDict[tuple, tuple]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            found = self._trees.get(key)
            if found is not None:
                self._trees.move_to_end(key)
            return found

    def put(self, key, value) -> None:
        with self._lock:
            self._trees[key] = value
            while len(self._trees) > self.size:
                self._trees.popitem(last=False)


PARSED = ParsedTrees()


class TemplateRaised(TemplateError):
    """What a template's ``raise_exception(message)`` raised: its message is template-controlled."""


def raise_exception(message):
    raise TemplateRaised(message)


class TemplateDict:
    """transformers 5.x `dict` global: callable and `fromkeys`, no attribute access beyond."""

    def __call__(self, *args, **kwargs):
        return dict(*args, **kwargs)

    def fromkeys(self, *args, **kwargs):
        return dict.fromkeys(*args, **kwargs)


class TemplateNamespace(Namespace):
    """transformers 5.x `namespace` global: rejects underscore-prefixed attribute names."""

    def __init__(*args, **kwargs):  # noqa: N805 - Jinja's own signature trick (`namespace(self=...)`)
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            TemplateNamespace._check_name(name)
        Namespace.__init__(self, attrs)

    def __setitem__(self, name, value):
        TemplateNamespace._check_name(name)
        Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name):
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(
                f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got {name!r}. "
                "Please rename the attribute."
            )


def make_environment(
    kind: str,
    loader=None,
    clock: Optional[Callable[[], datetime]] = None,
    stubs: Optional[dict] = None,
    classify=None,
) -> LintEnvironment:
    """A sandboxed environment of ``kind``; ``clock`` freezes `strftime_now`. ``stubs`` (role ->
    name -> kind, see render/stubs.py) turns on stand-ins for the application's own filters, tests
    and globals; ``classify`` reads a called name's words (a clock-like global is volatile)."""
    if kind in ("transformers", "transformers4"):
        env = LintEnvironment(
            loader=loader,
            undefined=NamedUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[GenerationTag, "jinja2.ext.loopcontrols"],
        )
        env.filters["tojson"] = hf_tojson
        now = clock or datetime.now
        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = lambda fmt: now().strftime(check_strftime_format(fmt))
        if kind == "transformers":  # 5.x
            env.globals["dict"] = TemplateDict()
            env.globals["namespace"] = TemplateNamespace
    elif kind == "jinja2":
        env = LintEnvironment(loader=loader, undefined=LintUndefined)
    else:
        raise ValueError(f"unknown template environment {kind!r}; choose one of {', '.join(ENVIRONMENTS)}")
    env.template_class = TracedTemplate
    if stubs is not None:
        from promptlint.render.stubs import install

        install(env, stubs, classify)
    env.guard_new_filters()  # size guards on filters replaced above (tojson)
    return env


__all__ = ["ENVIRONMENTS", "make_environment", "LintUndefined", "UndefinedError", "hf_tojson"]
