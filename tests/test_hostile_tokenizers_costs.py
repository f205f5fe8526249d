"""Hostile tokenizers and small inputs with large costs (issue 27, families 3 and 5).

- A model directory committed in a pull request brings its own tokenizer.json: a real small
  tokenizer (tests/data) whose pre-tokenizer regex backtracks without end, or panics in the
  regex engine (a Rust ``PanicException``, a ``BaseException``). The run ends, each file of that
  directory is one E-finding, the template beside it is still reported, no traceback, no
  "internal error" — with one process and with workers.
- 30 tiny chat templates with distinct special-token texts hold a bounded memory (the embedded
  tokenizer's copies are shared and capped).
- A Parquet trace of a few KB whose dictionary-encoded column decodes to gigabytes is refused
  in one line, within a bounded memory.
- A render under max-output tokenized for every variant: one E006 (max-encoded-tokens).
- ``check --baseline`` exports only what a lint run can read.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from small_tokenizers import mini_qwen

SLOW_REGEX = "(?:a|a){1,20}[^a]"  # exponential per start position, each match attempt under the retry limit
PANIC_REGEX = "^(a+)+c"  # trips Oniguruma's retry limit: a Rust panic
# a template that renders a hazard the checks report (M101: a volatile value before the shared prefix)
APP_TEMPLATE = "Time: {{ timestamp }}\n" + "You are the support assistant of a shop. Be polite.\n" * 20 + "Q: {{ question }}\n"
APP_SAMPLES = """[variables]
timestamp = { value = "2024-05-01T10:00:00Z", kind = "volatile", sub-kind = "timestamp", variant = "2024-05-01T10:00:07Z" }
question = { value = "Where is my order?", kind = "per-request", variant = "Can I return a tent?" }
"""


def _model_dir(root: Path, name: str, regex: str, run_of_a: int) -> Path:
    """A model directory: qwen2.5's tokenizer.json (cut to a small vocabulary: the regex, not the
    vocabulary, is the hazard) with its Split regex replaced, and a chat template whose render
    carries ``run_of_a`` letters a and a final b."""
    data = json.loads(mini_qwen())
    data["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = regex
    d = root / name
    d.mkdir(parents=True)
    (d / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    template = "{% for m in messages %}<|im_start|>{{ m.role }}\n" + "a" * run_of_a + "b{{ m.content }}<|im_end|>\n{% endfor %}"
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>", "chat_template": template}
    (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return d


def _app_template(root: Path) -> None:
    (root / "prompts").mkdir(parents=True, exist_ok=True)
    (root / "prompts" / "support.j2").write_text(APP_TEMPLATE, encoding="utf-8")
    (root / "prompts" / "support.samples.toml").write_text(APP_SAMPLES, encoding="utf-8")


def _check(root: Path, *args: str, timeout: float = 120):
    return subprocess.run(
        [sys.executable, "-m", "promptlint", "check", "--no-daemon", "--no-cache", "--output-format", "json", *args],
        cwd=root, capture_output=True, text=True, timeout=timeout,
    )


def _by_path(doc) -> dict:
    out: dict = {}
    for f in doc["findings"] + doc.get("errors", []):
        out.setdefault(f["path"], []).append(f["code"])
    return out


def _no_crash_text(r, in_child: bool = True) -> None:
    for text in (r.stdout, r.stderr):
        assert "Traceback" not in text and "internal error" not in text and "PicklingError" not in text
        if in_child:  # the Rust runtime's own panic message stays in the child that ran the tokenizer
            assert "panicked at" not in text


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_backtracking_regex_in_a_model_directory_ends_as_one_finding_and_the_rest_is_reported(tmp_path, jobs):
    root = tmp_path / "p"
    root.mkdir()
    (root / "promptlint.toml").write_text("analysis-timeout = 2\n", encoding="utf-8")
    _model_dir(root, "slow-model", SLOW_REGEX, 3000)  # minutes of backtracking per encode
    _app_template(root)
    r = _check(root, "--jobs", jobs)
    assert r.returncode == 1, r.stderr
    _no_crash_text(r)
    doc = json.loads(r.stdout)
    found = _by_path(doc)
    assert found["slow-model"] == ["E006"]
    [e006] = [f for f in doc["errors"] if f["path"] == "slow-model"]
    assert "slow-model/tokenizer.json" in e006["message"] and "did not finish" in e006["message"]
    assert found["prompts/support.j2"] == ["M101"]


def test_many_backtracking_tokenizers_cost_the_run_a_few_deadlines(tmp_path):
    """Each hostile tokenizer is a different file: after two of them ran out of time, the others
    are not run (an E006 each, saying so), so the run's time does not grow with their number."""
    root = tmp_path / "p"
    root.mkdir()
    (root / "promptlint.toml").write_text("analysis-timeout = 1\n", encoding="utf-8")
    for i in range(4):
        _model_dir(root, f"slow-{i}", SLOW_REGEX + "|z{%d}" % (i + 1), 3000)  # distinct contents: four tokenizers
    _app_template(root)
    r = _check(root, "--jobs", "1")
    assert r.returncode == 1, r.stderr
    _no_crash_text(r)
    doc = json.loads(r.stdout)
    messages = {f["path"]: f["message"] for f in doc["errors"]}
    assert sorted(messages) == [f"slow-{i}" for i in range(4)]
    assert sum("did not finish within 6 s" in m for m in messages.values()) == 2
    assert sum("was not run: 2 unvetted tokenizers of this run already ran out of time" in m for m in messages.values()) == 2
    assert _by_path(doc)["prompts/support.j2"] == ["M101"]


def test_a_model_directory_linted_alone_runs_its_unvetted_tokenizer_in_the_child(tmp_path):
    """One path, one model directory: planned like many (its tokenizer needs the deadline)."""
    root = tmp_path / "p"
    root.mkdir()
    (root / "promptlint.toml").write_text("# the project root\n", encoding="utf-8")
    _model_dir(root, "panic-model", PANIC_REGEX, 100)
    r = _check(root, "--jobs", "1", "panic-model")
    _no_crash_text(r)
    [error] = json.loads(r.stdout)["errors"]
    assert error["code"] == "E002" and "PanicException" in error["message"]


def _panic_project(root: Path) -> Path:
    root.mkdir()
    _model_dir(root, "panic-model", PANIC_REGEX, 100)
    _app_template(root)
    # a second model directory with the same hostile tokenizer: one E-finding each
    second = _model_dir(root, "panic-model-2", PANIC_REGEX, 100)
    shutil.copyfile(root / "panic-model" / "tokenizer.json", second / "tokenizer.json")
    return root


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_regex_that_panics_in_a_model_directory_is_one_finding_per_file(tmp_path, jobs):
    root = _panic_project(tmp_path / "p")
    r = _check(root, "--jobs", jobs)
    assert r.returncode == 1, r.stderr
    _no_crash_text(r)
    found = _by_path(json.loads(r.stdout))
    assert found["panic-model"] == ["E002"] and found["panic-model-2"] == ["E002"]
    assert found["prompts/support.j2"] == ["M101"]
    message = [f for f in json.loads(r.stdout)["errors"] if f["path"] == "panic-model"][0]["message"]
    assert "PanicException" in message and "panic-model/tokenizer.json" in message


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_pinned_tokenizer_that_panics_in_this_process_is_one_finding_per_file(tmp_path, jobs):
    """A pinned tokenizer is trusted and runs in the process (and in forked workers): its panic,
    a BaseException, still costs only the files whose prompt trips it, never a traceback or a
    PicklingError from a worker."""
    root = tmp_path / "p"
    root.mkdir()
    d = _model_dir(root, "pinned", PANIC_REGEX, 100)
    sha = hashlib.sha256((d / "tokenizer.json").read_bytes()).hexdigest()
    (root / "promptlint.toml").write_text(f'tokenizer = "pinned/tokenizer.json"\ntokenizer-sha256 = "{sha}"\n',
                                          encoding="utf-8")
    for i in range(4):  # enough files for workers (parallel.MIN_FILES)
        (root / f"t{i}.j2").write_text("a" * 80 + "b {{ name }}\n{# file %d #}" % i, encoding="utf-8")
    (root / "plain.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    r = _check(root, "--jobs", jobs)
    _no_crash_text(r, in_child=False)  # in this process, Rust prints its panic message to stderr itself
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    found = _by_path(doc)
    assert all(found[f"t{i}.j2"] == ["E002"] for i in range(4)), found
    assert "plain.j2" not in found and doc["files"] == 6  # reported: analysed, nothing found


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_configured_unpinned_tokenizer_is_run_where_a_deadline_stops_it(tmp_path, jobs):
    """`tokenizer = ...` without its pin may come from the pull request too: with unvetted regexes
    it runs in a child, so a panic is each file's E002 and the Rust message stays in the child."""
    root = tmp_path / "p"
    root.mkdir()
    _model_dir(root / "vendor", "tok", PANIC_REGEX, 100)
    (root / "promptlint.toml").write_text('tokenizer = "vendor/tok/tokenizer.json"\nexclude = ["vendor/**"]\n',
                                          encoding="utf-8")
    for i in range(4):
        (root / f"t{i}.j2").write_text("a" * 80 + "b {{ name }}\n{# file %d #}" % i, encoding="utf-8")
    (root / "plain.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    r = _check(root, "--jobs", jobs)
    _no_crash_text(r)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    found = _by_path(doc)
    assert {path: codes for path, codes in found.items()} == {f"t{i}.j2": ["E002"] for i in range(4)}
    assert doc["files"] == 5


def test_thirty_chat_templates_with_distinct_special_tokens_hold_a_bounded_memory(tmp_path):
    root = tmp_path / "p"
    for i in range(30):
        d = root / f"m{i:02d}"
        d.mkdir(parents=True)
        template = ("{% for m in messages %}<|start_" + str(i) + "|>{{ m.role }}\n{{ m.content }}<|end_" + str(i)
                    + "|>\n{% endfor %}")
        (d / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}), encoding="utf-8")
    code = ("import resource, subprocess, sys\n"
            "r = subprocess.run([sys.executable, '-m', 'promptlint', 'check', '--no-daemon', '--no-cache', '--jobs', '1',"
            " '--output-format', 'json', '.'], capture_output=True, text=True)\n"
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=600)
    rc, peak_kb = (int(x) for x in out.stdout.split())
    assert rc == 0, out.stderr
    # one embedded tokenizer (~200 MB resident) and a few copies; a copy per template was ~920 MB
    assert peak_kb < 600 * 1024, f"peak RSS {peak_kb // 1024} MB"


def _parquet_bomb(path: Path, rows: int, value_bytes: int) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    big = pa.array(["x" * value_bytes])
    column = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), big)
    table = pa.table({"prompt": column, "request_id": pa.array([f"r{i}" for i in range(rows)])})
    pq.write_table(table, str(path), compression="zstd", use_dictionary=True)


def test_a_parquet_trace_that_decodes_to_gigabytes_is_refused_in_one_line(tmp_path):
    bomb = tmp_path / "trace.parquet"
    _parquet_bomb(bomb, 3000, 1_000_000)  # ~3 GB decoded
    assert bomb.stat().st_size < 64 * 1024
    limit = 2560 * 1024 * 1024  # address space: what pyarrow and the interpreter reserve, far below 3 GB decoded

    def cap_memory():  # today's reader would take 3 GB: fail fast instead of starving the machine
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = subprocess.Popen([sys.executable, "-m", "promptlint", "audit", str(bomb)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=cap_memory, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    finally:  # and its parse workers, if any are left
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
    r = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bomb) in lines[0] and "67,108,864 bytes" in lines[0], r.stderr
    assert "Traceback" not in r.stderr and "MemoryError" not in r.stderr


def test_a_parquet_row_larger_than_the_line_cap_is_skipped_and_counted(tmp_path):
    """A row whose list repeats a dictionary value past the JSONL line cap never becomes Python
    objects: that row is a row error, the others are read."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from promptlint.audit import sources
    from promptlint.base.jsonl import MAX_LINE_BYTES, LineError

    values = pa.DictionaryArray.from_arrays(pa.array([0] * 80, pa.int32()), pa.array(["y" * 1_000_000]))
    lists = pa.ListArray.from_arrays(pa.array([0, 80, 80], pa.int32()), values)  # row 1: 80 MB decoded; row 2: empty
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"chunks": lists, "n": [1, 2]}), str(path), compression="zstd")
    (n1, first), (n2, second) = list(sources.rows(sources.Shard(str(path))))
    assert 80 * 1_000_000 > MAX_LINE_BYTES
    assert (n1, n2) == (1, 2) and isinstance(first, LineError) and second == {"chunks": [], "n": 2}


def test_a_render_under_max_output_tokenized_for_every_variant_is_one_e006(tmp_path):
    # at a hundredth of the defaults (max-output 1,000,000 characters, max-encoded-tokens 2,000,000,
    # read below) and of the input: the same refusal without tokenizing millions of characters
    from promptlint.project.config import Settings

    assert (Settings().max_output, Settings().max_encoded_tokens) == (1_000_000, 2_000_000)
    root = tmp_path / "p"
    root.mkdir()
    (root / "promptlint.toml").write_text("max-output = 10000\nmax-encoded-tokens = 20000\n", encoding="utf-8")
    # 8,000 characters of text cl100k takes about a token per character, rendered before every message
    template = ('{{ "\\u00a4\\u0416\\u4e00\\U0001F600" * 2000 }}{% for m in messages %}<|im_start|>{{ m.role }}\n'
                "{{ m.content }}<|im_end|>\n{% endfor %}")
    (root / "tokenizer_config.json").write_text(json.dumps({"chat_template": template, "eos_token": "<|im_end|>"}),
                                                encoding="utf-8")
    _app_template(root)
    r = _check(root, "--jobs", "1")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    [e006] = [f for f in doc["errors"] if f["path"] == "tokenizer_config.json"]
    assert e006["code"] == "E006" and "max-encoded-tokens" in e006["message"] and "20,000" in e006["message"], e006
    assert _by_path(doc)["prompts/support.j2"] == ["M101"]


def test_a_small_budget_in_the_configuration_is_honoured(tmp_path):
    root = tmp_path / "p"
    _app_template(root)
    (root / "promptlint.toml").write_text("max-encoded-tokens = 50\n", encoding="utf-8")
    r = _check(root, "--jobs", "1")
    doc = json.loads(r.stdout)
    assert [(f["code"], "more than 50 tokens" in f["message"]) for f in doc["errors"]] == [("E006", True)]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")
def test_the_baseline_exports_only_what_a_lint_run_reads(tmp_path, cli, monkeypatch):
    from promptlint.project import git_tree

    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")

    def git(*args):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)

    root = tmp_path / "repo"
    _app_template(root)
    (root / "data").mkdir()
    (root / "data" / "weights.safetensors").write_bytes(os.urandom(1024))
    (root / "data" / "corpus.txt").write_text("word " * 700_000, encoding="utf-8")  # 3.5 MB: over the source cap
    (root / "prompts" / "header.txt").write_text("Shared header.\n", encoding="utf-8")  # an include: read
    (root / "promptlint.toml").write_text("# the project root\n", encoding="utf-8")
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    exported: list = []
    real_export = git_tree.export

    def observed(top, commit, dest, *args, **kwargs):
        out = real_export(top, commit, dest, *args, **kwargs)
        exported.extend(sorted(str(p.relative_to(dest)) for p in Path(dest).rglob("*") if p.is_file()))
        return out

    monkeypatch.setattr(git_tree, "export", observed)
    r = cli("check", "--no-cache", "--output-format", "json", "--baseline", "HEAD", cwd=root)
    assert r.code == 0, r.err  # the M101 of support.j2 exists at the baseline too: no regression
    assert exported == ["promptlint.toml", "prompts/header.txt", "prompts/support.j2", "prompts/support.samples.toml"]


def test_the_known_families_are_vetted_and_a_pattern_cannot_hide():
    """Every real tokenizer in tests/data is vetted as it is; a pattern is found however its key
    is spelled (a JSON escape) and at any depth; a vocabulary's own token `Regex` is no pattern."""
    from promptlint.tokenization import tokens
    from promptlint.tokenization.tokenizer_vetting import unknown_patterns

    data = Path(__file__).parent / "data" / "tokenizers"
    for path in sorted(data.glob("*/tokenizer.json")):
        assert unknown_patterns(path.read_text(encoding="utf-8")) == [], path
    assert unknown_patterns(tokens._embedded_json().decode("utf-8")) == []
    hidden = ('{"normalizer": {"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": '
              '{"\\u0052eg\\u0065x": "(a+)+$"}, "content": ""}]}, "model": {"vocab": {"Regex": 7, "\\"Regex": 8}}}')
    assert json.loads(hidden)["normalizer"]["normalizers"][0]["pattern"] == {"Regex": "(a+)+$"}
    assert unknown_patterns(hidden) == ["(a+)+$"]
