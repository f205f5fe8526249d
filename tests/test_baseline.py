"""`check --baseline REF`: a real git repository in a temp dir, the template at REF read from git
objects, the blocks per request checked against a direct `tokenizers` encode of the test's own
render of the two consecutive requests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import QWEN, shared_prefix

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")

RULES = "\n".join(f"{i}. Always be helpful and polite; this is rule number {i} of the support policy." for i in range(1, 15))
HEAD = "You are the support assistant of a shop.\n" + RULES + "\n"
STAMP = ("2024-05-01T10:00:00Z", "2024-05-01T10:00:07Z")  # the samples file's value and variant
QUESTION = ("Where is my order?", "Can I return a tent?")
CLEAN = HEAD + "Time: {{ timestamp }}\nQuestion: {{ question }}\n"
STAMP_FIRST = "Time: {{ timestamp }}\n" + HEAD + "Question: {{ question }}\n"
SAMPLES = f"""[variables]
timestamp = {{ value = "{STAMP[0]}", kind = "volatile", sub-kind = "timestamp", variant = "{STAMP[1]}" }}
question = {{ value = "{QUESTION[0]}", kind = "per-request", variant = "{QUESTION[1]}" }}
"""


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env).stdout


def repo(tmp_path: Path, committed: str) -> Path:
    root = tmp_path / "repo"
    (root / "prompts").mkdir(parents=True)
    shutil.copy(QWEN, root / "tokenizer.json")
    (root / "promptlint.toml").write_text('tokenizer = "tokenizer.json"\n', encoding="utf-8")
    (root / "prompts" / "support.j2").write_text(committed, encoding="utf-8")
    (root / "prompts" / "support.samples.toml").write_text(SAMPLES, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "prompts")
    return root


def blocks_per_request(qwen, template: str) -> int:
    """The test's own render of two consecutive requests, encoded directly: floor(min(S, P-1)/16)."""
    def render(i: int) -> str:
        return template.replace("{{ timestamp }}", STAMP[i]).replace("{{ question }}", QUESTION[i])

    a = qwen.encode(render(0), add_special_tokens=False).ids
    b = qwen.encode(render(1), add_special_tokens=False).ids
    return min(shared_prefix(a, b), len(b) - 1) // 16


@pytest.fixture
def check(cli):
    def run(root: Path, *args: str):
        return cli("check", "--no-cache", "--output-format", "json", *args, cwd=root)

    return run


def test_moving_the_timestamp_first_is_a_regression_and_its_finding_is_new(tmp_path, qwen, check):
    root = repo(tmp_path, CLEAN)
    (root / "prompts" / "support.j2").write_text(STAMP_FIRST, encoding="utf-8")
    before, after = blocks_per_request(qwen, CLEAN), blocks_per_request(qwen, STAMP_FIRST)
    assert before > 10 and after <= 1  # the test's premise: the move costs most of the prompt

    r = check(root, "--baseline", "HEAD")
    assert r.code == 1, r.err
    doc = r.json()
    [row] = doc["baseline"]["templates"]
    assert row["path"] == "prompts/support.j2" and row["scenario"] == "base" and row["status"] == "regression"
    assert row["before"]["eligible_blocks"] == before and row["after"]["eligible_blocks"] == after
    assert row["delta_blocks"] == after - before and row["lost_tokens"] == (before - after) * 16
    assert doc["baseline"]["commit"] == git(root, "rev-parse", "HEAD").strip()
    assert doc["baseline"]["summary"]["regressions"] == 1
    [m101] = doc["findings"]
    assert m101["code"] == "M101" and m101["baseline"] == "new"
    assert doc["baseline"]["findings"] == {"new": 1, "existing": 0, "fixed": 0}
    # the user's tree is untouched: the baseline was read from git objects
    assert git(root, "status", "--porcelain").strip() == "M prompts/support.j2"
    assert (root / "prompts" / "support.j2").read_text(encoding="utf-8") == STAMP_FIRST


def test_the_reverse_change_is_an_improvement_and_exits_0(tmp_path, qwen, check):
    root = repo(tmp_path, STAMP_FIRST)
    (root / "prompts" / "support.j2").write_text(CLEAN, encoding="utf-8")
    r = check(root, "--baseline", "HEAD")
    assert r.code == 0, r.err
    doc = r.json()
    [row] = doc["baseline"]["templates"]
    assert row["status"] == "improvement"
    assert (row["before"]["eligible_blocks"], row["after"]["eligible_blocks"]) == (
        blocks_per_request(qwen, STAMP_FIRST), blocks_per_request(qwen, CLEAN))
    assert doc["findings"] == [] and doc["baseline"]["findings"] == {"new": 0, "existing": 0, "fixed": 1}


def test_an_existing_finding_is_marked_and_fail_on_decides(tmp_path, check):
    root = repo(tmp_path, STAMP_FIRST)
    # an unrelated edit: the hazard was already there
    (root / "prompts" / "support.j2").write_text("Note.\n" + STAMP_FIRST, encoding="utf-8")
    r = check(root, "--baseline", "HEAD")
    doc = r.json()
    assert [f["baseline"] for f in doc["findings"]] == ["existing"]
    assert doc["baseline"]["templates"][0]["status"] == "unchanged"
    assert r.code == 0
    assert check(root, "--baseline", "HEAD", "--fail-on", "new-finding").code == 0
    assert check(root, "--baseline", "HEAD", "--fail-on", "any").code == 1


def test_new_and_removed_templates(tmp_path, check):
    root = repo(tmp_path, CLEAN)
    git(root, "mv", "prompts/support.j2", "prompts/help.j2")
    git(root, "mv", "prompts/support.samples.toml", "prompts/help.samples.toml")
    doc = check(root, "--baseline", "HEAD").json()
    statuses = {(t["path"], t["status"]) for t in doc["baseline"]["templates"]}
    assert statuses == {("prompts/help.j2", "new"), ("prompts/support.j2", "removed")}


def test_a_symlink_leaving_the_tree_at_the_baseline_is_not_followed(tmp_path, check):
    root = repo(tmp_path, CLEAN)
    secret = tmp_path / "secret.j2"
    secret.write_text("SECRET {{ x }}\n", encoding="utf-8")
    os.symlink(secret, root / "prompts" / "leak.j2")
    os.symlink("../../secret.j2", root / "prompts" / "leak2.j2")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "links")
    (root / "prompts" / "leak.j2").unlink()
    (root / "prompts" / "leak2.j2").unlink()
    doc = check(root, "--baseline", "HEAD").json()
    paths = {t["path"] for t in doc["baseline"]["templates"]}
    assert paths == {"prompts/support.j2"}
    assert "SECRET" not in json.dumps(doc)


def test_usage_errors_are_one_line(tmp_path, check):
    root = repo(tmp_path, CLEAN)
    r = check(root, "--baseline", "no-such-branch")
    assert r.code == 2 and "no-such-branch" in r.err and "Traceback" not in r.err
    r = check(root, "--fail-on", "regression")
    assert r.code == 2 and "--baseline" in r.err
    r = check(root, "--baseline", "auto")
    assert r.code == 2 and "origin/HEAD" in r.err
    outside = tmp_path / "norepo"
    outside.mkdir()
    (outside / "promptlint.toml").write_text("", encoding="utf-8")
    r = check(outside, "--baseline", "HEAD")
    assert r.code == 2 and "git" in r.err


def test_a_chat_template_is_measured_per_scenario(tmp_path, check):
    """A model directory's chat template (Qwen2.5, the corpus's): the clock written first in the
    working tree leaves no full block shared by two requests in any scenario."""
    from chat_helpers import TEMPLATES

    root = tmp_path / "repo"
    model = root / "model"
    model.mkdir(parents=True)
    shutil.copy(QWEN, model / "tokenizer.json")
    template = (TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text(encoding="utf-8")
    (model / "chat_template.jinja").write_text(template, encoding="utf-8")
    (model / "tokenizer_config.json").write_text('{"eos_token": "<|im_end|>", "chat_template": "x"}', encoding="utf-8")
    (root / "promptlint.toml").write_text("", encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "model")
    (model / "chat_template.jinja").write_text('{{- strftime_now("%H:%M:%S") }}\n' + template, encoding="utf-8")
    r = check(root, "--baseline", "HEAD", "model")
    assert r.code == 1, r.err
    rows = r.json()["baseline"]["templates"]
    assert len(rows) >= 2 and len({row["scenario"] for row in rows}) == len(rows)
    for row in rows:
        assert row["path"] == "model" and row["status"] == "regression"
        assert row["before"]["eligible_blocks"] > 0 and row["after"]["eligible_blocks"] == 0
        assert row["after"]["shared_tokens"] < 16  # the seconds differ within the first few tokens
