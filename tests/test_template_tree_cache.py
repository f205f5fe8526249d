"""A template's Jinja parse tree is kept in the user cache (render/tree_cache.py), beside its generated code.

A load of the same text in a fresh environment, as the next run makes, takes the kept tree instead of
lexing and parsing it again, and everything the parse did is done the same: the same tree (node for
node), the same Jinja tokens charged to the environment's budget (a text over a smaller budget is
refused from the kept tree as its parse would be), the same stand-ins for an application's own filters,
the same render. A damaged or foreign entry (its HMAC), or one naming anything but Jinja's node classes,
is not used; nothing is kept without a secret or under ``PYTHONDONTWRITEBYTECODE``.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path

import pytest
from jinja2 import nodes

from promptlint.render import Limits, RenderError, code_cache, load_template, render, tree_cache
from promptlint.render import environments
from test_template_code_cache import cache  # noqa: F401 - the fixture: a user cache with its secret, no parse memo

TEMPLATE = """You are the assistant of {{ shop | shop_name }}.
{% for rule in rules if rule %}- {{ rule | upper }}{{ loop.index }}
{% else %}no rules{% endfor %}{% if note is defined and note %}Note: {{ note ~ "!" }}
{% endif %}{% set pair = (1, 2.5, none, true) %}{{ pair[1] }} Question: {{ question }}
"""
INCLUDING = TEMPLATE + '{% include "part.txt" %}'  # an Include node sets its attributes before its fields
VALUES = {"shop": "Nordwind", "rules": ["be brief", "cite the policy"], "note": "", "question": "Where is my order?"}
CHAT = ("{% for m in messages %}{% generation %}<|im_start|>{{ m['role'] }}\n{{ m['content'] | trim }}<|im_end|>\n"
        "{% endgeneration %}{% if loop.last %}{% break %}{% endif %}{% endfor %}")


def _trees(cache: Path):
    top = cache / "promptlint" / tree_cache.KIND
    return sorted(p for p in top.rglob("*") if p.is_file()) if top.exists() else []


def _parsed(monkeypatch):
    """Count the texts Jinja's parser runs for (from here on), each load in a new process's state."""
    calls = []
    original = environments.HardenedSandbox._parse

    def counting(self, source, name, filename):
        calls.append(name)
        return original(self, source, name, filename)

    monkeypatch.setattr(environments.HardenedSandbox, "_parse", counting)
    return calls


def _load(tmp_path, text=TEMPLATE, **kw):
    path = tmp_path / "prompt.j2"
    path.write_text(text, encoding="utf-8")
    (tmp_path / "part.txt").write_text("Answer briefly.\n", encoding="utf-8")
    return load_template(path, **kw)


def _fresh(monkeypatch):
    """What a new process starts with: no trees in memory."""
    monkeypatch.setattr(environments, "PARSED", environments.ParsedTrees())


def test_a_second_load_takes_the_kept_tree_and_renders_the_same(tmp_path, cache, monkeypatch):
    first = _load(tmp_path, INCLUDING)
    before = render(first, VALUES)
    assert before.text.endswith("Answer briefly.")
    assert len(_trees(cache)) == 2  # the template and its include
    parsed = _parsed(monkeypatch)
    _fresh(monkeypatch)
    second = _load(tmp_path, INCLUDING)
    assert parsed == []  # the kept tree: nothing lexed or parsed
    assert render(second, VALUES).text == before.text
    text = (tmp_path / "prompt.j2").read_text(encoding="utf-8")
    assert second.env.parse(text) == first.env.parse(text)  # node for node (Jinja's node equality)
    assert second.env.tokens_used == first.env.tokens_used > 0  # the same budget charged
    assert second.env.stubbed.keys() == first.env.stubbed.keys() == {("filters", "shop_name")}  # the same stand-ins
    kept, parsed = second.env.parse(text), first.env.parse(text)
    assert all(n.environment is second.env for n in kept.find_all(nodes.Node))
    # every node as the parser built it: the same attributes, in the same order
    assert [list(n.__dict__) for n in kept.find_all(nodes.Node)] == [list(n.__dict__) for n in parsed.find_all(nodes.Node)]


def test_a_chat_template_with_extension_tags_is_kept_too(tmp_path, cache, monkeypatch):
    env = environments.make_environment("transformers")
    first = env.parse(CHAT)
    parsed = _parsed(monkeypatch)
    _fresh(monkeypatch)
    again = environments.make_environment("transformers")
    assert again.parse(CHAT) == first
    assert parsed == []
    messages = [{"role": "user", "content": " Hi "}, {"role": "assistant", "content": "Hello"}]
    assert again.from_string(CHAT).render(messages=messages) == env.from_string(CHAT).render(messages=messages)


def test_the_kept_tree_counts_against_the_token_budget(tmp_path, cache, monkeypatch):
    """A text that fit under the default budget is refused under a smaller one, kept or not."""
    first = _load(tmp_path)
    tokens = first.env.tokens_used
    parsed = _parsed(monkeypatch)
    _fresh(monkeypatch)
    with pytest.raises(RenderError) as refused:
        _load(tmp_path, limits=Limits(max_template_tokens=tokens - 1))
    assert parsed == []  # refused from the kept tree, as lexing it would have been
    assert refused.value.code == "E006"


def test_a_damaged_foreign_or_unknown_entry_is_not_used(tmp_path, cache, monkeypatch):
    _load(tmp_path)
    (entry,) = _trees(cache)
    data = bytearray(entry.read_bytes())
    data[-1] ^= 0x01
    entry.write_bytes(bytes(data))
    parsed = _parsed(monkeypatch)
    _fresh(monkeypatch)
    assert render(_load(tmp_path), VALUES).text.startswith("You are the assistant of ")
    assert parsed == ["prompt.j2"]
    # an entry made under another secret (another user, another machine) is not used either
    (cache / "promptlint" / "secret").write_text(os.urandom(32).hex(), encoding="utf-8")
    monkeypatch.setattr(code_cache, "_SECRETS", {})
    _fresh(monkeypatch)
    _load(tmp_path)
    assert parsed == ["prompt.j2", "prompt.j2"]
    # an entry under this secret that names a class outside jinja2.nodes is not built
    (entry,) = _trees(cache)
    kept = code_cache.read_entry(entry.name, tree_cache.KIND)
    assert kept is not None
    tokens, stored = kept
    forged = (stored[0], "Environment") + stored[2:]
    code_cache.write_entry(entry.name, (tokens, forged), tree_cache.KIND)
    _fresh(monkeypatch)
    _load(tmp_path)
    assert parsed == ["prompt.j2"] * 3
    assert marshal.loads(entry.read_bytes()[32:])[1][1] == "Template"  # rewritten by that parse


def test_nothing_is_kept_under_dont_write_bytecode_or_without_a_secret(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _load(tmp_path)
    assert _trees(cache) == []
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (cache / "promptlint" / "secret").unlink()
    monkeypatch.setattr(code_cache, "_SECRETS", {})
    _fresh(monkeypatch)
    _load(tmp_path)
    assert _trees(cache) == []


def test_a_syntax_error_is_not_kept(tmp_path, cache):
    with pytest.raises(RenderError) as refused:
        _load(tmp_path, "{% for x in %}")
    assert refused.value.code == "E001"
    assert _trees(cache) == []
