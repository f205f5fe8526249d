"""Issue 32, the second set: 21 templates in other styles (chat templates walking the messages
through aliases, Prompty, promptflow, Semantic Kernel, agent YAML, LangChain-style application
templates), annotated before running (tests/data/issue32_set2/MANIFEST.toml, with provenance).

Zero-config, as a new user runs it: the directory is checked with no samples file and no
tokenizer configured. Every file is analysed (no error, no skipped scenario), every annotated
hazard is found at its line except the listed known misses, and nothing is reported on a file
annotated clean (info notes aside).
"""

from __future__ import annotations

import shutil
import tomllib

from conftest import DATA

SET = DATA / "issue32_set2"


def test_the_second_set_zero_config(tmp_path, cli):
    manifest = tomllib.loads((SET / "MANIFEST.toml").read_text())
    for name in manifest["files"]:
        shutil.copy(SET / name, tmp_path / name)
    r = cli("check", "--output-format", "json", "--no-cache", ".", cwd=tmp_path)
    assert r.code in (0, 1), r.err
    doc = r.json()
    assert doc["errors"] == [] and doc["skipped_scenarios"] == []
    found = {(f["path"], f["code"], f["line"]) for f in doc["findings"] if f["severity"] != "info"}
    expected = {(name, code, line) for name, hazards in manifest["files"].items() for code, line in hazards}
    misses = {(n, c, l) for n, c, l in expected if n in manifest.get("known-misses", {})}
    assert found - expected == set()  # no false alarm
    assert expected - found == misses  # every hazard found but the known misses
    total = len(expected)
    assert (total - len(misses), total) == (12, 12)  # found/total, reported in the closing note
    assert len(manifest["files"]) == 21
