"""The Python code Jinja generates for a template is kept in the user cache (render/code_cache.py).

A second load of the same template, in a fresh environment as the next run makes, takes the kept code
instead of generating it again, and everything the generation did is done the same: the render's text
and source map (template, line and literal-ness of every chunk), the undeclared names the recording
generator collected, the generated-code budget. What is not the same text, environment or code is
generated afresh: another template text, another filter set, a damaged or foreign entry (its HMAC),
no kept secret; nothing is written under ``-B``/``PYTHONDONTWRITEBYTECODE``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from promptlint.render import Limits, RenderError, code_cache, load_template, render
from promptlint.render import environments
from promptlint.render.environments import LintEnvironment

TEMPLATE = """You are the assistant of {{ shop }}.
{% for rule in rules %}- {{ rule | upper }}
{% endfor %}{% if note %}Note: {{ note }}
{% endif %}Question: {{ question }}
"""
VALUES = {"shop": "Nordwind", "rules": ["be brief", "cite the policy"], "note": "", "question": "Where is my order?"}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A user cache with its secret (as the result cache keeps it), bytecode writes allowed, no memo of the
    parse trees another test made (each load here parses, as a new process does)."""
    from promptlint.project.cache import machine_secret

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(code_cache, "_SECRETS", {})
    machine_secret()
    monkeypatch.setattr(environments, "PARSED", environments.ParsedTrees())
    return tmp_path / "user-cache"


def _entries(cache: Path):
    top = cache / "promptlint" / "templates"
    return sorted(p for p in top.rglob("*") if p.is_file()) if top.exists() else []


def _load(tmp_path, text=TEMPLATE, **kw):
    path = tmp_path / "prompt.j2"
    path.write_text(text, encoding="utf-8")
    return load_template(path, **kw)


def _generated(monkeypatch):
    """Count the templates the code generator runs for (from here on)."""
    calls = []
    original = LintEnvironment._generate

    def counting(self, source, name, filename, defer_init=False):
        calls.append(name)
        return original(self, source, name, filename, defer_init=defer_init)

    monkeypatch.setattr(LintEnvironment, "_generate", counting)
    return calls


def _chunks(rendered):
    return [(c.start, c.end, c.template, c.kind, c.line, c.source_start, c.source_end) for c in rendered.sourcemap.chunks]


def test_a_second_load_takes_the_kept_code_and_renders_the_same(tmp_path, cache, monkeypatch):
    first = _load(tmp_path)
    before = render(first, VALUES)
    assert len(_entries(cache)) == 1
    generated = _generated(monkeypatch)
    monkeypatch.setattr(environments, "PARSED", environments.ParsedTrees())
    second = _load(tmp_path)
    assert generated == []  # the kept code
    after = render(second, VALUES)
    assert after.text == before.text == (
        "You are the assistant of Nordwind.\n- BE BRIEF\n- CITE THE POLICY\nQuestion: Where is my order?")
    assert _chunks(after) == _chunks(before)
    # the names the recording generator collected while compiling, as jinja2.meta finds them
    assert second.undeclared() == first.undeclared() == frozenset({"shop", "rules", "note", "question"})
    assert second.env.compiled_chars == first.env.compiled_chars > 0


def test_another_text_or_another_filter_set_is_generated_afresh(tmp_path, cache, monkeypatch):
    _load(tmp_path)
    generated = _generated(monkeypatch)
    _load(tmp_path, TEMPLATE.replace("Question:", "Asked:"))
    assert generated == ["prompt.j2"]
    # declaring a filter the template uses changes the code Jinja generates for it (a known filter, not a stand-in)
    _load(tmp_path, jinja={"filters": {"shout": "static"}})
    assert generated == ["prompt.j2", "prompt.j2"]
    assert len(_entries(cache)) == 3


def test_a_damaged_or_foreign_entry_is_not_used(tmp_path, cache, monkeypatch):
    _load(tmp_path)
    (entry,) = _entries(cache)
    data = bytearray(entry.read_bytes())
    data[-1] ^= 0x01
    entry.write_bytes(bytes(data))
    generated = _generated(monkeypatch)
    again = _load(tmp_path)
    assert generated == ["prompt.j2"]
    assert render(again, VALUES).text.endswith("Question: Where is my order?")
    # an entry made under another secret (another user, another machine) is not used either
    (cache / "promptlint" / "secret").write_text(os.urandom(32).hex(), encoding="utf-8")
    monkeypatch.setattr(code_cache, "_SECRETS", {})
    _load(tmp_path)
    assert generated == ["prompt.j2", "prompt.j2"]


def test_nothing_is_written_under_dont_write_bytecode_or_without_a_secret(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _load(tmp_path)
    assert _entries(cache) == []
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (cache / "promptlint" / "secret").unlink()
    monkeypatch.setattr(code_cache, "_SECRETS", {})
    _load(tmp_path)
    assert _entries(cache) == []


def test_the_kept_code_counts_against_the_generated_code_budget(tmp_path, cache, monkeypatch):
    """A template whose code fit under the default budget is refused under a smaller one, kept or not."""
    first = _load(tmp_path)
    size = first.env.compiled_chars
    generated = _generated(monkeypatch)
    with pytest.raises(RenderError) as refused:
        _load(tmp_path, limits=Limits(max_compiled_chars=size - 1))
    assert generated == []  # refused from the kept entry, as generating it would have been
    assert refused.value.code == "E006" or "compiled" in refused.value.message


def test_over_the_cap_the_oldest_half_goes_before_the_first_write(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(code_cache, "MAX_ENTRIES", 4)
    monkeypatch.setattr(code_cache, "_PRUNED", set())
    _load(tmp_path)
    (entry,) = _entries(cache)
    directory = entry.parent
    for i in range(4):  # older than the entry, oldest first
        old = directory / f"old{i}"
        old.write_bytes(b"x")
        os.utime(old, ns=(10**9 * (i + 1), 10**9 * (i + 1)))
    os.utime(entry, ns=(10**9 * 10, 10**9 * 10))
    monkeypatch.setattr(code_cache, "_PRUNED", set())
    _load(tmp_path, TEMPLATE.replace("Question:", "Asked:"))  # a miss: one write, after counting 5 entries
    names = {p.name for p in _entries(cache)}
    # 5 counted: the 2 oldest removed, then the new entry written
    assert "old0" not in names and "old1" not in names and {"old2", "old3", entry.name} <= names and len(names) == 4


def test_a_linked_entry_directory_is_not_written_through(tmp_path, cache, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    top = cache / "promptlint" / "templates"
    top.mkdir(parents=True)
    tag_dir = top / code_cache._state()[1].rsplit(os.sep, 1)[1]
    tag_dir.symlink_to(elsewhere, target_is_directory=True)
    render(_load(tmp_path), VALUES)  # renders as before; the entry is not kept
    assert list(elsewhere.iterdir()) == []
