"""Model directories that share a tokenizer.json (a copy, a symlink, a hard link) share one parse,
and a run holds one directory tokenizer at a time (issue 23)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import MISTRAL, QWEN
from promptlint.driver import lint as lint_mod
from promptlint.tokenization import tokens
from promptlint.project.config import Settings
from promptlint.driver.lint import lint
from promptlint.pools.tokenizers import active as active_pool

# A chat template whose date comes first: M101 in every directory (a finding to compare), and
# `eos_token` in the render, so each directory's own tokenizer_config.json matters.
TEMPLATE = (
    "Today is {{ strftime_now('%d %B %Y') }}.\n"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}{{ eos_token }}"
)


def _model_dir(root: Path, name: str, tokenizer: Path, how: str, eos: str = "<|im_end|>") -> Path:
    d = root / name
    d.mkdir(parents=True)
    target = d / "tokenizer.json"
    if how == "copy":
        shutil.copyfile(tokenizer, target)
    elif how == "symlink":
        target.symlink_to(tokenizer)
    elif how == "hardlink":
        os.link(tokenizer, target)
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": eos, "chat_template": TEMPLATE}
    (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return d


def _forget(*files: Path) -> None:
    """Start from an unparsed state for these tokenizers (other tests in the process may hold them)."""
    for f in files:
        active_pool().release(tokens.tokenizer_file_sha256(f))


def _held() -> dict:
    """The parsed tokenizers the active pool holds (sha256 -> parse)."""
    from promptlint.pools.tokenizers import active

    return active().parsed


def _by_path(findings):
    out = {}
    for f in findings:
        out.setdefault(f.path, []).append(f.to_dict())
    return out


def test_three_directories_one_tokenizer_parse_it_once_and_find_what_separate_runs_find(tmp_path, monkeypatch):
    root = tmp_path / "project"
    models = root / "models"
    original = _model_dir(models, "a-original", QWEN, "copy")
    copy = _model_dir(models, "b-copy", QWEN, "copy", eos="<|endoftext|>")
    link = _model_dir(models, "c-symlink", original / "tokenizer.json", "symlink")
    monkeypatch.chdir(root)
    settings = Settings(root=root)
    _forget(QWEN)

    before = tokens.parse_count()
    together = lint(["models"], settings, use_cache=False)
    assert tokens.parse_count() - before == 1
    assert together.files == 3

    separate_findings, separate_notices = [], []
    for d in (original, copy, link):
        _forget(QWEN)
        one = lint([str(d.relative_to(root))], settings, use_cache=False)
        assert one.errors == []
        separate_findings += one.findings
        separate_notices += one.notices
    assert together.errors == []
    # three M101s, one per directory, each where the template reads the clock (line 1)
    assert sorted((f.path, f.code, f.line) for f in together.findings if f.code == "M101") == [
        (f"models/{d}/tokenizer_config.json", "M101", 1) for d in ("a-original", "b-copy", "c-symlink")
    ]
    assert _by_path(together.findings) == _by_path(separate_findings)
    assert [f.to_dict() for f in together.findings] == sorted(
        [f.to_dict() for f in separate_findings], key=lambda d: (d["path"], d["line"], d["column"], d["code"])
    )
    assert together.notices == separate_notices


def test_a_copy_a_symlink_and_a_hard_link_share_the_parse_but_not_the_special_tokens(tmp_path):
    a = _model_dir(tmp_path, "a", QWEN, "copy", eos="<|im_end|>")
    b = _model_dir(tmp_path, "b", a / "tokenizer.json", "symlink", eos="<|endoftext|>")
    c = _model_dir(tmp_path, "c", a / "tokenizer.json", "hardlink", eos="</s>")
    _forget(QWEN)
    before = tokens.parse_count()
    loaded = [tokens.load(tokens.resolve(str(d))) for d in (a, b, c)]
    assert tokens.parse_count() - before == 1
    assert loaded[0]._tok is loaded[1]._tok is loaded[2]._tok
    assert [t.special_tokens["eos_token"] for t in loaded] == ["<|im_end|>", "<|endoftext|>", "</s>"]
    # the shared parse encodes as a fresh one does
    from tokenizers import Tokenizer

    text = "Hello <|im_start|>user wörld"
    assert loaded[1].encode(text).ids == Tokenizer.from_file(str(QWEN)).encode(text, add_special_tokens=False).ids
    active_pool().release(loaded[0].sha256)
    tokens.load(tokens.resolve(str(b)))
    assert tokens.parse_count() - before == 2  # released: parsed again when needed again


def test_the_run_holds_one_directory_tokenizer_at_a_time_and_keeps_the_report_order(tmp_path, monkeypatch):
    """Directories alternate between two tokenizers in discovery order; the run analyses each
    tokenizer's directories together and lets it go after its last one."""
    root = tmp_path / "project"
    models = root / "models"
    dirs = [_model_dir(models, f"m{i}", QWEN if i % 2 == 0 else MISTRAL, "copy") for i in range(4)]
    monkeypatch.chdir(root)
    _forget(QWEN, MISTRAL)
    held, order = [], []
    real_lint_file = lint_mod.lint_file

    ours = (tokens.tokenizer_file_sha256(QWEN), tokens.tokenizer_file_sha256(MISTRAL))

    def observed(path, ctx, text=None):
        held.append(sum(sha in _held() for sha in ours))  # other tests' tokenizers may stay loaded
        order.append(path.name)
        return real_lint_file(path, ctx, text)

    monkeypatch.setattr(lint_mod, "lint_file", observed)
    before = tokens.parse_count()
    result = lint(["models"], Settings(root=root), use_cache=False, jobs=1)  # observed in this process
    assert tokens.parse_count() - before == 2
    assert order == ["m0", "m2", "m1", "m3"]  # grouped by tokenizer, first appearance first
    assert max(held) == 1 and held[2] == 0  # the first tokenizer was released before the second group
    assert not _held() or all(sha not in _held() for sha in (tokens.tokenizer_file_sha256(QWEN), tokens.tokenizer_file_sha256(MISTRAL)))
    assert [f.path for f in result.findings] == sorted(f.path for f in result.findings)
    assert sorted({f.path for f in result.findings if f.code == "M101"}) == [
        f"models/{d.name}/tokenizer_config.json" for d in dirs
    ]


def test_a_configured_tokenizer_is_not_replanned(tmp_path, monkeypatch):
    """With `tokenizer` configured every file uses it: discovery order, nothing released."""
    root = tmp_path / "project"
    models = root / "models"
    for i in range(3):
        _model_dir(models, f"m{i}", QWEN if i != 1 else MISTRAL, "copy")
    monkeypatch.chdir(root)
    order = []
    real_lint_file = lint_mod.lint_file

    def observed(path, ctx, text=None):
        order.append(path.name)
        return real_lint_file(path, ctx, text)

    monkeypatch.setattr(lint_mod, "lint_file", observed)
    lint(["models"], Settings(root=root, tokenizer=str(QWEN)), use_cache=False, jobs=1)
    assert order == ["m0", "m1", "m2"]
    assert tokens.tokenizer_file_sha256(QWEN) in _held()


@pytest.mark.real_tokenizer_parse  # the suite's parse memo would hold it
def test_a_released_tokenizer_is_freed_at_once_not_at_the_next_garbage_collection(tmp_path, monkeypatch):
    """A released tokenizer holds hundreds of MB outside Python's view: nothing may keep it in a
    reference cycle (the variant-window plan it carries once did), which only a GC pass frees."""
    import gc
    import weakref

    root = tmp_path / "project"
    models = root / "models"
    for i in range(2):
        _model_dir(models, f"m{i}", QWEN if i == 0 else MISTRAL, "copy")
    monkeypatch.chdir(root)
    _forget(QWEN, MISTRAL)
    seen = {}
    real_lint_file = lint_mod.lint_file
    ours = (tokens.tokenizer_file_sha256(QWEN), tokens.tokenizer_file_sha256(MISTRAL))

    def observed(path, ctx, text=None):
        out = real_lint_file(path, ctx, text)
        for sha in ours:
            if sha in _held():
                seen.setdefault(sha, weakref.ref(_held()[sha]))
        return out

    monkeypatch.setattr(lint_mod, "lint_file", observed)
    gc.collect()
    gc.disable()
    try:
        result = lint(["models"], Settings(root=root), use_cache=False, jobs=1)
        assert {f.code for f in result.findings} >= {"M101"}  # the windows ran: variants were measured
        assert set(seen) == set(ours)
        assert all(ref() is None for ref in seen.values())
    finally:
        gc.enable()
