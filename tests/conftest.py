"""Shared fixtures: real tokenizers from tests/data, an in-process CLI runner."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent
QWEN = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"
MISTRAL = DATA / "tokenizers" / "mistral-v3-spm" / "tokenizer.json"


@pytest.fixture(scope="session")
def _sealed_basetemp(tmp_path_factory):
    """An empty promptlint.toml at the root of every test's temp dir: configuration discovery
    stops there, so a promptlint.toml or pyproject.toml above (in /tmp, $HOME, ...) never changes
    a result. A test that writes its own config in its tmp_path still finds that one first."""
    base = tmp_path_factory.getbasetemp()
    (base / "promptlint.toml").write_text("# tests: stop configuration discovery here\n", encoding="utf-8")
    return base


@pytest.fixture(scope="session")
def _fast_tokenizer_forms(tmp_path_factory):
    """One directory of compact tokenizer forms (promptlint.fastbpe) for the session: each
    tokenizer is proven and formed once, not once per test's fresh user cache."""
    return tmp_path_factory.mktemp("fast-tokenizers")


@pytest.fixture(autouse=True)
def _hermetic(_sealed_basetemp, _fast_tokenizer_forms, tmp_path_factory, monkeypatch):
    """Every test starts in a directory of its own (never the checkout, so no `.promptlint_cache/`
    lands there), with its own user cache and configuration directories (the cache's machine
    secret; the user-level daemon switch) and none of the variables that change promptlint's
    behaviour."""
    home = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(home)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".user-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".user-config"))  # never the user's own config.toml (daemon = true)
    monkeypatch.setenv("PROMPTLINT_FAST_TOKENIZER_DIR", str(_fast_tokenizer_forms))
    for name in ("PROMPTLINT_DEBUG", "PROMPTLINT_DAEMON", "NO_COLOR", "FORCE_COLOR", "CI", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    from promptlint.project import cache

    monkeypatch.setattr(cache, "_SECRET", [])


@pytest.fixture(scope="session")
def qwen():
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(QWEN))


@pytest.fixture(scope="session")
def mistral():
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(MISTRAL))


class Result:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err

    def json(self):
        return json.loads(self.out)


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run `promptlint ARGS` in-process; returns Result(code, stdout, stderr). One process
    (PROMPTLINT_JOBS=1): tests observe the run through this process's functions; forked workers
    are tested in tests/test_parallel.py."""
    from promptlint.cli import main

    monkeypatch.setenv("PROMPTLINT_JOBS", "1")

    def run(*args, cwd=None):
        if cwd is not None:
            monkeypatch.chdir(cwd)
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:  # argparse errors and --version
            code = e.code
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


@pytest.fixture(scope="session")
def _resident_workspace():
    from promptlint.driver.workspace import Workspace
    from promptlint.project.config import Settings

    return Workspace(Settings(), resident=True)


@pytest.fixture
def check_in_memory(_resident_workspace, monkeypatch):
    """Run `promptlint check ARGS` in this process through one resident ``Workspace`` shared by the
    whole test run (the daemon's path, ``cli.serve_check``): its tokenizer pool parses each tokenizer
    once per run instead of once per test. Returns Result(code, stdout, stderr)."""
    import io
    import os

    from promptlint.cli import serve_check
    from promptlint.commands.check import Console

    def run(*args, cwd):
        monkeypatch.chdir(cwd)
        out, err = io.StringIO(), io.StringIO()
        code = serve_check(["check", *map(str, args)], Console(out, err, io.BytesIO()), _resident_workspace, dict(os.environ))
        return Result(code, out.getvalue(), err.getvalue())

    return run


def shared_prefix(a, b):
    """Independent of promptlint.arithmetic.compare: the test's own longest common prefix."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
