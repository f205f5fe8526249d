"""`check --jobs N`: files analysed in forked worker processes give the report one process gives,
byte for byte (promptlint.driver.parallel)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MISTRAL, QWEN
from promptlint.driver import lint as lint_mod
from promptlint.driver import parallel
from promptlint.tokenization import tokens
from promptlint.project.config import Settings
from promptlint.driver.lint import lint
from promptlint.pools.tokenizers import active as active_pool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")

CHAT = (
    "Today is {{ strftime_now('%d %B %Y') }}.\n"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CHAT_TEMPLATES = Path(__file__).parent / "data" / "chat_templates"
RULES = "\n".join(f"Rule {i}: answer the customer politely, cite the order number and the carrier." for i in range(40))


def _project(root: Path) -> Path:
    """Six application templates (hazards and clean ones, an include, a broken one) and three model
    directories sharing Qwen's tokenizer (the original, a copy, a symlink), Qwen configured for the templates."""
    prompts = root / "prompts"
    prompts.mkdir(parents=True)
    (root / "tok").mkdir()
    shutil.copyfile(QWEN, root / "tok" / "tokenizer.json")
    (root / "promptlint.toml").write_text('tokenizer = "tok/tokenizer.json"\n', encoding="utf-8")
    (prompts / "rules.txt").write_text(RULES + "\n", encoding="utf-8")
    texts = {
        "clock.j2": "Current time: {{ now }}\n" + RULES + "\nQuestion: {{ question }}\n",
        "clean.j2": RULES + "\nCustomer: {{ customer_name }}\nQuestion: {{ question }}\n",
        "include.j2": "You help customers.\n{% include 'rules.txt' %}\nQuestion: {{ question }}\n",
        "user.j2": "User id: {{ user_id }}\n" + RULES + "\nQuestion: {{ question }}\n",
        "docs.j2": RULES + "\n{% for d in documents %}[{{ loop.index }}] {{ d }}\n{% endfor %}Question: {{ question }}\n",
        "broken.j2": RULES + "\n{% if question %}\nQuestion: {{ question }}\n",
    }
    for name, text in texts.items():
        (prompts / name).write_text(text, encoding="utf-8")
    for i, how in enumerate(("original", "copy", "symlink")):
        d = root / "models" / f"m{i}"
        d.mkdir(parents=True)
        original = root / "models" / "m0" / "tokenizer.json"
        if how == "original":
            shutil.copyfile(QWEN, original)
        elif how == "copy":
            shutil.copyfile(original, d / "tokenizer.json")
        else:
            (d / "tokenizer.json").symlink_to(os.path.relpath(original, d))
        config = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>", "chat_template": CHAT}
        (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return root


def _check(root: Path, *args: str, env=None):
    return subprocess.run(
        [sys.executable, "-m", "promptlint", "check", "--no-daemon", "--no-cache", "--output-format", "json", *args],
        cwd=root, capture_output=True, text=True, env=dict(os.environ, **(env or {})), timeout=600,
    )


def test_workers_report_what_one_process_reports_byte_for_byte(tmp_path):
    root = _project(tmp_path / "p")
    one = _check(root, "--jobs", "1")
    two = _check(root, "--jobs", "2")
    by_env = _check(root, env={"PROMPTLINT_JOBS": "3"})
    assert one.returncode == 1, one.stderr
    report = json.loads(one.stdout)
    found = {(f["path"], f["code"]) for f in report["findings"] + report["errors"]}
    # what the project holds, independently known: a clock first, an unclosed `if`, and each model
    # directory's chat template printing the date before the conversation
    assert ("prompts/clock.j2", "M101") in found and ("prompts/broken.j2", "E001") in found
    assert {p for p, c in found if c == "M101" and p.startswith("models/")} == {
        f"models/m{i}/tokenizer_config.json" for i in range(3)}
    assert (two.returncode, two.stdout, two.stderr) == (one.returncode, one.stdout, one.stderr)
    assert (by_env.returncode, by_env.stdout, by_env.stderr) == (one.returncode, one.stdout, one.stderr)


def test_the_work_runs_in_other_processes_and_the_shared_tokenizer_is_parsed_once(tmp_path, monkeypatch):
    """Two groups of model directories (three sharing Qwen's tokenizer, two copies of Mistral's): each
    group is a unit for a forked worker (their pids), each distinct tokenizer is parsed once (counted
    by the workers, added to this process's count), the findings are those of a run in one process."""
    root = _project(tmp_path / "p")
    for i in (3, 4):
        d = root / "models" / f"m{i}"
        shutil.copytree(root / "models" / "m1", d)
        shutil.copyfile(MISTRAL, d / "tokenizer.json")
    monkeypatch.chdir(root)
    pids = tmp_path / "pids"
    real_unit = lint_mod._Run.unit

    def recorded(self, unit):
        with open(pids, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
        return real_unit(self, unit)

    monkeypatch.setattr(lint_mod._Run, "unit", recorded)
    for f in (QWEN, MISTRAL):
        active_pool().release(tokens.tokenizer_file_sha256(f))
    settings = Settings(root=root)  # no configured tokenizer: each model directory uses its own
    before = tokens.parse_count()
    two = lint(["models"], settings, use_cache=False, jobs=2)
    assert tokens.parse_count() - before == 2
    workers = {int(p) for p in pids.read_text(encoding="utf-8").split()}
    assert workers and os.getpid() not in workers
    one = lint(["models"], settings, use_cache=False, jobs=1)
    assert [f.to_dict() for f in two.findings] == [f.to_dict() for f in one.findings]
    assert sorted(f.path for f in one.findings if f.code == "M101") == [f"models/m{i}/tokenizer_config.json" for i in range(5)]


def test_a_worker_that_dies_leaves_its_files_to_this_process(tmp_path, monkeypatch):
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    parent = os.getpid()
    real_unit = lint_mod._Run.unit

    in_parent = []

    def dies_in_a_worker(self, unit):
        if os.getpid() != parent:
            os._exit(9)  # as the kernel's OOM killer would leave it
        in_parent.append(unit)
        return real_unit(self, unit)

    settings = Settings(root=root, tokenizer="tok/tokenizer.json")
    one = lint(["prompts"], settings, use_cache=False, jobs=2)  # ~14 kB of templates: analysed in one process
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)  # forked all the same: this test is about a worker dying
    monkeypatch.setattr(lint_mod._Run, "unit", dies_in_a_worker)
    two = lint(["prompts"], settings, use_cache=False, jobs=2)
    assert sum(len(items) for items, _, _ in in_parent) == 6  # every file, after the pool broke
    assert [f.to_dict() for f in two.findings + two.errors] == [f.to_dict() for f in one.findings + one.errors]
    assert {Path(f.path).name for f in one.findings if f.code == "M101"} >= {"clock.j2"}


def test_a_tokenizer_error_in_a_worker_stops_the_run_as_in_one_process(tmp_path):
    root = _project(tmp_path / "p")
    (root / "tok" / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "BPE"', encoding="utf-8")
    one = _check(root, "--jobs", "1", "prompts")
    two = _check(root, "--jobs", "2", "prompts")
    assert one.returncode == 2 and "tok/tokenizer.json" in one.stderr
    assert (two.returncode, two.stdout, two.stderr) == (one.returncode, one.stdout, one.stderr)


def test_jobs_must_be_a_whole_number(tmp_path):
    root = _project(tmp_path / "p")
    bad = _check(root, "--jobs", "0")
    assert bad.returncode == 2 and "--jobs" in bad.stderr and "Traceback" not in bad.stderr
    env = _check(root, env={"PROMPTLINT_JOBS": "many"})
    assert env.returncode == 2 and env.stderr.strip() == (
        "promptlint: error: PROMPTLINT_JOBS='many': expected a whole number of at least 1 (worker processes), or unset it")


def test_how_many_workers():
    assert parallel.workers_for(n_units=10, n_files=parallel.MIN_FILES - 1, requested=4) == 0  # too little work
    assert parallel.workers_for(n_units=10, n_files=10, requested=1) == 0
    assert parallel.workers_for(n_units=10, n_files=10, requested=None) == 0  # a library caller: this process
    assert parallel.workers_for(n_units=3, n_files=10, requested=8) == 3  # no more workers than units
    assert parallel.chunks(list(range(10)), 2) == [[k] for k in range(10)]
    assert [len(c) for c in parallel.chunks(list(range(100)), 2)] == [3] * 33 + [1]


def test_what_workers_found_is_remembered_and_answers_the_next_run(tmp_path):
    """The cache entries the workers wrote and the manifest the driver recorded from their results
    give the next run the same report, without analysing again."""
    root = _project(tmp_path / "p")
    reference = _check(root, "--jobs", "1")
    argv = [sys.executable, "-m", "promptlint", "check", "--no-daemon", "--output-format", "json", "--jobs", "2"]
    cold = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=600)
    warm = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=600)
    assert (cold.returncode, cold.stdout) == (warm.returncode, warm.stdout) == (reference.returncode, reference.stdout)
    manifests = list((root / ".promptlint_cache").rglob("manifests/*"))
    assert manifests, "the driver recorded the workers' results in the run manifest"


@pytest.mark.real_tokenizer_parse  # about the load: not the suite's memo of an earlier test's parse
def test_workers_that_would_each_pass_the_switch_volume_share_one_model_built_before_the_fork(tmp_path, monkeypatch):
    """The fast engine merges in Python until a process has encoded ``_SWITCH_CHARS`` characters, then
    builds the tokenizer's model (promptlint.fastbpe.engine). When the files each worker will render
    already pass that volume, the driver builds it once before forking: the workers share its memory
    (copy-on-write) instead of each building its own. The report is the one process's."""
    from promptlint.fastbpe import engine, form

    monkeypatch.setattr(engine, "_SWITCH_CHARS", 5_000)
    monkeypatch.setattr(engine, "_CHARS_PER_ENTRY", 0)  # the floor alone decides here
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    for i in range(8):  # 8 x ~3,300 characters between 2 workers: ~13,000 each, past 5,000
        (prompts / f"t{i}.j2").write_text(f"Current time: {{{{ now }}}}\n{RULES}\nQuestion {i}: {{{{ question }}}}\n",
                                          encoding="utf-8")
    log = tmp_path / "builds.log"
    real_build = form.build

    def logged(parts):  # forked workers inherit the patch: each process that builds says so in the file
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
        return real_build(parts)

    monkeypatch.setattr(form, "build", logged)
    settings = Settings(root=tmp_path)  # no tokenizer configured: the embedded one, shipped in the compact form
    active_pool().release(tokens.embedded_sha256())  # this test's own load
    parallel_report = lint([str(tmp_path)], settings, use_cache=False, jobs=2)
    assert log.read_text(encoding="utf-8").split() == [str(os.getpid())]  # once, here (before: once in each worker)
    active_pool().release(tokens.embedded_sha256())
    one = lint([str(tmp_path)], settings, use_cache=False, jobs=1)
    assert [f.to_dict() for f in parallel_report.findings] == [f.to_dict() for f in one.findings]
    assert len(parallel_report.findings) == 8  # each template's clock before the shared rules


@pytest.mark.real_tokenizer_parse  # about the load: not the suite's memo of an earlier test's parse
def test_chat_templates_small_on_disk_count_their_scenario_renders_in_the_plan_before_the_fork(tmp_path, monkeypatch):
    """A chat template of a few kB renders every built-in scenario: the driver's plan counts what the
    workers will encode (parallel.encode_volume), not the files' bytes. Four chat configurations
    (~25 kB of files in all, ~90,000 characters rendered and encoded) whose renders pass the switch volume in the workers: the model is
    built once here before the fork, not once in each worker after it merged that much in Python."""
    import tokenizers.models

    from promptlint.fastbpe import engine

    meta = json.loads((CHAT_TEMPLATES / "meta.json").read_text(encoding="utf-8"))["templates"]
    monkeypatch.setattr(engine, "_SWITCH_CHARS", 20_000)
    monkeypatch.setattr(engine, "_CHARS_PER_ENTRY", 0)  # the floor alone decides here
    names = ("deepseek-ai-DeepSeek-V3.1.jinja", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
             "Mistral-Small-3.2-24B-Instruct-2506.jinja", "unsloth-mistral-Devstral-Small-2507.jinja")
    for name in names:  # tokenizer_config.json files as Hugging Face ships them, no tokenizer.json beside them
        config = {"chat_template": (CHAT_TEMPLATES / name).read_text(encoding="utf-8"),
                  "bos_token": meta[name]["bos"], "eos_token": meta[name]["eos"]}
        d = tmp_path / "models" / name[:-len(".jinja")]
        d.mkdir(parents=True)
        (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "rules.j2").write_text(RULES + "\nQuestion: {{ question }}\n" + RULES + "\n", encoding="utf-8")
    paths = [str(p) for p in tmp_path.rglob("*") if p.is_file()]
    assert parallel.volume(paths) // 2 < 20_000  # the files' bytes alone: under the switch in each worker
    log = tmp_path / "builds.log"
    real_bpe = tokenizers.models.BPE

    def logged(vocab, merges, **kwargs):  # forked workers inherit the patch: each process that builds the model says so
        if merges:  # (a special-token copy's tiny byte-level model merges nothing: milliseconds)
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()}\n")
        return real_bpe(vocab, merges, **kwargs)

    monkeypatch.setattr(tokenizers.models, "BPE", logged)
    settings = Settings(root=tmp_path)  # the embedded tokenizer, shipped in the compact form
    active_pool().release(tokens.embedded_sha256())  # this test's own load
    parallel_report = lint([str(tmp_path)], settings, use_cache=False, jobs=2)
    assert log.read_text(encoding="utf-8").split() == [str(os.getpid())]  # once, here (on the bytes alone: once in each worker)
    active_pool().release(tokens.embedded_sha256())
    one = lint([str(tmp_path)], settings, use_cache=False, jobs=1)
    assert [f.to_dict() for f in parallel_report.findings] == [f.to_dict() for f in one.findings]
    assert parallel_report.files == 5 and not parallel_report.errors


def test_a_few_small_files_are_analysed_in_one_process(tmp_path, monkeypatch):
    """Forking workers costs more than a few small files take (a commit's Python modules: each worker
    would parse the modules they import again): under ``MIN_BYTES`` of source and no model directory,
    one process analyses them, whatever --jobs says."""
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    forked = []
    real_run = parallel.run
    monkeypatch.setattr(parallel, "run", lambda *a, **k: forked.append(1) or real_run(*a, **k))
    settings = Settings(root=root, tokenizer="tok/tokenizer.json")
    assert sum(p.stat().st_size for p in (root / "prompts").glob("*.j2")) < 16 * 1024  # what the check lints there
    small = lint(["prompts"], settings, use_cache=False, jobs=2)
    assert forked == []
    big = lint(["."], settings, use_cache=False, jobs=2)  # with the model directories: worth the workers
    assert forked == [1]
    assert len(big.findings) > len(small.findings) > 0


def test_chat_templates_go_out_before_application_templates_of_their_size_or_larger(tmp_path):
    """A chat template's file renders every built-in scenario: it goes out first, the larger of two
    first, so that the units a worker takes last are small application templates, not a chat
    template that leaves the other worker idle (parallel.heaviest_first)."""
    (tmp_path / "prompts").mkdir()
    small = tmp_path / "prompts" / "small.j2"
    small.write_text(RULES[:2000], encoding="utf-8")
    large = tmp_path / "prompts" / "large.j2"
    large.write_text(RULES * 2, encoding="utf-8")  # ~6 kB: more bytes than either chat template
    configs = []
    for name, text in (("short", CHAT), ("long", CHAT + "{# " + "x" * 1500 + " #}")):
        d = tmp_path / "models" / name
        d.mkdir(parents=True)
        (d / "tokenizer_config.json").write_text(json.dumps({"chat_template": text}), encoding="utf-8")
        configs.append(str(d / "tokenizer_config.json"))
    jinja = tmp_path / "chat.jinja"
    jinja.write_text(CHAT, encoding="utf-8")
    paths = [str(small), configs[0], str(large), str(jinja), configs[1]]
    assert os.path.getsize(large) > max(os.path.getsize(p) for p in configs + [str(jinja)])
    order = [paths[k] for k in parallel.heaviest_first(paths)]
    assert order[:3] == [configs[1], configs[0], str(jinja)]
    assert order[3:] == [str(large), str(small)]
