"""Real-style templates that compute what they include and use the application's own Jinja
filters, tests and globals (tests/data/app_templates/computed, ../app_templates_broken).

Renders are rebuilt here with plain Jinja and the values the test states; token figures come
from a direct `tokenizers` encode of those renders, never from promptlint's own arithmetic.
"""

from __future__ import annotations

import json
import shutil

from jinja2 import Environment, FileSystemLoader

from conftest import DATA, QWEN, shared_prefix

COMPUTED = DATA / "app_templates" / "computed"
BROKEN = DATA / "app_templates_broken"
B = 16


def copy(src, tmp_path, name="prompts"):
    dst = tmp_path / name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.md"))
    return dst


def check_json(cli, *args, cwd):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", *args, cwd=cwd)
    assert r.code in (0, 1), r.err
    return r.json()


def plain(directory, name, values, filters=None, tests=None, globals_=None):
    env = Environment(loader=FileSystemLoader(str(directory)))
    env.filters.update(filters or {})
    env.tests.update(tests or {})
    env.globals.update(globals_ or {})
    return env.get_template(name).render(**values)


def base_render(path, root, jinja=None):
    """promptlint's base render of ``path`` (its samples file, the rest inferred)."""
    from promptlint.render import load_template, render
    from promptlint.scenarios import samples_path_for
    from promptlint.scenarios.infer import template_scenario

    loaded = load_template(path, "jinja2", [root], source=path.read_text(), jinja=jinja)
    scenario = template_scenario(loaded, path.read_text(), samples_path_for(path))
    return render(loaded, scenario.values()).text


def lost(shared, ideal, prompt):
    return min(ideal, prompt - 1) // B - min(shared, prompt - 1) // B


# ---------------------------------------------------------------- item 4: filters, tests, globals

GATEWAY = {
    "account": {"plan": "enterprise", "number": "AC-20931"},
    "request_body": {"path": "/v1/orders", "method": "POST", "body": {"sku": "TENT-2P", "qty": 1}},
    "question": "Why does the gateway answer 401 for this request?",
}
GATEWAY_SAMPLES = """
[variables]
account = { plan = "enterprise", number = "AC-20931" }
question = { value = "Why does the gateway answer 401 for this request?", kind = "per-request", variant = "Is 429 retryable?" }

[variables.request_body]
value = { path = "/v1/orders", method = "POST", body = { sku = "TENT-2P", qty = 1 } }
kind = "per-request"
variant = { path = "/v2/returns", method = "PUT", body = {} }
"""


def test_unknown_filters_tests_and_a_clock_global_render_zero_config(tmp_path, cli, qwen):
    d = copy(COMPUTED, tmp_path)
    (d / "gateway_agent.samples.toml").write_text(GATEWAY_SAMPLES)
    doc = check_json(cli, d / "gateway_agent.j2", cwd=tmp_path)
    assert doc["errors"] == []
    (note,) = [f for f in doc["findings"] if f["code"] == "PL101"]
    assert note["severity"] == "info" and note["line"] == 2
    for name in ("`masked_account`", "`input_signature`", "`enterprise_account`", "`current_time()`"):
        assert name in note["message"]

    # zero-config stand-ins: filters return their input, the test is false, `current_time()` (its
    # words say time) returns a time that changes per request
    def render(t):
        return plain(COMPUTED, "gateway_agent.j2", GATEWAY,
                     filters={"masked_account": lambda v: v, "input_signature": lambda v: v},
                     tests={"enterprise_account": lambda v: False},
                     globals_={"current_time": lambda: t})

    base, later = render("2025-03-14 09:26:53"), render("2025-03-14 09:27:00")
    other = plain(COMPUTED, "gateway_agent.j2", {**GATEWAY, "question": "Is 429 retryable?",
                                                 "request_body": {"path": "/v2/returns", "method": "PUT", "body": {}}},
                  filters={"masked_account": lambda v: v, "input_signature": lambda v: v},
                  tests={"enterprise_account": lambda v: False},
                  globals_={"current_time": lambda: "2025-03-14 09:26:53"})
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert f["variable"] == "current_time()" and f["line"] == 2
    assert f["evidence"]["base_render"] == base and f["evidence"]["variant_render"] == later
    b, v, q = (qwen.encode(t, add_special_tokens=False).ids for t in (base, later, other))
    s, ideal = shared_prefix(b, v), shared_prefix(b, q)
    t = f["first_divergent_token"]
    assert t["index"] == s and (t["base_id"], t["variant_id"]) == (b[s], v[s])
    assert (f["shared_tokens"], f["ideal_shared_tokens"], f["prompt_tokens"]) == (s, ideal, len(v))
    assert f["lost_blocks"] == lost(s, ideal, len(v)) > 0


def test_declared_stand_ins_replace_the_assumed_ones(tmp_path, cli, qwen):
    d = copy(COMPUTED, tmp_path)
    (d / "gateway_agent.samples.toml").write_text(GATEWAY_SAMPLES)
    (tmp_path / "promptlint.toml").write_text(
        "[jinja]\n"
        'filters = { input_signature = "json-sorted", masked_account = "text" }\n'
        'tests = { enterprise_account = "true" }\n'
        'globals = { current_time = "empty" }\n'
    )
    doc = check_json(cli, d / "gateway_agent.j2", cwd=tmp_path)
    assert [f for f in doc["findings"] if f["code"] in ("PL101", "M101")] == []  # all declared, no clock
    base = plain(COMPUTED, "gateway_agent.j2", GATEWAY,
                 filters={"input_signature": lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False),
                          "masked_account": lambda v: "sample masked_account text"},
                 tests={"enterprise_account": lambda v: True}, globals_={"current_time": lambda: ""})
    declared = {"filters": {"input_signature": "json-sorted", "masked_account": "text"},
                "tests": {"enterprise_account": "true"}, "globals": {"current_time": "empty"}}
    assert base_render(d / "gateway_agent.j2", tmp_path, declared) == base
    assert '{"body": {"qty": 1, "sku": "TENT-2P"}, "method": "POST", "path": "/v1/orders"}' in base


def test_helper_objects_and_results_of_stand_ins_render_zero_config(tmp_path, cli, qwen):
    # Applications pass modules and helpers (`datetime`, `uuid`, `helpers`) and functions returning
    # objects (`now()` a datetime, `get_customer()` a record): the template goes on calling methods
    # and reading fields of what they return. Each is a stand-in (PL101), a time or id one is varied,
    # and nothing is reported as E004.
    d = copy(COMPUTED, tmp_path)
    doc = check_json(cli, d / "helper_objects.j2", cwd=tmp_path)
    assert doc["errors"] == [] and not [f for f in doc["findings"] if f["code"].startswith("E")]
    (note,) = [f for f in doc["findings"] if f["code"] == "PL101"]
    for name in ("`now()`", "`helpers.policy_version()`", "`uuid.uuid4()`", "`datetime.utcnow()`", "`get_customer()`"):
        assert name in note["message"]
    m101 = {f["variable"]: f for f in doc["findings"] if f["code"] == "M101"}
    assert set(m101) == {"now()", "uuid.uuid4()", "datetime.utcnow()"}
    assert (m101["uuid.uuid4()"]["line"], m101["datetime.utcnow()"]["line"]) == (5, 5)

    # the application's real objects: a datetime clock (the documented base time, then 7 s later),
    # an id object with `.hex`, helpers returning text
    from datetime import datetime, timedelta
    from types import SimpleNamespace

    def render(now, question="How do I reset my password?"):
        return plain(COMPUTED, "helper_objects.j2", {"question": question}, globals_={
            "now": lambda: now,
            "datetime": SimpleNamespace(utcnow=lambda: datetime(2025, 3, 14, 9, 26, 53)),
            "uuid": SimpleNamespace(uuid4=lambda: SimpleNamespace(hex="req7f3c9a2e41")),
            "helpers": SimpleNamespace(policy_version=lambda: "sample helpers.policy_version text"),
            "get_customer": lambda: SimpleNamespace(display_name="sample get_customer.display_name text"),
        })

    t0 = datetime(2025, 3, 14, 9, 26, 53)
    base, later, other = render(t0), render(t0 + timedelta(seconds=7)), render(t0, "Where is my order #4417?")
    assert "Session started 2025-03-14 09:26." in base and "opened 2025-03-14T09:26:53." in base
    f = m101["now()"]
    assert f["line"] == 2 and f["evidence"]["base_render"] == base and f["evidence"]["variant_render"] == later
    b, v, q = (qwen.encode(t, add_special_tokens=False).ids for t in (base, later, other))
    s, ideal = shared_prefix(b, v), shared_prefix(b, q)
    assert f["first_divergent_token"]["index"] == s
    assert f["lost_blocks"] == lost(s, ideal, len(v)) > 0


def test_a_stand_in_kind_that_does_not_fit_its_role_is_a_configuration_error(tmp_path, cli):
    (tmp_path / "promptlint.toml").write_text('[jinja]\ntests = { premium = "json" }\n')
    (tmp_path / "p.j2").write_text("Hi {{ name }}\n")
    r = cli("check", "p.j2", cwd=tmp_path)
    assert r.code == 2
    assert "jinja.tests.premium" in r.err and "true" in r.err and "Traceback" not in r.err


# ---------------------------------------------------------------- item 3: computed includes


def test_include_names_resolve_from_the_files_beside_the_includer(tmp_path, cli):
    d = copy(COMPUTED, tmp_path)
    doc = check_json(cli, d, cwd=tmp_path)
    assert not [e for e in doc["errors"] if e["code"] in ("E001", "E002", "E004")], doc["errors"]

    # policy_filename -> policy_returns.j2 (the first of the two files its words match)
    base = base_render(d / "policy_agent.j2", tmp_path)
    assert "Returns policy: items may be returned within 30 days" in base and "Shipping policy" not in base
    assert base_render(d / "unresolved.j2", tmp_path).startswith("You are the onboarding assistant.\n\nNew hire question: ")
    # an include input nothing resolves renders empty, with one note naming it and the fix
    (note,) = [f for f in doc["findings"] if f["code"] == "PL101" and f["path"].endswith("unresolved.j2")]
    assert note["line"] == 2 and "`section_name`" in note["message"] and "include-choices" in note["message"]


def test_include_choices_in_the_samples_file_win_and_every_choice_must_render(tmp_path, cli):
    d = copy(COMPUTED, tmp_path)
    (d / "policy_agent.samples.toml").write_text('[include-choices]\npolicy_filename = ["policy_shipping.j2", "missing_policy.j2"]\n')
    text = base_render(d / "policy_agent.j2", tmp_path)
    assert "Shipping policy: standard orders ship" in text and "Returns policy" not in text
    doc = check_json(cli, d / "policy_agent.j2", cwd=tmp_path)
    (e,) = doc["errors"]
    assert e["code"] == "E002" and "missing_policy.j2" in e["message"]


def test_a_default_in_the_template_names_the_include(tmp_path, cli):
    d = copy(COMPUTED, tmp_path)
    text = base_render(d / "persona_picker.j2", tmp_path)
    assert text.startswith("You are a patient, precise research assistant.")


def test_an_error_in_an_included_file_is_reported_once_naming_every_includer(tmp_path, cli):
    d = copy(BROKEN, tmp_path)
    r = cli("check", "--output-format", "json", "--no-cache", d, cwd=tmp_path)
    assert r.code == 1
    (e,) = r.json()["errors"]
    assert (e["code"], e["path"], e["line"]) == ("E001", "prompts/guardrails.j2", 2)
    assert e["notes"] == ["included by prompts/billing_agent.j2, prompts/triage_agent.j2"]


def test_includes_stay_inside_the_project_root(tmp_path, cli):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_policy.j2").write_text("CANARY-7731\n")
    d = tmp_path / "project"
    d.mkdir()
    (d / "promptlint.toml").write_text("")
    (d / "agent.j2").write_text("{% include policy_file %}\nQ: {{ question }}\n")
    (d / "agent.samples.toml").write_text('[include-choices]\npolicy_file = ["../outside/secret_policy.j2"]\n')
    r = cli("check", "--output-format", "json", "--no-cache", "--evidence", "agent.j2", cwd=d)
    assert "CANARY-7731" not in r.out
    assert [e["code"] for e in r.json()["errors"]] == ["E002"]
