"""Tokenizing from the compact form without building the Rust BPE model: the cold path's engine.

Building `tokenizers.models.BPE` costs ~0.4 s for a 100k vocabulary however it is fed (the
merges are converted one by one), and a one-template run needs a few thousand tokens. So:

- `tokenizers` itself, built from the form's *tiny* JSON (the file's normalizer, pre-tokenizer,
  added tokens and post-processor around a model that knows only the 256 byte-level characters
  and merges nothing: milliseconds), encodes the text. That is every step but the merges,
  exact by construction: each byte-level character of each pre-token comes back as one token
  with its word index and its offsets in the original text; added tokens and the
  post-processor's tokens come back with their own ids.
- The merges run here, per pre-token (a run of tokens with one word index), over the form's
  merge table binary-searched in place: `tokenizers`' own rule (``Word::merge_all``): the
  adjacent pair of lowest rank first, the leftmost of equal ones, until none merges; with
  ``ignore_merges`` a pre-token that is a vocabulary entry is that entry. A merged token's
  offsets are its first character's start and its last one's end, as `tokenizers` converts a
  token's span through the same alignments. Results are memoised per pre-token.
- Words learnt: once a process has merged a few hundred pre-tokens, those that merged into one
  token are put into the tiny tokenizer's model as vocabulary words, with ``ignore_merges`` (which
  makes `tokenizers` give a pre-token that is a vocabulary word as that one token). Such a word
  then comes back from `tokenizers` already merged, with the span a merge gives it: fewer tokens to
  convert and group, no merge to look up. The model only ever holds what the merges above gave,
  and a rebuilt model is adopted only if it encodes the text just encoded exactly as before.
- ``decode`` of the ByteLevel decoder: the token's characters back to bytes (a token with a
  character outside the alphabet: its UTF-8 as is), decoded with U+FFFD for invalid bytes.

Used only for a tokenizer whose form records the engine proven (promptlint.fastbpe.proof: the
same ids, tokens and offsets on the corpus of hard strings; every id's decode and token text;
the same added tokens); anything it does not provide (``to_str``, llama.cpp's encoder) builds
the real tokenizer from the form on first use. A copy with more special tokens is the same
engine around a rebuilt tiny tokenizer (promptlint.fastbpe.special_copy).
"""

from __future__ import annotations

import heapq
import re
import zlib
from bisect import bisect_left
from itertools import compress, islice
from operator import eq
from typing import Dict, List, Optional, Sequence, Tuple

from promptlint.fastbpe import form

_MASK = 0xFFFFFFFF
_HEAP_FROM = 24  # pre-tokens longer than this merge through a heap (a 1,000-space run stays linear-log)
_MEMO_MAX = 1 << 16  # pre-tokens remembered (then forgotten at once: a resident process stays bounded)
_PAIRS_MAX = 1 << 20  # pair lookups remembered
_LEARN_FIRST = 512  # one-token words merged before the tiny model first learns them (then at each doubling)
_LEARN_MAX = 1 << 16  # words learnt at most (a resident process stays bounded)
# Merging in Python costs ~3x what tokenizers' Rust model costs per character, and building that
# model from the form costs what merging ~2 characters per merge-table entry costs (measured: 1.3 s
# for cl100k's 233k entries, 1.8 s for Qwen2.5's 294k, against 2.9 us a character merged; the model
# costs as much as parsing the tokenizer.json). A process builds it once it has merged twice that
# in Python (_CHARS_PER_ENTRY per entry, never under _SWITCH_CHARS): a worker of a cold run over a
# mid-size repository (0.5-0.6 M characters each for 60 templates and 20 chat templates) then never
# pays a build for the little it has left, and a long run's worst case stays ~3x the better choice.
# A run that knows its volume up front builds it before forking (expect). A one-template check
# stays far below.
_SWITCH_CHARS = 400_000
_CHARS_PER_ENTRY = 4


_FEW = 8  # texts: fewer are encoded one by one (tokenizers' parallel batch costs ~25 us to dispatch, a short text ~4 us)


def encode_few(tok, texts: Sequence[str], add_special_tokens: bool) -> list:
    """``tok.encode_batch(texts)`` (a `tokenizers.Tokenizer`'s: the same encodings, in order), one
    ``encode`` each for a few texts (a llama.cpp fragment's two or three words) and in a batch else."""
    if len(texts) < _FEW:
        return [tok.encode(t, add_special_tokens=add_special_tokens) for t in texts]
    return tok.encode_batch(list(texts), add_special_tokens=add_special_tokens)


def refusal(data: Dict) -> Optional[str]:
    """Why this engine cannot stand for the tokenizer in ``data`` (None: it may, if proven)."""
    model = data["model"]
    if model.get("byte_fallback") or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        return "byte fallback or subword affixes"
    if model.get("dropout") not in (None, 0, 0.0):
        return "BPE dropout"
    if not _has(data.get("pre_tokenizer"), "pretokenizers", lambda d: d.get("type") == "ByteLevel"):
        return "no byte-level pre-tokenizer"
    if any(c not in model["vocab"] for c in form.byte_alphabet()):
        return "a byte-level character outside the vocabulary"
    if _has(data.get("post_processor"), "processors", lambda d: d.get("type") not in ("ByteLevel", "TemplateProcessing")
            or d.get("trim_offsets") is True):
        return "a post-processor that trims or rewrites offsets"
    return None


def _has(component, key: str, test) -> bool:
    if not isinstance(component, dict):
        return False
    if component.get("type") == "Sequence":
        return any(_has(c, key, test) for c in component.get(key) or [])
    return bool(test(component))


class Encoding:
    """What `tokenizers.Encoding` gives that promptlint reads. ``tokens`` (each id's text: only the
    proof reads them) is made when asked, from the ids."""

    __slots__ = ("ids", "offsets", "_engine")

    def __init__(self, ids: List[int], offsets: List[Tuple[int, int]], engine: "FastTokenizer"):
        self.ids, self.offsets, self._engine = ids, offsets, engine

    @property
    def tokens(self) -> List[str]:
        return self._engine.tokens_of(self.ids)


class FastTokenizer:
    """The surface of `tokenizers.Tokenizer` that promptlint.tokenization.tokens uses."""

    def __init__(self, parts: form.Parts, tiny):
        self._parts, self._tiny = parts, tiny
        views = parts.views
        self._keys, self._vals = views["keys"], views["vals"]
        self._n = len(self._keys)
        self._table, self._starts, self._vhash = views["table"], views["starts"], views["vhash"]
        verdict = parts.header["engine"]  # what it was proven with
        self._ignore_merges = bool(verdict.get("ignore_merges"))
        self._decoder = verdict.get("decoder")
        self._memo: Dict[str, Tuple[Tuple[int, ...], Tuple[int, ...]]] = {}
        self._pairs: Dict[int, int] = {}  # pair -> rank << 32 | new id, -1: no merge (lookups memoised)
        self._added: Optional[Dict[int, str]] = None
        self._added_ids: Optional[Dict[str, int]] = None
        self._real = None
        self._base: Optional[FastTokenizer] = None  # a copy's original (with_special_tokens): its volume and model
        self._encoded = 0  # characters encoded so far by it and its copies (see switch_chars)
        self._bytes: Optional[Tuple[Dict[int, int], object]] = None  # _bytes_of's byte table and its outside-the-alphabet finder
        self._texts: Dict[int, str] = {}  # id -> its decoded text (a pure function of the id, memoised)
        self._extra: Tuple[str, ...] = ()  # special texts added to this copy (with_special_tokens)
        self._learnt: Dict[str, int] = {}  # byte-level word -> the one token its merges give (shared by copies)
        self._taught = 0  # words of _learnt this copy's tiny model holds
        self._learning = True  # False once a rebuilt model did not encode as before (never again)
        self._tiny_vocab: Optional[Dict[str, int]] = None  # the tiny model's own vocabulary (the byte characters)

    def with_special_tokens(self, texts: Sequence[str]) -> "Optional[FastTokenizer]":
        """A copy that also matches each of ``texts`` as one special token, as the real tokenizer
        with ``add_special_tokens`` of them does, ids included (promptlint.fastbpe.special_copy);
        the merge tables and memos are shared. None: no copy vouched for (the caller parses)."""
        from promptlint.fastbpe import special_copy

        if not special_copy.rule_holds():
            return None
        extra = self._extra + tuple(texts)  # a copy's copy: the form's tiny JSON with all of them, in order
        tiny = special_copy.tiny_with(bytes(self._parts.views["tiny"]), extra, self._vocab_id, len(self._starts) - 1)
        if tiny is None:
            return None
        copy = FastTokenizer(self._parts, tiny)
        copy._memo, copy._pairs, copy._learnt = self._memo, self._pairs, self._learnt  # pure functions of the tables: shared
        copy._extra = extra
        copy._base = self._base or self  # one volume and one Rust model for the original and every copy
        return copy

    # -- encoding

    def encode(self, text: str, add_special_tokens: bool = True) -> Encoding:
        if self._volume(len(text)):
            return self.real().encode(text, add_special_tokens=add_special_tokens)
        out = self._merged(self._tiny.encode(text, add_special_tokens=add_special_tokens))
        if self._learning and len(self._learnt) >= max(_LEARN_FIRST, 2 * self._taught):
            self._learn(text, add_special_tokens, out)
        return out

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = True) -> List[Encoding]:
        if self._volume(sum(len(t) for t in texts)):
            return self.real().encode_batch(list(texts), add_special_tokens=add_special_tokens)
        out = [self._merged(e) for e in encode_few(self._tiny, texts, add_special_tokens)]
        if out and self._learning and len(self._learnt) >= max(_LEARN_FIRST, 2 * self._taught):
            self._learn(texts[-1], add_special_tokens, out[-1])
        return out

    def learn(self) -> bool:
        """Teach the tiny model every one-token word merged so far, now (the proof calls it; a run
        learns as it goes). Whether the model now holds them."""
        probe = "Hello, world! It's 2025.\n  You are a helpful assistant."
        return self._learn(probe, False, self._merged(self._tiny.encode(probe, add_special_tokens=False)))

    def _learn(self, text: str, add_special_tokens: bool, expected: Encoding) -> bool:
        """A tiny model that also holds the words learnt (``ignore_merges``: a pre-token that is one of
        them comes back as that token), adopted if it encodes ``text`` as ``expected``, else dropped
        together with any further learning."""
        from tokenizers.models import BPE

        if self._tiny_vocab is None:
            import json

            self._tiny_vocab = json.loads(self._tiny.to_str())["model"]["vocab"]
        vocab = dict(self._learnt)
        vocab.update(self._tiny_vocab)
        before = self._tiny.model
        self._tiny.model = BPE(vocab, [], ignore_merges=True)
        again = self._merged(self._tiny.encode(text, add_special_tokens=add_special_tokens))
        if again.ids != expected.ids or again.offsets != expected.offsets:
            self._tiny.model = before
            self._learning = False
            return False
        self._taught = len(self._learnt)
        return True

    def expect(self, chars: int) -> None:
        """At least ``chars`` characters are coming (the driver's plan, before it forks workers): past
        the switch volume the model is built now, once, and the workers forked after share its memory
        instead of each merging that volume in Python and then building a copy of its own."""
        if chars > self.switch_chars():
            (self._base or self).real()

    def _volume(self, chars: int) -> bool:
        """Whether to encode with the real model (proven identical): once it (or the original's, for a
        copy: a chat template's special tokens) exists, or once this process has merged
        ``switch_chars()`` characters in Python through the original and its copies."""
        base = self._base or self
        base._encoded += chars
        return self._real is not None or base._real is not None or base._encoded > self.switch_chars()

    def switch_chars(self) -> int:
        """Characters merged in Python after which building the real model pays: proportional to
        the merge table the build converts (see _CHARS_PER_ENTRY)."""
        return max(_SWITCH_CHARS, _CHARS_PER_ENTRY * self._n)

    def _merged(self, enc) -> Encoding:
        # Only ids, offsets and word ids are read from the tiny encoding (its token texts are not
        # needed); a pre-token is memoised by its byte tokens' ids. The positions where a token
        # continues the pre-token before it (the same word id) are found in C: once words are learnt
        # they are few, and every other token is copied as it came, in slices.
        ids, offsets, words = enc.ids, enc.offsets, enc.word_ids
        joins = [k for k in compress(range(1, len(words)), map(eq, islice(words, 1, None), words)) if words[k] is not None]
        if not joins:
            return Encoding(ids, offsets, self)
        out_ids: List[int] = []
        out_offsets: List[Tuple[int, int]] = []
        memo = self._memo
        done, i, m = 0, 0, len(joins)
        while i < m:
            start, end = joins[i] - 1, joins[i] + 1  # the pre-token [start, end): a run of joins
            i += 1
            while i < m and joins[i] == end:
                end += 1
                i += 1
            out_ids += ids[done:start]
            out_offsets += offsets[done:start]
            done = end
            piece = tuple(ids[start:end])
            known = memo.get(piece)
            if known is None:
                known = self._word(piece)
                if len(memo) >= _MEMO_MAX:
                    memo.clear()
                memo[piece] = known
                if len(known[0]) == 1 and self._learning and len(self._learnt) < _LEARN_MAX:
                    self._learnt["".join(map(self._token, piece))] = known[0][0]
            merged, lengths = known
            if len(merged) == 1:  # the whole pre-token one token (most words)
                out_ids.append(merged[0])
                out_offsets.append((offsets[start][0], offsets[end - 1][1]))
            else:
                at = start
                for tid, length in zip(merged, lengths):
                    out_ids.append(tid)
                    out_offsets.append((offsets[at][0], offsets[at + length - 1][1]))
                    at += length
        out_ids += ids[done:]
        out_offsets += offsets[done:]
        return Encoding(out_ids, out_offsets, self)

    def _word(self, ids: Tuple[int, ...]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        """A pre-token's merged ids and how many byte tokens each covers, from its byte tokens' ids."""
        if self._ignore_merges:
            whole = self._vocab_id("".join(map(self._token, ids)))
            if whole is not None:
                return (whole,), (len(ids),)
        if len(ids) > _HEAP_FROM:
            return self._merge_heap(ids)
        return self._merge_scan(ids)

    def _rank(self, left: int, right: int) -> int:
        """rank << 32 | new id of merging ``left`` and ``right``; -1 when they do not merge."""
        key = left << 32 | right
        found = self._pairs.get(key)
        if found is None:
            i = bisect_left(self._keys, key)
            found = self._vals[i] if i < self._n and self._keys[i] == key else -1
            if len(self._pairs) >= _PAIRS_MAX:  # a resident process (daemon, language server) stays bounded
                self._pairs.clear()
            self._pairs[key] = found
        return found

    def _merge_scan(self, ids: List[int]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        """Lowest rank first, leftmost of equal ones, one merge at a time (short pre-tokens)."""
        ids = list(ids)
        lengths = [1] * len(ids)
        rank = self._rank
        while len(ids) > 1:
            best, at = -1, -1
            for i in range(len(ids) - 1):
                r = rank(ids[i], ids[i + 1])
                if r >= 0 and (best < 0 or r >> 32 < best >> 32):
                    best, at = r, i
            if best < 0:
                break
            ids[at:at + 2] = [best & _MASK]
            lengths[at:at + 2] = [lengths[at] + lengths[at + 1]]
        return tuple(ids), tuple(lengths)

    def _merge_heap(self, ids: List[int]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        """The same rule through a heap of (rank, position), as ``Word::merge_all`` does it: an
        entry whose pair no longer makes its new id is stale and skipped."""
        n = len(ids)
        sym = list(ids)
        length = [1] * n
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        rank = self._rank
        heap = []
        for i in range(n - 1):
            r = rank(sym[i], sym[i + 1])
            if r >= 0:
                heap.append((r >> 32, i, r & _MASK))
        heapq.heapify(heap)
        while heap:
            _, pos, new_id = heapq.heappop(heap)
            if length[pos] == 0 or nxt[pos] == -1:
                continue
            right = nxt[pos]
            r = rank(sym[pos], sym[right])
            if r < 0 or r & _MASK != new_id:
                continue
            sym[pos] = new_id
            length[pos] += length[right]
            length[right] = 0
            nxt[pos] = nxt[right]
            if nxt[pos] != -1:
                prev[nxt[pos]] = pos
            if prev[pos] >= 0:
                r = rank(sym[prev[pos]], sym[pos])
                if r >= 0:
                    heapq.heappush(heap, (r >> 32, prev[pos], r & _MASK))
            if nxt[pos] != -1:
                r = rank(sym[pos], sym[nxt[pos]])
                if r >= 0:
                    heapq.heappush(heap, (r >> 32, pos, r & _MASK))
        keep = [i for i in range(n) if length[i]]
        return tuple(sym[i] for i in keep), tuple(length[i] for i in keep)

    # -- the vocabulary

    def _token(self, token_id: int) -> str:
        return str(self._table[self._starts[token_id]:self._starts[token_id + 1] - 1], "utf-8")  # no bytes copy

    def _vocab_id(self, text: str) -> Optional[int]:
        """The model vocabulary's id of ``text`` (what ``model.token_to_id`` answers)."""
        raw = text.encode("utf-8")
        crc = zlib.crc32(raw)
        i = bisect_left(self._vhash, crc << 32)
        while i < len(self._vhash) and self._vhash[i] >> 32 == crc:
            tid = self._vhash[i] & _MASK
            if bytes(self._table[self._starts[tid]:self._starts[tid + 1] - 1]) == raw:
                return tid
            i += 1
        return None

    def _added_by_id(self) -> Dict[int, str]:
        if self._added is None:
            self._added = {i: t.content for i, t in self._tiny.get_added_tokens_decoder().items()}
        return self._added

    def token_to_id(self, text: str) -> Optional[int]:
        if self._added_ids is None:
            self._added_ids = {content: i for i, content in self._added_by_id().items()}
        found = self._added_ids.get(text)
        return found if found is not None else self._vocab_id(text)

    def id_to_token(self, token_id: int) -> Optional[str]:
        return self.tokens_of((token_id,))[0]

    def tokens_of(self, ids: Sequence[int]) -> List[Optional[str]]:
        """``id_to_token`` of each id, in one pass (``id_to_token``, ``decode`` and the proof, which
        compares every id's at once, all read them here): an added token's text, else the
        vocabulary's, else None."""
        added = self._added if self._added is not None else self._added_by_id()
        table, starts = self._table, self._starts
        n = len(starts) - 1
        return [added[i] if i in added else str(table[starts[i]:starts[i + 1] - 1], "utf-8") if 0 <= i < n else None
                for i in ids]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        if self._decoder != "ByteLevel":
            return self.real().decode(list(ids), skip_special_tokens=skip_special_tokens)
        if len(ids) == 1 and not skip_special_tokens:  # one token's text (tokens.token_text: per token of a render)
            text = self._texts.get(ids[0])
            if text is None:
                if len(self._texts) >= _MEMO_MAX:
                    self._texts.clear()
                text = self._texts[ids[0]] = self.decode_each(ids)[0]
            return text
        if skip_special_tokens:
            specials = {i for i, t in self._tiny.get_added_tokens_decoder().items() if t.special}
            ids = [i for i in ids if i not in specials]
        return b"".join(self._bytes_of(self.tokens_of(ids))).decode("utf-8", "replace")

    def decode_each(self, ids: Sequence[int]) -> List[str]:
        """``decode([i], skip_special_tokens=False)`` of each id, in one pass (what that call
        answers, memo aside; the proof compares every id's at once)."""
        if self._decoder != "ByteLevel":
            return self.real().decode_batch([[i] for i in ids], skip_special_tokens=False)
        return [raw.decode("utf-8", "replace") for raw in self._bytes_of(self.tokens_of(ids))]

    def _bytes_of(self, tokens: Sequence[Optional[str]]) -> List[bytes]:
        """The ByteLevel decoder's bytes of each token (None: an id without one, nothing)."""
        if self._bytes is None:
            # each alphabet character to the byte it stands for, as a str.translate table (to Latin-1
            # characters, then encoded: one C pass per token), and what finds a character outside it
            alphabet = form.byte_alphabet()
            self._bytes = ({ord(c): b for b, c in enumerate(alphabet)},
                           re.compile("[^" + "".join(re.escape(c) for c in alphabet) + "]").search)
        table, outside = self._bytes
        # a token with a character outside the alphabet: tokenizers keeps the token's UTF-8
        return [b"" if t is None else t.translate(table).encode("latin-1") if outside(t) is None else t.encode("utf-8")
                for t in tokens]

    # -- what comes from tokenizers itself

    def get_added_tokens_decoder(self):
        return self._tiny.get_added_tokens_decoder()

    @property
    def normalizer(self):
        return self._tiny.normalizer

    @property
    def pre_tokenizer(self):
        return self._tiny.pre_tokenizer

    @property
    def post_processor(self):
        return self._tiny.post_processor

    def to_str(self, pretty: bool = False) -> str:
        return self.real().to_str(pretty)

    def real(self):
        """The `tokenizers.Tokenizer` built from the form (proven identical when it was written),
        for what this engine does not provide; built once, on first use."""
        if self._real is None:
            # a copy wraps the original's BPE model (its costly part, shared: tokenizers' models are reference-counted)
            real = form.build(self._parts) if self._base is None else form.build(self._parts, self._base.real().model)
            if self._extra:  # a copy: the texts added as the parsed copy adds them
                from promptlint.fastbpe.special_copy import added_tokens

                real.add_special_tokens(added_tokens(self._extra))
            self._real = real
        return self._real


def build(parts: form.Parts) -> FastTokenizer:
    from promptlint.fastbpe import native  # the extension alone (fastbpe/native.py): the tiny tokenizer is all a cold run builds

    return FastTokenizer(parts, native.module().Tokenizer.from_str(bytes(parts.views["tiny"]).decode("utf-8")))


def verdict_for(data: Dict) -> Dict:
    """What the engine is proven with, from the tokenizer.json: the model's ``ignore_merges`` and
    whether ``decode`` is the ByteLevel decoder's (else it is asked of the real tokenizer)."""
    decoder = data.get("decoder")
    return {"ignore_merges": bool(data["model"].get("ignore_merges")),
            "decoder": "ByteLevel" if isinstance(decoder, dict) and decoder.get("type") == "ByteLevel" else None}
