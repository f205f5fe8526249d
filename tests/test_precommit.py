"""The pre-commit hook, for real: pre-commit runs this repository's hook definition on a git repo.

The hook is the one in .pre-commit-hooks.yaml, every key as written (entry, files, types,
require_serial), run by pre-commit as a `repo: local` hook with `language: system` against the
promptlint installed in this interpreter: no network, no virtualenv built per test session.
Needs git and pre-commit (the `test` extra); neither is optional for this suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from integration_helpers import BAD, GOOD, QWEN, REPO

pytestmark = pytest.mark.slow  # a real end-to-end run (docs/architecture.md, "Tests")

MANIFEST = REPO / ".pre-commit-hooks.yaml"


def git(cwd, *args, env=None):
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def pre_commit_cmd():
    import pre_commit  # noqa: F401  (the `test` extra: a missing one fails, never skips)

    return [sys.executable, "-m", "pre_commit"]


def local_hook_config() -> str:
    """.pre-commit-config.yaml running the manifest's hook through this interpreter's promptlint."""
    import yaml

    (hook,) = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert hook["entry"].startswith("promptlint ")
    hook = dict(hook, language="system", entry=f"{sys.executable} -m {hook['entry']}")
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}, sort_keys=False)


@pytest.fixture(scope="module")
def hook_env(tmp_path_factory):
    assert shutil.which("git"), "the pre-commit tests need git"
    base = tmp_path_factory.mktemp("precommit")
    env = dict(os.environ)
    env.update(
        PRE_COMMIT_HOME=str(base / "home"),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=str(base / "gitconfig"),  # no user git config (hooks, signing) leaks in
    )
    (base / "gitconfig").write_text("", encoding="utf-8")
    env.pop("PROMPTLINT_DEBUG", None)
    env.pop("PYTHONPATH", None)  # the hook must run the installed package, not this checkout
    # under pre-commit a person gets a daemon by default; these runs test the hook, and leave no
    # process behind (tests/test_hostile_processes.py starts and stops the default one)
    env["PROMPTLINT_DAEMON"] = "0"
    work = base / "work"
    work.mkdir()
    git(work, "init", "-q", env=env)
    (work / ".pre-commit-config.yaml").write_text(local_hook_config(), encoding="utf-8")
    # paths in promptlint.toml are relative to it; an absolute path is kept as is
    (work / "promptlint.toml").write_text(
        f'tokenizer = "{QWEN.resolve().as_posix()}"\nexclude = ["vendor/"]\n', encoding="utf-8"
    )
    (work / "vendor").mkdir()
    (work / "vendor" / "upstream.j2").write_text(BAD, encoding="utf-8")  # excluded: must never fail the hook
    (work / "notes.md").write_text("not a template\n", encoding="utf-8")
    (work / "app.py").write_text("def main():\n    print('hello')\n", encoding="utf-8")  # passed to the hook, clean
    return work, env


def run_hooks(work, env):
    git(work, "add", "-A", env=env)
    git(work, "commit", "-q", "--no-verify", "-m", "update", env=env)
    assert git(work, "status", "--porcelain", env=env) == ""
    r = subprocess.run(
        pre_commit_cmd() + ["run", "--all-files", "--color", "never"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    status = git(work, "status", "--porcelain", "--ignored", env=env)
    # The result cache ignores itself (its own .gitignore holds `*`), as ruff's does; nothing else may appear.
    assert (work / ".promptlint_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    status = "".join(l + "\n" for l in status.splitlines() if l != "!! .promptlint_cache/")
    return r, status


def test_hook_fails_on_early_timestamp_and_passes_when_fixed(hook_env):
    work, env = hook_env
    prompts = work / "prompts"
    prompts.mkdir(exist_ok=True)
    (prompts / "support.j2").write_text(BAD, encoding="utf-8")
    r, status = run_hooks(work, env)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "promptlint" in out and "Failed" in out
    assert "prompts/support.j2:1:15: M101" in out, out
    assert "vendor/upstream.j2" not in out  # --force-exclude applied the config's exclude
    assert status == "", status  # the hook wrote nothing into the repository

    (prompts / "support.j2").write_text(GOOD, encoding="utf-8")
    r, status = run_hooks(work, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Passed" in r.stdout
    assert status == "", status


def test_file_names_are_never_taken_as_options(hook_env):
    # Issue 15 item 3: committed files named like options. Before `--` ended the hook's options,
    # `--config=evil.j2` (which ignores every rule) made the hook pass and `-dash.j2` failed with exit 2.
    work, env = hook_env
    prompts = work / "prompts"
    prompts.mkdir(exist_ok=True)
    (prompts / "support.j2").write_text(BAD, encoding="utf-8")
    (work / "--config=evil.j2").write_text('ignore = ["M", "E"]\n', encoding="utf-8")
    (work / "-dash.j2").write_text(GOOD, encoding="utf-8")
    try:
        r, _ = run_hooks(work, env)
        out = r.stdout + r.stderr
        assert r.returncode == 1, out
        assert "prompts/support.j2:1:15: M101" in out, out
        assert "usage:" not in out and "error:" not in out, out
    finally:
        (work / "--config=evil.j2").unlink()
        (work / "-dash.j2").unlink()
        (prompts / "support.j2").write_text(GOOD, encoding="utf-8")


def test_hook_manifest_matches_the_documented_files():
    import re

    text = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    # `--` ends the options: pre-commit appends file names, and a file named `--config=x` is a file
    assert re.search(r"^  entry: promptlint check --force-exclude --$", text, re.M)
    assert "types: [text]" in text and "require_serial: true" in text
    files = re.search(r"files: '([^']+)'", text).group(1)
    rx = re.compile(files)
    for name in ("a.j2", "d/a.jinja", "a.jinja2", "x/y.prompt", "app.py", "tokenizer_config.json",
                 "m/chat_template.jinja", "m/tokenizer_config.json"):
        assert rx.search(name), name
    for name in ("README.md", "data.json", "my_tokenizer_config.json", "a.j2.bak", "x.pyc"):
        assert not rx.search(name), name
