"""The result cache: hits skip the heavy work, every input change invalidates, damage is harmless."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from conftest import QWEN, REPO

EARLY = 'Time {{ now }}\n{% include "rules.j2" %}\nQ: {{ question }}\n'
RULES = "Shared rules of the shop. " * 40


def project(tmp_path):
    (tmp_path / "tok").mkdir()
    shutil.copy(QWEN, tmp_path / "tok" / "tokenizer.json")
    (tmp_path / "promptlint.toml").write_text('tokenizer = "tok/tokenizer.json"\n', encoding="utf-8")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.j2").write_text(EARLY, encoding="utf-8")
    (tmp_path / "p" / "rules.j2").write_text(RULES, encoding="utf-8")
    return tmp_path


def run_modules(tmp_path, *args):
    """Run the CLI in a fresh interpreter; return (exit code, stdout, imported top-level modules)."""
    code = (
        "import sys\nfrom promptlint.cli import main\nrc = main(%r)\n"
        "print('MODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))\nsys.exit(rc)" % (list(args),)
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    out, _, mods = r.stdout.rpartition("MODULES ")
    return r.returncode, out, set(mods.split())


def test_warm_run_loads_no_tokenizer_and_no_jinja(tmp_path):
    project(tmp_path)
    rc1, out1, mods1 = run_modules(tmp_path, "check", "--output-format", "concise", "p/a.j2")
    assert rc1 == 1 and "M101" in out1 and "tokenizers" in mods1
    rc2, out2, mods2 = run_modules(tmp_path, "check", "--output-format", "concise", "p/a.j2")
    assert (rc2, out2) == (rc1, out1)
    assert not ({"tokenizers", "jinja2", "jsonschema", "libcst"} & mods2), mods2
    top = tmp_path / ".promptlint_cache"
    assert (top / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (top / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_changes_to_includes_samples_settings_invalidate(tmp_path, cli):
    project(tmp_path)
    first = cli("check", "--output-format", "json", "p/a.j2", cwd=tmp_path).json()["findings"][0]
    # an include changes: more shared material -> more lost blocks
    (tmp_path / "p" / "rules.j2").write_text(RULES * 2, encoding="utf-8")
    second = cli("check", "--output-format", "json", "p/a.j2", cwd=tmp_path).json()["findings"][0]
    assert second["lost_blocks"] > first["lost_blocks"]
    # a samples file appears: `now` declared static -> no finding
    (tmp_path / "p" / "a.samples.toml").write_text('[variables]\nnow = { value = "x", kind = "static" }\n', encoding="utf-8")
    assert cli("check", "p/a.j2", cwd=tmp_path).code == 0
    (tmp_path / "p" / "a.samples.toml").unlink()
    # settings change: another block size gives other figures
    r = cli("check", "--output-format", "json", "--block-size", "4", "p/a.j2", cwd=tmp_path)
    assert r.json()["findings"][0]["block_size"] == 4


def test_corrupt_cache_is_a_miss_and_no_cache_bypasses(tmp_path, cli):
    project(tmp_path)
    expected = cli("check", "--output-format", "concise", "p/a.j2", cwd=tmp_path).out
    for f in (tmp_path / ".promptlint_cache").rglob("*.json"):
        f.write_text("{not json", encoding="utf-8")
    r = cli("check", "--output-format", "concise", "p/a.j2", cwd=tmp_path)
    assert r.out == expected and r.code == 1
    shutil.rmtree(tmp_path / ".promptlint_cache")
    cli("check", "--no-cache", "p/a.j2", cwd=tmp_path)
    assert not (tmp_path / ".promptlint_cache").exists()


def test_unwritable_cache_warns_and_continues(tmp_path, cli):
    project(tmp_path)
    (tmp_path / ".promptlint_cache").write_text("a file where the cache directory should be", encoding="utf-8")
    r = cli("check", "--output-format", "concise", "p/a.j2", cwd=tmp_path)
    assert r.code == 1 and "M101" in r.out
    assert "cannot write the cache" in r.err and "continuing without it" in r.err


def test_clean_removes_the_cache(tmp_path, cli):
    project(tmp_path)
    cli("check", "p/a.j2", cwd=tmp_path)
    assert (tmp_path / ".promptlint_cache").is_dir()
    r = cli("clean", cwd=tmp_path)
    assert r.code == 0 and "removed" in r.out
    assert not (tmp_path / ".promptlint_cache").exists()


def test_pinned_sha_is_still_checked_on_a_warm_run(tmp_path, cli):
    project(tmp_path)
    cli("check", "p/a.j2", cwd=tmp_path)
    (tmp_path / "promptlint.toml").write_text('tokenizer = "tok/tokenizer.json"\ntokenizer-sha256 = "%s"\n' % ("1" * 64), encoding="utf-8")
    r = cli("check", "p/a.j2", cwd=tmp_path)
    assert r.code == 2 and "the tokenizer changed" in r.err
