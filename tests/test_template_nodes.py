"""The M204 analysis asks several questions of one chat template's AST (the reasoning field it reads,
whether it splits or switches off `<think>`, the lines under a `loop.last` test): they filter one list of
the tree's nodes (checks/history_causes.nodes_of), gathered in one walk in Jinja's ``find_all`` order,
not one walk of Jinja's nested generators each. Checked on every template of the corpus."""

from __future__ import annotations

from pathlib import Path

from jinja2 import nodes

from promptlint.checks import history_causes
from promptlint.checks.history_causes import loop_last_lines, nodes_of, parse

CHAT_TEMPLATES = Path(__file__).parent / "data" / "chat_templates"


def test_the_nodes_of_a_template_are_find_alls_in_its_order():
    texts = [p.read_text(encoding="utf-8") for p in sorted(CHAT_TEMPLATES.glob("*.jinja"))]
    assert len(texts) >= 20
    for text in texts:
        ast = parse(text)
        assert nodes_of(text) == tuple(ast.find_all(nodes.Node))  # the same nodes (identical objects), in order
    assert nodes_of("{% for x in %}") == ()  # does not parse


def test_questions_of_one_template_walk_its_tree_once(monkeypatch):
    text = (CHAT_TEMPLATES / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
    from promptlint.checks import history_not_prefix_stable as m204

    for cached in (nodes_of, loop_last_lines, m204.reasoning_field, m204._splits_think, m204._switches_think_off):
        cached.cache_clear()
    walks = []
    original = nodes.Node.find_all

    def counted(self, node_type):
        if isinstance(self, nodes.Template):
            walks.append(node_type)
        return original(self, node_type)

    monkeypatch.setattr(nodes.Node, "find_all", counted)
    assert m204.reasoning_field(text) == "reasoning_content"
    assert m204._splits_think(text) is True
    m204._switches_think_off(text)
    assert loop_last_lines(text)
    assert walks == []  # none of them walked the whole tree itself
    assert history_causes.nodes_of.cache_info().misses == 1
