"""What a one-template `check` and the daemon's forwarding client pay before and around the
analysis (issue 33, pre-commit's own cost): the garbage collector's passes over the start-up's
modules, the shipped TOML files parsed again, the cache directory listed after every run that
wrote, OpenSSL loaded to hash a socket name, a token's text decoded again. Real subprocesses, the
real cache, the embedded tokenizer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptlint.base import registry, toml_io
from promptlint.doors import safe_write
from promptlint.project import cache as cache_mod

SRC = str(Path(registry.__file__).parents[2])

# The real entry point (promptlint/__main__.py) for `check -- one.j2`, daemon off, reporting the
# collections of each generation and the modules the process imported before its quick exit.
PROBE = r"""
import gc, json, os, sys
counts = [0, 0, 0]
gc.callbacks.append(lambda phase, info: phase == "stop" and counts.__setitem__(info["generation"], counts[info["generation"]] + 1))
import builtins
compiled = [0]  # dataclass method texts compiled (dataclasses execs each as a string, `def __create_fn__(...)`)
_exec, _compile = builtins.exec, builtins.compile
def _counted(source):
    if isinstance(source, str) and source.startswith("def __create_fn__("):
        compiled[0] += 1
builtins.exec = lambda source, *a, **k: _counted(source) or _exec(source, *a, **k)
builtins.compile = lambda source, *a, **k: _counted(source) or _compile(source, *a, **k)
real = os._exit
def report(code):
    sys.stderr.write("PROBE " + json.dumps({"collections": counts, "modules": sorted(sys.modules), "parsed": parsed,
                                            "compiled": compiled[0]}) + "\n")
    sys.stderr.flush()
    real(code)
os._exit = report
sys.argv = ["promptlint", "check", "--", sys.argv[1]]
from promptlint.base import toml_io
parsed = []
_loads = toml_io.toml_loads
toml_io.toml_loads = lambda text: parsed.append(text) or _loads(text)
from promptlint.__main__ import entry
entry()
"""


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTLINT_", "PYTHON"))}
    env.update(PYTHONPATH=SRC, PROMPTLINT_DAEMON="0", XDG_CACHE_HOME=str(tmp_path / "cache"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_RUNTIME_DIR=str(tmp_path / "run"))
    return env


def _probe(tmp_path: Path, template: Path, edit: str) -> dict:
    template.write_text(f"Current time: {{{{ now }}}}\nYou are the Acme assistant ({edit}).\n"
                        "Answer questions about orders, shipping and returns in a few friendly sentences, and cite the policy.\n"
                        "{{ question }}\n", encoding="utf-8")  # over a block of shared text after the clock
    r = subprocess.run([sys.executable, "-c", PROBE, template.name], cwd=tmp_path, env=_env(tmp_path), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 1 and "M101" in r.stdout, r.stderr  # the clock before the prompt: one finding
    return json.loads(r.stderr.rsplit("PROBE ", 1)[1])


def test_a_one_template_check_traverses_its_start_up_in_no_middle_or_full_collection(tmp_path):
    """The start imports ~280 modules whose objects all survive: with the default thresholds
    (700, 10, 10) the run made ~50 young and 4 middle collections over them. A check now makes at
    most a couple of young ones and no other (gc.set_threshold in the front door)."""
    template = tmp_path / "one.j2"
    _probe(tmp_path, template, "first")  # the project's first run: its cache and the user's made
    seen = _probe(tmp_path, template, "second")
    young, middle, full = seen["collections"]
    assert middle == 0 and full == 0 and young <= 3, seen["collections"]


def test_a_one_template_check_parses_no_shipped_toml_once_it_is_copied(tmp_path):
    """The second cold run (its template edited) reads the rule files and the name lists from
    their JSON copies: no shipped TOML file is parsed (the project's own configuration still is),
    and the baseline's records (base.measurements: only `--baseline` needs them; the exit code is
    base.failing's) are not imported."""
    template = tmp_path / "one.j2"
    first = _probe(tmp_path, template, "first")
    shipped = {p.read_text(encoding="utf-8") for p in registry.rules_dir().glob("*.toml")}
    shipped.add((Path(SRC) / "promptlint" / "data" / "name_words.toml").read_text(encoding="utf-8"))
    assert len([t for t in first["parsed"] if t in shipped]) >= 2  # M101.toml (its wording) and the name lists
    second = _probe(tmp_path, template, "second")
    assert [t[:40] for t in second["parsed"] if t in shipped] == []
    assert "promptlint.base.measurements" not in second["modules"]


def test_a_one_template_check_imports_only_the_reporter_it_writes_with(tmp_path):
    """`full` (the default) is imported alone: --output-format's choices (the package's formats,
    each module imported to read its FORMAT) are found only when argparse needs them."""
    seen = _probe(tmp_path, tmp_path / "one.j2", "first")
    reporters = {m for m in seen["modules"] if m.startswith("promptlint.report.")}
    assert "promptlint.report.full" in reporters
    assert not reporters & {f"promptlint.report.{name}" for name in
                            ("concise", "github", "gitlab", "json_format", "json_lines", "markdown", "rdjson", "sarif")}


def test_a_format_named_on_the_command_line_is_imported_alone(tmp_path):
    """`--output-format sarif`: argparse asks whether the value is a choice; a format whose module
    bears its name answers alone, so the other eight reporters are not imported to accept it."""
    template = tmp_path / "one.j2"
    template.write_text("Current time: {{ now }}\nYou are the Acme assistant.\nAnswer questions about orders, "
                        "shipping and returns in a few friendly sentences, and cite the policy.\n{{ question }}\n",
                        encoding="utf-8")
    probe = PROBE.replace('sys.argv = ["promptlint", "check", "--", sys.argv[1]]',
                          'sys.argv = ["promptlint", "check", "--output-format", "sarif", "--", sys.argv[1]]')
    r = subprocess.run([sys.executable, "-c", probe, template.name], cwd=tmp_path, env=_env(tmp_path), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 1 and '"ruleId": "M101"' in r.stdout, r.stderr
    seen = json.loads(r.stderr.rsplit("PROBE ", 1)[1])
    assert sorted(m for m in seen["modules"] if m.startswith("promptlint.report.")) == [
        "promptlint.report.locations", "promptlint.report.sarif", "promptlint.report.style"]  # and its helpers


def test_the_output_format_choices_are_still_every_format(tmp_path):
    """What argparse shows and accepts is the package's formats, found on demand."""
    from promptlint import report

    env = _env(tmp_path)
    r = subprocess.run([sys.executable, "-m", "promptlint", "check", "--output-format", "nope", "x.j2"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "(choose from " + ", ".join(repr(name) for name in report.formats()) + ")" in r.stderr
    r = subprocess.run([sys.executable, "-m", "promptlint", "check", "--help"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert "--output-format {" + ",".join(report.formats()) + "}" in r.stdout
    assert report._named("json-lines").FORMAT == "json-lines"  # its module bears its name
    assert report._named("json") is None and report._named("style") is None  # json_format's; a helper declares none
    assert report.get("json").FORMAT == "json"


def test_a_second_check_compiles_no_dataclass_method(tmp_path):
    """The first run compiles the methods its ~50 dataclasses generate (~280 texts) and keeps their
    code in the user cache; the next run (its template edited) compiles none of them."""
    template = tmp_path / "one.j2"
    first = _probe(tmp_path, template, "first")
    assert first["compiled"] > 100
    assert _probe(tmp_path, template, "second")["compiled"] == 0


DATACLASS = """
from dataclasses import dataclass, field
from typing import Optional, Tuple

@dataclass(frozen=True)
class Frozen:
    index: int
    text: str = "x"
    parts: Tuple[int, ...] = ()
    other: Optional[int] = field(default=None, compare=False)

@dataclass(order=True)
class Ordered:
    a: int
    b: list = field(default_factory=list)
"""


def _made(tmp_path, name: str) -> dict:
    import types

    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(DATACLASS, str(tmp_path / f"{name}.py"), "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module.__dict__


def _methods(cls) -> dict:
    return {k: (v.__code__.co_code, v.__code__.co_consts, v.__code__.co_names, v.__code__.co_varnames, v.__defaults__,
                v.__kwdefaults__, getattr(v, "__annotations__", None))
            for k, v in vars(cls).items() if callable(v) and hasattr(v, "__code__")}


def test_kept_dataclass_code_makes_the_same_classes(tmp_path, monkeypatch):
    """Compiled afresh, taken from the table, and read back from the user cache: the same methods
    (code, constants, defaults, annotations) and the same behaviour as plain dataclasses."""
    import dataclasses

    from promptlint.project import dataclass_code

    from promptlint.project import cache as cache_mod

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(cache_mod, "_SECRET", [])  # this test's user cache keeps its own secret
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # whatever the suite runs under
    monkeypatch.setattr(dataclass_code, "_TABLE", {})
    monkeypatch.setattr(dataclass_code, "_NEW", [0])
    plain = _made(tmp_path, "plain_records")
    dataclass_code.install()
    try:
        fresh = _made(tmp_path, "fresh_records")
        assert dataclass_code._NEW[0] >= 10
        dataclass_code.save()
        dataclass_code._TABLE.clear()
        dataclass_code.uninstall()
        dataclass_code.install()  # reads the kept table
        assert len(dataclass_code._TABLE) >= 10
        kept = _made(tmp_path, "kept_records")
        assert dataclass_code._NEW[0] == 0  # nothing compiled
    finally:
        dataclass_code.uninstall()
    assert not hasattr(dataclasses, "exec")
    for made in (fresh, kept):
        for name in ("Frozen", "Ordered"):
            assert _methods(made[name]) == _methods(plain[name])
        f = made["Frozen"](3, "y", (1, 2), other=9)
        assert repr(f) == "Frozen(index=3, text='y', parts=(1, 2), other=9)"
        assert f == made["Frozen"](3, "y", (1, 2), other=1) and hash(f) == hash(made["Frozen"](3, "y", (1, 2)))
        with pytest.raises(dataclasses.FrozenInstanceError):
            f.index = 4
        assert dataclasses.replace(f, index=5).index == 5
        assert made["Ordered"](1) < made["Ordered"](2) and made["Ordered"](1).b == []


def test_a_tampered_or_foreign_table_is_not_read(tmp_path, monkeypatch):
    """The kept table is authenticated under the user's cache secret: an edited byte, or a table
    written under another secret, is ignored (the texts are compiled as before)."""
    from promptlint.project import cache as cache_mod
    from promptlint.project import dataclass_code

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(dataclass_code, "_TABLE", {"def __create_fn__():\n def f():\n  return 1\n return f": compile("1", "<string>", "eval")})
    monkeypatch.setattr(dataclass_code, "_NEW", [1])
    monkeypatch.setattr(cache_mod, "_SECRET", [])
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # whatever the suite runs under
    dataclass_code.save()
    path = Path(dataclass_code._path()[1])
    assert len(dataclass_code._read()) == 1
    data = bytearray(path.read_bytes())
    data[-5] ^= 1
    path.write_bytes(bytes(data))
    assert dataclass_code._read() == {}
    dataclass_code._NEW[0] = 1
    dataclass_code.save()
    assert len(dataclass_code._read()) == 1
    secret = tmp_path / "cache" / "promptlint" / "secret"
    secret.write_text("01" * 32, encoding="utf-8")  # another secret than the one the table was written under
    assert dataclass_code._read() == {}
    secret.unlink()  # no secret: nothing is trusted
    assert dataclass_code._read() == {}


def test_a_table_over_its_bound_keeps_only_the_texts_its_process_ran(tmp_path, monkeypatch):
    """Texts of dataclasses that changed pile up run after run; past the bound, the table written
    holds only what this process executed (and nothing when even that is over it)."""
    from promptlint.project import cache as cache_mod
    from promptlint.project import dataclass_code

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(cache_mod, "_SECRET", [])
    stale = {f"def __create_fn__():\n def f():\n  return {n}\n return f": compile(str(n), "<string>", "eval") for n in range(400)}
    monkeypatch.setattr(dataclass_code, "_TABLE", dict(stale))
    monkeypatch.setattr(dataclass_code, "_USED", set())
    monkeypatch.setattr(dataclass_code, "_NEW", [0])
    used = "def __create_fn__():\n def g():\n  return -1\n return g"
    namespace: dict = {}
    dataclass_code._compiled_exec(used, {}, namespace)
    assert namespace["__create_fn__"]()() == -1 and dataclass_code._NEW[0] == 1
    monkeypatch.setattr(dataclass_code, "_MAX_BYTES", len(__import__("marshal").dumps(stale)) // 2)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # PYTHONDONTWRITEBYTECODE: nothing written
    dataclass_code.save()
    assert dataclass_code._read() == {}
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    dataclass_code.save()
    assert list(dataclass_code._read()) == [used]


def test_the_forwarding_client_hashes_without_loading_openssl(tmp_path):
    """The forwarding client names the socket (a sha256 of the root and the installation) and
    stamps promptlint's files with the interpreter's builtin sha256: neither hashlib nor its
    OpenSSL module (_hashlib, a few ms to load) is imported on the way to a daemon."""
    probe = ("import json, sys\nfrom promptlint.daemon import client, identity, protocol\n"
             "assert client.forward_argv(['check', '--', 'one.j2']) == client.IN_PROCESS\n"
             "root = client.project()[0]\nident = identity.identity()\npath = protocol.socket_path(root, create=True)\n"
             "print(json.dumps({'hashlib': [m for m in ('hashlib', '_hashlib') if m in sys.modules],"
             " 'code': ident['code'], 'key': identity.installation_key(), 'root': str(root), 'socket': path.name}))\n")
    import tempfile

    runtime = tempfile.mkdtemp(prefix="pls")  # short: a socket path holds 108 bytes
    os.chmod(runtime, 0o700)
    env = dict(_env(tmp_path), PROMPTLINT_DAEMON="", XDG_RUNTIME_DIR=runtime)  # none runs; stdin/stdout are pipes: none starts
    r = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout)
    assert seen["hashlib"] == []
    # the same digests hashlib gives (a client and a daemon of other Pythons must still agree)
    import hashlib

    from promptlint.base import code_files

    parts: list = []
    for root in (Path(code_files.__file__).parent.parent, code_files.rules_dir()):
        code_files._stamp_tree(str(root), parts)
    assert seen["code"] == hashlib.sha256("\n".join(sorted(parts)).encode("utf-8")).hexdigest()
    from promptlint.daemon import identity

    key = hashlib.sha256(json.dumps(identity.installation(), sort_keys=True).encode("utf-8")).hexdigest()[:16]
    assert seen["key"] == key
    assert seen["socket"] == hashlib.sha256(os.fsencode(seen["root"]) + b"\0" + key.encode()).hexdigest()[:24] + ".sock"
    import shutil

    shutil.rmtree(runtime, ignore_errors=True)


def test_a_shipped_toml_file_is_read_from_its_copy_until_it_changes(tmp_path, monkeypatch):
    """``toml_io.shipped``: parsed once, then read from the JSON copy (no parse); an edit (another
    size or mtime) is parsed again and its new content returned; a file with a date (JSON cannot
    hold it) is parsed each time, and gives the date."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".user-cache"))
    parsed = []
    real = toml_io.toml_loads
    monkeypatch.setattr(toml_io, "toml_loads", lambda text: parsed.append(1) or real(text))
    rule = tmp_path / "X1.toml"
    rule.write_text('code = "X1"\nname = "x"\n[data.wording]\nlost = "{n} blocks"\n', encoding="utf-8")
    first = toml_io.shipped(rule)
    assert first == {"code": "X1", "name": "x", "data": {"wording": {"lost": "{n} blocks"}}} and len(parsed) == 1
    assert toml_io.shipped(rule) == first and len(parsed) == 1
    rule.write_text('code = "X1"\nname = "renamed"\n', encoding="utf-8")
    os.utime(rule, ns=(1_000_000_000, 1_000_000_000))  # another mtime whatever the clock's resolution
    assert toml_io.shipped(rule) == {"code": "X1", "name": "renamed"} and len(parsed) == 2
    assert len(list((tmp_path / ".user-cache" / "promptlint" / "toml").iterdir())) == 1  # the earlier copy removed
    dated = tmp_path / "dated.toml"
    dated.write_text("when = 2026-01-02\n", encoding="utf-8")
    import datetime

    assert toml_io.shipped(dated) == {"when": datetime.date(2026, 1, 2)} and len(parsed) == 3
    assert toml_io.shipped(dated) == {"when": datetime.date(2026, 1, 2)} and len(parsed) == 4


def test_the_rule_files_read_through_their_copies_hold_what_the_files_say(tmp_path, monkeypatch):
    """Every shipped rule file and the name lists: the copy's content equals a direct parse."""
    for path in sorted(registry.rules_dir().glob("*.toml")) + [Path(SRC) / "promptlint" / "data" / "name_words.toml"]:
        direct = toml_io.toml_loads(path.read_text(encoding="utf-8"))
        assert toml_io.shipped(path) == direct  # parsed, copy written
        assert toml_io.shipped(path) == direct  # from the copy


def _walks(monkeypatch) -> list:
    walked = []
    real = safe_write.walk

    def counting(*a, **k):
        walked.append(1)
        return real(*a, **k)

    monkeypatch.setattr(safe_write, "walk", counting)
    return walked


def _entry(cache, n: int, size: int = 1000) -> None:
    cache.put(f"{n:02x}" * 32, [{"pad": "x" * size}], [])


def test_the_cache_is_listed_only_when_its_estimated_size_passes_the_limit(tmp_path, monkeypatch):
    """After a run that wrote, prune lists the cache directory only when the memo (the size last
    found plus what runs wrote since) passes the limit: the first run lists it (no memo), the next
    ones do not, and one whose estimate passes the limit lists it and evicts the oldest entries."""
    walked = _walks(monkeypatch)
    limit = 10_000
    for n in range(3):
        run = cache_mod.Cache(tmp_path)
        _entry(run, n)
        run.prune(limit)
    assert len(walked) == 1  # the first run, which had no memo
    entries = tmp_path / cache_mod.DIR_NAME
    count = lambda: sum(1 for p in entries.rglob("*.json") if p.parent.parent.name == "entries")  # noqa: E731
    assert count() == 3
    for n in range(3, 12):  # ~1 KB each: the estimate passes 10 KB at the tenth entry
        run = cache_mod.Cache(tmp_path)
        _entry(run, n)
        run.prune(limit)
    assert len(walked) == 2
    assert count() < 12  # the oldest were evicted (to 80% of the limit), and the cache stays under it
    assert sum(p.stat().st_size for p in entries.rglob("*.json") if p.parent.parent.name == "entries") <= limit


def test_the_cache_is_listed_every_hundred_writing_runs_whatever_the_memo_says(tmp_path, monkeypatch):
    walked = _walks(monkeypatch)
    for n in range(cache_mod._WALK_EVERY + 2):
        run = cache_mod.Cache(tmp_path)
        _entry(run, n % 200, size=10)
        run.prune(1 << 30)
    assert len(walked) == 2  # the first run, and the one after _WALK_EVERY runs without a walk


def test_what_workers_write_counts_in_the_drivers_estimate(tmp_path, monkeypatch):
    """A run whose files were analysed in forked workers adds the bytes they wrote to its own
    (each unit's count comes back with its results), so prune's estimate holds every entry the
    run wrote, not only the driver's manifest."""
    from promptlint.driver.lint import lint
    from promptlint.project.config import load_settings

    monkeypatch.chdir(tmp_path)
    (tmp_path / "promptlint.toml").write_text("# the project root\n", encoding="utf-8")
    files = [tmp_path / f"t{i}.j2" for i in range(8)]
    for i, f in enumerate(files):
        # ~3 KB each: enough bytes in all that the driver forks its workers (parallel.heavy_enough)
        f.write_text(f"Current time: {{{{ now }}}}\nTemplate {i}.\n" + "You help customers with orders.\n" * 100
                     + "{{ question }}\n", encoding="utf-8")
    seen = []
    real = cache_mod.Cache.prune
    monkeypatch.setattr(cache_mod.Cache, "prune", lambda self, limit=None: seen.append((self.written, os.getpid())) or real(self, limit))
    pids = []
    from promptlint.driver import lint as lint_mod

    real_merge = lint_mod._merge
    monkeypatch.setattr(lint_mod, "_merge", lambda run, out: pids.append(out.pid) or real_merge(run, out))
    lint([str(tmp_path)], load_settings(None, tmp_path), jobs=2)
    assert pids and os.getpid() not in pids  # analysed in forked workers
    entries = [p for p in (tmp_path / cache_mod.DIR_NAME).rglob("*.json") if p.parent.parent.name == "entries"]
    assert len(entries) == len(files)
    written, pid = seen[-1]
    assert pid == os.getpid() and written >= sum(p.stat().st_size for p in entries)


@pytest.mark.parametrize("text", ["Hello world, hello again: the same words twice.", "ünïcödé ✓ 🙂 " * 3])
def test_a_tokens_text_is_decoded_once_per_id(text):
    """The fast engine memoises a single token's text (tokens.token_text asks for each token of a
    render, and the daemon for the same ones again): the same texts as an unmemoised decode, and
    the second ask decodes nothing."""
    from promptlint.tokenization import tokens

    tok = tokens.load(tokens.resolve(None))
    engine = tok._tok
    if not hasattr(engine, "_tiny"):
        pytest.skip("the embedded tokenizer is not served by the fast engine here (PROMPTLINT_FAST_TOKENIZER=0)")
    ids = tok.encode(text).ids
    texts = [tok.token_text(i) for i in ids]
    # the engine's own decode, proven against tokenizers' for every id when its form was built
    # (promptlint.fastbpe.proof); the real model is not built here (the pool's tokenizer is shared)
    assert texts == engine.decode_each(ids) and "".join(texts) == text
    decoded = []
    real = engine.decode_each
    engine.decode_each = lambda *a: decoded.append(1) or real(*a)
    try:
        assert [tok.token_text(i) for i in ids] == texts and decoded == []
    finally:
        del engine.decode_each


def test_the_rules_directory_is_resolved_once_per_process(monkeypatch):
    """Each finding's rule is looked up through rules_dir(): resolving it (realpath of the package
    and of promptlint._rules) on every lookup was 4% of a cold run. A second lookup resolves nothing."""
    import os.path

    from promptlint.base import code_files

    registry.get("M101"), registry.get("M102")  # the first: resolved and parsed (or already, earlier in this process)
    calls = []
    real = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda *a, **k: calls.append(a) or real(*a, **k))
    for code in ("M101", "M102", "M101"):
        assert registry.get(code).code == code
    assert code_files.rules_dir() == registry.rules_dir() and code_files.rules_dir().name in ("rules", "_rules")
    assert calls == []
