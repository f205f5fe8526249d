"""The run manifest: a warm run answers from one authenticated file and a stat per file, prints what
a cold run prints byte for byte, and every change that alters a result still reaches the analysis."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import MISTRAL, QWEN, REPO

HEAVY = {"tokenizers", "jinja2", "jsonschema", "libcst"}
EARLY = 'Time {{ now }}\n{% include "rules.j2" %}\nQ: {{ question }}\n'
RULES = "Shared rules of the shop. " * 40
TOOLS = "### Request {{ rid }} ###\n" + "You help customers of the shop. " * 30 + "\nUser: {{ question }}\n"
SAMPLES = '[variables]\nrid = { value = "req-7f3c9a2e", kind = "volatile", sub-kind = "id" }\n'
STATIC = '[variables]\nrid = { value = "req-7f3c9a2e", kind = "static" }\n'


def project(root):
    """a.j2 includes rules.j2; b.j2 has a samples file; c.j2 is clean."""
    (root / "tok").mkdir(parents=True)
    shutil.copy(QWEN, root / "tok" / "tokenizer.json")
    (root / "promptlint.toml").write_text('tokenizer = "tok/tokenizer.json"\n', encoding="utf-8")
    p = root / "p"
    p.mkdir()
    (p / "a.j2").write_text(EARLY, encoding="utf-8")
    (p / "rules.j2").write_text(RULES, encoding="utf-8")
    (p / "b.j2").write_text(TOOLS, encoding="utf-8")
    (p / "b.samples.toml").write_text(SAMPLES, encoding="utf-8")
    (p / "c.j2").write_text("You are a helpful assistant.\n{{ question }}\n", encoding="utf-8")
    return root


def run(cwd, *args, env=None):
    """The CLI in a fresh interpreter: (exit code, stdout, stderr, imported top-level modules)."""
    code = (
        "import sys\nfrom promptlint.cli import main\nrc = main(%r)\n"
        "sys.stderr.write('MODULES ' + ' '.join(sorted({m.split('.')[0] for m in sys.modules})))\nsys.exit(rc)"
        % (["check", "--no-daemon", *args],)
    )
    environ = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    environ.pop("PROMPTLINT_DAEMON", None)
    r = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=environ)
    err, _, mods = r.stderr.rpartition("MODULES ")
    return r.returncode, r.stdout, err, set(mods.split())


def manifests(root):
    return sorted((root / ".promptlint_cache").glob("*/manifests/*.json"))


def count_entry_reads(monkeypatch):
    """Calls of the result cache's per-file lookup (the manifest's hits make none)."""
    from promptlint.project import cache

    calls = []
    original = cache.Cache.get
    monkeypatch.setattr(cache.Cache, "get", lambda self, key: calls.append(key) or original(self, key))
    return calls


def age(*paths, seconds=10):
    """Set mtimes in the past, as files that were not edited just now (the manifest does not trust
    a stamp within its racy window)."""
    for path in paths:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9))


@pytest.mark.parametrize("fmt", ["full", "json"])
def test_examples_warm_equals_cold_and_imports_nothing_heavy(tmp_path, fmt):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root, ignore=shutil.ignore_patterns(".promptlint_cache"))
    cold = run(root, "--output-format", fmt)
    assert cold[0] == 1 and "tokenizers" in cold[3]
    assert len(manifests(root)) == 1
    warm = run(root, "--output-format", fmt)
    assert warm[:3] == cold[:3]
    assert not HEAVY & warm[3], warm[3]


def test_project_warm_run_reads_no_entry(tmp_path, cli, monkeypatch):
    project(tmp_path)
    cold = cli("check", "--output-format", "json", cwd=tmp_path)
    codes = sorted((f["code"], f["path"]) for f in cold.json()["findings"])
    assert codes == [("M101", "p/a.j2"), ("M101", "p/b.j2")]  # the clock in a, the request id in b
    calls = count_entry_reads(monkeypatch)
    warm = cli("check", "--output-format", "json", cwd=tmp_path)
    assert (warm.code, warm.out, warm.err) == (cold.code, cold.out, cold.err)
    assert calls == []  # every file (and the include) answered by the manifest


def test_warm_subprocess_imports_nothing_heavy(tmp_path):
    project(tmp_path)
    cold = run(tmp_path, "--output-format", "concise")
    warm = run(tmp_path, "--output-format", "concise")
    assert warm[:3] == cold[:3] and cold[0] == 1
    assert not HEAVY & warm[3], warm[3]


def test_changed_include_invalidates_its_includer(tmp_path, cli):
    project(tmp_path)
    before = cli("check", "--output-format", "json", cwd=tmp_path).json()["findings"]
    (tmp_path / "p" / "rules.j2").write_text(RULES * 2, encoding="utf-8")
    after = cli("check", "--output-format", "json", cwd=tmp_path)
    fresh = cli("check", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert after.out == fresh.out
    a_before = next(f for f in before if f["path"] == "p/a.j2")
    a_after = next(f for f in after.json()["findings"] if f["path"] == "p/a.j2")
    # the clock comes first: the longer include is all lost too (1,000 more characters)
    assert a_after["lost_blocks"] > a_before["lost_blocks"]


def test_changed_samples_file_invalidates(tmp_path, cli):
    project(tmp_path)
    cli("check", cwd=tmp_path)
    (tmp_path / "p" / "b.samples.toml").write_text(STATIC, encoding="utf-8")  # the id declared static: no hazard
    r = cli("check", "--output-format", "json", cwd=tmp_path)
    assert [f["path"] for f in r.json()["findings"]] == ["p/a.j2"]
    assert r.out == cli("check", "--no-cache", "--output-format", "json", cwd=tmp_path).out


def test_touched_unchanged_files_stay_warm_by_hash(tmp_path, cli, monkeypatch):
    project(tmp_path)
    p = tmp_path / "p"
    age(*p.iterdir())
    cold = cli("check", "--output-format", "json", cwd=tmp_path)
    (stored,) = manifests(tmp_path)
    assert "p/a.j2" in json.loads(stored.read_text(encoding="utf-8").partition("\n")[2])["files"]
    # Whether the stamp was kept depends on how long the cold run took (the racy window after the
    # files' ctime): either way the touch below moves mtime and ctime, so the warm run must verify
    # by hash. No assertion here depends on the machine's speed.
    for name in ("a.j2", "rules.j2"):  # a template and an include: new mtime and ctime, same bytes
        os.utime(p / name, ns=(os.stat(p / name).st_atime_ns, os.stat(p / name).st_mtime_ns + 5 * 10**9))
    calls = count_entry_reads(monkeypatch)
    warm = cli("check", "--output-format", "json", cwd=tmp_path)
    assert (warm.code, warm.out, warm.err) == (cold.code, cold.out, cold.err)
    assert calls == []  # re-hashed, not re-analysed


def test_same_size_rewrite_with_the_old_mtime_is_seen(tmp_path, cli):
    project(tmp_path)
    a = tmp_path / "p" / "a.j2"
    age(a)
    cli("check", cwd=tmp_path)
    st = os.stat(a)
    swapped = EARLY.replace("Time {{ now }}\n", "Name {{ who }}\n")  # same length
    assert len(swapped) == len(EARLY)
    a.write_text(swapped, encoding="utf-8")
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))  # size and mtime as before; ctime moves
    r = cli("check", "--output-format", "json", cwd=tmp_path)
    assert r.out == cli("check", "--no-cache", "--output-format", "json", cwd=tmp_path).out
    assert "now" not in {f.get("variable") for f in r.json()["findings"]}


def test_tampered_manifest_is_ignored(tmp_path, cli, monkeypatch):
    project(tmp_path)
    cold = cli("check", "--output-format", "json", cwd=tmp_path)
    (stored,) = manifests(tmp_path)
    mac, _, body = stored.read_text(encoding="utf-8").partition("\n")
    data = json.loads(body)
    for rec in data["files"].values():
        rec["findings"] = []  # "nothing to report"
    forged = json.dumps(data, separators=(",", ":"))
    for text in (mac + "\n" + forged,  # the old MAC over a changed body
                 "0" * 64 + "\n" + forged,
                 forged):
        stored.write_text(text, encoding="utf-8")
        calls = count_entry_reads(monkeypatch)
        r = cli("check", "--output-format", "json", cwd=tmp_path)
        assert (r.code, r.out) == (cold.code, cold.out)
        assert calls  # answered by the per-file cache, as without a manifest


def test_manifest_from_another_secret_is_ignored(tmp_path, cli, monkeypatch):
    project(tmp_path)
    cold = cli("check", "--output-format", "json", cwd=tmp_path)
    from promptlint.project import cache

    monkeypatch.setattr(cache, "_SECRET", [os.urandom(32)])  # another user's or machine's
    calls = count_entry_reads(monkeypatch)
    r = cli("check", "--output-format", "json", cwd=tmp_path)
    assert (r.code, r.out) == (cold.code, cold.out)
    assert calls


def test_changed_tokenizer_invalidates(tmp_path, cli):
    project(tmp_path)
    cli("check", cwd=tmp_path)
    shutil.copy(MISTRAL, tmp_path / "tok" / "tokenizer.json")
    r = cli("check", "--output-format", "json", cwd=tmp_path)
    fresh = cli("check", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert r.out == fresh.out
    import hashlib

    assert r.json()["tokenizer"]["sha256"] == hashlib.sha256(MISTRAL.read_bytes()).hexdigest()


def test_selected_rules_and_settings_have_their_own_manifest(tmp_path, cli):
    project(tmp_path)
    full = cli("check", "--output-format", "json", cwd=tmp_path)
    none = cli("check", "--ignore", "M101", "--output-format", "json", cwd=tmp_path)
    assert full.json()["findings"] and not none.json()["findings"]
    assert len(manifests(tmp_path)) == 2
    assert cli("check", "--output-format", "json", cwd=tmp_path).out == full.out


def test_manifest_is_bounded_and_counted_in_the_cap(tmp_path, cli, monkeypatch):
    from promptlint.project import manifest

    project(tmp_path)
    cap = manifest.MAX_BYTES
    monkeypatch.setattr(manifest, "MAX_BYTES", 200)  # smaller than any record
    cold = cli("check", "--output-format", "json", cwd=tmp_path)
    assert manifests(tmp_path) == []
    assert cli("check", "--output-format", "json", cwd=tmp_path).out == cold.out
    monkeypatch.setattr(manifest, "MAX_BYTES", cap)
    from promptlint.project import cache

    monkeypatch.setattr(cache, "MAX_BYTES", 1)  # evict everything the run wrote
    cli("check", cwd=tmp_path)
    assert manifests(tmp_path) == [] and not list((tmp_path / ".promptlint_cache").rglob("entries/*/*.json"))


def test_symlinked_cache_directory_gets_no_manifest(tmp_path, cli):
    project(tmp_path / "proj")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tmp_path / "proj" / ".promptlint_cache")
    r = cli("check", cwd=tmp_path / "proj")
    assert r.code == 1 and "symlink" in r.err
    assert not list(elsewhere.rglob("manifests"))
