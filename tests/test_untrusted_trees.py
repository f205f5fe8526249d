"""Directory trees a pull request can commit that used to stop the whole run (red-team run after
issue 15): nesting deeper than the interpreter's recursion limit (os.walk and pathlib's `**` recurse
once per level; git checks such a tree out), and paths longer than the system's PATH_MAX (a stat
raises ENAMETOOLONG, which ``Path.is_file()`` does not swallow). Every other file is still reported."""

from __future__ import annotations

import json
import os

import pytest

TEMPLATE = (  # M101 with the embedded tokenizer: more than a block of shared instructions after `now`
    b"Hello {{ name }} at {{ now }}\nYou are the Acme support assistant. Answer questions about orders, shipping "
    b"and returns in a few friendly sentences, and cite the policy section you rely on.\n"
)


def _nest(top, name: str, depth: int) -> str:
    """``depth`` nested directories called ``name`` below ``top``, made through descriptors (the
    whole path may be too long for one system call), a template at the bottom; its relative path."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open("t.j2", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, TEMPLATE)
        os.close(out)
    finally:
        os.close(fd)
    return "/".join([name] * depth + ["t.j2"])


def _unnest(top, name: str) -> None:
    """Remove the tree without recursion (shutil.rmtree recurses per level too)."""
    fds = [os.open(top, os.O_RDONLY)]
    while True:
        try:
            fds.append(os.open(name, os.O_RDONLY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    while len(fds) > 1:
        fd = fds.pop()
        for entry in os.listdir(fd):
            os.unlink(entry, dir_fd=fd)
        os.close(fd)
        os.rmdir(name, dir_fd=fds[-1])
    os.close(fds[0])


@pytest.fixture
def proj(tmp_path, monkeypatch):
    p = tmp_path / "proj"
    p.mkdir()
    (p / "promptlint.toml").write_text("", encoding="utf-8")
    (p / "top.j2").write_bytes(TEMPLATE)
    monkeypatch.chdir(p)
    return p


def _check(cli):
    r = cli("check", "--no-cache", "--output-format", "json")
    assert "Traceback" not in r.out + r.err and "internal error" not in r.err, r.err
    assert r.code == 1, (r.code, r.err[-300:])
    data = json.loads(r.out)
    return {(f["path"], f["code"]) for f in data["findings"] + data["errors"]}, data


def test_a_tree_nested_deeper_than_the_recursion_limit_is_walked(proj, cli):
    deep = _nest(proj, "a", 1200)  # 2,405 characters: well within what git checks out
    try:
        found, _data = _check(cli)
        assert found == {("top.j2", "M101"), (deep, "M101")}, sorted(found)[:3]
        (proj / "promptlint.toml").write_text('templates = ["**/*.j2"]\n', encoding="utf-8")
        found, data = _check(cli)  # pathlib's `**` still recurses: an E005 naming the pattern
        assert ("top.j2", "M101") in found and ("**/*.j2", "E005") in found, sorted(found)[:3]
        assert any("too deep" in f["message"] for f in data["errors"])
    finally:
        _unnest(proj, "a")


def test_a_path_longer_than_path_max_is_an_e005_not_a_crash(proj, cli):
    name = "d" * 60
    _nest(proj, name, 80)  # 4,900 characters: no single system call takes the whole path
    try:
        found, data = _check(cli)
        assert ("top.j2", "M101") in found, found
        too_long = [f for f in data["errors"] if f["code"] == "E005"]
        assert too_long and all("File name too long" in f["message"] for f in too_long), data["errors"]
        (proj / "promptlint.toml").write_text('templates = ["**/*.j2"]\n', encoding="utf-8")
        found, data = _check(cli)
        assert ("top.j2", "M101") in found and ("**/*.j2", "E005") in found, found
    finally:
        _unnest(proj, name)


def test_the_iterative_walk_lists_what_os_walk_lists(tmp_path):
    # links to directories are listed as directories and never entered; dangling links are files
    from promptlint.project.discovery import _walk_tree

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "t.j2").write_text("x", encoding="utf-8")
    (tmp_path / "a" / "u.j2").write_text("x", encoding="utf-8")
    os.symlink("a", tmp_path / "link_to_dir")
    os.symlink("a/u.j2", tmp_path / "link_to_file")
    os.symlink("nowhere", tmp_path / "dangling")
    os.symlink(".", tmp_path / "a" / "loop")

    def listing(walk):
        return sorted((os.path.relpath(d, tmp_path), sorted(ds), sorted(fs)) for d, ds, fs in walk)

    errors = []
    assert listing(_walk_tree(str(tmp_path), errors.append)) == listing(os.walk(tmp_path, followlinks=False))
    assert errors == []
