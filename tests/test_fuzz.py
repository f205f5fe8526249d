"""Property tests: whatever the template, samples or config, promptlint reports or errors
cleanly (exit 0, 1 or 2 with a one-line message), never a traceback or an internal error.

Bounded to a few seconds; ``scripts/fuzz.py`` runs the long version.
"""

from __future__ import annotations

import json

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import QWEN  # noqa: E402
from integration_helpers import in_process_cli

FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

TOKENS = [
    "{{", "}}", "{%", "%}", "{#", "#}", "-", "+", " ", "\n", "x", "y", "messages", "m", "ns", "loop", "self",
    "for", "in", "endfor", "if", "else", "elif", "endif", "set", "endset", "macro", "endmacro", "call", "endcall",
    "include", "import", "from", "filter", "endfilter", "raw", "endraw", "with", "endwith", "namespace(n=0)",
    "range(3)", "(", ")", "[", "]", ",", ".", "|", ":", "~", "*", "**", "%", "+", "=", "==", "'a'", '"b"', "1",
    "10", "999999999", "__class__", "__globals__", "cycler", "joiner", "lipsum", "attr", "format", "join",
    "center", "tojson", "items()", "content", "role", "raise_exception('no')", "strftime_now('%Y')", "None",
    "true", "not", "and", "or", "is", "defined", "length", "é", "\t", "\x00", "\ud7ff", "{{ x }}", "{% endif %}",
]

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, width=32) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


run_cli = in_process_cli


def assert_clean(code, out, err):
    assert code in (0, 1, 2), (code, out, err)
    assert "Traceback" not in out + err, err
    assert "internal error" not in err, err
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@FAST
@given(soup=st.lists(st.sampled_from(TOKENS), max_size=40), env=st.sampled_from(["jinja2", "transformers"]))
def test_random_jinja_token_soup(workdir, soup, env):
    t = workdir / "soup.j2"
    t.write_text("".join(soup), encoding="utf-8", errors="surrogatepass")
    assert_clean(*run_cli(["check", "--tokenizer", QWEN, "--template-env", env, "--output-format", "json", t]))


@FAST
@given(values=st.dictionaries(st.sampled_from(["messages", "tools", "x", "question", "date"]), JSON_VALUES, max_size=5))
def test_random_scenario_values(workdir, values):
    d = workdir / "scen"
    d.mkdir(exist_ok=True)
    (d / "t.j2").write_text(
        "{% for m in messages %}{{ m.role }}: {{ m['content'] }}\n{% endfor %}"
        "{% for t in tools %}{{ t|tojson }}{% endfor %}{{ x|length }} {{ question }} {{ date }}\n",
        encoding="utf-8",
    )
    (d / "t.samples.json").write_text(json.dumps({"variables": values}), encoding="utf-8")
    assert_clean(*run_cli(["check", "--tokenizer", QWEN, "--output-format", "json", d / "t.j2"]))


CONFIG_KEYS = st.sampled_from(
    ["render-timeout", "max-output", "max-recursion", "engine", "block-size", "templates", "exclude", "select",
     "ignore", "template-env", "tokenizer", "tokenizer-sha256", "per-file-ignores", "bogus"]
)


def _toml_value(v):
    return json.dumps(v) if not isinstance(v, dict) else "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"


@FAST
@given(
    config=st.dictionaries(
        CONFIG_KEYS,
        st.none() | st.booleans() | st.integers(-5, 10**9) | st.floats(-1, 700, allow_nan=False)
        | st.text(max_size=12) | st.lists(st.text(max_size=5), max_size=3) | st.sampled_from(["vllm", "transformers", "M1"]),
        max_size=5,
    )
)
def test_random_configs(workdir, config):
    d = workdir / "cfg"
    d.mkdir(exist_ok=True)
    body = "\n".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in config.items() if v is not None)
    (d / "promptlint.toml").write_text(body + "\n", encoding="utf-8")
    (d / "a.j2").write_text("System.\n{{ question }}\n", encoding="utf-8")
    assert_clean(*run_cli(["check", "--tokenizer", QWEN, "--config", d / "promptlint.toml", d / "a.j2"]))


@FAST
@given(data=st.binary(max_size=200))
def test_random_bytes_as_template_and_samples(workdir, data):
    d = workdir / "bytes"
    d.mkdir(exist_ok=True)
    (d / "b.j2").write_bytes(data)
    (d / "c.j2").write_text("{{ v }}\n", encoding="utf-8")
    (d / "c.samples.toml").write_bytes(data)
    assert_clean(*run_cli(["check", "--tokenizer", QWEN, d / "b.j2", d / "c.j2"]))
