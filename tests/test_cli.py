"""Exit codes, lean start-up, tokenizer pinning and bad input at the command line."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from conftest import QWEN, REPO

HEAVY = ("jinja2", "tokenizers", "jsonschema", "libcst", "tomli", "markupsafe")


def _modules_after(code: str) -> set:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print(' '.join(sorted(sys.modules)))"],
        capture_output=True, text=True, cwd=REPO, check=True,
    ).stdout.split()
    return {m.split(".")[0] for m in out}


def test_version_and_help_import_no_third_party_module():
    for argv in (["--version"], ["--help"], ["check", "--help"]):
        mods = _modules_after(
            "from promptlint.cli import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass" % (argv,)
        )
        assert not (mods & set(HEAVY)), (argv, mods & set(HEAVY))


def test_template_only_run_never_imports_libcst(tmp_path):
    t = tmp_path / "a.j2"
    t.write_text("Hello {{ question }}\n", encoding="utf-8")
    mods = _modules_after(f"from promptlint.cli import main\nmain(['check', '--tokenizer', {str(QWEN)!r}, {str(t)!r}])")
    assert "libcst" not in mods
    assert "tokenizers" in mods and "jinja2" in mods


def test_python_m_promptlint_works():
    r = subprocess.run([sys.executable, "-m", "promptlint", "--version"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and r.stdout.startswith("promptlint ")


def test_exit_codes(tmp_path, cli):
    clean = tmp_path / "clean.j2"
    clean.write_text("You are helpful.\nQuestion: {{ question }}\n", encoding="utf-8")
    bad = tmp_path / "bad.j2"
    bad.write_text("Time {{ now }}\n" + "Shared rules of the shop. " * 40 + "{{ question }}", encoding="utf-8")
    assert cli("check", "--tokenizer", QWEN, clean).code == 0
    assert cli("check", "--tokenizer", QWEN, bad).code == 1
    assert cli("check", "--tokenizer", QWEN, "--exit-zero", bad).code == 0
    assert cli("check", "--tokenizer", tmp_path / "nope.json", clean).code == 2
    assert cli("check", "--bogus-option").code == 2


def test_missing_path_is_an_e005_finding(tmp_path, cli):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "concise", tmp_path / "missing.j2")
    assert r.code == 1
    assert "E005 no such file or directory" in r.out


def test_tokenizer_sha_mismatch_prints_both_hashes(tmp_path, cli):
    t = tmp_path / "a.j2"
    t.write_text("Hi {{ question }}", encoding="utf-8")
    real = hashlib.sha256(QWEN.read_bytes()).hexdigest()
    r = cli("check", "--tokenizer", QWEN, "--tokenizer-sha256", "0" * 64, t)
    assert r.code == 2
    (line,) = r.err.strip().splitlines()
    assert "the tokenizer changed" in line and "0" * 64 in line and real in line and "re-pin it or restore it" in line
    assert cli("check", "--tokenizer", QWEN, "--tokenizer-sha256", real, t).code == 0


def test_truncated_and_non_tokenizer_files_exit_2_with_one_line(tmp_path, cli):
    t = tmp_path / "a.j2"
    t.write_text("Hi {{ question }}", encoding="utf-8")
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(QWEN.read_bytes()[:5000])
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}', encoding="utf-8")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    for f, words in ((truncated, "invalid or truncated JSON"), (other, "not a Hugging Face tokenizer.json"), (binary, "not UTF-8")):
        r = cli("check", "--tokenizer", f, t)
        assert r.code == 2, f
        lines = r.err.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and str(f) in lines[0] and "Traceback" not in r.err


def test_embedded_default_tokenizer_serves_with_a_notice(tmp_path, cli):
    t = tmp_path / "a.j2"
    t.write_text("Time {{ now }}\n" + "Shared rules of the shop. " * 40 + "{{ question }}", encoding="utf-8")
    r = cli("check", "--output-format", "json", t, cwd=tmp_path)
    assert r.code == 1
    doc = r.json()
    assert doc["tokenizer"]["embedded"] is True and doc["tokenizer"]["path"] is None
    assert "approximate" in r.err and "embedded cl100k_base" in r.err
    # the index must be the embedded cl100k tokenizer's own, checked with a direct encode
    import gzip

    from tokenizers import Tokenizer

    from conftest import shared_prefix

    raw = gzip.decompress((REPO / "promptlint" / "data" / "cl100k_base.tokenizer.json.gz").read_bytes())
    cl100k = Tokenizer.from_str(raw.decode("utf-8"))
    body = "\n" + "Shared rules of the shop. " * 40 + "How do I reset my password?"
    b = cl100k.encode("Time 2025-03-14 09:26:53" + body, add_special_tokens=False).ids
    v = cl100k.encode("Time 2025-03-14 09:27:00" + body, add_special_tokens=False).ids
    f = doc["findings"][0]
    assert f["first_divergent_token"]["index"] == shared_prefix(b, v) > 0
    assert f["prompt_tokens"] == len(v)


def test_no_tokenizer_load_when_nothing_to_tokenize(tmp_path, cli):
    t = tmp_path / "broken.j2"
    t.write_text("{{ oops }", encoding="utf-8")
    r = cli("check", "--tokenizer", QWEN, "--output-format", "concise", t)
    assert r.code == 1 and "E001 template syntax error" in r.out
    assert "approximate" not in r.err


def test_rule_command_prints_docs(cli):
    r = cli("rule", "M101")
    assert r.code == 0
    assert r.out.startswith("# M101 `volatile-before-shared-prefix`")
    assert "## What it does" in r.out and "## Why it matters" in r.out
    assert cli("rule", "volatile-before-shared-prefix").out == r.out
    assert cli("rule", "X999").code == 2


def test_notes_never_fail_a_run(tmp_path, cli):
    """A tool order the samples file declares pinned is reported as severity info, and exits 0."""
    (tmp_path / "t.j2").write_text(
        "Tools:\n{% for t in tools %}- {{ t.name }}: {{ t.description }}\n{% endfor %}"
        + "Always look up the order first and never guess a status. " * 12 + "\nUser: {{ question }}",
        encoding="utf-8",
    )
    (tmp_path / "t.samples.toml").write_text(
        'tools-order = "pinned"\n[variables]\ntools = [{name = "a_tool", description = "first"}, {name = "b_tool", description = "second"}]\n',
        encoding="utf-8",
    )
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", tmp_path / "t.j2")
    (f,) = r.json()["findings"]
    assert (f["code"], f["severity"]) == ("M202", "info")
    assert r.code == 0


def test_the_command_flushes_everything_before_its_quick_exit(tmp_path):
    """`check` leaves without the interpreter's teardown: every line must be out first, through a
    pipe that stays open and through one the reader closes early (`| head -1`)."""
    import subprocess
    import sys

    for i in range(30):
        (tmp_path / f"t{i:02d}.j2").write_text("Time: {{ now }}\n" + "Answer from the handbook only. " * 40 + "\nQ: {{ question }}\n",
                                               encoding="utf-8")
    argv = [sys.executable, "-m", "promptlint", "check", "--no-cache", "--no-daemon", "--output-format", "concise",
            "--tokenizer", str(QWEN), "."]
    whole = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert whole.returncode == 1, whole.stderr
    lines = whole.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:30]] == [f"t{i:02d}.j2" for i in range(30)]
    assert all(": M101 " in line for line in lines[:30])
    head = subprocess.run(f"{subprocess.list2cmdline(argv)} | head -1", shell=True, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert head.stdout == lines[0] + "\n" and "Traceback" not in head.stderr


def test_an_option_typo_names_the_closest_option_of_its_command(cli):
    r = cli("check", "--selct", "M1", "x.j2")
    assert r.code == 2 and r.out == ""
    assert r.err.splitlines()[-1] == "promptlint check: error: unrecognized arguments: --selct (--selct: did you mean --select?)"
    assert r.err.startswith("usage: promptlint check ")  # the subcommand's usage, not the top level's


def test_a_command_typo_names_the_closest_command(cli):
    r = cli("chek")
    assert r.code == 2 and r.err.splitlines()[-1] == "promptlint: error: unknown command 'chek' (did you mean 'check'?)"
