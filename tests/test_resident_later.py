"""A resident Workspace's run manifest written after the reply (driver/resident.py: hold, flush):
the daemon holds the write while it answers, then writes the same file a later process reads; a
held write is done before the next check; and a write done late still distrusts the stamps that
were racy when the run ended. Real files, real tokenizer, no timing."""

from __future__ import annotations

import json
import time

from test_changed_file_path import make_project

from promptlint.driver import lint
from promptlint.driver.workspace import Workspace
from promptlint.project.config import load_settings


def _manifests(root):
    found = sorted((root / ".promptlint_cache").rglob("manifests/*.json"))
    return [json.loads(p.read_text(encoding="utf-8").partition("\n")[2]) for p in found]


def _analysed(monkeypatch):
    seen = []
    real = lint._check_one

    def counting(run, path, *args, **kwargs):
        seen.append(path.name)
        return real(run, path, *args, **kwargs)

    monkeypatch.setattr(lint, "_check_one", counting)
    return seen


def test_a_held_manifest_is_written_at_the_flush_and_answers_the_next_process(tmp_path, monkeypatch):
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    settings = load_settings(start=tmp_path, base=tmp_path)
    ws = Workspace(settings, resident=True)
    ws.memo.hold()
    first = ws.check()
    assert _manifests(tmp_path) == []  # held: nothing written while the caller answers
    ws.memo.flush()
    (written,) = _manifests(tmp_path)
    (path,) = (tmp_path / ".promptlint_cache").rglob("manifests/*.json")
    body = path.read_text(encoding="utf-8").partition("\n")[2]
    assert body == json.dumps(written, separators=(",", ":"))  # the records' kept texts joined: json.dumps's bytes
    # the walk's files (those that build prompts: not __init__ or the static modules), each recorded
    assert {"app/prompts_0.py", "app/prompts_1.py", "app/agent_0.py", "app/agent_1.py"} <= set(written["files"])
    assert len(written["files"]) == first.files
    analysed = _analysed(monkeypatch)
    again = Workspace(load_settings(start=tmp_path, base=tmp_path)).check()  # another process: a transient workspace
    assert analysed == []  # every file answered from the manifest the flush wrote ...
    assert [f.to_dict() for f in again.findings] == [f.to_dict() for f in first.findings] != []  # ... as reported


def test_a_write_still_held_is_done_before_the_next_check(tmp_path, monkeypatch):
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    ws = Workspace(load_settings(start=tmp_path, base=tmp_path), resident=True)
    ws.memo.hold()
    ws.check()
    assert _manifests(tmp_path) == []
    ws.check()  # its caller never flushed: the next check writes it first
    assert len(_manifests(tmp_path)) == 1


def test_a_late_write_distrusts_the_stamps_racy_when_the_run_ended(tmp_path, monkeypatch):
    """The project's files were written just now: at the run's end their stamps are within the 2 s
    racy window and must be recorded as None (re-hashed next time), however late the write comes --
    a write ten seconds later that took its own time as the horizon would trust them."""
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    made = time.time_ns()  # the run ends "now" for the files just made, however long it really takes
    monkeypatch.setattr(time, "time_ns", lambda: made)
    ws = Workspace(load_settings(start=tmp_path, base=tmp_path), resident=True)
    ws.memo.hold()
    ws.check()
    later = made + 10_000_000_000
    monkeypatch.setattr(time, "time_ns", lambda: later)
    ws.memo.flush()
    (written,) = _manifests(tmp_path)
    assert written["files"] and all(rec["stamp"] is None for rec in written["files"].values())


def _entries(root):
    return sorted(p.name for p in (root / ".promptlint_cache").rglob("entries/*/*.json"))


def test_held_cache_entries_are_written_at_the_flush_and_answer_a_later_process(tmp_path, monkeypatch):
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    ws = Workspace(load_settings(start=tmp_path, base=tmp_path), resident=True)
    ws.memo.hold()
    first = ws.check()
    assert _entries(tmp_path) == []  # held: the entries wait for the reply as the manifest does
    ws.memo.flush()
    entries = _entries(tmp_path)
    assert len(entries) == first.files  # one result entry per analysed file
    for manifest in (tmp_path / ".promptlint_cache").rglob("manifests/*.json"):
        manifest.unlink()  # a later process without the manifest: answered by the entries alone
    analysed = []
    real = lint._within_budget

    def counting(*args, **kwargs):
        analysed.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(lint, "_within_budget", counting)
    again = Workspace(load_settings(start=tmp_path, base=tmp_path)).check()
    assert analysed == []  # every file's result read from the entries the flush wrote
    assert [f.to_dict() for f in again.findings] == [f.to_dict() for f in first.findings] != []


def test_a_held_write_that_fails_is_said_by_the_next_check(tmp_path, monkeypatch):
    """After the reply nobody reads the run's notices: the cache that cannot be written is said by the
    next check of the process (once), as a check that wrote in its run says it."""
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    ws = Workspace(load_settings(start=tmp_path, base=tmp_path), resident=True)
    ws.memo.hold()
    first = ws.check()
    (version_dir,) = [d for d in (tmp_path / ".promptlint_cache").iterdir() if d.is_dir()]
    elsewhere = tmp_path.parent / (tmp_path.name + "-elsewhere")
    elsewhere.mkdir()
    (version_dir / "entries").mkdir(exist_ok=True)
    (version_dir / "entries").rmdir()
    (version_dir / "entries").symlink_to(elsewhere, target_is_directory=True)  # a link: the write is refused
    ws.memo.flush()
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
    assert not any("cannot write the cache" in n for n in first.notices)
    second = ws.check()
    said = [n for n in second.notices if "cannot write the cache" in n]
    assert len(said) == 1 and str(tmp_path / ".promptlint_cache") in said[0]
    assert ws.memo.warnings() == []  # carried once


def test_a_resident_manifest_is_the_bytes_json_gives_after_a_change(tmp_path, monkeypatch):
    """The records a resident process keeps are joined from their kept texts; after one file changes
    (one record new, the others the same objects) the file is still exactly json.dumps of its records."""
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    ws = Workspace(load_settings(start=tmp_path, base=tmp_path), resident=True)
    ws.check()
    later = time.time_ns() + 10_000_000_000  # the files' stamps are old enough to be trusted from now on
    monkeypatch.setattr(time, "time_ns", lambda: later)
    ws.check()
    (before,) = _manifests(tmp_path)
    changed = tmp_path / "app" / "prompts_1.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    ws.check()
    (path,) = (tmp_path / ".promptlint_cache").rglob("manifests/*.json")
    body = path.read_text(encoding="utf-8").partition("\n")[2]
    data = json.loads(body)
    assert body == json.dumps(data, separators=(",", ":"))
    assert data["files"]["app/prompts_1.py"]["sha"] != before["files"]["app/prompts_1.py"]["sha"]  # re-recorded
    assert data["files"]["app/agent_0.py"] == before["files"]["app/agent_0.py"]  # the others' texts reused
    assert data["files"]["app/agent_0.py"]["stamp"] is not None
