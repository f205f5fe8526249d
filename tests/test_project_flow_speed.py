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


def test_importers_of_one_module_read_it_once_per_run_and_each_depends_on_it(tmp_path, monkeypatch):
    """Three modules of one run import the same prompt module: its file is found, resolved and read
    once (the run's Context.module_reads), and it is still a dependency of each importer's result."""

    (tmp_path / "prompts.py").write_text(
        "from datetime import datetime\n\n\ndef build(user):\n"
        "    return [{'role': 'system', 'content': f'Time: {datetime.now()}'}]\n", encoding="utf-8")
    for i in range(3):
        (tmp_path / f"client_{i}.py").write_text(
            "from openai import OpenAI\n\nfrom prompts import build\n\nclient = OpenAI()\n\n\n"
            "def answer(q):\n    return client.chat.completions.create(model='m', messages=build(q))\n", encoding="utf-8")
    reads = []
    real = kernel.read_source_bytes

    def counting(path, *args, **kwargs):
        reads.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(kernel, "read_source_bytes", counting)
    ctx = kernel.Context(Settings(root=tmp_path), None, lambda code: True)
    for i in range(3):
        ctx.deps = []
        path = tmp_path / f"client_{i}.py"
        candidates, error = python_source.scan(path, path.read_text(encoding="utf-8"), path.name, ctx)
        assert error is None
        assert [Path(p).name for p in ctx.deps] == ["prompts.py"]  # each importer's result depends on it
    assert reads == ["prompts.py"]  # read once for the three
    other = kernel.Context(Settings(root=tmp_path), None, lambda code: True)  # another run reads it afresh
    path = tmp_path / "client_0.py"
    python_source.scan(path, path.read_text(encoding="utf-8"), path.name, other)
    assert reads == ["prompts.py", "prompts.py"]
