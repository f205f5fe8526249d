"""Every command, and the Action's run step, over one repository a hostile pull request could produce.

The repository and the verdict are in `hostile_repo.py`: no module of the repository runs, nothing
outside it (or `.git/config`) changes, no secret of the job reaches any output, no traceback, no
workflow command from data, and the honest template is still reported. A new command joins this
file in the change that adds it (`test_every_command_is_covered` fails until it does).
"""

from __future__ import annotations

import json
import os
import queue
from pathlib import Path
import shutil
import subprocess
import threading
import time

import pytest

import hostile_repo
from hostile_repo import PROMPT_FILES, SECRET, TOKEN

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")]

COVERED = {"check", "render", "samples", "rule", "diff", "conversation", "hashes", "tokenize", "audit", "clean", "server",
           "daemon"}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return hostile_repo.build(tmp_path_factory.mktemp("hostile"))


def test_every_command_is_covered():
    from promptlint.cli import COMMANDS

    assert set(COMMANDS) == COVERED, "a new command must join the hostile-repository suite"


@pytest.mark.parametrize("fmt", ["full", "concise", "github", "gitlab", "json", "json-lines", "sarif", "markdown"])
def test_check_in_every_format(hostile, fmt):
    done = hostile.run("check", "--output-format", fmt)
    hostile.assert_safe(done.stdout, done.stderr)
    assert done.returncode == 1, done.stderr
    assert "support.j2" in done.stdout and "M101" in done.stdout  # the honest template is still reported
    assert "leak_include.j2" in done.stdout  # and each leaking template is reported, not skipped
    for name in PROMPT_FILES:  # prompt files too (issue 32)
        assert name in done.stdout, name


def test_typescript_agent_is_linted_and_imports_never_leave_the_repository(hostile):
    done = hostile.run("check", "--output-format", "json", "agent")
    hostile.assert_safe(done.stdout, done.stderr)
    assert done.returncode == 1, done.stderr
    found = [(f["code"], f["line"], f["column"]) for f in json.loads(done.stdout)["findings"]]
    assert found == [("M101", 9, 21)]  # `new Date()` in the system prompt: line 9, after "    system: `Now: ${"
    assert hostile_repo.OUTSIDE_TEXT not in done.stdout + done.stderr  # neither import was read


def test_check_with_the_cache_prunes_nothing_outside(hostile):
    for _ in range(2):  # a cold run that writes, then a warm run that reads
        done = hostile.run("check", "--output-format", "concise")
        hostile.assert_safe(done.stdout, done.stderr)
        assert done.returncode == 1 and "M101" in done.stdout


@pytest.mark.parametrize("target", ["promptlint.sarif", "report.md", "reports/new.md"])
def test_report_files_are_never_written_through_a_link(hostile, target):
    done = hostile.run("check", "--output-format", "concise", "--report-file", f"markdown={target}")
    hostile.assert_safe(done.stdout, done.stderr)
    assert done.returncode == 2 and target in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_tokenizer_that_panics_is_one_finding_and_the_other_files_are_reported(hostile):
    for jobs in ("1", "2"):
        done = hostile.run("check", "--output-format", "json", "--jobs", jobs, "prompts/support.j2", "models/evil/tokenizer_config.json",
                           "prompts/mention.j2", "prompts/leak_key.j2", "prompts/leak_attr.j2")
        hostile.assert_safe(done.stdout, done.stderr)
        doc = json.loads(done.stdout)
        findings = doc["findings"] + doc["errors"]
        by_file = {}
        for f in findings:
            by_file.setdefault(f["path"].split("/")[-1] if "models" not in f["path"] else "evil", []).append(f["code"])
        assert "M101" in by_file["support.j2"], findings
        assert by_file["evil"] and all(c.startswith("E") for c in by_file["evil"]), findings


def test_render_samples_and_rule(hostile):
    scenario = hostile.root / "scenario.json"
    scenario.write_text(json.dumps({"variables": {"name": "Ada"}}), encoding="utf-8")
    for args in (["render", "--scenario", "scenario.json", "prompts/leak_include.j2"],
                 ["render", "--scenario", "scenario.json", "prompts/leak_attr.j2"],
                 ["render", "--scenario", "scenario.json", "models/evil"],
                 ["samples", "prompts/leak_key.j2", "prompts/leak_include.j2", "prompts/x\n::error::pwned.j2"],
                 ["samples", "prompts/leak.prompty", "prompts/leak_agent.yaml"],
                 ["samples", "prompts/unclosed.prompty", "prompts/leak_flow.jinja2", "prompts/leak_sk.jinja2"],
                 ["render", "--scenario", "scenario.json", "prompts/leak.prompty"],
                 ["render", "--scenario", "scenario.json", "prompts/leak_chat.j2"],
                 ["samples", "--write", "reports/../promptlint.sarif"],
                 ["rule", "M101"]):
        done = hostile.run(*args)
        hostile.assert_safe(done.stdout, done.stderr)
        assert done.returncode in (0, 1, 2), (args, done.stderr)
        assert done.stderr.count("\n") <= 3, (args, done.stderr)
    scenario.unlink()


def test_diff_hashes_and_tokenize_with_the_repository_tokenizer_end_in_bounded_time(hostile):
    for args in (["diff", "request.txt", "request2.txt"],
                 ["hashes", "request.txt"],
                 ["tokenize", "request.txt"],
                 ["diff", "--tokenizer", "models/evil", "request.txt", "request2.txt"],
                 ["hashes", "--tokenizer", "models/evil", "request.txt"],
                 ["tokenize", "--tokenizer", "models/evil", "request.txt"]):
        done = hostile.run(*args, timeout=120)
        hostile.assert_safe(done.stdout, done.stderr)
        assert done.returncode in (0, 1, 2), (args, done.stderr)


def test_conversation_captures_never_print_their_secrets_and_end_in_bounded_time(hostile):
    for args in (["conversation", "capture.har", "capture.jsonl", "trace.json"],
                 ["conversation", "--output-format", "github", "capture.har", "capture.jsonl"],
                 ["conversation", "--output-format", "json", "capture.har"],
                 ["conversation", "--tokenizer", "models/evil", "capture.jsonl"],
                 ["conversation", "--chat-template", "models/evil", "capture.har"]):
        done = hostile.run(*args, timeout=120)
        hostile.assert_safe(done.stdout, done.stderr)
        assert done.returncode in (0, 1, 2), (args, done.stderr)
    done = hostile.run("conversation", "capture.har", "capture.jsonl", "trace.json")
    assert done.returncode == 1 and "tools added t" in done.stdout, done.stderr  # the honest break, still reported
    # the trace's operation-details events: the reorder found, Anthropic's reuse said to be unknown
    assert "trace.json:2:1: M202 " in done.stdout and "anthropic's reuse is unknown" in done.stdout, done.stdout
    assert "capture.jsonl:3: JSON nested too deeply to read" in done.stderr
    assert "capture.har: entry 3: no JSON request body" in done.stderr


def test_conversation_streamed_replies_and_times_that_are_neither(hostile):
    """Event streams of no provider (nested past any parser, wrong types, 20,000 events) and times
    that are not times (past the calendar, NaN, Infinity, a bool, a workflow command): each reply
    is unknown, each gap unknown; the requests are still analysed and nothing leaks."""
    for args in (["conversation", "stream.har", "timed.jsonl"],
                 ["conversation", "--output-format", "json", "stream.har", "timed.jsonl"],
                 ["conversation", "--output-format", "github", "stream.har"]):
        done = hostile.run(*args, timeout=120)
        hostile.assert_safe(done.stdout, done.stderr)
        assert done.returncode in (0, 1), (args, done.stderr)
        assert "Traceback" not in done.stderr and "expiry" not in done.stdout, (args, done.stdout)


def test_audit_and_its_output_files(hostile):
    done = hostile.run("audit", "traces")
    hostile.assert_safe(done.stdout, done.stderr)
    assert done.returncode == 0, done.stderr
    for option, target in (("--worksheet", "reports/w.csv"), ("--plot", "promptlint.sarif")):
        done = hostile.run("audit", option, target, "traces")
        hostile.assert_safe(done.stdout, done.stderr)
        assert done.returncode == 2 and target in done.stderr


def test_clean_deletes_nothing_outside(hostile):
    done = hostile.run("clean")
    hostile.assert_safe(done.stdout, done.stderr)
    assert done.returncode in (0, 1)
    done = hostile.run("check", "--output-format", "concise")  # and the next run still works
    hostile.assert_safe(done.stdout, done.stderr)
    assert "M101" in done.stdout


def test_no_daemon_from_repository_configuration_or_in_ci(hostile):
    for env in ({}, {"PROMPTLINT_DAEMON": "1"}):
        done = hostile.run("check", "--output-format", "concise", **env)
        hostile.assert_safe(done.stdout, done.stderr)
        assert "M101" in done.stdout
        status = hostile.run("daemon", "status", **env)
        assert "not running" in (status.stdout + status.stderr).lower() or status.returncode != 0
    done = hostile.run("daemon", "start")
    hostile.assert_safe(done.stdout, done.stderr)
    status = hostile.run("daemon", "status")
    hostile.run("daemon", "stop")
    assert done.returncode == 2 and "CI" in done.stderr, done.stderr
    assert "not running" in (status.stdout + status.stderr).lower()


def test_the_language_server(hostile):
    pytest.importorskip("pygls")
    proc = subprocess.Popen([*hostile_repo.promptlint_command(), "server"], cwd=hostile.root, env=hostile.env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    inbox: "queue.Queue[dict]" = queue.Queue()

    def read():
        while True:
            headers = {}
            while True:
                line = proc.stdout.readline()
                if not line:
                    return
                if not line.strip():
                    break
                k, v = line.decode("ascii").split(":", 1)
                headers[k.lower()] = v.strip()
            inbox.put(json.loads(proc.stdout.read(int(headers["content-length"]))))

    threading.Thread(target=read, daemon=True).start()

    def send(message):
        body = json.dumps(message).encode("utf-8")
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    uris = {}
    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"processId": None, "rootUri": hostile.root.as_uri(), "capabilities": {}}})
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        for name in ("leak_include.j2", "support.j2"):
            path = hostile.root / "prompts" / name
            uris[path.as_uri()] = name
            send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": path.as_uri(), "languageId": "jinja", "version": 1, "text": path.read_text(encoding="utf-8")}}})
        seen, texts, deadline = {}, [], time.monotonic() + 120
        while len(seen) < len(uris) and time.monotonic() < deadline:
            try:
                m = inbox.get(timeout=1)
            except queue.Empty:
                continue
            texts.append(json.dumps(m))
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] in uris:
                seen[uris[m["params"]["uri"]]] = [d.get("code") for d in m["params"]["diagnostics"]]
        send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
        send({"jsonrpc": "2.0", "method": "exit", "params": None})
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode("utf-8", "replace")
    hostile.assert_safe("\n".join(texts), err)
    assert "M101" in seen.get("support.j2", []), (seen, err[-1000:])
    assert seen.get("leak_include.j2"), seen


def workspace_listing(root):
    """Every entry of the workspace (links as links) with its size and mtime: what a step may not change."""
    import os

    out = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs + files:
            st = os.lstat(os.path.join(dirpath, name))
            out[os.path.relpath(os.path.join(dirpath, name), root)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def run_action_step(hostile, tmp_path, **given):
    """The Action's run step as the runner runs it: inputs substituted, GitHub's env files in a
    runner temp directory, the workspace as working directory, CI's environment."""
    yaml = pytest.importorskip("yaml")
    import re
    import installation
    from conftest import REPO

    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    [step] = [s for s in action["runs"]["steps"] if s.get("id") == "run"]
    inputs = {k: v.get("default", "") for k, v in action["inputs"].items()}
    inputs.update(python=str(installation.make(tmp_path / "venv")), args="prompts", **given)

    def expression(expr):
        for operand in expr.split("||"):
            scope, _, name = operand.strip().partition(".")
            if scope == "inputs" and inputs.get(name):
                return str(inputs[name])
        return ""

    env = {k: re.sub(r"\$\{\{(.+?)\}\}", lambda m: expression(m.group(1)), str(v)) for k, v in step["env"].items()}
    env["PROMPTLINT_VENV"] = str(Path(inputs["python"]).parent.parent)  # the set-up step's output
    runner = tmp_path / "runner"
    runner.mkdir()
    files = {"GITHUB_STEP_SUMMARY": runner / "summary.md", "GITHUB_OUTPUT": runner / "output"}
    for f in files.values():
        f.write_text("", encoding="utf-8")
    script = runner / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    full = hostile.env(**env, RUNNER_TEMP=str(runner), GITHUB_WORKSPACE=str(hostile.root), **{k: str(v) for k, v in files.items()})
    before = workspace_listing(hostile.root)
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=hostile.root, env=full,
                          capture_output=True, text=True, timeout=300)
    assert workspace_listing(hostile.root) == before, "the Action wrote into the workspace"
    return done, files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8"), runner


def test_the_actions_run_step(hostile, tmp_path):
    import re

    done, summary, runner = run_action_step(hostile, tmp_path, sarif=str(tmp_path / "out.sarif"))
    hostile.assert_safe(done.stdout, done.stderr, summary, (tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert done.returncode == 1 and "M101" in done.stdout and "M101" in summary, done.stderr
    assert not re.search(r"@[A-Za-z0-9]", re.sub(r"`[^`]*`", "", summary)), "a live @mention in the summary"


def test_the_actions_run_step_never_touches_the_committed_sarif_link(hostile, tmp_path):
    done, summary, runner = run_action_step(hostile, tmp_path)  # the default sarif name: a committed link in the workspace
    hostile.assert_safe(done.stdout, done.stderr, summary)
    assert done.returncode == 1 and "M101" in done.stdout, done.stderr
    assert (runner / "promptlint.sarif").is_file() and (hostile.root / "promptlint.sarif").is_symlink()


# A Python agent's prompt text read from files (`read_text`, `open().read()`, a Jinja `FileSystemLoader`):
# a link to a file outside the repository, or a path that climbs out of it, is never read. The same
# agent reading the same text from a file inside is the positive control: read, its clock is M101.
_FILE_AGENT = (
    "import datetime\nfrom pathlib import Path\n\nimport jinja2\nfrom openai import OpenAI\n\n"
    "HERE = Path(__file__).parent\n"
    "SYSTEM = (HERE / {name!r}).read_text()\n"
    "env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE)))\n"
    "client = OpenAI()\n\n\n"
    "def go(q):\n"
    "    now = datetime.datetime.now().isoformat()\n"
    "    system = {build}\n"
    "    return client.chat.completions.create(model='m', messages=[\n"
    "        {{'role': 'system', 'content': system}}, {{'role': 'user', 'content': q}}])\n"
)
_FILE_BUILDS = {
    "read_text": "SYSTEM.format(now=now)",
    "open": "open(HERE / {name!r}).read().format(now=now)",
    "jinja": "env.get_template({name!r}).render(now=now)",
}


@pytest.mark.parametrize("how", sorted(_FILE_BUILDS))
def test_prompt_files_outside_the_repository_are_never_read(tmp_path, cli, how):
    from hostile_repo import SECRET

    root, outside = tmp_path / "repo", tmp_path / "outside"
    root.mkdir(), outside.mkdir()
    (root / "promptlint.toml").write_text("", encoding="utf-8")
    for where, mark in ((outside, SECRET), (root, "inside")):
        text = "Now: {now} " + mark + "\n" + "Follow the shop policy and answer briefly. " * 40 + "\n"
        (where / "system.txt").write_text(text.replace("{now}", "{{ now }}") if how == "jinja" else text, encoding="utf-8")
    os.symlink(outside / "system.txt", root / "linked.txt")
    names = {"inside.py": "system.txt", "linked.py": "linked.txt", "climbing.py": "../outside/system.txt"}
    for module, name in names.items():
        build = _FILE_BUILDS[how].format(name=name)
        (root / module).write_text(_FILE_AGENT.format(name=name, build=build), encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "json", *names, cwd=root)
    assert "Traceback" not in r.err, r.err
    found = {(f["path"], f["code"]) for f in json.loads(r.out)["findings"]}
    assert ("inside.py", "M101") in found  # the control: the same text inside is read, its clock found
    assert not any(path in ("linked.py", "climbing.py") for path, _ in found), found
    assert SECRET not in r.out + r.err  # the outside text never reaches a report


# The same for a template the agent renders that pulls another in (`{% include %}`, `{% extends %}`,
# followed by the flow since this round): the pulled-in file is read only inside the repository.
_PULL = {
    "include": '{{% include {name!r} %}}\n',
    "extends": '{{% extends {name!r} %}}\n{{% block answer %}}Answer briefly.{{% endblock %}}\n',
}


@pytest.mark.parametrize("how", sorted(_PULL))
def test_templates_pulled_in_from_outside_the_repository_are_never_read(tmp_path, cli, how):
    from hostile_repo import SECRET

    root, outside = tmp_path / "repo", tmp_path / "outside"
    root.mkdir(), outside.mkdir()
    (root / "promptlint.toml").write_text("", encoding="utf-8")
    for where, mark in ((outside, SECRET), (root, "inside")):
        text = "Now: {{ now }} " + mark + "\n" + "Follow the shop policy and answer briefly. " * 40 + "\n"
        text += "{% block answer %}{% endblock %}\n" if how == "extends" else ""
        (where / "base.j2").write_text(text, encoding="utf-8")
    os.symlink(outside / "base.j2", root / "linked.j2")
    names = {"inside.py": "base.j2", "linked.py": "linked.j2", "climbing.py": "../outside/base.j2"}
    for module, name in names.items():
        (root / f"{module[:-3]}_main.j2").write_text(_PULL[how].format(name=name), encoding="utf-8")
        build = f"env.get_template({module[:-3] + '_main.j2'!r}).render(now=now)"
        (root / module).write_text(_FILE_AGENT.format(name=f"{module[:-3]}_main.j2", build=build), encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "json", *names, cwd=root)
    assert "Traceback" not in r.err, r.err
    found = {(f["path"], f["code"]) for f in json.loads(r.out)["findings"]}
    assert any(code == "M101" and path in ("inside.py", "base.j2") for path, code in found), found  # the control
    assert not any(path in ("linked.py", "climbing.py", "linked.j2") for path, _ in found), found
    assert SECRET not in r.out + r.err  # the outside text never reaches a report
