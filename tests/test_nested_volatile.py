"""Fields of a record that change per request (`session.id`, `ctx.trace_id`, `meta.generated_at`,
`item["timestamp"]`, `request.received_at`) are volatile inputs named by their path, classified by
the same words as an input; the record's other fields stay as they are.

Renders are rebuilt with plain Jinja and the values the test states; figures come from a direct
`tokenizers` encode of those renders.
"""

from __future__ import annotations

from jinja2 import Environment

from conftest import QWEN, shared_prefix

B = 16
POLICY = (
    "You are the support assistant for Acme Corporation. Answer questions about orders, shipping and "
    "returns politely and precisely. Always cite the relevant policy section. Never invent order numbers.\n"
)
T0, T7 = "2025-03-14 09:26:53", "2025-03-14 09:27:00"  # the documented base time, 7 s later
ID0, ID1 = "7f3c9a2e-4b1d-4e8a-9c6f-2d5e8b1a0c34", "c1a9e4d2-8f3b-4a7c-b5e6-9d0f1e2a3b4c"


def check_json(cli, path, cwd, *args):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", *args, path, cwd=cwd)
    assert r.code in (0, 1), r.err
    return r.json()


def lost(shared, ideal, prompt):
    return min(ideal, prompt - 1) // B - min(shared, prompt - 1) // B


def test_volatile_fields_of_records_are_measured_at_their_tags(tmp_path, cli, qwen):
    src = (
        "Session {{ session.id }}, trace {{ ctx.trace_id }}, generated {{ meta.generated_at }}, "
        'seen {{ item["timestamp"] }}, channel {{ session.channel }}\n' + POLICY + "Question: {{ question }}\n"
    )
    (tmp_path / "p.j2").write_text(src)
    doc = check_json(cli, tmp_path / "p.j2", tmp_path)
    m101 = {f["variable"]: f for f in doc["findings"] if f["code"] == "M101"}
    assert set(m101) == {"session.id", "ctx.trace_id", "meta.generated_at", "item.timestamp"}
    line = src.splitlines()[0]
    for name, tag in (("session.id", "{{ session"), ("ctx.trace_id", "{{ ctx"), ("meta.generated_at", "{{ meta"),
                      ("item.timestamp", "{{ item")):
        assert (m101[name]["line"], m101[name]["column"]) == (1, line.index(tag) + 1), name

    values = {"session": {"id": ID0, "channel": "sample session.channel"}, "ctx": {"trace_id": ID0},
              "meta": {"generated_at": T0}, "item": {"timestamp": T0}, "question": "How do I reset my password?"}
    render = lambda **changed: Environment().from_string(src).render({**values, **changed})  # noqa: E731
    base, other = render(), render(question="Where is my order #4417?")
    variants = {"session.id": render(session={**values["session"], "id": ID1}), "ctx.trace_id": render(ctx={"trace_id": ID1}),
                "meta.generated_at": render(meta={"generated_at": T7}), "item.timestamp": render(item={"timestamp": T7})}
    b, q = (qwen.encode(t, add_special_tokens=False).ids for t in (base, other))
    ideal = shared_prefix(b, q)
    for name, later in variants.items():
        f = m101[name]
        assert f["evidence"]["base_render"] == base and f["evidence"]["variant_render"] == later, name
        v = qwen.encode(later, add_special_tokens=False).ids
        s = shared_prefix(b, v)
        assert f["first_divergent_token"]["index"] == s and f["lost_blocks"] == lost(s, ideal, len(v)) > 0, name


def test_a_requests_own_time_is_volatile_while_its_question_is_the_per_request_start(tmp_path, cli, qwen):
    # `request` is the per-request input; its `received_at` is not content: the ideal request changes
    # the question and keeps the time, so the time is charged up to the question
    src = "Received {{ request.received_at }}.\n" + POLICY + "Question: {{ request.question }}\n"
    (tmp_path / "p.j2").write_text(src)
    doc = check_json(cli, tmp_path / "p.j2", tmp_path)
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert f["variable"] == "request.received_at" and (f["line"], f["column"]) == (1, 10)
    render = lambda t, q: Environment().from_string(src).render(request={"received_at": t, "question": q})  # noqa: E731
    q0, q1 = "Can I change the delivery address?", "Do you ship to Canada?"  # a record's question samples
    base, later, other = render(T0, q0), render(T7, q0), render(T0, q1)
    assert f["evidence"]["base_render"] == base and f["evidence"]["variant_render"] == later
    b, v, q = (qwen.encode(t, add_special_tokens=False).ids for t in (base, later, other))
    s, ideal = shared_prefix(b, v), shared_prefix(b, q)
    assert (f["shared_tokens"], f["ideal_shared_tokens"]) == (s, ideal)
    assert f["lost_blocks"] == lost(s, ideal, len(v)) > 0


def test_the_samples_file_of_nested_fields_gives_the_same_findings(tmp_path, cli):
    src = "Last login {{ user.last_login_at }} for {{ user.name }}\n" + POLICY + "Question: {{ question }}\n"
    (tmp_path / "p.j2").write_text(src)
    before = check_json(cli, tmp_path / "p.j2", tmp_path)["findings"]
    r = cli("samples", "--write", "p.j2", cwd=tmp_path)
    assert r.code == 0, r.err
    written = (tmp_path / "p.samples.toml").read_text()
    assert '[variables."user.last_login_at"]' in written and 'kind = "volatile"' in written
    after = check_json(cli, tmp_path / "p.j2", tmp_path)["findings"]
    key = lambda fs: [(f["code"], f.get("variable"), f["line"], f["column"], f.get("lost_blocks")) for f in fs]  # noqa: E731
    assert key(after) == key(before) and ("M101", "user.last_login_at", 1, 12, key(before)[0][4]) in key(before)
