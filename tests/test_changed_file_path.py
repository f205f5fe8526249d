"""What a check does after one Python module of a project changed, in a resident process (the
daemon's and the language server's path, ``check_in_memory``): it analyses the changed module and
the modules that import it (their manifest records name it as a dependency) and nothing else; the
other files are answered from the manifest by a stat, each directory resolved and listed once, not
each file; `check -- FILE` (what pre-commit passes) never walks the project. The results are the
ones a run without any cache gives.

Work is counted through the functions that do it (wrapped, the real ones still run); no timing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from promptlint.analysis import kernel  # noqa: F401 - loaded before the driver's module is patched
from promptlint.base import paths
from promptlint.base.paths import safe_resolve
from promptlint.driver import lint as driver

QWEN = Path(__file__).parent / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"
POLICY = json.dumps("You are the support agent of Nordwind Outdoor. Never invent order numbers. " * 8)
CLIENTS = 6  # client_0..client_5; client_j imports agent_(j % 2)


def make_project(root: Path) -> None:
    """Two prompt modules (the time at the head of the system message), an agent class importing each,
    clients importing the agents, and modules that import nothing."""
    (root / "pyproject.toml").write_text(f"[tool.promptlint]\ntokenizer = {json.dumps(str(QWEN))}\n", encoding="utf-8")
    app = root / "app"
    app.mkdir()
    (app / "__init__.py").write_text("", encoding="utf-8")
    for i in range(2):
        (app / f"prompts_{i}.py").write_text(
            f"from datetime import datetime\n\nPOLICY_{i} = {POLICY}\n\n\n"
            f"def build_system_{i}(user):\n"
            f"    return [{{\"role\": \"system\", \"content\": f\"Time: {{datetime.now()}}\\n\" + POLICY_{i}}}]\n",
            encoding="utf-8")
        (app / f"agent_{i}.py").write_text(
            f"from app.prompts_{i} import build_system_{i}\n\n\nclass Agent{i}:\n"
            f"    def __init__(self, client, model=\"gpt-4o\"):\n        self.client = client\n        self.model = model\n\n"
            f"    def messages(self, question):\n        msgs = build_system_{i}(\"u\")\n"
            f"        msgs.append({{\"role\": \"user\", \"content\": question}})\n        return msgs\n",
            encoding="utf-8")
    for j in range(CLIENTS):
        (app / f"client_{j}.py").write_text(
            f"from openai import OpenAI\n\nfrom app.agent_{j % 2} import Agent{j % 2}\n\nclient = OpenAI()\nagent = Agent{j % 2}(client)\n\n\n"
            f"def answer(question):\n    return client.chat.completions.create(model=agent.model, messages=agent.messages(question))\n",
            encoding="utf-8")
    for k in range(3):
        (app / f"static_{k}.py").write_text(
            f"from openai import OpenAI\n\nclient = OpenAI()\nPOLICY = {POLICY}\n\n\n"
            f"def answer(question):\n    return client.chat.completions.create(model=\"gpt-4o\", messages=["
            f"{{\"role\": \"system\", \"content\": POLICY}}, {{\"role\": \"user\", \"content\": question}}])\n",
            encoding="utf-8")
    age(*app.iterdir())


def age(*files, seconds=10):
    """Stamps older than the manifest's racy window: the files were not edited just now."""
    for f in files:
        st = os.stat(f)
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9))


def analysed(monkeypatch):
    """The files the driver analyses from now on (the analyzers' entry point, wrapped)."""
    names = []
    real = driver.lint_file

    def counting(path, ctx, text=None):
        names.append(Path(path).name)
        return real(path, ctx, text)

    monkeypatch.setattr(driver, "lint_file", counting)
    return names


def change(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")


def test_a_changed_module_reanalyses_exactly_its_importers(tmp_path, check_in_memory, cli, monkeypatch):
    make_project(tmp_path)
    check_in_memory(cwd=tmp_path)  # the manifest and the cache hold every file
    names = analysed(monkeypatch)
    warm = check_in_memory("--output-format", "json", cwd=tmp_path)
    assert names == []  # nothing changed: every file answered from the manifest
    change(tmp_path / "app" / "prompts_1.py")
    after = check_in_memory("--output-format", "json", cwd=tmp_path)
    # prompts_1, the agent importing it and the clients importing that agent (j % 2 == 1: 1, 3, 5)
    assert sorted(names) == ["agent_1.py", "client_1.py", "client_3.py", "client_5.py", "prompts_1.py"]
    cold = cli("check", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert (after.code, after.out) == (cold.code, cold.out)
    assert json.loads(after.out)["findings"] == json.loads(warm.out)["findings"]  # a comment changes no finding


def test_check_of_one_file_does_not_walk_the_project(tmp_path, check_in_memory, monkeypatch):
    from promptlint import analyzers

    make_project(tmp_path)
    check_in_memory(cwd=tmp_path)
    walked = []
    real = analyzers.walk_takes
    monkeypatch.setattr(analyzers, "walk_takes", lambda p: walked.append(p) or real(p))
    names = analysed(monkeypatch)
    change(tmp_path / "app" / "prompts_0.py")
    r = check_in_memory("--output-format", "json", "--", "app/prompts_0.py", cwd=tmp_path)
    assert (walked, names) == ([], ["prompts_0.py"])
    assert {f["path"] for f in json.loads(r.out)["findings"]} == {"app/prompts_0.py"}


def test_a_warm_check_resolves_each_directory_once_not_each_file(tmp_path, check_in_memory, monkeypatch):
    make_project(tmp_path)
    check_in_memory(cwd=tmp_path)
    files = len(list((tmp_path / "app").glob("*.py"))) - 1  # __init__.py has no marker: the walk does not take it
    assert files == 2 + 2 + CLIENTS + 3
    resolved = []
    monkeypatch.setattr(paths, "safe_resolve", lambda p: resolved.append(str(p)) or safe_resolve(p))
    check_in_memory(cwd=tmp_path)
    # before: every file twice (whether it escapes the root, whether it is VCS metadata): 26 resolves
    assert sorted(set(resolved)) == [str(tmp_path / "app")] and len(resolved) == 1


def test_a_warm_check_stats_no_absent_neighbour(tmp_path, check_in_memory, monkeypatch):
    make_project(tmp_path)
    check_in_memory(cwd=tmp_path)
    absent = []
    real = os.stat

    def counting(p, *a, **k):
        name = os.path.abspath(p) if isinstance(p, (str, Path)) else ""  # the walk's paths are relative to the cwd
        if name.startswith(str(tmp_path)) and not os.path.lexists(name):
            absent.append(name)
        return real(p, *a, **k)

    monkeypatch.setattr(os, "stat", counting)
    check_in_memory(cwd=tmp_path)
    beside = [a for a in absent if os.path.dirname(a) == str(tmp_path / "app")]
    # before: 9 per file (three tokenizer files, six samples-file names) beside each of the 13 files,
    # 117; now none for the neighbourhood (the walk's own question whether app/ is a model directory
    # may stat its tokenizer.json: once per directory)
    assert [a for a in beside if ".samples." in a] == [] and len(beside) <= 1


def test_the_neighbourhood_from_a_listing_is_the_one_from_stats(tmp_path):
    d = tmp_path / "m"
    (d / "chat_templates").mkdir(parents=True)
    for name in ("a.j2", "a.samples.toml", "tokenizer_config.json", "chat_template.samples.json", "b.j2"):
        (d / name).write_text(name, encoding="utf-8")
    (d / "chat_templates" / "tool.jinja").write_text("x", encoding="utf-8")
    (d / "tokenizer.json").symlink_to(tmp_path / "gone")  # dangling: neither way counts it
    listed = {}
    for name in ("a.j2", "b.j2", "chat_templates"):
        assert driver._neighbourhood(d / name, listed) == driver._neighbourhood(d / name)
    assert driver._neighbourhood(d, listed) == driver._neighbourhood(d)
    assert "a.samples.toml:" in driver._neighbourhood(d / "a.j2", listed)
    assert "tool.jinja:" in driver._neighbourhood(d / "a.j2", listed)


@pytest.mark.parametrize("spelling", ["abs", "rel", "dotdot"])
def test_real_paths_resolve_as_safe_resolve(tmp_path, monkeypatch, spelling):
    from promptlint.base.paths import RealPaths

    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "x.py").write_text("", encoding="utf-8")
    root = tmp_path / "root"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("", encoding="utf-8")
    (root / "pkg" / "sub" / "b.py").write_text("", encoding="utf-8")
    (root / "linked").symlink_to(outside / "deep")  # a directory link leaving the root
    (root / "inner").symlink_to(root / "pkg")  # a directory link inside it
    (root / "pkg" / "file_link.py").symlink_to(outside / "deep" / "x.py")
    (root / "pkg" / "dangling.py").symlink_to(root / "nowhere.py")
    (root / "pkg" / "loop.py").symlink_to(root / "pkg" / "loop.py")
    names = ["pkg/a.py", "pkg/sub/b.py", "linked/x.py", "inner/a.py", "inner/sub/b.py", "pkg/file_link.py",
             "pkg/dangling.py", "pkg/loop.py", "pkg/missing.py", "inner/../pkg/a.py", "linked/../root/pkg/a.py", "pkg"]
    monkeypatch.chdir(root)
    real = RealPaths()
    for name in names:
        path = {"abs": str(root / name), "rel": name, "dotdot": os.path.join("..", "root", name)}[spelling]
        assert real.real(path) == str(safe_resolve(Path(path))), path
        assert paths.not_read(Path(path), root, real) == paths.not_read(Path(path), root), path
        assert paths.relative(Path(path), root, real) == paths.relative(Path(path), root), path
