"""What keeps the project-level flow within the speed budget on packages that never build a prompt
(an SDK's own files): a module with no model call, message, prompt-named text, clock, id or unordered
source is analysed alone, its imports not read; a module with one of them reads what it imports.
The read modules are the analysis's dependencies (``Context.deps``), which is what is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptlint.analysis import kernel
from promptlint.analyzers import python_source
from promptlint.project.config import Settings
from test_project_flow import project

HELPERS = {
    "retry.py": """
        def backoff(attempt):
            return min(2 ** attempt, 30)
        """,
    "client_base.py": """
        from retry import backoff


        class BaseClient:
            def _post(self, path, body, attempt=0):
                return self._send("POST", path, body, timeout=backoff(attempt))
        """,
}


def deps_of(tmp_path, name):
    ctx = kernel.Context(Settings(root=tmp_path), None, lambda code: True)
    path = tmp_path / name
    candidates, error = python_source.scan(path, path.read_text(encoding="utf-8"), name, ctx)
    assert error is None
    return sorted(Path(p).name for p in ctx.deps)


def test_a_module_with_nothing_prompt_related_reads_no_import(tmp_path):
    project(tmp_path, HELPERS)
    assert deps_of(tmp_path, "client_base.py") == []


@pytest.mark.parametrize("line", [
    "stamp = time.time()",
    "msg = {'role': 'system', 'content': 'Be brief.'}",
    "SYSTEM_PROMPT = 'Be brief. ' + str(backoff(1))",
    "names = sorted(set(['a', 'b']))",
])
def test_a_module_with_something_prompt_related_reads_its_imports(tmp_path, line):
    project(tmp_path, HELPERS)
    text = (tmp_path / "client_base.py").read_text(encoding="utf-8")
    (tmp_path / "client_base.py").write_text("import time\n\n" + text.replace("\n\n\nclass", f"\n\n{line}\n\n\nclass"),
                                             encoding="utf-8")
    assert "retry.py" in deps_of(tmp_path, "client_base.py")
