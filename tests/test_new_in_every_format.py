"""New vs existing in every format (`check --baseline`): a real two-commit git repository where
the second commit keeps one finding, adds one and deletes a file that had a third. Every format
must say which finding is new; GitHub annotations default to the new one; SARIF validates with a
`baselineState` on each result; the markdown report has fix lines, rule links, code spans and
the tokenizer's whole label; rdjson's byte columns are computed here from the template text."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import QWEN

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")

DATA = Path(__file__).parent / "data"
RULES = "\n".join(f"{i}. Always be helpful and polite; this is rule number {i} of the support policy." for i in range(1, 15))
# a.j2: the clock before the shared prompt, at both commits (the existing finding)
STAMPED = "Time: {{ timestamp }}\n" + RULES + "\nQuestion: {{ question }}\n"
STAMP_SAMPLES = """[variables]
timestamp = { value = "2024-05-01T10:00:00Z", kind = "volatile", sub-kind = "timestamp", variant = "2024-05-01T10:00:07Z" }
question = { value = "Where is my order?", kind = "per-request", variant = "Can I return a tent?" }
"""
# b.j2: clean at the base; the second commit puts a request id first, after non-ASCII text
# (so code-point and UTF-8 byte columns differ): the new finding
CLEAN = "Politique «commandes» pour `orders`:\n" + RULES + "\nQuestion: {{ question }}\n"
NEW_LINE = "Requête «Nº» {{ request_id }} pour `orders`:"
REGRESSED = NEW_LINE + "\n" + RULES + "\nQuestion: {{ question }}\n"
# c.j2: a finding at the base only (the file is deleted): fixed since
GONE = "Id: {{ request_id }}\n" + RULES + "\nQuestion: {{ question }}\n"


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env).stdout


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "prompts").mkdir(parents=True)
    shutil.copy(QWEN, root / "tokenizer.json")
    (root / "promptlint.toml").write_text('tokenizer = "tokenizer.json"\n', encoding="utf-8")
    (root / "prompts" / "a.j2").write_text(STAMPED, encoding="utf-8")
    (root / "prompts" / "a.samples.toml").write_text(STAMP_SAMPLES, encoding="utf-8")
    (root / "prompts" / "b.j2").write_text(CLEAN, encoding="utf-8")
    (root / "prompts" / "c.j2").write_text(GONE, encoding="utf-8")
    git(root, "init", "-q")
    commit(root, "base")
    (root / "prompts" / "b.j2").write_text(REGRESSED, encoding="utf-8")
    (root / "prompts" / "c.j2").unlink()
    commit(root, "a request id first")
    return root


@pytest.fixture
def check(cli, monkeypatch):
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)

    def run(root: Path, fmt: str, *args: str):
        return cli("check", "--no-cache", "--baseline", "HEAD~1", "--output-format", fmt, *args, cwd=root)

    return run


def _span(text: str, line_text: str, needle: str):
    """(line, first code-point column, end column) of ``needle`` on the line ``line_text`` of ``text``."""
    line = text.splitlines().index(line_text) + 1
    start = line_text.index(needle) + 1
    return line, start, start + len(needle)


NEW = ("prompts/b.j2",) + _span(REGRESSED, NEW_LINE, "{{ request_id }}")
OLD = ("prompts/a.j2",) + _span(STAMPED, "Time: {{ timestamp }}", "{{ timestamp }}")


def test_the_premise_one_new_one_existing_one_fixed_and_a_regression(repo, check):
    r = check(repo, "json")
    assert r.code == 1, r.err  # b.j2 lost its blocks per request: --fail-on regression
    doc = r.json()
    marks = {(f["path"], f["line"], f["column"], f["end_column"]): f["baseline"] for f in doc["findings"] + doc["errors"]}
    assert marks == {NEW: "new", OLD: "existing"}
    assert doc["baseline"]["findings"] == {"new": 1, "existing": 1, "fixed": 1}
    assert [t["status"] for t in doc["baseline"]["templates"] if t["path"] == "prompts/b.j2"] == ["regression"]


def test_full_and_concise_mark_the_new_finding_and_say_why_the_run_fails(repo, check):
    for fmt in ("full", "concise"):
        r = check(repo, fmt)
        assert r.code == 1, r.err
        heads = [l for l in r.out.splitlines() if re.match(r"prompts/[abc]\.j2:\d+:\d+: ", l)]
        assert [l.split(" ", 2)[:2] for l in heads] == [[f"{OLD[0]}:{OLD[1]}:{OLD[2]}:", "M101"],
                                                        [f"{NEW[0]}:{NEW[1]}:{NEW[2]}:", "M101"]], fmt
        assert heads[1].startswith(f"{NEW[0]}:{NEW[1]}:{NEW[2]}: M101 [new] "), fmt
        assert "[new]" not in heads[0], fmt
        assert re.search(r"^  prompts/b\.j2 \[base\]: \d+ -> \d+ blocks per request, regression; ", r.out, re.M), fmt
        assert "Findings against the baseline HEAD~1" in r.out and ": 1 new, 1 existing, 1 fixed." in r.out, fmt


def test_github_annotates_only_the_new_finding_by_default_and_says_why_the_step_fails(repo, check):
    r = check(repo, "github")
    assert r.code == 1, r.err
    commands = [l for l in r.out.splitlines() if l.startswith("::")]
    path, line, column, end = NEW
    assert commands == [l for l in commands if l.startswith(
        f"::warning file={path},line={line},col={column},endLine={line},endColumn={end},title=promptlint (M101%2C new)::M101 [new] ")]
    assert len(commands) == 1
    plain = [l for l in r.out.splitlines() if not l.startswith("::")]
    [row] = [t for t in check(repo, "json").json()["baseline"]["templates"] if t["path"] == "prompts/b.j2"]
    before, after = row["before"]["eligible_blocks"], row["after"]["eligible_blocks"]
    assert f"  prompts/b.j2 [base]: {before} -> {after} blocks per request, regression; " \
           f"{(before - after) * 16} prefill tokens lost per request" in plain
    assert "1 existing finding not annotated (--annotate all annotates them)." in plain


def test_github_annotate_all_brings_back_the_existing_finding_marked_existing(repo, check):
    r = check(repo, "github", "--annotate", "all")
    assert r.code == 1, r.err
    titles = sorted(re.search(r"file=([^,]+),.*title=([^:]+)::", l).groups() for l in r.out.splitlines() if l.startswith("::"))
    assert titles == [("prompts/a.j2", "promptlint (M101%2C existing)"), ("prompts/b.j2", "promptlint (M101%2C new)")]
    assert "not annotated" not in r.out


def test_annotate_new_without_a_baseline_is_a_usage_error(repo, cli):
    r = cli("check", "--no-cache", "--output-format", "github", "--annotate", "new", cwd=repo)
    assert r.code == 2 and "--annotate new" in r.err and "--baseline" in r.err


def test_sarif_validates_and_every_result_has_its_baseline_state(repo, check):
    jsonschema = pytest.importorskip("jsonschema")
    r = check(repo, "sarif")
    assert r.code == 1, r.err
    doc = json.loads(r.out)
    schema = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(doc)
    run = doc["runs"][0]
    states = {}
    for res in run["results"]:
        region = res["locations"][0]["physicalLocation"]["region"]
        where = (res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], region["startLine"],
                 region["startColumn"], region["endColumn"])
        states[where] = res["baselineState"]
    assert states == {NEW: "new", OLD: "unchanged"}
    assert run["properties"]["baseline"] == {"ref": "HEAD~1", "commit": git(repo, "rev-parse", "HEAD~1").strip(),
                                             "new": 1, "unchanged": 1, "fixed": 1}
    for rule in run["tool"]["driver"]["rules"]:  # help for every rule; no relative helpUri (GitHub refuses it)
        assert rule["help"]["text"] and rule["help"]["markdown"].endswith(
            f"Documentation: docs/rules/{rule['id']}.md (`promptlint rule {rule['id']}` prints it).\n")
        assert "helpUri" not in rule


def test_one_link_form_every_format_follows_an_absolute_docs_url(repo, check, monkeypatch):
    from urllib.parse import urlsplit

    from promptlint.base import registry

    monkeypatch.setattr(registry, "DOCS_URL", "https://docs.example.org/promptlint/rules/{code}.html")
    doc = json.loads(check(repo, "sarif").out)
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert rules and all(r["helpUri"] == f"https://docs.example.org/promptlint/rules/{r['id']}.html" for r in rules)
    assert all(urlsplit(r["helpUri"]).scheme == "https" for r in rules)
    rd = json.loads(check(repo, "rdjson").out)
    assert {d["code"]["url"] for d in rd["diagnostics"]} == {"https://docs.example.org/promptlint/rules/M101.html"}
    assert "[`M101`](https://docs.example.org/promptlint/rules/M101.html)" in check(repo, "markdown").out


def _finding_rows(markdown: str):
    return {row.split(" | ")[1]: row for row in markdown.splitlines() if row.startswith("| [`M101`]")}


def test_markdown_has_fix_lines_rule_links_code_spans_and_the_new_mark(repo, check):
    r = check(repo, "markdown")
    assert r.code == 1, r.err
    rows = _finding_rows(r.out)
    new_at, old_at = f"`{NEW[0]}:{NEW[1]}:{NEW[2]}`", f"`{OLD[0]}:{OLD[1]}:{OLD[2]}`"
    assert set(rows) == {new_at, old_at}
    new, old = rows[new_at], rows[old_at]
    assert new.startswith("| [`M101`](docs/rules/M101.md) | ") and new.endswith(" | **new** |")
    assert old.endswith(" | existing |")
    # the message's code spans are code spans, never escaped backticks shown literally
    assert "| `request_id` changes on every request and precedes the shared prompt: " in new
    assert "\\`" not in r.out
    # the fix line: the rule's advice for this finding, and the command that applies its fix
    assert "| move `request_id` after the shared material; unsafe fix: `promptlint check --fix --unsafe-fixes` |" in new
    assert "| Rule | Where | Message | Fix | First divergent token | Blocks lost | Baseline |" in r.out
    assert "### 2 findings (1 new)" in r.out
    # the Action's default: only the new finding is annotated, and the report says so
    assert "1 existing finding above has no annotation: with a baseline only new findings are annotated" in r.out
    assert "existing finding above" not in check(repo, "markdown", "--annotate", "all").out


def test_json_lines_and_gitlab_mark_the_new_finding(repo, check):
    rows = [json.loads(l) for l in check(repo, "json-lines").out.splitlines()]
    assert {(f["path"], f["line"], f["column"], f["end_column"]): f["baseline"] for f in rows} == {NEW: "new", OLD: "existing"}
    issues = json.loads(check(repo, "gitlab").out)
    marked = {(i["location"]["path"], i["location"]["positions"]["begin"]["column"]): i["description"] for i in issues}
    assert marked[NEW[0], NEW[2]].startswith("M101 [new] `request_id` changes")
    assert marked[OLD[0], OLD[2]].startswith("M101 `timestamp` changes")


def test_markdown_names_the_embedded_tokenizer_in_full_cold_and_warm(tmp_path, cli):
    (tmp_path / "a.j2").write_text(STAMPED, encoding="utf-8")
    (tmp_path / "a.samples.toml").write_text(STAMP_SAMPLES, encoding="utf-8")
    from promptlint.tokenization.tokens import EMBEDDED_NAME, embedded_sha256

    cold = cli("check", "--output-format", "markdown", "a.j2", cwd=tmp_path)
    warm = cli("check", "--output-format", "markdown", "a.j2", cwd=tmp_path)  # from the result cache
    assert cold.code == warm.code == 1, cold.err + warm.err
    assert f"; tokenizer `{EMBEDDED_NAME}` (`{embedded_sha256()[:12]}`).\n" in cold.out
    assert f"; tokenizer `{EMBEDDED_NAME}`.\n" in warm.out  # a warm run does not load it: the name alone


def test_rdjson_has_each_findings_exact_byte_range_and_marks_the_new_one(repo, check):
    r = check(repo, "rdjson")
    assert r.code == 1, r.err
    doc = json.loads(r.out)
    assert doc["source"] == {"name": "promptlint"}
    got = {(d["location"]["path"], d["location"]["range"]["start"]["line"], d["location"]["range"]["start"]["column"],
            d["location"]["range"]["end"]["column"]): d for d in doc["diagnostics"]}

    def byte_range(text, line_text, needle):  # reviewdog's columns: UTF-8 bytes, 1-based, end exclusive
        line = text.splitlines().index(line_text) + 1
        before = line_text[: line_text.index(needle)].encode("utf-8")
        return line, len(before) + 1, len(before) + len(needle.encode("utf-8")) + 1

    new_key = ("prompts/b.j2",) + byte_range(REGRESSED, NEW_LINE, "{{ request_id }}")
    old_key = ("prompts/a.j2",) + byte_range(STAMPED, "Time: {{ timestamp }}", "{{ timestamp }}")
    assert new_key[2] > NEW[2]  # the premise: non-ASCII text before it moves the byte column
    assert set(got) == {new_key, old_key}
    assert got[new_key]["message"].startswith("[new] `request_id` changes on every request")
    assert not got[old_key]["message"].startswith("[new]")
    assert all(d["severity"] == "WARNING" and d["code"] == {"value": "M101", "url": "docs/rules/M101.md"}
               for d in got.values())


def test_rdjson_report_file_is_the_same_document(repo, check):
    out = repo.parent / "out"
    out.mkdir()
    r = check(repo, "concise", "--report-file", f"rdjson={out / 'promptlint.rdjson'}")
    assert r.code == 1, r.err
    written = json.loads((out / "promptlint.rdjson").read_text(encoding="utf-8"))
    assert written == json.loads(check(repo, "rdjson").out)


def test_a_messages_code_spans_cannot_break_the_table_or_inject_markup():
    markdown_it = pytest.importorskip("markdown_it")
    from promptlint.report.markdown import prose

    hostile = "`a|b <img src=x>` then <b>bold</b> @user #12 `x``y` and `@org/team` `unclosed | end"
    row = f"| head |\n| --- |\n| {prose(hostile)} |\n"
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(row)
    [cell] = [t for t in tokens if t.type == "inline"][1:]  # one cell: no pipe escaped the span
    kinds = [c.type for c in cell.children]
    assert "html_inline" not in kinds
    spans = [c.content for c in cell.children if c.type == "code_inline"]
    assert spans == ["a|b <img src=x>", "x``y", "@org/team"]
    plain = "".join(c.content for c in cell.children if c.type == "text")
    # outside code spans: no mention, no issue reference, the tag and the stray backtick as text
    assert "@\u2060user" in plain and "#\u206012" in plain and "<b>bold</b>" in plain and "`unclosed | end" in plain


def test_rdjson_byte_columns_on_a_long_line_cut_around_the_finding(tmp_path, cli):
    # 300 non-ASCII characters before the variable: the finding keeps only ~160 characters of
    # the line around it, and the byte column must still count every byte before it
    line = "Contexte: " + "é€" * 150 + " {{ request_id }} fin."
    template = line + "\n" + RULES + "\nQuestion: {{ question }}\n"
    (tmp_path / "long.j2").write_text(template, encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "rdjson", "long.j2", cwd=tmp_path)
    assert r.code == 1, r.err
    [d] = [d for d in json.loads(r.out)["diagnostics"] if d["code"]["value"] == "M101"]
    before = line[: line.index("{{ request_id }}")].encode("utf-8")
    assert len(line) > 300 and len(before) > 2 * len(line[: line.index("{{")])  # the premise: bytes differ a lot
    assert d["location"]["range"] == {"start": {"line": 1, "column": len(before) + 1},
                                      "end": {"line": 1, "column": len(before) + len(b"{{ request_id }}") + 1}}
