"""A template text is lexed and parsed once (render/environments.py): the analysis reads the tree,
each compile gets a copy, other environments of the run get copies charged to their own budgets."""

from __future__ import annotations

import os

import pytest
from jinja2 import Environment, nodes
from jinja2.ext import loopcontrols

from conftest import QWEN
from promptlint.render.environments import GenerationTag, copy_tree, make_environment

# constants the compiler folds into the tree it compiles, in place: `"a" ~ "b"`, a list of constants
FOLDABLE = '{{ "a" ~ "b" }}{% if role in ["user", "assistant"] %}[{{ role | upper }}]{% endif %}{{ [1, 2] | length }}\n'


def plain_parse(text: str, transformers: bool = False):
    """The tree plain Jinja builds for ``text`` (independent of promptlint's environments)."""
    if transformers:
        env = Environment(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, loopcontrols])
    else:
        env = Environment()
    return env.parse(text)


def test_the_analysis_reads_the_tree_as_parsed_after_the_compile_folded_constants():
    env = make_environment("jinja2")
    template = env.from_string(FOLDABLE)  # parses and compiles (folding constants)
    tree = env.parse(FOLDABLE)
    assert tree == plain_parse(FOLDABLE)  # Node equality: same types, same fields, recursively
    operand = next(tree.find_all(nodes.Operand))
    assert isinstance(operand.expr, nodes.List)  # plain Jinja's compile folds it into Const(["user", "assistant"])
    assert template.render(role="user") == "ab[USER]2"
    assert env.from_string(FOLDABLE).render(role="assistant") == "ab[ASSISTANT]2"  # compiled again from the same tree
    assert env.parse(FOLDABLE) is tree  # parsed once


def test_a_copy_shares_no_node_and_names_its_environment():
    env, other = make_environment("transformers"), make_environment("transformers")
    tree = env.parse(FOLDABLE)
    copy = copy_tree(tree, other)
    assert copy == tree
    originals = {id(n) for n in tree.find_all(nodes.Node)}
    copies = list(copy.find_all(nodes.Node))
    assert copies and not originals & {id(n) for n in copies}
    assert {n.environment for n in copies} == {other}
    assert {n.environment for n in tree.find_all(nodes.Node)} == {env}


def test_another_environment_gets_its_own_copy_of_a_text_parsed_before():
    text = FOLDABLE + "{% generation %}{{ x }}{% endgeneration %}{% for i in items %}{% break %}{% endfor %}\n"
    first, second = make_environment("transformers"), make_environment("transformers")
    a, b = first.parse(text), second.parse(text)
    assert a is not b and a == b == plain_parse(text, transformers=True)
    assert {n.environment for n in b.find_all(nodes.Node)} == {second}
    assert first.tokens_used == second.tokens_used > 0  # each counted the text's tokens once


def test_environments_with_other_parser_settings_do_not_share_a_tree():
    text = "  {% if x %}\n  yes\n  {% endif %}\n"
    trimmed = make_environment("transformers").parse(text)  # trim_blocks, lstrip_blocks
    plain = make_environment("jinja2").parse(text)
    assert trimmed == plain_parse(text, transformers=True)
    assert plain == plain_parse(text)
    assert trimmed != plain


@pytest.fixture
def proj(tmp_path, monkeypatch):
    (tmp_path / "promptlint.toml").write_text("render-timeout = 300\n", encoding="utf-8")  # only the cap may stop it
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_shared_include_still_counts_toward_each_templates_token_cap(proj, cli, small_template_caps):
    # about 1,000 Jinja tokens (a constant list of 500 items: two tokens per item): `a.j2` and
    # `part.j2` together are under the cap (2,000 here, a hundredth of the product's), `b.j2` (as many
    # of its own) with `part.j2` over it. a.j2 is linted first: b.j2's environment gets part.j2's tree
    # parsed for a.j2, and pays its tokens.
    part = "{% set a = [" + "1," * 500 + "] %}\n"
    (proj / "part.j2").write_text(part, encoding="utf-8")
    (proj / "a.j2").write_text("Hello {{ name }}\n{% include 'part.j2' %}\n", encoding="utf-8")
    (proj / "b.j2").write_text(part.replace("set a", "set b") + "Hello\n{% include 'part.j2' %}\n", encoding="utf-8")
    r = cli("check", "--no-cache", "--tokenizer", QWEN, "--output-format", "concise", "a.j2", "b.j2")
    assert "Traceback" not in r.out + r.err, r.err
    found = []
    for line in r.out.splitlines():
        parts = line.split(": ", 2)
        if len(parts) >= 2 and parts[1][:1] == "E":
            found.append((os.path.basename(parts[0].rsplit(":", 2)[0]), parts[1][:4]))
    assert found == [("b.j2", "E006")], r.out
    assert "more than 2,000 Jinja tokens together" in r.out, r.out
