"""Issue 18 item 4: every deployed model at once. Two corpus tokenizers of different families
(Qwen2.5's byte-level BPE, Mistral v3's SentencePiece) configured as `tokenizers`; each model's
first divergent token and blocks are checked against a direct `tokenizers` encode of the test's
own render."""

from __future__ import annotations

import shutil

import pytest

from conftest import DATA, MISTRAL, QWEN, shared_prefix
from reference_tokenizers import of_file
from test_baseline import HEAD, QUESTION, SAMPLES, STAMP, git

MODELS = {"qwen": QWEN, "mistral": MISTRAL}
# a French line before the timestamp: the two families cut it into different numbers of tokens
FRENCH = "Réponds toujours poliment, en français, aux questions des clients.\n"
TEMPLATE = FRENCH + "Time: {{ timestamp }}\n" + HEAD + "Question: {{ question }}\n"
CLEAN = FRENCH + HEAD + "Time: {{ timestamp }}\nQuestion: {{ question }}\n"


def project(tmp_path, tokenizers: str):
    for name, path in MODELS.items():
        (tmp_path / "models" / name).mkdir(parents=True)
        shutil.copy(path, tmp_path / "models" / name / "tokenizer.json")
    (tmp_path / "promptlint.toml").write_text(tokenizers, encoding="utf-8")
    (tmp_path / "support.j2").write_text(TEMPLATE, encoding="utf-8")
    (tmp_path / "support.samples.toml").write_text(SAMPLES, encoding="utf-8")
    return tmp_path


def expected(path, block: int):
    """(first divergent token index, eligible blocks) of M101 on the timestamp: the test's own
    two renders, differing only in the timestamp, encoded directly."""
    tok = of_file(path)  # parsed once per test process, only read

    def ids(template: str, stamp: int):
        text = template.replace("{{ timestamp }}", STAMP[stamp]).replace("{{ question }}", QUESTION[0])
        return tok.encode(text, add_special_tokens=False).ids

    a, b = ids(TEMPLATE, 0), ids(TEMPLATE, 1)
    s = shared_prefix(a, b)
    return s, min(s, len(b) - 1) // block


TWO = '[tokenizers]\nqwen = "models/qwen/"\nmistral = { path = "models/mistral/tokenizer.json", block-size = 32 }\n'


def test_each_model_has_its_own_first_divergent_token_and_blocks(tmp_path, cli):
    root = project(tmp_path, TWO)
    r = cli("check", "--no-cache", "--output-format", "json", "--select", "M101", cwd=root)
    assert r.code == 1, r.err
    doc = r.json()
    assert [m["name"] for m in doc["models"]] == ["qwen", "mistral"]
    assert [(m["engine"], m["block_size"]) for m in doc["models"]] == [("vllm", 16), ("vllm", 32)]
    [m101] = doc["findings"]
    assert m101["code"] == "M101" and m101["variable"] == "timestamp"
    by_model = {m["model"]: m for m in m101["models"]}
    assert list(by_model) == ["qwen", "mistral"]
    for name, block in (("qwen", 16), ("mistral", 32)):
        index, eligible = expected(MODELS[name], block)
        hit = by_model[name]
        assert hit["first_divergent_token"]["index"] == index, name
        assert hit["shared_tokens"] == index and hit["eligible_blocks"] == eligible and hit["block_size"] == block
    # the two families split the timestamp differently: the indices are not the same number
    assert by_model["qwen"]["first_divergent_token"]["index"] != by_model["mistral"]["first_divergent_token"]["index"]
    # the top-level figures are the costliest model's
    worst = max(m101["models"], key=lambda m: m["lost_tokens"])
    assert m101["lost_tokens"] == worst["lost_tokens"]

    full = cli("check", "--no-cache", "--select", "M101", cwd=root).out
    for name in ("qwen", "mistral"):
        index = by_model[name]["first_divergent_token"]["index"]
        assert f"  model {name}: first divergent token #{index:,} " in full


def test_a_pin_per_model_is_checked(tmp_path, cli):
    root = project(tmp_path, '[tokenizers]\nqwen = "models/qwen/"\nmistral = { path = "models/mistral/", sha256 = "'
                   + "0" * 64 + '" }\n')
    r = cli("check", "--no-cache", cwd=root)
    assert r.code == 2 and "tokenizers.mistral" in r.err and len(r.err.strip().splitlines()) == 1


def test_one_model_keeps_the_single_tokenizer_shape_and_tokenizer_on_the_command_line_wins(tmp_path, cli):
    root = project(tmp_path, TWO)
    doc = cli("check", "--no-cache", "--output-format", "json", "--tokenizer", QWEN, cwd=root).json()
    assert "models" not in doc and all("models" not in f for f in doc["findings"])
    index, _ = expected(QWEN, 16)
    assert [f["first_divergent_token"]["index"] for f in doc["findings"] if f["code"] == "M101"] == [index]


def test_tokenizer_and_tokenizers_together_is_a_configuration_error(tmp_path, cli):
    root = project(tmp_path, 'tokenizer = "models/qwen/"\n' + TWO)
    r = cli("check", "--no-cache", cwd=root)
    assert r.code == 2 and "either `tokenizer` or `tokenizers`" in r.err and "promptlint.toml" in r.err


def test_the_render_is_shared_by_the_models_and_the_findings_are_those_of_separate_runs(tmp_path, monkeypatch):
    """An application template sees no tokenizer: two models' runs render each scenario once (as
    many renders as one model's run), and report what two separate runs merged report."""
    from promptlint import render
    from promptlint.project.config import load_settings
    from promptlint.driver.lint import lint
    from promptlint.driver.workspace import Workspace
    from promptlint.driver.models import merge, model_settings

    root = project(tmp_path, TWO)
    monkeypatch.chdir(root)
    (root / "other.j2").write_text("{{ greeting }} at {{ now }}\n" + HEAD + "{{ question }}\n", encoding="utf-8")
    settings = load_settings(start=root)
    models = model_settings(settings)
    assert [name for name, _ in models] == ["qwen", "mistral"]

    before = render.render_count()
    separate = merge([(name, lint([], s, use_cache=False)) for name, s in models])
    renders_separately = render.render_count() - before
    before = render.render_count()
    lint([], models[0][1], use_cache=False)
    renders_of_one_model = render.render_count() - before
    before = render.render_count()
    together = Workspace(settings, use_cache=False).check([])
    renders_together = render.render_count() - before

    assert renders_of_one_model > 0 and renders_separately == 2 * renders_of_one_model
    assert renders_together == renders_of_one_model  # one render per scenario, whatever the number of models
    assert [f.to_dict() for f in together.findings] == [f.to_dict() for f in separate.findings]
    assert [f.to_dict() for f in together.errors] == [f.to_dict() for f in separate.errors]
    assert together.notices == separate.notices and together.models == separate.models
    codes = {f.code for f in together.findings}
    assert "M101" in codes and all(len(f.models) == 2 for f in together.findings if f.code == "M101")


def blocks_per_request(path, template: str, block: int):
    """(S, P, eligible blocks) of two consecutive requests: the test's own renders, encoded directly."""
    tok = of_file(path)  # parsed once per test process, only read

    def ids(i: int):
        text = template.replace("{{ timestamp }}", STAMP[i]).replace("{{ question }}", QUESTION[i])
        text = text[:-1]  # Jinja drops a template's one trailing newline (keep_trailing_newline=False)
        return tok.encode(text, add_special_tokens=False).ids

    a, b = ids(0), ids(1)
    s = shared_prefix(a, b)
    return s, len(b), min(s, len(b) - 1) // block


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")
def test_baseline_measures_every_model(tmp_path, cli):
    """--baseline with `tokenizers`: a row per template and model, each with that model's block
    size and blocks before and after against a direct encode; a regression on either fails."""
    root = project(tmp_path, TWO)
    (root / "support.j2").write_text(CLEAN, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "prompts")
    (root / "support.j2").write_text(TEMPLATE, encoding="utf-8")

    r = cli("check", "--no-cache", "--output-format", "json", "--baseline", "HEAD", cwd=root)
    assert r.code == 1, r.err
    baseline = r.json()["baseline"]
    assert baseline["models"] == [{"name": "qwen", "engine": "vllm", "block_size": 16},
                                  {"name": "mistral", "engine": "vllm", "block_size": 32}]
    rows = {row["model"]: row for row in baseline["templates"]}
    assert len(baseline["templates"]) == 2 and set(rows) == {"qwen", "mistral"}
    for name, block in (("qwen", 16), ("mistral", 32)):
        row = rows[name]
        s0, p0, before = blocks_per_request(MODELS[name], CLEAN, block)
        s1, p1, after = blocks_per_request(MODELS[name], TEMPLATE, block)
        assert before > after, name  # the test's premise: the move costs blocks on both models
        assert row["path"] == "support.j2" and row["status"] == "regression" and row["block_size"] == block
        assert row["before"] == {"eligible_blocks": before, "eligible_tokens": before * block, "prompt_tokens": p0, "shared_tokens": s0}
        assert row["after"] == {"eligible_blocks": after, "eligible_tokens": after * block, "prompt_tokens": p1, "shared_tokens": s1}
        assert row["lost_tokens"] == (before - after) * block
    assert baseline["summary"]["regressions"] == 2
    [m101] = r.json()["findings"]
    assert m101["baseline"] == "new" and len(m101["models"]) == 2

    md = cli("check", "--no-cache", "--output-format", "markdown", "--baseline", "HEAD", cwd=root).out
    assert "| Template | Scenario | Model | Blocks per request |" in md
    s0, p0, before = blocks_per_request(MISTRAL, CLEAN, 32)
    s1, p1, after = blocks_per_request(MISTRAL, TEMPLATE, 32)
    assert f"| mistral \\(blocks of 32\\) | {before} → {after} |" in md
    full = cli("check", "--no-cache", "--baseline", "HEAD", cwd=root).out
    assert f"support.j2 [base] on mistral: {before} -> {after} blocks per request, regression" in full

    # the reverse change, committed: improvements on both models, exit 0
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "stamp first")
    (root / "support.j2").write_text(CLEAN, encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "json", "--baseline", "HEAD", cwd=root)
    assert r.code == 0, r.err
    assert sorted(row["status"] for row in r.json()["baseline"]["templates"]) == ["improvement", "improvement"]
