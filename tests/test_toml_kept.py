"""Configuration texts parsed once (base/toml_io.kept_loads): a JSON copy in the user's cache named
for the text's digest answers every later read of the same bytes, so a warm check never imports
tomllib; other bytes, a text JSON cannot hold and a text that does not parse go through tomllib
every time; the copies are bounded. Real files, real subprocesses for the end-to-end case."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO
from import_probe import imported, probe

from promptlint.base import toml_io

CONFIG = '[tool.promptlint]\nblock-size = 32\nexclude = ["vendor/**"]\nrender-timeout = 2.5\nserving = "chat"\n'


@pytest.fixture
def parses(monkeypatch):
    seen = []
    real = toml_io.toml_loads
    monkeypatch.setattr(toml_io, "toml_loads", lambda text: seen.append(text) or real(text))
    return seen


def test_the_same_bytes_are_parsed_once_and_give_the_same_table(parses):
    first = toml_io.kept_loads(CONFIG)
    assert first == {"tool": {"promptlint": {"block-size": 32, "exclude": ["vendor/**"], "render-timeout": 2.5, "serving": "chat"}}}
    assert toml_io.kept_loads(CONFIG) == first
    assert len(parses) == 1  # the second read came from the copy
    other = CONFIG.replace("32", "64")
    assert toml_io.kept_loads(other)["tool"]["promptlint"]["block-size"] == 64
    assert len(parses) == 2  # one byte changed: parsed afresh


def test_a_date_or_an_invalid_text_is_parsed_every_time(parses):
    dated = "[tool.promptlint]\nsince = 2026-12-03\n"
    assert str(toml_io.kept_loads(dated)["tool"]["promptlint"]["since"]) == "2026-12-03"
    toml_io.kept_loads(dated)
    assert len(parses) == 2  # JSON cannot hold a date: no copy
    for _ in range(2):
        with pytest.raises(ValueError, match="line 2"):
            toml_io.kept_loads("[tool.promptlint]\nblock_size = = 3\n")
    assert len(parses) == 4


def test_the_copies_are_bounded(monkeypatch):
    monkeypatch.setattr(toml_io, "KEPT_TEXTS", 3)
    for n in range(6):
        toml_io.kept_loads(f"[tool.promptlint]\nblock_size = {16 * (n + 1)}\n")
    folder = os.path.join(os.environ["XDG_CACHE_HOME"], "promptlint", "toml")
    assert len([n for n in os.listdir(folder) if n.startswith("text-")]) == 3


PROBE = probe("check", "--no-daemon", "--output-format", "concise")


def test_a_warm_check_imports_no_toml_parser(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG.replace("vendor/**", "build/**"), encoding="utf-8")
    (tmp_path / "ask.j2").write_text(  # a real M101: more than a block of shared instructions follows `now`
        "{{ now }} You are a support agent for Acme. Answer politely and keep every answer short, point to the "
        "help-centre article that covers the question, never promise a refund or a delivery date.\n{{ question }}\n",
        encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    runs = [subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout and "ask.j2:1:" in runs[0].stdout, runs[0].stderr
    modules = [imported(r.stderr) for r in runs]
    assert "tomllib" in modules[0] and "tomllib" not in modules[1]
