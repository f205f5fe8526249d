"""Issue 18 items 4 and 5 beyond `check`: with `tokenizers` configured, the language server
merges every model's diagnostics, `render` and `diff` take one model (`--model NAME`, default
the first), and the `github` and `sarif` formats carry each model's figures and the cost.
Indices are checked against a direct `tokenizers` encode of the test's own text."""

from __future__ import annotations

import json


from conftest import MISTRAL, QWEN, shared_prefix
from reference_tokenizers import of_file
from test_baseline import QUESTION, STAMP
from test_models import MODELS, TEMPLATE, TWO, expected, project

R = 10_000
PRICED = TWO.replace("[tokenizers]", f"[cost]\nrequests-per-day = {R}\nprice-per-mtok = 3.0\ncached-price-per-mtok = 0.3\n\n[tokenizers]")


def encode(path, text: str):
    return of_file(path).encode(text, add_special_tokens=False).ids  # parsed once per test process


def test_the_language_server_merges_every_models_diagnostics(tmp_path):
    """Spoken to over stdio as an editor does; the configuration's two models, no --tokenizer."""
    import os

    from test_lsp import Client, open_doc

    root = project(tmp_path, TWO)
    c = Client("--select", "M101", "--debounce", "0", cwd=root)
    try:
        c.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}})
        c.notify("initialized", {})
        uri = open_doc(c, root / "support.j2", TEMPLATE)
        [m101] = c.diagnostics(uri)  # one diagnostic for the hazard, not one per model
    finally:
        c.close()
    assert m101["code"] == "M101"
    for name, block in (("qwen", 16), ("mistral", 32)):
        index, _ = expected(MODELS[name], block)
        assert f"\nmodel {name}: first divergent token #{index:,} " in m101["message"]
        assert f"(vllm, block {block})" in m101["message"]


def test_render_takes_one_model_default_the_first(tmp_path, cli):
    root = project(tmp_path, TWO)
    (root / "scenario.toml").write_text(f'timestamp = "{STAMP[0]}"\nquestion = "{QUESTION[0]}"\n', encoding="utf-8")
    text = TEMPLATE.replace("{{ timestamp }}", STAMP[0]).replace("{{ question }}", QUESTION[0])[:-1]  # Jinja drops the last newline

    def ids(*extra):
        r = cli("render", "support.j2", "--scenario", "scenario.toml", "--output-format", "json", *extra, cwd=root)
        assert r.code == 0, r.err
        doc = r.json()
        assert doc["render"] == text
        return doc["token_ids"]

    assert ids() == encode(QWEN, text)  # the first of `tokenizers`
    assert ids("--model", "mistral") == encode(MISTRAL, text)
    assert encode(QWEN, text) != encode(MISTRAL, text)
    r = cli("render", "support.j2", "--scenario", "scenario.toml", "--model", "llama", cwd=root)
    assert r.code == 2 and "--model llama" in r.err and "promptlint.toml" in r.err and "qwen, mistral" in r.err
    assert len(r.err.strip().splitlines()) == 1
    r = cli("render", "support.j2", "--scenario", "scenario.toml", "--model", "qwen", "--tokenizer", QWEN, cwd=root)
    assert r.code == 2 and "not both" in r.err


def test_diff_model_uses_that_models_tokenizer_and_block_size(tmp_path, cli):
    root = project(tmp_path, TWO)
    a = TEMPLATE.replace("{{ timestamp }}", STAMP[0]).replace("{{ question }}", QUESTION[0])
    b = TEMPLATE.replace("{{ timestamp }}", STAMP[1]).replace("{{ question }}", QUESTION[0])
    (root / "a.txt").write_text(a, encoding="utf-8")
    (root / "b.txt").write_text(b, encoding="utf-8")
    r = cli("diff", "a.txt", "b.txt", "--model", "mistral", "--output-format", "json", cwd=root)
    assert r.code == 0, r.err
    doc = r.json()
    ia, ib = encode(MISTRAL, a), encode(MISTRAL, b)
    s = shared_prefix(ia, ib)
    assert doc["shared_tokens"] == s and doc["first_divergent_token"]["index"] == s
    assert doc["block_size"] == 32 and doc["eligible_blocks"] == min(s, len(ib) - 1) // 32
    # without --model, diff reads no configuration (as before): the embedded tokenizer, block 16
    plain = cli("diff", "a.txt", "b.txt", "--output-format", "json", cwd=root).json()
    assert plain["block_size"] == 16 and plain["tokenizer"]["approximate"] is True
    r = cli("diff", "a.txt", "b.txt", "--model", "nope", cwd=root)
    assert r.code == 2 and "--model nope" in r.err and "qwen, mistral" in r.err


def test_samples_works_with_tokenizers(tmp_path, cli):
    root = project(tmp_path, TWO)
    r = cli("samples", "support.j2", cwd=root)
    assert r.code == 0, r.err
    assert "timestamp" in r.out


def test_github_annotations_carry_each_model_and_the_cost(tmp_path, cli):
    root = project(tmp_path, PRICED)
    doc = cli("check", "--no-cache", "--select", "M101", "--output-format", "json", cwd=root).json()
    [m101] = doc["findings"]
    r = cli("check", "--no-cache", "--select", "M101", "--output-format", "github", cwd=root)
    assert r.code == 1, r.err
    [line] = [l for l in r.out.splitlines() if l.startswith("::warning") or l.startswith("::error")]
    message = line.split("::", 2)[2]
    for name, block in (("qwen", 16), ("mistral", 32)):
        index, _ = expected(MODELS[name], block)
        assert f"%0Amodel {name}: first divergent token #{index:,} " in message
    lost = m101["lost_tokens"]
    assert lost > 0 and f"%0Acost: {lost:,} tokens/request × {R:,} requests/day = ${lost * R * 2.7 / 1e6:,.2f}/day" in message


def test_sarif_results_carry_each_model_and_the_cost(tmp_path, cli):
    root = project(tmp_path, PRICED)
    r = cli("check", "--no-cache", "--select", "M101", "--output-format", "sarif", cwd=root)
    assert r.code == 1, r.err
    run = json.loads(r.out)["runs"][0]
    assert [m["name"] for m in run["properties"]["models"]] == ["qwen", "mistral"]
    [result] = run["results"]
    props = result["properties"]
    by_model = {m["model"]: m for m in props["models"]}
    for name, block in (("qwen", 16), ("mistral", 32)):
        index, eligible = expected(MODELS[name], block)
        assert by_model[name]["first_divergent_token"]["index"] == index and by_model[name]["block_size"] == block
    assert props["cost"]["tokens_per_request"] == props["lost_tokens"] > 0
    assert props["cost"]["usd_per_day"] == __import__("pytest").approx(props["lost_tokens"] * R * 2.7 / 1e6)
