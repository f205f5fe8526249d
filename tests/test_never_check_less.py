"""Issue 15: configuration and inputs from an untrusted pull request never make promptlint check less
without saying so (items 9, 10, 14, 15, 17 and the top-level part of item 1).

Each test reproduces the attack as it was reported: before the fix, every one of them either passed
silently ("All checks passed") or ended in an internal error.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from integration_helpers import BAD, QWEN

SECRET = "s3cr3t-token-value"


def _project(tmp_path: Path, config: str = "") -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "promptlint.toml").write_text(config, encoding="utf-8")
    (root / "support.j2").write_text(BAD, encoding="utf-8")
    return root


def _one_line_error(r):
    lines = r.err.strip().splitlines()
    assert r.code == 2, (r.code, r.out, r.err)
    assert len(lines) == 1, r.err
    return lines[0]


# item 14 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_unknown_selector_on_the_command_line_exits_2_naming_it(tmp_path, cli, option):
    root = _project(tmp_path)
    line = _one_line_error(cli("check", "--no-cache", option, "M1O1", "support.j2", cwd=root))
    assert "'M1O1'" in line and "unknown rule code" in line


@pytest.mark.parametrize(
    "config, where",
    [
        ('select = ["M1O"]\n', "select"),  # a letter O for a zero: selects nothing
        ('ignore = ["X9"]\n', "ignore"),
        ('[per-file-ignores]\n"*.j2" = ["M999"]\n', "per-file-ignores"),
    ],
)
def test_unknown_selector_in_configuration_exits_2(tmp_path, cli, config, where):
    root = _project(tmp_path, config)
    line = _one_line_error(cli("check", "--no-cache", "support.j2", cwd=root))
    assert "unknown rule code" in line and where in line


def test_a_real_prefix_is_accepted(tmp_path, cli):
    root = _project(tmp_path, 'select = ["M10"]\n')  # M101..M105
    assert cli("check", "--no-cache", "support.j2", cwd=root).code == 1


def test_unknown_code_in_a_suppression_is_reported_even_when_the_file_has_an_error(tmp_path, cli):
    root = _project(tmp_path)
    (root / "broken.j2").write_text("{# promptlint: ignore[M1O1] #}\n{% if %}\n", encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "json", "broken.j2", cwd=root)
    data = r.json()
    got = {(f["code"], f["line"]) for f in data["findings"] + data["errors"]}
    assert ("E001", 2) in got
    assert ("PL100", 1) in got


# item 9 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config, fragment",
    [
        ("render-timeout = nan\n", "render-timeout"),
        ("render-timeout = inf\n", "render-timeout"),
        ("block-size = 16.0\n", "block-size"),
        ('templates = ["../../**/*"]\n', "leaves the project"),
        ('templates = ["/etc/*"]\n', "leaves the project"),
        ('tokenizer = "/dev/zero"\n', "not a regular file"),
    ],
)
def test_configuration_that_would_check_less_exits_2(tmp_path, cli, config, fragment):
    root = _project(tmp_path, config)
    line = _one_line_error(cli("check", "--no-cache", cwd=root))
    assert fragment in line


# item 15 ------------------------------------------------------------------------------------------


def _embedded_sha256() -> str:
    import promptlint

    data = Path(promptlint.__file__).parent / "data" / "cl100k_base.tokenizer.json.gz"
    return hashlib.sha256(gzip.decompress(data.read_bytes())).hexdigest()


def test_a_pin_without_a_path_is_checked_against_the_embedded_tokenizer(tmp_path, cli):
    root = _project(tmp_path)
    line = _one_line_error(cli("check", "--no-cache", "--tokenizer-sha256", "0" * 64, "support.j2", cwd=root))
    assert "expected sha256 " + "0" * 64 in line and _embedded_sha256() in line
    r = cli("check", "--no-cache", "--tokenizer-sha256", _embedded_sha256(), "support.j2", cwd=root)
    assert r.code == 1  # the right pin: the run goes on and finds the M101


def test_a_config_pin_without_a_path_is_checked_too(tmp_path, cli):
    root = _project(tmp_path, f'tokenizer-sha256 = "{"a" * 64}"\n')
    assert "expected sha256" in _one_line_error(cli("check", "support.j2", cwd=root))


# item 10 ------------------------------------------------------------------------------------------


def test_in_place_edit_keeping_size_and_mtime_cannot_bypass_the_pin(tmp_path, cli):
    tok = tmp_path / "tok" / "tokenizer.json"
    tok.parent.mkdir()
    shutil.copyfile(QWEN, tok)
    sha = hashlib.sha256(tok.read_bytes()).hexdigest()
    root = _project(tmp_path, f'tokenizer = "{tok.as_posix()}"\ntokenizer-sha256 = "{sha}"\n')
    assert cli("check", "support.j2", cwd=root).code == 1  # cached: the memo now holds the sha
    st = tok.stat()
    data = bytearray(tok.read_bytes())
    i = data.index(b'"version"')
    data[i + 1 : i + 8] = b"VERSION"  # same size
    with open(tok, "r+b") as f:  # in place: same inode
        f.write(data)
    os.utime(tok, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    assert tok.stat().st_size == st.st_size and tok.stat().st_mtime_ns == st.st_mtime_ns
    line = _one_line_error(cli("check", "support.j2", cwd=root))
    assert "the tokenizer changed" in line


# item 17 ------------------------------------------------------------------------------------------


def test_unreadable_subdirectory_is_an_e_finding(tmp_path):
    root = _project(tmp_path)
    locked = root / "locked"
    locked.mkdir()
    (locked / "hidden.j2").write_text(BAD, encoding="utf-8")
    locked.chmod(0)
    cmd = [sys.executable, "-m", "promptlint", "check", "--no-cache", "--output-format", "concise", "."]
    if os.geteuid() == 0:
        # Root reads every directory through CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH. Drop just those two
        # (same uid, so the interpreter, its 0700 venv and site-packages stay reachable) and a mode-0
        # directory is unreadable even to its owner.
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv")
        cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"] + cmd
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    try:
        r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env, timeout=120)
    finally:
        locked.chmod(0o755)
    assert "locked: " in r.stdout or "locked:1:1: E005" in r.stdout, r.stdout + r.stderr
    assert "E005" in r.stdout and "cannot read the directory" in r.stdout
    assert "support.j2:1:15: M101" in r.stdout  # the rest of the run is still reported
    assert r.returncode == 1


# item 1, top-level files ---------------------------------------------------------------------------


def test_walked_symlink_leading_out_of_the_project_is_not_read(tmp_path, cli):
    outside = tmp_path / "outside.txt"
    outside.write_text(f"TOKEN={SECRET}\n{{{{ x }}\n", encoding="utf-8")
    root = _project(tmp_path)
    (root / "env.j2").symlink_to(outside)
    r = cli("check", "--no-cache", "--evidence", "--output-format", "json", ".", cwd=root)
    assert SECRET not in r.out and SECRET not in r.err
    errors = {(e["path"], e["code"]) for e in r.json()["errors"]}
    assert ("env.j2", "E005") in errors
    # the user can still lint the file where it is, by naming it
    r = cli("check", "--no-cache", str(outside), cwd=root)
    assert r.code == 1
