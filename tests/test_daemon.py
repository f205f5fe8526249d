"""The warm daemon (issue 17): `promptlint check` forwarded over a real Unix socket gives the same
bytes and exit code as an in-process run, falls back when the daemon is gone, serves two clients,
and reloads when the configuration changes. Every test stops its daemons in teardown; every wait
is bounded."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow  # a real end-to-end run (docs/architecture.md, "Tests")

if not hasattr(os, "getuid") or sys.platform == "win32":  # pragma: no cover
    pytest.skip("Unix sockets", allow_module_level=True)

TIMEOUT = 180


@pytest.fixture
def env(tmp_path):
    """A copy of examples/, a short private XDG_RUNTIME_DIR (sun_path holds 108 bytes), and a
    teardown that stops the daemon (by its pid, which only this test started)."""
    runtime = tempfile.mkdtemp(prefix="pld")
    os.chmod(runtime, 0o700)
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root)
    e = dict(os.environ, PYTHONPATH=str(REPO), XDG_RUNTIME_DIR=runtime, XDG_CONFIG_HOME=str(tmp_path / "user-config"))
    for name in ("PROMPTLINT_DAEMON", "CI", "GITHUB_ACTIONS"):  # the daemon is never used in CI
        e.pop(name, None)
    state = {"root": root, "env": e, "pids": set()}
    yield state
    run(state, "daemon", "stop")
    for pid in state["pids"]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    shutil.rmtree(runtime, ignore_errors=True)


def run(state, *args, stdin=b"", extra=None, cwd=None):
    e = dict(state["env"], **(extra or {}))
    r = subprocess.run(
        [sys.executable, "-m", "promptlint", *args], cwd=cwd or state["root"], input=stdin,
        capture_output=True, env=e, timeout=TIMEOUT,
    )
    return r.returncode, r.stdout, r.stderr


def status(state):
    """The running daemon's pid and request count, or None."""
    rc, out, _ = run(state, "daemon", "status")
    if rc != 0:
        return None
    words = out.decode().replace(",", "").split()
    pid, requests = int(words[words.index("pid") + 1]), int(words[words.index("requests") - 1])
    state["pids"].add(pid)
    return pid, requests


def start(state):
    rc, out, err = run(state, "daemon", "start")
    assert rc == 0, err
    return status(state)


def gone(pid):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return True
        time.sleep(0.05)
    return False


TEMPLATE = (  # a real M101: more than one block of shared instructions follows `now`
    b"{{ now }} You are a support agent for Acme. Answer politely.\n"
    b"Keep every answer short and friendly, point to the help-centre article that covers the question, "
    b"and never promise a refund or a delivery date on the company's behalf.\n{{ question }}\n"
)
CASES = [
    (),
    ("--output-format", "json"),
    ("--output-format", "concise", "--no-cache"),
    ("--output-format", "sarif", "prompts/support_clean.j2"),
    ("--select", "M2"),
    ("--select", "NOPE"),  # a usage error: exit 2, one line on stderr
    ("missing.j2",),
    ("--stdin-filename", "prompts/new.j2", "--output-format", "concise"),
]


def test_forwarded_output_is_byte_identical(env):
    direct = [run(env, "check", "--no-daemon", *args, stdin=TEMPLATE) for args in CASES]
    _, before = start(env)
    assert before == 0
    forwarded = [run(env, "check", *args, stdin=TEMPLATE) for args in CASES]
    assert forwarded == direct
    assert status(env)[1] == len(CASES)  # each one was answered by the daemon
    assert direct[0][0] == 1 and direct[5][0] == 2 and b"M101" in direct[7][1]
    # --no-daemon and PROMPTLINT_DAEMON=0 stay in-process even with a daemon running.
    assert run(env, "check", "--no-daemon") == direct[0]
    assert run(env, "check", extra={"PROMPTLINT_DAEMON": "0"}) == direct[0]
    assert status(env)[1] == len(CASES)


def test_socket_is_private_and_refuses_other_roots(env):
    start(env)
    runtime = Path(env["env"]["XDG_RUNTIME_DIR"]) / "promptlint"
    (sock,) = runtime.glob("*.sock")
    assert runtime.stat().st_mode & 0o777 == 0o700 and sock.stat().st_mode & 0o777 == 0o600
    code = (
        "import socket, sys\nfrom promptlint.daemon import protocol\n"
        "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "protocol.send_json(s, {'op': 'check', 'argv': ['check'], 'cwd': '/', 'env': {}}, b'')\n"
        "print(protocol.recv_json(s))"
    )
    r = subprocess.run([sys.executable, "-c", code, str(sock)], capture_output=True, text=True, env=env["env"], timeout=TIMEOUT)
    assert "'refused'" in r.stdout and "outside" in r.stdout, r.stderr
    assert status(env)[1] == 0



def test_a_malformed_check_header_is_refused_not_run(env):
    # `argv: 5` reached cli.main(list(5)): a traceback in the reply, counted as a request
    start(env)
    (sock,) = (Path(env["env"]["XDG_RUNTIME_DIR"]) / "promptlint").glob("*.sock")
    code = (
        "import socket, sys\nfrom promptlint.daemon import protocol\n"
        "for argv, envs in ((5, {}), (['check', 7], {}), (['check'], ['X=1'])):\n"
        "    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "    protocol.send_json(s, {'op': 'check', 'argv': argv, 'cwd': sys.argv[2], 'env': envs}, b'')\n"
        "    print(protocol.recv_json(s)); s.close()"
    )
    r = subprocess.run([sys.executable, "-c", code, str(sock), str(env["root"])], capture_output=True, text=True,
                       env=env["env"], timeout=TIMEOUT)
    assert r.stdout.count("'refused'") == 3 and "Traceback" not in r.stdout + r.stderr, (r.stdout, r.stderr)
    assert status(env)[1] == 0


def test_default_never_starts_a_daemon_and_the_user_level_switches_do(env):
    run(env, "check")
    assert status(env) is None
    direct = run(env, "check", "--no-daemon")
    assert run(env, "check", extra={"PROMPTLINT_DAEMON": "1"}) == direct
    pid, requests = status(env)
    assert requests == 1
    run(env, "daemon", "stop")
    assert gone(pid) and status(env) is None
    assert run(env, "check", "--daemon") == direct  # the flag
    pid, requests = status(env)
    assert requests == 1
    run(env, "daemon", "stop")
    assert gone(pid) and status(env) is None
    user_config = Path(env["env"]["XDG_CONFIG_HOME"]) / "promptlint" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text("daemon = true\n", encoding="utf-8")  # the user's own configuration file
    assert run(env, "check") == direct
    assert status(env)[1] == 1


def test_a_projects_daemon_setting_is_ignored_with_a_note(env):
    direct = run(env, "check", "--no-daemon")
    config = env["root"] / "pyproject.toml"
    config.write_text(config.read_text() + "daemon = true\n")
    rc, out, err = run(env, "check")
    assert (rc, out) == direct[:2] and status(env) is None
    assert err.count(b"note:") == 1 and b"`daemon = true` in a project's configuration is ignored" in err
    assert b"PROMPTLINT_DAEMON=1" in err and b"check --daemon" in err


def test_killed_daemon_falls_back_and_is_replaced(env):
    direct = run(env, "check", "--no-daemon", "--output-format", "json")
    pid, _ = start(env)
    os.kill(pid, signal.SIGKILL)
    assert gone(pid)
    runtime = Path(env["env"]["XDG_RUNTIME_DIR"]) / "promptlint"
    assert list(runtime.glob("*.sock"))  # the stale socket is still there
    assert run(env, "check", "--output-format", "json") == direct
    assert status(env) is None
    assert run(env, "check", "--output-format", "json", extra={"PROMPTLINT_DAEMON": "1"}) == direct
    new_pid, requests = status(env)
    assert new_pid != pid and requests == 1


def test_two_clients_at_once(env):
    args = [("--output-format", "json", "--no-cache"), ("--output-format", "concise", "--no-cache")]
    direct = [run(env, "check", "--no-daemon", *a) for a in args]
    start(env)
    procs = [
        subprocess.Popen([sys.executable, "-m", "promptlint", "check", *a], cwd=env["root"], env=env["env"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for a in args
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=TIMEOUT)
        results.append((p.returncode, out, err))
    assert results == direct
    assert status(env)[1] == 2


def test_changed_configuration_is_picked_up(env):
    pid, _ = start(env)
    first = run(env, "check", "--output-format", "concise")
    assert b" M202 " in first[1]
    config = env["root"] / "pyproject.toml"
    config.write_text(config.read_text() + 'ignore = ["M202"]\n')
    after = run(env, "check", "--output-format", "concise", extra={"PROMPTLINT_DAEMON": "1"})
    assert after == run(env, "check", "--no-daemon", "--output-format", "concise")
    assert b" M202 " not in after[1] and b" M101 " in after[1]
    assert gone(pid)  # the old daemon exited on the change ...
    new_pid, requests = status(env)  # ... and PROMPTLINT_DAEMON=1 started a fresh one that answered
    assert new_pid != pid and requests == 1


def test_forwarding_client_imports_nothing_heavy(env):
    start(env)
    code = (
        "import sys\nfrom promptlint.cli import main\nrc = main(['check', '--output-format', 'concise'])\n"
        "heavy = [m for m in ('jinja2', 'tokenizers', 'jsonschema') if m in sys.modules]\n"
        "print('HEAVY', heavy)\nsys.exit(rc)"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=env["root"], capture_output=True, text=True,
                       env=env["env"], timeout=TIMEOUT)
    assert r.returncode == 1 and "M101" in r.stdout and "HEAVY []" in r.stdout, r.stderr
    assert status(env)[1] == 1


def test_run_directory_others_can_enter_is_refused(env):
    runtime = Path(env["env"]["XDG_RUNTIME_DIR"])
    assert run(env, "daemon", "status")[0] == 1 and not (runtime / "promptlint").exists()  # only start creates it
    (runtime / "promptlint").mkdir(mode=0o755)
    os.chmod(runtime / "promptlint", 0o755)
    rc, _, err = run(env, "daemon", "start")
    assert rc == 2 and b"private directory" in err
    assert run(env, "check", extra={"PROMPTLINT_DAEMON": "1"}) == run(env, "check", "--no-daemon")
    assert not list((runtime / "promptlint").iterdir())


def test_idle_daemon_exits_and_removes_its_socket(env):
    rc, out, err = run(env, "daemon", "start", "--idle-timeout", "0.5")
    assert rc == 0, err
    pid = int(out.decode().rsplit("(pid ", 1)[1].split(")")[0])
    env["pids"].add(pid)
    assert gone(pid)
    assert not list((Path(env["env"]["XDG_RUNTIME_DIR"]) / "promptlint").glob("*.sock"))



def test_consecutive_requests_parse_the_tokenizer_once(env):
    """A run over model directories releases each tokenizer after its last file (issue 23); the
    daemon keeps them, so a second request parses nothing."""
    project = env["root"] / "models_project"
    for name in ("a", "b"):
        d = project / "models" / name
        d.mkdir(parents=True)
        shutil.copy(REPO / "examples" / "tokenizer" / "tokenizer.json", d / "tokenizer.json")
        chat = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        (d / "tokenizer_config.json").write_text('{"chat_template": "%s"}' % chat.replace("\n", "\\n"), encoding="utf-8")
    (project / "promptlint.toml").write_text("# no tokenizer: each model directory has its own\n", encoding="utf-8")
    assert run(env, "daemon", "start", cwd=project)[0] == 0
    for _ in range(2):
        rc, _, err = run(env, "check", "--no-cache", cwd=project)
        assert rc in (0, 1), err
    rc, out, _ = run(env, "daemon", "status", cwd=project)
    words = out.decode().replace(",", "").split()
    env["pids"].add(int(words[words.index("pid") + 1]))
    assert int(words[words.index("requests") - 1]) == 2
    assert int(words[words.index("tokenizer") - 1]) == 1  # both directories share one content: one parse
    run(env, "daemon", "stop", cwd=project)


def test_the_daemon_answers_each_request_in_the_environment_it_brings(env):
    """The daemon reads a request's environment (carried in the request, never installed in its own
    process) for everything a check takes from it: colour (FORCE_COLOR, NO_COLOR), the CI root the
    github format names files against, PROMPTLINT_FULL_ENCODE. It keeps no list of variables to
    refuse: each request is answered by the daemon, byte for byte what the in-process run prints
    in that environment."""
    start(env)
    ci_root = str(env["root"].parent)
    requests = [
        (("--output-format", "full"), {"FORCE_COLOR": "1"}),
        (("--output-format", "full"), {"NO_COLOR": "1"}),
        (("--output-format", "github"), {"GITHUB_WORKSPACE": ci_root}),
        (("--output-format", "json", "--no-cache"), {"PROMPTLINT_FULL_ENCODE": "1"}),
    ]
    answers = []
    for k, (args, extra) in enumerate(requests, 1):
        direct = run(env, "check", "--no-daemon", *args, extra=extra)
        assert direct[0] == 1 and b"M101" in direct[1]
        answers.append(run(env, "check", *args, extra=extra))
        assert answers[-1] == direct
        assert status(env)[1] == k  # answered by the daemon, not left to the client
    assert b"\x1b[" in answers[0][1] and b"\x1b[" not in answers[1][1]  # the two requests did differ
    assert b"file=examples/prompts/support_timestamp.j2" in answers[2][1]  # named from the CI root, not the cwd


def test_requests_from_two_directories_are_answered_as_in_process(env):
    """Issue 28: a request's working directory travels with it and the daemon never enters it. From
    the project root and from a subdirectory (paths typed with `../`, a relative --config and
    --report-file), each answer is byte for byte the in-process run's, the report files land
    relative to the client's directory with the same bytes, and the daemon's own working directory
    is the one it started in, before and after."""
    root = env["root"]
    (root / "common").mkdir()
    shutil.copy(root / "prompts" / "support_timestamp.j2", root / "common" / "ts.j2")
    (root / "out").mkdir()
    requests = [
        (root / "prompts", ["support_timestamp.j2", "../common/ts.j2", "--config", "../pyproject.toml",
                            "--report-file", "json=../out/sub.json"]),
        (root / "prompts", ["--output-format", "json", "../prompts", "../common"]),
        (root, ["--report-file", "sarif=out/root.sarif", "common/ts.j2", "prompts"]),
    ]
    reports = [root / "out" / "sub.json", None, root / "out" / "root.sarif"]
    direct = []
    for (cwd, args), report in zip(requests, reports):
        direct.append((run(env, "check", "--no-daemon", "--no-cache", *args, cwd=cwd), report and report.read_bytes()))
        if report:
            report.unlink()
    assert b"../common/ts.j2:1:15: M101" in direct[0][0][1] and b"support_timestamp.j2:1:15: M101" in direct[0][0][1]
    assert b'"path": "../common/ts.j2"' in direct[1][0][1]
    pid, _ = start(env)
    proc = Path(f"/proc/{pid}/cwd")
    own = os.readlink(proc) if proc.exists() else None
    for k, ((cwd, args), report, (answer, written)) in enumerate(zip(requests, reports, direct), 1):
        assert run(env, "check", "--no-cache", *args, cwd=cwd) == answer
        assert status(env)[1] == k  # answered by the daemon
        assert (report and report.read_bytes()) == written
        if own is not None:
            assert os.readlink(proc) == own
