"""Tokenize as the serving engine does, and find where that differs from the pinned tokenizer.

vLLM and SGLang tokenize with the Hugging Face tokenizer itself, so their encoder is the
pinned tokenizer unchanged. llama.cpp has its own tokenizer that reads the vocabulary from
the GGUF file; for byte-level BPE vocabularies (GPT-2 style: Qwen, Llama 3, DeepSeek, ...)
it differs from `tokenizers` in three systematic ways:

1. **No normalizer.** llama.cpp's BPE path has no normalization step, so the tokenizer's NFC
   (or other) normalizer is skipped: ``"e" + U+0301`` stays two code points and U+212B
   ANGSTROM SIGN is not turned into U+00C5.
2. **End-of-generation-looking vocabulary entries become control tokens.** While loading a
   vocabulary, llama.cpp marks entries whose text is on a fixed list (``</s>``,
   ``<|eot_id|>``, ``<|im_end|>``, ``<end_of_turn>``, ...) as control tokens, whatever the
   tokenizer says. With ``parse_special`` (the server always tokenizes prompts so) such
   a text in the prompt is then one control token. In Qwen's vocabulary ``</s>`` is an
   ordinary BPE token (id 128247), so a literal ``</s>`` (HTML strikethrough) becomes one
   token instead of three.
3. **Its own pre-tokenizer and Unicode tables.** The text is split into words by llama.cpp's
   hand-written splitters (or std::regex) for the GGUF's pre-tokenizer type, reading code
   point categories from llama.cpp's own tables, which predate Unicode 16: ``"\u1c89's"``
   splits as ``"\u1c89'" + "s"`` there, ``"\u1c89" + "'s"`` under `tokenizers`
   (``promptlint.llamacpp``). Which type a model gets is what llama.cpp's converter picks
   for its tokenizer (``promptlint.llamacpp.pretype``), with that type's ``ignore_merges``.

The lists below are those of llama.cpp commit 0c1e570 as vendored in llama-cpp-python
0.3.36 (``vendor/llama.cpp/src/llama-vocab.cpp``, ``llama_vocab::impl::load``, the
"auto-detect special tokens by text" block and the end-of-generation list after it). The
same llama.cpp build produced the test vectors in ``tests/data/llamacpp-tokenize-vectors.json``.

The llama.cpp encoder does not reimplement BPE: it reproduces llama.cpp's special-token
partition (``tokenizer_st_partition``) and word split, and hands the words to a modified
``tokenizers.Tokenizer`` built from the pinned tokenizer's JSON (no normalizer, no regex
pre-tokenizer, no added tokens: BPE over byte-level words only).

Only the standard library is imported at module level; ``tokenizers`` is reached through the
pinned tokenizer (already loaded) when an encoder is built.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from promptlint.tokenization.tokens import Encoding, LoadedTokenizer, TokenizerError

ENGINES = ("vllm", "sglang", "llamacpp")

LLAMACPP_SOURCE = (
    "llama.cpp 0c1e570 (vendored in llama-cpp-python 0.3.36), src/llama-vocab.cpp, "
    "llama_vocab::impl::load: auto-detect special tokens by text, end-of-generation list"
)

# Unconditional: every vocabulary entry with one of these texts is made a control token
# (and an end-of-generation token). Order and comments as in the source.
LLAMACPP_EOG_TEXTS: Tuple[str, ...] = (
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",  # o200k_harmony
    "<|call|>",  # o200k_harmony
    "<|flush|>",  # solar-open
    "<|calls|>",  # solar-open
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",  # paddleocr (an ordinary BPE token in Qwen's vocabulary)
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",  # Kimi-K2
    "[EOS]",  # Kimi-K2
    "<|end_of_text|>",
    "<end_of_utterance>",  # smoldocling
    "<eos>",  # gemma4
    "<turn|>",  # gemma4
    "<|tool_response>",  # gemma4
    "<\uff5cend\u2581of\u2581sentence\uff5c>",  # deepseek-ocr: <｜end▁of▁sentence｜>
    "[e~[",  # minimax-m2/m3
)

# First match wins: for each role llama.cpp takes the first entry it meets (hash-map order)
# among these texts, unless the GGUF metadata already names that token, and makes it a
# control token. We promote an entry only when it is the sole candidate of its group in
# the vocabulary (then the outcome does not depend on iteration order); otherwise the group
# is reported in ``LlamaCppEncoder.notes``.
LLAMACPP_FIRST_MATCH_GROUPS: Dict[str, Tuple[str, ...]] = {
    "eot": (
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
        "<EOT>", "_<EOT>", "[EOT]", "<\uff5cend\u2581of\u2581sentence\uff5c>", "<end_of_utterance>",
    ),
    "eom": ("<|eom_id|>",),
    "fim_pre": (
        "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>",
        "\u2581<PRE>", "<|code_prefix|>", "<|prefix|>",
    ),
    "fim_suf": (
        "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>",
        "\u2581<SUF>", "<|code_suffix|>", "<|suffix|>",
    ),
    "fim_mid": (
        "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>",
        "\u2581<MID>", "<|code_middle|>", "<|middle|>",
    ),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}

# Exceptions applied after the lists (same function): "<|end|>" becomes USER_DEFINED (still
# one token) when the vocabulary also has "<|return|>" and "<|call|>" (or "<|calls|>" and
# "<|flush|>"); "</s>" becomes an ordinary token when it also has "<|tool_response>" or
# "<|plamo:eos|>" (Gemma 4, PLaMo).

CAUSE_NFC = "nfc"  # the pinned tokenizer's Unicode normalization (NFC, NFKC, ...) changed the text
CAUSE_CONTROL_TEXT = "control-text"  # a text the engine matches as one control token
CAUSE_SPLIT = "split"  # llama.cpp's pre-tokenizer (its own Unicode tables) splits the text into other words
CAUSE_OTHER = "other"  # none of these: e.g. a non-Unicode normalizer step, lstrip/rstrip on an added token,
# or llama.cpp's ignore_merges setting on a vocabulary word

_UNICODE_NORMALIZERS = {"NFC", "NFD", "NFKC", "NFKD"}


class TokenizationDifference(NamedTuple):
    """One stretch of text the engine tokenizes differently from the pinned tokenizer."""

    span: Tuple[int, int]  # [start, end) character offsets in the text
    pinned_ids: Tuple[int, ...]  # the pinned tokenizer's ids for that stretch
    engine_ids: Tuple[int, ...]  # the engine's ids for the same stretch
    cause: str  # "nfc" | "control-text" | "split" ("other" if none explains it)


# --------------------------------------------------------------------------------------
# the llama.cpp encoder


class _Words:
    """The encodings of one fragment's words, read as tokenizers' encoding of the pre-tokenized
    sequence: ids in order, offsets relative to each word, and each token's word index."""

    __slots__ = ("ids", "offsets", "word_ids")

    def __init__(self, encodings) -> None:
        self.ids = [i for e in encodings for i in e.ids]
        self.offsets = [o for e in encodings for o in e.offsets]
        self.word_ids = [w for w, e in enumerate(encodings) for _ in e.ids]


class LlamaCppEncoder:
    """Encodes text as llama.cpp's ``llama_tokenize(..., parse_special=true)`` does."""

    engine = "llamacpp"

    def __init__(
        self,
        pinned: LoadedTokenizer,
        tok,
        specials: List[Tuple[str, int]],
        promoted: Dict[str, int],
        prefix_ids: List[int],
        suffix_ids: List[int],
        exact: bool,
        notes: List[str],
        normalizer,
        pre=None,
        merges_differ: bool = False,
    ):
        self.pinned = pinned
        self._tok = tok  # pinned tokenizer without normalizer (byte-level BPE)
        self._specials = specials  # (text, id), longest text first, as llama.cpp's cache
        # which specials can occur in a text: indexed by their first two characters (a prefilter)
        self._by_prefix: Dict[str, List[int]] = {}
        for k, (t, _) in enumerate(specials):
            self._by_prefix.setdefault(t[:2], []).append(k)
        self.promoted = promoted  # control-looking vocabulary text -> id (not special in the pinned tokenizer)
        self._prefix_ids = prefix_ids  # what add_special_tokens puts in front (BOS)
        self._suffix_ids = suffix_ids  # ... and after (EOS)
        self.exact = exact  # byte-level BPE whose pre-tokenizer llama.cpp's converter recognizes
        self.notes = notes
        self._pinned_normalizer = normalizer  # the pinned tokenizer's normalizer, for cause analysis
        self.pre = pre  # promptlint.llamacpp.pretype.PreTokenizer, or None: tokenizer.json's own split
        # llama.cpp's ignore_merges differs from tokenizer.json's: a vocabulary word may then encode differently
        self._merges_differ = merges_differ
        self._whole_word_ok: Dict[str, bool] = {}
        self.control_ids = {i for _, i in specials}
        # added tokens that `tokenizers` matches with lstrip/rstrip (llama.cpp does not strip)
        self._strip_texts = [
            t.content for t in pinned.added_tokens_decoder().values() if t.lstrip or t.rstrip
        ]

    # same surface as LoadedTokenizer where the CLI and the checks need it
    @property
    def spec(self):
        return self.pinned.spec

    @property
    def sha256(self) -> str:
        return self.pinned.sha256

    def added_tokens(self, special_only: bool = False) -> Dict[str, int]:
        return self.pinned.added_tokens(special_only)

    def token_text(self, token_id: Optional[int]) -> str:
        return self.pinned.token_text(token_id)

    def id_to_token(self, token_id: int) -> Optional[str]:
        return self.pinned.id_to_token(token_id)

    def partition(self, text: str) -> List[Tuple[int, int, Optional[int]]]:
        """llama.cpp's ``tokenizer_st_partition``: (start, end, special id or None for raw text).

        For each special token, longest text first, every raw fragment is searched left to
        right and split around each occurrence. No lstrip/rstrip (llama.cpp sets those
        attributes only for a few models by name).
        """
        present = [self._specials[k] for k in self._candidates(text) if self._specials[k][0] in text]
        frags: List[Tuple[int, int, Optional[int]]] = [(0, len(text), None)]
        for t, tid in present:
            out: List[Tuple[int, int, Optional[int]]] = []
            n = len(t)
            for start, end, sid in frags:
                if sid is not None:
                    out.append((start, end, sid))
                    continue
                pos = start
                while True:
                    m = text.find(t, pos, end)
                    if m < 0:
                        break
                    if m > pos:
                        out.append((pos, m, None))
                    out.append((m, m + n, tid))
                    pos = m + n
                if pos < end:
                    out.append((pos, end, None))
            frags = out
        return frags

    def _candidates(self, text: str) -> List[int]:
        """Indices of the specials whose first two characters occur in ``text``, in cache order."""
        by_prefix = self._by_prefix
        if len(by_prefix) < 64:
            keys = [p for p in by_prefix if p in text]
        else:
            keys = ({text[i:i + 2] for i in range(len(text))} | set(text)) & by_prefix.keys()  # 1-char specials too
        out = [k for p in keys for k in by_prefix[p]]
        out.sort()
        return out

    def encode(self, text: str, add_special_tokens: bool = False) -> Encoding:
        return self.encode_batch([text], add_special_tokens)[0]

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = False) -> List[Encoding]:
        """``encode`` of each text, the raw fragments of all of them tokenized together (one
        `tokenizers` batch for many short texts instead of a call per word)."""
        parts = [self.partition(text) if text else [] for text in texts]
        raw = [text[s:e] for text, frags in zip(texts, parts) for s, e, sid in frags if sid is None]
        encs, starts = self._encode_raw(raw) if raw else ([], [])
        out: List[Encoding] = []
        k = 0
        for text, frags in zip(texts, parts):
            ids: List[int] = []
            offsets: List[Tuple[int, int]] = []
            for start, end, sid in frags:
                if sid is not None:
                    ids.append(sid)
                    offsets.append((start, end))
                    continue
                enc, word_starts = encs[k], starts[k]
                k += 1
                ids.extend(enc.ids)
                if word_starts is None:
                    offsets.extend((start + a, start + b) for a, b in enc.offsets)
                else:  # offsets are relative to each word
                    offsets.extend((start + word_starts[w] + a, start + word_starts[w] + b) for w, (a, b) in zip(enc.word_ids, enc.offsets))
            if add_special_tokens:
                ids = self._prefix_ids + ids + self._suffix_ids
                offsets = [(0, 0)] * len(self._prefix_ids) + offsets + [(len(text), len(text))] * len(self._suffix_ids)
            out.append(Encoding(ids, offsets))
        return out

    def _encode_raw(self, texts: List[str]):
        """Encodings of raw-text fragments, and each fragment's word start offsets (None: not split here)."""
        if self.pre is None:
            return self._tok.encode_batch(texts, add_special_tokens=False), [None] * len(texts)
        from promptlint.fastbpe.engine import encode_few
        from promptlint.llamacpp.split import words_and_starts

        split = [words_and_starts(t, self.pre.regexes) for t in texts]
        # One plain-string encode per word, regrouped per fragment: what `is_pretokenized=True` computes
        # (tokenizers normalizes, pre-tokenizes and models each word of a pre-tokenized sequence on its
        # own), without it: tokenizers >= 0.23 reads pre-tokenized input through numpy, which is not a
        # dependency (a plain install panicked there).
        flat = encode_few(self._tok, [w for words, _ in split for w in words], False)
        encs, k = [], 0
        for words, _ in split:
            encs.append(_Words(flat[k:k + len(words)]))
            k += len(words)
        return encs, [st for _, st in split]

    # -- cause analysis helpers

    def normalizes(self, text: str) -> bool:
        """Would the pinned tokenizer's normalizer change this text?"""
        if self._pinned_normalizer is None:
            return False
        return self._pinned_normalizer.normalize_str(text) != text

    def control_texts_in(self, text: str) -> List[str]:
        return [t for t in self.promoted if t in text]

    def may_differ(self, text: str) -> bool:
        """False when the engine's ids are the pinned tokenizer's without tokenizing both.

        Besides control texts, normalization and stripped added tokens: any non-ASCII text (the
        Unicode tables differ), and, when llama.cpp's ``ignore_merges`` differs from
        tokenizer.json's, a word that is a vocabulary entry BPE does not rebuild. Pure-ASCII text
        is split alike by both: the converter chose the pre-tokenizer because both tokenize its
        test text (contractions, digit runs, whitespace runs, punctuation) identically, and the
        tests compare the two splits on ASCII text for every corpus tokenizer.
        """
        if self.control_texts_in(text) or self.normalizes(text) or any(t in text for t in self._strip_texts):
            return True
        if self.pre is None:
            return False
        if not text.isascii():
            return True
        return self._merges_differ and not self._whole_words_ok(text)

    def _whole_words_ok(self, text: str) -> bool:
        """Every vocabulary word of ``text`` is also what BPE merges build (ignore_merges is moot)."""
        from promptlint.llamacpp.split import words

        todo = []
        for w in set(words(text, self.pre.regexes)):
            if w in self._whole_word_ok:
                if not self._whole_word_ok[w]:
                    return False
                continue
            tid = self._tok.token_to_id("".join(_BYTE_TO_UNICODE[b] for b in w.encode("utf-8")))
            if tid is not None:
                todo.append((w, tid))
            else:
                self._whole_word_ok[w] = True
        if todo:
            encs = self._merges_tok().encode_batch([w for w, _ in todo], add_special_tokens=False)  # no numpy path
            for (w, tid), enc in zip(todo, encs):
                self._whole_word_ok[w] = enc.ids == [tid]
        return all(self._whole_word_ok[w] for w, _ in todo)

    def _merges_tok(self):
        """The BPE tokenizer with ignore_merges off: what merges alone build."""
        if not self.pre.ignore_merges:
            return self._tok
        if getattr(self, "_merges_only", None) is None:
            from tokenizers import Tokenizer

            data = json.loads(self._tok.to_str())
            data["model"]["ignore_merges"] = False
            self._merges_only = Tokenizer.from_str(json.dumps(data))
        return self._merges_only


def engine_encoder(tokenizer: LoadedTokenizer, engine: str):
    """An object with ``.encode(text, add_special_tokens) -> Encoding`` for ``engine``.

    vllm / sglang: the pinned tokenizer itself. llamacpp: a :class:`LlamaCppEncoder`
    (built once per tokenizer by the run's tokenizer pool, and released with it).
    """
    if engine in ("vllm", "sglang"):
        return tokenizer
    if engine != "llamacpp":
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    from promptlint.pools.tokenizers import active

    return active().encoder(tokenizer.sha256, engine, lambda: _build_llamacpp(tokenizer))


def _is_byte_level(node) -> bool:
    if not isinstance(node, dict):
        return False
    if node.get("type") == "ByteLevel":
        return True
    return any(_is_byte_level(p) for p in node.get("pretokenizers", []) or [])


def _strip_unicode_normalizers(node):
    """The normalizer without its NFC/NFD/NFKC/NFKD steps (None if nothing is left)."""
    if not isinstance(node, dict):
        return node
    if node.get("type") in _UNICODE_NORMALIZERS:
        return None
    if node.get("type") == "Sequence":
        kept = [n for n in (_strip_unicode_normalizers(x) for x in node.get("normalizers", [])) if n is not None]
        return {**node, "normalizers": kept} if kept else None
    return node


def _bytes_to_unicode() -> Dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


_BYTE_TO_UNICODE = _bytes_to_unicode()
_UNICODE_TO_BYTE = {c: b for b, c in _BYTE_TO_UNICODE.items()}


def token_bytes(tokenizer, token_id: int) -> Optional[bytes]:
    """The raw bytes of a byte-level BPE token (None if it is not spelled in byte-level form)."""
    piece = tokenizer.id_to_token(token_id)
    if piece is None:
        return None
    try:
        return bytes(_UNICODE_TO_BYTE[c] for c in piece)
    except KeyError:
        return None


# The rewritten tokenizer of a byte-level BPE whose pre-tokenizer llama.cpp knows (the common case:
# Qwen, Llama 3, DeepSeek) is kept in the user cache as a compact form of its own (promptlint.fastbpe:
# proven identical to its parse when written, checksummed, its `tokenizers` version checked), keyed by
# the pinned tokenizer's content, this rewrite's version and llama.cpp's tables: a later run loads it in
# milliseconds instead of serializing the pinned tokenizer, rewriting the JSON and parsing it again
# (1-2 s for a 151k vocabulary). Anything that does not match: rebuilt as below, silently.
REWRITE_VERSION = 1
_FACTS = "llamacpp"  # the form header's ``extra`` entry: what the rewrite found beside the tokenizer


def _build_llamacpp(pinned: LoadedTokenizer) -> LlamaCppEncoder:
    from tokenizers import Tokenizer  # lazy; already imported by the pinned tokenizer

    key = _rewrite_key(pinned)
    kept = _kept_build(pinned, key)
    if kept is not None:
        return kept
    data = json.loads(pinned.serialized())
    model = data.get("model") or {}
    notes: List[str] = []
    byte_level, pre, merges_differ = _as_llamacpp_loads_it(pinned, data, notes)
    text = json.dumps(data)
    try:
        tok = Tokenizer.from_str(text)
    except Exception as e:  # pragma: no cover - the pinned tokenizer loaded from the same JSON
        raise TokenizerError(f"{pinned.spec.display}: cannot build the llama.cpp tokenizer ({e})") from None
    vocab = _vocab_ids(model)
    special_list, promoted = _llamacpp_specials(pinned, vocab.get, notes)
    prefix_ids, suffix_ids = _added_special_ids(pinned, notes)
    normalizer = pinned.normalizer
    exact = byte_level and pre is not None
    if exact and key is not None:
        from promptlint import fastbpe

        facts = {"version": REWRITE_VERSION, "pre": pre.name, "merges_differ": merges_differ}
        fastbpe.remember(key, text, tok, {_FACTS: facts})
    return LlamaCppEncoder(
        pinned, tok, special_list, promoted, prefix_ids, suffix_ids, exact, notes, normalizer, pre, merges_differ
    )


def _rewrite_key(pinned: LoadedTokenizer) -> Optional[str]:
    """The cache key of ``pinned``'s rewrite (None: a tokenizer without a content hash)."""
    import hashlib

    sha = getattr(pinned, "sha256", None)
    if not sha:
        return None
    label = f"promptlint llama.cpp rewrite {REWRITE_VERSION} {_commit_short()} {sha}"
    return hashlib.sha256(label.encode("utf-8")).hexdigest()


def _kept_build(pinned: LoadedTokenizer, key: Optional[str]) -> Optional[LlamaCppEncoder]:
    """The encoder around the rewrite kept in the user cache; None when there is none to trust."""
    from promptlint import fastbpe

    found = fastbpe.load_with_header(key) if key is not None else None
    if found is None:
        return None
    tok, header = found
    facts = (header.get("extra") or {}).get(_FACTS)
    if not isinstance(facts, dict) or facts.get("version") != REWRITE_VERSION:
        return None
    pre, _ = _llamacpp_pre_tokenizer(pinned)
    if pre is None or pre.name != facts.get("pre"):
        return None
    notes: List[str] = []
    special_list, promoted = _llamacpp_specials(pinned, pinned.token_to_id, notes)
    prefix_ids, suffix_ids = _added_special_ids(pinned, notes)
    return LlamaCppEncoder(pinned, tok, special_list, promoted, prefix_ids, suffix_ids, True, notes, pinned.normalizer,
                           pre, bool(facts.get("merges_differ")))


def _vocab_ids(model: dict) -> Dict[str, int]:
    """GGUF token texts of the model vocabulary (as spelled there) -> id."""
    vocab = model.get("vocab")
    if isinstance(vocab, dict):
        return dict(vocab)
    if isinstance(vocab, list):  # Unigram: [[piece, score], ...]
        return {p[0]: i for i, p in enumerate(vocab) if isinstance(p, (list, tuple)) and p}
    return {}


def _as_llamacpp_loads_it(pinned: LoadedTokenizer, data: dict, notes: List[str]):
    """Rewrite tokenizer.json ``data`` in place into what llama.cpp's tokenizer does with it: its own
    word splitting (when it recognises the pre-tokenizer) and no normalization for byte-level BPE.
    Returns (byte_level, llama.cpp pre-tokenizer or None, whether ignore_merges differs)."""
    model = data.get("model") or {}
    byte_level = model.get("type") == "BPE" and (_is_byte_level(data.get("pre_tokenizer")) or _is_byte_level(data.get("decoder")))
    pre = None
    merges_differ = False
    if byte_level:
        data["normalizer"] = None  # llama.cpp's BPE path has no normalization step at all
        pre, name = _llamacpp_pre_tokenizer(pinned)
        if pre is not None:
            # llama.cpp splits the words itself; the tokenizer only maps bytes and runs BPE
            data["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
            data["added_tokens"] = []  # special texts are split out before (partition)
            merges_differ = bool(model.get("ignore_merges", False)) != pre.ignore_merges
            data["model"] = {**model, "ignore_merges": pre.ignore_merges}
        elif name is not None:
            notes.append(
                f"llama.cpp's converter names this tokenizer's pre-tokenizer {name!r}, which its tokenizer does not "
                "load as byte-level BPE: splitting follows tokenizer.json (not verified)"
            )
        else:
            notes.append(
                "llama.cpp's converter does not recognize this tokenizer's pre-tokenizer (its test-text hash is not "
                f"in convert_hf_to_gguf.py at {_commit_short()}): splitting follows tokenizer.json (not verified)"
            )
    else:
        data["normalizer"] = _strip_unicode_normalizers(data.get("normalizer"))
        notes.append(
            "not a byte-level BPE vocabulary: llama.cpp uses its own SentencePiece/WordPiece-style tokenizer here; "
            "only the Unicode normalization and control-token differences are modelled (not verified against a server)"
        )
    return byte_level, pre, merges_differ


def _llamacpp_specials(pinned: LoadedTokenizer, vocab_id: Callable[[str], Optional[int]], notes: List[str]):
    """The texts llama.cpp matches as one control token, longest first (its special-token cache
    order), and those it promotes beyond what tokenizer.json already marks as added tokens.
    ``vocab_id``: a text's id in the model vocabulary (None: not there)."""
    # GGUF token texts: model vocabulary entries (as spelled there) and added tokens (content)
    added = pinned.added_tokens()  # content -> id; every added token is CONTROL or USER_DEFINED in the GGUF
    token_to_id: Dict[str, int] = {}
    for text in {*LLAMACPP_EOG_TEXTS, *(t for texts in LLAMACPP_FIRST_MATCH_GROUPS.values() for t in texts),
                 "<|tool_response>", "<|plamo:eos|>"}:
        tid = added[text] if text in added else vocab_id(text)
        if tid is not None:
            token_to_id[text] = tid

    promoted: Dict[str, int] = {}
    for text in LLAMACPP_EOG_TEXTS:
        if text in token_to_id:
            promoted[text] = token_to_id[text]
    for role, texts in LLAMACPP_FIRST_MATCH_GROUPS.items():
        present = [t for t in texts if t in token_to_id]
        if len(present) == 1:
            promoted[present[0]] = token_to_id[present[0]]
        elif len(present) > 1 and any(t not in added and t not in promoted for t in present):
            notes.append(
                f"llama.cpp picks its {role} token among {', '.join(present)} by hash-map order; "
                "only those already special are treated as control here"
            )
    # the demotions that follow the lists in the same function:
    # - "<|end|>" becomes USER_DEFINED when "<|return|>" and "<|call|>" (or "<|calls|>" and
    #   "<|flush|>") are end-of-generation too: still matched as one token, nothing to change;
    # - "</s>" becomes NORMAL (no longer matched as one token, even if tokenizer.json had it as
    #   an added token) when "<|tool_response>" (always end-of-generation when present) or
    #   "<|plamo:eos|>" (only as the GGUF's EOS; approximated by its presence) is in the vocabulary.
    demoted = set()
    if "</s>" in promoted and ("<|tool_response>" in token_to_id or "<|plamo:eos|>" in token_to_id):
        promoted.pop("</s>")
        demoted.add("</s>")
    # only what the pinned tokenizer does not already match as one token counts as "promoted"
    promoted = {t: i for t, i in promoted.items() if t not in added}

    specials = {t: i for t, i in added.items() if t not in demoted}
    specials.update(promoted)
    # llama.cpp sorts its special-token cache by text length in bytes, longest first
    special_list = sorted(specials.items(), key=lambda ti: (-len(ti[0].encode("utf-8")), ti[1]))
    return special_list, promoted


def _added_special_ids(pinned: LoadedTokenizer, notes: List[str]):
    """add_special_tokens: llama.cpp adds BOS/EOS per the GGUF's add_bos/add_eos flags, which the
    converter derives from the same tokenizer files: take what the post-processor adds."""
    probe = "a"
    plain = pinned.probe_ids(probe, add_special_tokens=False)
    full = pinned.probe_ids(probe, add_special_tokens=True)
    prefix_ids: List[int] = []
    suffix_ids: List[int] = []
    if plain and full != plain:
        at = _find_sub(full, plain)
        if at >= 0:
            prefix_ids, suffix_ids = list(full[:at]), list(full[at + len(plain):])
        else:
            notes.append("the tokenizer's post-processor changes the text tokens; add_special_tokens not modelled")
    return prefix_ids, suffix_ids


def _llamacpp_pre_tokenizer(pinned: LoadedTokenizer):
    """(PreTokenizer or None, converter name or None) for a byte-level BPE tokenizer."""
    from promptlint.llamacpp import pretype

    specials = pinned.added_tokens(special_only=True).values()
    pre, name = pretype.detect(pinned, specials)
    if pre is not None and not pre.byte_encode:
        return None, name
    return pre, name


def _commit_short() -> str:
    from promptlint.llamacpp.tables import commit

    return commit()[:7]


def _find_sub(seq: Sequence[int], sub: Sequence[int]) -> int:
    n = len(sub)
    for i in range(len(seq) - n + 1):
        if list(seq[i:i + n]) == list(sub):
            return i
    return -1


# --------------------------------------------------------------------------------------
# differences between the pinned and the engine tokenization


def _cuts(offsets: Sequence[Tuple[int, int]], text_len: int) -> Dict[int, int]:
    """Character positions where the encoding can be cut cleanly -> index of the first token there.

    A cut is the start of a token that begins at or after the end of every earlier token
    (byte-level pieces of one character share that character's span and are never cut).
    """
    cuts: Dict[int, int] = {0: 0}
    reach = 0
    for i, (s, e) in enumerate(offsets):
        if i > 0 and s >= reach and s not in cuts:
            cuts[s] = i
        reach = max(reach, e)
    cuts[max(text_len, reach)] = len(offsets)
    return cuts


def tokenization_differences(
    text: str, tokenizer: LoadedTokenizer, engine: str, add_special_tokens: bool = False
) -> List[TokenizationDifference]:
    """Where ``engine`` tokenizes ``text`` differently from the pinned ``tokenizer``.

    Returns one :class:`TokenizationDifference` per stretch of text bounded by positions
    where both tokenizations have a token boundary (touching stretches with the same cause
    are merged), in text order; empty when they agree (always for vllm and sglang). Fast path: text that the pinned normalizer leaves unchanged and that
    holds no promoted control text (nor an added token that `tokenizers` strips around) is not
    tokenized at all.
    """
    enc = engine_encoder(tokenizer, engine)
    if not isinstance(enc, LlamaCppEncoder):
        return []
    if not enc.may_differ(text):
        return []
    controls = enc.control_texts_in(text)
    pinned = tokenizer.encode(text, add_special_tokens=add_special_tokens)
    engine_enc = enc.encode(text, add_special_tokens=add_special_tokens)
    if pinned.ids == engine_enc.ids:
        return []
    n = len(text)
    # special tokens added by the post-processor carry empty spans; keep them out of the alignment
    p_ids, p_off = _text_tokens(pinned)
    e_ids, e_off = _text_tokens(engine_enc)
    pc, ec = _cuts(p_off, n), _cuts(e_off, n)
    common = sorted(set(pc) & set(ec))
    out: List[TokenizationDifference] = []
    for a, b in zip(common, common[1:]):
        pi = tuple(p_ids[pc[a]:pc[b]])
        ei = tuple(e_ids[ec[a]:ec[b]])
        if pi == ei:
            continue
        cause = _cause(enc, text[a:b], text[max(0, a - 2):b + 2], controls)
        if out and out[-1].span[1] == a and out[-1].cause == cause:
            # one stretch, e.g. a combining mark that also changed how the next characters split
            last = out.pop()
            out.append(TokenizationDifference((last.span[0], b), last.pinned_ids + pi, last.engine_ids + ei, cause))
        else:
            out.append(TokenizationDifference((a, b), pi, ei, cause))
    return out


def _text_tokens(e: Encoding) -> Tuple[List[int], List[Tuple[int, int]]]:
    ids, offs = [], []
    for i, o in zip(e.ids, e.offsets):
        if o[0] == o[1]:
            continue
        ids.append(i)
        offs.append(o)
    return ids, offs


def _cause(enc: LlamaCppEncoder, segment: str, context: str, controls: List[str]) -> str:
    """Why a stretch differs; ``context`` is the stretch with a little text either side
    (a combining mark can compose with the character before the stretch)."""
    if any(t in segment for t in controls):
        return CAUSE_CONTROL_TEXT
    if enc.normalizes(context) or not unicodedata.is_normalized("NFC", context):
        return CAUSE_NFC
    if enc.pre is not None and not any(t in segment for t in enc._strip_texts) and _split_differs(enc, context):
        return CAUSE_SPLIT
    return CAUSE_OTHER


def _split_differs(enc: LlamaCppEncoder, segment: str) -> bool:
    """Do llama.cpp's words of ``segment`` end elsewhere than the pinned pre-tokenizer's?
    (The stretch with its context: ``'s`` splits differently only after the character before it.)"""
    from promptlint.llamacpp.split import split_words

    pre_tokenizer = enc.pinned.pre_tokenizer
    if pre_tokenizer is None:
        return True
    pinned_ends = {b for _, (_, b) in pre_tokenizer.pre_tokenize_str(segment)}
    ends, pos = set(), 0
    for n in split_words(segment, enc.pre.regexes):
        pos += n
        if n:
            ends.add(pos)
    return ends != pinned_ends


def describe_promoted(encoder) -> str:
    """One line naming the texts the engine treats as control tokens beyond the pinned tokenizer's."""
    promoted = getattr(encoder, "promoted", {})
    if not promoted:
        return ""
    return ", ".join(f"{t} ({i})" for t, i in sorted(promoted.items(), key=lambda ti: ti[1]))
