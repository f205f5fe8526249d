"""The house rules of the code base (docs/architecture.md), checked on its source.

- Imports run one way: no cycle in the package's import graph (every import at any depth,
  import_module strings and registries' module names included), and none of the forbidden
  edges. A throwaway package shows the checker fails when such an edge is added back.
- Reporters only format: nothing under report/ reads a file, and what they print comes from the
  records (with --stdin-filename the excerpt and the fingerprints follow the linted text).
- One rule registry: every rule file's code has exactly one implementation, registered under
  it, and every implementation a rule file with a failing and a passing case.
- Checks see a run only through the ``Run``/``Conversation`` protocols: no private attributes.
- One door for writes: nothing but ``promptlint.doors.safe_write`` opens a file to write, renames, links
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
    (("promptlint.analyzers",), ("promptlint.driver.lint", "promptlint.commands", "promptlint.cli", "promptlint.report"),
     "analyzers stand on the kernel, below the driver that calls them"),
    (("promptlint.project.discovery", "promptlint.project.config"), ("promptlint.analyzers",),
     "discovery is given the analyzer registry; config knows no analyzer"),
    (("promptlint.report",), ("promptlint.render", "promptlint.tokenization.tokens", "promptlint.driver.lint", "promptlint.analysis.kernel",
                              "promptlint.analyzers", "promptlint.doors.bounded_io"),
     "reporters only format the records"),
    (("promptlint.checks",), ("promptlint.commands", "promptlint.cli", "promptlint.driver.lint", "promptlint.analyzers"),
     "checks see a run, not the program around it"),
    (("promptlint.arithmetic.compare",), ("promptlint.tokenization.tokens", "promptlint.render"), "the arithmetic is pure"),
    (("promptlint.analysis.kernel", "promptlint.arithmetic.figures", "promptlint.analysis.template_run"),
     ("promptlint.driver.lint", "promptlint.analyzers", "promptlint.commands", "promptlint.cli", "promptlint.report"),
     "the kernel stands below the analyzers and the driver"),
    (("promptlint.project.cache", "promptlint.base.paths", "promptlint.base.toml_io", "promptlint.base.records", "promptlint.doors.bounded_io",
      "promptlint.doors.safe_write", "promptlint.base.registry", "promptlint.doors.line_guard"),
     ("promptlint.project.config", "promptlint.analysis.kernel", "promptlint.driver.lint", "promptlint.analyzers", "promptlint.project.discovery"),
     "leaves and the cache stand below configuration"),
    (("promptlint.commands",), ("promptlint.cli",), "cli loads the commands by name: they import nothing from it"),
]


_GRAPH = {}


def package_graph():
    """The package's graph, built once per process (the tests only read it)."""
    if not _GRAPH:
        _GRAPH.update(import_graph.edges(PACKAGE_DIR, "promptlint"))
    return _GRAPH


def test_imports_have_no_cycle():
    assert import_graph.cycles(package_graph()) == []


def test_no_forbidden_import_edge():
    assert import_graph.forbidden(package_graph(), FORBIDDEN) == []


def test_the_graph_sees_local_and_dynamic_imports():
    """The edges the checker must not miss, on the real package: a function-local import, an
    import_module f-string, and a registry's list of module names."""
    graph = package_graph()
    assert "promptlint.analysis.kernel" in graph["promptlint.driver.suppress"]  # `from promptlint.analysis.kernel import finding` in a function
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
        "analysis/__init__.py": "",
        "analysis/kernel.py": "from fakepkg.base import records\n",
        "base/__init__.py": "",
        "base/records.py": "",
        "tokenization/__init__.py": "",
        "tokenization/tokens.py": "",
        "project/__init__.py": "",
        "project/discovery.py": "",
        "driver/__init__.py": "",
        "driver/lint.py": "from fakepkg.project import discovery\nfrom fakepkg.analysis import kernel\nimport importlib\nA = importlib.import_module('fakepkg.analyzers.jinja')\n",
        "analyzers/__init__.py": "",
        "analyzers/jinja.py": "from fakepkg.analysis.kernel import records\n",
        "report/__init__.py": "",
        "report/full.py": "from fakepkg.base import records\n",
    }
    _write(pkg, clean)
    rules = [tuple(tuple(p.replace("promptlint", "fakepkg") for p in part) if isinstance(part, tuple) else part for part in r)
             for r in FORBIDDEN]
    graph = import_graph.edges(pkg, "fakepkg")
    assert import_graph.cycles(graph) == [] and import_graph.forbidden(graph, rules) == []

    _write(pkg, {
        "analyzers/jinja.py": "def lint_file():\n    from fakepkg.driver.lint import lint\n",
        "project/discovery.py": "import importlib\n\ndef walk():\n    return importlib.import_module('fakepkg.analyzers.jinja')\n",
        "report/full.py": "def write():\n    from fakepkg.tokenization import tokens\n",
    })
    graph = import_graph.edges(pkg, "fakepkg")
    assert import_graph.cycles(graph) == [["fakepkg.analyzers.jinja", "fakepkg.driver.lint", "fakepkg.project.discovery"]]
    problems = import_graph.forbidden(graph, rules)
    assert [p.split(":")[0] for p in problems] == [
        "fakepkg.analyzers.jinja -> fakepkg.driver.lint",
        "fakepkg.project.discovery -> fakepkg.analyzers.jinja",
        "fakepkg.report.full -> fakepkg.tokenization.tokens",
    ]


# ------------------------------------------------------------------------------ reporters

READERS = {"open", "read_text", "read_bytes", "read_prefix", "sha256_file", "fdopen", "scandir", "listdir"}


def test_no_module_under_report_reads_a_file():
    for path in sorted((PACKAGE_DIR / "report").glob("*.py")):
        for node in import_graph.walk(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                assert name not in READERS, f"{path.name}:{node.lineno} calls {name}()"


# What a reporter may not ask the process: the front end puts it in the ReportContext.
PROCESS_READS = {("os", "environ"), ("os", "getenv"), ("os", "getcwd"), ("os", "getcwdb"), ("os", "environb"),
                 ("Path", "cwd"), ("Path", "home"), ("sys", "argv")}


def process_reads(source: str) -> list:
    """`line: what` for each read of the environment or the working directory in ``source``."""
    out = []
    for node in import_graph.walk(source):
        owner = getattr(node, "value", None)
        owner = getattr(owner, "id", None) or getattr(owner, "attr", None)  # `os`, `Path` (also `pathlib.Path`)
        if isinstance(node, ast.Attribute) and (owner, node.attr) in PROCESS_READS:
            out.append(f"{node.lineno}: {owner}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "sys"):
            out += [f"{node.lineno}: from {node.module} import {a.name}" for a in node.names
                    if (node.module, a.name) in PROCESS_READS]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getenv", "getcwd"):
            out.append(f"{node.lineno}: {node.func.id}()")
    return out


def test_no_module_under_report_reads_the_environment_or_the_working_directory():
    """Reporters are given the result and a ReportContext (records.py) and read nothing else: the
    CI roots, colour and the working directory come from the front end (commands/report_context.py)."""
    found = {path.name: process_reads(path.read_text(encoding="utf-8"))
             for path in sorted((PACKAGE_DIR / "report").glob("*.py"))}
    assert {name: reads for name, reads in found.items() if reads} == {}
    assert process_reads((PACKAGE_DIR / "commands" / "report_context.py").read_text(encoding="utf-8"))  # the scan sees them


@pytest.mark.parametrize("snippet", [
    'os.environ.get("GITHUB_WORKSPACE")', 'os.environ["CI"]', 'os.getenv("NO_COLOR")', "os.getcwd()", "Path.cwd()",
    "from os import environ", "from os import getcwd", "getenv('X')", "pathlib.Path.cwd()",
])
def test_the_process_scan_sees_every_way_to_ask(snippet):
    assert process_reads(snippet), snippet


# The working directory is the user's: a daemon serves clients in other directories, so nothing it
# runs may read the process's (a request's directory travels as Console.cwd -> Settings.base) or
# enter one. Only what runs in the user's own process asks, each for the reason given.
CWD_CALLS = {("os", "getcwd"), ("os", "getcwdb"), ("os", "chdir"), ("os", "fchdir"), ("Path", "cwd"), ("contextlib", "chdir")}
CWD_USERS = {
    "commands/check.py": "Console(): the default console is the user's own process (cli); a daemon request brings its cwd",
    "commands/report_context.py": "from_process() without a cwd: `conversation`, run in the user's own process",
    "commands/audit.py": "`audit` runs in the user's process: its output files are judged from the user's directory",
    "commands/clean.py": "`clean` runs in the user's process: the project found from its directory",
    "commands/diff.py": "`diff` runs in the user's process",
    "commands/render.py": "`render` runs in the user's process",
    "commands/samples.py": "`samples` runs in the user's process",
    "commands/tokenize.py": "`tokenize` runs in the user's process",
    "editor/lsp.py": "the language server is the editor's own process",
    "daemon/client.py": "the daemon's client is the user's process: it sends its cwd with the request",
    "doors/interpreters.py": "safe_path(): drops the sys.path entry Python made from this process's own cwd",
    "project/config.py": "a library caller (a bare Settings(), load_settings() without base) gets the process's "
                         "directory; every command passes its base",
}


def cwd_uses(source: str) -> list:
    """`line: what` for each read or change of the working directory in ``source``."""
    out = []
    for node in import_graph.walk(source):
        owner = getattr(node, "value", None)
        owner = getattr(owner, "id", None) or getattr(owner, "attr", None)
        if isinstance(node, ast.Attribute) and (owner, node.attr) in CWD_CALLS:
            out.append(f"{node.lineno}: {owner}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "contextlib"):
            out += [f"{node.lineno}: from {node.module} import {a.name}" for a in node.names if (node.module, a.name) in CWD_CALLS]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getcwd", "chdir", "fchdir"):
            out.append(f"{node.lineno}: {node.func.id}()")
    return out


def test_nothing_a_daemon_serves_reads_or_changes_the_working_directory():
    """Issue 28: the daemon serves a request in its resident Workspace with nothing of the process
    swapped; the request's directory is passed, never entered (os.chdir) nor read from the process."""
    found = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        uses = cwd_uses(path.read_text(encoding="utf-8"))
        if uses:
            found[path.relative_to(PACKAGE_DIR).as_posix()] = uses
    unexplained = {name: uses for name, uses in found.items() if name not in CWD_USERS}
    assert unexplained == {}
    assert set(CWD_USERS) == set(found), "an exception that no longer applies: remove it from CWD_USERS"


@pytest.mark.parametrize("snippet", [
    "os.chdir(d)", "os.getcwd()", "os.fchdir(fd)", "Path.cwd()", "pathlib.Path.cwd()", "from os import chdir",
    "contextlib.chdir(d)", "field(default_factory=Path.cwd)", "getcwd()",
])
def test_the_cwd_scan_sees_every_way_to_ask(snippet):
    assert cwd_uses(snippet), snippet


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
    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint
    from promptlint.base.records import ReportContext
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
            get(fmt).write(result, ReportContext(cwd=tmp_path, git_root=tmp_path, evidence=True), io.StringIO())


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
    skip = ("promptlint.editor.lsp", "promptlint.__main__")  # pygls is optional; __main__ runs the CLI
    for info in pkgutil.walk_packages([str(PACKAGE_DIR)], "promptlint."):
        if info.name not in skip:
            importlib.import_module(info.name)


def _implements_calls():
    """code -> modules whose source registers it (a static count: a module imported twice counts once)."""
    out = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for node in import_graph.walk(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "implements":
                for arg in node.args[1:]:
                    if isinstance(arg, ast.Constant):
                        out.setdefault(arg.value, []).append(path.relative_to(PACKAGE_DIR).as_posix())
    return out


def test_every_rule_has_exactly_one_implementation_and_every_implementation_a_rule_file():
    from promptlint.base import registry

    _import_everything()
    declared = set(registry.all_rules())
    registered = registry.implementations()
    assert set(registered) == declared, (sorted(declared - set(registered)), sorted(set(registered) - declared))
    calls = _implements_calls()
    assert {code: where for code, where in calls.items() if len(where) != 1} == {}
    assert set(calls) == declared


@pytest.mark.parametrize("code", sorted(__import__("promptlint.base.registry").base.registry.all_rules()))
def test_every_rule_file_has_a_failing_and_a_passing_case(code):
    from promptlint.base import registry

    kinds = {case.get("kind") for case in registry.get(code).cases}
    assert {"fail", "pass"} <= kinds, f"{code}: cases of kinds {sorted(k for k in kinds if k)}"


def test_registering_a_code_twice_is_refused():
    from promptlint.base import registry

    registry.implements("tests.one", "ZZ999")
    with pytest.raises(RuntimeError, match="ZZ999 is implemented twice"):
        registry.implements("tests.other", "ZZ999")
    registry._IMPLEMENTED_BY.pop("ZZ999")


def test_template_checks_are_found_by_registration_in_code_order():
    """Every module of checks/ with ``check(run)`` is a template check, in the order of its first
    code: found by the package, listed nowhere (a new rule adds no line here or anywhere else)."""
    from promptlint import checks

    found = checks.template_checks()
    with_check = sorted(info.name for info in pkgutil.iter_modules(checks.__path__)
                        if hasattr(importlib.import_module(f"promptlint.checks.{info.name}"), "check"))
    assert sorted(m.__name__.rsplit(".", 1)[1] for m in found) == with_check
    assert [m.CODES for m in found] == sorted(m.CODES for m in found)
    # today's, as a floor: the scan above must not come back empty
    assert {("M101",), ("M102",), ("M201", "M202", "M203"), ("M204",)} <= {m.CODES for m in found}


# ------------------------------------------------------------------------------ what checks see


def _protocol_members():
    tree = import_graph.parse((PACKAGE_DIR / "checks" / "interface.py").read_text(encoding="utf-8"))
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
        for node in import_graph.walk(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in allowed:
                assert node.attr in allowed[node.value.id], f"{path.name}:{node.lineno} uses {node.value.id}.{node.attr}"
                used.add(node.attr)
    assert "conversation" in used and "finding" in used  # the scan saw the checks


def test_template_and_chat_runs_offer_the_protocol():
    from promptlint.chat.run import ChatRun
    from promptlint.analysis.template_run import TemplateRun

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
        for node in import_graph.walk(inspect.getsource(klass)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
    return names


# ------------------------------------------------------------------------------ one door for writes

DOOR = "doors/safe_write.py"  # promptlint.doors.safe_write: every write, rename and deletion goes through it
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
    for node in import_graph.walk(source):
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
    assert found == {}, "write through promptlint.doors.safe_write (it follows no link the repository committed)"
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


# ------------------------------------------------------------------ no run state in module globals

# Every module-level name that code changes after import (a `global` statement; an item stored,
# deleted or a mutating method called on it inside a function; a module-level instance of a class of
# the same module), with why it is not the state of a run. A new one fails the test until it is
# either made state of the Workspace (promptlint/driver/workspace.py) or listed here with its reason;
# a listed name that is gone fails too. docs/architecture.md ("What stays in modules") says the same.
MODULE_STATE = {
    # memo tables of pure functions (the same key always gives the same value)
    "promptlint.tokenization.tokens:_EMBEDDED_SHA256": "memo: the sha256 of the embedded tokenizer file shipped with the package",
    "promptlint.tokenization.tokens:_VETTING": "memo: a tokenizer.json's unknown regexes, keyed by its content's sha256",
    "promptlint.tokenization.tokens:_SHA256": "memo: a file's sha256 keyed by its path and full stat stamp (size, mtime, ctime, inode, device)",
    "promptlint.base.paths:_BASES": "memo: a base directory's resolved path, keyed by its spelling, the cwd and its device/inode",
    "promptlint.chat.request:_FORMATS": "memo: a chat template text's content format (string or parts), keyed by the text",
    "promptlint.pysource.breakpoints:_TABLES": "memo: the cache-minimums table, keyed by the override file's path and stamp",
    "promptlint.render:_RECORDING": "memo: the recording code-generator subclass made for a Jinja code-generator class",
    "promptlint.render.lexer:_FAST": "memo: the faster lexer for a Jinja lexer object (bounded)",
    "promptlint.render.environments:PARSED": "memo: parse trees keyed by template text and parser settings (bounded)",
    "promptlint.render.code_cache:_SECRETS": "memo: the user cache's secret file, read once per cache directory",
    "promptlint.render.code_cache:_STAMP": "memo: promptlint's own code stamp (constant for the process's life)",
    "promptlint.render.code_cache:_MEMORY": "memo: a template's generated code keyed by everything it depends on (the user cache's key), bounded; where that cache keeps none",
    "promptlint.render.code_cache:_PRUNED": "statistic: the entry directories this process has counted (pruned once each)",
    "promptlint.project.cache:_CODE_STAMP": "memo: the stamp of the installed promptlint code (a constant of the process)",
    "promptlint.base.code_files:_STAMP": "memo: the code stamp this process last took (the result and template code caches share one pass)",
    "promptlint.fastbpe.form:_ALPHABET": "memo: GPT-2's byte-level alphabet, a constant table made once",
    "promptlint.project.cache:_SECRET": "memo: the user's cache secret, read once from the user-level file (not the project's)",
    "promptlint.project.dataclass_code:_TABLE": "memo: a dataclass method's source text -> its compiled code (the same text always compiles to the same code)",
    "promptlint.project.dataclass_code:_USED": "statistic: the method texts this process executed (what a table over its bound keeps)",
    "promptlint.project.dataclass_code:_NEW": "statistic: texts compiled in this process that the kept table lacks (whether save() writes)",
    "promptlint.editor.lsp:_HREFS": "memo: rule code -> its documentation page (from the shipped rule files)",
    "promptlint.render.stubs:_VALUE_METHODS": "memo: the method names of the value types a sample can hold",
    "promptlint.scenarios.names:_PATTERNS": "memo: the name patterns parsed from the shipped M101 rule file",
    "promptlint.pysource.project:_PARSED": "memo: an imported module's syntax tree, keyed by its path and bytes",
    "promptlint.tssource.grammar:_PARSERS": "memo: one tree-sitter parser per dialect (TypeScript, TSX, JavaScript)",
    "promptlint.tssource.project:_PARSED": "memo: a TS/JS module's tree and index, keyed by its path and bytes",
    "promptlint.fastbpe.store:_PACKAGED": "memo: the compact form shipped with the package, read once",
    "promptlint.fastbpe.store:_KEPT": "memo: a compact form read ahead (to vet its content) for the load that follows, keyed by the content's sha256",
    "promptlint.driver.lint:_ALL_CODES": "a lazy view of the shipped rule codes (read when a suppression comment needs them)",
    # registries filled at import from the package's own modules
    "promptlint.base.registry:_IMPLEMENTED_BY": "registry: rule code -> the module that implements it, filled at import",
    "promptlint.report:_FORMATS": "registry: the output format modules of the package, found once",
    "promptlint.checks:_CHECKS": "registry: the template check modules of the package, found once",
    "promptlint.analyzers:_MODULES": "registry: the analyzer modules of the package, imported once",
    "promptlint.analyzers:_IMPORTED": "registry: each analyzer module, imported and checked once (as far as a lookup needed)",
    # contexts installed for a block and always restored
    "promptlint.pools.tokenizers:_ACTIVE": "context: the Workspace's tokenizer pool and its windowed-encoding choice while it checks (installed, restored)",
    "promptlint.pools.tokenizers:_DEFAULT": "the transient pool a library call outside any Workspace uses",
    "promptlint.doors.bounded_io:_POLICY": "context: untrusted mode's read policy for one command (cli runs each command in its own context)",
    "promptlint.tokenization.tokens:_BUDGET": "context: the per-file analysis budget, installed by `with budget()` and restored",
    "promptlint.cli:_SERVED": "context: a daemon request's console and terminal columns while its argv is parsed (set, reset)",
    "promptlint.driver.parallel:_WORK": "what forked workers call: set right before the fork, cleared after (never a run's input)",
    "promptlint.audit.parallel:_opts": "a worker process's options, set once by its pool initializer (the process is that run)",
    # constants that are instances
    "promptlint.scenarios.names:STATIC": "constant: the immutable classification of a static name",
    # statistics nothing reads to decide anything
    "promptlint.fastbpe:_BUILDS": "statistic: compact forms built in this process (tests assert it)",
    "promptlint.fastbpe:_LOADS": "statistic: tokenizers built from a compact form in this process (tests assert it)",
    "promptlint.render:_RENDERS": "statistic: renders started in this process (tests assert sharing with render_count())",
}

_MUTATORS = {"append", "extend", "update", "clear", "pop", "popitem", "setdefault", "add", "discard", "remove", "insert",
             "move_to_end", "set", "reset", "appendleft", "sort", "reverse", "__setitem__", "__delitem__"}


def module_state(tree: ast.Module, module: str) -> set:
    """``module:name`` of each module-level name the code changes after import (see MODULE_STATE)."""
    names, classes, found = set(), {n.name for n in tree.body if isinstance(n, ast.ClassDef)}, set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Name):
                names.add(t.id)
                value = node.value
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in classes:
                    found.add(t.id)  # an instance of the module's own class: its methods can change it
    for fn in import_graph.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found.update(node.names)
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in names:
                    found.add(t.value.id)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in names:
                found.add(node.func.value.id)
    return {f"{module}:{name}" for name in found}


def _package_state() -> set:
    out = set()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        module = ".".join(("promptlint",) + path.relative_to(PACKAGE_DIR).with_suffix("").parts)
        module = module[: -len(".__init__")] if module.endswith(".__init__") else module
        out |= module_state(import_graph.parse(path.read_text(encoding="utf-8")), module)
    return out


def test_no_module_global_holds_run_state():
    found = _package_state()
    assert sorted(found - set(MODULE_STATE)) == [], "module-level state a run may depend on: make it the Workspace's"
    assert sorted(set(MODULE_STATE) - found) == [], "listed in MODULE_STATE but no longer module state: drop the entry"


@pytest.mark.parametrize("snippet, expected", [
    ("_N = [0]\ndef f():\n    _N[0] += 1\n", {"m:_N"}),  # an item stored
    ("_N = None\ndef f():\n    global _N\n    _N = 1\n", {"m:_N"}),  # a global statement
    ("_C = {}\ndef f(k):\n    _C.setdefault(k, 1)\n", {"m:_C"}),  # a mutating method
    ("class P:\n    pass\n_P = P()\n", {"m:_P"}),  # an instance of the module's own class
    ("TABLE = {'a': 1}\ndef f(k):\n    return TABLE[k]\n", set()),  # a constant table, only read
    ("def f():\n    local = {}\n    local['a'] = 1\n", set()),  # a function's own dict
])
def test_the_state_scan_sees_each_way_to_keep_state(snippet, expected):
    assert module_state(import_graph.parse(snippet), "m") == expected


def test_every_package_folder_ships():
    """pyproject.toml lists the packages a wheel holds: a new folder left out would install a
    promptlint that fails on import (tests here run from the checkout, so only this sees it)."""
    from promptlint.base import toml_io

    listed = set(toml_io.toml_loads((PACKAGE_DIR.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    folders = {"promptlint." + p.relative_to(PACKAGE_DIR).as_posix().replace("/", ".")
               for p in PACKAGE_DIR.rglob("*") if p.is_dir() and (p / "__init__.py").exists()}
    assert folders - listed == set(), "add the package to [tool.setuptools] packages in pyproject.toml"
# ------------------------------------------------------------------------------ folders

# The package's folders bottom to top (docs/architecture.md, "The tree"): a module may import a
# module of its own folder, of a folder in its own tier, or of a tier below; never one above.
TIERS = [
    ("doors",),
    ("base", "llamacpp", "schemas", "data"),
    ("arithmetic", "pools"),
    ("tokenization", "fastbpe"),
    ("render", "scenarios", "promptfiles"),
    ("project",),
    ("analysis",),
    ("checks",),
    ("chat", "pysource", "tssource"),
    ("analyzers", "operators"),
    ("driver", "audit"),
    ("report",),
    # the front ends: peers (a command runs fixes and the language server; the daemon's client
    # stands below the commands that use it, its server above cli)
    ("fixes", "editor", "commands", "daemon", "cli", "conversation"),
    ("github_comment", "__main__"),
]
# Entry points may sit at the top of the package; every other module lives in a folder.
ENTRY_POINTS = {"__init__.py", "__main__.py", "cli.py", "github_comment.py"}


def _tier_of():
    return {name: i for i, tier in enumerate(TIERS) for name in tier}


def _folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_loose_module_at_the_top_of_the_package():
    loose = sorted(p.name for p in PACKAGE_DIR.glob("*.py") if p.name not in ENTRY_POINTS)
    assert loose == [], "put a new module in the folder of its layer (docs/architecture.md, 'The tree')"


def test_every_folder_has_a_tier():
    folders = {p.name for p in PACKAGE_DIR.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    folders |= {p.stem for p in PACKAGE_DIR.glob("*.py") if p.name != "__init__.py"}
    assert folders - set(_tier_of()) == set()


def _upward_edges(graph, tiers):
    bad = []
    for source, targets in graph.items():
        for target in targets:
            a, b = _folder(source), _folder(target)
            if a and b and a != b and tiers[b] > tiers[a]:
                bad.append(f"{source} -> {target}")
    return sorted(bad)


def test_folders_import_downward_only():
    assert _upward_edges(package_graph(), _tier_of()) == []


def test_the_folder_check_sees_an_upward_import_made_in_a_function(tmp_path):
    pkg = tmp_path / "fakepkg"
    _write(pkg, {
        "__init__.py": "",
        "base/__init__.py": "",
        "base/records.py": "def f():\n    from fakepkg.driver import lint\n",
        "driver/__init__.py": "",
        "driver/lint.py": "from fakepkg.base import records\n",
    })
    graph = import_graph.edges(pkg, "fakepkg")
    assert _upward_edges(graph, {"base": 0, "driver": 1}) == ["fakepkg.base.records -> fakepkg.driver.lint"]


# ------------------------------------------------------------------------------ one release, no environment


def _calls_by_function(tree: ast.Module, wanted) -> list:
    """(enclosing function, line) of each call ``wanted(call)`` accepts (module level: "<module>")."""
    out = []

    def visit(node, where):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Call) and wanted(child):
                out.append((where, child.lineno))
            visit(child, where)

    visit(tree, "<module>")
    return out


def _is_release(call: ast.Call) -> bool:
    f = call.func
    return (isinstance(f, ast.Attribute) and f.attr == "release") or (isinstance(f, ast.Name) and f.id == "release")


def release_sites() -> set:
    """``module:function`` of every call of a ``release`` (a tokenizer pool's, or any other) in the package."""
    out = set()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        module = ".".join(("promptlint",) + path.relative_to(PACKAGE_DIR).with_suffix("").parts)
        for where, _ in _calls_by_function(import_graph.parse(path.read_text(encoding="utf-8")), _is_release):
            out.add(f"{module}:{where}")
    return out


def test_tokenizers_are_released_in_exactly_one_place():
    """The check's plan says, per unit of work, which tokenizers no later unit needs; ``lint.let_go``
    lets them go, and nothing else in the package releases a tokenizer (no end-of-model, end-of-group
    or baseline release of its own)."""
    assert release_sites() == {"promptlint.driver.lint:let_go"}


def test_the_release_scan_sees_a_release_anywhere(tmp_path):
    tree = import_graph.parse("def f(pool):\n    pool.release('x')\nrelease('y')\nclass C:\n    def g(self):\n        tokens.release(1)\n")
    assert [w for w, _ in _calls_by_function(tree, _is_release)] == ["f", "<module>", "g"]


# Who may read the process's environment: the front ends, which read it once and hand the choices
# down (Settings, the Workspace's options, the ReportContext, a daemon request's console). Anything
# else reads it only for the reasons listed here, per module and variable.
ENV_FRONT_ENDS = ("promptlint/cli.py", "promptlint/github_comment.py", "promptlint/commands/", "promptlint/editor/",
                  "promptlint/daemon/client.py", "promptlint/daemon/protocol.py", "promptlint/daemon/__main__.py",
                  "promptlint/conversation/plugin.py")
ENV_EXCEPTIONS = {
    # argparse's help width, read as shutil.get_terminal_size reads it (without importing shutil) by
    # the parsers of the front ends (cli, the daemon's client): presentation of --help and usage only
    ("promptlint/base/terminal.py", "COLUMNS"): "the terminal's width for argparse's help and usage lines",
    # the Rust library's own switch, set (never read to decide anything) before forking or encoding
    ("promptlint/tokenization/tokens.py", "TOKENIZERS_PARALLELISM"): "set for the tokenizers library's thread pool",
    ("promptlint/driver/parallel.py", "TOKENIZERS_PARALLELISM"): "set for forked workers, the caller's value restored",
    ("promptlint/driver/lint.py", "TOKENIZERS_PARALLELISM"): "set in a forked child that parses an unvetted tokenizer",
    ("promptlint/daemon/server.py", "TOKENIZERS_PARALLELISM"): "set once when the daemon process starts (its entry)",
    # where this user's caches live: no output depends on them (a daemon serves only its own user;
    # another secret or another store costs cache misses or a parse, never a different report)
    ("promptlint/project/cache.py", "XDG_CACHE_HOME"): "the user-level cache secret's directory",
    ("promptlint/fastbpe/store.py", "XDG_CACHE_HOME"): "the user-level store of proven compact tokenizer forms",
    ("promptlint/base/toml_io.py", "XDG_CACHE_HOME"): "the user-level JSON copies of the TOML files promptlint ships",
    ("promptlint/project/dataclass_code.py", "XDG_CACHE_HOME"): "the user-level table of compiled dataclass methods",
    ("promptlint/render/code_cache.py", "XDG_CACHE_HOME"): "the user-level entries of templates' generated code",
    ("promptlint/fastbpe/store.py", "PROMPTLINT_FAST_TOKENIZER_DIR"): "another directory for that store (the test suite's)",
    ("promptlint/fastbpe/__init__.py", "PROMPTLINT_FAST_TOKENIZER"): "compact forms off: the same tokenizer, parsed from JSON",
    # not a check run: `audit --ray` hands Ray the address Ray itself reads
    ("promptlint/audit/parallel.py", "RAY_ADDRESS"): "Ray's own variable, for `audit --ray`",
}


def environment_reads(source: str) -> list:
    """(line, variable or "?") of each use of ``os.environ``/``os.getenv`` in ``source``; the variable
    is the string constant the use names (``environ.get("X")``, ``environ["X"]``, ``getenv("X")``)."""
    tree = import_graph.parse(source)
    constants = {}  # module-level NAME = "VALUE" (JOBS_ENV = "PROMPTLINT_JOBS")
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    constants[t.id] = node.value.value
    parents = {child: node for node in import_graph.walk(tree) for child in ast.iter_child_nodes(node)}

    def named(arg):
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        if isinstance(arg, ast.Name) and arg.id in constants:
            return constants[arg.id]
        return "?"

    found = []
    for node in import_graph.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv")) and \
                not (isinstance(node, ast.Name) and node.id == "getenv"):
            continue
        if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) != "os":
            continue
        parent = parents.get(node)
        variable = "?"
        if isinstance(parent, ast.Call) and parent.func is node and parent.args:  # getenv("X")
            variable = named(parent.args[0])
        elif isinstance(parent, ast.Subscript):  # environ["X"]
            variable = named(parent.slice)
        elif isinstance(parent, ast.Attribute) and isinstance(parents.get(parent), ast.Call) and parents[parent].args:
            variable = named(parents[parent].args[0])  # environ.get("X"), environ.setdefault("X", ...)
        found.append((node.lineno, variable))
    for node in import_graph.walk(tree):  # `from os import environ, getenv`: a read the attribute scan cannot name
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [(node.lineno, "?") for a in node.names if a.name in ("environ", "environb", "getenv")]
    return sorted(found)


def test_no_module_but_a_front_end_reads_the_environment():
    """A run reads no environment variable: PROMPTLINT_DEBUG, PROMPTLINT_FULL_ENCODE,
    PROMPTLINT_NO_PROGRESS, PROMPTLINT_JOBS, colour and CI roots are read by the front end when it
    builds the Workspace and the ReportContext (a daemon request carries its own), so the daemon
    keeps no list of variables to compare. Every other read is listed in ENV_EXCEPTIONS with why."""
    found = set()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        rel = "promptlint/" + path.relative_to(PACKAGE_DIR).as_posix()
        if rel.startswith(ENV_FRONT_ENDS):
            continue
        for line, variable in environment_reads(path.read_text(encoding="utf-8")):
            found.add((rel, variable, line))
    unlisted = sorted(f"{rel}:{line} reads {variable}" for rel, variable, line in found if (rel, variable) not in ENV_EXCEPTIONS)
    assert unlisted == [], "read it in the front end and pass it down (Settings, Workspace options, ReportContext)"
    assert sorted(set(ENV_EXCEPTIONS) - {(rel, variable) for rel, variable, _ in found}) == [], "a listed exception is gone"


@pytest.mark.parametrize("snippet, expected", [
    ('import os\nos.environ.get("PROMPTLINT_DEBUG")\n', [(2, "PROMPTLINT_DEBUG")]),
    ('import os\nX = "PROMPTLINT_JOBS"\nos.environ.get(X, "")\n', [(3, "PROMPTLINT_JOBS")]),
    ('import os\nos.environ["CI"]\n', [(2, "CI")]),
    ('import os\nos.getenv("NO_COLOR")\n', [(2, "NO_COLOR")]),
    ('import os\ndict(os.environ)\n', [(2, "?")]),
    ('environ = {}\nenviron.get("X")\n', []),  # a mapping handed down is not the process's
    ("from os import environ\n", [(1, "?")]),
])
def test_the_environment_scan_names_each_variable(snippet, expected):
    assert environment_reads(snippet) == expected

