"""Shared fixtures: real tokenizers from tests/data, an in-process CLI runner."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent
QWEN = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"
MISTRAL = DATA / "tokenizers" / "mistral-v3-spm" / "tokenizer.json"
OUTER_FORMS_ENV = "TESTS_OUTER_FAST_TOKENIZER_DIR"  # set by a test that runs the suite's own tests in a subprocess


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
    tokenizer is proven and formed once, not once per test's fresh user cache. Under xdist the
    workers share it (the session's common temp root): a form is written whole by one rename,
    so a worker reads a form another proved, or proves it itself if it comes first."""
    outer = os.environ.get(OUTER_FORMS_ENV)
    if outer:  # a test run a test started (tests/test_new_rule.py): the outer run's proven forms
        return Path(outer)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        shared = tmp_path_factory.getbasetemp().parent / "fast-tokenizers"
        shared.mkdir(exist_ok=True)
        return shared
    return tmp_path_factory.mktemp("fast-tokenizers")


@pytest.fixture(scope="session", autouse=True)
def _shared_chat_tokenizers(tmp_path_factory):
    """The stand-in tokenizer files tests/chat_helpers.py derives (special tokens added, a BOS
    post-processor: a parse and a save of a 150k vocabulary each, 0.3-2.8 s) made once per test run
    in a directory the xdist workers share, as the compact forms above; the same bytes either way."""
    import chat_helpers

    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "chat-tokenizers"
        shared.mkdir(exist_ok=True)
    else:
        shared = tmp_path_factory.mktemp("chat-tokenizers")
    chat_helpers.SHARED_DIR = shared
    yield
    chat_helpers.SHARED_DIR = None


class _SessionParses:
    """Each tokenizer content parsed once per test process, not once per test: wraps
    ``tokens._parse`` (the one place a tokenizer is loaded) with a memo by content sha256, so the
    ~1,500 in-process commands of the suite share the parse their fresh ``Workspace`` would repeat.
    Safe because nothing mutates a parsed tokenizer (special-token copies are new objects of their own),
    and a hit still reads and vets the file as a load without a compact form would. Every pool
    still counts the parse it asked for. Tests about loading itself opt out with
    ``@pytest.mark.real_tokenizer_parse``."""

    KEEP = 6  # distinct tokenizers held (a parsed 150k-vocabulary tokenizer is ~100 MB)

    def __init__(self, parse):
        from collections import OrderedDict

        self.parse, self.memo, self.on = parse, OrderedDict(), True

    def __call__(self, sha, spec, text):
        if not self.on:
            return self.parse(sha, spec, text)
        key = (sha, spec.path is None)
        if key in self.memo:
            if spec.path is not None:
                text()  # the reads and the vetting of a load without a compact form
            self.memo.move_to_end(key)
            return self.memo[key]
        got = self.memo[key] = self.parse(sha, spec, text)
        while len(self.memo) > self.KEEP:
            self.memo.popitem(last=False)
        return got


class _SessionLlamaCpp:
    """The llama.cpp encoder of each tokenizer content built once per test process: building it
    serializes the pinned tokenizer, rewrites the JSON and parses it again (seconds for a 151k
    vocabulary), and every in-process command's fresh pool would repeat that. Safe for the reasons
    above: an encoder's state is its construction plus memo tables of pure functions, and objects a
    pool handed out stay usable after it forgets them. Off with the parse memo."""

    KEEP = 3  # each holds a parsed tokenizer of its own

    def __init__(self, build, parses):
        from collections import OrderedDict

        self.build, self.parses, self.memo = build, parses, OrderedDict()

    def __call__(self, pinned):
        if not self.parses.on:
            return self.build(pinned)
        key = (pinned.sha256, pinned.spec.path is None)
        if key not in self.memo:
            self.memo[key] = self.build(pinned)
            while len(self.memo) > self.KEEP:
                self.memo.popitem(last=False)
        self.memo.move_to_end(key)
        return self.memo[key]


@pytest.fixture(scope="session")
def _session_parses():
    from promptlint.tokenization import engine_tokenize, tokens

    memo = tokens._parse = _SessionParses(tokens._parse)
    engine_tokenize._build_llamacpp = _SessionLlamaCpp(engine_tokenize._build_llamacpp, memo)
    yield memo
    tokens._parse = memo.parse
    engine_tokenize._build_llamacpp = engine_tokenize._build_llamacpp.build


@pytest.fixture(autouse=True)
def _parse_policy(request, _session_parses):
    _session_parses.on = request.node.get_closest_marker("real_tokenizer_parse") is None
    yield
    _session_parses.on = True


@pytest.fixture
def quiet_heap():
    """The heap earlier tests of this worker left (parsed tokenizers, transformers' vocabularies kept for
    the session) kept out of the garbage collector for one test: a full collection of it takes a good
    part of a second, and a render's CPU-time limit counts it when it happens to run during the render.
    For tests whose subject is a short render limit (a 0.5 s E006 against a recursion error); objects
    made during the test are collected as usual."""
    import gc

    # No collection before the freeze: a full one is the very cost this avoids (~1.5 s a test on a
    # worker's late heap); garbage frozen with the rest is collectable again after the test.
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


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
def small_template_caps(monkeypatch):
    """The Jinja-token and generated-Python caps at a hundredth of the product's (2,000 tokens,
    30,000 characters) for the whole in-process run: a cap test refuses a hundredth of the input
    through the same paths (a Limits and an environment read ``promptlint.render.caps`` when made).
    tests/test_hostile.py proves the real caps on real-size input."""
    from promptlint.render import caps

    monkeypatch.setattr(caps, "MAX_TEMPLATE_TOKENS", 2_000)
    monkeypatch.setattr(caps, "MAX_COMPILED_CHARS", 30_000)


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

