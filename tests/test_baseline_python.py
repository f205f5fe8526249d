"""`check --baseline REF` over Python prompt builders: a real two-commit git repository, the
builder at REF read from git objects, every figure checked against the test's own render of two
consecutive requests (the documented sample values, docs/python.md) encoded directly with
`tokenizers` — never from promptlint's numbers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import QWEN, shared_prefix

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")

B = 16  # vLLM's default block size
TS = ("2025-03-14 09:26:53", "2025-03-14 09:27:00")  # datetime.now(): the two documented samples
QUESTION = ("How do I reset my password?", "Where is my order #4417?")  # a per-request parameter's samples
ANTHROPIC_MINIMUM = 1024  # claude-sonnet-4-5 in data/hosted-cache-minimums.json
POLICY_LINES = [f"Rule {i}: greet the customer, never invent order numbers, and cite the policy section you rely on.\n"
                for i in range(1, 91)]
POLICY = "".join(POLICY_LINES)
POLICY_SOURCE = "(\n" + "".join(f"    {json.dumps(line)}\n" for line in POLICY_LINES) + ")"
SYSTEM_CLEAN = "POLICY"
SYSTEM_STAMPED = 'f"Now: {datetime.now()}\\n" + POLICY'


def anthropic_builder(system: str) -> str:
    return f'''from datetime import datetime

import anthropic

client = anthropic.Anthropic()
POLICY = {POLICY_SOURCE}


def build_system():
    return [{{"type": "text", "text": {system}, "cache_control": {{"type": "ephemeral"}}}}]


def answer(question):
    return client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        system=build_system(),
        messages=[{{"role": "user", "content": question}}],
    )
'''


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env).stdout


def commit(root: Path, files: dict, message: str) -> None:
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


def two_commits(tmp_path: Path, first: str, second: str) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(QWEN, root / "tokenizer.json")
    git(root, "init", "-q")
    commit(root, {"promptlint.toml": 'tokenizer = "tokenizer.json"\n', "agent.py": first}, "a builder")
    commit(root, {"agent.py": second}, "the change under review")
    return root


def enc(qwen, text: str):
    return qwen.encode(text, add_special_tokens=False).ids


def check(cli, root: Path, fmt: str, *args: str):
    return cli("check", "--no-cache", "--output-format", fmt, "--baseline", "HEAD~1", *args, cwd=root)


@pytest.fixture
def stamped_repo(tmp_path):
    return two_commits(tmp_path, anthropic_builder(SYSTEM_CLEAN), anthropic_builder(SYSTEM_STAMPED))


def expected_anthropic(qwen):
    """Blocks per request of the two revisions: at REF the system breakpoint closes the same
    policy in both requests (above the minimum); after the change its prefix differs every time."""
    policy = len(enc(qwen, POLICY))
    assert policy >= ANTHROPIC_MINIMUM  # the premise: the breakpoint is cached at REF
    before_prompt = len(enc(qwen, POLICY + "\n\n" + QUESTION[1]))
    after_prompt = len(enc(qwen, f"Now: {TS[1]}\n" + POLICY + "\n\n" + QUESTION[1]))
    stamped_prefix = len(enc(qwen, f"Now: {TS[0]}\n" + POLICY))  # what M106 says the breakpoint would cache
    return {
        "before": {"eligible_blocks": min(policy, before_prompt - 1) // B, "eligible_tokens": min(policy, before_prompt - 1) // B * B,
                   "prompt_tokens": before_prompt, "shared_tokens": policy},
        "after": {"eligible_blocks": 0, "eligible_tokens": 0, "prompt_tokens": after_prompt, "shared_tokens": 0},
        "stamped_prefix": stamped_prefix,
    }


def test_a_timestamp_before_a_cache_control_block_fails_the_gate(stamped_repo, qwen, cli):
    want = expected_anthropic(qwen)
    r = check(cli, stamped_repo, "json")
    assert r.code == 1, r.err
    doc = r.json()
    [row] = doc["baseline"]["templates"]
    assert row["path"] == "agent.py" and row["template"] == "client.messages.create in answer()"
    assert row["status"] == "regression" and row["scenario"] == "base"
    assert row["before"] == want["before"] and row["after"] == want["after"]
    assert row["delta_blocks"] == -want["before"]["eligible_blocks"]
    assert row["lost_tokens"] == want["before"]["eligible_blocks"] * B
    assert doc["baseline"]["summary"]["regressions"] == 1
    [finding] = doc["findings"]
    assert finding["code"] == "M106" and finding["baseline"] == "new"
    assert f"the {want['stamped_prefix']:,} tokens that breakpoint would cache" in finding["message"]


MARKS = {
    # how each format marks the new finding (tests/test_new_in_every_format.py has the templates' side)
    "full": lambda out: "M106 [new]" in out and "regression" in out,
    "concise": lambda out: "M106 [new]" in out,
    "github": lambda out: any(l.startswith("::") and "M106 [new]" in l for l in out.splitlines()),
    "gitlab": lambda out: "[new]" in json.loads(out)[0]["description"],
    "json": lambda out: json.loads(out)["findings"][0]["baseline"] == "new",
    "json-lines": lambda out: any(json.loads(l).get("baseline") == "new" for l in out.splitlines() if l.strip()),
    "sarif": lambda out: json.loads(out)["runs"][0]["results"][0]["baselineState"] == "new",
    "markdown": lambda out: any(l.startswith("| [`M106`]") and l.rstrip().endswith("| **new** |") for l in out.splitlines()),
}


@pytest.mark.parametrize("fmt", ["full", "concise", "github", "gitlab", "json", "json-lines", "sarif", "markdown"])
def test_every_format_fails_on_the_python_regression(stamped_repo, cli, fmt):
    r = check(cli, stamped_repo, fmt)
    assert r.code == 1, (fmt, r.err)
    assert "M106" in r.out
    assert MARKS[fmt](r.out), r.out


def test_the_regression_fails_fail_on_regression_alone(stamped_repo, cli):
    """The gate's default (`--fail-on regression`) is what fails: not the finding by itself."""
    r = check(cli, stamped_repo, "json", "--fail-on", "regression", "--ignore", "M106")
    assert r.code == 1, r.err
    assert r.json()["findings"] == [] and r.json()["baseline"]["summary"]["regressions"] == 1


def test_rows_pair_by_function_and_call_when_lines_move(tmp_path, qwen, cli):
    """Lines added above a builder do not make it a new prompt; a second call of the same kind
    in one function is `#2`, measured on its own text."""
    first = anthropic_builder(SYSTEM_CLEAN)
    second = "# a comment\n\n\n" + first.replace(
        'messages=[{"role": "user", "content": question}],\n    )\n',
        'messages=[{"role": "user", "content": question}],\n    ) or client.messages.create(\n'
        '        model="claude-sonnet-4-5", max_tokens=1024, system=build_system(),\n'
        '        messages=[{"role": "user", "content": f"Now: {datetime.now()} {question}"}],\n    )\n')
    root = two_commits(tmp_path, first, second)
    r = check(cli, root, "json", "--fail-on", "regression")
    assert r.code == 0, r.err
    rows = {row["template"]: row for row in r.json()["baseline"]["templates"]}
    assert set(rows) == {"client.messages.create in answer()", "client.messages.create in answer() #2"}
    assert rows["client.messages.create in answer()"]["status"] == "unchanged"
    new = rows["client.messages.create in answer() #2"]
    policy = len(enc(qwen, POLICY))
    prompt = len(enc(qwen, POLICY + "\n\n" + f"Now: {TS[1]} {QUESTION[1]}"))
    assert new["status"] == "new" and new["after"]["shared_tokens"] == policy  # the breakpoint closes the policy
    assert new["after"]["eligible_blocks"] == min(policy, prompt - 1) // B and new["after"]["prompt_tokens"] == prompt


OPENAI = '''from datetime import datetime

from openai import OpenAI

client = OpenAI()
POLICY = {policy}


def answer(question):
    return client.chat.completions.create(
        model="served-model",
        messages=[{{"role": "system", "content": {system}}}, {{"role": "user", "content": question}}],
    )
'''


def test_automatic_prefix_caching_counts_the_shared_tokens(tmp_path, qwen, cli):
    """A Chat Completions call (prefix caching without breakpoints): S is the two requests' common
    prefix, so a timestamp put before the policy loses the policy's blocks."""
    root = two_commits(tmp_path, OPENAI.format(policy=POLICY_SOURCE, system="POLICY"),
                       OPENAI.format(policy=POLICY_SOURCE, system='f"Now: {datetime.now()} " + POLICY'))
    r = check(cli, root, "json", "--fail-on", "regression")
    [row] = r.json()["baseline"]["templates"]

    def figures(system):
        a = enc(qwen, system(0) + "\n\n" + QUESTION[0])
        b = enc(qwen, system(1) + "\n\n" + QUESTION[1])
        s = shared_prefix(a, b)
        return {"eligible_blocks": min(s, len(b) - 1) // B, "eligible_tokens": min(s, len(b) - 1) // B * B,
                "prompt_tokens": len(b), "shared_tokens": s}

    assert row["template"] == "client.chat.completions.create in answer()"
    assert row["before"] == figures(lambda i: POLICY)
    assert row["after"] == figures(lambda i: f"Now: {TS[i]} " + POLICY)
    assert row["before"]["eligible_blocks"] > 100 and row["after"]["eligible_blocks"] <= 1  # the premise
    assert row["status"] == "regression" and r.code == 1


def test_a_builder_that_no_longer_parses_is_a_regression(tmp_path, cli):
    root = two_commits(tmp_path, anthropic_builder(SYSTEM_CLEAN), anthropic_builder(SYSTEM_CLEAN) + "def broken(:\n")
    r = check(cli, root, "json")
    assert r.code == 1, r.err
    [row] = r.json()["baseline"]["templates"]
    assert row["status"] == "regression" and row["after"] is None and row["error"].startswith("E008 ")


def test_every_analyzer_declares_measure():
    """The registry is the single source: an analyzer that can report findings must measure."""
    from promptlint import analyzers

    for module in analyzers.modules():
        assert callable(module.measure), module.__name__


def test_an_analyzer_without_measure_is_refused(monkeypatch, tmp_path):
    import sys
    import types

    from promptlint import analyzers

    fake = types.ModuleType("promptlint_test_fake_analyzer")
    fake.FILES, fake.handles, fake.lint_file = object(), (lambda path: False), (lambda path, text, ctx: [])
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    monkeypatch.setattr(analyzers, "ANALYZERS", analyzers.ANALYZERS + [fake.__name__])
    with pytest.raises(analyzers.AnalyzerContractError, match="promptlint_test_fake_analyzer: an analyzer must declare measure"):
        analyzers.modules()
