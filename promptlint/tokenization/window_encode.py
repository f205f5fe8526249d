"""Encode a variant by tokenizing only the window where it differs from the base render.

A variant of a template differs from the base render from some character on (and usually
agrees again near the end). Its tokens are the base's tokens before a *left anchor*, the
window's tokens, and the base's tokens from a *right anchor* on. The answer is exactly the
full encode's, because an anchor is a position that no tokenization step can see across:

- hard anchor: an added token (not normalized, no lstrip/rstrip/single_word) that no other
  added token can overlap or contain. Every occurrence of its text is split out as that token
  before normalizing and pre-tokenizing, and the text on each side is tokenized on its own
  (Hugging Face ``tokenizers`` processes the pieces between added tokens independently).
- soft anchor: the start of a line (a newline, then a letter, digit or punctuation) in a
  tokenizer whose pre-tokenizer is a split regex of the GPT family, which always splits there
  (verified on probes when the tokenizer is first used), with a normalizer that cannot act
  across that boundary and no added token that contains it.

Only positions where the base encoding has a token boundary qualify, and the window's own
tokens are checked to re-synchronise at both anchors (same ids, same offsets); when no anchor
qualifies the window extends to that end of the text, and when a check fails the variant is
encoded whole. Engine encoders other than the pinned tokenizer (llama.cpp's) are always
encoded whole. ``PROMPTLINT_FULL_ENCODE=1`` turns windows off (the benchmark compares both).
"""

from __future__ import annotations

import json
import re
import weakref
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from promptlint.arithmetic.compare import shared_prefix
from promptlint.pools.tokenizers import windowed
from promptlint.tokenization.tokens import Encoding, LoadedTokenizer

FULL_ENCODE_ENV = "PROMPTLINT_FULL_ENCODE"  # read by the front end into the Workspace (``full_encode``)
_MAX_WALK = 4096  # tokens searched for an anchor on each side before the window runs to the end


def enabled() -> bool:
    return windowed()


# ----------------------------------------------------------------------------- public


def encode_variants(tokenizer, base_text: str, base: Encoding, texts: Sequence[str], add_special_tokens: bool) -> List[Encoding]:
    """The encodings of ``texts`` (each exactly ``tokenizer.encode(text, add_special_tokens)``),
    tokenizing windows against the base render ``base_text`` whose encoding is ``base``."""
    plan = _plan(tokenizer) if enabled() else None
    frame = plan.frame(base_text, base, add_special_tokens) if plan is not None else None
    if frame is None:
        return encode_all(tokenizer, list(texts), add_special_tokens)
    out: List[Optional[Encoding]] = [None] * len(texts)
    windows = []  # (index, window)
    for k, text in enumerate(texts):
        if text == base_text:
            out[k] = Encoding(list(base.ids), list(base.offsets))
            continue
        windows.append((k, plan.window(frame, text)))
    encoded = encode_all(tokenizer, [text[w.start:w.end] for (k, w), text in ((kw, texts[kw[0]]) for kw in windows)], False)
    retry = []
    for (k, w), enc in zip(windows, encoded):
        spliced = plan.splice(frame, w, enc, texts[k])
        if spliced is None:
            retry.append(k)
        else:
            out[k] = spliced
    for k, enc in zip(retry, encode_all(tokenizer, [texts[k] for k in retry], add_special_tokens)):
        out[k] = enc
    return out  # type: ignore[return-value]


def encode_variant(tokenizer, base_text: str, base: Encoding, text: str, add_special_tokens: bool) -> Encoding:
    return encode_variants(tokenizer, base_text, base, [text], add_special_tokens)[0]


def encode_all(tokenizer, texts: List[str], add_special_tokens: bool) -> List[Encoding]:
    """Each text encoded whole (in one batch where the tokenizer has one)."""
    if not texts:
        return []
    batch = getattr(tokenizer, "encode_batch", None)
    if batch is not None and len(texts) > 1:
        return batch(texts, add_special_tokens=add_special_tokens)
    return [tokenizer.encode(t, add_special_tokens=add_special_tokens) for t in texts]


# ----------------------------------------------------------------------------- the plan per tokenizer


class _Frame:
    """The base as windows need it: its plain encoding (no post-processor tokens) and what the
    post-processor puts around it when the run adds special tokens."""

    __slots__ = ("text", "ids", "offsets", "lead", "trail")

    def __init__(self, text, ids, offsets, lead, trail):
        self.text, self.ids, self.offsets, self.lead, self.trail = text, ids, offsets, lead, trail


class _Window:
    __slots__ = ("start", "end", "i", "j", "q")

    def __init__(self, start, end, i, j, q):
        # variant text[start:end] replaces base tokens [i, j); q: the right anchor's offset in the variant
        self.start, self.end, self.i, self.j, self.q = start, end, i, j, q


class _Plan:
    def __init__(self, tokenizer: LoadedTokenizer):
        # a weak reference: the plan lives in the tokenizer's __dict__, and a strong one would make
        # a cycle that keeps a released tokenizer (hundreds of MB outside Python's view) until a GC pass
        self._tok = weakref.ref(tokenizer)
        decoder = tokenizer.added_tokens_decoder()
        self.added_texts = [t.content for t in decoder.values() if t.content]
        # candidate hard anchors: id -> text (isolation is decided on first use)
        self.candidates: Dict[int, str] = {
            i: t.content for i, t in decoder.items()
            if t.content and not (t.normalized or t.lstrip or t.rstrip or t.single_word)
        }
        self._isolated: Dict[int, bool] = {}
        self._joined: Optional[str] = None
        self._texts: set = set()
        self._frames: Dict[str, tuple] = {}
        self.starts_line = _soft_anchors(tokenizer, self.added_texts)

    @property
    def tok(self) -> LoadedTokenizer:
        return self._tok()

    # -- anchors

    def hard(self, token_id: int) -> bool:
        ok = self._isolated.get(token_id)
        if ok is None:
            text = self.candidates.get(token_id)
            ok = self._isolated[token_id] = text is not None and self._is_isolated(text)
        return ok

    def _is_isolated(self, t: str) -> bool:
        """No added token's occurrence can overlap an occurrence of ``t`` (itself included), contain
        it or lie inside it: then every occurrence of ``t`` is split out as ``t``."""
        if self._joined is None:
            self._joined = "\x00" + "\x00".join(self.added_texts) + "\x00"  # substring tests run in C
            self._texts = set(self.added_texts)
        joined, n = self._joined, len(t)
        if joined.count(t) != self.added_texts.count(t):  # inside a longer added token
            return False
        if any(t[a:b] in self._texts for a in range(n) for b in range(a + 1, n + 1) if (a, b) != (0, n)):
            return False  # an added token inside it
        # an added token ending with a prefix of t, or starting with a suffix of it (t's own borders too)
        return not any(t[:k] + "\x00" in joined or "\x00" + t[-k:] in joined for k in range(1, n))

    def _soft_at(self, text: str, pos: int) -> bool:
        return self.starts_line is not None and 0 < pos < len(text) and text[pos - 1] == "\n" and self.starts_line(text[pos])

    # -- the base

    def frame(self, base_text: str, base: Encoding, add_special_tokens: bool) -> Optional[_Frame]:
        if not add_special_tokens:
            return _Frame(base_text, base.ids, base.offsets, ([], []), ([], []))
        known = self._frames.get(base_text)
        if known is not None and known[0] is base:
            return known[1]
        frame = self._framed(base_text, base)
        if len(self._frames) >= 16:  # a few bases at a time (one template's, a chat run's)
            self._frames.pop(next(iter(self._frames)))
        self._frames[base_text] = (base, frame)
        return frame

    def _framed(self, base_text: str, base: Encoding) -> Optional[_Frame]:
        """Split the base's encoding with special tokens into the post-processor's tokens and the
        plain encoding between them (the post-processor does not depend on the text)."""
        plain = self.tok.encode(base_text, add_special_tokens=False)
        n, full = len(plain.ids), base.ids
        for lead in range(len(full) - n + 1):  # the post-processor's tokens before and after it
            if full[lead:lead + n] == plain.ids and base.offsets[lead:lead + n] == plain.offsets:
                break
        else:
            return None
        lead_ids, trail_ids = full[:lead], full[lead + n:]
        lead_offsets, trail_offsets = base.offsets[:lead], base.offsets[lead + n:]
        end = len(base_text)
        if any(o != (0, 0) for o in lead_offsets) or any(o not in ((0, 0), (end, end)) for o in trail_offsets):
            return None
        return _Frame(base_text, plain.ids, plain.offsets, (lead_ids, lead_offsets), (trail_ids, trail_offsets))

    # -- one variant

    def window(self, f: _Frame, text: str) -> _Window:
        base = f.text
        c = shared_prefix(base, text)
        s = _shared_suffix(base, text, min(len(base), len(text)) - c)
        offsets, ids = f.offsets, f.ids
        # left: the last anchor whose token lies before the first difference
        i = _first_token_at_or_after(offsets, c)
        start, left = 0, 0
        # the cheap tests first (an anchor's token, a newline before it): this walk runs for every variant
        cands, soft = self.candidates, self.starts_line is not None
        for k in range(min(i, len(ids)) - 1, max(-1, i - 1 - _MAX_WALK), -1):
            a, b = offsets[k]
            if b > c:
                continue
            t = ids[k]
            if ((t in cands and self.hard(t) and b - a == len(cands[t]))
                    or (soft and b < c and a > 0 and base[a - 1] == "\n" and self._soft_at(base, a))) and _boundary(offsets, k):
                start, left = a, k
                break
        # right: the first anchor inside the shared suffix
        tail = len(base) - s
        j, q, end = len(ids), len(text), len(text)
        delta = len(text) - len(base)
        for k in range(_first_token_at_or_after(offsets, tail), min(len(ids), _first_token_at_or_after(offsets, tail) + _MAX_WALK)):
            a, b = offsets[k]
            if a < tail or not _boundary(offsets, k) or b <= a:
                continue
            if (self.hard(ids[k]) and b - a == len(self.candidates[ids[k]])) or (self._soft_at(base, a) and a - 1 >= tail):
                j, q, end = k, a + delta, b + delta
                break
        return _Window(start, end, left, j, q)

    def splice(self, f: _Frame, w: _Window, enc: Encoding, text: str) -> Optional[Encoding]:
        """The variant's full encoding from the window's, or None when the window does not
        re-synchronise with the base at its anchors."""
        ids, offsets, a = f.ids, f.offsets, w.start
        wids, woffs = enc.ids, enc.offsets
        if a > 0:
            if not wids or wids[0] != ids[w.i] or woffs[0] != (offsets[w.i][0] - a, offsets[w.i][1] - a):
                return None
        if w.j < len(ids):
            q = w.q - a
            r = _first_token_at_or_after(woffs, q)
            if r >= len(wids) or woffs[r][0] != q or not _boundary(woffs, r):
                return None
            if wids[r] != ids[w.j] or woffs[r][1] != offsets[w.j][1] + (len(text) - len(f.text)) - a:
                return None
        else:
            r = len(wids)
        delta = len(text) - len(f.text)
        out_ids = ids[:w.i] + wids[:r] + ids[w.j:]
        shifted = woffs[:r] if a == 0 else [(x + a, y + a) for x, y in woffs[:r]]
        rest = offsets[w.j:] if delta == 0 else [(x + delta, y + delta) for x, y in offsets[w.j:]]
        out_offsets = offsets[:w.i] + shifted + rest
        (lead_ids, lead_offsets), (trail_ids, trail_offsets) = f.lead, f.trail
        if lead_ids or trail_ids:
            end, new_end = len(f.text), len(text)
            out_ids = lead_ids + out_ids + trail_ids
            out_offsets = lead_offsets + out_offsets + [(new_end, new_end) if o == (end, end) and end else o for o in trail_offsets]
        return Encoding(out_ids, out_offsets)


def _plan(tokenizer) -> Optional[_Plan]:
    """The window plan of the pinned tokenizer (built once per tokenizer object); None for
    other encoders."""
    if not isinstance(tokenizer, LoadedTokenizer):
        return None
    plan = tokenizer.__dict__.get("_window_plan")
    if plan is None:
        plan = tokenizer.__dict__["_window_plan"] = _Plan(tokenizer)
    return plan


# ----------------------------------------------------------------------------- positions


def _boundary(offsets: Sequence[Tuple[int, int]], k: int) -> bool:
    """Token ``k`` starts a character the previous token does not share (byte tokens of one
    character share its offsets)."""
    return k == 0 or (offsets[k - 1][1] <= offsets[k][0] and offsets[k - 1][0] < offsets[k][0])


def _first_token_at_or_after(offsets: Sequence[Tuple[int, int]], pos: int) -> int:
    lo, hi = 0, len(offsets)
    while lo < hi:
        mid = (lo + hi) // 2
        if offsets[mid][0] < pos:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _shared_suffix(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix, at most ``limit`` (slices compared in C)."""
    if limit <= 0:
        return 0
    lo, hi = 0, limit
    if a[len(a) - hi:] == b[len(b) - hi:]:
        return hi
    while hi - lo > 1:  # a's last lo chars agree, the last hi do not
        mid = (lo + hi) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            lo = mid
        else:
            hi = mid
    return lo


# ----------------------------------------------------------------------------- soft anchors

_NORMALIZERS = {"NFC", "NFD", "NFKC", "NFKD", "Lowercase"}  # act per character or canonical sequence
_ANCHORED = re.compile(r"\(\?<|\\[bBAzZG]|\^|\$")  # lookbehind, word boundaries, anchors
_CLASS = re.compile(r"\[(?:\\.|[^\]\\])*\]")
_PROBE_BEFORE = ("a", "1", ".", " ", "'", "中", "\n", ")")
_PROBE_SEP = ("\n", "\r\n", " \n", ".\n", "\n\t\n")
_PROBE_LETTERS = ("a", "Z", "é", "中")
_PROBE_DIGITS = ("0", "1", "9")
_PROBE_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def _soft_anchors(tok, added_texts: List[str]) -> Optional[Callable[[str], bool]]:
    """Which characters, after a newline, always start a pre-token that the text before the
    newline cannot move (None: line starts are no anchors for this tokenizer)?"""
    if any(re.search(r"\n\S", t) for t in added_texts):
        return None
    normalizer = _state(tok.normalizer)
    if normalizer is not None and not _normalizer_ok(normalizer):
        return None
    pre_tokenizer = tok.pre_tokenizer  # the component, never ``tok``: the plan lives in the tokenizer (no cycle)
    pre = _state(pre_tokenizer)
    if pre is None or not _pre_tokenizer_ok(pre):
        return None

    def splits_before(after: str) -> bool:
        for before in _PROBE_BEFORE:
            for sep in _PROBE_SEP:
                probe = before + sep + after + after + " x"
                at = len(before) + len(sep)
                if not any(start == at for _, (start, _) in pre_tokenizer.pre_tokenize_str(probe)):
                    return False
        return True

    known: Dict[str, bool] = {}  # per character class, probed on first use

    def starts_line(ch: str) -> bool:
        kind = "letter" if ch.isalpha() else "digit" if ch.isdecimal() else ch if ch in _PROBE_PUNCTUATION else None
        if kind is None:
            return False
        if kind not in known:
            probes = _PROBE_LETTERS if kind == "letter" else _PROBE_DIGITS if kind == "digit" else kind
            known[kind] = all(splits_before(p) for p in probes)
        return known[kind]

    return starts_line


def _state(component) -> Optional[dict]:
    if component is None:
        return None
    try:
        return json.loads(component.__getstate__())
    except Exception:  # an unknown component: no soft anchors
        return {"type": "?"}


def _normalizer_ok(d: dict) -> bool:
    if d.get("type") == "Sequence":
        return all(_normalizer_ok(n) for n in d.get("normalizers", []))
    return d.get("type") in _NORMALIZERS


def _pre_tokenizer_ok(d: dict) -> bool:
    kind = d.get("type")
    if kind == "Sequence":
        parts = d.get("pretokenizers", [])
        return bool(parts) and all(_pre_tokenizer_ok(p) for p in parts)
    if kind == "ByteLevel":
        return not d.get("add_prefix_space")
    if kind == "Digits":
        return True
    if kind == "Split":
        pattern = (d.get("pattern") or {}).get("Regex")
        if pattern is None or d.get("invert") or d.get("behavior") != "Isolated":
            return False
        return not _ANCHORED.search(_CLASS.sub("", pattern))
    return False
