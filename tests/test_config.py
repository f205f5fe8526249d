"""Configuration discovery, validation and precedence."""

from __future__ import annotations

import hashlib
import shutil
import textwrap

from conftest import QWEN

from promptlint.project.config import code_enabled

EARLY = "Time {{ now }}\n" + "Shared rules of the shop. " * 40 + "\nQ: {{ question }}\n"


def project(tmp_path, config: str, name="pyproject.toml", tokenizer_text=None):
    (tmp_path / "tok").mkdir()
    if tokenizer_text is None:
        shutil.copy(QWEN, tmp_path / "tok" / "tokenizer.json")
    else:
        (tmp_path / "tok" / "tokenizer.json").write_text(tokenizer_text, encoding="utf-8")
    (tmp_path / name).write_text(textwrap.dedent(config), encoding="utf-8")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "early.j2").write_text(EARLY, encoding="utf-8")
    return tmp_path


def test_pyproject_settings_and_relative_tokenizer_path(tmp_path, cli):
    sha = hashlib.sha256(QWEN.read_bytes()).hexdigest()
    project(tmp_path, f"""
        [tool.promptlint]
        tokenizer = "tok/tokenizer.json"
        tokenizer-sha256 = "{sha}"
        block-size = 8
        templates = ["prompts/*.j2"]
    """)
    (tmp_path / "sub").mkdir()
    r = cli("check", "--output-format", "json", cwd=tmp_path)  # no path: the configured templates
    doc = r.json()
    assert r.code == 1
    assert doc["block_size"] == 8 and doc["tokenizer"]["sha256"] == sha
    assert doc["tokenizer"]["path"] == str((tmp_path / "tok" / "tokenizer.json").resolve())
    assert [f["path"] for f in doc["findings"]] == ["prompts/early.j2"]
    # command line wins over the file
    assert cli("check", "--output-format", "json", "--block-size", "4", cwd=tmp_path).json()["block_size"] == 4


def test_promptlint_toml_and_pyproject_without_table_is_skipped(tmp_path, cli):
    project(tmp_path, 'tokenizer = "tok/tokenizer.json"\nengine = "sglang"\n', name="promptlint.toml")
    (tmp_path / "prompts" / "pyproject.toml").write_text("[project]\nname='x'\n", encoding="utf-8")
    r = cli("check", "--output-format", "json", "prompts", cwd=tmp_path)
    assert r.json()["engine"] == "sglang" and r.json()["block_size"] == 1


def test_unknown_key_exits_2_naming_key_and_file(tmp_path, cli):
    project(tmp_path, '[tool.promptlint]\ntokenizer = "tok/tokenizer.json"\nblock_size = 16\n')
    r = cli("check", cwd=tmp_path)
    assert r.code == 2
    assert "pyproject.toml" in r.err and "unknown key `tool.promptlint.block_size`" in r.err


def test_wrong_type_exits_2(tmp_path, cli):
    project(tmp_path, '[tool.promptlint]\nblock-size = "sixteen"\n')
    r = cli("check", cwd=tmp_path)
    assert r.code == 2 and "block-size" in r.err and "expected integer" in r.err


def test_invalid_toml_exits_2(tmp_path, cli):
    project(tmp_path, "[tool.promptlint\n")
    r = cli("check", cwd=tmp_path)
    assert r.code == 2 and "invalid TOML" in r.err and "pyproject.toml" in r.err


def test_select_ignore_and_per_file_ignores(tmp_path, cli):
    project(tmp_path, """
        [tool.promptlint]
        tokenizer = "tok/tokenizer.json"
        [tool.promptlint.per-file-ignores]
        "prompts/legacy_*.j2" = ["M1"]
    """)
    (tmp_path / "prompts" / "legacy_old.j2").write_text(EARLY, encoding="utf-8")
    r = cli("check", "--output-format", "concise", "prompts", cwd=tmp_path)
    assert r.out.count("M101") == 1 and "early.j2" in r.out
    assert cli("check", "--ignore", "M1", "prompts", cwd=tmp_path).code == 0
    assert cli("check", "--select", "E", "prompts", cwd=tmp_path).code == 0
    assert cli("check", "--select", "M101", "--ignore", "M1", "prompts", cwd=tmp_path).code == 1


def test_selector_specificity():
    assert code_enabled("M101", (), ())
    assert not code_enabled("M101", (), ("M",))
    assert code_enabled("M101", ("M101",), ("M1",))  # more specific select wins
    assert not code_enabled("M101", ("M1",), ("M1",))  # tie: ignore wins
    assert not code_enabled("E001", ("M",), ())


def test_explicit_config_flag(tmp_path, cli):
    # the flag is the subject, not the vocabulary: a small real tokenizer, so the llama.cpp engine
    # the config names builds its encoder in milliseconds (Qwen2.5's 151k vocabulary: ~8 s)
    from small_tokenizers import mini_qwen

    project(tmp_path, '[tool.promptlint]\ntokenizer = "tok/tokenizer.json"\nengine = "llamacpp"\n', tokenizer_text=mini_qwen())
    other = tmp_path / "elsewhere"
    other.mkdir()
    r = cli("check", "--config", tmp_path / "pyproject.toml", "--output-format", "json", tmp_path / "prompts", cwd=other)
    assert r.json()["engine"] == "llamacpp"
    assert cli("check", "--config", tmp_path / "missing.toml", cwd=other).code == 2
