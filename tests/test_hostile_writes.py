"""Writes never follow a link the repository committed (issue 27, family 2).

A project in tmp_path/proj, an "outside" directory beside it holding canary files; the traps are
real links (and hard links, FIFOs) at every level of every path promptlint writes: the result
cache (`.promptlint_cache`, its version folder, `entries`, every `entries/<2 hex>`, `manifests`),
its pruning and `clean`, `--report-file` (the Action's `promptlint.sarif`), `--fix`,
`--add-suppressions`, `samples --write`, `audit --worksheet/--plot`. After each run the outside
tree has the same files with the same bytes and mtimes, a refusal is one line naming the path
(exit 2), and the cache trap costs the cache only: the findings are still reported.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, QWEN, REPO

from promptlint import __version__

EARLY = 'Time {{ now }}\n{% include "rules.j2" %}\nQ: {{ question }}\n'
RULES = "Shared rules of the shop. " * 40
SORTABLE = "{% for k, v in facts.items() %}{{ k }}={{ v }}\n{% endfor %}" + RULES + "\nQ: {{ question }}\n"
TRACE = REPO / "examples" / "audit" / "trace.jsonl"
OLD = 1_000_000_000  # 2001: older than anything the cache writes


def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / "tok").mkdir(parents=True)
    shutil.copy(QWEN, proj / "tok" / "tokenizer.json")
    (proj / "promptlint.toml").write_text('tokenizer = "tok/tokenizer.json"\n', encoding="utf-8")
    (proj / "p").mkdir()
    (proj / "p" / "a.j2").write_text(EARLY, encoding="utf-8")
    (proj / "p" / "rules.j2").write_text(RULES, encoding="utf-8")
    return proj


def outside(tmp_path: Path) -> Path:
    """Canaries: files a write through a link would change, old enough for pruning to pick first,
    some named as cache entries are (so names alone would not save them)."""
    out = tmp_path / "outside"
    (out / "tree" / "ab").mkdir(parents=True)
    files = {
        "victim.sh": "#!/bin/sh\necho precious\n",
        "notes.txt": "keep me\n",
        "tree/ab/" + "ab" * 32 + ".json": '{"findings": []}',
        "tree/" + "0" * 32 + ".json": "{}",
        "tree/.tmp-leftover": "x",
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        os.utime(out / name, ns=(OLD, OLD))
    return out


def snapshot(top: Path) -> dict:
    """Every entry below ``top`` (links not followed): bytes and mtime of files, link texts."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[p] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[p] = (p.read_bytes(), st.st_mtime_ns)
            else:
                out[p] = ("dir", stat.S_IFMT(st.st_mode))
    return out


def one_line_error(r, *needles) -> None:
    assert r.code == 2, (r.code, r.out, r.err)
    assert r.err.count("\n") == 1 and r.err.startswith("promptlint: error: "), r.err
    assert "Traceback" not in r.err and "internal error" not in r.err
    for needle in needles:
        assert needle in r.err, r.err


# ------------------------------------------------------------------------------ the result cache

VERSION_DIR = f".promptlint_cache/{__version__}"
LEVELS = [".promptlint_cache", VERSION_DIR, f"{VERSION_DIR}/entries", f"{VERSION_DIR}/manifests", "every-entries-prefix"]


def plant_cache_link(proj: Path, level: str, target: Path) -> None:
    if level == "every-entries-prefix":  # entries/<xx> for all 256 prefixes: whatever the key is
        entries = proj / VERSION_DIR / "entries"
        entries.mkdir(parents=True)
        for i in range(256):
            os.symlink(target, entries / f"{i:02x}")
        return
    link = proj / level
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)


@pytest.mark.parametrize("level", LEVELS)
def test_a_link_at_any_level_of_the_cache_changes_nothing_outside(tmp_path, cli, level):
    proj, out = project(tmp_path), outside(tmp_path)
    plant_cache_link(proj, level, out / "tree")
    before = snapshot(out)
    for _ in range(2):  # the second run would read what the first wrote through the link
        r = cli("check", "--output-format", "concise", "p/a.j2", cwd=proj)
        assert r.code == 1 and "M101" in r.out, (r.out, r.err)
        assert snapshot(out) == before
    warnings = [line for line in r.err.splitlines() if "cache" in line]
    assert len(warnings) == 1 and "symlink" in warnings[0], r.err


def test_an_entry_read_through_a_link_is_a_miss(tmp_path, cli):
    """A genuine entry moved outside and linked back (so its name and secret-keyed key match)
    with its message edited: a read through the link would print the edit."""
    proj = project(tmp_path)
    expected = cli("check", "--output-format", "concise", "p/a.j2", cwd=proj).out
    version = proj / VERSION_DIR
    shutil.rmtree(version / "manifests")  # the manifest would answer before the entry is read
    [prefix] = list((version / "entries").iterdir())
    moved = tmp_path / "moved"
    shutil.move(str(prefix), moved)
    os.symlink(moved, prefix)
    for entry in moved.iterdir():
        entry.write_text(entry.read_text(encoding="utf-8").replace("precedes", "PLANTED"), encoding="utf-8")
    r = cli("check", "--output-format", "concise", "p/a.j2", cwd=proj)
    assert "PLANTED" not in r.out and r.out == expected, r.out


def test_pruning_never_enters_a_link_nor_deletes_what_the_cache_did_not_write(tmp_path, cli):
    from promptlint.project.cache import Cache

    proj, out = project(tmp_path), outside(tmp_path)
    assert cli("check", "p/a.j2", cwd=proj).code == 1
    version = proj / VERSION_DIR
    [ours] = list((version / "entries").glob("*/*.json"))
    os.symlink(out / "tree", version / "entries" / "ff")  # a prefix folder that is a link
    os.symlink(out / "tree" / "ab" / ("ab" * 32 + ".json"), version / "entries" / ours.parent.name / ("c" * 64 + ".json"))
    foreign = version / "entries" / ours.parent.name / "README.md"  # committed beside the entries
    foreign.write_text("not the cache's\n", encoding="utf-8")
    os.utime(foreign, ns=(OLD, OLD))
    before = snapshot(out)
    cache = Cache(proj)
    cache.wrote = True  # prune runs after a run that wrote
    cache.prune(limit=0)  # everything is over the limit
    assert not ours.exists()  # pruning ran: the cache's own entry went
    assert foreign.read_text(encoding="utf-8") == "not the cache's\n"
    assert snapshot(out) == before


def test_a_manifests_link_with_a_tiny_limit_deletes_nothing_outside(tmp_path, cli, monkeypatch):
    proj, out = project(tmp_path), outside(tmp_path)
    plant_cache_link(proj, f"{VERSION_DIR}/manifests", out / "tree")
    monkeypatch.setattr("promptlint.project.cache.MAX_BYTES", 1)  # every run prunes everything it can
    before = snapshot(out)
    for _ in range(2):
        r = cli("check", "--output-format", "concise", "p/a.j2", cwd=proj)
        assert r.code == 1 and "M101" in r.out
    assert snapshot(out) == before


def test_clean_removes_only_what_the_cache_wrote_and_follows_no_link(tmp_path, cli):
    proj, out = project(tmp_path), outside(tmp_path)
    assert cli("check", "p/a.j2", cwd=proj).code == 1
    top = proj / ".promptlint_cache"
    version = top / __version__
    os.symlink(out / "tree", version / "linked")
    os.symlink(out / "notes.txt", top / "notes.txt")
    (top / "README.md").write_text("committed by someone\n", encoding="utf-8")
    before = snapshot(out)
    r = cli("clean", cwd=proj)
    assert r.code == 0, r.err
    assert snapshot(out) == before
    left = sorted(p.relative_to(top).as_posix() for p in top.rglob("*"))
    assert left == sorted([__version__, f"{__version__}/linked", "README.md", "notes.txt"])
    assert (top / "README.md").read_text(encoding="utf-8") == "committed by someone\n"
    assert r.out == f"removed the cache files in {top}\n"
    assert r.err == (f"promptlint: note: left 3 entries promptlint did not write in {top} (e.g. {__version__}/linked); "
                     "remove them yourself\n")
    assert not list(top.rglob("*.json"))


def test_clean_refuses_a_linked_cache_directory(tmp_path, cli):
    proj, out = project(tmp_path), outside(tmp_path)
    os.symlink(out / "tree", proj / ".promptlint_cache")
    before = snapshot(out)
    r = cli("clean", cwd=proj)
    one_line_error(r, ".promptlint_cache", "symlink")
    assert snapshot(out) == before and os.path.islink(proj / ".promptlint_cache")


# ------------------------------------------------------------------------------ --report-file


@pytest.mark.parametrize("trap, needle", [
    ("final-link", "promptlint.sarif is a symlink"),
    ("dir-link", "reports is a symlink"),
    ("hard-link", "promptlint.sarif has 2 hard links"),
])
def test_report_file_through_a_link_is_refused(tmp_path, cli, trap, needle):
    proj, out = project(tmp_path), outside(tmp_path)
    name = "promptlint.sarif"
    if trap == "final-link":
        os.symlink(out / "victim.sh", proj / name)
    elif trap == "dir-link":
        os.symlink(out / "tree", proj / "reports")
        name = "reports/promptlint.sarif"
    else:
        os.link(out / "victim.sh", proj / name)
    before = snapshot(out)
    for spec in (name, str(proj / name)):  # relative, and absolute inside the working directory
        r = cli("check", "--no-cache", "--report-file", f"sarif={spec}", "p/a.j2", cwd=proj)
        one_line_error(r, f"--report-file sarif={spec}: not written", needle)
        assert r.out == ""  # refused before the run: no report on stdout either
        assert snapshot(out) == before


def test_report_file_link_to_git_config_is_refused(tmp_path, cli):
    if shutil.which("git") is None:
        pytest.skip("git is needed")
    proj = project(tmp_path)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    config = proj / ".git" / "config"
    original = config.read_bytes()
    os.symlink(".git/config", proj / "promptlint.sarif")
    r = cli("check", "--no-cache", "--report-file", "sarif=promptlint.sarif", "p/a.j2", cwd=proj)
    one_line_error(r, "promptlint.sarif is a symlink")
    assert config.read_bytes() == original


def test_report_file_that_is_a_fifo_is_refused_without_waiting(tmp_path):
    """In a fresh interpreter with a timeout: opening a FIFO to write waits for a reader forever."""
    proj = project(tmp_path)
    os.mkfifo(proj / "promptlint.sarif")
    import promptlint

    env = dict(os.environ, PYTHONPATH=str(Path(promptlint.__file__).parent.parent), PROMPTLINT_JOBS="1")
    r = subprocess.run([sys.executable, "-m", "promptlint", "check", "--no-cache", "--report-file",
                        "sarif=promptlint.sarif", "p/a.j2"], cwd=proj, capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2 and "promptlint.sarif is a FIFO, not a regular file" in r.stderr, r.stderr


def test_report_file_is_written_whole_and_keeps_the_mode_of_the_file_it_replaces(tmp_path, cli):
    proj = project(tmp_path)
    (proj / "out").mkdir()
    target = proj / "out" / "r.json"
    target.write_text("old", encoding="utf-8")
    os.chmod(target, 0o640)
    r = cli("check", "--no-cache", "--report-file", "json=out/r.json", "p/a.j2", cwd=proj)
    assert r.code == 1, r.err
    import json

    assert [f["code"] for f in json.loads(target.read_text(encoding="utf-8"))["findings"]] == ["M101"]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert sorted(p.name for p in (proj / "out").iterdir()) == ["r.json"]  # no temporary file left


# ------------------------------------------------------------------------------ fixes and samples


def test_fix_of_a_hard_linked_template_is_refused_and_changes_nothing(tmp_path, cli):
    proj, out = project(tmp_path), outside(tmp_path)
    (out / "shared.j2").write_text(SORTABLE, encoding="utf-8")
    os.link(out / "shared.j2", proj / "p" / "s.j2")
    before = snapshot(out)
    r = cli("check", "--no-cache", "--select", "M201", "--fix", "p/s.j2", cwd=proj)
    one_line_error(r, "--fix: p/s.j2: not written", "has 2 hard links")
    assert snapshot(out) == before


def test_add_suppressions_with_a_hard_linked_template_writes_nothing(tmp_path, cli):
    proj, out = project(tmp_path), outside(tmp_path)
    (out / "shared.j2").write_text(EARLY, encoding="utf-8")
    os.link(out / "shared.j2", proj / "p" / "b.j2")
    before = snapshot(out)
    r = cli("check", "--no-cache", "--add-suppressions", "p/a.j2", "p/b.j2", cwd=proj)
    one_line_error(r, "--add-suppressions: p/b.j2: not written", "has 2 hard links")
    assert snapshot(out) == before
    assert (proj / "p" / "a.j2").read_text(encoding="utf-8") == EARLY  # nothing is written unless all can be


@pytest.mark.parametrize("trap", ["final-link", "dir-link"])
def test_samples_write_through_a_link_is_refused(tmp_path, cli, trap):
    proj, out = project(tmp_path), outside(tmp_path)
    if trap == "final-link":
        # dangling: nothing to read (a link to an existing outside file is refused as a read, E003)
        os.symlink(out / "new.toml", proj / "p" / "a.samples.toml")
        template, needle = "p/a.j2", "a.samples.toml is a symlink"
    else:
        (out / "tree" / "t.j2").write_text(EARLY.replace('{% include "rules.j2" %}', RULES), encoding="utf-8")
        os.symlink(out / "tree", proj / "linked")
        template, needle = "linked/t.j2", "linked is a symlink"
    before = snapshot(out)
    r = cli("samples", "--write", "--force", template, cwd=proj)
    assert r.code == 2, (r.out, r.err)
    assert "Traceback" not in r.err and needle in r.err and r.err.count("\n") == 1, r.err
    assert snapshot(out) == before


@pytest.mark.parametrize("option", ["--worksheet", "--plot"])
@pytest.mark.parametrize("trap", ["final-link", "dir-link", "hard-link"])
def test_audit_outputs_through_a_link_are_refused(tmp_path, cli, option, trap):
    work, out = tmp_path / "work", outside(tmp_path)
    work.mkdir()
    name = "w.csv"
    if trap == "final-link":
        os.symlink(out / "victim.sh", work / name)
    elif trap == "dir-link":
        os.symlink(out / "tree", work / "reports")
        name = "reports/w.csv"
    else:
        os.link(out / "victim.sh", work / name)
    before = snapshot(out)
    r = cli("audit", TRACE, option, name, cwd=work)
    one_line_error(r, f"{name}: the {option[2:]} is not written")
    assert snapshot(out) == before


def test_audit_worksheet_and_plot_are_written(tmp_path, cli):
    r = cli("audit", TRACE, "--worksheet", "w.csv", "--plot", "p.svg", cwd=tmp_path)
    assert r.code == 0, r.err
    assert (tmp_path / "w.csv").read_text(encoding="utf-8").startswith("request_id")
    assert (tmp_path / "p.svg").read_text(encoding="utf-8").lstrip().startswith("<")
    assert not list(tmp_path.glob(".promptlint-tmp-*"))


# ------------------------------------------------------------------------------ --baseline's export


def test_a_crafted_revision_writes_nothing_beside_its_export(tmp_path):
    """A tree git itself would never make (mktree): `a/b -> ..` and a directory `a/b`, in it
    `c -> ..` and a directory `c` holding x.j2, and `c -> a/b/..` at the top. Written naively,
    `a/b/c` lands at `<tree>/c` (a link to the export's parent) and `a/b/c/x.j2` beside the export;
    every link that leaves the tree is removed (as an entry, found without following another)."""
    if shutil.which("git") is None:
        pytest.skip("git is needed")
    from promptlint.project import git_tree

    repo = tmp_path / "repo"
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")

    def git(*args, stdin=None):
        return subprocess.run(["git", "-C", str(repo), *args], input=stdin, check=True, capture_output=True, text=True,
                              env=env).stdout.strip()

    repo.mkdir()
    git("init", "-q")
    up = git("hash-object", "-w", "--stdin", stdin="..")
    evil = git("hash-object", "-w", "--stdin", stdin="EVIL {{ x }}\n")
    through = git("hash-object", "-w", "--stdin", stdin="a/b/..")  # lexically `a`; really the export's parent
    tc = git("mktree", stdin=f"100644 blob {evil}\tx.j2\n")
    tb = git("mktree", stdin=f"120000 blob {up}\tc\n040000 tree {tc}\tc\n")
    ta = git("mktree", stdin=f"120000 blob {up}\tb\n040000 tree {tb}\tb\n")
    top = git("mktree", stdin=f"040000 tree {ta}\ta\n120000 blob {through}\tc\n")
    commit = git("-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", top, "-m", "crafted")
    assert "a/b/c/x.j2" in git("ls-tree", "-r", "--name-only", commit).split("\n")  # the premise

    box = tmp_path / "box"
    dest = box / "tree"
    dest.mkdir(parents=True)
    out = git_tree.export(repo, commit, dest)
    assert sorted(os.listdir(box)) == ["tree"]  # nothing beside the export
    assert not [p for p in box.rglob("x.j2")]
    skipped = dict(out.skipped)
    assert skipped.get("a/b/c/x.j2") == "below a symlink" and skipped.get("c") == "symlink leading outside the tree"
    assert not os.path.lexists(dest / "c") and os.readlink(dest / "a" / "b") == ".."


# ------------------------------------------------------------------------------ the anchor rule


def test_links_the_user_keeps_above_the_anchor_are_followed(tmp_path, cli):
    """Outside the working directory and the project the path's own directory is the anchor: a
    link there is the user's (a reports directory reached through a link) and is followed; inside
    the project the same link is refused."""
    proj = project(tmp_path)
    real = tmp_path / "real-reports"
    real.mkdir()
    os.symlink(real, tmp_path / "reports")  # beside the project, not in it
    r = cli("check", "--no-cache", "--report-file", f"sarif={tmp_path / 'reports' / 'r.sarif'}", "p/a.j2", cwd=proj)
    assert r.code == 1, r.err
    assert (real / "r.sarif").read_text(encoding="utf-8").startswith("{")
    os.symlink(real, proj / "reports")
    r = cli("check", "--no-cache", "--report-file", "sarif=../reports/r.sarif", "a.j2", cwd=proj / "p")
    one_line_error(r, "../reports is a symlink")  # above the working directory, inside the project root


def test_the_door_refuses_each_kind_of_target(tmp_path):
    from promptlint.doors import safe_write

    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("x", encoding="utf-8")
    os.link(tmp_path / "f", tmp_path / "hard")
    os.symlink("f", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    for name, needle in (("d", "is a directory, not a regular file"), ("hard", "has 2 hard links"),
                         ("link", "is a symlink"), ("fifo", "is a FIFO, not a regular file")):
        with pytest.raises(safe_write.WriteRefused, match=needle):
            safe_write.write_text(tmp_path / name, "new", anchor=tmp_path)
    with pytest.raises(safe_write.WriteRefused, match="link is a symlink; promptlint follows no link below"):
        safe_write.write_text(tmp_path / "link" / "x", "new", anchor=tmp_path)
    assert (tmp_path / "f").read_text(encoding="utf-8") == "x"
    safe_write.write_text(tmp_path / "new" / "deeper" / "n.txt", "made", anchor=tmp_path, parents=True)
    assert (tmp_path / "new" / "deeper" / "n.txt").read_text(encoding="utf-8") == "made"
    assert safe_write.remove(tmp_path / "link", anchor=tmp_path, kinds=("link",)) and (tmp_path / "f").exists()
    with pytest.raises(safe_write.WriteRefused, match="is a regular file; not removed"):
        safe_write.remove(tmp_path / "f", anchor=tmp_path, kinds=("link",))
