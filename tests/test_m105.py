"""M105 fires on every recorded llama.cpp vector where the server's ids differ from the pinned tokenizer's."""

from __future__ import annotations

import json

import pytest

from conftest import DATA, QWEN

VECTORS = json.loads((DATA / "llamacpp-tokenize-vectors.json").read_text(encoding="utf-8"))["cases"]
DIFFERING = [c for c in VECTORS if c["server"] != c["hf"]]


def test_vectors_include_differences():
    assert len(DIFFERING) >= 5


@pytest.mark.parametrize("case", DIFFERING, ids=[repr(c["text"])[:30] for c in DIFFERING])
def test_m105_fires_on_each_differing_vector(case, tmp_path, cli):
    # the vector text reaches the render as a sample input (Jinja syntax in it stays inert)
    (tmp_path / "t.j2").write_text("Note: {{ note }}\n", encoding="utf-8")
    (tmp_path / "t.samples.json").write_text(json.dumps({"variables": {"note": case["text"]}}), encoding="utf-8")
    r = cli("check", "--tokenizer", QWEN, "--engine", "llamacpp", "--select", "M105", "--output-format", "json", "t.j2", cwd=tmp_path)
    findings = r.json()["findings"]
    assert findings and all(f["code"] == "M105" for f in findings), (case, r.out, r.err)
    assert all(f["line"] == 1 for f in findings)


@pytest.mark.parametrize("text", ["Plain ASCII text.", "caf\u00e9 (already NFC)", "<b>bold</b> is not a control text"])
def test_m105_silent_when_ids_agree(text, tmp_path, cli):
    (tmp_path / "t.j2").write_text("Note: {{ note }}\n", encoding="utf-8")
    (tmp_path / "t.samples.json").write_text(json.dumps({"variables": {"note": text}}), encoding="utf-8")
    r = cli("check", "--tokenizer", QWEN, "--engine", "llamacpp", "--select", "M105", "--output-format", "json", "t.j2", cwd=tmp_path)
    assert r.json()["findings"] == []


def test_render_and_diff_follow_the_llamacpp_engine(tmp_path, cli, qwen):
    text = "Old price: <s>40</s> now"
    (tmp_path / "t.j2").write_text("{{ x }}", encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps({"variables": {"x": text}}), encoding="utf-8")
    (tmp_path / "p.txt").write_text(text, encoding="utf-8")
    hf = qwen.encode(text, add_special_tokens=False).ids
    vllm = cli("render", tmp_path / "t.j2", "--scenario", tmp_path / "s.json", "--tokenizer", QWEN, "--output-format", "json").json()
    assert vllm["token_ids"] == hf
    llama = cli("render", tmp_path / "t.j2", "--scenario", tmp_path / "s.json", "--tokenizer", QWEN,
                "--engine", "llamacpp", "--output-format", "json").json()
    # llama.cpp promotes `</s>` (an ordinary BPE token in Qwen, id 128247) to one control token: '<', '/', 's', '>' -> 1
    end_tag = qwen.encode("</s>", add_special_tokens=False).ids
    assert qwen.token_to_id("</s>") == 128247 and len(end_tag) > 1
    assert 128247 in llama["token_ids"] and len(llama["token_ids"]) == len(hf) - len(end_tag) + 1
    d = cli("diff", tmp_path / "p.txt", tmp_path / "p.txt", "--tokenizer", QWEN, "--engine", "llamacpp", "--output-format", "json").json()
    assert d["prompt_tokens"] == len(llama["token_ids"])
