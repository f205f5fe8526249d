"""The composite GitHub Action (action.yml), run locally: its `run:` script with the inputs and
the `github` context substituted as the runner does, GITHUB_STEP_SUMMARY/GITHUB_OUTPUT pointed
at temp files, against a real git repository whose pull request moves timestamps first. The
Action runs python isolated (-I: no PYTHONPATH), so its `python` input is an installation of this
checkout (tests/installation.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import installation
from conftest import REPO
from test_baseline import CLEAN, HEAD, STAMP_FIRST, git, repo

yaml = pytest.importorskip("yaml")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("bash") is None or shutil.which("git") is None, reason="needs bash and git")]

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def python(tmp_path_factory):
    return str(installation.make(tmp_path_factory.mktemp("inst") / "venv"))


def expression(expr: str, inputs: dict, github: dict) -> str:
    """The `a || b` expressions action.yml uses, over `inputs.*` and `github.*`."""
    for operand in expr.split("||"):
        scope, _, name = operand.strip().partition(".")
        value = inputs.get(name, "") if scope == "inputs" else github
        if scope == "github":
            for part in name.split("."):
                value = value.get(part, "") if isinstance(value, dict) else ""
        if value:
            return str(value)
    return ""


def run_step(step_id: str, given: dict, github: dict, cwd: Path, runner_temp: Path):
    inputs = {k: v.get("default", "") for k, v in ACTION["inputs"].items()}
    inputs.update(given)
    [step] = [s for s in ACTION["runs"]["steps"] if s.get("id") == step_id]
    env = {k: re.sub(r"\$\{\{(.+?)\}\}", lambda m: expression(m.group(1), inputs, github), str(v)) for k, v in step["env"].items()}
    if "PROMPTLINT_VENV" in env and inputs.get("python"):  # the set-up step's output: the installation's venv
        env["PROMPTLINT_VENV"] = str(Path(inputs["python"]).parent.parent)
    files = {name: runner_temp / name.lower() for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT")}
    for f in files.values():
        f.write_text("", encoding="utf-8")
    script = runner_temp / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    # GITHUB_ACTIONS and CI as the runner sets them: promptlint runs in untrusted mode (tracked files only)
    full_env = dict(os.environ, GITHUB_ACTIONS="true", CI="true")
    full_env.update(env, RUNNER_TEMP=str(runner_temp), GITHUB_WORKSPACE=str(cwd), **{k: str(v) for k, v in files.items()})
    # as the runner runs a `shell: bash` step
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=full_env,
                          capture_output=True, text=True)
    outputs = dict(line.split("=", 1) for line in files["GITHUB_OUTPUT"].read_text(encoding="utf-8").splitlines())
    return done, files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8"), outputs


def test_the_action_annotates_the_costliest_first_summarises_everything_and_fails_on_the_regression(tmp_path, python):
    root = repo(tmp_path, CLEAN)
    base_sha = git(root, "rev-parse", "HEAD").strip()
    samples = (root / "prompts" / "support.samples.toml").read_text(encoding="utf-8")
    (root / "prompts" / "support.j2").write_text(STAMP_FIRST, encoding="utf-8")  # the regression
    # 11 more templates with the timestamp first: the longer the shared text, the more it costs
    for i in range(11):
        extra = "".join(f"Extra rule {j}: answer in the customer's language.\n" for j in range(i * 3))
        (root / "prompts" / f"t{i:02d}.j2").write_text("Time: {{ timestamp }}\n" + HEAD + extra + "Question: {{ question }}\n",
                                                      encoding="utf-8")
        (root / "prompts" / f"t{i:02d}.samples.toml").write_text(samples, encoding="utf-8")
    git(root, "add", "-A")  # the pull request's checkout: its files are tracked
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "the pull request")
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    github = {"event": {"pull_request": {"base": {"sha": base_sha}}}, "action_path": str(REPO)}
    done, summary, outputs = run_step("run", {"python": python, "sarif": str(tmp_path / "out.sarif"), "args": "--select M101"}, github,
                                      root, runner_temp)
    assert done.returncode == 1, done.stderr
    # 12 findings, all new since the base (support.j2 was clean there, t00-t10 did not exist); one regression
    assert outputs == {"exit-code": "1", "sarif": str(tmp_path / "out.sarif"), "markdown": str(runner_temp / "promptlint-report.md"),
                       "findings": "12", "new-findings": "12", "regressions": "1"}
    annotations = [l for l in done.stdout.splitlines() if l.startswith("::")]
    files = [re.search(r"file=([^,]+)", a).group(1) for a in annotations]
    assert len(annotations) == 12 and all(a.startswith("::warning ") for a in annotations)
    # costliest first: the template with the most shared text after the timestamp leads
    # (support.j2 and t00.j2 lose the same: path order)
    assert files == [f"prompts/t{i:02d}.j2" for i in range(10, 0, -1)] + ["prompts/support.j2", "prompts/t00.j2"]
    assert "2 findings above have no annotation" in summary
    assert "🔴 regression" in summary and "prompts/support.j2" in summary
    assert summary.count("| [`M101`](") == 12  # every finding is in the summary
    sarif = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert len(sarif["runs"][0]["results"]) == 12


def test_outside_a_pull_request_there_is_no_baseline_and_a_clean_tree_passes(tmp_path, python):
    root = repo(tmp_path, CLEAN)
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    done, summary, outputs = run_step("run", {"python": python, "args": "prompts 'prompts/support.j2'"},
                                      {"event": {}, "action_path": str(REPO)}, root, runner_temp)
    assert done.returncode == 0, done.stderr
    assert outputs["exit-code"] == "0" and "Baseline" not in summary and "No findings (1 file checked)." in summary


def test_an_unbalanced_quote_in_args_is_a_clear_error(tmp_path, python):
    root = repo(tmp_path, CLEAN)
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    done, _, _ = run_step("run", {"python": python, "args": "'prompts"}, {"event": {}}, root, runner_temp)
    assert done.returncode == 2 and "cannot be split" in done.stdout


def test_the_install_step_installs_the_requested_version_or_the_action_itself():
    [install] = [s for s in ACTION["runs"]["steps"] if s["name"] == "Install promptlint"]
    assert "promptlint-kv==$PROMPTLINT_VERSION" in install["run"] and "$PROMPTLINT_ACTION_PATH" in install["run"]
    assert ACTION["runs"]["using"] == "composite"
    assert set(ACTION["outputs"]) == {"exit-code", "sarif", "markdown", "findings", "new-findings", "regressions"}


def test_reports_go_under_the_runner_temp_never_through_a_committed_file(tmp_path, python):
    """The pull request commits `promptlint.sarif -> .git/config` (the default sarif name): the Action
    writes its reports under the runner's temporary directory, so the link is never touched."""
    root = repo(tmp_path, CLEAN)
    config = (root / ".git" / "config").read_bytes()
    os.symlink(".git/config", root / "promptlint.sarif")
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    done, summary, outputs = run_step("run", {"python": python, "args": "prompts"}, {"event": {}, "action_path": str(REPO)},
                                      root, runner_temp)
    assert done.returncode == 0, done.stderr
    assert outputs["sarif"] == str(runner_temp / "promptlint.sarif") and outputs["findings"] == "0"
    assert json.loads((runner_temp / "promptlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"] == []
    assert (root / ".git" / "config").read_bytes() == config and os.readlink(root / "promptlint.sarif") == ".git/config"
    assert sorted(p.name for p in root.iterdir()) == sorted([".git", "prompts", "promptlint.toml", "tokenizer.json", "promptlint.sarif"])
