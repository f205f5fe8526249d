"""M101 end to end: exact token indices and block counts, checked against a direct encode."""

from __future__ import annotations

import textwrap

from conftest import QWEN, shared_prefix

BODY = " ".join(["The assistant must follow the refund policy carefully and answer with care."] * 60)


def write(tmp_path, name, text, samples=None):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    if samples is not None:
        (tmp_path / (name.rsplit(".", 1)[0] + ".samples.toml")).write_text(textwrap.dedent(samples), encoding="utf-8")
    return p


def test_timestamp_first_reports_token_19_and_lost_blocks(tmp_path, cli, qwen):
    write(tmp_path, "system.j2", "Current time: {{ now }}\n" + BODY + "\nQuestion: {{ question }}\n")
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--evidence", tmp_path / "system.j2")
    assert r.code == 1, r.err
    doc = r.json()
    (f,) = doc["findings"]
    assert (f["code"], f["line"], f["column"], f["end_column"], f["variable"]) == ("M101", 1, 15, 24, "now")

    # The renders promptlint claims, rebuilt here by hand.
    base = f"Current time: 2025-03-14 09:26:53\n{BODY}\nQuestion: How do I reset my password?"
    variant = f"Current time: 2025-03-14 09:27:00\n{BODY}\nQuestion: How do I reset my password?"
    other_q = f"Current time: 2025-03-14 09:26:53\n{BODY}\nQuestion: Where is my order #4417?"
    assert f["evidence"]["base_render"] == base
    assert f["evidence"]["variant_render"] == variant

    b = qwen.encode(base, add_special_tokens=False).ids
    v = qwen.encode(variant, add_special_tokens=False).ids
    q = qwen.encode(other_q, add_special_tokens=False).ids
    s = shared_prefix(b, v)
    ideal = shared_prefix(b, q)
    # Qwen splits digits one by one: Current, ' time', ':', ' ', 2,0,2,5,-,0,3,-,1,4,' ',0,9,':',2 | '6' vs '7'
    assert s == 19
    t = f["first_divergent_token"]
    assert (t["index"], t["base_text"], t["variant_text"]) == (19, "6", "7")
    assert (t["base_id"], t["variant_id"]) == (b[19], v[19])
    assert t["char_offset"] == len("Current time: 2025-03-14 09:2")
    P = len(v)
    assert f["prompt_tokens"] == P and f["shared_tokens"] == 19 and f["ideal_shared_tokens"] == ideal
    assert f["eligible_blocks"] == 1  # floor(19 / 16)
    assert f["ideal_eligible_blocks"] == min(ideal, P - 1) // 16
    assert f["lost_blocks"] == min(ideal, P - 1) // 16 - 1
    assert f["lost_tokens"] == f["lost_blocks"] * 16


def test_timestamp_after_shared_material_is_clean(tmp_path, cli):
    write(tmp_path, "clean.j2", BODY + "\nQuestion: {{ question }}\nCurrent time: {{ now }}\n")
    r = cli("check", "--tokenizer", QWEN, tmp_path / "clean.j2")
    assert r.code == 0, r.out
    assert "All checks passed (1 file)." in r.out


def test_no_per_request_input_means_ideal_is_whole_prompt(tmp_path, cli, qwen):
    # 64 identical one-token words after the date: the ideal shared prefix is P.
    write(tmp_path, "t.j2", "{{ today }}\n" + " hello" * 64)
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", tmp_path / "t.j2")
    (f,) = r.json()["findings"]
    base = qwen.encode("2025-03-14\n" + " hello" * 64, add_special_tokens=False).ids
    assert len(qwen.encode(" hello" * 64, add_special_tokens=False).ids) == 64  # one token per word
    # 2025-03-14 -> 2025-03-15: digits 2,0,2,5,-,0,3,-,1 shared -> S = 9
    assert f["shared_tokens"] == 9
    P = len(base)
    assert f["prompt_tokens"] == P == 10 + 1 + 64
    assert f["ideal_shared_tokens"] == P
    assert f["ideal_eligible_blocks"] == (P - 1) // 16 == 4
    assert f["lost_blocks"] == 4
    assert "`today` changes daily" in f["message"]


def test_block_size_and_engine_change_the_arithmetic(tmp_path, cli):
    write(tmp_path, "t.j2", "{{ today }}\n" + " hello" * 64)
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--engine", "sglang", tmp_path / "t.j2")
    (f,) = r.json()["findings"]
    # page size 1: eligible 9 now, ideal P - 1 = 74 -> 65 lost
    assert (f["block_size"], f["eligible_blocks"], f["ideal_eligible_blocks"], f["lost_blocks"]) == (1, 9, 74, 65)
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--block-size", "32", tmp_path / "t.j2")
    (f,) = r.json()["findings"]
    assert (f["block_size"], f["eligible_blocks"], f["ideal_eligible_blocks"], f["lost_blocks"]) == (32, 0, 2, 2)


def test_volatile_in_included_template_points_at_the_include(tmp_path, cli):
    (tmp_path / "header.j2").write_text("Request {{ request_id }}\n", encoding="utf-8")
    write(tmp_path, "main.j2", '{% include "header.j2" %}' + BODY + "\nUser: {{ question }}\n")
    r = cli("check", "--tokenizer", QWEN, "--output-format", "concise", tmp_path / "main.j2", cwd=tmp_path)
    assert r.code == 1
    assert r.out.startswith("header.j2:1:9: M101 `request_id` changes on every request"), r.out


def test_a_finding_in_an_extended_layout_names_the_template_it_was_measured_in(tmp_path, cli):
    # the layout alone and the child extending it are two renders with different figures: one
    # finding at the layout's line (issue 32: no duplicate annotations), the layout's own figures,
    # naming the child and carrying the child's render's figures as a note
    (tmp_path / "layout.j2").write_text("Today is {{ today }}.\n" + BODY + "\n{% block body %}{% endblock %}\n", encoding="utf-8")
    write(tmp_path, "child.j2", '{% extends "layout.j2" %}{% block body %}' + BODY + "\nUser: {{ question }}{% endblock %}")
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "child.j2", "layout.j2", cwd=tmp_path)
    found = [(f["path"], f["notes"]) for f in r.json()["findings"] if f["code"] == "M101"]
    assert len(found) == 1 and found[0][0] == "layout.j2"
    notes = found[0][1]
    assert "included by child.j2" in notes
    via = [n for n in notes if n.startswith("in the render of")]
    assert len(via) == 1 and via[0].startswith("in the render of child.j2: `today` changes daily")


def test_full_output_has_excerpt_token_pair_arithmetic_and_help(tmp_path, cli):
    write(tmp_path, "system.j2", "Current time: {{ now }}\n" + BODY + "\nQuestion: {{ question }}\n")
    r = cli("check", "--tokenizer", QWEN, "system.j2", cwd=tmp_path)
    lines = r.out.splitlines()
    assert lines[0].startswith("system.j2:1:15: M101 `now` changes on every request and precedes the shared prompt: ")
    assert "1 | Current time: {{ now }}" in r.out
    assert "  |               ^^^^^^^^^" in r.out
    assert "first divergent token #19: '6' vs '7'" in r.out
    assert "vllm, block 16: eligible 1 block now," in r.out
    assert "help: move `now` after the shared material, or make it coarser (date, not time)" in r.out
    assert "\x1b[" not in r.out  # no colour when not a TTY


def test_variables_diverging_at_different_tokens_are_both_reported(tmp_path, cli):
    write(tmp_path, "t.j2", "Stamp {{ now ~ request_id }}\n" + BODY + "\nQuestion: {{ question }}\n")
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", tmp_path / "t.j2")
    by_var = {f["variable"]: f for f in r.json()["findings"]}
    # request_id is rendered after now: its variant diverges later, so it is its own finding
    assert set(by_var) == {"now", "request_id"}
    assert by_var["now"]["shared_tokens"] < by_var["request_id"]["shared_tokens"]


def test_variables_diverging_at_the_same_token_collapse_into_one_finding(tmp_path, cli, qwen):
    # "hel" + "lo" renders "hello", one Qwen token; changing either part changes token 0
    write(tmp_path, "t.j2", "{{ a }}{{ b }}\n" + BODY + "\nQuestion: {{ question }}\n",
          samples='[variables]\na = { value = "hel", kind = "volatile", sub-kind = "id", variant = "jel" }\n'
                  'b = { value = "lo", kind = "volatile", sub-kind = "id", variant = "ps" }\n')
    assert qwen.encode("hello\n").tokens[0] == "hello"
    assert qwen.encode("jello\n").ids[0] != qwen.encode("hello\n").ids[0]
    assert qwen.encode("helps\n").ids[0] != qwen.encode("hello\n").ids[0]
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", tmp_path / "t.j2")
    (f,) = [f for f in r.json()["findings"] if f["code"] == "M101"]
    assert f["variable"] == "a" and f["first_divergent_token"]["index"] == 0
    assert any(n.startswith("also diverges at this token: M101") and "`b`" in n for n in f["notes"]), f["notes"]
