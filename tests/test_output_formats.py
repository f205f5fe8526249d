"""--output-format github / sarif / gitlab / json-lines, --stdin-filename and --force-exclude."""

from __future__ import annotations

import json

import pytest

from integration_helpers import BAD, DATA, GOOD, QWEN, run_cli

from promptlint.report.github import escape_data, escape_property


@pytest.fixture
def project(tmp_path):
    """A git work tree with one hazard, one syntax error and one unused suppression."""
    (tmp_path / ".git").mkdir()
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "support.j2").write_text(BAD, encoding="utf-8")
    (prompts / "broken.j2").write_text("Hello {{ name }\nWorld\n", encoding="utf-8")
    (prompts / "clean.j2").write_text("{# promptlint: ignore[M101] #}\n" + GOOD, encoding="utf-8")
    return tmp_path


def check(capsys, monkeypatch, cwd, fmt, *paths):
    return run_cli(capsys, monkeypatch, cwd, "check", "--tokenizer", QWEN, "--output-format", fmt, *paths)


def test_sarif_validates_against_the_official_schema(project, capsys, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    code, out, err = check(capsys, monkeypatch, project / "prompts", "sarif", ".")
    assert code == 1, err
    doc = json.loads(out)
    schema = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(doc)

    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert {"M101", "E001", "PL100"} <= set(ids)
    m101 = rules[ids.index("M101")]
    assert m101["help"]["markdown"].startswith("# M101 `volatile-before-shared-prefix`")
    assert "## What it does" in m101["help"]["markdown"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert set(by_rule) == {"M101", "E001", "PL100"}
    hazard = by_rule["M101"]
    assert hazard["level"] == "warning" and by_rule["E001"]["level"] == "error"
    assert ids[hazard["ruleIndex"]] == "M101"
    loc = hazard["locations"][0]["physicalLocation"]
    # repository-relative even though we ran from prompts/
    assert loc["artifactLocation"] == {"uri": "prompts/support.j2", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 1, "startColumn": 15, "endLine": 1, "endColumn": 24}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    props = hazard["properties"]
    assert props["variable"] == "now" and props["lost_blocks"] > 0 and props["block_size"] == 16
    assert props["first_divergent_token"]["index"] == props["shared_tokens"]
    assert len(hazard["partialFingerprints"]["promptlint/v1"]) == 32


def _fingerprint(capsys, monkeypatch, cwd, name):
    code, out, err = check(capsys, monkeypatch, cwd, "sarif", name)
    results = json.loads(out)["runs"][0]["results"]
    return {(r["ruleId"], r["properties"].get("variable")): r["partialFingerprints"]["promptlint/v1"] for r in results}


def test_sarif_fingerprints_survive_unrelated_edits(tmp_path, capsys, monkeypatch):
    (tmp_path / ".git").mkdir()
    t = tmp_path / "t.j2"
    t.write_text(BAD, encoding="utf-8")
    before = _fingerprint(capsys, monkeypatch, tmp_path, "t.j2")
    # lines added above, shared text changed (so line numbers and block counts move)
    t.write_text("{# header #}\nPreamble.\n" + BAD.replace("politely", "kindly and politely"), encoding="utf-8")
    after = _fingerprint(capsys, monkeypatch, tmp_path, "t.j2")
    assert before == after and ("M101", "now") in before
    t.write_text(BAD.replace("{{ now }}", "{{ timestamp }}"), encoding="utf-8")
    assert _fingerprint(capsys, monkeypatch, tmp_path, "t.j2")[("M101", "timestamp")] != before[("M101", "now")]


def test_github_escaping():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_data("a:b,c") == "a:b,c"
    assert escape_property("dir,x/a:b%.j2\n") == "dir%2Cx/a%3Ab%25.j2%0A"


def test_github_annotations(tmp_path, capsys, monkeypatch):
    ws = tmp_path / "ws"
    (ws / "odd,dir").mkdir(parents=True)
    (ws / "odd,dir" / "t:1.j2").write_text(BAD, encoding="utf-8")
    (ws / "odd,dir" / "broken.j2").write_text("{% if %}\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ws))
    code, out, err = check(capsys, monkeypatch, ws / "odd,dir", "github", ".")
    assert code == 1, err
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::error file=odd%2Cdir/broken.j2,line=1,col=1,")
    assert lines[0].split("::")[1].endswith("title=promptlint (E001)")
    hazard = lines[1]
    assert hazard.startswith(
        "::warning file=odd%2Cdir/t%3A1.j2,line=1,col=15,endLine=1,endColumn=24,title=promptlint (M101)::M101 `now` "
    )
    assert "%0Ahelp: move `now` after the shared material" in hazard
    assert "\r" not in out and out.count("\n") == 2


def test_gitlab_code_quality(project, capsys, monkeypatch):
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)
    code, out, err = check(capsys, monkeypatch, project, "gitlab", "prompts")
    issues = json.loads(out)
    assert {i["check_name"] for i in issues} == {"M101", "E001", "PL100"}
    for i in issues:
        assert set(i) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert i["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert i["location"]["path"].startswith("prompts/")
        assert i["location"]["positions"]["begin"]["line"] >= 1
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_json_lines_objects_equal_the_json_records(project, capsys, monkeypatch):
    _, out, _ = check(capsys, monkeypatch, project, "json", "prompts")
    doc = json.loads(out)
    _, lines, _ = check(capsys, monkeypatch, project, "json-lines", "prompts")
    records = [json.loads(l) for l in lines.splitlines()]
    key = lambda r: (r["path"], r["line"], r["column"], r["code"])  # noqa: E731
    assert sorted(records, key=key) == sorted(doc["findings"] + doc["errors"], key=key)
    assert len(records) == 3


def test_stdin_filename_lints_stdin_as_that_path(tmp_path, capsys, monkeypatch):
    (tmp_path / "promptlint.toml").write_text('exclude = ["vendor/"]\n', encoding="utf-8")
    (tmp_path / "other.j2").write_text(BAD, encoding="utf-8")  # must not be discovered
    args = ("check", "--tokenizer", QWEN, "--output-format", "concise")
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, *args, "--stdin-filename", "prompts/new.j2", stdin=BAD)
    assert code == 1, err
    assert out.splitlines() == [out.splitlines()[0]] and out.startswith("prompts/new.j2:1:15: M101 ")
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, *args, "--stdin-filename", "prompts/new.j2", stdin=GOOD)
    assert (code, out) == (0, "")
    # --force-exclude applies the config's exclude to the stdin filename (ruff's behaviour)
    code, out, err = run_cli(
        capsys, monkeypatch, tmp_path, *args, "--force-exclude", "--stdin-filename", "vendor/x.j2", stdin=BAD
    )
    assert (code, out) == (0, "")
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, *args, "--stdin-filename", "vendor/x.j2", stdin=BAD)
    assert code == 1
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, *args, "--stdin-filename", "a.j2", "other.j2", stdin=BAD)
    assert code == 2 and "stdin only" in err and err.count("\n") == 1


def test_force_exclude_applies_to_explicit_paths(tmp_path, capsys, monkeypatch):
    (tmp_path / "promptlint.toml").write_text('exclude = ["vendor/", "*.draft.j2"]\n', encoding="utf-8")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "x.j2").write_text(BAD, encoding="utf-8")
    (tmp_path / "a.draft.j2").write_text(BAD, encoding="utf-8")
    (tmp_path / "ok.j2").write_text(GOOD, encoding="utf-8")
    args = ("check", "--tokenizer", QWEN, "--output-format", "concise")
    paths = ("vendor/x.j2", "a.draft.j2", "ok.j2")
    code, out, _ = run_cli(capsys, monkeypatch, tmp_path, *args, *paths)
    assert code == 1 and len(out.splitlines()) == 2  # explicit paths win without the flag
    code, out, _ = run_cli(capsys, monkeypatch, tmp_path, *args, "--force-exclude", *paths)
    assert (code, out) == (0, "")
    code, out, _ = run_cli(capsys, monkeypatch, tmp_path, *args, ".")  # directories always honour exclude
    assert (code, out) == (0, "")


def test_formats_are_listed_in_help(capsys, monkeypatch, tmp_path):
    code, out, _ = run_cli(capsys, monkeypatch, tmp_path, "check", "--help")
    for name in ("full", "concise", "json", "json-lines", "github", "gitlab", "sarif"):
        assert name in out
    assert "--stdin-filename" in out
