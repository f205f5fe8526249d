"""The Workspace owns a run's state (issue 28): its tokenizer pool holds what its checks parsed, a
resident one keeps it for the next check, a transient one lets a directory's tokenizer go, and
nothing lands in another workspace's pool or the process's. (The daemon's resident Workspace:
tests/test_daemon.py.)"""

from __future__ import annotations

from small_tokenizers import mini_qwen
from promptlint.project.config import Settings

TEMPLATE = ("{{ now }} You are a support agent for Acme. Answer politely.\n"  # a block of shared text after `now`
            "Keep every answer short and friendly, point to the help-centre article that covers the question, "
            "and never promise a refund or a delivery date on the company's behalf.\n{{ question }}\n")


def _own_tokenizer(tmp_path):
    """A tokenizer.json no other test parses: Qwen2.5's cut to 4,000 ids (tests/small_tokenizers.py)
    with a trailing newline (another sha256 than the cut other tests use). These tests are about which
    pool holds a parse, not about the vocabulary: the cut one still puts `now` before the shared
    instructions (M101), and its first load proves its form in milliseconds, not Qwen2.5's ~5 s."""
    path = tmp_path / "tok" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(mini_qwen() + "\n", encoding="utf-8")
    return path


def _project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.j2").write_text(TEMPLATE, encoding="utf-8")
    return root


def test_a_check_parses_into_its_workspace_pool_and_nowhere_else(tmp_path, monkeypatch):
    from promptlint.tokenization import tokens
    from promptlint.driver.workspace import Workspace
    from promptlint.pools.tokenizers import active

    tok = _own_tokenizer(tmp_path)
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    sha = tokens.tokenizer_file_sha256(tok)
    one, other = (Workspace(Settings(root=root, tokenizer=str(tok)), use_cache=False) for _ in range(2))
    result = one.check(["a.j2"])
    assert [f.code for f in result.findings] == ["M101"]  # `now` before the static instructions
    assert result.tokenizer_sha256 == sha
    assert one.pool.parses == 1 and sha in one.pool.parsed  # the run's own tokenizer stays with its workspace
    assert other.pool.parses == 0 and sha not in other.pool.parsed
    assert sha not in active().parsed  # the process's pool (outside any workspace) never saw it


def test_a_resident_workspace_parses_once_across_checks_and_a_transient_one_each_time(tmp_path, monkeypatch):
    from promptlint.driver.workspace import Workspace

    tok = _own_tokenizer(tmp_path)
    root = _project(tmp_path)
    monkeypatch.chdir(root)
    settings = Settings(root=root, tokenizer=str(tok))
    resident = Workspace(settings, resident=True, use_cache=False)
    first = resident.check(["a.j2"])
    again = resident.with_settings(settings).check([], {"a.j2": TEMPLATE})  # the next request: same pool
    assert resident.pool.parses == 1  # one parse for both checks
    assert [f.to_dict() for f in first.findings] == [f.to_dict() for f in again.findings]
    fresh = [Workspace(settings, use_cache=False) for _ in range(2)]
    for ws in fresh:
        ws.check(["a.j2"])
    assert [ws.pool.parses for ws in fresh] == [1, 1]  # each command's workspace parses its own


def test_a_resident_pool_keeps_the_model_tokenizers_within_its_budget(tmp_path, monkeypatch):
    """Two configured models (`tokenizers`): a transient workspace lets each model's tokenizer go after
    its run; a resident one keeps both (2 tokenizers, ~1.6 MB: within 4 and 24 MiB)."""
    from conftest import MISTRAL
    from promptlint.driver.workspace import Workspace

    root = _project(tmp_path)
    monkeypatch.chdir(root)
    models = (("qwen", str(_own_tokenizer(tmp_path)), None, None, None), ("mistral", str(MISTRAL), None, None, None))
    settings = Settings(root=root, tokenizers=models)
    transient, resident = Workspace(settings, use_cache=False), Workspace(settings, resident=True, use_cache=False)
    a, b = transient.check(["a.j2"]), resident.check(["a.j2"])
    assert [f.to_dict() for f in a.findings] == [f.to_dict() for f in b.findings]
    assert [m.name for m in a.models] == ["qwen", "mistral"]
    assert transient.pool.held() == 0 and transient.pool.parses == 2
    assert resident.pool.held() == 2 and resident.pool.parses == 2
