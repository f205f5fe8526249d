"""Issue 27, families 4 and 6: file content never reaches the output, and no output line is text
CI interprets.

A pull request commits templates; CI writes secrets into the workspace (`.env`, `.npmrc`, cloud
credential files) beside them, untracked. The templates here try to print such a file through
every message that names something computed (an include name, a mapping key, an attribute, a
raised message, an exception's text, a samples file's value), in every output format and in
`render`; the configuration's table paths point outside the project; file names and
configuration values carry `\\n::error::`; a template-controlled message mentions `@org/team`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import QWEN

from promptlint.report import formats

CANARY = "CANARY-7f3a9c-DO-NOT-PRINT"
SECRET_BITS = ("7f3a9c", "DO-NOT-PRINT")
FORMATS = list(formats())  # every format the report package holds
READ = "{% set s %}{% include '.env' %}{% endset %}"

TEMPLATES = {
    # the include name is the file's text
    "computed_include.j2": READ + "{% include s %}\n",
    # a key that is not found
    "missing_key.j2": READ + "{% set d = {'a': 1} %}{{ d[s] }}\n",
    # an attribute that is not found, through `attr` and through `.`-lookup on a computed name
    "attribute.j2": READ + "{{ ''|attr(s) }}\n",
    # the sandbox's refusal quotes the attribute it refused
    "private.j2": READ + "{{ {}['_' ~ s] }}\n",
    # Python's own exception text: a repr (KeyError) and a bare message (LookupError)
    "format_key.j2": READ + "{{ ('{' ~ s|replace('=', '') ~ '}').format() }}\n",
    "encoding.j2": READ + "{{ 'x'.encode(s) }}\n",
    # a keyword argument Python names without repr(), quotes of its own around the text
    "keyword.j2": READ + "{{ 'x'|truncate(**{\"' \" ~ s ~ \" '\": 1}) }}\n",
    # `%` formatting names the character it refuses, and its code
    "format_char.j2": READ + "{{ ('%' ~ s[-1]) % (1,) }}\n",
    # a samples file's value used as a key (the samples file is untracked, as a file CI writes)
    "from_samples.j2": "{% set d = {'a': 1} %}{{ d[key] }}\n",
    # a tracked include that works, and a literal name that stays readable
    "tracked.j2": "Hello {{ name }}\n{% include 'part.j2' %}\n",
    "literal_missing.j2": "{% include 'no_such_part.j2' %}\n",
}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                            GIT_COMMITTER_EMAIL="t@t"))


@pytest.fixture
def workspace(tmp_path):
    """A git checkout of the pull request's files, then what CI wrote into it (untracked)."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "promptlint.toml").write_text(f'tokenizer = "{QWEN}"\n', encoding="utf-8")
    for name, text in TEMPLATES.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "part.j2").write_text("the tracked part\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "pull request")
    (root / ".env").write_text(f"API_TOKEN={CANARY}\n", encoding="utf-8")
    (root / "from_samples.samples.toml").write_text(f'[variables]\nkey = "{CANARY}"\n', encoding="utf-8")
    return root


def _no_canary(*texts: str) -> None:
    for text in texts:
        for bit in SECRET_BITS:
            assert bit not in text, text


def _described(text: str) -> str:
    """How a message names ``text`` computed by a template: its length and a keyed id (never its text)."""
    return f"a computed name ({len(text)} characters, id "


def _reported(out: str):
    doc = json.loads(out)
    return {e["path"]: e for e in doc["findings"] + doc["errors"]}


# ---------------------------------------------------------------- family 4: computed names


def test_no_format_prints_a_file_the_templates_read(workspace, cli, tmp_path):
    for fmt in FORMATS:
        reports = {f: tmp_path / f"report.{f}" for f in ("sarif", "markdown", "github")}
        r = cli("check", "--no-cache", "--output-format", fmt,
                *[f"--report-file={f}={p}" for f, p in reports.items()], cwd=workspace)
        assert r.code == 1, (fmt, r.err)
        _no_canary(r.out, r.err, *(p.read_text(encoding="utf-8") for p in reports.values()))
    # each attempt is an error at its template, the computed text described by length and hash
    found = _reported(cli("check", "--no-cache", "--output-format", "json", cwd=workspace).out)
    described = _described(f"API_TOKEN={CANARY}")  # Jinja drops the trailing newline
    assert found["computed_include.j2"]["code"] == "E002" and described in found["computed_include.j2"]["message"]
    assert found["missing_key.j2"]["code"] == "E004" and described in found["missing_key.j2"]["message"]
    assert found["attribute.j2"]["code"] == "E004" and described in found["attribute.j2"]["message"]
    assert found["private.j2"]["code"] == "E007" and "a computed name" in found["private.j2"]["message"]
    assert found["format_key.j2"]["code"] == "E002" and "KeyError" in found["format_key.j2"]["message"]
    assert "LookupError: a computed message" in found["encoding.j2"]["message"]
    assert "unexpected keyword argument a computed name" in found["keyword.j2"]["message"]
    assert "format character a computed name (1 characters" in found["format_char.j2"]["message"]
    assert "0x" not in found["format_char.j2"]["message"], found["format_char.j2"]
    assert found["from_samples.j2"]["code"] == "E004" and _described(CANARY) in found["from_samples.j2"]["message"]
    # literal names keep their wording; the tracked include renders
    assert "included template not found: no_such_part.j2" in found["literal_missing.j2"]["message"]
    assert "tracked.j2" not in found


def test_a_raised_message_is_shown_only_when_the_template_wrote_it(workspace, cli):
    (workspace / "raised.j2").write_text(READ + "{{ raise_exception(s) }}\n", encoding="utf-8")
    (workspace / "literal_raise.j2").write_text("{{ raise_exception('roles must alternate') }}\n", encoding="utf-8")
    r = cli("check", "--no-cache", "--template-env", "transformers", "--output-format", "json",
            "raised.j2", "literal_raise.j2", cwd=workspace)
    _no_canary(r.out, r.err)
    found = _reported(r.out)
    assert found["raised.j2"]["message"].startswith("render failed: a computed message (")
    assert found["literal_raise.j2"]["message"] == "render failed: roles must alternate"


def test_render_prints_no_file_the_template_read(workspace, cli):
    (workspace / "scenario.toml").write_text("", encoding="utf-8")
    for name in ("computed_include.j2", "missing_key.j2", "attribute.j2"):
        for fmt in ("text", "json"):
            r = cli("render", name, "--scenario", "scenario.toml", "--output-format", fmt, cwd=workspace)
            assert r.code != 0, (name, r.out)
            assert "a computed name" in r.out + r.err, (name, r.out, r.err)
            _no_canary(r.out, r.err)


# ---------------------------------------------------------------- untrusted mode: tracked files only


@pytest.mark.parametrize("how", ["CI=true", "GITHUB_ACTIONS=true", "--untrusted"])
def test_in_ci_an_untracked_file_is_not_read(workspace, cli, monkeypatch, how):
    flags = []
    if how.startswith("--"):
        flags.append(how)
    else:
        monkeypatch.setenv(*how.split("="))
    r = cli("check", "--no-cache", "--output-format", "json", *flags, cwd=workspace)
    _no_canary(r.out, r.err)
    found = _reported(r.out)
    refused = "`.env` is not tracked by git; refused in untrusted mode"
    for name in ("computed_include.j2", "missing_key.j2", "attribute.j2", "private.j2"):
        assert found[name]["code"] == "E002" and refused in found[name]["message"], found[name]
    assert "tracked.j2" not in found  # its tracked include still renders
    # the untracked samples file is invisible: the key is inferred, not the file's value
    assert found["from_samples.j2"]["code"] == "E004"
    assert _described(CANARY) not in found["from_samples.j2"]["message"], found["from_samples.j2"]
    r = cli("check", "--no-cache", "--output-format", "json", *flags, "tracked.j2", cwd=workspace)
    assert r.code == 0 and _reported(r.out) == {}, r.out


def test_an_untracked_template_is_invisible_to_the_walk_and_refused_by_name(workspace, cli):
    (workspace / "written_by_ci.j2").write_text("{% include '.env' %}\n", encoding="utf-8")
    r = cli("check", "--no-cache", "--untrusted", "--output-format", "json", cwd=workspace)
    assert "written_by_ci.j2" not in _reported(r.out)
    r = cli("check", "--no-cache", "--untrusted", "--output-format", "json", "written_by_ci.j2", cwd=workspace)
    (e,) = json.loads(r.out)["errors"]
    assert e["code"] == "E002" and "not tracked by git" in e["message"]


def test_trusted_overrides_ci(workspace, cli, monkeypatch):
    monkeypatch.setenv("CI", "true")
    r = cli("check", "--no-cache", "--trusted", "--output-format", "json", "missing_key.j2", cwd=workspace)
    (e,) = json.loads(r.out)["errors"]
    assert e["code"] == "E004" and "a computed name" in e["message"]  # .env was read, its text not shown


def test_ci_false_is_not_ci(workspace, cli, monkeypatch):
    monkeypatch.setenv("CI", "false")
    r = cli("check", "--no-cache", "--output-format", "json", "missing_key.j2", cwd=workspace)
    assert json.loads(r.out)["errors"][0]["code"] == "E004"


def test_untrusted_outside_git_says_so_once(tmp_path, cli):
    (tmp_path / "promptlint.toml").write_text(f'tokenizer = "{QWEN}"\n', encoding="utf-8")
    (tmp_path / "t.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    r = cli("check", "--no-cache", "--untrusted", "t.j2", cwd=tmp_path)
    assert r.code == 0 and r.err.count("is not in a git work tree") == 1, r.err


# ---------------------------------------------------------------- configuration tables


@pytest.mark.parametrize("key", ["cache-minimums", "price-table"])
@pytest.mark.parametrize("where", ["outside", "link"])
def test_a_configuration_table_outside_the_project_is_refused_unread(tmp_path, cli, key, where):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({CANARY: {"models": {}}}), encoding="utf-8")
    proj = tmp_path / "proj"
    proj.mkdir()
    target = "../secret.json"
    if where == "link":
        os.symlink(secret, proj / "table.json")
        target = "table.json"
    config = (f'cache-minimums = "{target}"\n' if key == "cache-minimums" else
              f'[cost]\nrequests-per-day = 1000\nprovider = "openai"\nmodel = "gpt-4.1"\nprice-table = "{target}"\n')
    (proj / "promptlint.toml").write_text(config, encoding="utf-8")
    (proj / "t.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    r = cli("check", "--no-cache", "t.j2", cwd=proj)
    assert r.code == 2, (r.out, r.err)
    assert f"`{'cost.' if key == 'price-table' else ''}{key}` names a file outside the project" in r.err, r.err
    _no_canary(r.out, r.err)


def test_a_configuration_table_inside_the_project_still_works(tmp_path, cli):
    (tmp_path / "minimums.json").write_text(json.dumps({"openai": {"models": {"my-model": 2048}}}), encoding="utf-8")
    (tmp_path / "promptlint.toml").write_text('cache-minimums = "minimums.json"\n', encoding="utf-8")
    (tmp_path / "t.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    assert cli("check", "--no-cache", "t.j2", cwd=tmp_path).code == 0


# ---------------------------------------------------------------- family 6: lines CI interprets

PWNED = "\n::error::pwned"
# a workflow command as the github reporter writes it: properties and data %-escaped, one line
WELL_FORMED = re.compile(
    r"::(error|warning|notice) file=[^:,\r\n]*,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=promptlint \([A-Z]+\d+\)::[^\r\n]*"
)
RUNNER_BREAKS = re.compile("\r\n|[\r\n]")  # .NET's ReadLine, as the runner reads a step's output


def _command_lines(text: str):
    """The lines a runner would read as commands (it splits at CR too, and trims leading whitespace)."""
    return [line.strip() for line in RUNNER_BREAKS.split(text) if line.strip().startswith("::")]


def test_no_output_line_is_a_workflow_command_unless_the_github_reporter_wrote_it(tmp_path, cli):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "promptlint.toml").write_text("", encoding="utf-8")
    # a chat template whose name carries the command: the "no tokenizer_config.json" note names it
    (root / f"c{PWNED}.jinja").write_text("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
                                          encoding="utf-8")
    (root / f"t{PWNED}.j2").write_text("Today is {{ now }}.\nYou are a helpful assistant.\n{{ question }}\n",
                                       encoding="utf-8")
    (root / "inc.j2").write_text("{% include 'x\\n::error::pwned.j2' %}\n", encoding="utf-8")
    # a line separator JSON keeps raw inside a string: no runner splits there, and JSON stays JSON
    (root / "u\u2028::error::pwned.j2").write_text("Today is {{ now }}.\nYou are a helpful assistant.\n", encoding="utf-8")
    for fmt in FORMATS:
        r = cli("check", "--no-cache", "--output-format", fmt, cwd=root)
        assert r.code == 1, (fmt, r.err)
        commands = _command_lines(r.out) + _command_lines(r.err)
        if fmt == "github":
            assert commands and all(WELL_FORMED.fullmatch(c) for c in commands), commands
            assert len(commands) == len(r.out.splitlines()), r.out  # each finding one command, nothing else
        else:
            assert commands == [], (fmt, commands)
        assert "pwned" in r.out + r.err  # the text is there, as data
        if fmt in ("json", "sarif", "gitlab"):
            json.loads(r.out)
        elif fmt == "json-lines":
            [json.loads(line) for line in r.out.split("\n") if line]
    # a configuration value with the command: the exit-2 error is one line
    (root / "promptlint.toml").write_text('tokenizer = "x\\n::error::pwned"\n', encoding="utf-8")
    r = cli("check", "--no-cache", cwd=root)
    assert r.code == 2 and _command_lines(r.err) == [] and len(r.err.strip().splitlines()) == 1, r.err


def test_the_line_guard_neutralises_every_line_that_reads_as_a_command():
    import io

    from promptlint.doors.line_guard import LineGuard

    raw = io.StringIO()
    g = LineGuard(raw)
    g.write("ok\n::error::a\r  ::warning::b\r\n##vso[task.setvariable]c\n")
    g.write(":")  # a line start that is not decided yet...
    g.flush()
    g.write(":notice::d\n")  # ...until the rest arrives
    g.write_command("::notice file=x,line=1::deliberate")
    g.write("plain :: text\n")
    g.write_command("::error file=y::data\n::error::smuggled")  # past a line break, data again
    g.finish_line()
    assert raw.getvalue() == (
        "ok\n\\::error::a\r\\  ::warning::b\r\n\\##vso[task.setvariable]c\n\\::notice::d\n"
        "::notice file=x,line=1::deliberate\nplain :: text\n::error file=y::data\n\\::error::smuggled\n"
    )


# ---------------------------------------------------------------- markdown


def test_markdown_mentions_nobody(workspace, cli):
    (workspace / "mention.j2").write_text("{{ raise_exception('ping @org/team and @user about #12') }}\n",
                                          encoding="utf-8")
    r = cli("check", "--no-cache", "--template-env", "transformers", "--output-format", "markdown", "mention.j2",
            cwd=workspace)
    assert "org/team" in r.out, r.out
    assert re.search(r"@[A-Za-z0-9]", r.out) is None and re.search(r"#\d", r.out) is None, r.out
    assert "@\u2060org/team" in r.out and "@\u2060user" in r.out


def test_markdown_stays_under_a_mebibyte_and_counts_what_it_left_out():
    import io

    from promptlint.analysis.kernel import finding
    from promptlint.base.records import ReportContext, Result
    from promptlint.report import markdown

    n = 6000
    findings = [finding("E002", f"prompts/t{i:05}.j2", "render failed: " + "x" * 300, 1) for i in range(n)]
    out = io.StringIO()
    markdown.write(Result(errors=findings, files=n), ReportContext(cwd=Path.cwd(), git_root=Path.cwd()), out)
    text = out.getvalue()
    assert len(text.encode("utf-8")) < 1024 * 1024
    shown = len(re.findall(r"^\| \[`E002`\]\(docs/rules/E002\.md\) ", text, flags=re.M))
    assert 0 < shown < n
    last = text.rstrip("\n").splitlines()[-1]
    assert last.startswith(f"**{n - shown:,} more findings** not shown"), last
    assert text.count("<details>") == text.count("</details>")


def test_reporters_open_no_file():
    import ast

    import promptlint.report as report

    for path in Path(report.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(tree)
                 if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}
        assert not calls & {"open", "read_text", "read_bytes", "fdopen"}, (path.name, calls & {"open", "read_text"})


def test_a_computed_name_is_identified_without_being_invertible(tmp_path, cli):
    # one character of a file per template: a plain sha256 of each would be a lookup away
    (tmp_path / "promptlint.toml").write_text(f'tokenizer = "{QWEN}"\n', encoding="utf-8")
    (tmp_path / ".env").write_text("Q", encoding="utf-8")
    for name in ("a.j2", "b.j2"):
        (tmp_path / name).write_text(READ + "{{ {}[s[0]] }}\n", encoding="utf-8")
    found = _reported(cli("check", "--no-cache", "--output-format", "json", cwd=tmp_path).out)
    ids = {re.search(r"a computed name \(1 characters, id ([0-9a-f]{8})\)", found[n]["message"]).group(1)
           for n in ("a.j2", "b.j2")}
    import hashlib

    assert len(ids) == 1 and ids != {hashlib.sha256(b"Q").hexdigest()[:8]}, ids  # one text, one id; not sha256


def test_a_tracked_link_to_an_untracked_file_reads_nothing(workspace, cli):
    os.symlink(".env", workspace / "env_link.j2")
    (workspace / "via_link.j2").write_text("{% include 'env_link.j2' %}\n", encoding="utf-8")
    _git(workspace, "add", "env_link.j2", "via_link.j2")
    _git(workspace, "commit", "-qm", "a link")
    r = cli("check", "--no-cache", "--untrusted", "--output-format", "json", "via_link.j2", cwd=workspace)
    _no_canary(r.out, r.err)
    (e,) = json.loads(r.out)["errors"]
    assert e["code"] == "E002" and "not tracked by git" in e["message"], e


def test_untrusted_mode_fails_closed_where_git_cannot_list_the_files(tmp_path, cli):
    (tmp_path / ".git").mkdir()  # a work tree git cannot read: never "no limit"
    (tmp_path / "promptlint.toml").write_text("", encoding="utf-8")
    (tmp_path / "t.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    r = cli("check", "--no-cache", "--untrusted", "t.j2", cwd=tmp_path)
    assert r.code == 2 and "git cannot list them" in r.err and len(r.err.strip().splitlines()) == 1, r.err


def test_in_ci_a_configuration_table_must_be_tracked(workspace, cli, monkeypatch):
    (workspace / "promptlint.toml").write_text(f'tokenizer = "{QWEN}"\ncache-minimums = "written.json"\n',
                                               encoding="utf-8")
    _git(workspace, "commit", "-qam", "a table CI writes")
    (workspace / "written.json").write_text(json.dumps({CANARY: {"models": {}}}), encoding="utf-8")
    monkeypatch.setenv("CI", "true")
    r = cli("check", "--no-cache", "tracked.j2", cwd=workspace)
    assert r.code == 2 and "cache-minimums" in r.err and "not tracked by git" in r.err, r.err
    _no_canary(r.out, r.err)


def test_a_chat_template_cannot_raise_a_samples_file_value_into_the_output(workspace, cli, monkeypatch):
    (workspace / "chat.jinja").write_text(
        '{{ raise_exception(messages[0]["content"]) }}{% for m in messages %}{{ m.role }}{{ m.content }}{% endfor %}',
        encoding="utf-8")
    _git(workspace, "add", "chat.jinja")
    _git(workspace, "commit", "-qm", "a chat template")
    # the conversation comes from a samples file CI wrote beside it
    (workspace / "chat.samples.toml").write_text(f'[[messages]]\nrole = "user"\ncontent = "{CANARY}"\n',
                                                 encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "json", "chat.jinja", cwd=workspace)
    _no_canary(r.out, r.err)
    (e,) = json.loads(r.out)["errors"]
    assert e["message"].startswith(f"render failed: a computed message ({len(CANARY)} characters"), e
    monkeypatch.setenv("CI", "true")  # in CI the untracked samples file is not read at all
    r = cli("check", "--no-cache", "--output-format", "json", "chat.jinja", cwd=workspace)
    _no_canary(r.out, r.err)
    assert f"({len(CANARY)} characters" not in r.out, r.out
