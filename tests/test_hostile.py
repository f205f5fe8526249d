"""Hostile and broken input: SSTI payloads, runaway renders, bad files and settings.

Timing rule: every limit test sets a limit and only asserts that the run stopped
well within a generous multiple of it (a loaded 2-core CI machine), never that
something finished faster than a limit.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path

import pytest

from conftest import DATA, QWEN

pytestmark = pytest.mark.usefixtures("quiet_heap")  # render limits of 0.5 s: see conftest.quiet_heap

SSTI = DATA / "ssti"
PAYLOADS = sorted(SSTI.glob("*.j2"))


def _findings(result):
    data = result.json()
    return data if isinstance(data, list) else data.get("findings", []) + data.get("errors", [])


def _concise(result):
    """[(path, line, code)] from concise output."""
    out = []
    for line in result.out.splitlines():
        m = re.match(r"(.+?):(\d+):\d+: ([A-Z]\d{3}) ", line)
        if m:
            out.append((Path(m.group(1)).name, int(m.group(2)), m.group(3)))
    return out


def _check(cli, *args, cwd=None):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "concise", *args, cwd=cwd)
    assert "Traceback" not in r.out + r.err and "internal error" not in r.err, r.err
    return r


# ---------------------------------------------------------------- sandbox


def test_corpus_has_at_least_20_payloads():
    assert len(PAYLOADS) >= 20


def _envs(path: Path):
    header = path.read_text(encoding="utf-8").splitlines()[0]
    return ["transformers"] if "env: transformers" in header else ["jinja2", "transformers"]


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: p.stem)
def test_ssti_payload_is_refused_with_e007_on_its_line(payload, tmp_path, cli):
    canary = tmp_path / "canary"
    target = tmp_path / payload.name
    target.write_text(payload.read_text(encoding="utf-8").replace("CANARY", str(canary)), encoding="utf-8")
    for env in _envs(payload):
        r = _check(cli, "--template-env", env, target)
        assert r.code == 1, r.out
        assert (payload.name, 3, "E007") in _concise(r), (env, r.out)
        assert "unsafe template construct" in r.out
        assert not canary.exists()
    assert not canary.exists()


def test_nothing_dangerous_in_globals():
    import types

    from promptlint.render.environments import make_environment

    for kind in ("jinja2", "transformers"):
        env = make_environment(kind)
        for name, value in env.globals.items():
            assert not isinstance(value, types.ModuleType), name
            assert value not in (open, eval, exec, __import__, getattr, setattr, type, object), name
        assert set(env.globals) <= {
            "range", "dict", "lipsum", "cycler", "joiner", "namespace", "raise_exception", "strftime_now",
        } | _TRANSFORMERS5_GLOBALS, sorted(env.globals)


# globals the chat-template work may add for transformers 5.x (pure functions only)
_TRANSFORMERS5_GLOBALS = {"bos_token", "eos_token", "tools", "messages", "add_generation_prompt"}


def test_hidden_unsafe_access_is_not_a_silent_pass(tmp_path, cli):
    # Jinja's sandbox turns `''.__class__` into an undefined value: printed under a lenient
    # undefined it renders nothing, tested in an `if` it is falsy. Both must be E007.
    t = tmp_path / "quiet.j2"
    t.write_text("ok\n{% if ''.__class__ %}x{% endif %}{{ ''.__class__ }}\n", encoding="utf-8")
    for env in ("jinja2", "transformers"):
        assert ("quiet.j2", 2, "E007") in _concise(_check(cli, "--template-env", env, t))


def test_legitimate_templates_still_render(tmp_path, cli):
    t = tmp_path / "ok.j2"
    t.write_text(
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
        "{{ m['role'] ~ ': ' ~ m.content|trim }}\n{% endfor %}{{ '%d messages' % ns.n }} {{ '{}!'.format('ok') }}"
        "{{ 'x'|center(9) }}{{ ', '.join(['a', 'b']) }}{{ [1, 2]|join('-') }}{{ 2 ** 10 }}{{ 'ab' * 3 }}\n",
        encoding="utf-8",
    )
    (tmp_path / "ok.samples.toml").write_text(
        '[variables]\nmessages = [{role = "user", content = "hi"}]\n', encoding="utf-8"
    )
    r = _check(cli, t)
    assert not [f for f in _concise(r) if f[2].startswith("E")], r.out


# ---------------------------------------------------------------- limits


def _config(tmp_path, **settings):
    lines = ["[tool.promptlint]"] + [f"{k} = {json.dumps(v)}" for k, v in settings.items()]
    (tmp_path / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


RUNAWAY = {
    "loop.j2": "line one\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n",
    # no sandboxed call inside the loops: no cooperative deadline check, off the main thread only
    # the watchdog's injected exception stops it
    "call_free.j2": "{% set r = range(100000)|list %}\n{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}\n",
    "buffered.j2": "{% set x %}\n{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}\n{% endset %}",
    "macro.j2": "{% macro spin(n) %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    "{% endmacro %}\n{{ spin(1) }}\n",
}


def test_runaway_renders_stop_with_e006_and_the_run_continues(tmp_path, cli):
    for name, text in RUNAWAY.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "fine.j2").write_text("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}\n", encoding="utf-8")
    _config(tmp_path, **{"render-timeout": 0.5})
    r = _check(cli, tmp_path, cwd=tmp_path)
    got = _concise(r)
    assert ("loop.j2", 2, "E006") in got, r.out
    assert ("buffered.j2", 2, "E006") in got, r.out
    assert ("macro.j2", 1, "E006") in got, r.out
    assert ("call_free.j2", 2, "E006") in got, r.out
    assert ("fine.j2", 1, "E006") in got, r.out  # recursion, and the run went on to this file
    assert "time limit of 0.5 s" in r.out and "recursion limit" in r.out


def test_runaway_render_stops_off_the_main_thread(tmp_path):
    from promptlint.render import Limits, RenderError, load_template, render

    limits = Limits(timeout_s=0.2)  # the stop is the subject, not the limit's length (4 renders x 3 rounds wait it out)
    results = {}

    def work():
        for name, text in RUNAWAY.items():
            try:
                render(load_template(tmp_path / name, source=text, limits=limits), {}, limits)
                results[name] = ("rendered", None)
            except RenderError as e:
                results[name] = (e.code, e.message)

    for _ in range(3):  # the watchdog must stop each of them, every time
        t = threading.Thread(target=work, daemon=True)
        t.start()
        t.join(60)
        assert not t.is_alive(), "a render off the main thread did not stop"
        for name in RUNAWAY:
            code, message = results[name]
            assert code == "E006" and "time limit of 0.2 s" in message, (name, results[name])


def test_watchdog_stop_leaves_the_thread_clean(tmp_path):
    # RenderGuard used to clear the injected exception with PyThreadState_SetAsyncExc(tid, None)
    # through a py_object argtype: Py_None, not NULL, so the thread got "exception None" pending and
    # the next bytecode raised SystemError: a false E002 (deterministic once the watchdog fired).
    from promptlint.render import Limits, RenderError, load_template, render

    limits = Limits(timeout_s=0.2)
    results = []

    def work():
        for _ in range(5):
            try:
                render(load_template(tmp_path / "spin.j2", source=RUNAWAY["call_free.j2"], limits=limits), {}, limits)
                results.append(("rendered", ""))
            except RenderError as e:
                results.append((e.code, e.message))
            try:
                after = render(load_template(tmp_path / "ok.j2", source="{{ x }}", limits=limits), {"x": "ok"}, limits)
                results.append(("after", after.text))
            except BaseException as e:  # noqa: B036 - a stray injected exception is the bug
                results.append(("after", f"{type(e).__name__}: {e}"))

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(120)
    assert not t.is_alive()
    assert results == [("E006", "render exceeded the time limit of 0.2 s"), ("after", "ok")] * 5, results


def test_watchdog_leaves_no_stray_exception(tmp_path):
    """Many short renders off the main thread: a watchdog that fires late must not hit later code.

    A render may legitimately reach its 0.05 s limit on a loaded machine (E006); anything else
    escaping, or an exception arriving after the renders, is the bug.
    """
    from promptlint.render import Limits, RenderError, load_template, render

    limits = Limits(timeout_s=0.05)
    errors = []

    def work():
        try:
            for _ in range(200):
                lt = load_template(tmp_path / "s.j2", source="{{ x }}", limits=limits)
                try:
                    assert render(lt, {"x": "y"}, limits).text == "y"
                except RenderError as e:
                    if e.code != "E006":
                        raise
            time.sleep(0.3)  # any pending timer fires now
            sum(range(100000))  # bytecode that a pending injected exception would interrupt
        except BaseException as e:  # noqa: B036
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join(60)
    assert not errors


def test_output_limit_and_size_guards(tmp_path, cli):
    cases = {
        "out.j2": "a\n{% for i in range(100000) %}{{ 'x' * 50 }}{% endfor %}\n",
        "mul.j2": "a\n{{ 'x' * 10 ** 9 }}\n",
        "pow.j2": "a\n{{ 9 ** 999999999 }}\n",
        "concat.j2": "{% set ns = namespace(s='ab') %}\n{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}\n",
        "center.j2": "a\n{{ 'x'|center(999999999) }}\n",
        "fmt.j2": "a\n{{ '{:>999999999}'.format(1) }}\n",
        "printf.j2": "a\n{{ '%999999999d' % 1 }}\n",
        "replace.j2": "a\n{{ ('a' * 100000).replace('a', 'a' * 1000) }}\n",
        "join.j2": "a\n{{ range(100000)|join('x' * 1000) }}\n",
        # an inferred date-time input: the C library pads inside one call, before any size check
        "strftime.j2": "a\n{{ created_at.strftime('%0999999999Y') | length }}\n",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    _config(tmp_path, **{"max-output": 100000})
    r = _check(cli, tmp_path, cwd=tmp_path)
    got = _concise(r)
    for name in cases:
        assert (name, 2, "E006") in got, (name, r.out)
    assert "output limit of 100,000 characters" in r.out
    assert "strftime() format is too long" in r.out


def test_max_recursion_is_configurable(tmp_path, cli):
    (tmp_path / "deep.j2").write_text(
        "{% macro down(n) %}{% if n > 0 %}{{ down(n - 1) }}{% endif %}{% endmacro %}{{ down(100) }}\n", encoding="utf-8"
    )
    assert not [f for f in _concise(_check(cli, tmp_path, cwd=tmp_path)) if f[2] == "E006"]
    _config(tmp_path, **{"max-recursion": 50})
    r = _check(cli, tmp_path, cwd=tmp_path)
    assert ("deep.j2", 1, "E006") in _concise(r)
    _config(tmp_path, **{"max-recursion": 100000})
    r = _check(cli, tmp_path, cwd=tmp_path)
    assert r.code == 2 and "max-recursion" in r.err


def test_recursion_limit_is_restored(tmp_path):
    import sys

    from promptlint.render import Limits, RenderError, load_template, render

    before = sys.getrecursionlimit()
    lt = load_template(tmp_path / "r.j2", source="{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}")
    with pytest.raises(RenderError):
        render(lt, {}, Limits())
    assert sys.getrecursionlimit() == before


# ---------------------------------------------------------------- bad files and settings


def test_bad_template_files_are_e_findings_and_the_run_continues(tmp_path, cli):
    (tmp_path / "latin1.j2").write_bytes("line\ncaf\xe9\n".encode("latin-1"))
    (tmp_path / "binary.j2").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "huge.j2").write_bytes(b"x" * 2_000_001)
    (tmp_path / "missing_include.j2").write_text("a\n{% include 'nope.j2' %}\n", encoding="utf-8")
    (tmp_path / "missing_import.j2").write_text("a\n{% from 'nope.j2' import m %}{{ m() }}\n", encoding="utf-8")
    (tmp_path / "escape.j2").write_text("a\n{% include '../../etc/passwd' %}\n", encoding="utf-8")
    (tmp_path / "escape_abs.j2").write_text("a\n{% include '/etc/passwd' %}\n", encoding="utf-8")
    (tmp_path / "syntax.j2").write_text("a\n{% if %}\n", encoding="utf-8")
    deep = "{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}"
    (tmp_path / "deep_parse.j2").write_text(deep, encoding="utf-8")
    os.symlink("loop_b.j2", tmp_path / "loop_a.j2")
    os.symlink("loop_a.j2", tmp_path / "loop_b.j2")
    (tmp_path / "good.j2").write_text("Hello {{ question }}\n", encoding="utf-8")
    r = _check(cli, tmp_path, tmp_path / "does_not_exist.j2", cwd=tmp_path)
    got = _concise(r)
    assert r.code == 1
    assert ("latin1.j2", 2, "E005") in got
    assert ("binary.j2", 1, "E005") in got
    assert ("huge.j2", 1, "E005") in got
    assert ("missing_include.j2", 2, "E002") in got
    assert ("missing_import.j2", 2, "E002") in got
    assert ("escape.j2", 2, "E002") in got
    assert ("escape_abs.j2", 2, "E002") in got
    assert ("syntax.j2", 2, "E001") in got
    assert any(f[0] == "deep_parse.j2" and f[2] in ("E001", "E006") for f in got), r.out
    assert ("loop_a.j2", 1, "E005") in got and ("loop_b.j2", 1, "E005") in got
    assert ("does_not_exist.j2", 1, "E005") in got
    assert not [f for f in got if f[0] == "good.j2" and f[2].startswith("E")]
    assert "root:" not in r.out  # nothing from /etc/passwd


@pytest.mark.parametrize(
    "name,text,fragment",
    [
        ("a.samples.json", "{not json", "invalid JSON"),
        ("a.samples.toml", "[variables\n", "invalid TOML"),
        ("a.samples.toml", "variables = [1, 2]\n", "variables"),
        ("a.samples.toml", '[variables]\nq = {kind = "sometimes", value = "x"}\n', "sometimes"),
    ],
)
def test_bad_samples_files_are_e003(tmp_path, cli, name, text, fragment):
    (tmp_path / "a.j2").write_text("Hello {{ q }}\n", encoding="utf-8")
    (tmp_path / name).write_text(text, encoding="utf-8")
    r = _check(cli, tmp_path / "a.j2")
    assert r.code == 1 and [f for f in _concise(r) if f[2] == "E003"], r.out
    assert fragment in r.out


def test_wrong_value_type_in_samples_is_a_clear_finding(tmp_path, cli):
    (tmp_path / "a.j2").write_text("{% for k, v in tools.items() %}{{ k }}={{ v }}\n{% endfor %}", encoding="utf-8")
    (tmp_path / "a.samples.toml").write_text("[variables]\ntools = [1, 2]\n", encoding="utf-8")
    r = _check(cli, tmp_path / "a.j2")
    errs = [f for f in _concise(r) if f[2].startswith("E")]
    assert errs and errs[0][1] == 1, r.out
    assert "list" in r.out and "items" in r.out


def test_control_characters_in_file_names_stay_on_one_line(tmp_path, cli):
    # a newline or an ESC in a file name must not split a finding line or drive the terminal
    names = ["new\nline.j2", "esc\x1b[31mred.j2"]
    for name in names:
        (tmp_path / name).write_text("Request {{ request_id }}\n" + "Answer from the handbook only. " * 40 + "\nQ: {{ question }}\n", encoding="utf-8")
    for fmt in ("concise", "full"):
        r = cli("check", "--tokenizer", QWEN, "--output-format", fmt, ".", cwd=tmp_path)
        assert r.code == 1 and "\x1b" not in r.out, r.out
        assert "new\\nline.j2:1:9: M101 " in r.out and "esc\\x1b[31mred.j2:1:9: M101 " in r.out, r.out


@pytest.mark.parametrize(
    "config,fragment",
    [
        ("[tool.promptlint\n", "invalid TOML"),
        ('[tool.promptlint]\nrender-timeout = "soon"\n', "render-timeout"),
        ("[tool.promptlint]\nrender-timeout = 0\n", "render-timeout"),
        ("[tool.promptlint]\nmax-output = -5\n", "max-output"),
        ("[tool.promptlint]\nmax-recursion = 0\n", "max-recursion"),
        ('[tool.promptlint]\ntemplates = "*.j2"\n', "templates"),
    ],
)
def test_bad_settings_exit_2_with_one_line(tmp_path, cli, config, fragment):
    (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
    (tmp_path / "a.j2").write_text("hi\n", encoding="utf-8")
    r = _check(cli, tmp_path / "a.j2", cwd=tmp_path)
    assert r.code == 2 and fragment in r.err
    assert len(r.err.strip().splitlines()) == 1, r.err


@pytest.mark.parametrize(
    "content,pin,fragment",
    [
        (b'{"version": "1.0", "model": {"type": "BPE", "vocab": {"a"', None, "truncated"),
        (b'{"hello": "world"}', None, "not a Hugging Face tokenizer.json"),
        (b"\xff\xfe\x00binary", None, "not a tokenizer.json"),
        (None, "0" * 64, "expected sha256"),
    ],
)
def test_bad_tokenizers_exit_2_with_one_line(tmp_path, cli, content, pin, fragment):
    tok = tmp_path / "tokenizer.json"
    tok.write_bytes(QWEN.read_bytes() if content is None else content)
    (tmp_path / "a.j2").write_text("Hello {{ question }}\n", encoding="utf-8")
    args = ["check", "--tokenizer", tok, tmp_path / "a.j2"] + (["--tokenizer-sha256", pin] if pin else [])
    r = cli(*args)
    assert r.code == 2 and fragment in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err


# ---------------------------------------------------------------- issue 15: probes, limits that hold


PROBES = [
    # (template line 2, samples) — each reaches for an unsafe name; the object varies
    ("{{ raise_exception.__globals__ }}", ""),  # an input in the jinja2 env (a mapping with that key)
    ('{% if lipsum|attr("__wrapped__") %}x{% endif %}', ""),  # a name the function lacks
    ('{% if cycler|attr("mro") %}x{% endif %}', ""),  # an introspection name the object lacks
    ('{{ x|attr("_private") }}', 'x = "text"\n'),
    ("{{ d.__class__ }}", 'd = { "__class__" = "a key, not the class" }\n'),
    ('{{ d["__globals__"] }}', 'd = { "__globals__" = "a key" }\n'),
    ('{{ "{0.__doc__}".format(d) }}', 'd = { k = "v" }\n'),
]


@pytest.mark.parametrize("env", ["jinja2", "transformers"])
@pytest.mark.parametrize("probe,samples", PROBES, ids=[p for p, _ in PROBES])
def test_every_unsafe_attribute_probe_is_e007_whatever_the_object(tmp_path, cli, env, probe, samples):
    t = tmp_path / "probe.j2"
    t.write_text("hello\n" + probe + "\n", encoding="utf-8")
    if samples:
        (tmp_path / "probe.samples.toml").write_text("[variables]\n" + samples, encoding="utf-8")
    r = _check(cli, "--template-env", env, t)
    assert ("probe.j2", 2, "E007") in _concise(r), (env, r.out)


def test_private_looking_data_keys_still_render(tmp_path, cli):
    # a mapping key that starts with one underscore is data, not a probe
    t = tmp_path / "keys.j2"
    t.write_text("Hello {{ d._meta }} {{ d['_id'] }}\n", encoding="utf-8")
    (tmp_path / "keys.samples.toml").write_text('[variables]\nd = { _meta = "m", _id = "i" }\n', encoding="utf-8")
    r = _check(cli, t)
    assert not [f for f in _concise(r) if f[2].startswith("E")], r.out


def test_ten_thousand_line_template_is_not_a_false_e006(tmp_path, cli):
    # one lookup per output chunk re-parsed Jinja's whole line table and CPython walked the code
    # object's line table from its start: quadratic, a 2,000-line template got an E006 (2 s limit)
    t = tmp_path / "long.j2"
    t.write_text("".join(f"Line {i}: {{{{ name }}}} said hi.\n" for i in range(10_000)), encoding="utf-8")
    (tmp_path / "long.samples.toml").write_text('[variables]\nname = "Ann"\n', encoding="utf-8")
    # 10 s, not the 2 s default: a clean-clone CI run hit 2 s once at line 1,459 under load; the
    # quadratic walk this guards against costs ~25x the 2,000-line case here, far past 10 s
    _config(tmp_path, **{"render-timeout": 10})
    r = _check(cli, t, cwd=tmp_path)
    assert not [f for f in _concise(r) if f[2].startswith("E")], r.out


def test_long_template_source_map_points_at_its_lines(tmp_path):
    from promptlint.render import Limits, load_template, render

    text = "".join(f"Line {i}: {{{{ name }}}}.\n" for i in range(3000))
    # the source map is the subject, not the clock: the 2 s default ran out once on a loaded CI machine
    r = render(load_template(tmp_path / "l.j2", source=text), {"name": "Ann"}, Limits(timeout_s=120))
    offset = r.text.index("Line 2500: Ann") + len("Line 2500: ")
    loc = r.sourcemap.locate(offset)  # the `{{ name }}` of line 2501 (1-based), column 12
    assert (loc.line, loc.column) == (2501, 12), loc


def test_a_template_too_large_to_compile_is_refused_before_compiling(tmp_path, cli):
    # 1.9 MB of `{{x}}`: under the file cap, but compile() of its 380,000 outputs took 22-24 s and
    # 3.4 GB that no alarm can interrupt. Refused on its size in Jinja tokens, not on the clock.
    t = tmp_path / "many.j2"
    t.write_text("{{x}}" * 380_000, encoding="utf-8")
    _config(tmp_path, **{"render-timeout": 300})  # only the size caps may stop it (a loaded machine is slow)
    r = _check(cli, t, cwd=tmp_path)
    assert ("many.j2", 1, "E006") in _concise(r), r.out
    assert "200,000 Jinja tokens" in r.out and "time limit" not in r.out, r.out


def test_generated_code_is_bounded_below_the_token_cap(tmp_path, cli):
    # 125,000 tokens (under the token cap) whose generated Python is over 3,000,000 characters:
    # refused before compile() sees it
    t = tmp_path / "concat.j2"
    t.write_text("{{x~y}}" * 25_000, encoding="utf-8")
    _config(tmp_path, **{"render-timeout": 300})
    r = _check(cli, t, cwd=tmp_path)
    assert ("concat.j2", 1, "E006") in _concise(r), r.out
    assert "3,000,000 characters of Python" in r.out, r.out


def test_the_parse_and_compile_caps_default_to_200000_tokens_and_3000000_characters():
    # what the two tests above prove on real-size input, read cheaply (other cap tests run at a hundredth)
    from promptlint.render import Limits
    from promptlint.render.environments import make_environment

    assert (Limits().max_template_tokens, Limits().max_compiled_chars) == (200_000, 3_000_000)
    env = make_environment("transformers")  # a chat template's parse outside load_template
    assert (env.max_template_tokens, env.max_compiled_chars) == (200_000, 3_000_000)


def test_a_render_limits_caps_are_the_ones_that_refuse(tmp_path):
    from promptlint.render import Limits, RenderError, load_template

    # 40 x `{{x}}`: 120 Jinja tokens (begin, name, end); 80 fit under 100, all of them under 200
    text = "{{x}}" * 40
    with pytest.raises(RenderError) as e:
        load_template(tmp_path / "t.j2", source=text, limits=Limits(max_template_tokens=100))
    assert e.value.code == "E006" and "more than 100 Jinja tokens" in e.value.message, e.value.message
    assert load_template(tmp_path / "t.j2", source=text, limits=Limits(max_template_tokens=120)).env.tokens_used == 120
    # `{{x~y}}` compiles to over 100 characters of Python each: 40 of them are over 2,000
    with pytest.raises(RenderError) as e:
        load_template(tmp_path / "c.j2", source="{{x~y}}" * 40, limits=Limits(max_compiled_chars=2_000))
    assert e.value.code == "E006" and "more than 2,000 characters of Python" in e.value.message, e.value.message


def test_a_runaway_chat_template_stops_at_its_first_limit(tmp_path, cli, monkeypatch):
    # every built-in scenario used to be rendered into the time limit in turn (about 7 x the limit)
    from promptlint.render import limits as limits_module
    from promptlint.render.sandbox import DeadlineExceeded

    hits = []
    original_exit = limits_module.RenderGuard.__exit__

    def spy(self, exc_type, *rest):
        if exc_type is DeadlineExceeded:
            hits.append(self.timeout_s)
        return original_exit(self, exc_type, *rest)

    monkeypatch.setattr(limits_module.RenderGuard, "__exit__", spy)
    t = tmp_path / "chat.jinja"
    t.write_text(
        "{% set r = range(100000)|list %}{% for m in messages %}{% for i in r %}{% for j in r %}{% endfor %}"
        "{% endfor %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
        encoding="utf-8",
    )
    _config(tmp_path, **{"render-timeout": 0.3})
    r = _check(cli, t, cwd=tmp_path)
    assert [f for f in _concise(r) if f[2] == "E006"] == [("chat.jinja", 1, "E006")], r.out
    assert "time limit of 0.3 s" in r.out and "every built-in scenario" not in r.out
    assert hits == [0.3], hits  # exactly one render ran into the limit


def test_control_characters_in_file_names_never_reach_ci_logs_or_comments_raw(tmp_path, cli):
    """The github annotations go into a job's log and the markdown report into a pull-request
    comment: an ESC in a file name is written out there too (a newline stays the format's own escape)."""
    name = "esc\x1b[31mred.j2"
    (tmp_path / name).write_text("Request {{ request_id }}\n" + "Answer from the handbook only. " * 40 + "\nQ: {{ question }}\n", encoding="utf-8")
    r = cli("check", "--tokenizer", QWEN, "--output-format", "github", ".", cwd=tmp_path)
    assert r.code == 1 and "\x1b" not in r.out, r.out
    assert r.out.startswith("::warning file=esc\\x1b[31mred.j2,line=1,col=9,"), r.out
    r = cli("check", "--tokenizer", QWEN, "--output-format", "markdown", ".", cwd=tmp_path)
    assert r.code == 1 and "\x1b" not in r.out and "esc\\x1b[31mred.j2:1:9" in r.out, r.out


def test_a_runaway_prompt_file_stops_at_the_configured_render_timeout(tmp_path, cli):
    # A prompt file split into role turns is rendered once more to see which inputs print only in user
    # turns; that render must obey the run's render-timeout too, or a slow prompt file gets the 2 s
    # default's E006 (cached on the template) whatever the configuration says.
    (tmp_path / "spin.prompty").write_text(
        "---\nname: Spin\nsample:\n  question: hi\n---\nsystem:\nYou answer questions.\n"
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n\nuser:\n{{question}}\n",
        encoding="utf-8",
    )
    _config(tmp_path, **{"render-timeout": 0.5})
    r = _check(cli, tmp_path, cwd=tmp_path)
    assert ("spin.prompty", 8, "E006") in _concise(r), r.out
    assert "time limit of 0.5 s" in r.out and "time limit of 2 s" not in r.out, r.out
