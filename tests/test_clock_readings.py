"""Clock modules read in a template (`time.time()`, `date.today()`, `datetime.utcnow()`) are
volatile stand-ins, and a time used as a number (`| int`, arithmetic) is its Unix epoch, so the
per-request change survives the conversion and M101 fires.

Renders are rebuilt with plain Jinja and the application's real kind of object (a `time` module
whose `time()` returns the epoch); token figures come from a direct `tokenizers` encode.
"""

from __future__ import annotations

from types import SimpleNamespace

from jinja2 import Environment

from conftest import QWEN, shared_prefix

B = 16
POLICY = (
    "You are the support assistant for Acme Corporation. Answer questions about orders, shipping and "
    "returns politely and precisely. Always cite the relevant policy section. Never invent order numbers. "
    "Keep answers short and friendly, and escalate to a human agent when the customer asks for one.\n"
)
EPOCH = 1741944413  # 2025-03-14 09:26:53 UTC, the documented base time


def check_json(cli, path, cwd):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", path, cwd=cwd)
    assert r.code in (0, 1), r.err
    return r.json()


def lost(shared, ideal, prompt):
    return min(ideal, prompt - 1) // B - min(shared, prompt - 1) // B


def test_epoch_seconds_of_a_clock_module_are_varied_through_int(tmp_path, cli, qwen):
    src = "Request start: {{ time.time() | int }}\n" + POLICY + "Question: {{ question }}\n"
    (tmp_path / "p.j2").write_text(src)
    doc = check_json(cli, tmp_path / "p.j2", tmp_path)
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert f["variable"] == "time.time()" and (f["line"], f["column"]) == (1, 16)

    def render(epoch, question="How do I reset my password?"):
        clock = SimpleNamespace(time=lambda: float(epoch))
        return Environment().from_string(src).render(time=clock, question=question)

    base, later, other = render(EPOCH), render(EPOCH + 7), render(EPOCH, "Where is my order #4417?")
    assert f["evidence"]["base_render"] == base and f["evidence"]["variant_render"] == later
    b, v, q = (qwen.encode(t, add_special_tokens=False).ids for t in (base, later, other))
    s, ideal = shared_prefix(b, v), shared_prefix(b, q)
    assert f["first_divergent_token"]["index"] == s
    assert (f["shared_tokens"], f["ideal_shared_tokens"]) == (s, ideal)
    assert f["lost_blocks"] == lost(s, ideal, len(v)) > 0


def test_clock_arithmetic_and_other_clock_modules(tmp_path, cli):
    src = (
        "{% set started = time.monotonic() %}Budget ends at {{ ((started + 30) * 1000) | round | int }}.\n"
        "Today is {{ date.today() }}; UTC {{ datetime.utcnow().isoformat() }}.\n" + POLICY + "Question: {{ question }}\n"
    )
    (tmp_path / "p.j2").write_text(src)
    doc = check_json(cli, tmp_path / "p.j2", tmp_path)
    assert not [f for f in doc["findings"] if f["code"].startswith("E")]
    m101 = {f["variable"]: (f["line"], f["column"]) for f in doc["findings"] if f["code"] == "M101"}
    # each at the `{{` of the first tag that prints its changing value
    line2 = src.splitlines()[1]
    assert m101 == {
        "time.monotonic()": (1, src.index("{{") + 1),
        "date.today()": (2, line2.index("{{ date") + 1),
        "datetime.utcnow()": (2, line2.index("{{ datetime") + 1),
    }
    (f,) = [f for f in doc["findings"] if f.get("variable") == "time.monotonic()"]
    assert f"Budget ends at {(EPOCH + 30) * 1000}." in f["evidence"]["base_render"]
    assert f"Budget ends at {(EPOCH + 37) * 1000}." in f["evidence"]["variant_render"]


def test_a_date_time_value_whose_parts_are_read_is_not_a_clock(tmp_path, cli):
    # `meeting.time()` reads a part of a stored date-time: no clock, no M101
    src = "Meeting at {{ meeting.time() }} on {{ meeting.date() }}.\n" + POLICY + "Question: {{ question }}\n"
    (tmp_path / "p.j2").write_text(src)
    doc = check_json(cli, tmp_path / "p.j2", tmp_path)
    assert [f for f in doc["findings"] if f["code"] in ("M101", "PL101") or f["code"].startswith("E")] == []


def test_a_volatile_input_used_as_a_number_is_an_epoch(tmp_path, cli, qwen):
    # `request_ts | int` and `request_ts - 60` need a number: an ISO text made `| int` 0 in both
    # requests (hazard missed) and `-` a render error (E002)
    src = "Stamp: {{ request_ts | int }}, window start {{ request_ts - 60 }}\n" + POLICY + "Question: {{ question }}\n"
    (tmp_path / "p.j2").write_text(src)
    doc = check_json(cli, tmp_path / "p.j2", tmp_path)
    assert doc["errors"] == [] and not [f for f in doc["findings"] if f["code"].startswith("E")]
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert f["variable"] == "request_ts" and (f["line"], f["column"]) == (1, 8)
    render = lambda ts, q="How do I reset my password?": Environment().from_string(src).render(request_ts=ts, question=q)  # noqa: E731
    base, later, other = render(EPOCH), render(EPOCH + 7), render(EPOCH, "Where is my order #4417?")
    assert f["evidence"]["base_render"] == base and f["evidence"]["variant_render"] == later
    b, v, q = (qwen.encode(t, add_special_tokens=False).ids for t in (base, later, other))
    s, ideal = shared_prefix(b, v), shared_prefix(b, q)
    assert f["first_divergent_token"]["index"] == s and f["lost_blocks"] == lost(s, ideal, len(v)) > 0
