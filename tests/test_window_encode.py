"""Variants are tokenized in a window around their change (promptlint.tokenization.window_encode), and the
answer is exactly the full encode's.

Every variant promptlint encodes while linting — the corpus chat templates with every tokenizer
in tests/data (byte-level BPE and SentencePiece, chat and completions serving), every rule case,
the benchmark's generated repository, and random edits of random texts — is compared with a
direct `tokenizers` encode of the whole text: same ids, same offsets (so the same first divergent
index, token pair, S, P and blocks). Each run also requires that windows were actually used.
"""

from __future__ import annotations

import importlib.util
import json
import random

import pytest

import chat_helpers
from conftest import DATA, REPO
from test_rule_cases import CASES, run_case

from promptlint.tokenization import window_encode

TOKENIZERS = sorted(p.parent.name for p in (DATA / "tokenizers").glob("*/tokenizer.json"))


class Checked:
    """Every encode_variants call compared with a direct encode of each text."""

    def __init__(self):
        self.variants = 0
        self.windowed = 0  # spliced from a window narrower than the variant
        self.fallbacks = 0
        self.mismatches = []

    def summary(self):
        return f"{self.variants} variants, {self.windowed} windowed, {self.fallbacks} fell back"


def _instrument(mp, rec: Checked, seen=None):
    encode_variants = window_encode.encode_variants
    splice = window_encode._Plan.splice

    def checking(tokenizer, base_text, base, texts, add_special_tokens):
        out = encode_variants(tokenizer, base_text, base, texts, add_special_tokens)
        if seen is not None:
            seen.append((base_text, list(texts), add_special_tokens))
        raw = tokenizer._tok if hasattr(tokenizer, "_tok") and not hasattr(tokenizer, "pinned") else None
        if raw is None:
            fulls = [tokenizer.encode(text, add_special_tokens=add_special_tokens) for text in texts]
        elif len(texts) < 8:  # the tokenizers library itself (or the engine standing for it)
            fulls = [raw.encode(text, add_special_tokens=add_special_tokens) for text in texts]
        else:  # many texts: one batch, the same encodings (a batch's dispatch costs more than a few encodes)
            fulls = raw.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        for text, enc, full in zip(texts, out, fulls):
            rec.variants += 1
            ids, offsets = list(full.ids), [tuple(o) for o in full.offsets]
            if enc.ids != ids or enc.offsets != offsets:
                rec.mismatches.append((base_text, text, add_special_tokens))
        return out

    def counting(self, frame, w, enc, text):
        out = splice(self, frame, w, enc, text)
        if out is None:
            rec.fallbacks += 1
        elif w.start > 0 or w.end < len(text):
            rec.windowed += 1
        return out

    mp.setattr(window_encode, "encode_variants", checking)
    mp.setattr(window_encode._Plan, "splice", counting)
    mp.delenv(window_encode.FULL_ENCODE_ENV, raising=False)


@pytest.fixture
def checked(monkeypatch):
    rec = Checked()
    _instrument(monkeypatch, rec)
    return rec


def _assert_exact(rec: Checked):
    assert rec.variants, "nothing was encoded as a variant"
    assert rec.windowed, f"no window was used: {rec.summary()}"
    assert not rec.mismatches, f"{len(rec.mismatches)} of {rec.summary()} differ from the full encode; first: {rec.mismatches[0]!r}"


@pytest.fixture(scope="module")
def corpus_variants(tmp_path_factory):
    """Lint every corpus chat template with its own tokenizer (chat and completions serving,
    every variant checked against the full encode) and keep each base render with its variants."""
    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint

    workdir = tmp_path_factory.mktemp("corpus")
    dirs = [str(chat_helpers.model_dir(t, workdir)) for t in chat_helpers.template_names()]
    rec, seen = Checked(), []
    with pytest.MonkeyPatch.context() as mp:
        _instrument(mp, rec, seen)
        for serving in ("chat", "completions"):  # completions: the post-processor adds BOS around the window
            lint(dirs, Settings(serving=serving), use_cache=False)
    return rec, seen


def test_corpus_chat_templates(corpus_variants):
    rec, _ = corpus_variants
    _assert_exact(rec)


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_corpus_chat_variants_with_every_tokenizer(tokenizer, corpus_variants, checked):
    """The same renders with each tokenizer in tests/data (a template's control tokens are plain
    text to most of them: no added-token anchors, line starts or nothing)."""
    from promptlint.tokenization import tokens

    tok = tokens.load(tokens.resolve(str(DATA / "tokenizers" / tokenizer / "tokenizer.json")))
    # each distinct call once: the lint asks for a quarter of them again (another check, the same variants)
    for base_text, texts, add in dict.fromkeys((b, tuple(t), a) for b, t, a in corpus_variants[1]):
        window_encode.encode_variants(tok, base_text, tok.encode(base_text, add_special_tokens=add), list(texts), add)
    _assert_exact(checked)


def test_rule_cases(tmp_path, check_in_memory, checked):
    for k, param in enumerate(CASES):
        rule, case = param.values
        (tmp_path / str(k)).mkdir()
        r, _ = run_case(case, tmp_path / str(k), check_in_memory)
        assert r.code in (0, 1), (param.id, r.err)
    _assert_exact(checked)


def _benchmark_module():
    spec = importlib.util.spec_from_file_location("promptlint_bench", REPO / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_repository_both_ways(tmp_path, cli, checked, monkeypatch):
    """The generated repository: every variant exact, and the JSON report identical with
    PROMPTLINT_FULL_ENCODE=1 (first divergent tokens, S, P, blocks)."""
    _benchmark_module().make_repo(tmp_path / "repo", 12, 3)
    windowed = cli("check", "--no-cache", "--no-daemon", "--output-format", "json", "--evidence", cwd=tmp_path / "repo")
    assert windowed.code in (0, 1), windowed.err
    _assert_exact(checked)
    monkeypatch.setenv(window_encode.FULL_ENCODE_ENV, "1")
    seen, windowed_before = checked.variants, checked.windowed
    full = cli("check", "--no-cache", "--no-daemon", "--output-format", "json", "--evidence", cwd=tmp_path / "repo")
    assert checked.windowed == windowed_before and checked.variants > seen
    doc = json.loads(windowed.out)
    assert any(f.get("first_divergent_token") for f in doc["findings"])
    assert windowed.out == full.out and windowed.code == full.code


def test_full_encode_switch_turns_windows_off(tmp_path, cli, checked, monkeypatch):
    _benchmark_module().make_repo(tmp_path / "repo", 2, 0)
    monkeypatch.setenv(window_encode.FULL_ENCODE_ENV, "1")
    cli("check", "--no-cache", "--no-daemon", cwd=tmp_path / "repo")
    assert checked.variants and not checked.windowed and not checked.fallbacks


# Atoms that stress the boundaries: line starts of every class, digit and whitespace runs,
# contractions, combining marks, CJK, and special-token texts (anchors to some tokenizers).
_ATOMS = list("abcXYZ0123456789 .,:;!?'\"-_()[]{}<>/|#*\n\t") + [
    "\n\n", "  ", "   ", "\r\n", "é", "中文", "e\u0301", "'s", "'ll", "1234567", "----", "====", " \n", "\n ",
    "\n/", ".\n/", "Question:", " the", "Hello", "<|im_start|>", "<|im_end|>", "[INST]", "[/INST]", "<s>", "</s>",
    "<|eot_id|>", "<|endoftext|>", "<|start_header_id|>",
]


@pytest.mark.parametrize("name", [None] + TOKENIZERS, ids=lambda t: t or "embedded-cl100k")
def test_random_edits(name, checked):
    from promptlint.tokenization import tokens

    tok = tokens.load(tokens.resolve(None if name is None else str(DATA / "tokenizers" / name / "tokenizer.json")))
    rnd = random.Random(17)
    for _ in range(60):
        base = "".join(rnd.choice(_ATOMS) for _ in range(rnd.randrange(5, 200)))
        edits = []
        for _ in range(4):
            at = rnd.randrange(len(base) + 1)
            cut = rnd.randrange(0, min(12, len(base) - at) + 1)
            edits.append(base[:at] + "".join(rnd.choice(_ATOMS) for _ in range(rnd.randrange(0, 5))) + base[at + cut:])
        for add in (False, True):
            window_encode.encode_variants(tok, base, tok.encode(base, add_special_tokens=add), edits, add)
    _assert_exact(checked)


def test_sentencepiece_prepend_has_no_line_anchors():
    """Mistral v3 SentencePiece prepends "▁" to every piece of text (its normalizer) and has no
    pre-tokenizer: a window starting at a line would gain a "▁" the full encode does not have."""
    from promptlint.tokenization import tokens

    spm = window_encode._plan(tokens.load(tokens.resolve(str(DATA / "tokenizers" / "mistral-v3-spm" / "tokenizer.json"))))
    qwen = window_encode._plan(tokens.load(tokens.resolve(str(DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"))))
    assert spm.starts_line is None
    assert qwen.starts_line("Q") and qwen.starts_line("7")


def test_o200k_line_start_slash_is_no_anchor():
    """o200k's punctuation pre-token absorbs "\\n/" (`[\\r\\n/]*`): "/" after a newline is no anchor."""
    from promptlint.tokenization import tokens

    plan = window_encode._plan(tokens.load(tokens.resolve(str(DATA / "tokenizers" / "gpt-oss-o200k-harmony" / "tokenizer.json"))))
    assert not plan.starts_line("/") and plan.starts_line("-") and plan.starts_line("a")
    # the tokenizer itself: ".\n/" is one pre-token
    pieces = plan.tok._tok.pre_tokenizer.pre_tokenize_str("a.\n/b")
    assert any(piece_span == (1, 4) for _, piece_span in pieces)
