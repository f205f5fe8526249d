"""Speed-ups that must not change results: names recorded while compiling, the tokenizer
loaded in the background, source maps reused between renders."""

from __future__ import annotations

import pytest
from jinja2 import meta

from chat_helpers import TEMPLATES, template_names
from conftest import QWEN

from promptlint.render import RenderError, load_template, render
from promptlint.render.sourcemap import SourceText

APP = (
    "{% set greeting = 'Hi' %}{{ greeting }} {{ name }}\n{% for d in docs %}{{ d.title }} {{ loop.index }}{% endfor %}\n"
    "{% macro card(x) %}{{ x }} {{ outer }}{% endmacro %}{{ card(item) }}{% if flag %}{{ a ~ b }}{% endif %}\n"
    "{% with y = z %}{{ y }}{% endwith %}{{ range(3) | join(',') }}"
)


def _parsed(loaded, text):
    return frozenset(meta.find_undeclared_variables(loaded.env.parse(text)))


@pytest.mark.parametrize("name", template_names())
@pytest.mark.parametrize("env", ["transformers", "transformers4", "jinja2"])
def test_recorded_undeclared_names_equal_a_second_parse(tmp_path, name, env):
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    try:
        loaded = load_template(tmp_path / name, env, [], source=text)
    except RenderError:  # plain Jinja lacks `{% generation %}` and friends
        assert env == "jinja2"
        return
    assert loaded.undeclared() == _parsed(loaded, text)


def test_recorded_undeclared_names_application_template(tmp_path):
    (tmp_path / "part.j2").write_text("{{ from_include }}", encoding="utf-8")
    text = APP + '{% include "part.j2" %}'
    loaded = load_template(tmp_path / "a.j2", "jinja2", [tmp_path], source=text)
    assert loaded.undeclared() == _parsed(loaded, text)
    assert "from_include" not in loaded.undeclared()  # as find_undeclared_variables: the template itself
    loaded.env.globals["name"] = "a global added later"
    assert loaded.undeclared() == _parsed(loaded, text)


def test_source_text_lines():
    for text in ("", "\n", "a", "a\n", "a\nbc\n\nd", "\n\nx"):
        src = SourceText(text)
        expected = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        assert src._line_starts == expected
        for offset in range(len(text) + 1):
            line, col = src.position(offset)
            assert sum(len(l) + 1 for l in text.split("\n")[: line - 1]) + col - 1 == offset


def test_sources_follow_an_include_that_changes(tmp_path):
    (tmp_path / "part.j2").write_text("one", encoding="utf-8")
    loaded = load_template(tmp_path / "a.j2", "jinja2", [tmp_path], source='{% include "part.j2" %}')
    render(loaded, {})
    first = loaded.sources()["part.j2"]
    assert loaded.sources()["part.j2"] is first  # reused
    (tmp_path / "part.j2").write_text("two\nlines", encoding="utf-8")
    assert loaded.sources()["part.j2"].text == "two\nlines"


def _project(tmp_path, tokenizer_text=None):
    import shutil

    (tmp_path / "tok").mkdir()
    if tokenizer_text is None:
        shutil.copy(QWEN, tmp_path / "tok" / "tokenizer.json")
    else:
        (tmp_path / "tok" / "tokenizer.json").write_text(tokenizer_text, encoding="utf-8")
    (tmp_path / "promptlint.toml").write_text('tokenizer = "tok/tokenizer.json"\n', encoding="utf-8")
    (tmp_path / "a.j2").write_text("Time {{ now }}\n" + "Rules of the shop. " * 40 + "\nQ: {{ question }}\n", encoding="utf-8")


def test_background_load_gives_the_same_report(tmp_path, cli):
    _project(tmp_path)
    with_prefetch = cli("check", "--no-cache", "--output-format", "json", "a.j2", cwd=tmp_path)
    import promptlint.lint as lint_mod

    original = lint_mod.TokenizerProvider.prefetch
    try:
        lint_mod.TokenizerProvider.prefetch = lambda self: None
        without = cli("check", "--no-cache", "--output-format", "json", "a.j2", cwd=tmp_path)
    finally:
        lint_mod.TokenizerProvider.prefetch = original
    assert (with_prefetch.code, with_prefetch.out, with_prefetch.err) == (without.code, without.out, without.err)
    assert with_prefetch.code == 1 and "M101" in with_prefetch.out


def test_background_load_error_is_reported_as_before(tmp_path, cli):
    _project(tmp_path, tokenizer_text="{ not a tokenizer")
    r = cli("check", "--no-cache", "a.j2", cwd=tmp_path)
    assert r.code == 2 and "not a tokenizer.json file" in r.err
