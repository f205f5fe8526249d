"""The forwarding client's guessed root (daemon/client.guess_root, `verify`): a check finds its
project's daemon without parsing TOML, and the daemon answers only a request whose exact root
(client.project, run by the daemon on the request's directory) is its own. Where the guess is
wrong, the check finds the root exactly, as before, and prints what an in-process run prints.
Real daemons, real subprocesses (the fixtures of test_daemon.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from test_daemon import TIMEOUT, env, run, start, status  # noqa: F401 - env is the fixture

from import_probe import imported, probe

from promptlint.daemon import client

PROBE = probe("check", "--output-format", "concise", "--", "prompts")


def test_the_guess_is_the_closest_directory_that_could_configure_promptlint(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.promptlint]\nblock_size = 16\n", encoding="utf-8")
    assert client.guess_root(str(root / "pkg" / "sub")) == str(root)
    # a pyproject.toml that never names promptlint cannot configure it: the walk goes on up
    (root / "pkg" / "pyproject.toml").write_text('[project]\nname = "pkg"\n', encoding="utf-8")
    assert client.guess_root(str(root / "pkg" / "sub")) == str(root)
    # one that names it anywhere (here only as a dependency) is a guess the daemon must confirm
    (root / "pkg" / "pyproject.toml").write_text('[project]\ndependencies = ["promptlint-kv"]\n', encoding="utf-8")
    assert client.guess_root(str(root / "pkg" / "sub")) == str(root / "pkg")
    # a quoted key may spell the table with escapes: any backslash makes the file a candidate
    (root / "pkg" / "pyproject.toml").write_text('[tool."prompt\\u006Cint"]\n', encoding="utf-8")
    assert client.guess_root(str(root / "pkg" / "sub")) == str(root / "pkg")
    # promptlint.toml always configures it, whatever it holds
    (root / "pkg" / "sub" / "promptlint.toml").write_text("", encoding="utf-8")
    assert client.guess_root(str(root / "pkg" / "sub")) == str(root / "pkg" / "sub")


def test_a_pyproject_that_is_a_link_or_not_a_file_is_never_read_by_the_guess(tmp_path):
    """A repository may commit pyproject.toml as a link to a FIFO (a read would wait for a writer
    forever), a device or /proc: the guess opens only a regular file that is not a link, without
    waiting, and counts anything else as a candidate for the daemon's exact rule to decide."""
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (root / "sub" / "pyproject.toml").symlink_to(fifo)
    assert client.guess_root(str(root / "sub")) == str(root / "sub")  # returned, without blocking
    (root / "sub" / "pyproject.toml").unlink()
    (root / "sub" / "pyproject.toml").symlink_to("/dev/zero")
    assert client.guess_root(str(root / "sub")) == str(root / "sub")
    (root / "sub" / "pyproject.toml").unlink()
    (root / "sub" / "pyproject.toml").write_bytes(b"#" * (client.GUESS_READ + 1))  # too long to read: a candidate
    assert client.guess_root(str(root / "sub")) == str(root / "sub")
    (root / "sub" / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    assert client.guess_root(str(root / "sub")) != str(root / "sub")  # a regular file never naming promptlint: skipped


def test_the_daemon_confirms_only_its_own_root(tmp_path):
    root = (tmp_path / "repo").resolve()
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.promptlint]\n", encoding="utf-8")
    (root / "pkg" / "pyproject.toml").write_text('[project]\ndependencies = ["promptlint-kv"]\n', encoding="utf-8")
    assert client.verified(root, str(root / "pkg"))  # the exact rule skips pkg's file: the root is repo
    assert not client.verified(root / "pkg", str(root / "pkg"))  # the guess pkg is wrong
    (root / "pyproject.toml").write_text("[tool.promptlint]\ndaemon = true\n", encoding="utf-8")
    assert not client.verified(root, str(root / "pkg"))  # the client must print the note: it goes the exact way


def test_a_forwarded_check_at_the_guessed_root_parses_no_toml(env):
    _, before = start(env)
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=env["root"], capture_output=True, text=True,
                       env=env["env"], timeout=TIMEOUT)
    assert r.returncode == 1 and "M101" in r.stdout, r.stderr
    modules = imported(r.stderr)
    assert [m for m in modules if m in ("tomllib", "pathlib", "promptlint.project.config_file")] == []
    assert [m for m in modules if m in ("json", "re", "enum")] == []  # the headers through _json (daemon/wire.py)
    assert status(env)[1] == before + 1  # the daemon answered it


def test_a_wrong_guess_is_rerouted_and_the_check_prints_what_it_printed_before(env):
    """Whatever daemon listens at the guessed root's socket, it answers only a request whose exact
    root is its own. Here a directory whose pyproject.toml names promptlint only as a dependency has
    a daemon (started for that directory); the exact rule skips that file, so a check run there
    belongs to the configuration above it. The daemon declines (its request count stays 0) and the
    check prints what an in-process run prints (no daemon for the real root; none started for a pipe)."""
    base = env["root"].parent / "standalone"
    (base / "prompts").mkdir(parents=True)
    (base / "pyproject.toml").write_text('[project]\nname = "app"\ndependencies = ["promptlint-kv"]\n', encoding="utf-8")
    (base / "prompts" / "ask.j2").write_text(
        "{{ now }} You are a support agent for Acme. Answer politely and keep every answer short, point to the "
        "help-centre article that covers the question, never promise a refund or a delivery date.\n{{ question }}\n",
        encoding="utf-8")
    code = ("import json, sys\nfrom pathlib import Path\nfrom promptlint.daemon import client\n"
            "print(json.dumps(client.start(Path(sys.argv[1]))))")
    r = subprocess.run([sys.executable, "-c", code, str(base.resolve())], capture_output=True, text=True,
                       env=env["env"], timeout=TIMEOUT)
    started = json.loads(r.stdout)
    env["pids"].add(started["pid"])
    assert started["root"] == str(base.resolve()) and client.guess_root(str(base.resolve())) == str(base.resolve())
    direct = run(env, "check", "--no-daemon", "--no-cache", "--output-format", "concise", cwd=base)
    through = run(env, "check", "--no-cache", "--output-format", "concise", cwd=base)
    assert through == direct and direct[0] == 1 and b"prompts/ask.j2:1:" in direct[1]
    ask = ("import json, sys\nfrom pathlib import Path\nfrom promptlint.daemon import client\n"
           "print(json.dumps(client.status(Path(sys.argv[1]))))")
    r = subprocess.run([sys.executable, "-c", ask, str(base.resolve())], capture_output=True, text=True,
                       env=env["env"], timeout=TIMEOUT)
    assert json.loads(r.stdout)["requests"] == 0  # asked (verify) and declined: it answered nothing


def test_one_environment_spelled_two_ways_shares_its_daemon(env):
    """`python -m promptlint` and the `promptlint` script (whose shebang names `python3`) of one
    environment are one installation: a daemon started by one answers the other."""
    _, before = start(env)
    here = os.path.dirname(sys.executable)
    spelled = [os.path.join(here, n) for n in ("python3", "python") if os.path.join(here, n) != sys.executable]
    spelled = [p for p in spelled if os.path.exists(p)]
    assert spelled  # a virtualenv has both names
    r = subprocess.run([spelled[0], "-m", "promptlint", "check", "--output-format", "concise", "--", "prompts"],
                       cwd=env["root"], capture_output=True, text=True, env=env["env"], timeout=TIMEOUT)
    assert r.returncode == 1 and "M101" in r.stdout, r.stderr
    assert status(env)[1] == before + 1  # answered by the daemon `python -m promptlint` started
