"""Speed-ups that must not change results: names recorded while compiling, source maps
reused between renders, common prefixes found by slices."""

from __future__ import annotations

import pytest
from jinja2 import meta

from chat_helpers import TEMPLATES, template_names

from promptlint.render import RenderError, load_template, render
from promptlint.render.sourcemap import SourceText

APP = (
    "{% set greeting = 'Hi' %}{{ greeting }} {{ name }}\n{% for d in docs %}{{ d.title }} {{ loop.index }}{% endfor %}\n"
    "{% macro card(x) %}{{ x }} {{ outer }}{% endmacro %}{{ card(item) }}{% if flag %}{{ a ~ b }}{% endif %}\n"
    "{% with y = z %}{{ y }}{% endwith %}{{ range(3) | join(',') }}"
)


def _plain_jinja_parses(text):
    import jinja2

    try:
        jinja2.Environment().parse(text)
        return True
    except jinja2.TemplateSyntaxError:
        return False


def _parsed(loaded, text):
    return frozenset(meta.find_undeclared_variables(loaded.env.parse(text)))


@pytest.mark.parametrize("name", template_names())
@pytest.mark.parametrize("env", ["transformers", "transformers4", "jinja2"])
def test_recorded_undeclared_names_equal_a_second_parse(tmp_path, name, env):
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    if env == "jinja2" and not _plain_jinja_parses(text):  # transformers' own tags: generation, break
        with pytest.raises(RenderError):
            load_template(tmp_path / name, env, [], source=text)
        return
    loaded = load_template(tmp_path / name, env, [], source=text)
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


def test_sources_are_the_text_the_render_used(tmp_path):
    # a load reads each include once (a snapshot): an include edited on disk afterwards changes
    # neither what the loaded template renders nor the text its source map points into
    (tmp_path / "part.j2").write_text("one", encoding="utf-8")
    loaded = load_template(tmp_path / "a.j2", "jinja2", [tmp_path], source='{% include "part.j2" %}')
    render(loaded, {})
    first = loaded.sources()["part.j2"]
    assert loaded.sources()["part.j2"] is first  # reused
    (tmp_path / "part.j2").write_text("two\nlines", encoding="utf-8")
    assert render(loaded, {}).text == "one"
    assert loaded.sources()["part.j2"] is first


def _naive(a, b):
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return i


def test_shared_prefix_matches_an_element_by_element_scan():
    import random

    from promptlint.arithmetic.compare import shared_prefix

    rnd = random.Random(7)
    for _ in range(2000):
        n = rnd.choice([0, 1, 5, 31, 32, 33, 64, 200, 3000])
        a = [rnd.randrange(3) for _ in range(n)]
        b = list(a[: rnd.randrange(n + 1)]) + [rnd.randrange(3) for _ in range(rnd.randrange(300))]
        for x, y in ((a, b), (b, a), (tuple(a), b), ("".join(map(str, a)), "".join(map(str, b)))):
            assert shared_prefix(x, y) == _naive(x, y)


def test_prefetched_batch_equals_one_by_one(tmp_path):
    """Variants rendered ahead and tokenized with encode_batch give the very samples sample() gives."""
    from conftest import QWEN

    from promptlint.analysis.template_run import TemplateRun
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.render import Limits
    from promptlint.scenarios import Scenario, Variable
    from promptlint.tokenization.tokens import load, resolve

    t = tmp_path / "t.j2"
    t.write_text("Time {{ now }}\n{% for d in docs %}{{ d }}\n{% endfor %}Q: {{ question }}", encoding="utf-8")
    tok = load(resolve(str(QWEN)))
    scenario = Scenario({
        "now": Variable("now", "2025-03-14 09:26:53", "volatile", "timestamp"),
        "docs": Variable("docs", ["alpha beta", "gamma delta", "epsilon"], "static"),
        "question": Variable("question", "How do I reset my password?", "per-request"),
    })
    plans = [{}, {"now": "2025-03-14 09:27:00"}, {"docs": ["epsilon", "gamma delta", "alpha beta"]}, {"question": "Other?"}]

    def run():
        return TemplateRun(t, "t.j2", load_template(t), scenario, lambda: tok, engine_profile("vllm"), Limits())

    batched, single = run(), run()
    batched.prefetch(plans)
    for overrides in plans:
        a, b = batched.sample(**overrides), single.sample(**overrides)
        assert a.text == b.text and a.ids == b.ids and a.encoding.offsets == b.encoding.offsets
