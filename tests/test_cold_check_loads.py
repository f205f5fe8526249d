"""What a cold one-template `check` loads besides its analysis (issue 33, the serial path): the
`tokenizers` extension module without the package's Python wrappers, no analyzer the file does not
need, the embedded tokenizer's compact form mapped (not copied) and summed once per state of its
file, and promptlint's code stamped once per run. Real subprocesses, the real cache, the embedded
tokenizer."""

from __future__ import annotations

import json
import mmap
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from import_probe import imported, probe

from promptlint.fastbpe import form, store

SRC = str(Path(form.__file__).parents[2])


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTLINT_", "PYTHON"))}
    env.update(PYTHONPATH=SRC, PROMPTLINT_DAEMON="0",
               XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_RUNTIME_DIR=str(tmp_path / "run"))
    return env


def _check(tmp_path: Path, edit: str) -> list:
    template = tmp_path / "one.j2"
    template.write_text(f"Current time: {{{{ now }}}}\nYou are the Acme assistant ({edit}).\n"
                        "Answer questions about orders, shipping and returns in a few friendly sentences.\n"
                        "{{ question }}\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-c", probe("check", "--", template.name)], cwd=tmp_path, env=_env(tmp_path),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "M101" in r.stdout, r.stderr  # the clock before the prompt: one finding
    return imported(r.stderr)


def test_a_one_template_check_loads_the_tokenizers_extension_alone_and_only_its_analyzers(tmp_path):
    """The fast engine needs `tokenizers.Tokenizer` (the tiny tokenizer) and the version: the
    extension module is loaded, the package's `__init__` (its implementations and component
    shims) is not; the Python, TypeScript, YAML and launch-configuration analyzers are not
    imported to lint a template."""
    _check(tmp_path, "first")  # the user cache made (the form's checksum note, the dataclass code)
    modules = set(_check(tmp_path, "second"))
    assert "tokenizers.tokenizers" in modules
    assert not {m for m in modules if m == "tokenizers" or m.startswith("tokenizers.implementations")}
    assert {"promptlint.analyzers.chat_template", "promptlint.analyzers.jinja_template"} <= modules
    assert not modules & {f"promptlint.analyzers.{name}" for name in ("python_source", "ts_source", "yaml_prompt",
                                                                      "launch_config")}


def test_the_package_imported_after_the_extension_alone_is_built_around_it(tmp_path):
    """A later `import tokenizers` (the real model, a parsed tokenizer.json) takes the module
    already loaded: the same classes either way, and a tokenizer made before works with them."""
    script = ("import sys\nfrom promptlint.fastbpe import native\nmod = native.module()\n"
              "assert 'tokenizers' not in sys.modules, sorted(sys.modules)\n"
              "tiny = mod.Tokenizer.from_str(open(sys.argv[1], encoding='utf-8').read())\n"
              "import tokenizers\nfrom tokenizers.models import BPE\n"
              "assert tokenizers.Tokenizer is mod.Tokenizer and tokenizers.__version__ == mod.__version__\n"
              "assert isinstance(tiny, tokenizers.Tokenizer) and isinstance(tiny.model, BPE)\n"
              "assert native.module() is mod\nprint(tiny.encode('Hello world').ids)\n")
    tiny = tmp_path / "tiny.json"
    tiny.write_bytes(bytes(store.packaged().views["tiny"]))
    r = subprocess.run([sys.executable, "-c", script, str(tiny)], env=_env(tmp_path), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) == len("Hello world")  # the tiny model merges nothing: one id a byte


def test_a_form_is_mapped_and_summed_once_per_state_of_its_file(tmp_path, monkeypatch):
    """The form is mapped (its parts are views of the file, nothing copied) and its CRC-32 computed
    on the first read only; a later read of the same file state trusts that sum. A form changed in
    place (another mtime and ctime) is summed again: a corrupted byte is caught, the form not used."""
    monkeypatch.setenv("PROMPTLINT_FAST_TOKENIZER_DIR", str(tmp_path / "forms"))
    (tmp_path / "forms").mkdir()
    copy = tmp_path / "copy.bpe"
    shutil.copyfile(store.PACKAGED, copy)
    sums = []
    real = form.zlib.crc32
    monkeypatch.setattr(form.zlib, "crc32", lambda data, *a: sums.append(len(data)) or real(data, *a))

    first = store._read(copy)
    assert first is not None and len(sums) == 1 and sums[0] > 5_000_000
    assert isinstance(first.views["table"].obj, mmap.mmap) and isinstance(first.views["keys"].obj, mmap.mmap)  # views of it
    assert list(Path(tmp_path / "forms").glob("*.checked"))
    again = store._read(copy)
    assert again is not None and len(sums) == 1  # the same state: not summed again
    assert again.source_sha256 == first.source_sha256 and bytes(again.views["tiny"]) == bytes(first.views["tiny"])

    time.sleep(0.05)  # a later write: the file's times move
    with open(copy, "r+b") as f:
        f.seek(os.path.getsize(copy) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    assert store._read(copy) is None and len(sums) == 2  # summed again: corrupted


def test_promptlint_code_is_stamped_once_per_run_unless_asked_afresh(monkeypatch):
    """The result cache and the templates' code cache key their entries by promptlint's code stamp:
    one pass over the package's files serves both; the daemon's identity still takes it afresh."""
    from promptlint.base import code_files
    from promptlint.project import cache
    from promptlint.render import code_cache

    monkeypatch.setattr(code_files, "_STAMP", [])
    monkeypatch.setattr(cache, "_CODE_STAMP", None)
    monkeypatch.setattr(code_cache, "_STAMP", [])
    passes = []
    real = code_files._stamp_tree
    package = str(Path(code_files.__file__).parent.parent)
    monkeypatch.setattr(code_files, "_stamp_tree", lambda d, parts: (d == package and passes.append(d)) or real(d, parts))
    stamp = cache.code_stamp()
    assert code_cache._code_stamp() == stamp and cache.code_stamp() == stamp and len(passes) == 1
    assert code_files.code_stamp() == stamp and len(passes) == 2  # the default: afresh (the daemon and its client)
    assert cache.code_stamp(fresh=True) == stamp and len(passes) == 3


def test_the_analyzers_said_to_have_no_tokenizer_dir_have_none():
    """``tokenizer_dir`` skips the analyzers in NO_TOKENIZER_DIR without importing them: each of
    the package's analyzers has one exactly when it is not in that set."""
    import importlib

    from promptlint import analyzers

    assert analyzers.NO_TOKENIZER_DIR < set(analyzers.ANALYZERS)
    for name in analyzers.ANALYZERS:
        assert hasattr(importlib.import_module(name), "tokenizer_dir") == (name not in analyzers.NO_TOKENIZER_DIR), name


def test_a_lazy_pattern_is_compiled_on_first_use_and_answers_as_the_pattern():
    import re

    from promptlint.base import lazy_re
    from promptlint.driver import suppress

    source = r"(?P<verb>[a-z]+)\s*(?:\[(?P<codes>[^\]]*)\])?"
    lazy = lazy_re.compile(source, re.I)
    assert lazy._compiled is None
    text = "Ignore[M101] and disable"
    assert [m.groupdict() for m in lazy.finditer(text)] == [m.groupdict() for m in re.finditer(source, text, re.I)]
    assert lazy.groupindex == re.compile(source, re.I).groupindex and lazy.pattern == source and lazy.flags & re.I
    assert lazy.compiled is lazy._compiled is not None
    # a converted module pattern still finds what it found
    assert suppress.PYTHON_RE.search("x = 1  # promptlint: ignore[M101]").group("codes") == "M101"


def test_a_name_pattern_with_a_final_star_matches_as_fnmatch_does_without_it(monkeypatch):
    """The name lists' wildcards are all `prefix*` (and `*`): compared as prefixes, the same answers
    as fnmatch's, and no fnmatch regex compiled for them on a cold run."""
    import fnmatch

    from promptlint.scenarios import names

    words = ["", "chunk", "chunks", "chunk_id", "xchunk", "memory", "memo", "a*b", "[x]", "doc?"]
    patterns = ["*", "chunk*", "memor*", "chunk", "*chunk", "ch*nk", "doc?", "[x]", "a*b*", "a*"]
    for w in words:
        for p in patterns:
            assert names._fits(w, p) == fnmatch.fnmatchcase(w, p), (w, p)
    asked = []
    monkeypatch.setattr(names.fnmatch, "fnmatchcase", lambda w, p: asked.append(p) or fnmatch.fnmatchcase(w, p))
    for w in words:
        for p in ("*", "chunk*", "memor*", "chunk"):
            names._fits(w, p)
    assert asked == []
