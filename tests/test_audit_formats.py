"""One fixture per input format: usage normalised per engine, labels mapped, prompts dropped."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from promptlint.audit import fingerprints as fpm
from promptlint.audit import prom
from promptlint.audit.ingest import Options, read
from promptlint.audit.reconcile import reconcile
from promptlint.cli import main

DATA = Path(__file__).parent / "data" / "audit"
KEY = b"k" * 32


def ingest(name, **kw):
    with open(DATA / name) as f:
        return list(read(f, name, Options(KEY, **kw)))


# file -> (engine, P, O, instance, tenant, tokens_source); P and O from each API's documented meaning
CASES = {
    "vllm_chat.jsonl": ("vllm", 20, 16, "10.0.0.5:8000", "acme", "exact"),
    "sglang_generate.jsonl": ("sglang", 812, 800, "sgl-0", "acme", "usage"),
    "llamacpp_completion.jsonl": ("llamacpp", 420, 300, "llama-host/slot0", "-", "usage"),  # cache_n + prompt_n
    "anthropic_messages.jsonl": ("anthropic", 50 + 200 + 1800, 1800, "api.anthropic.com", "team-9", "usage"),
    "gemini_generate.jsonl": ("gemini", 5000, 4096, "generativelanguage.googleapis.com", "-", "usage"),
    "litellm_payload.jsonl": ("openai", 1500, 1280, "https://vllm-2.internal/v1", "team-a", "usage"),
    "otel_spans.jsonl": ("openai", 2048, 1536, "vllm-1:8000", "blue", "usage"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_usage_normalised(name):
    (r,) = ingest(name, tenant_field="user_api_key_team_id" if "litellm" in name else "app.tenant")
    engine, P, O, inst, tenant, source = CASES[name]
    assert (r.engine, r.prompt_tokens, r.cached_tokens, r.instance, r.tenant, r.source) == (engine, P, O, inst, tenant, source)


def test_vllm_ids_fingerprinted_and_ttft():
    (r,) = ingest("vllm_chat.jsonl")
    assert r.fps == fpm.chain_hex(list(range(1, 21)), 16, KEY)
    assert r.ttft_s == pytest.approx(0.042)


def test_litellm_ttft_and_response_cache_ignored():
    (r,) = ingest("litellm_payload.jsonl")
    assert r.ttft_s == pytest.approx(0.25)
    assert r.cached_tokens == 1280  # from usage, not LiteLLM's own cache_hit flag


def test_otel_arrival_from_span_start():
    (r,) = ingest("otel_spans.jsonl")
    assert r.arrival_ts == pytest.approx(1700000000.5)
    assert r.request_id == "chatcmpl-9"


def test_mooncake_hash_ids_what_if():
    rows = ingest("mooncake_trace.jsonl", hash_block_tokens=16)
    assert [r.prompt_tokens for r in rows] == [40, 50, 33]
    assert [len(r.fps) for r in rows] == [2, 3, 2]  # full 16-token chunks only: 40//16, 50//16, 33//16
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["audit", str(DATA / "mooncake_trace.jsonl"), "--output-format", "json"]) == 0
    reqs = json.loads(buf.getvalue())["requests"]
    # line 2 shares ids 7,8 = 32 tokens: floor(min(32, 49)/16)*16 = 32; line 3 shares 7,8 (9 is its
    # partial third chunk, 33 tokens): min(32, 32) -> 32
    assert [q["ceiling_tokens"] for q in reqs] == [0, 32, 32]
    assert [q["cached_tokens"] for q in reqs] == [None, None, None]


def test_prometheus_fixture_deltas():
    b, a = prom.load(DATA / "vllm_before.prom"), prom.load(DATA / "vllm_after.prom")
    rec = reconcile({"*": (b, a)}, {"x": {"queried_tokens": 20, "queried_cached_tokens": 16, "prompt_tokens": 20}})
    inst = rec["instances"]["*"]
    assert inst["status"] == "ok"
    assert (inst["queries"], inst["hits"]) == (20, 16)
    assert inst["local_hit_ratio"] == 16 / 20
    assert inst["external_hit_ratio"] == 0.0
    assert inst["cached_by_source"] == {"device": 16}
    assert inst["residual"] == {"queries": 0, "hits": 0, "prompt_tokens": 0}


def test_prompts_and_salts_never_written(tmp_path):
    sheet = tmp_path / "s.csv"
    for name in CASES:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["audit", str(DATA / name), "--output-format", "json", "--worksheet", str(sheet)]) == 0
        text = buf.getvalue() + sheet.read_text()
        for secret in ("secret", "hello there", "acme-secret-salt"):
            assert secret not in text, (name, secret)


def test_bad_line_is_one_line_error_and_the_other_rows_are_audited(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"request_id": "x", "prompt_tokens": -3}\n{"request_id": "y", "prompt_tokens": 7}\n')
    assert main(["audit", str(bad), "--output-format", "json"]) == 1  # some rows failed
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "bad.jsonl:1:" in err and "`prompt_tokens`" in err
    summary = json.loads(out)["summary"]
    assert summary["requests"] == 1 and summary["prompt_tokens"] == 7
    assert summary["rows"]["read"] == 2 and summary["rows"]["used"] == 1 and summary["rows"]["failed"] == 1
    assert summary["rows"]["failures"][0]["line"] == 1


def test_bundled_example_prints_summary_and_reconciliation(tmp_path, capsys):
    ex = Path(__file__).parent.parent / "examples" / "audit"
    plot = tmp_path / "p.svg"
    assert main(["audit", str(ex / "trace.jsonl"), "--scrape-before", str(ex / "before.prom"),
                 "--scrape-after", str(ex / "after.prom"), "--capacity-curve", "64", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "audited 60 requests" in out
    # the example's after-scrape holds one 180-token request (96 cached) that is not in the trace
    assert "counter - trace: queries +180, hits +96, prompt_tokens +180" in out
    import xml.dom.minidom

    assert xml.dom.minidom.parse(str(plot)).documentElement.tagName == "svg"


def test_rows_without_ids_are_derived_through_the_chat_template(tmp_path):
    """A request/response log with messages but no token ids: re-rendered with the pinned Qwen2.5
    template as vLLM's server renders it (add_generation_prompt defaults to true) and tokenized."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from chat_helpers import model_dir
    from tokenizers import Tokenizer

    from promptlint.audit.derive import make_deriver

    d = model_dir("Qwen-Qwen2.5-7B-Instruct.jinja", tmp_path)
    qwen = Path(__file__).parent / "data" / "tokenizers" / "qwen2.5" / "tokenizer.json"
    msgs = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Where is order 7?"}]
    line = {"request": {"model": "qwen", "messages": msgs}, "response": {"usage": {"prompt_tokens": 24}}, "engine": "vllm"}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    deriver = make_deriver(str(qwen), str(d))
    with open(path) as f:
        (r,) = list(read(f, "t.jsonl", Options(KEY, deriver=deriver)))
    # ChatML written out by hand (the Qwen2.5 chat format), encoded directly
    text = "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWhere is order 7?<|im_end|>\n<|im_start|>assistant\n"
    ids = Tokenizer.from_file(str(qwen)).encode(text, add_special_tokens=False).ids
    assert r.source == "derived"
    assert r.fps == fpm.chain_hex(ids, 16, KEY)
    assert ("derived_length" in r.flags) == (len(ids) != 24)
