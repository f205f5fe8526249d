"""The house rules of the code base (docs/architecture.md), checked on its source.

- Imports run one way: no cycle in the package's import graph (every import at any depth,
  import_module strings and registries' module names included), and none of the forbidden
  edges. A throwaway package shows the checker fails when such an edge is added back.
- Reporters only format: nothing under report/ reads a file, and what they print comes from the
  records (with --stdin-filename the excerpt and the fingerprints follow the linted text).
- One rule registry: every rule file's code has exactly one implementation, registered under
  it, and every implementation a rule file with a failing and a passing case.
- Checks see a run only through the ``Run``/``Conversation`` protocols: no private attributes.
- One door for writes: nothing but ``promptlint.safe_write`` opens a file to write, renames, links
  or deletes one (a scan of the source; snippets show it sees each way and leaves reads alone).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import io
import os
import pkgutil
from pathlib import Path

import pytest

import import_graph
from conftest import QWEN, REPO

import promptlint

PACKAGE_DIR = Path(promptlint.__file__).parent

# (sources, targets, why): an edge from a module under sources to one under targets is a bug.
FORBIDDEN = [
    (("promptlint.analyzers",), ("promptlint.lint", "promptlint.commands", "promptlint.cli", "promptlint.report"),
     "analyzers stand on the kernel, below the driver that calls them"),
    (("promptlint.discovery", "promptlint.config"), ("promptlint.analyzers",),
     "discovery is given the analyzer registry; config knows no analyzer"),
    (("promptlint.report",), ("promptlint.render", "promptlint.tokens", "promptlint.lint", "promptlint.kernel",
                              "promptlint.analyzers", "promptlint.bounded_io"),
     "reporters only format the records"),
    (("promptlint.checks",), ("promptlint.commands", "promptlint.cli", "promptlint.lint", "promptlint.analyzers"),
     "checks see a run, not the program around it"),
    (("promptlint.compare",), ("promptlint.tokens", "promptlint.render"), "the arithmetic is pure"),
    (("promptlint.kernel", "promptlint.figures", "promptlint.template_run"),
     ("promptlint.lint", "promptlint.analyzers", "promptlint.commands", "promptlint.cli", "promptlint.report"),
     "the kernel stands below the analyzers and the driver"),
    (("promptlint.cache", "promptlint.paths", "promptlint.toml_io", "promptlint.records", "promptlint.bounded_io",
      "promptlint.safe_write", "promptlint.registry", "promptlint.line_guard"),
     ("promptlint.config", "promptlint.kernel", "promptlint.lint", "promptlint.analyzers", "promptlint.discovery"),
     "leaves and the cache stand below configuration"),
    (("promptlint.commands",), ("promptlint.cli",), "cli loads the commands by name: they import nothing from it"),
]


def package_graph():
    return import_graph.edges(PACKAGE_DIR, "promptlint")


def test_imports_have_no_cycle():
    assert import_graph.cycles(package_graph()) == []


def test_no_forbidden_import_edge():
    assert import_graph.forbidden(package_graph(), FORBIDDEN) == []


def test_the_graph_sees_local_and_dynamic_imports():
    """The edges the checker must not miss, on the real package: a function-local import, an
    import_module f-string, and a registry's list of module names."""
    graph = package_graph()
    assert "promptlint.kernel" in graph["promptlint.suppress"]  # `from promptlint.kernel import finding` in a function
    assert "promptlint.commands.check" in graph["promptlint.cli"]  # import_module(f"promptlint.commands.{name}")
    assert "promptlint.checks.volatile_before_shared_prefix" in graph["promptlint.checks"]  # f"{__name__}.{name}"
    assert "promptlint.analyzers.chat_template" in graph["promptlint.analyzers"]  # ANALYZERS = ["promptlint...."]


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_checker_fails_when_a_forbidden_edge_or_a_cycle_is_added_back(tmp_path):
    """A throwaway package laid out like promptlint: clean first, then with the edges the issue
    removed put back (an analyzer importing the driver in a function, discovery asking an
    analyzer through import_module, a reporter importing the tokenizer)."""
    pkg = tmp_path / "fakepkg"
    clean = {
        "__init__.py": "",
        "kernel.py": "from fakepkg import records\n",
        "records.py": "",
        "tokens.py": "",
        "discovery.py": "",
        "lint.py": "from fakepkg import discovery, kernel\nimport importlib\nA = importlib.import_module('fakepkg.analyzers.jinja')\n",
        "analyzers/__init__.py": "",
        "analyzers/jinja.py": "from fakepkg.kernel import records\n",
        "report/__init__.py": "",
        "report/full.py": "from fakepkg import records\n",
    }
    _write(pkg, clean)
    rules = [tuple(tuple(p.replace("promptlint", "fakepkg") for p in part) if isinstance(part, tuple) else part for part in r)
             for r in FORBIDDEN]
    graph = import_graph.edges(pkg, "fakepkg")
    assert import_graph.cycles(graph) == [] and import_graph.forbidden(graph, rules) == []

    _write(pkg, {
        "analyzers/jinja.py": "def lint_file():\n    from fakepkg.lint import lint\n",
        "discovery.py": "import importlib\n\ndef walk():\n    return importlib.import_module('fakepkg.analyzers.jinja')\n",
        "report/full.py": "def write():\n    from fakepkg import tokens\n",
    })
    graph = import_graph.edges(pkg, "fakepkg")
    assert import_graph.cycles(graph) == [["fakepkg.analyzers.jinja", "fakepkg.discovery", "fakepkg.lint"]]
    problems = import_graph.forbidden(graph, rules)
    assert [p.split(":")[0] for p in problems] == [
        "fakepkg.analyzers.jinja -> fakepkg.lint",
        "fakepkg.discovery -> fakepkg.analyzers.jinja",
        "fakepkg.report.full -> fakepkg.tokens",
    ]


# ------------------------------------------------------------------------------ reporters

READERS = {"open", "read_text", "read_bytes", "read_prefix", "sha256_file", "fdopen", "scandir", "listdir"}


def test_no_module_under_report_reads_a_file():
    for path in sorted((PACKAGE_DIR / "report").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                assert name not in READERS, f"{path.name}:{node.lineno} calls {name}()"


def _stdin_lint(tmp_path, cli, monkeypatch, fmt, linted: str):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(linted.encode("utf-8")), encoding="utf-8"))
    return cli("check", "--tokenizer", QWEN, "--no-cache", "--output-format", fmt, "--stdin-filename", "t.j2", cwd=tmp_path)


LINTED = "Time: {{ now }}\n" + "You are the support agent of the Acme outdoor shop. Be concise. " * 20 + "\nQ: {{ question }}\n"


def test_full_excerpt_and_fingerprints_come_from_the_linted_text_not_the_disk(tmp_path, cli, monkeypatch):
    """--stdin-filename t.j2 with another t.j2 on disk: the caret sits under the linted text, and
    SARIF/GitLab fingerprints are those of the same text linted from disk."""
    (tmp_path / "t.j2").write_text("Something else entirely, {{ question }}\n", encoding="utf-8")
    full = _stdin_lint(tmp_path, cli, monkeypatch, "full", LINTED)
    assert full.code == 1, full.err
    lines = full.out.splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith("t.j2:1:7: M101"))
    assert lines[at + 2].endswith("| Time: {{ now }}")
    assert lines[at + 3].endswith("|       ^^^^^^^^^")  # columns 7-15: `{{ now }}`
    from_stdin = {f["fingerprint"] for f in _stdin_lint(tmp_path, cli, monkeypatch, "gitlab", LINTED).json()}
    sarif = _stdin_lint(tmp_path, cli, monkeypatch, "sarif", LINTED).json()
    (tmp_path / "t.j2").write_text(LINTED, encoding="utf-8")
    from_disk = {f["fingerprint"] for f in cli("check", "--tokenizer", QWEN, "--no-cache", "--output-format", "gitlab",
                                             "t.j2", cwd=tmp_path).json()}
    assert from_stdin == from_disk
    assert {r["partialFingerprints"]["promptlint/v1"] for r in sarif["runs"][0]["results"]} == from_disk


def test_reporters_open_no_file(tmp_path, cli, monkeypatch):
    """Every format, with every way to open a file made to fail while it writes."""
    from promptlint.config import Settings
    from promptlint.lint import lint
    from promptlint.report import FORMATS, get

    (tmp_path / "t.j2").write_text(LINTED, encoding="utf-8")
    result = lint([str(tmp_path / "t.j2")], Settings(tokenizer=str(QWEN), root=tmp_path), use_cache=False)
    assert result.findings
    for fmt in FORMATS:
        get(fmt)  # imported before the trap: importing a module reads its file

    def refuse(*args, **kwargs):
        raise AssertionError(f"a reporter opened a file: {args[:1]}")

    with monkeypatch.context() as m:
        for target, name in ((builtins, "open"), (io, "open"), (os, "open"), (Path, "open"), (Path, "read_text"),
                             (Path, "read_bytes")):
            m.setattr(target, name, refuse)
        for fmt in FORMATS:
            get(fmt).write(result, io.StringIO(), evidence=True)


def test_a_long_line_is_cut_in_the_excerpt(tmp_path, cli):
    """A 200 KB line is not printed whole: the excerpt keeps the part around the finding."""
    text = "Time: {{ now }} " + "shared words " * 16_000 + "\nQ: {{ question }}\n"
    assert len(text) > 200_000
    (tmp_path / "t.j2").write_text(text, encoding="utf-8")
    r = cli("check", "--tokenizer", QWEN, "--no-cache", "t.j2", cwd=tmp_path)
    excerpt = next(l for l in r.out.splitlines() if l.startswith("  1 | "))
    assert excerpt.startswith("  1 | Time: {{ now }} shared words") and excerpt.endswith("…")
    assert len(excerpt) < 200


def test_summary_counts_files_with_findings(tmp_path, cli):
    for name in ("a.j2", "b.j2"):
        (tmp_path / name).write_text(LINTED, encoding="utf-8")
    (tmp_path / "c.j2").write_text("Be concise.\nQ: {{ question }}\n", encoding="utf-8")
    r = cli("check", "--tokenizer", QWEN, "--no-cache", "--select", "M101", "a.j2", "b.j2", "c.j2", cwd=tmp_path)
    assert r.out.splitlines()[-1] == "Found 2 findings in 2 files (3 checked)."


# ------------------------------------------------------------------------------ the rule registry


def _import_everything():
    """Import every module of the package (what registers the implementations)."""
    skip = ("promptlint.lsp", "promptlint.__main__")  # pygls is optional; __main__ runs the CLI
    for info in pkgutil.walk_packages([str(PACKAGE_DIR)], "promptlint."):
        if info.name not in skip:
            importlib.import_module(info.name)


def _implements_calls():
    """code -> modules whose source registers it (a static count: a module imported twice counts once)."""
    out = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "implements":
                for arg in node.args[1:]:
                    if isinstance(arg, ast.Constant):
                        out.setdefault(arg.value, []).append(path.relative_to(PACKAGE_DIR).as_posix())
    return out


def test_every_rule_has_exactly_one_implementation_and_every_implementation_a_rule_file():
    from promptlint import registry

    _import_everything()
    declared = set(registry.all_rules())
    registered = registry.implementations()
    assert set(registered) == declared, (sorted(declared - set(registered)), sorted(set(registered) - declared))
    calls = _implements_calls()
    assert {code: where for code, where in calls.items() if len(where) != 1} == {}
    assert set(calls) == declared


@pytest.mark.parametrize("code", sorted(__import__("promptlint.registry").registry.all_rules()))
def test_every_rule_file_has_a_failing_and_a_passing_case(code):
    from promptlint import registry

    kinds = {case.get("kind") for case in registry.get(code).cases}
    assert {"fail", "pass"} <= kinds, f"{code}: cases of kinds {sorted(k for k in kinds if k)}"


def test_registering_a_code_twice_is_refused():
    from promptlint import registry

    registry.implements("tests.one", "ZZ999")
    with pytest.raises(RuntimeError, match="ZZ999 is implemented twice"):
        registry.implements("tests.other", "ZZ999")
    registry._IMPLEMENTED_BY.pop("ZZ999")


def test_template_checks_are_found_by_registration_in_code_order():
    from promptlint import checks

    assert [m.CODES for m in checks.template_checks()] == [
        ("M101",), ("M102",), ("M103",), ("M104",), ("M105",), ("M107",), ("M201", "M202", "M203"), ("M204",)
    ]


# ------------------------------------------------------------------------------ what checks see


def _protocol_members():
    tree = ast.parse((PACKAGE_DIR / "checks" / "interface.py").read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names = set()
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
                elif isinstance(item, ast.FunctionDef):
                    names.add(item.name)
            out[node.name] = names
    return out


def test_checks_use_only_what_the_run_protocol_offers():
    members = _protocol_members()
    allowed = {"run": members["Run"], "conv": members["Conversation"]}
    used = set()
    for path in sorted((PACKAGE_DIR / "checks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in allowed:
                assert node.attr in allowed[node.value.id], f"{path.name}:{node.lineno} uses {node.value.id}.{node.attr}"
                used.add(node.attr)
    assert "conversation" in used and "finding" in used  # the scan saw the checks


def test_template_and_chat_runs_offer_the_protocol():
    from promptlint.chat.run import ChatRun
    from promptlint.template_run import TemplateRun

    members = _protocol_members()
    for cls, protocol in ((TemplateRun, "Run"), (ChatRun, "Run"), (ChatRun, "Conversation")):
        missing = [m for m in members[protocol] if not hasattr(cls, m) and m not in _instance_attributes(cls)]
        assert missing == [], (cls.__name__, protocol, missing)


def _instance_attributes(cls) -> set:
    import inspect

    names = set()
    for klass in cls.__mro__:
        if klass.__module__ == "builtins" or "__init__" not in klass.__dict__:
            continue
        for node in ast.walk(ast.parse(inspect.getsource(klass))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
    return names


# ------------------------------------------------------------------------------ one door for writes

DOOR = "safe_write.py"  # promptlint.safe_write: every write, rename and deletion goes through it
# Called by name on any receiver (Path.unlink, os.unlink, shutil.rmtree, tempfile.mkstemp...).
WRITERS = {"unlink", "rmdir", "removedirs", "rmtree", "mkdir", "makedirs", "write_text", "write_bytes", "touch",
           "symlink", "symlink_to", "hardlink_to", "link_to", "rename", "renames", "mkstemp", "mkdtemp",
           "TemporaryDirectory", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile", "mkfifo", "mknod",
           "copyfile", "copy2", "copytree", "copyfileobj"}
# Called on these modules only (a list's remove, a dict's copy, a str's replace are not writes).
MODULE_WRITERS = {"os": {"remove", "replace", "link", "truncate"}, "shutil": {"move", "copy"}}
OPENERS = {"open", "fdopen"}  # with a mode that writes (w, a, x, +), or one the scan cannot read
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}


def _mode_of(call: ast.Call):
    for kw in call.keywords:
        if kw.arg == "mode":
            return kw.value
    f = call.func
    # open(path, mode), io.open/gzip.open/os.fdopen(x, mode); Path.open(mode)
    module_call = isinstance(f, ast.Name) or (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                              and f.value.id in ("io", "os", "codecs", "gzip", "bz2", "lzma"))
    index = 1 if module_call else 0
    return call.args[index] if len(call.args) > index else None


def write_calls(source: str) -> list:
    """`line: what` for each way to write, rename or delete a file in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Name, ast.Attribute)) and (getattr(node, "id", None) or getattr(node, "attr", None)) in WRITE_FLAGS:
            out.append(f"{node.lineno}: {getattr(node, 'id', None) or node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "shutil", "tempfile", "pathlib"):
            for alias in node.names:
                if alias.name in WRITERS or alias.name in MODULE_WRITERS.get(node.module, ()):
                    out.append(f"{node.lineno}: from {node.module} import {alias.name}")
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        receiver = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
        if receiver == "safe_write":
            continue  # the door
        if name == "touch" and node.args:
            continue  # Path.touch takes keywords; an LRU's touch(item) is not a file
        if name in WRITERS or name in MODULE_WRITERS.get(receiver, ()):
            out.append(f"{node.lineno}: {name}()")
        elif name == "replace" and isinstance(f, ast.Attribute) and len(node.args) == 1 and not node.keywords:
            out.append(f"{node.lineno}: replace(target)")  # Path.replace; str.replace takes two arguments
        elif name in OPENERS and not (receiver == "os" and name == "open"):  # os.open: its flags are scanned
            mode = _mode_of(node)
            if mode is not None and not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)
                                         and not set(mode.value) & set("wax+")):
                out.append(f"{node.lineno}: {name}(mode={ast.unparse(mode)})")
    return out


def test_nothing_but_the_door_writes_renames_or_deletes_a_file():
    found = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if path.relative_to(PACKAGE_DIR).as_posix() != DOOR:
            calls = write_calls(path.read_text(encoding="utf-8"))
            if calls:
                found[path.relative_to(PACKAGE_DIR).as_posix()] = calls
    assert found == {}, "write through promptlint.safe_write (it follows no link the repository committed)"
    assert write_calls((PACKAGE_DIR / DOOR).read_text(encoding="utf-8"))  # the scan sees the door's own writes


@pytest.mark.parametrize("snippet", [
    'open(p, "w")', 'open(p, mode="a", encoding="utf-8")', 'io.open(p, "x")', 'open(p, "r+")', "open(p, m)",
    'Path(p).open("wb")', 'os.fdopen(fd, "w")', 'gzip.open(p, "wt")', "os.open(p, os.O_WRONLY | os.O_CREAT)",
    "os.replace(a, b)", "os.rename(a, b)", "Path(a).rename(b)", "Path(a).replace(b)", "os.unlink(p)",
    "Path(p).unlink()", "os.remove(p)", "shutil.rmtree(p)", "shutil.move(a, b)", "shutil.copy(a, b)",
    "os.mkdir(p)", "os.makedirs(p)", "Path(p).mkdir()", 'Path(p).write_text("x")', 'p.write_bytes(b"x")',
    "p.touch()", "os.symlink(a, b)", "p.symlink_to(a)", "os.link(a, b)", "tempfile.mkstemp()",
    "tempfile.TemporaryDirectory()", "tempfile.NamedTemporaryFile()", "os.rmdir(p)", "os.truncate(p, 0)",
    "from shutil import rmtree", "from os import replace",
])
def test_the_write_scan_sees_every_way_to_write(snippet):
    assert write_calls(snippet), snippet


def test_the_write_scan_leaves_reads_alone():
    reads = ('open(p)\nopen(p, "rb")\nopen(p, encoding="utf-8")\nPath(p).open()\ns.replace("a", "b")\n'
             'dataclasses.replace(x, a=1)\nitems.remove(x)\nd.copy()\nos.open(p, os.O_RDONLY)\nos.fdopen(fd, "rb")\n'
             'stack.touch(block)\nsafe_write.write_text(p, "x")\n')
    assert write_calls(reads) == []
