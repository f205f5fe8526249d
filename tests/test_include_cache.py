"""The result cache keys on how every include name resolved, misses included (issue 15 item 7).

Each test warms the cache, changes only *which file an include name resolves to* (the including
template's bytes stay the same), and requires the cached run to equal a `--no-cache` run, and to
differ from the first result (so a test cannot pass by both runs being stale in the same way).
"""

from __future__ import annotations

import shutil

from conftest import QWEN

RULES = "Shared rules of the shop. " * 40 + "\n"
VOLATILE = "Time {{ now }}\n" + RULES  # M101: the clock ahead of the shared rules


def project(tmp_path, template: str) -> None:
    (tmp_path / "tok").mkdir()
    shutil.copy(QWEN, tmp_path / "tok" / "tokenizer.json")
    (tmp_path / "promptlint.toml").write_text('tokenizer = "tok/tokenizer.json"\n', encoding="utf-8")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.j2").write_text(template, encoding="utf-8")


def run(cli, tmp_path, *extra):
    r = cli("check", "--output-format", "concise", *extra, "p/a.j2", cwd=tmp_path)
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
    return r.code, r.out


def assert_fresh(cli, tmp_path, before):
    cached = run(cli, tmp_path)
    fresh = run(cli, tmp_path, "--no-cache")
    assert cached == fresh, (cached, fresh)
    assert fresh != before, fresh


def test_an_include_that_did_not_exist_and_then_appears(tmp_path, cli):
    project(tmp_path, '{% include "rules.j2" %}Q: {{ question }}\n')
    first = run(cli, tmp_path)
    assert first[0] == 1 and "E002" in first[1], first  # not found
    run(cli, tmp_path)  # warm: served from the cache
    (tmp_path / "p" / "rules.j2").write_text(VOLATILE, encoding="utf-8")
    assert_fresh(cli, tmp_path, first)


def test_the_first_choice_of_an_include_list_appears(tmp_path, cli):
    project(tmp_path, '{% include ["override.j2", "fast.j2"] %}Q: {{ question }}\n')
    (tmp_path / "p" / "fast.j2").write_text(RULES, encoding="utf-8")
    first = run(cli, tmp_path)
    assert first == (0, ""), first
    (tmp_path / "p" / "override.j2").write_text(VOLATILE, encoding="utf-8")
    assert_fresh(cli, tmp_path, first)


def test_a_nearer_file_starts_shadowing_one_found_further_away(tmp_path, cli):
    # search order: the template's directory, then the project root
    project(tmp_path, '{% include "common.j2" %}Q: {{ question }}\n')
    (tmp_path / "common.j2").write_text(RULES, encoding="utf-8")
    first = run(cli, tmp_path)
    assert first == (0, ""), first
    (tmp_path / "p" / "common.j2").write_text(VOLATILE, encoding="utf-8")
    assert_fresh(cli, tmp_path, first)


def test_a_link_that_changes_target_invalidates(tmp_path, cli):
    # the dependency is kept as looked up (link unresolved): retargeting it changes the resolution
    import os

    project(tmp_path, '{% include "part.j2" %}Q: {{ question }}\n')
    (tmp_path / "p" / "plain.j2").write_text(RULES, encoding="utf-8")
    (tmp_path / "p" / "clock.j2").write_text(VOLATILE, encoding="utf-8")
    os.symlink("plain.j2", tmp_path / "p" / "part.j2")
    first = run(cli, tmp_path)
    assert first == (0, ""), first
    os.unlink(tmp_path / "p" / "part.j2")
    os.symlink("clock.j2", tmp_path / "p" / "part.j2")
    assert_fresh(cli, tmp_path, first)
