"""How findings name a file is resolved once per run (analysis.kernel.Context.display): a file is
named for each scenario and each finding, and resolving its path (realpath) each time was ~2% of a
cold run. The name is the one display_path gives."""

from __future__ import annotations

import os.path

from promptlint.analysis import kernel
from promptlint.base.paths import display_path
from promptlint.project.config import Settings


def test_a_file_is_resolved_once_per_run(tmp_path, monkeypatch):
    (tmp_path / "p").mkdir()
    target = tmp_path / "p" / "a.j2"
    target.write_text("hi\n", encoding="utf-8")
    settings = Settings(base=tmp_path)
    ctx = kernel.Context(settings, lambda: None, lambda code: True)
    want = display_path(target, tmp_path)
    calls = []
    real = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    assert [ctx.display(target) for _ in range(5)] == ["p/a.j2"] * 5 == [want] * 5
    assert [str(c) for c in calls].count(str(target)) == 1
    other = kernel.Context(settings, lambda: None, lambda code: True)  # another run resolves again
    assert other.display(target) == "p/a.j2" and [str(c) for c in calls].count(str(target)) == 2
