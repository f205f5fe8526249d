"""A check is one plan (issue 28): the models' runs, the baseline's measurements and REF's runs are
its steps; the plan knows which tokenizers each step loads, so each is parsed once for a model's
consecutive steps and let go after the last (``lint.let_go``, the one place: tests/test_architecture.py);
the Result is built once, at the end, and is frozen."""

from __future__ import annotations

import ast
import dataclasses
import shutil
from pathlib import Path

import pytest

from conftest import MISTRAL, QWEN
from promptlint.pools.tokenizers import TokenizerPool
from promptlint.project.config import Settings
from test_baseline import CLEAN, STAMP_FIRST, repo


class Recording(TokenizerPool):
    """A real transient pool that also writes down, in order, each parse and each release it is asked for."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.events = []

    def parsed_for(self, sha, parse):
        before = self.parses
        out = super().parsed_for(sha, parse)
        if self.parses > before:
            self.events.append(("parse", sha))
        return out

    def release(self, sha):
        self.events.append(("release", sha))
        super().release(sha)


def _two_models(root: Path):
    """Two deployed models whose tokenizer.json no other file shares (copies: their own sha256)."""
    from promptlint.tokenization import tokens

    out, shas = [], []
    for name, source in (("qwen", QWEN), ("mistral", MISTRAL)):
        target = root / f"{name}.json"
        shutil.copy(source, target)
        out.append((name, str(target), None, None, None))
        shas.append(tokens.tokenizer_file_sha256(target))
    return tuple(out), shas


def test_a_models_tokenizer_is_parsed_once_for_its_run_and_its_baseline_then_let_go(tmp_path, monkeypatch):
    """`tokenizers` with two models and --baseline: per model, the working tree's run, both trees'
    measurements and REF's run follow each other, so each tokenizer is parsed once (4 steps) and
    released once, after its model's last step, before the next model's is parsed. (Before the plan:
    released after the model's run and parsed again for the baseline: 4 parses.)"""
    from promptlint.driver.workspace import Workspace

    root = repo(tmp_path, CLEAN)
    models, (qwen, mistral) = _two_models(root)
    (root / "prompts" / "support.j2").write_text(STAMP_FIRST, encoding="utf-8")  # the timestamp moved first: a regression
    monkeypatch.chdir(root)
    pool = Recording()
    ws = Workspace(Settings(root=root, tokenizers=models), use_cache=False, pool=pool)
    result = ws.check(["prompts"], baseline="HEAD")
    assert pool.events == [("parse", qwen), ("release", qwen), ("parse", mistral), ("release", mistral)]
    assert pool.parses == 2 and pool.held() == 0
    assert [m.name for m in result.models] == ["qwen", "mistral"]
    assert result.baseline is not None and result.baseline.regressions  # both models measured, at HEAD and now
    assert {(d.before.model, d.after.model) for d in result.baseline.deltas} == {("qwen", "qwen"), ("mistral", "mistral")}
    assert [f.baseline for f in result.findings if f.code == "M101"] == ["new"]


def test_one_model_keeps_its_tokenizer_after_the_check_and_its_baseline(tmp_path, monkeypatch):
    """One configured tokenizer: the working tree's run, the measurements and REF's run share one
    parse, and the tokenizer stays in the workspace for what follows (a fix's re-check)."""
    from promptlint.driver.workspace import Workspace
    from promptlint.tokenization import tokens

    root = repo(tmp_path, CLEAN)
    (root / "prompts" / "support.j2").write_text(STAMP_FIRST, encoding="utf-8")
    monkeypatch.chdir(root)
    pool = Recording()
    result = Workspace(Settings(root=root, tokenizer=str(root / "tokenizer.json")), use_cache=False, pool=pool).check(
        [], baseline="HEAD")
    sha = tokens.tokenizer_file_sha256(root / "tokenizer.json")
    assert pool.events == [("parse", sha)] and pool.held() == 1
    assert result.baseline.regressions and result.tokenizer_sha256 == sha


CHAT = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"


def test_model_directories_are_let_go_one_after_the_other(tmp_path, monkeypatch):
    """No configured tokenizer: two model directories with their own tokenizer.json; each is parsed
    for its group of files and let go before the next is parsed (one held at a time)."""
    import json

    from promptlint.driver.workspace import Workspace
    from promptlint.tokenization import tokens

    root = tmp_path / "project"
    shas = []
    for name, source in (("a", QWEN), ("b", MISTRAL)):
        d = root / name
        d.mkdir(parents=True)
        shutil.copy(source, d / "tokenizer.json")
        (d / "tokenizer_config.json").write_text(json.dumps({"chat_template": CHAT}), encoding="utf-8")
        shas.append(tokens.tokenizer_file_sha256(d / "tokenizer.json"))
    (root / "promptlint.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(root)
    pool = Recording()
    result = Workspace(Settings(root=root), use_cache=False, pool=pool).check(["a", "b"])
    assert result.files == 2 and not result.errors
    assert pool.events == [("parse", shas[0]), ("release", shas[0]), ("parse", shas[1]), ("release", shas[1])]


def test_the_baseline_is_a_step_of_the_plan_not_a_second_lint_entry():
    """promptlint.driver.baseline measures and concludes; REF's lint run is a run of the check's plan
    (promptlint.driver.check_plan), so the module calls no `lint(...)` of its own."""
    import promptlint.driver.baseline as baseline

    tree = ast.parse(Path(baseline.__file__).read_text(encoding="utf-8"))
    calls = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "promptlint.driver.lint"
                for a in n.names}
    assert "lint" not in calls and not imported


def test_the_result_is_built_once_and_frozen(tmp_path, monkeypatch):
    """The run accumulates in its plan; finish builds the Result, which nothing changes afterwards
    (the cost and the baseline marks make copies); each model it ran for is a typed record."""
    from promptlint.base.records import ModelRun
    from promptlint.driver.workspace import Workspace

    root = repo(tmp_path, CLEAN)
    models, (qwen, mistral) = _two_models(root)
    monkeypatch.chdir(root)
    result = Workspace(Settings(root=root, tokenizers=models), use_cache=False).check(["prompts"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.findings = []
    assert result.models == (
        ModelRun("qwen", str(root / "qwen.json"), qwen, "vllm", 16),
        ModelRun("mistral", str(root / "mistral.json"), mistral, "vllm", 16),
    )
    assert result.to_dict("0")["models"][1] == {"name": "mistral", "path": str(root / "mistral.json"), "sha256": mistral,
                                                "engine": "vllm", "block_size": 16}
