"""Issue 27, families 1 and 7: no module a pull request commits is ever imported by a process
promptlint or its Action starts, and the daemon answers only for its own installation.

A workspace full of shadow modules (`shlex.py`, `json.py`, `pip/`, `promptlint/`, `jinja2/`,
`tokenizers.py`, `multiprocessing/`, ...), each writing a canary file when imported, is linted by
the Action's steps (action.yml, run with bash as the runner runs them), by the daemon started
with the user-level switch, by multiprocessing's spawn start and by `audit --ray`'s Ray workers;
no canary may appear. The daemon
is a user-level choice (a repository's `daemon = true` starts nothing; CI never has one), and a
client is answered only by a daemon of its own installation, which exits when its dependencies
change and holds tokenizers within its budget. Every daemon a test starts is stopped by its pid
in teardown; every wait is bounded."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import installation
from conftest import DATA, REPO
from test_baseline import CLEAN, STAMP_FIRST, git, repo
from promptlint.pools.tokenizers import active as active_pool

pytestmark = pytest.mark.slow  # a real end-to-end run (docs/architecture.md, "Tests")

if not hasattr(os, "getuid") or sys.platform == "win32":  # pragma: no cover
    pytest.skip("Unix sockets and bash", allow_module_level=True)

yaml = pytest.importorskip("yaml")
TIMEOUT = 180

# Names a committed file could shadow. (Modules Python has loaded before it looks at sys.path —
# os, sys, encodings, codecs, io, abc, site — cannot be shadowed from the working directory.)
SHADOWS = ["shlex.py", "json/__init__.py", "pip/__init__.py", "promptlint/__init__.py", "jinja2/__init__.py",
           "tokenizers.py", "multiprocessing/__init__.py", "runpy.py", "socket.py", "subprocess.py", "hashlib.py",
           "argparse.py", "tomllib.py", "struct.py", "threading.py", "pickle.py", "yaml.py"]


def plant(workspace: Path, canaries: Path) -> None:
    """Each shadow module records that it ran, then fails the import (as a hostile one need not)."""
    canaries.mkdir(exist_ok=True)
    for name in SHADOWS:
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"import os\nopen(os.path.join({str(canaries)!r}, {name.replace('/', '.')!r}), 'w').close()\n"
                        f"raise ImportError('shadow {name}')\n", encoding="utf-8")


def ran(canaries: Path) -> list:
    return sorted(p.name for p in canaries.iterdir())


@pytest.fixture(scope="module")
def python(tmp_path_factory):
    """The interpreter of an installation of the checkout under test (tests/installation.py)."""
    return installation.make(tmp_path_factory.mktemp("inst") / "venv")


# --- the Action's steps ---------------------------------------------------------------------

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))


def step(name: str) -> dict:
    [found] = [s for s in ACTION["runs"]["steps"] if s["name"] == name]
    return found


def run_step(name: str, env: dict, cwd: Path, runner: Path):
    """A `shell: bash` step as the runner runs it (env values given directly: no expressions)."""
    files = {n: runner / n.lower() for n in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT")}
    for f in files.values():
        f.write_text("", encoding="utf-8")
    script = runner / "step.sh"
    script.write_text(step(name)["run"], encoding="utf-8")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTLINT_", "PYTHON"))}
    full.update(env, RUNNER_TEMP=str(runner), GITHUB_WORKSPACE=str(cwd), GITHUB_ACTIONS="true", CI="true",
                **{k: str(v) for k, v in files.items()})
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=TIMEOUT)
    return done, files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8"), files["GITHUB_OUTPUT"].read_text(encoding="utf-8")


def test_every_python_the_action_starts_is_isolated():
    """Structural: each interpreter start in action.yml carries -I (a new step cannot forget it unseen):
    the interpreter that makes the venv ($py, $PROMPTLINT_PYTHON) and the venv's own ($vpy)."""
    scripts = "\n".join(s.get("run", "") for s in ACTION["runs"]["steps"])
    # an interpreter in command position: not an assignment (py="$X"), not a test ([ -x "$vpy" ])
    starts = [m.group(1) for m in re.finditer(r'(?<![=\w])(?<!-x )(?<!-z )"\$\{?(?:py|vpy|PROMPTLINT_PYTHON)\b[^"]*"[ \t]+(\S+)', scripts)]
    assert len(starts) >= 7, starts
    assert set(starts) == {"-I"}, starts


def test_the_run_step_imports_nothing_from_the_workspace(tmp_path, python):
    root = repo(tmp_path, CLEAN)
    base = git(root, "rev-parse", "HEAD").strip()
    (root / "prompts" / "support.j2").write_text(STAMP_FIRST, encoding="utf-8")  # the pull request's regression
    canaries = tmp_path / "canaries"
    plant(root, canaries)
    runner = tmp_path / "runner"
    runner.mkdir()
    env = {"PROMPTLINT_ARGS": "--select M101 'prompts/support.j2'", "PROMPTLINT_BASELINE": base, "PROMPTLINT_FAIL_ON": "",
           "PROMPTLINT_ANNOTATIONS": "true", "PROMPTLINT_SARIF": str(tmp_path / "out.sarif"), "PROMPTLINT_SUMMARY": "true",
           "PROMPTLINT_VENV": str(Path(python).parent.parent)}
    done, summary, outputs = run_step("Run promptlint", env, root, runner)
    assert ran(canaries) == []
    assert done.returncode == 1, done.stderr  # the real promptlint ran: the regression is found
    assert "exit-code=1" in outputs and "::warning " in done.stdout and "prompts/support.j2" in summary
    assert json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]


@pytest.mark.parametrize("version", ["0.0.0", ""])
def test_the_install_step_runs_the_real_pip(tmp_path, python, version):
    """Offline, pip cannot install anything; what matters is which pip ran: the installation's, never
    the workspace's pip/ (its canary), for both the PyPI and the action-path branch."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    canaries = tmp_path / "canaries"
    plant(workspace, canaries)
    runner = tmp_path / "runner"
    runner.mkdir()
    empty = tmp_path / "not-a-project"
    empty.mkdir()
    env = {"PROMPTLINT_VERSION": version, "PROMPTLINT_ACTION_PATH": str(empty), "PROMPTLINT_PYTHON": str(python),
           "PIP_NO_INDEX": "1", "PIP_DRY_RUN": "1"}
    done, _, _ = run_step("Install promptlint", env, workspace, runner)
    assert ran(canaries) == []
    assert done.returncode != 0
    expected = "No matching distribution found for promptlint-kv==0.0.0" if version else "Neither 'setup.py' nor 'pyproject.toml' found"
    assert expected in done.stderr, done.stderr


# --- the daemon -----------------------------------------------------------------------------


@pytest.fixture
def daemons(tmp_path):
    """A short private XDG_RUNTIME_DIR (sun_path holds 108 bytes), a user config directory, no CI
    variables; teardown stops every daemon a test started, by pid."""
    runtime = tempfile.mkdtemp(prefix="plh")
    os.chmod(runtime, 0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTLINT_", "PYTHON")) and k not in ("CI", "GITHUB_ACTIONS")}
    env.update(XDG_RUNTIME_DIR=runtime, XDG_CONFIG_HOME=str(tmp_path / "user-config"), XDG_CACHE_HOME=str(tmp_path / "user-cache"))
    state = {"env": env, "runtime": Path(runtime) / "promptlint", "pids": set()}
    yield state
    for pid in state["pids"] | set(daemon_pids(state)):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    shutil.rmtree(runtime, ignore_errors=True)


def daemon_pids(state) -> list:
    """Every live process whose command line names this test's run directory (a daemon's socket)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            zombie = (proc / "stat").read_text().split()[2] == "Z"
        except OSError:
            continue
        if str(state["runtime"]).encode() in cmdline and not zombie:
            found.append(int(proc.name))
    return found


def lint(state, py, *args, cwd, extra=None):
    """`promptlint ARGS` as an installed console script runs it: never the working directory on sys.path."""
    r = subprocess.run([str(py), "-I", "-m", "promptlint", *args], cwd=cwd, capture_output=True,
                       env=dict(state["env"], **(extra or {})), timeout=TIMEOUT)
    return r.returncode, r.stdout, r.stderr


def status(state, py, cwd):
    """The running daemon's status reply (the protocol's), or None; remembers its pid for teardown."""
    code = ("import json, sys\nfrom pathlib import Path\nfrom promptlint.daemon import client\n"
            "print(json.dumps(client.status(Path(sys.argv[1]))))")
    r = subprocess.run([str(py), "-I", "-c", code, str(cwd)], capture_output=True, text=True, env=state["env"], timeout=TIMEOUT)
    got = json.loads(r.stdout)
    if got:
        state["pids"].add(got["pid"])
    return got


def gone(pid) -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split()[2] == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def project(tmp_path):
    """examples/: a configuration, a tokenizer, templates with findings."""
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root)
    return root, tmp_path / "canaries"


@pytest.fixture(scope="module")
def direct(python, tmp_path_factory):
    """What `check --no-daemon` prints on examples/ (rc, stdout, stderr), the in-process answer the
    daemon tests compare with: run once for the module, not once per test (a copy of examples/ prints
    the same wherever it lies, its paths shown relative to it), in an environment like ``daemons``'."""
    root = tmp_path_factory.mktemp("direct") / "examples"
    shutil.copytree(REPO / "examples", root)
    runtime = tempfile.mkdtemp(prefix="plh")
    os.chmod(runtime, 0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTLINT_", "PYTHON")) and k not in ("CI", "GITHUB_ACTIONS")}
    env.update(XDG_RUNTIME_DIR=runtime, XDG_CONFIG_HOME=str(root.parent / "user-config"), XDG_CACHE_HOME=str(root.parent / "user-cache"))
    try:
        return lint({"env": env}, python, "check", "--no-daemon", cwd=root)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def test_the_daemon_started_by_the_user_imports_nothing_from_the_workspace(daemons, python, project):
    root, canaries = project
    plant(root, canaries)
    direct = lint(daemons, python, "check", "--no-daemon", cwd=root)
    assert direct[0] == 1 and b"M101" in direct[1]
    forwarded = lint(daemons, python, "check", cwd=root, extra={"PROMPTLINT_DAEMON": "1"})
    assert ran(canaries) == []  # no shadow module ran, in the client or the daemon ...
    assert forwarded == direct
    running = status(daemons, python, root)
    assert running["requests"] == 1  # ... and the daemon answered, in the workspace
    # -I dropped no part of the installation: the daemon runs the client's own promptlint
    assert running["identity"]["promptlint"] == str((REPO / "promptlint").resolve())
    import jinja2
    import tokenizers

    assert running["identity"]["jinja2"]["version"] == jinja2.__version__
    assert running["identity"]["tokenizers"]["version"] == tokenizers.__version__
    assert Path(f"/proc/{running['pid']}/cwd").resolve() == daemons["runtime"].resolve()  # started outside the project


def test_a_repositorys_daemon_setting_starts_nothing(daemons, python, project, direct):
    root, _ = project
    config = root / "pyproject.toml"  # examples/ is configured in [tool.promptlint]
    config.write_text(config.read_text(encoding="utf-8") + "daemon = true\n", encoding="utf-8")
    rc, out, err = lint(daemons, python, "check", cwd=root)
    assert status(daemons, python, root) is None
    assert not daemons["runtime"].exists() or not list(daemons["runtime"].glob("*.sock"))
    assert daemon_pids(daemons) == []
    assert (rc, out) == direct[:2]
    assert err.decode().count("`daemon = true` in a project's configuration is ignored") == 1


@pytest.mark.parametrize("ci", [{"CI": "true"}, {"CI": "1"}, {"GITHUB_ACTIONS": "true"}])
def test_no_daemon_in_ci(daemons, python, project, direct, ci):
    root, _ = project

    def in_ci(*args):  # CI also means untrusted mode, which says once that this tree is not a git work tree
        rc, out, err = lint(daemons, python, *args, cwd=root, extra={**ci, **({"PROMPTLINT_DAEMON": "1"} if "--daemon" not in args else {})})
        return rc, out, b"".join(l for l in err.splitlines(keepends=True) if b"note: untrusted mode" not in l)

    assert in_ci("check") == direct
    assert status(daemons, python, root) is None and daemon_pids(daemons) == []
    assert in_ci("check", "--daemon") == direct
    assert status(daemons, python, root) is None and daemon_pids(daemons) == []
    rc, _, err = lint(daemons, python, "daemon", "start", cwd=root, extra=ci)
    assert rc == 2 and b"no daemon in CI" in err
    assert status(daemons, python, root) is None and daemon_pids(daemons) == []
    # CI=false is not CI
    assert lint(daemons, python, "check", cwd=root, extra={"PROMPTLINT_DAEMON": "1", "CI": "false"}) == direct
    assert status(daemons, python, root)["requests"] == 1


def lint_in_terminal(state, py, *args, cwd, extra=None):
    """`promptlint ARGS` as a person at a prompt runs it: stdin and stdout a pseudo-terminal."""
    import pty

    master, slave = pty.openpty()
    chunks = []

    def drain():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last holder of the terminal's other end exited
                return
            if not data:
                return
            chunks.append(data)

    try:
        p = subprocess.Popen([str(py), "-I", "-m", "promptlint", *args], cwd=cwd, stdin=slave, stdout=slave,
                             stderr=subprocess.PIPE, env=dict(state["env"], **(extra or {})))
        os.close(slave)
        slave = None
        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        _, err = p.communicate(timeout=TIMEOUT)
        reader.join(TIMEOUT)
    finally:
        if slave is not None:
            os.close(slave)
        os.close(master)
    return p.returncode, b"".join(chunks), err


def test_a_person_at_a_terminal_gets_a_daemon_by_default(daemons, python, project):
    root, _ = project
    rc_direct, _, _ = lint(daemons, python, "check", cwd=root)  # pipes: a machine, no daemon
    assert status(daemons, python, root) is None and daemon_pids(daemons) == []
    rc, out, err = lint_in_terminal(daemons, python, "check", cwd=root)
    assert rc == rc_direct == 1, err  # examples/ has findings
    running = status(daemons, python, root)
    assert running is not None and running["requests"] == 1  # started on first use, and it answered
    assert Path(f"/proc/{running['pid']}/cwd").resolve() == daemons["runtime"].resolve()  # isolated, outside the project
    lint_in_terminal(daemons, python, "check", cwd=root)
    assert status(daemons, python, root)["requests"] == 2 and len(daemon_pids(daemons)) == 1


def test_a_pre_commit_hook_on_a_developer_machine_gets_a_daemon(daemons, python, project):
    root, _ = project
    rc, _, err = lint(daemons, python, "check", cwd=root, extra={"PRE_COMMIT": "1"})  # pre-commit pipes the output
    assert rc == 1, err
    assert status(daemons, python, root)["requests"] == 1


@pytest.mark.parametrize("how", ["CI", "GITHUB_ACTIONS", "pre-commit in CI", "user config", "PROMPTLINT_DAEMON=0",
                                 "project config cannot undo the user's off"])
def test_machines_and_people_who_said_no_get_no_daemon(daemons, python, project, how):
    root, _ = project
    extra = {"CI": {"CI": "true"}, "GITHUB_ACTIONS": {"GITHUB_ACTIONS": "true"}, "pre-commit in CI": {"PRE_COMMIT": "1", "CI": "1"},
             "PROMPTLINT_DAEMON=0": {"PROMPTLINT_DAEMON": "0"}}.get(how, {})
    if how in ("user config", "project config cannot undo the user's off"):
        user = Path(daemons["env"]["XDG_CONFIG_HOME"]) / "promptlint" / "config.toml"
        user.parent.mkdir(parents=True)
        user.write_text("daemon = false\n", encoding="utf-8")
    if how.startswith("project config"):
        config = root / "pyproject.toml"  # examples/ is configured in [tool.promptlint]
        config.write_text(config.read_text(encoding="utf-8") + "daemon = true\n", encoding="utf-8")
    run = lint if how == "pre-commit in CI" else lint_in_terminal
    rc, _, err = run(daemons, python, "check", cwd=root, extra=extra)
    assert rc == 1, err
    assert status(daemons, python, root) is None and daemon_pids(daemons) == []
    assert not daemons["runtime"].exists() or not list(daemons["runtime"].glob("*.sock"))


@pytest.mark.parametrize("text, says", [('daemon = "yes"\n', "`daemon` must be true or false"),
                                        ("daemon = [\n", "invalid TOML (")])
def test_a_bad_user_configuration_is_one_warning_and_no_daemon(cli, tmp_path, monkeypatch, text, says):
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "promptlint" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(text, encoding="utf-8")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir(mode=0o700)
    r = cli("check", cwd=tmp_path)
    assert r.code == 0 and "(0 files)" in r.out
    assert len(r.err.splitlines()) == 1 and r.err.startswith(f"promptlint: warning: {user}: {says}")
    assert r.err.endswith("; the daemon stays off\n") and not (tmp_path / "run" / "promptlint").exists()


def other_installation(tmp_path: Path) -> Path:
    """A second installation: a copy of the package with another version."""
    source = tmp_path / "other-src"
    shutil.copytree(REPO / "promptlint", source / "promptlint", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", source / "rules")
    init = source / "promptlint" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    init.write_text(re.sub(r'__version__ = "[^"]*"', '__version__ = "99.0.0-other"', text), encoding="utf-8")
    assert "99.0.0-other" in init.read_text(encoding="utf-8")
    return installation.make(tmp_path / "other-venv", source=source)


def test_a_client_is_never_answered_by_another_installations_daemon(daemons, python, project, direct, tmp_path):
    root, _ = project
    other = other_installation(tmp_path)
    assert lint(daemons, other, "daemon", "start", cwd=root)[0] == 0
    theirs = status(daemons, other, root)
    assert lint(daemons, python, "check", cwd=root) == direct  # runs in-process: their daemon is not ours
    assert status(daemons, other, root)["requests"] == 0
    assert lint(daemons, python, "check", cwd=root, extra={"PROMPTLINT_DAEMON": "1"}) == direct
    ours = status(daemons, python, root)
    assert ours["pid"] != theirs["pid"] and ours["requests"] == 1  # it started its own
    assert status(daemons, other, root)["requests"] == 0
    assert ours["identity"]["version"] != theirs["identity"]["version"]


def test_a_reply_from_a_daemon_of_another_identity_is_not_printed(daemons, python, project, direct):
    """Whatever listens on this installation's socket, a reply counts only with this installation's
    identity: a daemon that answers for something else (here, a stand-in that claims another code
    stamp) is ignored and the check runs in-process."""
    root, _ = project
    code = ("import sys\nfrom pathlib import Path\nfrom promptlint.daemon import protocol\n"
            "print(protocol.socket_path(Path(sys.argv[1]), create=True))")
    path = subprocess.run([str(python), "-I", "-c", code, str(root.resolve())], capture_output=True, text=True,
                          env=daemons["env"], timeout=TIMEOUT).stdout.strip()
    seen = []
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    server.settimeout(TIMEOUT)

    def answer():
        from promptlint.daemon import protocol

        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            header = protocol.recv_json(conn)
            seen.append(header)
            protocol.recv(conn)
            other = dict(header.get("identity") or {}, code="another code stamp")
            protocol.send_json(conn, {"rc": 0, "identity": other}, b"FAKE ANSWER\n", b"")

    t = threading.Thread(target=answer)
    t.start()
    try:
        got = lint(daemons, python, "check", cwd=root)
    finally:
        t.join(TIMEOUT)
        server.close()
    assert seen and seen[0]["op"] == "check"  # it did reach the stand-in ...
    assert got == direct and b"FAKE" not in got[1]  # ... and printed what an in-process run prints


def test_a_daemon_whose_dependency_changed_answers_stale_and_exits(daemons, project, tmp_path):
    """jinja2 is installed (copied) where this installation imports it from; rewriting one of its
    files, as an upgrade in place does, makes the daemon refuse the next request and exit."""
    root, _ = project
    deps = tmp_path / "deps"
    import jinja2

    shutil.copytree(Path(jinja2.__file__).parent, deps / "jinja2", ignore=shutil.ignore_patterns("__pycache__"))
    py = installation.make(tmp_path / "dep-venv", before=[deps])
    direct = lint(daemons, py, "check", "--no-daemon", cwd=root)
    assert lint(daemons, py, "daemon", "start", cwd=root)[0] == 0
    first = status(daemons, py, root)
    assert lint(daemons, py, "check", cwd=root) == direct
    assert status(daemons, py, root)["requests"] == 1
    init = deps / "jinja2" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\n# upgraded\n", encoding="utf-8")
    assert lint(daemons, py, "check", cwd=root) == direct  # answered in-process ...
    assert gone(first["pid"])  # ... because the daemon said "stale" and exited
    assert lint(daemons, py, "check", cwd=root, extra={"PROMPTLINT_DAEMON": "1"}) == direct
    fresh = status(daemons, py, root)
    assert fresh["pid"] != first["pid"] and fresh["requests"] == 1
    assert fresh["identity"]["jinja2"]["path"] == str((deps / "jinja2").resolve())  # the copy is what it watches


def test_the_daemon_holds_tokenizers_within_its_budget(daemons, python, tmp_path):
    """Five model directories with five different tokenizer contents, linted through one daemon: all five
    are parsed, the daemon keeps the four most recent (the documented budget: 4 tokenizers, 24 MiB
    of tokenizer.json between them)."""
    root = tmp_path / "models_project"
    sources = [DATA / "tokenizers" / n / "tokenizer.json" for n in ("mistral-v3-spm", "deepseek-v3", "mistral-nemo-tekken")]
    texts = [p.read_text(encoding="utf-8") for p in sources]
    for indent in (1, 2):  # the same tokenizer in other bytes: another content to parse
        texts.append(json.dumps(json.loads(texts[0]), indent=indent))
    assert len({t.encode() for t in texts}) == 5
    assert sum(len(t.encode()) for t in texts) < 24 * 1024 * 1024  # the count is what binds here
    chat = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
    for i, text in enumerate(texts):
        d = root / "models" / f"m{i}"
        d.mkdir(parents=True)
        (d / "tokenizer.json").write_text(text, encoding="utf-8")
        (d / "tokenizer_config.json").write_text(json.dumps({"chat_template": chat}), encoding="utf-8")
    (root / "promptlint.toml").write_text("# no tokenizer: each model directory has its own\n", encoding="utf-8")
    # the daemon parses the five files (~4 s together) instead of proving a compact form of each
    # first (5-15 s apiece unless an earlier test of the run proved it; a form load is a parse the
    # pool counts the same, and the budget, not the forms, is the subject here)
    forms = {"PROMPTLINT_FAST_TOKENIZER": "0"}
    rc, _, err = lint(daemons, python, "check", "--no-cache", cwd=root, extra={"PROMPTLINT_DAEMON": "1", **forms})
    assert rc in (0, 1), err
    running = status(daemons, python, root)
    assert running["requests"] == 1 and running["parses"] == 5
    assert running.get("tokenizers_held") == 4


def test_the_resident_byte_budget_drops_the_least_recently_used(monkeypatch):
    """In a resident pool (the daemon's, the language server's), three large tokenizers (12.1 + 8.0 +
    7.3 MB of JSON) exceed 24 MiB: the least recently used goes, and a tokenizer used again moves to
    the back of the line."""
    from promptlint.tokenization import tokens
    from promptlint.pools.tokenizers import TokenizerPool, installed

    # The budget counts tokenizer.json bytes, whichever way a tokenizer is loaded: parse the files
    # (~1.5 s each) rather than prove four compact forms first (~10-15 s each, the pool's subject
    # is not the forms; tests/test_fastbpe*.py prove them)
    monkeypatch.setenv("PROMPTLINT_FAST_TOKENIZER", "0")

    path = {n: DATA / "tokenizers" / n / "tokenizer.json" for n in ("gpt-oss-o200k-harmony", "qwen2.5", "mistral-nemo-tekken", "mistral-v3-spm")}
    sha = {n: tokens.cached_sha256(p) for n, p in path.items()}
    with installed(TokenizerPool(resident=True)) as pool:
        for n in ("gpt-oss-o200k-harmony", "qwen2.5"):
            tokens.load(tokens.resolve(str(path[n])))
            active_pool().release(sha[n])  # what the driver does after the last file that needs it
        assert tokens.held_count() == 2  # 20.1 MB: within the budget, both kept
        tokens.load(tokens.resolve(str(path["gpt-oss-o200k-harmony"])))  # used again: now the most recent
        tokens.load(tokens.resolve(str(path["mistral-nemo-tekken"])))  # 27.4 MB > 24 MiB: qwen2.5 goes
        assert set(pool.parsed) == {sha["gpt-oss-o200k-harmony"], sha["mistral-nemo-tekken"]}
        assert {k[0] for k in pool.loaded} == set(pool.parsed)
        tokens.load(tokens.resolve(str(path["mistral-v3-spm"])))  # 1.5 MB more: 20.9 MB, three held
        assert tokens.held_count() == 3


# --- multiprocessing and the package's source -------------------------------------------------


def test_spawned_workers_import_nothing_from_the_working_directory(tmp_path, python):
    """`audit`'s partitions spawn when threads run (fork is unsafe then). Run as an installed script
    runs (its own directory on sys.path, not the working directory), in a workspace with a shadow
    `multiprocessing/`: the spawned interpreter and the resource tracker must not import it."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    canaries = tmp_path / "canaries"
    plant(workspace, canaries)
    script = tmp_path / "bin" / "run_partitions.py"
    script.parent.mkdir()
    script.write_text(
        "import threading, time\n"
        "from promptlint.audit.instances import LocalPartitions\n"
        "if __name__ == '__main__':\n"
        "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()  # a thread: spawn, not fork\n"
        "    parts = LocalPartitions(1, 16, 16)\n"
        "    print('CURVES', parts.curves())\n"
        "    parts.close()\n", encoding="utf-8")
    r = subprocess.run([str(python), str(script)], cwd=workspace, capture_output=True, text=True, timeout=TIMEOUT,
                       env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")})
    assert "CURVES []" in r.stdout, r.stderr
    assert ran(canaries) == []


def test_ray_workers_import_nothing_from_the_working_directory(tmp_path, python):
    """`audit --ray` on a local Ray: Ray puts the driver's working directory first on every worker's
    sys.path unless the job has a working_dir; the workers must not import the workspace's modules."""
    pytest.importorskip("ray", reason="Ray comes with the fleet extra")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    canaries = tmp_path / "canaries"
    plant(workspace, canaries)
    shutil.copy(REPO / "examples" / "audit" / "trace.jsonl", workspace / "trace.jsonl")
    script = tmp_path / "bin" / "audit_on_ray.py"
    script.parent.mkdir()
    script.write_text(
        "import sys\nfrom promptlint.cli import main\n"
        "if __name__ == '__main__':\n"
        "    sys.exit(main(['audit', 'trace.jsonl', '--ray', '--workers', '1', '--output-format', 'json']))\n",
        encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "RAY_"))}
    r = subprocess.run([str(python), str(script)], cwd=workspace, capture_output=True, text=True, timeout=300, env=env)
    assert ran(canaries) == []
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["requests"][0]["request_id"] == "req-000"


def _interpreter_starts(path: Path) -> list:
    """What in a module can start an interpreter: multiprocessing (imported, or its contexts, pools
    and processes called), a subprocess or exec whose argv mentions sys.executable, and
    sys.executable itself (the interpreter's path is only ever wanted to start it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"import {n}" for n in names if n.split(".")[0] == "multiprocessing"]
        if isinstance(node, ast.Attribute) and ast.unparse(node) == "sys.executable":
            found.append("sys.executable")
        if not isinstance(node, ast.Call):
            continue
        text = ast.unparse(node.func)
        if text.startswith("multiprocessing.") or text in ("get_context", "Pool", "Process"):
            found.append(text)
        elif text.startswith("subprocess.") and "sys.executable" in ast.unparse(node):
            found.append(text)
        elif text in ("os.execv", "os.execve", "os.execl", "os.spawnv", "os.posix_spawn") and "sys.executable" in ast.unparse(node):
            found.append(text)
    return found


def test_every_interpreter_start_in_the_package_goes_through_one_door():
    """Structural: only promptlint/doors/interpreters.py starts Python itself (`command`, `context`), so a new
    feature that starts a process takes the isolated way or fails here."""
    starts = {str(p.relative_to(REPO)): _interpreter_starts(p) for p in (REPO / "promptlint").rglob("*.py")}
    # the daemon's identity records which interpreter it runs on (it starts nothing)
    assert starts.pop("promptlint/daemon/identity.py") == ["sys.executable"]
    assert {k: v for k, v in starts.items() if v and k != "promptlint/doors/interpreters.py"} == {}
    assert sorted(set(starts["promptlint/doors/interpreters.py"])) == ["import multiprocessing", "multiprocessing.get_context",
                                                                 "sys.executable"]
    hook = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["entry"].split()[0] for h in hook] == ["promptlint"]  # the console script: its bin/ on sys.path, not the cwd
