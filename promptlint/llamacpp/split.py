"""llama.cpp's pre-tokenizer: a port of ``unicode_regex_split`` (src/unicode.cpp, commit 0c1e570).

Each regex of the vocabulary's list splits every word the previous one produced. A regex
that ``unicode_regex_split_custom`` recognizes by its exact text goes to a hand-written
splitter (GPT-2, Llama 3, Qwen2, Qwen3.5, Kimi K2, AFMoE digits, newlines); those are
ported below statement by statement. Any other regex runs as std::regex does in llama.cpp:
over a "collapsed" text in which every non-ASCII code point is replaced by one byte standing
for its category (``\\p{L}`` becomes ``[\\xD2A-Za-z]`` in the regex), or, for a regex without
``\\p{..}``, over the text with non-ASCII whitespace replaced by U+000B. Both paths read
the code point categories from llama.cpp's own tables (``tables``), which is what makes this
differ from ``tokenizers``: its regex engine knows newer Unicode versions (U+1C89 is a
letter there, UNDEFINED in llama.cpp, so ``"\\u1c89's"`` splits differently).

``split_words(text, regexes)`` returns the word lengths in code points, in order (zero-length
words, which std::regex can produce, are kept: they carry no tokens).
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache
from typing import Callable, Dict, List, Sequence

from promptlint.llamacpp import tables
from promptlint.llamacpp.tables import ACCENT_MARK, LETTER, NUMBER, WHITESPACE

OUT_OF_RANGE = 0xFFFFFFFF
_PAD = 4  # sentinel positions after a word: the splitters look at most 3 code points ahead
_CR, _LF, _SP, _APOS = ord("\r"), ord("\n"), ord(" "), ord("'")
_STMD = frozenset(map(ord, "stmd"))
_R, _V, _L, _E = ord("r"), ord("v"), ord("l"), ord("e")


class SplitError(Exception):
    """A regex llama.cpp itself rejects (its std::regex fallback throws)."""


def _segments(cps: Sequence[int], fl: Sequence[int], offsets: Sequence[int]):
    """(code points, flags, length) of each word, padded with out-of-range sentinels."""
    start = 0
    for n in offsets:
        end = start + n
        yield list(cps[start:end]) + [OUT_OF_RANGE] * _PAD, list(fl[start:end]) + [0] * _PAD, n
        start = end


def _contraction(cp, pos: int, n: int, lower) -> int:
    """Length of ``(?i:'s|'t|'re|'ve|'m|'ll|'d)`` at ``pos`` (0 if none); ``lower`` maps case."""
    if cp[pos] != _APOS or pos + 1 >= n:
        return 0
    c1 = lower(cp[pos + 1])
    if c1 in _STMD:
        return 2
    if pos + 2 < n:
        c2 = lower(cp[pos + 2])
        if (c1 == _R and c2 == _E) or (c1 == _V and c2 == _E) or (c1 == _L and c2 == _L):
            return 3
    return 0


def _same(c: int) -> int:
    return c


def _whitespace_end(cp, f, pos: int, newlines: bool) -> int:
    """Where the token starting at ``pos`` ends when nothing before matched: ``\\s*[\\r\\n]+``
    (``newlines`` only), ``\\s+(?!\\S)``, ``\\s+``, else one code point (the splitters' common tail)."""
    nws = 0
    last_rn = 0
    while f[pos + nws] & WHITESPACE:
        if newlines and cp[pos + nws] in (_CR, _LF):
            last_rn = pos + nws + 1
        nws += 1
    if last_rn > 0:  # \s*[\r\n]+
        return last_rn
    if nws > 1 and cp[pos + nws] != OUT_OF_RANGE:  # \s+(?!\S)
        return pos + nws - 1
    if nws > 0:  # \s+
        return pos + nws
    return pos + 1  # no match


def split_gpt2(cps, fl, offsets) -> List[int]:
    """``unicode_regex_split_custom_gpt2``:
    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"""
    out: List[int] = []
    for cp, f, n in _segments(cps, fl, offsets):
        pos = 0
        while pos < n:
            c = cp[pos]
            k = _contraction(cp, pos, n, _same)
            if k:
                out.append(k)
                pos += k
                continue
            start = pos
            f2 = f[pos + 1] if c == _SP else f[pos]
            if f2 & LETTER:  # <space>?\p{L}+
                pos += c == _SP
                while f2 & LETTER:
                    pos += 1
                    f2 = f[pos]
                out.append(pos - start)
                continue
            if f2 & NUMBER:  # <space>?\p{N}+
                pos += c == _SP
                while f2 & NUMBER:
                    pos += 1
                    f2 = f[pos]
                out.append(pos - start)
                continue
            if not (f2 & (WHITESPACE | LETTER | NUMBER)) and f2:  # <space>?[^\s\p{L}\p{N}]+
                pos += c == _SP
                while not (f2 & (WHITESPACE | LETTER | NUMBER)) and f2:
                    pos += 1
                    f2 = f[pos]
                out.append(pos - start)
                continue
            pos = _whitespace_end(cp, f, pos, False)
            out.append(pos - start)
    return out


def _split_llama3_like(cps, fl, offsets, digits: int, marks: bool) -> List[int]:
    """``unicode_regex_split_custom_llama3`` (digits=3), ``_qwen2`` (digits=1) and ``_qwen35``
    (digits=1, marks=True: letter runs also take \\p{M}):
    (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"""
    lower = tables.codepoint_flags().tolower
    word = LETTER | ACCENT_MARK if marks else LETTER
    other = WHITESPACE | LETTER | NUMBER | (ACCENT_MARK if marks else 0)
    out: List[int] = []
    for cp, f, n in _segments(cps, fl, offsets):
        pos = 0
        while pos < n:
            c = cp[pos]
            flags = f[pos]
            k = _contraction(cp, pos, n, lower)
            if k:
                out.append(k)
                pos += k
                continue
            start = pos
            # [^\r\n\p{L}\p{N}]?\p{L}+  (qwen35: [\p{L}\p{M}]+)
            if not (c == _CR or c == _LF or flags & NUMBER):
                if flags & word or f[pos + 1] & word:
                    pos += 1
                    while f[pos] & word:
                        pos += 1
                    out.append(pos - start)
                    continue
            if flags & NUMBER:  # \p{N}{1,3} (qwen2: \p{N})
                if digits == 1:
                    pos += 1
                    out.append(1)
                    continue
                ini = pos
                while f[pos] & NUMBER:
                    pos += 1
                    if pos - ini >= digits:
                        out.append(pos - ini)
                        ini = pos
                if pos > ini:
                    out.append(pos - ini)
                continue
            # <space>?[^\s\p{L}\p{N}]+[\r\n]*  (note: the entry test reads this position's flags)
            f2 = f[pos + 1] if c == _SP else flags
            if not (f2 & other) and flags:
                pos += c == _SP
                while not (f2 & other) and f2:
                    pos += 1
                    f2 = f[pos]
                c2 = cp[pos]
                while c2 == _CR or c2 == _LF:
                    pos += 1
                    c2 = cp[pos]
                out.append(pos - start)
                continue
            pos = _whitespace_end(cp, f, pos, True)
            out.append(pos - start)
    return out


def split_llama3(cps, fl, offsets) -> List[int]:
    return _split_llama3_like(cps, fl, offsets, 3, False)


def split_qwen2(cps, fl, offsets) -> List[int]:
    return _split_llama3_like(cps, fl, offsets, 1, False)


def split_qwen35(cps, fl, offsets) -> List[int]:
    return _split_llama3_like(cps, fl, offsets, 1, True)


def is_han(c: int) -> bool:
    """``unicode_cpt_is_han``."""
    return (
        0x4E00 <= c <= 0x9FFF or 0x3400 <= c <= 0x4DBF or 0x20000 <= c <= 0x2A6DF or 0x2A700 <= c <= 0x2B73F
        or 0x2B740 <= c <= 0x2B81F or 0x2B820 <= c <= 0x2CEAF or 0x2CEB0 <= c <= 0x2EBEF
        or 0xF900 <= c <= 0xFAFF or 0x2F800 <= c <= 0x2FA1F
    )


def split_kimi_k2(cps, fl, offsets) -> List[int]:
    """``unicode_regex_split_custom_kimi_k2`` (all K2 patterns in one pass)."""
    lower = tables.codepoint_flags().tolower
    out: List[int] = []
    for cp, f, n in _segments(cps, fl, offsets):
        pos = 0
        prev = 0

        def add(end: int) -> None:
            nonlocal prev
            if end - prev > 0:
                out.append(end - prev)
            prev = end

        while pos < n:
            c = cp[pos]
            flags = f[pos]
            if is_han(c):  # [\p{Han}]+
                while is_han(cp[pos]):
                    pos += 1
                add(pos)
                continue
            is_letter_pattern = (flags & LETTER and not is_han(c)) or (
                not (c == _CR or c == _LF or flags & LETTER or flags & NUMBER)
                and f[pos + 1] & LETTER and not is_han(cp[pos + 1])
            )
            if is_letter_pattern:
                has_leading = False
                if not (c == _CR or c == _LF or flags & LETTER or flags & NUMBER):
                    has_leading = True
                    pos += 1
                has_letters = False
                while f[pos] & LETTER and not is_han(cp[pos]):
                    has_letters = True
                    pos += 1
                if has_letters or (not has_leading and f[pos] & LETTER and not is_han(cp[pos])):
                    if not has_letters:
                        pos += 1
                    while f[pos] & LETTER and not is_han(cp[pos]):
                        pos += 1
                    if cp[pos] == _APOS and pos + 1 < n:
                        c1 = lower(cp[pos + 1])
                        if c1 in _STMD:
                            pos += 2
                        elif pos + 2 < n:
                            c2 = lower(cp[pos + 2])
                            if (c1 == _R and c2 == _E) or (c1 == _V and c2 == _E) or (c1 == _L and c2 == _L):
                                pos += 3
                    add(pos)
                    continue
                elif has_leading:
                    pos -= 1
            if flags & NUMBER:  # \p{N}{1,3}
                ini = pos
                while f[pos] & NUMBER:
                    pos += 1
                    if pos - ini >= 3:
                        add(pos)
                        ini = pos
                add(pos)
                continue
            f2 = f[pos + 1] if c == _SP else flags
            if not (f2 & (WHITESPACE | LETTER | NUMBER)) and f2:  # ?[^\s\p{L}\p{N}]+[\r\n]*
                pos += c == _SP
                while not (f2 & (WHITESPACE | LETTER | NUMBER)) and f2:
                    pos += 1
                    f2 = f[pos]
                c2 = cp[pos]
                while c2 == _CR or c2 == _LF:
                    pos += 1
                    c2 = cp[pos]
                add(pos)
                continue
            pos = _whitespace_end(cp, f, pos, True)
            add(pos)
    return out


def split_afmoe(cps, fl, offsets) -> List[int]:
    """``unicode_regex_split_custom_afmoe``: digit runs in groups of three from the right."""
    out: List[int] = []
    for _cp, f, n in _segments(cps, fl, offsets):
        prev = 0
        pos = 0
        while pos < n:
            if f[pos] & NUMBER:
                digit_start = pos
                count = 0
                while f[pos] & NUMBER and pos < n:
                    count += 1
                    pos += 1
                cur = digit_start
                rem = count % 3
                if rem:
                    if cur + rem - prev > 0:
                        out.append(cur + rem - prev)
                    prev = cur = cur + rem
                while cur < digit_start + count:
                    if cur + 3 - prev > 0:
                        out.append(cur + 3 - prev)
                    prev = cur = cur + 3
                continue
            pos += 1
        if prev < n:
            out.append(n - prev)
    return out


def split_newlines(cps, fl, offsets) -> List[int]:
    """``unicode_regex_split_custom_newlines``: [^\\n]+|[\\n]+"""
    out: List[int] = []
    for cp, _f, n in _segments(cps, fl, offsets):
        pos = 0
        while pos < n:
            nl = cp[pos] == _LF
            run = pos
            while pos < n and (cp[pos] == _LF) == nl:
                pos += 1
            out.append(pos - run)
    return out


CUSTOM: Dict[str, Callable] = {
    "gpt2": split_gpt2,
    "llama3": split_llama3,
    "qwen2": split_qwen2,
    "qwen35": split_qwen35,
    "kimi_k2": split_kimi_k2,
    "afmoe": split_afmoe,
    "newlines": split_newlines,
}


# ------------------------------------------------------------------ the std::regex fallback


@lru_cache(maxsize=None)
def _collapse() -> dict:
    c = tables.data()["collapse"]
    return {
        "enum": c["ucat_enum"],
        "cpt": {int(k): v for k, v in c["ucat_cpt"].items()},
        "map": {int(k): v for k, v in c["ucat_map"].items()},
    }


@lru_cache(maxsize=256)
def _uses_categories(regex: str) -> bool:
    return any(u in regex for u in _collapse()["enum"])


def collapse_text(text: str, fl: Sequence[int]) -> str:
    """Every code point >= 128 as one character standing for its category (whitespace as \\x0b)."""
    cpt = _collapse()["cpt"]
    out = []
    for ch, f in zip(text, fl):
        if ord(ch) < 128:
            out.append(ch)
        elif f & WHITESPACE:
            out.append("\x0b")
        else:
            out.append(chr(cpt.get(f & tables.MASK_CATEGORIES, 0xD0)))
    return "".join(out)


@lru_cache(maxsize=256)
def collapse_regex(regex: str) -> str:
    """The regex with each ``\\p{..}`` category rewritten for the collapsed text (as llama.cpp does)."""
    col = _collapse()
    if any(ord(c) >= 128 for c in regex):
        raise SplitError("Regex includes both unicode categories and non-ASCII characters - not supported")
    out = []
    inside = False
    i = 0
    n = len(regex)
    while i < n:
        c = regex[i]
        if c == "[" and (i == 0 or regex[i - 1] != "\\"):
            out.append("[")
            inside = True
            i += 1
            continue
        if inside and c == "]" and regex[i - 1] != "\\":
            out.append("]")
            inside = False
            i += 1
            continue
        if c == "\\" and i + 3 < n and regex[i + 1] == "p" and regex[i + 2] == "{":
            close = regex.find("}", i + 3)
            if close != -1 and close <= i + 10:
                pat = regex[i:close + 1]
                if pat in col["enum"]:
                    flag = col["enum"][pat]
                    body = chr(col["cpt"][flag]) + col["map"][flag]
                    out.append(body if inside else "[" + body + "]")
                    i = close + 1
                    continue
        out.append(c)
        i += 1
    return "".join(out)


def _ecmascript_to_python(regex: str) -> str:
    """The few ECMAScript spellings whose meaning differs in Python's ``re``: ``$`` is the end of
    the input only (Python's also matches before a final newline)."""
    out = []
    inside = False
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            out.append(regex[i:i + 2])
            i += 2
            continue
        if c == "[" and not inside:
            inside = True
        elif c == "]" and inside:
            inside = False
        elif c == "$" and not inside:
            c = r"\Z"
        out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def _compiled(regex: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "possible nested set": same meaning in ECMAScript
        try:
            # ASCII: std::regex's \s \d \w and \b follow the "C" locale (ASCII only)
            return re.compile(_ecmascript_to_python(regex), re.ASCII)
        except re.error as e:
            raise SplitError(f"Failed to process regex: {regex!r} ({e})") from None


def _split_stl(text: str, regex: str, offsets: Sequence[int]) -> List[int]:
    """``unicode_regex_split_stl``: matches and the gaps between them, per word."""
    pat = _compiled(regex)
    out: List[int] = []
    start = 0
    for n in offsets:
        word = text[start:start + n]  # the iterator sees only this word: no look-behind, $ at its end
        last = 0
        for m in pat.finditer(word):
            if m.start() > last:
                out.append(m.start() - last)
            out.append(m.end() - m.start())
            last = m.end()
        if last < n:
            out.append(n - last)
        start += n
    return out


def split_words(text: str, regexes: Sequence[str]) -> List[int]:
    """``unicode_regex_split(text, regexes)``: word lengths in code points."""
    flags = tables.codepoint_flags()
    fl = flags.of_text(text)
    cps = [ord(c) for c in text]
    custom = tables.data()["custom_splitters"]
    collapsed = wide = None
    offsets: List[int] = [len(cps)]
    for regex in regexes:
        name = custom.get(regex)
        if name is not None:
            offsets = CUSTOM[name](cps, fl, offsets)
            continue
        if _uses_categories(regex):
            if collapsed is None:
                collapsed = collapse_text(text, fl)
            offsets = _split_stl(collapsed, collapse_regex(regex), offsets)
        else:
            if wide is None:  # std::wregex's \s knows no non-ASCII whitespace: those become \x0b
                wide = "".join("\x0b" if ord(c) > 0x7F and f & WHITESPACE else c for c, f in zip(text, fl))
            offsets = _split_stl(wide, regex, offsets)
    return offsets


def words_and_starts(text: str, regexes: Sequence[str]):
    """(the non-empty words, as ``unicode_regex_split(..., byte_encode=false)``; their start offsets)."""
    out: List[str] = []
    starts: List[int] = []
    pos = 0
    for n in split_words(text, regexes):
        if n:
            out.append(text[pos:pos + n])
            starts.append(pos)
        pos += n
    return out, starts


def words(text: str, regexes: Sequence[str]) -> List[str]:
    return words_and_starts(text, regexes)[0]
