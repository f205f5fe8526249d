"""Generate promptlint/data/llamacpp-tables.json.gz from a llama.cpp source tree.

The `llamacpp` engine profile splits text as llama.cpp does. That depends on tables that live
in llama.cpp's source, not in any tokenizer file, so they are extracted here, verbatim, from
the pinned llama.cpp commit:

- ``src/unicode-data.cpp``: the code point flag ranges (``unicode_ranges_flags``), the
  whitespace set and the lowercase map that ``unicode_cpt_flags_from_cpt`` and
  ``unicode_tolower`` read. llama.cpp generated them from an older Unicode database, so code
  points assigned later (e.g. all of Unicode 16) are UNDEFINED there.
- ``src/unicode.cpp``: which regex strings ``unicode_regex_split_custom`` hands to a
  hand-written splitter instead of std::regex (the Python port implements each by name), and
  how ``unicode_regex_split`` collapses text and regex for its std::regex fallback
  (``k_ucat_enum``, ``k_ucat_cpt``, ``k_ucat_map``; the flag bits from ``src/unicode.h``).
- ``src/llama-vocab.cpp``: the pre-tokenizer regex lists per ``LLAMA_VOCAB_PRE_TYPE_*``
  (``llm_tokenizer_bpe``), whether the words are GPT-2 byte-encoded, and which
  ``tokenizer.ggml.pre`` names select which type (with their ``ignore_merges`` setting).
- ``conversion/base.py``: the converter's ``chktxt`` and the table from the sha256 of its
  token ids (``chkhsh``) to the ``tokenizer.ggml.pre`` name written into the GGUF.

Usage (the llama.cpp tree vendored in the llama-cpp-python 0.3.36 sdist is commit 0c1e570):

    pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36
    tar xzf llama_cpp_python-0.3.36.tar.gz
    python scripts/gen_llamacpp_tables.py llama_cpp_python-0.3.36/vendor/llama.cpp \
        --commit 0c1e57098bba43ac29e6e3b677cdceebdd22334f

The output is deterministic (sorted keys, fixed gzip mtime): regenerating from the same tree
gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "promptlint" / "data" / "llamacpp-tables.json.gz"
FILES = ("src/unicode-data.cpp", "src/unicode.h", "src/unicode.cpp", "src/llama-vocab.cpp", "conversion/base.py")


# ----------------------------------------------------------------------------- C++ text


def strip_comments(src: str) -> str:
    """C++ source without // and /* */ comments (string and char literals kept intact)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "v": "\v", "f": "\f", "a": "\a", "b": "\b",
                   "\\": "\\", "\"": "\"", "'": "'", "?": "?"}


def c_string(body: str) -> str:
    """The value of a C++ narrow string literal's body (source is UTF-8; escapes are ASCII here)."""
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            i += 2
        elif e == "x":
            m = re.match(r"[0-9A-Fa-f]+", body[i + 2:])
            out.append(chr(int(m.group(0), 16)))
            i += 2 + len(m.group(0))
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(chr(int(m.group(0), 8)))
            i += 1 + len(m.group(0))
        else:
            raise SystemExit(f"unsupported escape \\{e} in C++ string literal {body!r}")
    return "".join(out)


_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)


def strings_in(code: str) -> List[str]:
    return [c_string(m.group(1)) for m in _STRING.finditer(code)]


# ----------------------------------------------------------------------------- unicode-data.cpp


def _block(src: str, name: str) -> str:
    start = src.index(name)
    start = src.index("{", src.index("=", start)) + 1
    return src[start:src.index("};", start)]


def unicode_tables(src: str) -> Dict[str, list]:
    src = strip_comments(src)
    ranges = [[int(a, 16), int(b, 16)] for a, b in re.findall(r"\{(0x[0-9A-Fa-f]+),\s*(0x[0-9A-Fa-f]+)\}", _block(src, "unicode_ranges_flags"))]
    whitespace = [int(x, 16) for x in re.findall(r"0x[0-9A-Fa-f]+", _block(src, "unicode_set_whitespace"))]
    lower = [[int(a, 16), int(b, 16)] for a, b in re.findall(r"\{(0x[0-9A-Fa-f]+),\s*(0x[0-9A-Fa-f]+)\}", _block(src, "unicode_map_lowercase"))]
    assert ranges[0][0] == 0 and ranges[-1][0] == 0x110000, "unicode_ranges_flags must span 0..MAX_CODEPOINTS"
    assert all(a[0] < b[0] for a, b in zip(ranges, ranges[1:])), "flag ranges out of order"
    assert lower == sorted(lower), "lowercase map must be sorted (llama.cpp binary-searches it)"
    return {"flag_ranges": ranges, "whitespace": sorted(whitespace), "lowercase": lower}


# ----------------------------------------------------------------------------- unicode.cpp


def custom_splitters(src: str) -> Dict[str, str]:
    """regex string -> name of the hand-written splitter ``unicode_regex_split_custom`` uses."""
    src = strip_comments(src)
    start = src.index("static std::vector<size_t> unicode_regex_split_custom(")
    body = src[start:src.index("return bpe_offsets;", start)]
    out: Dict[str, str] = {}
    # each branch: (regex_expr == "..." [|| regex_expr == "..."]) { bpe_offsets = unicode_regex_split_custom_X(
    for cond, func in re.findall(r"if\s*\((.*?)\)\s*\{\s*bpe_offsets\s*=\s*(unicode_regex_split_custom_\w+)\(", body, re.S):
        for s in strings_in(cond):
            out[s] = func[len("unicode_regex_split_custom_"):]
    return out


def collapse_maps(src: str, header: str) -> Dict[str, dict]:
    """What ``unicode_regex_split`` uses for its std::regex fallback: the category flag bits
    (unicode.h), the ``\\p{..}`` names it rewrites (``k_ucat_enum``), the byte each category
    collapses to (``k_ucat_cpt``) and the ASCII characters it adds to each class (``k_ucat_map``)."""
    src = strip_comments(src)
    bits = {k: int(v, 16) for k, v in re.findall(r"\b([A-Z_]+)\s*=\s*(0x[0-9A-Fa-f]+)", strip_comments(header))}

    def block(name: str) -> str:
        start = src.index(name)
        return src[src.index("{", start) + 1:src.index("};", start)]

    enum = {c_string(s): bits[f] for s, f in re.findall(r'\{\s*"((?:[^"\\]|\\.)*)"\s*,\s*unicode_cpt_flags::(\w+)\s*\}', block("k_ucat_enum"))}
    cpt = {str(bits[f]): int(v, 16) for f, v in re.findall(r"\{\s*unicode_cpt_flags::(\w+)\s*,\s*(0x[0-9A-Fa-f]+)\s*\}", block("k_ucat_cpt"))}
    amap = {str(bits[f]): c_string(s) for f, s in re.findall(r'\{\s*unicode_cpt_flags::(\w+)\s*,\s*"((?:[^"\\]|\\.)*)"\s*\}', block("k_ucat_map"))}
    return {"flag_bits": bits, "ucat_enum": enum, "ucat_cpt": cpt, "ucat_map": amap}


# ----------------------------------------------------------------------------- llama-vocab.cpp


def pre_types(src: str) -> Dict[str, dict]:
    """LLAMA_VOCAB_PRE_TYPE_X (without prefix, or "DEFAULT") -> {"regex": [...], "byte_encode": bool}."""
    src = strip_comments(src)
    start = src.index("llm_tokenizer_bpe(const llama_vocab & vocab)")
    body = src[start:src.index("std::vector<std::string> regex_exprs;", start)]
    body = body[body.index("switch"):]
    out: Dict[str, dict] = {}
    # split into "case A: case B: ... <statements> break;" groups
    for group in re.finditer(r"((?:\s*(?:case\s+LLAMA_VOCAB_PRE_TYPE_\w+|default)\s*:)+)(.*?)\bbreak\s*;", body, re.S):
        labels = re.findall(r"LLAMA_VOCAB_PRE_TYPE_(\w+)|\b(default)\b", group.group(1))
        stmts = group.group(2)
        m = re.search(r"regex_exprs\s*=\s*\{(.*?)\}\s*;", stmts, re.S)
        regex = strings_in(m.group(1)) if m else []
        byte_encode = not re.search(r"byte_encode\s*=\s*false", stmts)
        for name, default in labels:
            out["DEFAULT_FALLBACK" if default else name] = {"regex": regex, "byte_encode": byte_encode}
    return out


def pre_names(src: str) -> Dict[str, dict]:
    """tokenizer.ggml.pre name -> {"type": ..., "ignore_merges": bool} (BPE vocabularies)."""
    src = strip_comments(src)
    start = src.index("if (type == LLAMA_VOCAB_TYPE_BPE) {", src.index("for now, only BPE models have pre-tokenizers") if "for now, only BPE" in src else 0)
    end = src.index("} else if (type == LLAMA_VOCAB_TYPE_SPM) {", start)
    chain = src[start:end]
    out: Dict[str, dict] = {}
    for cond, stmts in re.findall(r"if\s*\(((?:\s*\|\|\s*)?(?:\s*tokenizer_pre\s*==\s*\"[^\"]*\"\s*(?:\|\|)?)+)\)\s*\{(.*?)\}", chain, re.S):
        m = re.search(r"pre_type\s*=\s*LLAMA_VOCAB_PRE_TYPE_(\w+)", stmts)
        if not m:
            continue
        settings = {"type": m.group(1), "ignore_merges": bool(re.search(r"ignore_merges\s*=\s*true", stmts))}
        for name in strings_in(cond):
            out[name] = settings
    return out


# ----------------------------------------------------------------------------- conversion/base.py


def converter_hashes(src: str) -> Tuple[str, Dict[str, str]]:
    """(chktxt, chkhsh -> pre name). The converter tests every hash in turn: the last match wins."""
    chktxt = eval(re.search(r"^\s*chktxt = (.*)$", src, re.M).group(1), {})  # a Python string literal
    table: Dict[str, str] = {}
    for h, name in re.findall(r'chkhsh == "([0-9a-f]{64})":\s*\n(?:\s*#.*\n)*\s*res = "([^"]+)"', src):
        table[h] = name
    return chktxt, table


# ----------------------------------------------------------------------------- main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path, help="llama.cpp source tree (e.g. vendor/llama.cpp of the llama-cpp-python sdist)")
    ap.add_argument("--commit", required=True, help="the tree's llama.cpp commit (recorded in the output)")
    ap.add_argument("--origin", default="llama-cpp-python 0.3.36 sdist (PyPI), vendor/llama.cpp")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    texts = {f: (args.tree / f).read_text(encoding="utf-8") for f in FILES}
    chktxt, hashes = converter_hashes(texts["conversion/base.py"])
    types = pre_types(texts["src/llama-vocab.cpp"])
    names = pre_names(texts["src/llama-vocab.cpp"])
    custom = custom_splitters(texts["src/unicode.cpp"])
    missing = sorted({s["type"] for s in names.values()} - set(types))
    for t in missing:  # a type with no case of its own uses the switch's default branch
        types[t] = types["DEFAULT_FALLBACK"]
    unknown = sorted(set(hashes.values()) - set(names))
    doc = {
        "llama_cpp_commit": args.commit,
        "origin": args.origin,
        "generated_by": "scripts/gen_llamacpp_tables.py",
        "files_sha256": {f: hashlib.sha256(t.encode("utf-8")).hexdigest() for f, t in texts.items()},
        **unicode_tables(texts["src/unicode-data.cpp"]),
        "custom_splitters": custom,
        "collapse": collapse_maps(texts["src/unicode.cpp"], texts["src/unicode.h"]),
        "pre_types": types,
        "pre_names": names,
        "chktxt": chktxt,
        "chkhsh": hashes,
    }
    raw = json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    args.out.write_bytes(buf.getvalue())
    print(
        f"{args.out}: {len(buf.getvalue()):,} bytes; {len(doc['flag_ranges'])} flag ranges, "
        f"{len(types)} pre-tokenizer types, {len(names)} pre names, {len(hashes)} converter hashes, "
        f"{len(custom)} custom splitter regexes"
        + (f"; converter names llama-vocab.cpp does not know: {', '.join(unknown)}" if unknown else ""),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
