"""Issue 14 item 7: a chat template given as a bare `.jinja` file.

- with `--tokenizer tokenizer.json` and no tokenizer_config.json, BOS/EOS come from tokenizer.json
  itself, so the findings equal those of the same template in a model directory;
- every built-in scenario that cannot be rendered is reported (PL102, JSON `skipped_scenarios`);
- with the embedded tokenizer, the template's special-token texts stay single tokens.
"""

from __future__ import annotations

import json
import shutil

from conftest import DATA, shared_prefix

TEMPLATES = DATA / "chat_templates"
NEMO = DATA / "tokenizers" / "mistral-nemo-tekken" / "tokenizer.json"
NEMO_TEMPLATE = "mistralai-Mistral-Nemo-Instruct-2407.jinja"


def check(cli, *args, cwd):
    r = cli("check", "--output-format", "json", "--no-cache", "--evidence", *args, cwd=cwd)
    assert r.code in (0, 1), r.err
    return r.json()


def figures(doc):
    keys = ("code", "line", "column", "first_divergent_token", "shared_tokens", "prompt_tokens", "lost_blocks")
    return sorted((tuple(json.dumps(f.get(k), sort_keys=True) for k in keys) for f in doc["findings"]))


def test_bare_template_with_tokenizer_json_equals_the_model_directory(tmp_path, cli):
    from tokenizers import Tokenizer

    shutil.copy(TEMPLATES / NEMO_TEMPLATE, tmp_path / "chat.jinja")
    model = tmp_path / "model"
    model.mkdir()
    shutil.copy(NEMO, model / "tokenizer.json")
    # what Mistral-Nemo-Instruct-2407's tokenizer_config.json says (its model card's values)
    config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
              "chat_template": (TEMPLATES / NEMO_TEMPLATE).read_text()}
    (model / "tokenizer_config.json").write_text(json.dumps(config))

    bare = check(cli, "--tokenizer", NEMO, "chat.jinja", cwd=tmp_path)
    in_model = check(cli, "model", cwd=tmp_path)
    assert bare["errors"] == in_model["errors"] == []
    assert bare["skipped_scenarios"] == in_model["skipped_scenarios"] == []
    assert figures(bare) == figures(in_model)
    m204 = [f for f in bare["findings"] if f["code"] == "M204"]
    assert len(m204) == 2  # before: both missed (eos_token undefined: 4 scenarios skipped)

    # the figures are those of a direct encode of the two renders, which start with BOS
    tok = Tokenizer.from_file(str(NEMO))
    for f in m204:
        base, variant = f["evidence"]["base_render"], f["evidence"]["variant_render"]
        assert base.startswith("<s>") and "</s>" in base
        b = tok.encode(base, add_special_tokens=False).ids
        v = tok.encode(variant, add_special_tokens=False).ids
        s = shared_prefix(b, v)
        assert b[0] == tok.token_to_id("<s>")
        assert f["first_divergent_token"]["index"] == s and f["shared_tokens"] == s
        # turn N+1 should extend turn N's whole prompt: ideal S = len(turn N), P = len(turn N+1)
        assert f["lost_blocks"] == min(len(b), len(v) - 1) // 16 - min(s, len(v) - 1) // 16


def test_every_scenario_that_cannot_render_is_listed(tmp_path, cli):
    shutil.copy(TEMPLATES / "google-gemma-2-2b-it.jinja", tmp_path / "gemma.jinja")
    doc = check(cli, "gemma.jinja", cwd=tmp_path)
    skipped = doc["skipped_scenarios"]
    # Gemma 2 refuses every conversation with a system message (raise_exception)
    assert {s["scenario"] for s in skipped} == {"system-user", "multi-turn", "tools", "tool-round-trip", "documents", "reasoning"}
    assert all("System role not supported" in s["reason"] and s["path"] == "gemma.jinja" for s in skipped)
    pl102 = [f for f in doc["findings"] if f["code"] == "PL102"]
    assert len(pl102) == len(skipped) and all(f["severity"] == "info" for f in pl102)
    r = cli("check", "--output-format", "concise", "--no-cache", "gemma.jinja", cwd=tmp_path)
    assert r.out.count("PL102 built-in scenario") == 6


def test_special_token_texts_stay_atomic_with_the_embedded_tokenizer(tmp_path, cli):
    from promptlint.chat.special import atomic
    from promptlint.analysis.kernel import TokenizerProvider
    from promptlint.tokenization.tokens import resolve

    provider = TokenizerProvider(resolve(None))
    kept = atomic(provider, ["<|im_end|>", "<|im_start|>"])()
    ids = kept.encode("Done.<|im_end|>\n<|im_start|>user").ids
    assert [kept.token_text(i) for i in ids][1:4] == [".", "<|im_end|>", "\n"]
    assert len(provider().encode("<|im_end|>").ids) > 1  # the shared embedded tokenizer is unchanged

    # a ChatML template: no first divergent token splits or merges into a special-token text
    shutil.copy(TEMPLATES / "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", tmp_path / "hermes.jinja")
    doc = check(cli, "hermes.jinja", cwd=tmp_path)
    tokens = [f["first_divergent_token"] for f in doc["findings"] if f.get("first_divergent_token")]
    assert tokens
    for t in tokens:
        for text in (t["base_text"], t["variant_text"]):
            assert "<" not in text or text in ("<|im_start|>", "<|im_end|>"), t  # before: `><` (`>` + `<|im_end|>`)
