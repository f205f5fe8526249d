"""The llama.cpp engine profile against a real llama.cpp server's token ids, and `promptlint tokenize`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptlint.tokenization import tokens
from promptlint.tokenization.engine_tokenize import (
    CAUSE_CONTROL_TEXT,
    CAUSE_NFC,
    LLAMACPP_EOG_TEXTS,
    engine_encoder,
    tokenization_differences,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
QWEN = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"
SPM = DATA / "tokenizers" / "mistral-v3-spm" / "tokenizer.json"
VECTORS = json.loads((DATA / "llamacpp-tokenize-vectors.json").read_text(encoding="utf-8"))["cases"]
IDS = [repr(c["text"])[:40] for c in VECTORS]


@pytest.fixture(scope="module")
def qwen():
    return tokens.load(tokens.resolve(str(QWEN)))


@pytest.fixture(scope="module")
def llamacpp(qwen):
    return engine_encoder(qwen, "llamacpp")


def test_vectors_cover_both_causes():
    assert len(VECTORS) >= 29
    assert any("</s>" in c["text"] for c in VECTORS)
    assert any(not __import__("unicodedata").is_normalized("NFC", c["text"]) for c in VECTORS)


@pytest.mark.parametrize("case", VECTORS, ids=IDS)
def test_pinned_tokenizer_gives_the_recorded_hf_ids(qwen, case):
    assert qwen.encode(case["text"]).ids == case["hf"]


@pytest.mark.parametrize("case", VECTORS, ids=IDS)
def test_llamacpp_profile_reproduces_the_server(llamacpp, case):
    assert llamacpp.encode(case["text"]).ids == case["server"]


def test_every_vector_reproduces(llamacpp):
    agree = sum(llamacpp.encode(c["text"]).ids == c["server"] for c in VECTORS)
    assert agree == len(VECTORS)


@pytest.mark.parametrize("case", VECTORS, ids=IDS)
def test_differences_reported_and_located(qwen, case):
    text = case["text"]
    diffs = tokenization_differences(text, qwen, "llamacpp")
    assert (case["server"] != case["hf"]) == bool(diffs)
    # spans are in order, inside the text, and splicing the differing ids into the agreeing
    # ones rebuilds both full tokenizations
    pinned = qwen.encode(text)
    engine = engine_encoder(qwen, "llamacpp").encode(text)
    last = 0
    for d in diffs:
        a, b = d.span
        assert last <= a < b <= len(text)
        last = b
        assert d.pinned_ids != d.engine_ids
        assert d.cause in (CAUSE_NFC, CAUSE_CONTROL_TEXT)
        if d.cause == CAUSE_CONTROL_TEXT:
            assert "</s>" in text[a:b] and 128247 in d.engine_ids
        else:
            assert 128247 not in d.engine_ids
    assert _splice(pinned, diffs, "pinned_ids") == _splice(engine, diffs, "engine_ids")


def _splice(enc, diffs, field):
    """The encoding with each difference's ids replaced by a marker: equal for both sides."""
    out, i = [], 0
    for d in diffs:
        a, b = d.span
        while i < len(enc.ids) and enc.offsets[i][0] < a:
            out.append(enc.ids[i])
            i += 1
        taken = getattr(d, field)
        assert tuple(enc.ids[i:i + len(taken)]) == taken
        i += len(taken)
        out.append(("diff", a, b))
    return out + enc.ids[i:]


def test_causes_on_known_cases(qwen):
    (d,) = tokenization_differences("cafe\u0301", qwen, "llamacpp")
    assert d.span == (2, 5) and d.cause == CAUSE_NFC
    assert d.pinned_ids == (58858,) and d.engine_ids == (1859, 53839)
    (d,) = tokenization_differences("text</s>", qwen, "llamacpp")
    assert d.span == (4, 8) and d.cause == CAUSE_CONTROL_TEXT
    assert d.pinned_ids == (522, 82, 29) and d.engine_ids == (128247,)
    causes = [d.cause for d in tokenization_differences("e\u0301 and </s> then e\u0301", qwen, "llamacpp")]
    assert causes == [CAUSE_NFC, CAUSE_CONTROL_TEXT, CAUSE_NFC]


@pytest.mark.parametrize(
    "text",
    ["", "plain ASCII text", "caf\u00e9 \u00c5 na\u00efve", "<|im_start|>user\nhi<|im_end|>\n", "<s>bold</b> &lt;/s&gt;", "\U0001F44D\U0001F3FD"],
)
def test_no_difference_where_tokenizations_agree(qwen, llamacpp, text):
    assert llamacpp.encode(text).ids == qwen.encode(text).ids
    assert tokenization_differences(text, qwen, "llamacpp") == []


def test_vllm_and_sglang_use_the_pinned_tokenizer(qwen):
    for engine in ("vllm", "sglang"):
        assert engine_encoder(qwen, engine) is qwen
        assert tokenization_differences("cafe\u0301</s>", qwen, engine) == []
    with pytest.raises(ValueError):
        engine_encoder(qwen, "tgi")


def test_promoted_control_texts(llamacpp):
    assert llamacpp.promoted == {"</s>": 128247}  # the only EOG-looking text that is ordinary in Qwen
    assert "</s>" in LLAMACPP_EOG_TEXTS
    assert llamacpp.exact and llamacpp.notes == []


def test_offsets_cover_the_text(llamacpp):
    text = "a</s>b e\u0301 <|im_end|>\n"
    enc = llamacpp.encode(text)
    assert enc.ids[1] == 128247 and enc.offsets[1] == (1, 5)
    assert enc.offsets[0][0] == 0 and enc.offsets[-1][1] == len(text)


def test_longer_special_token_wins_as_in_llamacpp(llamacpp):
    # llama.cpp partitions by special tokens, longest first: "<|im_end|>" before "</s>"
    assert llamacpp.encode("<|im_end|></s><|im_end|>").ids == [151645, 128247, 151645]


def test_non_byte_level_vocab_is_flagged(tmp_path):
    spm = tokens.load(tokens.resolve(str(SPM)))
    enc = engine_encoder(spm, "llamacpp")
    assert not enc.exact and enc.notes
    assert enc.encode("hello world").ids == spm.encode("hello world").ids


def test_add_special_tokens_follows_the_post_processor():
    spm = tokens.load(tokens.resolve(str(SPM)))
    enc = engine_encoder(spm, "llamacpp")
    assert enc.encode("hi", add_special_tokens=True).ids == spm.encode("hi", add_special_tokens=True).ids


def test_long_clean_text_takes_the_fast_path_without_tokenizing(qwen, monkeypatch):
    # behaviour, not time (benchmarks measure speed): clean text is never tokenized at all
    loaded = tokens.load(tokens.resolve(str(QWEN)))
    calls = []
    real = loaded.encode
    monkeypatch.setattr(loaded, "encode", lambda *a, **k: calls.append(a) or real(*a, **k))
    text = "The quick brown fox jumps over the lazy dog. " * 5000
    assert tokenization_differences(text, loaded, "llamacpp") == []
    assert calls == []
    assert tokenization_differences(text + "\u1c89's", loaded, "llamacpp") is not None  # slow path reachable
    assert calls  # and the pinned tokenizer was consulted there


# --- the CLI


def _cli(*args, stdin=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "promptlint", "tokenize", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=str(ROOT),
    )


def test_cli_json_per_file(tmp_path, qwen):
    a = tmp_path / "a.txt"
    a.write_bytes("text</s> cafe\u0301\r\n".encode("utf-8"))
    b = tmp_path / "b.txt"
    b.write_text("hello", encoding="utf-8")
    r = _cli(str(a), str(b), "--tokenizer", str(QWEN), "--engine", "llamacpp", "--output-format", "json")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    llama = engine_encoder(qwen, "llamacpp")
    assert json.loads(lines[0]) == {"token_ids": llama.encode("text</s> cafe\u0301\r\n").ids}
    assert json.loads(lines[1]) == {"token_ids": qwen.encode("hello").ids}
    r = _cli(str(a), "--tokenizer", str(QWEN), "--engine", "vllm", "--output-format", "json")
    assert json.loads(r.stdout) == {"token_ids": qwen.encode("text</s> cafe\u0301\r\n").ids}


def test_cli_jsonl_in_order(tmp_path, qwen):
    texts = [c["text"] for c in VECTORS[:6]]
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(json.dumps({"text": t}) for t in texts) + "\n", encoding="utf-8")
    r = _cli("--jsonl", str(f), "--tokenizer", str(QWEN), "--engine", "llamacpp")
    assert r.returncode == 0, r.stderr
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert got == [{"token_ids": c["server"]} for c in VECTORS[:6]]
    # standard input too
    r = _cli("--jsonl", "-", "--tokenizer", str(QWEN), "--engine", "llamacpp", stdin=f.read_text(encoding="utf-8"))
    assert [json.loads(line) for line in r.stdout.splitlines()] == got


def test_cli_text_output_and_stdin():
    r = _cli("--tokenizer", str(QWEN), "--engine", "llamacpp", stdin="a</s>")
    assert r.returncode == 0, r.stderr
    assert "2 tokens" in r.stdout and "128247" in r.stdout and '"</s>"' in r.stdout and "[control]" in r.stdout


def test_cli_embedded_tokenizer_notice():
    r = _cli("-", "--output-format", "json", stdin="hello")
    assert r.returncode == 0
    assert "token_ids" in json.loads(r.stdout)
    assert "approximate" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args, needle",
    [
        (["missing-file.txt", "--tokenizer", str(QWEN)], "missing-file.txt: file not found"),
        (["--tokenizer", "no/such/tokenizer.json"], "tokenizer file not found"),
        (["--tokenizer", "BAD"], "not a tokenizer.json"),
        (["--jsonl", "BADJSONL"], "invalid JSON"),
        (["--tokenizer", str(QWEN), "--tokenizer-sha256", "00" * 32], "the tokenizer changed"),
    ],
)
def test_cli_bad_inputs_exit_2_with_one_line(tmp_path, args, needle):
    bad_tok = tmp_path / "tokenizer.json"
    bad_tok.write_text("{ not json", encoding="utf-8")
    bad_jsonl = tmp_path / "in.jsonl"
    bad_jsonl.write_text('{"text": "ok"}\n{oops\n', encoding="utf-8")
    args = [str(bad_tok) if a == "BAD" else str(bad_jsonl) if a == "BADJSONL" else a for a in args]
    r = _cli(*args, stdin="x")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("promptlint: error: ") and needle in lines[0], r.stderr


# --- the promotion list on a synthetic byte-level BPE vocabulary


def _synthetic(extra, added=()):
    """A byte-level BPE tokenizer: the 256 byte symbols plus ``extra`` whole-text entries."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers

    from promptlint.tokenization.engine_tokenize import _BYTE_TO_UNICODE

    vocab = {c: i for i, c in enumerate(_BYTE_TO_UNICODE.values())}
    for text in extra:
        vocab.setdefault(text, len(vocab))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in added])
    spec = tokens.TokenizerSpec(Path("synthetic.json"), None)
    return tokens.LoadedTokenizer(spec, "synthetic-" + "|".join(extra + tuple(added)), tok)


def test_synthetic_promotions():
    tok = _synthetic(("</s>", "<PRE>", "<end_of_turn>", "<eos>"), added=("<|im_end|>",))
    enc = engine_encoder(tok, "llamacpp")
    assert set(enc.promoted) == {"</s>", "<PRE>", "<end_of_turn>", "<eos>"}  # <|im_end|> was already special
    ids = enc.encode("a<PRE>b</s>").ids
    assert enc.promoted["<PRE>"] in ids and enc.promoted["</s>"] in ids and len(ids) == 4


def test_synthetic_gemma4_keeps_s_ordinary():
    tok = _synthetic(("</s>", "<|tool_response>"))
    enc = engine_encoder(tok, "llamacpp")
    assert "</s>" not in enc.promoted and "<|tool_response>" in enc.promoted
    assert len(enc.encode("</s>").ids) == 4  # four byte tokens


def test_synthetic_ambiguous_fim_group_is_noted():
    tok = _synthetic(("<PRE>", "<fim-prefix>"))
    enc = engine_encoder(tok, "llamacpp")
    assert "<PRE>" not in enc.promoted and any("fim_pre" in n for n in enc.notes)


def test_synthetic_lstrip_added_token_is_not_stripped_by_llamacpp():
    from tokenizers import AddedToken

    tok = _synthetic(("x",))
    tok._tok.add_special_tokens([AddedToken("<mask>", special=True, lstrip=True, normalized=False)])
    tok.sha256 += "-mask"
    enc = engine_encoder(tok, "llamacpp")
    assert len(enc.encode("a <mask>").ids) == 3 and len(tok.encode("a <mask>").ids) == 2
    (d,) = tokenization_differences("a <mask>", tok, "llamacpp")
    assert d.cause == "other" and d.span[0] <= 1
