"""`promptlint diff`, the captured-input loader, JSON order causes and the hosted-API profiles."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from promptlint.arithmetic import compare
from promptlint.base import json_order
from promptlint.cli import main

DATA = Path(__file__).parent / "data"
QWEN = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"
MISTRAL = DATA / "tokenizers" / "mistral-v3-spm" / "tokenizer.json"
ROOT = Path(__file__).resolve().parent.parent
PROFILE_NAMES = {"vllm", "sglang", "llamacpp", "openai", "anthropic", "gemini"}


def run_json(capsys, *argv):
    rc = main(["diff", *map(str, argv), "--output-format", "json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out), err


def run_error(capsys, *argv):
    rc = main([*map(str, argv)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def qwen():
    """The test tokenizer loaded directly with `tokenizers`: the independent reference."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(QWEN))


def write(tmp_path, name, content):
    p = tmp_path / name
    p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return p


# --- the done-when test: two renders of a template with an early timestamp ------------------

TEMPLATE = (
    "<|im_start|>system\nCurrent time: {{ now }}\n"
    "You are the support assistant for Example Corp. Answer in English, cite the policy "
    "section you rely on, and never invent order numbers.{% for d in docs %}\n## {{ d.title }}\n{{ d.body }}{% endfor %}"
    "<|im_end|>\n<|im_start|>user\n{{ question }}<|im_end|>\n<|im_start|>assistant\n"
)
DOCS = [
    {"title": "Refunds", "body": "Refunds are issued within 14 days of an approved return. " * 6},
    {"title": "Shipping", "body": "Orders ship from the nearest warehouse in 2 business days. " * 6},
]


def test_early_timestamp_index_matches_direct_tokenizers_encode(tmp_path, capsys, qwen):
    jinja2 = pytest.importorskip("jinja2")

    tpl = jinja2.Template(TEMPLATE)
    a = tpl.render(now="2025-03-14 09:26:53", docs=DOCS, question="Where is my order?")
    b = tpl.render(now="2025-03-14 09:27:05", docs=DOCS, question="Where is my order?")
    pa, pb = write(tmp_path, "a.txt", a), write(tmp_path, "b.txt", b)

    tok = qwen
    ea, eb = tok.encode(a, add_special_tokens=False), tok.encode(b, add_special_tokens=False)
    expected = next(i for i, (x, y) in enumerate(zip(ea.ids, eb.ids)) if x != y)
    assert 5 < expected < 32  # the timestamp is early (Qwen splits digits one per token)

    r, _ = run_json(capsys, pa, pb, "--tokenizer", QWEN)
    f = r["first_divergent_token"]
    assert f["index"] == r["shared_tokens"] == expected
    assert f["base_id"] == ea.ids[expected] and f["variant_id"] == eb.ids[expected]
    assert f["base_char_offset"] == ea.offsets[expected][0] == f["char_offset"]
    assert f["variant_char_offset"] == eb.offsets[expected][0]
    assert f["base_text"] == tok.decode([ea.ids[expected]], skip_special_tokens=False)
    assert r["prompt_tokens"] == r["variant_prompt_tokens"] == len(eb.ids)
    assert r["base_prompt_tokens"] == len(ea.ids)
    assert r["engine"] == "vllm" and r["block_size"] == 16
    assert r["eligible_tokens"] == expected // 16 * 16 and r["eligible_blocks"] == expected // 16
    assert r["profiles"]["sglang"]["eligible_tokens"] == expected
    assert set(r["profiles"]) == PROFILE_NAMES
    assert r["cause"] is None  # a timestamp, not an ordering change
    assert [t["index"] for t in f["context_before"]] == [expected - 3, expected - 2, expected - 1]


def test_full_output_names_the_divergence(tmp_path, capsys):
    pa = write(tmp_path, "a.txt", "Current date: 2024-06-01\nYou are helpful.\n")
    pb = write(tmp_path, "b.txt", "Current date: 2024-06-02\nYou are helpful.\n")
    assert main(["diff", str(pa), str(pb), "--tokenizer", str(QWEN)]) == 0
    out = capsys.readouterr().out
    assert "first divergent token: index" in out
    assert "shared prefix S =" in out
    for name in PROFILE_NAMES:
        assert f"\n{name}" in out


# --- token-id inputs: the arithmetic against hand-computed figures ---------------------------


def test_token_id_inputs(tmp_path, capsys):
    base = list(range(1000, 1100))  # 100 tokens
    variant = base[:37] + [7] + base[38:]
    pa = write(tmp_path, "a.json", json.dumps(base))
    pb = write(tmp_path, "b.json", json.dumps(variant))
    r, err = run_json(capsys, pa, pb)
    assert "embedded" not in err  # ids need no tokenizer, so no approximation notice
    assert r["tokenizer"] is None
    f = r["first_divergent_token"]
    assert (f["index"], f["base_id"], f["variant_id"]) == (37, 1037, 7)
    assert f["base_text"] is None and f["char_offset"] is None
    assert (r["shared_tokens"], r["prompt_tokens"]) == (37, 100)
    assert (r["eligible_tokens"], r["eligible_blocks"]) == (32, 2)  # floor(37/16)*16
    p = r["profiles"]
    assert p["sglang"]["eligible_tokens"] == 37 and p["llamacpp"]["eligible_tokens"] == 37
    assert p["openai"]["eligible_tokens"] == 0  # below 1,024


def test_selected_engine_and_block_size(tmp_path, capsys):
    base = list(range(100))
    pa = write(tmp_path, "a.json", json.dumps(base))
    pb = write(tmp_path, "b.json", json.dumps(base[:50] + [999] * 50))
    r, _ = run_json(capsys, pa, pb, "--engine", "sglang", "--block-size", "8")
    assert (r["block_size"], r["eligible_tokens"], r["eligible_blocks"]) == (8, 48, 6)
    assert r["profiles"]["vllm"]["eligible_tokens"] == 48  # vllm keeps its default 16: floor(50/16)*16
    assert r["profiles"]["vllm"]["block_size"] == 16


def test_identical_inputs_cap_at_last_token(tmp_path, capsys):
    ids = list(range(1200))
    pa = write(tmp_path, "a.json", json.dumps(ids))
    r, _ = run_json(capsys, pa, pa)
    assert r["identical"] is True and r["first_divergent_token"] is None
    assert r["eligible_tokens"] == 1184  # DESIGN worked number: the same 1,200-token request twice
    assert r["profiles"]["llamacpp"]["eligible_tokens"] == 1199
    assert r["profiles"]["openai"]["eligible_tokens"] == 1152  # 1024 + 1*128


def test_one_side_is_a_prefix_of_the_other(tmp_path, capsys):
    pa = write(tmp_path, "a.json", json.dumps(list(range(40))))
    pb = write(tmp_path, "b.json", json.dumps(list(range(60))))
    r, _ = run_json(capsys, pa, pb)
    f = r["first_divergent_token"]
    assert (f["index"], f["base_id"], f["variant_id"]) == (40, None, 40)
    assert r["eligible_tokens"] == 32


def test_completions_request_body_with_ids(tmp_path, capsys):
    pa = write(tmp_path, "a.json", json.dumps({"model": "m", "prompt": list(range(20))}))
    pb = write(tmp_path, "b.json", json.dumps(list(range(10)) + [99] * 10))
    r, _ = run_json(capsys, pa, pb)
    assert r["base"]["kind"] == "request" and r["shared_tokens"] == 10


# --- serving path -------------------------------------------------------------------------------


def test_serving_completions_adds_bos(tmp_path, capsys):
    from tokenizers import Tokenizer

    text = "[INST] Hello there [/INST]"
    pa = write(tmp_path, "a.txt", text)
    chat, _ = run_json(capsys, pa, pa, "--tokenizer", MISTRAL)
    comp, _ = run_json(capsys, pa, pa, "--tokenizer", MISTRAL, "--serving", "completions")
    tok = Tokenizer.from_file(str(MISTRAL))
    assert chat["prompt_tokens"] == len(tok.encode(text, add_special_tokens=False).ids)
    assert comp["prompt_tokens"] == chat["prompt_tokens"] + 1  # <s> prepended
    assert comp["add_special_tokens"] is True and chat["add_special_tokens"] is False


def test_text_read_byte_exact(tmp_path, capsys):
    # CRLF must not be normalised to LF: the two files differ at the first line break
    pa = write(tmp_path, "a.txt", b"line one\r\nline two\r\n")
    pb = write(tmp_path, "b.txt", b"line one\nline two\n")
    r, _ = run_json(capsys, pa, pb, "--tokenizer", QWEN)
    assert r["identical"] is False
    assert r["first_divergent_token"]["text_divergence_offset"] == 8


def test_embedded_tokenizer_notice(tmp_path, capsys):
    pa = write(tmp_path, "a.txt", "hello world")
    r, err = run_json(capsys, pa, pa)
    assert "embedded" in err and "approximate" in err and err.count("\n") == 1
    assert r["tokenizer"]["approximate"] is True


# --- JSON order causes ------------------------------------------------------------------------

TOOL_A = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
TOOL_B = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}


def _reorder_keys(d):
    return {k: d[k] for k in reversed(list(d))}


def test_key_order_cause(tmp_path, capsys):
    head = "<|im_start|>system\nYou may call these tools:\n"
    a = head + json.dumps([TOOL_A, TOOL_B]) + "\n<|im_end|>"
    b = head + json.dumps([_reorder_keys(TOOL_A), TOOL_B]) + "\n<|im_end|>"
    r, _ = run_json(capsys, write(tmp_path, "a.txt", a), write(tmp_path, "b.txt", b), "--tokenizer", QWEN)
    assert r["cause"]["kind"] == "json-key-order"
    assert r["cause"]["char_offset"] == len(head)
    assert "key order" in r["cause"]["message"]


def test_tool_order_cause_in_one_array(tmp_path, capsys):
    head = "<|im_start|>system\nTools: "
    a = head + json.dumps([TOOL_A, TOOL_B]) + " end"
    b = head + json.dumps([TOOL_B, TOOL_A]) + " end"
    r, _ = run_json(capsys, write(tmp_path, "a.txt", a), write(tmp_path, "b.txt", b), "--tokenizer", QWEN)
    assert r["cause"]["kind"] == "json-list-order"


def test_tool_order_cause_one_per_line(tmp_path, capsys):
    # Qwen-style: one tool object per line inside <tools>
    a = "<tools>\n" + json.dumps(TOOL_A) + "\n" + json.dumps(TOOL_B) + "\n</tools>"
    b = "<tools>\n" + json.dumps(TOOL_B) + "\n" + json.dumps(TOOL_A) + "\n</tools>"
    r, _ = run_json(capsys, write(tmp_path, "a.txt", a), write(tmp_path, "b.txt", b), "--tokenizer", QWEN)
    assert r["cause"]["kind"] == "json-value-order"
    assert r["cause"]["char_offset"] == len("<tools>\n")


def test_value_change_is_not_an_order_cause():
    a = "x " + json.dumps({"name": "a", "n": 1}) + " y"
    b = "x " + json.dumps({"n": 2, "name": "a"}) + " y"  # key order AND a value changed
    assert json_order.explain(a, b) is None
    assert json_order.explain('Date: 2024 {"a": 1}', 'Date: 2025 {"a": 1}') is None


# --- errors are one line, exit 2 ----------------------------------------------------------------


def test_chat_request_body_without_template_is_framed_approximately(tmp_path, capsys):
    """No chat template: the documented ChatML framing, said on stderr (tests/test_diff_chat_bodies.py has the figures)."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    pa = write(tmp_path, "a.json", json.dumps(body))
    assert main(["diff", str(pa), str(pa), "--tokenizer", str(QWEN)]) == 0
    out, err = capsys.readouterr()
    assert "chat framing: approximate (chatml" in out and "approximate ChatML framing" in err


def test_chat_request_bodies_with_tools_reordered(tmp_path, capsys):
    """Two OpenAI request bodies rendered through the Qwen2.5 template as vLLM's server renders them."""
    from chat_helpers import model_dir
    from tokenizers import Tokenizer

    d = model_dir("Qwen-Qwen2.5-7B-Instruct.jinja", tmp_path)
    tools = [TOOL_A, TOOL_B]
    msgs = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Where is order 7?"}]
    pa = write(tmp_path, "a.json", json.dumps({"model": "m", "messages": msgs, "tools": tools}))
    pb = write(tmp_path, "b.json", json.dumps({"model": "m", "messages": msgs, "tools": tools[::-1]}))
    r, _ = run_json(capsys, pa, pb, "--tokenizer", d)
    # independently: Qwen2.5 renders `<tools>` then one JSON object per line; the first tool line differs
    tok = Tokenizer.from_file(str(QWEN))
    rendered_prefix = "<|im_start|>system\nYou are helpful.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    a = tok.encode(rendered_prefix + '{"type": "function", "function": {"name": "get_weather"', add_special_tokens=False).ids
    b = tok.encode(rendered_prefix + '{"type": "function", "function": {"name": "get_time"', add_special_tokens=False).ids
    s = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert r["first_divergent_token"]["index"] == s
    assert (r["first_divergent_token"]["base_id"], r["first_divergent_token"]["variant_id"]) == (a[s], b[s])
    assert r["cause"]["kind"] == "json-value-order"


def test_missing_file(tmp_path, capsys):
    err = run_error(capsys, "diff", tmp_path / "nope.txt", tmp_path / "nope2.txt")
    assert "nope.txt: file not found" in err


def test_tokenizer_pin_mismatch(tmp_path, capsys):
    pa = write(tmp_path, "a.txt", "hello")
    err = run_error(capsys, "diff", pa, pa, "--tokenizer", QWEN, "--tokenizer-sha256", "0" * 64)
    assert "the tokenizer changed" in err


def test_bad_hosted_model(tmp_path, capsys):
    pa = write(tmp_path, "a.json", "[1, 2, 3]")
    err = run_error(capsys, "diff", pa, pa, "--hosted-model", "anthropic=claude-unknown-9")
    assert "no cache minimum for anthropic model 'claude-unknown-9'" in err
    err = run_error(capsys, "diff", pa, pa, "--hosted-model", "claude")
    assert "PROVIDER=MODEL" in err


# --- hosted-API profile arithmetic, by hand -----------------------------------------------------


@pytest.mark.parametrize(
    "shared, prompt, expected",
    [
        (1100, 1500, 1024),  # 1,024 + floor(76/128)*128
        (1000, 1500, 0),  # below the minimum
        (1023, 1023, 0),
        (1024, 1500, 1024),
        (1151, 1500, 1024),
        (1152, 1500, 1152),  # 1,024 + 128
        (1300, 1500, 1280),  # 1,024 + 2*128
        (5000, 5000, 4992),  # 1,024 + 31*128
    ],
)
def test_openai_rule(shared, prompt, expected):
    p = compare.hosted_profile("openai")
    assert (p.block_size, p.min_tokens) == (128, 1024)
    assert p.eligible(shared, prompt) == expected


def test_anthropic_and_gemini_minimums():
    sonnet = compare.hosted_profile("anthropic")  # default model of the shipped table
    assert sonnet.model == "claude-sonnet-4-5" and sonnet.min_tokens == 1024
    assert sonnet.eligible(1100, 1500) == 1100 and sonnet.eligible(1000, 1500) == 0
    opus = compare.hosted_profile("anthropic", "claude-opus-4-5-20251101")  # dated id -> table prefix
    assert opus.model == "claude-opus-4-5" and opus.min_tokens == 4096
    assert opus.eligible(4000, 6000) == 0 and opus.eligible(4500, 6000) == 4500
    flash = compare.hosted_profile("gemini", "gemini-2.5-flash")
    assert flash.min_tokens == 2048 and flash.as_of == "2026-10-13"
    assert flash.eligible(2047, 3000) == 0 and flash.eligible(2048, 3000) == 2048


def test_cache_minimums_override(tmp_path):
    f = write(tmp_path, "min.json", json.dumps({"anthropic": {"as_of": "2027-01-01", "models": {"claude-next": 512}},
                                                "gemini": {"default": "gemini-2.5-pro", "models": {"gemini-2.5-pro": 4096}}}))
    table = compare.load_cache_minimums(f)
    p = compare.hosted_profile("anthropic", "claude-next", table)
    assert (p.min_tokens, p.as_of) == (512, "2027-01-01")
    assert p.eligible(600, 700) == 600
    assert compare.hosted_profile("anthropic", "claude-opus-4-5", table).min_tokens == 4096  # shipped entries kept
    g = compare.hosted_profile("gemini", None, table)
    assert (g.model, g.min_tokens) == ("gemini-2.5-pro", 4096)
    bad = write(tmp_path, "bad.json", json.dumps({"anthropic": {"models": {"x": "many"}}}))
    with pytest.raises(compare.CacheTableError):
        compare.load_cache_minimums(bad)


def test_engine_profile_keeps_old_names_and_adds_hosted():
    assert compare.engine_profile("vllm").block_size == 16
    assert compare.engine_profile("vllm", 32).block_size == 32
    assert compare.engine_profile("sglang").block_size == 1
    assert compare.engine_profile("openai").eligible(1100, 1500) == 1024
    with pytest.raises(ValueError):
        compare.engine_profile("tgi")


def test_design_worked_numbers_through_all_profiles():
    vllm = compare.all_profiles()["vllm"]
    assert vllm.eligible(1200, 1200) == 1184
    assert vllm.eligible(1000, 1200) == 992
    assert vllm.eligible(12, 1200) == 0
    assert vllm.eligible(1150, 1200) == 1136
    assert vllm.eligible(200, 1000) == 192


# --- import budget ------------------------------------------------------------------------------


def test_parser_imports_no_third_party_package():
    code = (
        "import sys; from promptlint import cli; cli.build_parser(); "
        "bad = [m for m in ('tokenizers', 'jinja2', 'cbor2', 'xxhash', 'jsonschema') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr


def test_tokens_diverge_before_text_note(tmp_path, capsys, qwen):
    a, b = "Say hello world", "Say hello worlds"
    tok = qwen
    ea, eb = tok.encode(a).ids, tok.encode(b).ids
    s = next(i for i, (x, y) in enumerate(zip(ea, eb)) if x != y)
    assert tok.decode([ea[s]]) == " world"  # the merge swallows the boundary: a meaningful case
    r, _ = run_json(capsys, write(tmp_path, "a.txt", a), write(tmp_path, "b.txt", b), "--tokenizer", QWEN)
    f = r["first_divergent_token"]
    assert f["index"] == s and f["char_offset"] == 9 and f["text_divergence_offset"] == 15
    assert "diverge 6 character(s) before the text does" in f["note"]


def test_json_scan_survives_pathological_input():
    deep = "[" * 1500  # deeper than the recursion limit of json's decoder
    assert json_order.explain(deep + "1", deep + "2") is None
    assert json_order.fragments("{ if (x) { y } } [x] ") == []
    assert json_order.fragments('cite [1] and {"k": 1}') == [(5, 8, [1]), (13, 21, {"k": 1})]
