"""What a resident Workspace (the daemon, the language server) keeps between requests, and that it
only ever answers what recomputing would: after one Python module of a project changed, the re-check
parses that module alone (its importers' trees are kept by path and bytes), reads no unchanged
file to walk it, does not read back the run manifest it wrote itself, encodes no render it encoded
before, and does not walk the cache to measure it while its own writes are small. The reports are
the ones a run without any cache gives.

Work is counted through the functions that do it (wrapped, the real ones still run); no timing."""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path

from reference_tokenizers import of_file

from test_changed_file_path import QWEN, change, make_project

from promptlint.doors import bounded_io


def _past_the_racy_window():
    """A stamp taken within 2 s of a write is not trusted (the manifest's rule, and the walk's memo's):
    the test's files must be older than that, as a project's files are when someone edits one."""
    time.sleep(2.1)


def test_a_resident_recheck_parses_only_the_changed_module(tmp_path, check_in_memory, cli, monkeypatch):
    make_project(tmp_path)
    check_in_memory(cwd=tmp_path)  # the first request parses every module
    change(tmp_path / "app" / "prompts_1.py")
    texts = {p.read_text(encoding="utf-8"): p.name for p in (tmp_path / "app").glob("*.py")}
    parsed = []
    real = ast.parse

    def counting(source, *args, **kwargs):
        if isinstance(source, str) and source in texts:
            parsed.append(texts[source])
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    after = check_in_memory("--output-format", "json", cwd=tmp_path)
    # re-analysed: prompts_1, agent_1 and clients 1, 3, 5 (tests/test_changed_file_path.py); parsed: the one
    # that changed (before: prompts_1 and the three clients, whose trees were not kept)
    assert parsed == ["prompts_1.py"]
    monkeypatch.setattr(ast, "parse", real)
    cold = cli("check", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert (after.code, after.out) == (cold.code, cold.out)


def test_a_resident_recheck_reads_only_the_changed_file_to_walk_the_project(tmp_path, check_in_memory, cli, monkeypatch):
    make_project(tmp_path)
    _past_the_racy_window()
    check_in_memory(cwd=tmp_path)
    sniffed = []
    real = bounded_io.read_prefix
    monkeypatch.setattr(bounded_io, "read_prefix", lambda p, n: sniffed.append(Path(p).name) or real(p, n))
    check_in_memory(cwd=tmp_path)
    assert sniffed == []  # nothing changed: every verdict kept by its file's stamp (before: all 14 .py read)
    change(tmp_path / "app" / "prompts_1.py")
    (tmp_path / "app" / "late.py").write_text("import openai\n", encoding="utf-8")  # a new file is walked too
    (tmp_path / "app" / "client_0.py").write_text("print('no model call')\n", encoding="utf-8")  # no marker now
    after = check_in_memory("--output-format", "json", cwd=tmp_path)
    assert sorted(sniffed) == ["client_0.py", "late.py", "prompts_1.py"]
    monkeypatch.setattr(bounded_io, "read_prefix", real)
    cold = cli("check", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert (after.code, after.out) == (cold.code, cold.out)


def test_a_resident_process_reads_the_manifest_again_only_when_another_process_wrote_it(tmp_path, check_in_memory, cli,
                                                                                           monkeypatch):
    from promptlint.project import cache as cache_mod

    make_project(tmp_path)
    check_in_memory(cwd=tmp_path)
    reads = []
    real = cache_mod.Cache.read

    def counting(self, path, limit):
        if "manifests" in Path(path).parts:
            reads.append(Path(path).name)
        return real(self, path, limit)

    monkeypatch.setattr(cache_mod.Cache, "read", counting)
    check_in_memory(cwd=tmp_path)
    change(tmp_path / "app" / "prompts_0.py")
    check_in_memory(cwd=tmp_path)
    assert reads == []  # its own writes: kept, not read back (before: one read per request)
    change(tmp_path / "app" / "prompts_1.py")
    cli("check", cwd=tmp_path)  # another process records prompts_1 in the same manifest (the same settings)
    reads.clear()
    after = check_in_memory("--output-format", "json", cwd=tmp_path)
    assert len(reads) == 1  # the file changed under it: read again
    monkeypatch.setattr(cache_mod.Cache, "read", real)
    cold = cli("check", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert (after.code, after.out) == (cold.code, cold.out)


class _Counting:
    """The parsed tokenizer, every call passed through; counts the texts it is asked to encode."""

    def __init__(self, inner):
        self.inner, self.texts = inner, []

    def encode(self, text, **kw):
        self.texts.append(text)
        return self.inner.encode(text, **kw)

    def encode_batch(self, texts, **kw):
        self.texts.extend(texts)
        return self.inner.encode_batch(texts, **kw)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_resident_tokenizer_encodes_a_text_once_and_answers_as_tokenizers_does():
    from promptlint.pools.tokenizers import TokenizerPool, installed
    from promptlint.tokenization import tokens

    spec = tokens.resolve(str(QWEN))
    direct = of_file(QWEN)  # the independent answer (`tokenizers`' own parse, once per test process)
    texts = ["You are the support agent of Nordwind Outdoor. Never invent order numbers. " * 5,
             "Time: 2026-12-02 10:00\n" + "Answer in German, politely, and cite the order number. " * 3,
             "short"]
    with installed(TokenizerPool(resident=True)):
        tok = tokens.load(spec)
        counting = tok._tok = _Counting(tok._tok)
        first = [tok.encode(t) for t in texts]
        again = [tok.encode(t) for t in texts]
        batch = tok.encode_batch(texts + ["A new text the tokenizer has not seen before, long enough to keep."])
    # the two long texts once each; the short one (cheaper to encode than to remember) each time; the new one once
    assert counting.texts == texts + ["short"] + ["short", "A new text the tokenizer has not seen before, long enough to keep."]
    for t, a, b, c in zip(texts, first, again, batch):
        want = direct.encode(t, add_special_tokens=False)
        assert (a.ids, a.offsets) == (b.ids, b.offsets) == (c.ids, c.offsets) == (want.ids, [tuple(o) for o in want.offsets])
    a.ids.append(-1)  # a caller's list is its own: the memo is not changed through it
    assert tok.encode(texts[2]).ids == direct.encode(texts[2], add_special_tokens=False).ids
    assert tok.encode(texts[0]).ids == direct.encode(texts[0], add_special_tokens=False).ids


def test_a_transient_tokenizer_remembers_only_the_runs_recent_texts(monkeypatch):
    """A one-shot run's tokenizer (no resident pool) remembers what it encoded, within RUN_CHARS
    characters, least recently used going first: a repeat is not encoded again, an old text is."""
    from promptlint.pools.tokenizers import TokenizerPool, installed
    from promptlint.tokenization import encode_memo, tokens

    text = "You are the support agent of Nordwind Outdoor. " * 4
    other = "Answer in the customer's language, briefly and politely. " * 4
    monkeypatch.setattr(encode_memo, "RUN_CHARS", len(text) + len(other) - 1)  # room for one of them
    with installed(TokenizerPool()):
        tok = tokens.load(tokens.resolve(str(QWEN)))
        counting = tok._tok = _Counting(tok._tok)
        first = tok.encode(text)
        again = tok.encode(text)
        tok.encode(other)  # pushes ``text`` out
        tok.encode(text)
    assert counting.texts == [text, other, text]
    assert (first.ids, first.offsets) == (again.ids, again.offsets) and first.ids is not again.ids


def test_a_resident_process_walks_the_cache_for_its_size_only_when_its_writes_could_matter(tmp_path, monkeypatch):
    from promptlint.doors import safe_write
    from promptlint.driver.resident import ResidentMemo
    from promptlint.project.cache import Cache

    walks = []
    real = safe_write.walk
    monkeypatch.setattr(safe_write, "walk", lambda *a, **k: walks.append(1) or real(*a, **k))
    memo = ResidentMemo()

    def run(n, size, limit):
        cache = Cache(tmp_path)
        cache.kept = memo
        for k in range(n):
            cache.put(f"{time.time_ns():064x}{k}"[-64:], [{"pad": "x" * size}], [])
        cache.prune(limit)
        return sum(f.stat().st_size for f in (cache.dir / "entries").rglob("*.json"))

    held = run(4, 1000, 100_000)
    assert walks == [1]  # the first prune of the process measures the cache
    run(4, 1000, 100_000)
    assert walks == [1]  # ~8 kB by its own count, far under half of the cap: no walk
    total = run(60, 1000, 100_000)  # past half of the cap by its own count: measured again (and under the cap: kept)
    assert walks == [1, 1] and total > held
    total = run(60, 1000, 100_000)  # past the cap: measured and pruned to 80 % of it, as without the memo
    assert walks == [1, 1, 1] and total <= 80_000
