"""`--output-format markdown`: parsed with markdown-it-py (CommonMark + GFM tables, as GitHub and
GitLab render them) and the table cells asserted against figures the test computes itself."""

from __future__ import annotations

import pytest

from conftest import shared_prefix
from test_baseline import CLEAN, QUESTION, STAMP, STAMP_FIRST, blocks_per_request, repo

markdown_it = pytest.importorskip("markdown_it")


def tables(markdown: str):
    """Every table as rows of cell texts (code spans' text included, markup gone)."""
    md = markdown_it.MarkdownIt("commonmark").enable("table")
    out, row, in_table = [], None, False
    for tok in md.parse(markdown):
        if tok.type == "table_open":
            out.append([])
            in_table = True
        elif tok.type == "table_close":
            in_table = False
        elif tok.type == "tr_open" and in_table:
            row = []
        elif tok.type == "tr_close" and in_table:
            out[-1].append(row)
        elif tok.type == "inline" and in_table and row is not None:
            row.append("".join(c.content for c in tok.children if c.type in ("text", "code_inline")))
    return out


def details(markdown: str) -> int:
    md = markdown_it.MarkdownIt("commonmark")
    return sum(tok.content.count("<details>") for tok in md.parse(markdown) if tok.type == "html_block")


def render(stamp: str, question: str, template: str) -> str:
    return template.replace("{{ timestamp }}", stamp).replace("{{ question }}", question)


def test_baseline_table_and_findings_table(tmp_path, cli, qwen):
    root = repo(tmp_path, CLEAN)
    (root / "prompts" / "support.j2").write_text(STAMP_FIRST, encoding="utf-8")
    r = cli("check", "--no-cache", "--baseline", "HEAD", "--output-format", "markdown", cwd=root)
    assert r.code == 1, r.err
    before, after = blocks_per_request(qwen, CLEAN), blocks_per_request(qwen, STAMP_FIRST)
    templates, findings = tables(r.out)
    assert templates[0] == ["Template", "Scenario", "Blocks per request", "Change", "Prefill tokens lost per request", "Status"]
    assert templates[1:] == [["prompts/support.j2", "base", f"{before} → {after}", f"−{before - after}",
                              f"{(before - after) * 16:,}", "🔴 regression"]]
    # the finding's first divergent token: only the timestamp changes (M101's variant)
    a = qwen.encode(render(STAMP[0], QUESTION[0], STAMP_FIRST), add_special_tokens=False)
    b = qwen.encode(render(STAMP[1], QUESTION[0], STAMP_FIRST), add_special_tokens=False)
    index = shared_prefix(a.ids, b.ids)
    token = f"#{index}: {qwen.id_to_token(a.ids[index])!r} vs {qwen.id_to_token(b.ids[index])!r}"
    assert findings[0][:2] == ["Rule", "Where"] and findings[0][-1] == "Baseline"
    [row] = findings[1:]
    assert row[0] == "M101" and row[1] == "prompts/support.j2:1:7" and row[-1] == "new"
    assert row[4] == token
    # the message's `timestamp` is a code span (its backticks are markup, not text shown literally)
    assert row[2].startswith("timestamp changes on every request") and "`" not in row[2]
    assert row[3] == "move timestamp after the shared material, or make it coarser (date, not time); " \
                     "unsafe fix: promptlint check --fix --unsafe-fixes"


def test_more_findings_than_the_top_go_into_details_and_names_cannot_break_the_table(tmp_path, cli):
    root = repo(tmp_path, STAMP_FIRST)
    names = [f"p{i:02d}.j2" for i in range(11)] + ["a|b <i>.j2"]
    for name in names:
        (root / "prompts" / name).write_text(STAMP_FIRST, encoding="utf-8")
        (root / "prompts" / name.replace(".j2", ".samples.toml")).write_text(
            (root / "prompts" / "support.samples.toml").read_text(encoding="utf-8"), encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "markdown", cwd=root)
    assert r.code == 1, r.err
    [top, rest] = tables(r.out)
    assert len(top) - 1 == 10 and len(rest) - 1 == 3  # 13 M101 findings: 10 shown, 3 collapsed
    assert details(r.out) == 1
    wheres = [row[1] for row in top[1:] + rest[1:]]
    assert "prompts/a|b <i>.j2:1:7" in wheres and all(len(row) == 6 for row in top + rest)
    assert "3 findings above have no annotation" in r.out  # 13 warnings, GitHub annotates 10


def test_without_findings_or_baseline(tmp_path, cli):
    root = repo(tmp_path, CLEAN)
    r = cli("check", "--no-cache", "--output-format", "markdown", cwd=root)
    assert r.code == 0 and tables(r.out) == [] and "No findings (1 file checked)." in r.out
