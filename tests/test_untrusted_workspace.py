"""What a CI workspace holds besides the pull request's files, and sidecars that lead elsewhere
(red-team run after issue 15).

actions/checkout keeps the job's token in `.git/config` (`http.<url>.extraheader`), inside the
project root: an include, a walked link, a configured glob or a samples file must never read
version-control metadata. A samples sidecar is confined like an include. Real git repositories,
real links; the canary must never appear in any output.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import QWEN

CANARY = "canary-51d0e2-checkout-token"


def _git_project(p):
    p.mkdir()
    (p / "promptlint.toml").write_text("", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    subprocess.run(["git", "-C", str(p), "config", "http.https://github.com/.extraheader",
                    f"AUTHORIZATION: basic {CANARY}"], check=True)
    assert CANARY in (p / ".git" / "config").read_text(encoding="utf-8")


def _run(cli, *args):
    r = cli("check", "--no-cache", "--tokenizer", QWEN, *args)
    assert "Traceback" not in r.out + r.err and "internal error" not in r.err, r.err
    assert CANARY not in r.out + r.err, "the checkout token leaked"
    return r


def _reported(r):
    data = json.loads(r.out)
    return data["findings"] + data["errors"]


def _codes(r):
    return sorted((f["path"], f["code"]) for f in _reported(r))


# ---------------------------------------------------------------- version-control metadata


def test_templates_cannot_read_version_control_metadata(tmp_path, cli, monkeypatch):
    p = tmp_path / "proj"
    _git_project(p)
    monkeypatch.chdir(p)
    # the computed include name used to come back in the E002 message: 40 characters of .git/config
    (p / "echo.j2").write_text(
        '{% set c %}{% include ".git/config" %}{% endset %}{% include c[c.find("basic"):] %}\n', encoding="utf-8")
    (p / "plain.j2").write_text('Hello {{ name }}\n{% include ".git/config" %}\n', encoding="utf-8")
    os.symlink(".git", p / "meta")  # a link to the directory: the real path is what counts
    (p / "via_link.j2").write_text('{% include "meta/config" %}\n', encoding="utf-8")
    (p / "listed.j2").write_text('{% include ["missing.j2", ".git/config"] ignore missing %}\n', encoding="utf-8")
    (p / "imported.j2").write_text('{% import ".git/config" as c %}\n', encoding="utf-8")
    os.symlink(".git/config", p / "config.j2")  # a walked file that is a link into .git
    r = _run(cli, "--output-format", "json", "--evidence")
    assert _codes(r) == [
        (".git/config", "E005"),  # the walked link, named by its real path
        ("echo.j2", "E002"), ("imported.j2", "E002"), ("listed.j2", "E002"),
        ("plain.j2", "E002"), ("via_link.j2", "E002"),
    ], r.out
    assert all("version-control metadata" in f["message"] for f in _reported(r)), r.out


def test_a_configured_glob_never_takes_version_control_metadata(tmp_path, cli, monkeypatch):
    p = tmp_path / "proj"
    _git_project(p)
    (p / "promptlint.toml").write_text('templates = [".git/*", "*.j2"]\n', encoding="utf-8")
    (p / "ok.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    monkeypatch.chdir(p)
    r = _run(cli, "--output-format", "json")
    found = _reported(r)
    # every file the glob took under .git is refused unread; ok.j2 is checked
    assert found and {f["code"] for f in found} == {"E005"} and all(f["path"].startswith(".git/") for f in found), r.out
    assert ".git/config" in {f["path"] for f in found}


def test_a_directory_merely_named_like_metadata_elsewhere_still_works(tmp_path, cli, monkeypatch):
    # only paths *below* the allowed roots are judged: a project that lives under a `.git`-named
    # parent directory is linted as usual
    p = tmp_path / ".git" / "proj"
    p.mkdir(parents=True)
    (p / "promptlint.toml").write_text("", encoding="utf-8")
    (p / "part.j2").write_text("You are helpful.\n", encoding="utf-8")
    (p / "t.j2").write_text('{% include "part.j2" %}Q: {{ question }}\n', encoding="utf-8")
    monkeypatch.chdir(p)
    r = _run(cli, "--output-format", "json")
    assert _codes(r) == [], r.out


# ---------------------------------------------------------------- samples sidecars


@pytest.fixture
def outside_samples(tmp_path):
    d = tmp_path / "outside"
    d.mkdir()
    f = d / "s.samples.toml"
    f.write_text(f'[variables]\n{CANARY} = "x"\nname = "{CANARY}"\n', encoding="utf-8")
    return f


def test_a_samples_file_linked_out_of_the_project_is_refused_unread(tmp_path, cli, monkeypatch, outside_samples):
    # it used to be read: "unknown key `<the outside file's key>`", and its values went into renders
    p = tmp_path / "proj"
    p.mkdir()
    (p / "promptlint.toml").write_text("", encoding="utf-8")
    (p / "t.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    os.symlink(outside_samples, p / "t.samples.toml")
    monkeypatch.chdir(p)
    r = _run(cli, "--output-format", "json", "--evidence")
    found = _reported(r)
    assert [(f["path"], f["code"]) for f in found] == [("t.samples.toml", "E003")], r.out
    assert "refused, nothing was read" in found[0]["message"]


def test_a_chat_samples_file_linked_out_is_refused_unread(tmp_path, cli, monkeypatch, outside_samples):
    p = tmp_path / "proj"
    p.mkdir()
    (p / "promptlint.toml").write_text("", encoding="utf-8")
    (p / "chat.jinja").write_text(
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}", encoding="utf-8")
    os.symlink(outside_samples, p / "chat.samples.toml")
    monkeypatch.chdir(p)
    r = _run(cli, "--output-format", "json", "chat.jinja")
    found = _reported(r)
    assert [(f["path"], f["code"]) for f in found] == [("chat.samples.toml", "E003")], r.out
    assert "refused, nothing was read" in found[0]["message"]


def test_a_samples_file_linked_inside_the_project_is_used(tmp_path, cli, monkeypatch):
    p = tmp_path / "proj"
    (p / "shared").mkdir(parents=True)
    (p / "promptlint.toml").write_text("", encoding="utf-8")
    (p / "shared" / "common.samples.toml").write_text('[variables]\nname = "Zorblax"\n', encoding="utf-8")
    (p / "t.j2").write_text("{{ now }} Hello {{ name }}, a long shared instruction follows here.\n" * 3
                            + "Answer questions about orders, shipping and returns in a few friendly sentences, "
                            "and cite the policy section you rely on.\n", encoding="utf-8")  # a block of it after the last `now`
    os.symlink("shared/common.samples.toml", p / "t.samples.toml")
    monkeypatch.chdir(p)
    r = _run(cli, "--output-format", "json", "--evidence", "t.j2")
    assert _codes(r) == [("t.j2", "M101")] and "Hello Zorblax" in r.out, r.out
