"""Issue 15, items 8 and 12: untrusted input never costs the run (an internal error, exit 2 with
a traceback hint) and the result cache can be neither poisoned nor grown without bound.

Every case here ended in "internal error" or a wrong result before its fix.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from integration_helpers import BAD, SHARED


def _project(tmp_path: Path) -> Path:
    (tmp_path / "promptlint.toml").write_text("", encoding="utf-8")
    return tmp_path


def _records(r):
    data = r.json()
    return data["findings"] + data["errors"]


# item 8 -------------------------------------------------------------------------------------------


def test_volatile_value_at_the_end_of_the_calendar(tmp_path, cli):
    root = _project(tmp_path)
    (root / "t.j2").write_text(f"Time: {{{{ now }}}}\n{SHARED}\n{{{{ question }}}}\n", encoding="utf-8")
    (root / "t.samples.toml").write_text(
        '[variables]\nnow = { value = "9999-12-31 23:59:59", kind = "volatile" }\n', encoding="utf-8"
    )
    r = cli("check", "--no-cache", "--output-format", "json", "t.j2", cwd=root)
    assert r.code == 1, r.err
    (f,) = [f for f in _records(r) if f["code"] == "M101"]
    # one second past the last representable moment overflows: the variant steps back instead
    assert "'9999-12-31 23:59:59' → '9999-12-31 23:59:52'" in f["variant"]


@pytest.mark.parametrize(
    "name, text",
    [
        ("t.samples.json", '{"variables": {"q": ' + "[" * 50_000 + "]" * 50_000 + "}}"),
        ("t.samples.toml", "[variables]\nq = " + "[" * 5_000 + "1" + "]" * 5_000 + "\n"),
    ],
)
def test_deeply_nested_samples_are_e003(tmp_path, cli, name, text):
    root = _project(tmp_path)
    (root / "t.j2").write_text("{{ q }}\n", encoding="utf-8")
    (root / name).write_text(text, encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "json", "t.j2", cwd=root)
    got = [(f["path"], f["code"]) for f in _records(r)]
    assert got == [(name, "E003")], r.out + r.err
    assert "nested too deeply" in _records(r)[0]["message"]


def test_file_name_that_is_not_utf8_keeps_every_json_format_valid(tmp_path, cli):
    root = _project(tmp_path)
    name = os.fsdecode(b"\xff.j2")
    (root / name).write_text(BAD, encoding="utf-8")
    for fmt in ("json", "json-lines", "sarif", "gitlab"):
        r = cli("check", "--no-cache", "--output-format", fmt, ".", cwd=root)
        assert r.code == 1, (fmt, r.err)
        r.out.encode("utf-8")  # no lone surrogate reaches the output
        docs = [json.loads(line) for line in r.out.splitlines()] if fmt == "json-lines" else [json.loads(r.out)]
        text = json.dumps(docs)
        if fmt == "sarif":
            uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
                    for run in docs[0]["runs"] for res in run["results"] for loc in res["locations"]]
            assert uris == ["%FF.j2"]
        else:
            assert "\\udcff.j2" in text  # the JSON escape round-trips to the same name
    data = json.loads(cli("check", "--no-cache", "--output-format", "json", ".", cwd=root).out)
    assert os.fsencode(data["findings"][0]["path"]) == b"\xff.j2"


def test_tokenizer_that_cannot_encode_is_one_line_exit_2(tmp_path, cli):
    from tokenizers import Tokenizer, models, pre_tokenizers

    root = _project(tmp_path)
    tok = Tokenizer(models.WordLevel({"hello": 0}, unk_token="<unk>"))  # <unk> is not in the vocabulary
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(root / "tokenizer.json"))
    (root / "t.j2").write_text(BAD, encoding="utf-8")
    r = cli("check", "--no-cache", "--tokenizer", "tokenizer.json", "t.j2", cwd=root)
    assert r.code == 2
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "tokenizer.json: the tokenizer cannot encode" in lines[0] and "[UNK]" in lines[0]


# item 12 and cache poisoning ----------------------------------------------------------------------


def _entries(root: Path):
    return sorted((root / ".promptlint_cache").glob("*/entries/*/*.json"))


def _findings(r):
    return sorted((f["path"], f["code"], f["line"]) for f in _records(r))


@pytest.mark.parametrize(
    "damage",
    [
        {"findings": [{"code": 5}]},
        {"findings": [], "deps": "abc"},
        {"findings": [{"code": 5, "name": 1, "severity": 1, "message": 1, "path": 1, "line": "x",
                       "column": 1, "end_line": 1, "end_column": 1, "miss_class": "M1"}]},
    ],
)
def test_a_damaged_cache_entry_is_a_miss(tmp_path, cli, damage):
    root = _project(tmp_path)
    (root / "t.j2").write_text(BAD, encoding="utf-8")
    fresh = cli("check", "--no-cache", "--output-format", "json", "t.j2", cwd=root)
    cli("check", "--output-format", "json", "t.j2", cwd=root)
    (entry,) = _entries(root)
    entry.write_text(json.dumps(damage), encoding="utf-8")
    again = cli("check", "--output-format", "json", "t.j2", cwd=root)
    assert again.code == fresh.code == 1
    assert _findings(again) == _findings(fresh) == [("t.j2", "M101", 1)]


def test_a_cache_written_elsewhere_is_never_read(tmp_path, cli, monkeypatch):
    # A pull request commits `.promptlint_cache/` with an entry that says "no findings". Every
    # input of a key is predictable except the machine secret, which lives outside the project.
    from promptlint.project import cache

    root = _project(tmp_path)
    (root / "t.j2").write_text(BAD, encoding="utf-8")
    cli("check", "t.j2", cwd=root)
    (entry,) = _entries(root)
    entry.write_text(json.dumps({"findings": [], "deps": {}}), encoding="utf-8")
    for manifest in (root / ".promptlint_cache").glob("*/manifests/*"):  # it answers first (signed: test_manifest.py)
        manifest.unlink()
    assert cli("check", "t.j2", cwd=root).code == 0  # this machine's own (now forged) entry is trusted
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "ci-runner"))  # another machine: the CI
    monkeypatch.setattr(cache, "_SECRET", [])
    r = cli("check", "--output-format", "json", "t.j2", cwd=root)
    assert r.code == 1 and _findings(r) == [("t.j2", "M101", 1)]
    assert oct((tmp_path / "ci-runner" / "promptlint" / "secret").stat().st_mode & 0o777) == "0o600"


def test_a_symlinked_cache_directory_is_not_written_through(tmp_path, cli):
    root = tmp_path / "proj"
    root.mkdir()
    _project(root)
    (root / "t.j2").write_text(BAD, encoding="utf-8")
    victim = tmp_path / "victim"
    victim.mkdir()
    (root / ".promptlint_cache").symlink_to(victim)
    r = cli("check", "t.j2", cwd=root)
    assert r.code == 1
    assert list(victim.iterdir()) == []
    assert "symlink" in r.err and ".promptlint_cache" in r.err


def test_renders_are_cached_only_for_evidence_runs(tmp_path, cli):
    root = _project(tmp_path)
    (root / "t.j2").write_text(BAD, encoding="utf-8")
    cli("check", "t.j2", cwd=root)
    (entry,) = _entries(root)
    assert "base_render" not in entry.read_text(encoding="utf-8")
    r = cli("check", "--evidence", "--output-format", "json", "t.j2", cwd=root)
    (f,) = r.json()["findings"]
    assert f["evidence"]["base_render"].startswith("Current time: ")  # recomputed, not served without it


def test_the_cache_is_capped_and_evicts_the_oldest(tmp_path, cli, monkeypatch):
    from promptlint.project import cache

    root = _project(tmp_path)
    for i in range(6):
        (root / f"t{i}.j2").write_text(BAD + f"{{# {i} #}}\n", encoding="utf-8")
        cli("check", f"t{i}.j2", cwd=root)
    sizes = [p.stat().st_size for p in _entries(root)]
    assert len(sizes) == 6
    limit = sum(sizes) - 1  # one byte too many: the next writing run must evict
    monkeypatch.setattr(cache, "MAX_BYTES", limit)
    oldest = min(_entries(root), key=lambda p: p.stat().st_mtime_ns)
    (root / "t6.j2").write_text(BAD + "{# 6 #}\n", encoding="utf-8")
    cli("check", "t6.j2", cwd=root)
    left = _entries(root)
    assert sum(p.stat().st_size for p in left) <= limit
    assert oldest not in left
