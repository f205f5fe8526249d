"""The harness of the multi-module flow sets (tests/test_project_flow_styles.py and the unseen sets):
write a small project, lint one of its files in process with the pinned tokenizer, and compare each
finding's (rule, file, line) with the case's expectation. One copy, so every set judges alike."""

from __future__ import annotations

import textwrap
from pathlib import Path

from promptlint.driver.lint import lint
from promptlint.project.config import Settings
from test_agent_call_shapes import TOKENIZER


def write(tmp_path, files):
    for name, source in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")


def findings(tmp_path, name):
    report = lint([str(tmp_path / name)], Settings(tokenizer=str(TOKENIZER), root=tmp_path), use_cache=False)
    assert not report.errors, report.errors
    return [(f.code, Path(f.path).relative_to(tmp_path).as_posix(), f.line) for f in report.findings]


def assert_hazard(tmp_path, case):
    """``case`` = (files, the file linted, (rule, file of the finding, a needle on its line)): exactly that finding."""
    files, linted, (code, where, needle) = case
    write(tmp_path, files)
    text = (tmp_path / where).read_text(encoding="utf-8")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if needle in t)
    assert findings(tmp_path, linted) == [(code, where, line)]


def assert_clean(tmp_path, files):
    """Every file of the project, linted, gives nothing."""
    write(tmp_path, files)
    for name in files:
        assert findings(tmp_path, name) == []


def twin(files, edits):
    """The clean twin: the hazard project with only the fix applied (each old text occurs exactly once)."""
    fixed = dict(files)
    for name, pairs in edits.items():
        source = fixed[name]
        for old, new in pairs:
            assert source.count(old) == 1, (name, old)
            source = source.replace(old, new)
        fixed[name] = source
    return fixed
