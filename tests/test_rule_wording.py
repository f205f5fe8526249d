"""Wording and word lists are data: M204's messages come from rules/M204.toml, and the words that
classify input names from promptlint/data/name_words.toml (no rule file holds them)."""

from __future__ import annotations

from conftest import QWEN, REPO

from promptlint.base import registry
from promptlint.base.toml_io import toml_loads

RETRIEVED_BEFORE_HISTORY = """You are the support assistant for Acme Outdoor Gear. Answer questions about orders, shipping and returns politely and precisely, and cite the policy you rely on.
Relevant excerpts:
{{ context }}
{% for m in history %}{{ m.role }}: {{ m.content }}
{% endfor %}
user: {{ question }}
assistant:
"""


def test_m204_says_what_its_rule_file_says(tmp_path, monkeypatch):
    """The rule file's [data.wording] is what the finding reads: change the file's text (here its
    parsed table) and the message, the cause note and the variant change with it."""
    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint

    wording = registry.get("M204").data["wording"]
    monkeypatch.setitem(wording, "message", "grown history differs ({cause}) at token {shared}")
    monkeypatch.setitem(wording["application"], "cause-note", "because {cause}")
    monkeypatch.setitem(wording["application"], "variant", "one more turn")
    (tmp_path / "t.j2").write_text(RETRIEVED_BEFORE_HISTORY, encoding="utf-8")
    result = lint([str(tmp_path / "t.j2")], Settings(tokenizer=str(QWEN), root=tmp_path), use_cache=False)
    (f,) = [f for f in result.findings if f.code == "M204"]
    assert f.cause == "changed-input" and f.variable == "context" and f.line == 3
    assert f.message == f"grown history differs (changed-input) at token {f.first_divergent_token.index}"
    assert f.notes[:2] == ("variant: one more turn", "because changed-input")


def test_the_name_words_are_data_of_their_own():
    from promptlint.scenarios.names import NAME_WORDS, name_patterns

    m101 = toml_loads((REPO / "rules" / "M101.toml").read_text(encoding="utf-8"))
    assert set(m101["data"]) == {"wording"}  # M101's own wording only
    words = toml_loads(NAME_WORDS.read_text(encoding="utf-8"))
    assert [r["sub-kind"] for r in words["roles"]] == ["id", "timestamp", "date", "history", "retrieved", "retrieved", "input"]
    patterns = name_patterns()
    assert [(r.kind, r.sub_kind) for r in patterns.roles][:3] == [("volatile", "id"), ("volatile", "timestamp"),
                                                                  ("volatile", "date")]
    # the classification the lists give (docs/configuration.md's examples)
    assert patterns.kind_of("currentDateTime") == ("volatile", "timestamp")
    assert patterns.kind_of("request_id") == ("volatile", "id")
    assert patterns.classify("chat_history").kind == "per-request"
    assert patterns.classify("include_follow_up_questions").kind == "static"  # a switch
    assert patterns.classify("max_messages").kind == "static"
