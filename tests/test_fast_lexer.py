"""render/lexer.py: the rewritten text-scanning rule matches exactly where Jinja's own does, with
the same groups, and the lexers give the same tokens (or the same error)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from jinja2 import Environment
from jinja2.ext import loopcontrols
from jinja2.lexer import get_lexer

from promptlint.render.environments import GenerationTag, make_environment

DATA = Path(__file__).parent / "data"
PIECES = list("{%#}-+ \n\traw") + ["{%", "{{", "{#", "raw", "%}", "-%}", "{%- raw %}", "{% raw -%}", "{%+", "{{-", "#}"]


def jinja_of(kind: str) -> Environment:
    """Plain Jinja with the kind's lexer settings (its own, unmodified lexer)."""
    if kind == "jinja2":
        return Environment()
    return Environment(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, loopcontrols])


def outcome(lexer, text):
    try:
        return list(lexer.tokeniter(text, None))
    except Exception as e:  # a lexer error must be the same error
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("kind", ["jinja2", "transformers"])
def test_the_root_rule_matches_as_jinjas_everywhere(kind):
    ours = make_environment(kind).lexer.rules["root"][0].pattern
    theirs = get_lexer(jinja_of(kind)).rules["root"][0].pattern
    if sys.version_info >= (3, 11):  # possessive quantifiers: older Pythons keep Jinja's rule
        assert ours.pattern != theirs.pattern  # rewritten (default delimiters)
    rnd = random.Random(17)
    for _ in range(5000):
        text = "".join(rnd.choice(PIECES) for _ in range(rnd.randrange(0, 24)))
        for pos in range(len(text) + 1):
            a, b = theirs.match(text, pos), ours.match(text, pos)
            assert (a is None) == (b is None), (text, pos)
            if a is not None:
                assert (a.span(), a.groups(), a.groupdict()) == (b.span(), b.groups(), b.groupdict()), (text, pos)


@pytest.mark.parametrize("kind", ["jinja2", "transformers"])
def test_real_templates_lex_to_the_same_tokens(kind):
    ours, theirs = make_environment(kind).lexer, get_lexer(jinja_of(kind))
    texts = [p.read_text(encoding="utf-8") for p in sorted((DATA / "chat_templates").glob("*.jinja"))]
    texts += ["{% raw %}{{ kept }}{% endraw %}", "a {#- c -#} b\n  {%- if x %}y{% endif +%}\n", "{{ '{' }}{", "{% if %}", "x {{"]
    assert len(texts) > 20
    for text in texts:
        assert outcome(ours, text) == outcome(theirs, text)


def test_other_delimiters_keep_jinjas_lexer():
    env = make_environment("jinja2")
    env.line_statement_prefix = "#"  # a root rule not starting with `{`
    assert env.lexer is get_lexer(env)
