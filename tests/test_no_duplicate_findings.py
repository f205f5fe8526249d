"""No duplicate or invented findings (issue 32 family 8).

A hazard in a template that others include is one finding at its own line, listing its includers
(not once on its own and once per includer: identical annotations on one line). And M104 does not
report a merge that lies inside the text both sample values open with (two inferred histories both
beginning with "User: "): that is the samples' text merging, not the template's. Templates written
here in the style of support-desk prompt sets that share a header include, and memory-agent prompts.
"""

from __future__ import annotations

import json

from jinja2 import Environment, FileSystemLoader

from conftest import QWEN, shared_prefix

B = 16

HEADER = """\
You are the support assistant of Acme Outdoor Gear. Current time: {{ now }}.
Answer questions about orders, shipping and returns politely and precisely, and cite the policy you rely on.
Policies: refunds within 30 days of delivery; free shipping on orders over 50 dollars; gift cards never expire.
Exchanges are free within 60 days; worn items cannot be exchanged; sale items are final.
"""
CHAT = '{% include "header.j2" %}\nQuestion:\n{{ question }}\n'
EMAIL = '{% include "header.j2" %}\nWrite a reply to this customer email:\n{{ email_body }}\n'

MEMORY = """\
You are the memory-aware assistant of the Acme travel desk. Use the conversation so far to keep track of
the traveller's preferences, dates and destinations, and ask before booking anything that costs money.
Never repeat a question the traveller has already answered, and confirm every booking in one short line. Keep every answer short and friendly, and write prices in euros.
Conversation so far:
{{ chat_history }}
Assistant:
"""
# what `promptlint samples` infers for `chat_history` (asserted below): both open with "User: "
HISTORY = "User: Can I change the delivery address?\nAssistant: Yes, until the parcel leaves the warehouse."
HISTORY_VARIANT = "User: Do you ship to Canada?\nAssistant: Yes, shipping to Canada takes five to seven business days."


def lint(cli, tmp_path, *targets):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", *targets, cwd=tmp_path)
    assert r.code in (0, 1), r.err
    doc = r.json()
    assert doc["errors"] == []
    return doc["findings"]


def test_hazard_in_a_shared_include_is_one_finding_listing_its_includers(tmp_path, cli, qwen):
    for name, text in (("header.j2", HEADER), ("chat.j2", CHAT), ("email.j2", EMAIL)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    findings = lint(cli, tmp_path, ".")
    m101 = [f for f in findings if f["code"] == "M101"]
    assert [(f["path"], f["line"], f["column"], f["variable"]) for f in m101] == [("header.j2", 1, 67, "now")]
    (f,) = m101
    assert "included by chat.j2, email.j2" in f["notes"]
    assert not any(n.startswith("in the render of chat.j2, which includes") for n in f["notes"])
    # the figures are the header's own render: the clock moved by seven seconds
    env = Environment(loader=FileSystemLoader(str(tmp_path)))
    base = env.get_template("header.j2").render(now="2025-03-14 09:26:53")
    variant = env.get_template("header.j2").render(now="2025-03-14 09:27:00")
    assert f["evidence"]["base_render"] == base
    b, v = qwen.encode(base, add_special_tokens=False).ids, qwen.encode(variant, add_special_tokens=False).ids
    shared, p = shared_prefix(b, v), len(v)
    assert (f["shared_tokens"], f["prompt_tokens"], f["ideal_shared_tokens"]) == (shared, p, p)
    assert f["eligible_blocks"] == min(shared, p - 1) // B
    assert f["lost_blocks"] == (p - 1) // B - min(shared, p - 1) // B

    # linting only the includers still reports it once, at the header, naming both
    only = [f for f in lint(cli, tmp_path, "chat.j2", "email.j2") if f["code"] == "M101"]
    assert [(f["path"], f["line"]) for f in only] == [("header.j2", 1)]
    assert "included by chat.j2, email.j2" in only[0]["notes"]


def test_no_m104_for_a_merge_inside_the_samples_shared_opening(tmp_path, cli, qwen):
    (tmp_path / "memory.j2").write_text(MEMORY, encoding="utf-8")
    r = cli("samples", "memory.j2", cwd=tmp_path)
    assert r.code == 0, r.err
    assert f"value = {json.dumps(HISTORY)}" in r.out and f"variant = {json.dumps(HISTORY_VARIANT)}" in r.out
    # the premise, by a direct encode: the renders first differ at a token that starts at the space
    # inside "User: " (BPE merged " Can" / " Do"), one token before a block boundary
    env = Environment()
    base = env.from_string(MEMORY).render(chat_history=HISTORY)
    variant = env.from_string(MEMORY).render(chat_history=HISTORY_VARIANT)
    enc = qwen.encode(base, add_special_tokens=False)
    s = shared_prefix(enc.ids, qwen.encode(variant, add_special_tokens=False).ids)
    start = base.index("User: ")
    assert enc.offsets[s][0] == start + len("User:")  # inside the value, after the template's newline
    assert s % B == B - 1  # the merge would cross a block boundary: main reported 1 block lost
    assert [f for f in lint(cli, tmp_path, "memory.j2") if f["code"] == "M104"] == []
