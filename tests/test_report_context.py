"""Reporters see the result and a ReportContext, nothing else; a new output format is one file.

- The CI root a format reports paths against (GITHUB_WORKSPACE for github and sarif,
  CI_PROJECT_DIR for gitlab), the working directory and colour come from the context the front
  end builds (commands/report_context.py); a reporter given a context ignores the environment.
- The report package finds its formats: a module declaring ``FORMAT``/``KIND`` and ``write`` is an
  output format of ``check`` (``--output-format``, ``--report-file``) with no other file edited.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import QWEN, REPO


def _result(path: str):
    from promptlint.analysis.kernel import finding
    from promptlint.base.records import Result

    return Result(findings=[finding("M101", path, "`now` changes on every request", 1, 15, 1, 24, variable="now")], files=1)


def test_paths_follow_the_context_not_the_environment(tmp_path, monkeypatch):
    from promptlint.base.records import ReportContext
    from promptlint.report import get

    work = tmp_path / "ws"
    work.mkdir()
    result = _result(str(work / "prompts" / "a.j2"))
    context = ReportContext(cwd=tmp_path, git_root=tmp_path, ci_roots={"GITHUB_WORKSPACE": work})
    # the process says otherwise: a reporter that asked it would report these roots
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("FORCE_COLOR", "1")

    out = io.StringIO()
    get("github").write(result, context, out)
    assert out.getvalue().startswith("::warning file=prompts/a.j2,line=1,col=15,"), out.getvalue()
    out = io.StringIO()
    get("sarif").write(result, context, out)
    run = json.loads(out.getvalue())["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == work.resolve().as_uri() + "/"
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "prompts/a.j2"
    out = io.StringIO()
    get("gitlab").write(result, context, out)  # no CI_PROJECT_DIR in the context: the git work tree
    assert json.loads(out.getvalue())[0]["location"]["path"] == "ws/prompts/a.j2"
    out = io.StringIO()
    get("full").write(result, context, out)  # colour is the context's (off), not FORCE_COLOR's
    assert "\x1b[" not in out.getvalue() and "prompts/a.j2:1:15:" in out.getvalue()


def test_the_front_end_reads_the_process_once(tmp_path):
    from promptlint.commands.report_context import from_process

    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "sub").mkdir()
    context = from_process(io.StringIO(), annotate="new", evidence=True, cwd=tmp_path / "repo" / "sub",
                           environ={"CI_PROJECT_DIR": str(tmp_path / "ci"), "GITHUB_WORKSPACE": "", "FORCE_COLOR": "1"})
    assert context.git_root == (tmp_path / "repo").resolve()
    assert context.root("CI_PROJECT_DIR") == (tmp_path / "ci").resolve()
    assert context.root("GITHUB_WORKSPACE") == (tmp_path / "repo").resolve()  # set but empty: not a root
    assert context.color and context.annotate == "new" and context.evidence
    assert not from_process(io.StringIO(), environ={"NO_COLOR": "1", "FORCE_COLOR": "1"}, cwd=tmp_path).color


def test_the_formats_are_the_modules_that_declare_one():
    import importlib
    import pkgutil

    import promptlint.report as report

    declared = {}
    for info in pkgutil.iter_modules(report.__path__):
        module = importlib.import_module(f"promptlint.report.{info.name}")
        if hasattr(module, "FORMAT"):
            declared[module.FORMAT] = module.__name__
    assert report.formats() == declared
    assert list(report.formats())[0] == report.DEFAULT == "full"
    assert {"full", "concise", "json", "json-lines", "github", "gitlab", "sarif", "markdown", "rdjson"} <= set(declared)
    assert {report.kind(name) for name in declared} <= set(report.KINDS)


TSV = '''"""`tsv`: one tab-separated line per finding (a format added by one file)."""

from promptlint.base.records import ReportContext, Result

FORMAT = "tsv"
KIND = "text"


def write(result: Result, context: ReportContext, stream) -> None:
    for f in sorted(result.errors + result.findings, key=lambda f: f.sort_key):
        stream.write(f"{f.code}\\t{f.path}\\t{f.line}\\t{f.column}\\n")
'''


def copy_checkout(dest: Path) -> Path:
    """promptlint's package and rule files under ``dest`` (a checkout to add a file to)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(Path(__import__("promptlint").__file__).parent, dest / "promptlint", ignore=ignore)
    shutil.copytree(REPO / "rules", dest / "rules", ignore=ignore)
    return dest


def run_copy(checkout: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTLINT_", "GITHUB_", "CI_"))}
    env.update(PYTHONPATH=str(checkout), NO_COLOR="1", PROMPTLINT_NO_PROGRESS="1")
    env["PROMPTLINT_FAST_TOKENIZER_DIR"] = os.environ["PROMPTLINT_FAST_TOKENIZER_DIR"]  # the session's proven forms (conftest)
    return subprocess.run([sys.executable, "-m", "promptlint", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_new_output_format_is_one_file(tmp_path):
    checkout = copy_checkout(tmp_path / "checkout")
    (checkout / "promptlint" / "report" / "tsv.py").write_text(TSV, encoding="utf-8")  # the one file
    work = tmp_path / "work"
    work.mkdir()
    (work / "t.j2").write_text("Time: {{ now }}\n" + "You are the support agent of the Acme shop. " * 20
                               + "\nQ: {{ question }}\n", encoding="utf-8")
    r = run_copy(checkout, work, "check", "--tokenizer", str(QWEN), "--no-cache", "--output-format", "tsv",
                 "--report-file", "tsv=report.tsv", "t.j2")
    assert r.returncode == 1, r.stderr
    assert r.stdout == "M101\tt.j2\t1\t7\n"  # `{{ now }}` starts at column 7 of line 1
    assert (work / "report.tsv").read_text(encoding="utf-8") == r.stdout
    assert "tsv" in run_copy(checkout, work, "check", "--help").stdout
