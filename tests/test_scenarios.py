"""Samples files and scenario inference."""

from __future__ import annotations

from jinja2 import Environment

from promptlint.scenarios.names import name_patterns
from promptlint.scenarios import infer_scenario, volatile_variant

from conftest import DATA, QWEN


def infer(src):
    env = Environment()
    return infer_scenario(env.parse(src), env.globals, name_patterns())


def test_kinds_by_name():
    s = infer("{{ now }} {{ created_at }} {{ report_date }} {{ trace_id }} {{ question }} {{ company }}")
    kinds = {n: (v.kind, v.sub_kind) for n, v in s.variables.items()}
    assert kinds == {
        "now": ("volatile", "timestamp"),
        "created_at": ("volatile", "timestamp"),
        "report_date": ("volatile", "date"),
        "trace_id": ("volatile", "id"),
        "question": ("per-request", "input"),
        "company": ("static", None),
    }


def test_shapes_from_use():
    s = infer("{% for d in docs %}{{ d.title }}: {{ d['body'] }}{% endfor %}{{ user.name }}{% for k, v in meta.items() %}{{ k }}{% endfor %}")
    docs = s.variables["docs"].value
    assert isinstance(docs, list) and len(docs) == 2 and set(docs[0]) == {"title", "body"}
    assert set(s.variables["user"].value) == {"name"}
    assert isinstance(s.variables["meta"].value, dict)


def test_realistic_variants():
    assert volatile_variant("2025-03-14 09:26:53", "timestamp") == "2025-03-14 09:27:00"
    assert volatile_variant("2025-03-14T09:26:53Z", "timestamp") == "2025-03-14T09:27:00Z"
    assert volatile_variant("2025-12-31", "date") == "2026-01-01"
    assert volatile_variant("req-7f3c9a2e", "id") == "req-8g4d0b3f"
    assert volatile_variant("09:26", "time") == "09:27"


def test_samples_file_declares_kinds(tmp_path, cli):
    (tmp_path / "t.j2").write_text("Build {{ build }}\n" + "Shared rules of the shop. " * 40 + "\n{{ q }}", encoding="utf-8")
    (tmp_path / "t.samples.toml").write_text(
        '[variables]\nbuild = { value = "b-1042", kind = "volatile", sub-kind = "id" }\nq = { value = "Hi", kind = "per-request" }\n',
        encoding="utf-8",
    )
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", tmp_path / "t.j2")
    (f,) = r.json()["findings"]
    assert f["variable"] == "build" and f["column"] == 7


def test_invalid_samples_files_are_e003(tmp_path, cli):
    t = tmp_path / "t.j2"
    t.write_text("Hello {{ name }}", encoding="utf-8")
    cases = {
        "[variables\n": "invalid TOML",
        '[variables]\nnow = { kind = "volatile" }\n': "variables.now",
        '[variables]\nnow = { value = "x", kind = "sometimes" }\n': "'sometimes' is not one of",
        "[vars]\nx = 1\n": "unknown key `vars`",
        '[variables]\nnow = { value = "x", kind = "volatile", sub-kind = "history" }\n': "sub-kind `history` does not go with kind `volatile`",
    }
    for text, words in cases.items():
        (tmp_path / "t.samples.toml").write_text(text, encoding="utf-8")
        r = cli("check", "--tokenizer", QWEN, "--output-format", "concise", t)
        assert r.code == 1, text
        assert "t.samples.toml:1:1: E003" in r.out and words in r.out, (text, r.out)


# ---------------------------------------------------------------- kinds by role (item: names by word parts)


def test_names_are_split_into_words():
    from promptlint.scenarios import name_words

    assert name_words("currentDateTime") == ("current", "date", "time")
    assert name_words("current-date") == ("current", "date")
    assert name_words("HTTPRequestID") == ("http", "request", "id")
    assert name_words("utc_now") == name_words("utcNow") == name_words("UTC-now") == ("utc", "now")
    assert name_words("doc2_chunks") == ("doc", "2", "chunks")


def kind(name):
    c = name_patterns().classify(name)
    return c.kind, c.sub_kind


def test_time_names_by_word_parts():
    # the examples ...
    for name in ("currentDateTime", "now_utc", "timeStamp", "created", "utc_now", "createdAt"):
        assert kind(name) == ("volatile", "timestamp"), name
    for name in ("current-date", "today_str", "date_today"):
        assert kind(name) == ("volatile", "date"), name
    # ... and names that are in no list: the words decide
    for name in ("lastUpdatedAt", "published_at", "currentTimestampMs", "requestTime", "epochSeconds", "clock"):
        assert kind(name) == ("volatile", "timestamp"), name
    for name in ("todaysDate", "tomorrow", "weekday_name"):
        assert kind(name) == ("volatile", "date"), name
    for name in ("x-request-id", "traceId", "spanID", "nonce", "messageUuid", "idempotencyKey"):
        assert kind(name) == ("volatile", "id"), name
    # words that make it a setting or a constant, not a clock
    for name in ("time_zone", "timezone", "date_format", "max_time", "createdBy", "user_id", "knowledge_cutoff_date"):
        assert kind(name) == ("static", None), name


def test_retrieval_and_history_names_are_per_request():
    for name in ("context", "contexts", "documents", "docs", "retrieved", "knowledge", "search_results", "chunks",
                 "memory", "memory_variables", "retrievedPassages", "webSearchResults", "agent_scratchpad",
                 "intermediate_steps", "tool_outputs", "ragSnippets"):
        assert kind(name) == ("per-request", "retrieved"), name
    for name in ("chat_history", "history", "messages", "conversation", "turns", "priorTurns", "dialogueHistory",
                 "previous_messages", "transcript"):
        assert kind(name) == ("per-request", "history"), name
    for name in ("question", "user_question", "query", "input", "userMessage", "latest_user_input", "prompt"):
        assert kind(name) == ("per-request", "input"), name
    for name in ("system_prompt", "system_message", "max_messages", "context_window", "few_shot_examples",
                 "conversation_id", "document_format", "company", "tools"):
        assert kind(name) == ("static", None), name


def test_a_list_of_turns_is_history_whatever_its_name():
    s = infer("{% for t in dialogue_state %}{{ t.speaker }}: {{ t.text }}{% endfor %}{% for e in examples %}{{ e.role }}{% endfor %}")
    assert (s.variables["dialogue_state"].kind, s.variables["dialogue_state"].sub_kind) == ("per-request", "history")
    assert s.variables["examples"].kind == "static"  # few-shot examples are authored text


def test_samples_file_values_that_look_volatile(tmp_path):
    from promptlint.scenarios import scenario_from_samples

    data = {"variables": {
        "stamp": "2025-03-14T09:26:53Z", "day": "2025-03-14", "epoch": 1741944413, "epoch_ms": "1741944413000",
        "rid": "7f3c9a2e-4b1d-4e8a-9c6f-2d5e8b1a0c34", "company": "Acme", "year": 2025,
        "pinned": {"value": "2025-01-01", "kind": "static"},
    }}
    s = scenario_from_samples(data, tmp_path / "t.samples.toml")
    got = {n: (v.kind, v.sub_kind) for n, v in s.variables.items()}
    assert got == {
        "stamp": ("volatile", "timestamp"), "day": ("volatile", "date"), "epoch": ("volatile", "timestamp"),
        "epoch_ms": ("volatile", "timestamp"), "rid": ("volatile", "id"), "company": ("static", None),
        "year": ("static", None), "pinned": ("static", None),
    }
    assert s.variables["epoch"].variant_value() == 1741944420
    assert s.variables["epoch_ms"].variant_value() == "1741944420000"
    assert s.variables["stamp"].variant_value() == "2025-03-14T09:27:00Z"


def test_an_epoch_in_a_samples_file_is_reported_with_exact_figures(tmp_path, cli, qwen):
    from conftest import shared_prefix

    body = " ".join(["Answer with the refund policy and cite the section number."] * 30)
    (tmp_path / "t.j2").write_text("ts={{ sent }}\n" + body + "\nQ: {{ question }}", encoding="utf-8")
    (tmp_path / "t.samples.toml").write_text("[variables]\nsent = 1741944413\n", encoding="utf-8")
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", tmp_path / "t.j2")
    (f,) = r.json()["findings"]
    base = f"ts=1741944413\n{body}\nQ: How do I reset my password?"
    later = f"ts=1741944420\n{body}\nQ: How do I reset my password?"
    other = f"ts=1741944413\n{body}\nQ: Where is my order #4417?"
    b, v, q = (qwen.encode(t, add_special_tokens=False).ids for t in (base, later, other))
    s, ideal = shared_prefix(b, v), shared_prefix(b, q)
    assert (f["code"], f["variable"], f["first_divergent_token"]["index"]) == ("M101", "sent", s)
    assert f["lost_blocks"] == min(ideal, len(v) - 1) // 16 - min(s, len(v) - 1) // 16 > 0


def test_a_volatile_value_before_retrieved_text_is_charged_only_up_to_it(tmp_path, cli, qwen):
    from conftest import shared_prefix

    rules = " ".join(["Always cite the policy section you used."] * 30)
    tail = " ".join(["Escalate refunds above 500 dollars to a human agent."] * 30)
    (tmp_path / "t.j2").write_text("Now: {{ now }}\n" + rules + "\n{{ knowledge }}\n" + tail + "\nQ: {{ question }}", encoding="utf-8")
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", tmp_path / "t.j2")
    (f,) = [f for f in r.json()["findings"] if f["code"] == "M101"]
    k0 = "Refunds are issued to the original payment method within 5 business days of receiving the returned item."
    k1 = "Orders over 50 dollars ship free; express shipping costs 15 dollars and takes one to two business days."
    page = "Now: {}\n" + rules + "\n{}\n" + tail + "\nQ: {}"
    base = page.format("2025-03-14 09:26:53", k0, "How do I reset my password?")
    b = qwen.encode(base, add_special_tokens=False).ids
    v = qwen.encode(page.format("2025-03-14 09:27:00", k0, "How do I reset my password?"), add_special_tokens=False).ids
    q = qwen.encode(page.format("2025-03-14 09:26:53", k1, "Where is my order #4417?"), add_special_tokens=False).ids
    s, ideal, p = shared_prefix(b, v), shared_prefix(b, q), len(v)
    assert qwen.decode(b[:ideal]).endswith(rules + "\n")  # the ideal prefix ends where the retrieved text begins
    assert (f["shared_tokens"], f["ideal_shared_tokens"]) == (s, ideal)
    assert f["lost_blocks"] == min(ideal, p - 1) // 16 - min(s, p - 1) // 16
    assert f["lost_blocks"] < (p - 1) // 16 - min(s, p - 1) // 16  # not the blocks after `knowledge`


# ---------------------------------------------------------------- shapes from every use


def test_shapes_follow_loops_fields_and_filters():
    s = infer(
        "{% for item in chat_history %}{{ item.inputs.question }}{{ item['outputs']['answer'] }}{% endfor %}"
        "{{ tags | join(', ') }}{{ docs | length }}{% for d in docs %}{{ loop.index }} {{ d.title }}{% endfor %}"
        "{% if profile is mapping %}{{ profile.name }}{% endif %}{{ first_doc.text | upper }}"
        "{% for r in results | selectattr('score', 'gt', 0.5) %}{{ r.url }}{% endfor %}"
    )
    v = {n: var.value for n, var in s.variables.items()}
    assert [set(i) for i in v["chat_history"]] == [{"inputs", "outputs"}] * 2
    assert all(set(i["inputs"]) == {"question"} and set(i["outputs"]) == {"answer"} for i in v["chat_history"])
    assert v["tags"] == ["sample tags", "sample tags 2"]
    assert [set(d) for d in v["docs"]] == [{"title"}] * 2
    assert set(v["profile"]) == {"name"}
    assert set(v["first_doc"]) == {"text"} and isinstance(v["first_doc"]["text"], str)
    assert [r["score"] > 0.5 for r in v["results"]] == [True, True] and all("url" in r for r in v["results"])


def test_comparisons_select_the_branches():
    s = infer(
        "{% for m in messages %}{% if m.role == 'system' %}S{% elif m.role == 'user' %}U: {{ m.content }}"
        "{% elif m.role == 'assistant' %}A: {{ m.content }}{% endif %}{% endfor %}"
        "{% if mode == 'rag' %}R{% endif %}{% if retries > 3 %}many{% endif %}"
    )
    v = {n: var.value for n, var in s.variables.items()}
    assert [m["role"] for m in v["messages"]] == ["system", "user", "assistant"]  # one record per branch
    assert v["mode"] == "rag" and isinstance(v["retries"], int)


def test_macro_parameters_set_aliases_and_namespaces():
    s = infer(
        "{% macro card(doc, n=1) %}[{{ n }}] {{ doc.meta.source }}: {{ doc.body }}{% endmacro %}"
        "{% set picked = passages[:3] %}{% for p in picked %}{{ card(p, loop.index) }}{% endfor %}"
        "{% set ns = namespace(last=none) %}{% for t in turns %}{% set ns.last = t %}{% endfor %}{{ ns.last.text }}"
        "{% with first = steps[0] %}{{ first.observation }}{% endwith %}"
    )
    v = {n: var.value for n, var in s.variables.items()}
    assert [set(p) for p in v["passages"]] == [{"meta", "body"}] * 2 and set(v["passages"][0]["meta"]) == {"source"}
    assert [set(t) for t in v["turns"]] == [{"text"}] * 2
    assert isinstance(v["steps"], list) and set(v["steps"][0]) == {"observation"}
    assert set(s.variables) == {"passages", "turns", "steps"}  # aliases, parameters and namespaces are not inputs


def test_items_nested_loops_and_recursive_loops():
    s = infer(
        "{% for k, v in settings.items() %}{{ k }}={{ v.value }}{% endfor %}"
        "{% for section in handbook.sections %}{% for rule in section.rules %}{{ rule.text }}{% endfor %}{% endfor %}"
        "{% for node in tree recursive %}{{ node.label }}{% if node.children %}{{ loop(node.children) }}{% endif %}{% endfor %}"
        "{% for m in log %}{% if loop.previtem and loop.previtem.kind == m.kind %}+{% endif %}{{ m.msg }}{% endfor %}"
    )
    v = {n: var.value for n, var in s.variables.items()}
    assert all(set(x) == {"value"} for x in v["settings"].values())
    assert [set(r) for sec in v["handbook"]["sections"] for r in sec["rules"]] == [{"text"}] * 4
    assert set(v["tree"][0]) == {"label", "children"} and set(v["tree"][0]["children"][0]) == {"label", "children"}
    assert [set(m) for m in v["log"]] == [{"kind", "msg"}] * 2


def test_a_name_a_branch_may_assign_stays_an_input():
    s = infer(
        "{% if custom_tools is defined %}{% set tools = custom_tools %}{% endif %}"
        "{% for t in tools %}{{ t.name }}{% endfor %}"
        "{% if m.content.parts is defined %}{% set body = m.content.parts %}{% else %}{% set body = m.content %}{% endif %}"
        "{{ '>' + m.content }}{{ body }}"
    )
    v = {n: var.value for n, var in s.variables.items()}
    assert [set(t) for t in v["tools"]] == [{"name"}] * 2
    assert [set(t) for t in v["custom_tools"]] == [{"name"}] * 2  # the alternative the loop reads
    assert isinstance(v["m"]["content"], str)  # the text branch: `'>' + m.content`


def test_raising_branches_are_avoided():
    s = infer(
        "{% if messages[0].role == 'system' %}{{ raise_exception('no system role') }}{% endif %}"
        "{% for m in messages %}{% if m.role == 'user' %}U{% elif m.role == 'assistant' %}A{% endif %}"
        "{% if m.calls | length != 1 %}{{ raise_exception('one call only') }}{% endif %}{{ m.calls[0].id }}"
        "{% if m.code | length != 9 %}{{ raise_exception('codes have 9 characters') }}{% endif %}{{ m.code }}{% endfor %}"
        "{% set kinds = {'string': 'str', 'integer': 'int'} %}{{ kinds[field.type] }}"
    )
    v = {n: var.value for n, var in s.variables.items()}
    assert "system" not in [m["role"] for m in v["messages"]]
    assert [len(m["calls"]) for m in v["messages"]] == [1] * len(v["messages"])
    assert {len(m["code"]) for m in v["messages"]} == {9}
    assert v["field"]["type"] in ("string", "integer")


def test_datetime_methods_get_a_datetime(tmp_path):
    from datetime import datetime

    s = infer("{{ now.strftime('%Y-%m-%d') }} {{ created_at.year }}")
    assert isinstance(s.variables["now"].value, datetime) and s.variables["now"].kind == "volatile"
    assert isinstance(s.variables["created_at"].value, datetime)


CHAT = DATA / "chat_templates"


def test_real_chat_template_code_renders_with_inferred_inputs():
    """The templates in tests/data/chat_templates, rendered as application templates in a strict
    environment (an undefined value printed or iterated is an error) with only inferred inputs."""
    from promptlint.render import RenderError, load_template, render
    from promptlint.render.environments import LintUndefined
    from promptlint.scenarios import template_asts

    failed = {}
    for path in sorted(CHAT.glob("*.jinja")):
        text = path.read_text(encoding="utf-8")
        loaded = load_template(path, "transformers", [], source=text)
        loaded.env.undefined = LintUndefined
        scenario = infer_scenario(template_asts(loaded.env, loaded.env.parse(text)), loaded.env.globals, name_patterns())
        try:
            render(loaded, scenario.values())
        except RenderError as e:
            failed[path.name] = e.message
    # gpt-oss raises unless an assistant turn has content or thinking but not both: a truthiness
    # constraint across two fields that inference does not model
    assert set(failed) == {"openai-gpt-oss-120b.jinja"}, failed


def test_samples_writer_values_load_back_unchanged():
    import tomllib
    from datetime import date, datetime

    from promptlint.scenarios.writer import UnwritableValue, toml_value, toml_key

    value = {
        "text": 'quote " backslash \\ tab \t newline \n del \x7f bell \x07 é 日本',
        "nested": [{"a": [1, 2.5, True], "b": {"c": "d"}}] * 3,
        "odd key": datetime(2025, 3, 14, 9, 26, 53), "day": date(2025, 3, 14), "inf": float("inf"), "empty": {},
    }
    doc = f"{toml_key('x-y')} = {toml_value(value)}\nlong = {toml_value(['a sentence long enough to wrap the list'] * 4)}\n"
    back = tomllib.loads(doc)
    assert back["x-y"] == value and len(back["long"]) == 4
    try:
        toml_value({"a": None}, "variables.x")
    except UnwritableValue as e:
        assert "variables.x.a is null" in str(e)
    else:
        raise AssertionError("null must be refused")
