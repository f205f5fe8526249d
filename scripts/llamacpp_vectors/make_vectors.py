"""Record test vectors from llama.cpp's own C++ code (commit 0c1e570) into tests/data.

What runs is llama.cpp itself, not a port:

- ``tokenize.cpp`` links libllama and calls ``llama_tokenize(vocab, text, add_special=false,
  parse_special=true)`` (what the server's ``/tokenize`` and prompt path do) on a vocab-only
  GGUF. The GGUF is written by llama.cpp's own converter (``convert_hf_to_gguf.py
  --vocab-only``) from the test tokenizer, so the pre-tokenizer name, token types and merges
  are the converter's. The converter imports torch and sentencepiece at module level; neither
  is used for a vocab-only BPE conversion, so small stand-in modules are put on its path.
- ``split.cpp`` compiles ``src/unicode.cpp`` and ``src/unicode-data.cpp`` and calls
  ``unicode_regex_split`` with each pre-tokenizer type's regex list (as extracted into
  promptlint/data/llamacpp-tables.json.gz by scripts/gen_llamacpp_tables.py).

Outputs (gzip JSON, deterministic):

- tests/data/llamacpp-unicode16-vectors.json.gz: every code point llama.cpp's table marks
  UNDEFINED that the installed ``tokenizers`` regex engine knows (Unicode 16.0: 5,185, of
  which 4,382 are letters or digits there), each followed by ``'s``, ``[x``, ``<a`` and
  ``<think>``, with llama.cpp's ids for each tokenizer below.
- tests/data/llamacpp-split-vectors.json.gz: random texts (seeded; ASCII, common scripts,
  whitespace, marks and random code points of every plane) and, for every pre-tokenizer type,
  the word lengths llama.cpp's ``unicode_regex_split`` gives.

Usage (the llama.cpp tree of the llama-cpp-python 0.3.36 sdist, libllama built from it):

    cmake -S TREE -B BUILD -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \\
          -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_COMMON=OFF \\
          -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=ON
    cmake --build BUILD --target llama
    python scripts/llamacpp_vectors/make_vectors.py TREE BUILD/bin

Needs g++, numpy and transformers (the converter's imports), and ``tokenizers``.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT))

from promptlint.llamacpp import tables  # noqa: E402

SUFFIXES = ["'s", "[x", "<a", "<think>"]

# name -> (tokenizer.json, vocab_size of the model config, tokenizer_config.json contents)
TOKENIZERS = {
    "qwen2.5": (DATA / "tokenizers/qwen2.5/tokenizer.json", 151936,
                {"tokenizer_class": "TokenizersBackend", "bos_token": None, "eos_token": "<|im_end|>",
                 "pad_token": "<|endoftext|>", "add_bos_token": False}),
    "deepseek-v3": (DATA / "tokenizers/deepseek-v3/tokenizer.json", 129280,
                    {"tokenizer_class": "TokenizersBackend", "bos_token": "<｜begin▁of▁sentence｜>",
                     "eos_token": "<｜end▁of▁sentence｜>", "add_bos_token": True, "add_eos_token": False}),
    "mistral-nemo-tekken": (DATA / "tokenizers/mistral-nemo-tekken/tokenizer.json", 131072,
                            {"tokenizer_class": "TokenizersBackend", "bos_token": "<s>", "eos_token": "</s>",
                             "add_bos_token": True}),
    "gpt-oss-o200k-harmony": (DATA / "tokenizers/gpt-oss-o200k-harmony/tokenizer.json", 201088,
                              {"tokenizer_class": "TokenizersBackend", "eos_token": "<|return|>",
                               "pad_token": "<|endoftext|>"}),
    "cl100k_base (embedded)": (ROOT / "promptlint/data/cl100k_base.tokenizer.json.gz", 100277,
                               {"tokenizer_class": "TokenizersBackend", "eos_token": "<|endoftext|>"}),
}

STUB_TORCH = '''# stand-in: the converter imports torch at module level; a vocab-only conversion never uses it
class _Any:
    def __init__(self, *a, **k): pass
    def __call__(self, *a, **k): return _Any()
    def __getattr__(self, name): return _Any()
    def __getitem__(self, k): return _Any()
    def __or__(self, o): return _Any()
    __ror__ = __or__
    def __mro_entries__(self, bases): return (object,)
class _Ctx:
    def __enter__(self): return self
    def __exit__(self, *a): return False
def inference_mode(*a, **k): return _Ctx()
def no_grad(*a, **k): return _Ctx()
def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Any()
'''
STUB_SENTENCEPIECE = '''# stand-in: imported before the converter finds there is no tokenizer.model (it then uses BPE)
class SentencePieceProcessor:
    def __init__(self, *a, **k):
        raise FileNotFoundError("no SentencePiece model")
'''


def record(s: str) -> bytes:
    b = s.encode("utf-8")
    return str(len(b)).encode() + b"\n" + b


def run_lines(cmd, payload: bytes, n: int):
    out = subprocess.run(cmd, input=payload, capture_output=True, check=True).stdout.decode("utf-8")
    lines = out.split("\n")
    assert len(lines) >= n, f"{cmd[0]}: {len(lines)} lines for {n} inputs"
    return lines[:n]


def build(tree: Path, libdir: Path, work: Path):
    split_bin, tok_bin = work / "split", work / "tokenize"
    subprocess.run(["g++", "-O2", "-std=c++17", f"-I{tree}/src", str(HERE / "split.cpp"), str(tree / "src/unicode.cpp"),
                    str(tree / "src/unicode-data.cpp"), "-o", str(split_bin)], check=True)
    subprocess.run(["g++", "-O2", "-std=c++17", f"-I{tree}/include", f"-I{tree}/ggml/include", str(HERE / "tokenize.cpp"),
                    f"-L{libdir}", "-lllama", f"-Wl,-rpath,{libdir}", "-o", str(tok_bin)], check=True)
    return split_bin, tok_bin


def convert(tree: Path, work: Path, name: str, tok_path: Path, vocab_size: int, config: dict) -> Path:
    model = work / "models" / name.split()[0]
    model.mkdir(parents=True, exist_ok=True)
    raw = gzip.decompress(tok_path.read_bytes()) if tok_path.suffix == ".gz" else tok_path.read_bytes()
    (model / "tokenizer.json").write_bytes(raw)
    (model / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    (model / "config.json").write_text(json.dumps({
        # Granite: a plain Llama-style model whose transformers tokenizer class (TokenizersBackend) loads
        # tokenizer.json as it is (transformers 5 rebuilds e.g. Qwen2's pre-tokenizer from its own class)
        "architectures": ["GraniteForCausalLM"], "model_type": "granite", "vocab_size": vocab_size, "hidden_size": 64,
        "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "tie_word_embeddings": True,
    }), encoding="utf-8")
    stubs = work / "stubs"
    (stubs / "torch").mkdir(parents=True, exist_ok=True)
    (stubs / "sentencepiece").mkdir(parents=True, exist_ok=True)
    (stubs / "torch" / "__init__.py").write_text(STUB_TORCH, encoding="utf-8")
    (stubs / "sentencepiece" / "__init__.py").write_text(STUB_SENTENCEPIECE, encoding="utf-8")
    out = work / f"{model.name}.gguf"
    env = {"PYTHONPATH": f"{stubs}:{tree / 'gguf-py'}", "PATH": "/usr/bin:/bin", "HOME": str(work)}
    r = subprocess.run([sys.executable, str(tree / "convert_hf_to_gguf.py"), str(model), "--vocab-only", "--outfile", str(out)],
                       env=env, cwd=str(tree), capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{name}: convert_hf_to_gguf.py failed:\n{r.stderr[-3000:]}")
    return out


def gguf_pre(tree: Path, gguf_path: Path) -> str:
    code = ("import sys, gguf; r = gguf.GGUFReader(sys.argv[1]); "
            "print(r.fields['tokenizer.ggml.pre'].contents())")
    env = {"PYTHONPATH": str(tree / "gguf-py"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", code, str(gguf_path)], capture_output=True, text=True, check=True, env=env).stdout.strip()


def unicode16_codepoints():
    """(all, letters_or_digits): code points UNDEFINED in llama.cpp's table that tokenizers' regex knows."""
    from tokenizers import Regex, pre_tokenizers

    flags = tables.codepoint_flags()
    undefined = [c for c in range(0x110000)
                 if not 0xD800 <= c <= 0xDFFF and flags.of_char(chr(c)) & tables.MASK_CATEGORIES == tables.UNDEFINED]

    def having(prop, cands):
        text = "".join(chr(c) for c in cands)
        split = pre_tokenizers.Split(Regex(r"\P{%s}" % prop), "removed")
        return {cands[k] for _, (a, b) in split.pre_tokenize_str(text) for k in range(a, b)}

    unassigned = having("Cn", undefined)
    known = [c for c in undefined if c not in unassigned]
    letters_digits = having("L", known) | having("N", known)
    return known, sorted(letters_digits)


def random_texts(n: int, seed: int = 20):
    rng = random.Random(seed)
    pool = list("abcXYZ'sStTmMdDrReEvVlL 0123456789\r\n\t.,!?-_/\\()[]{}<>\"#$%&*+=@^`|~") + [
        "  ", "\u00a0", "\u3000", "\u2028", "\u0085", "\u1680", "é", "É", "ß", "ǅ", "\u0301", "\u0903", "中", "文",
        "の", "カ", "한", "ㄱ", "٣", "①", "Ⅻ", "\u1c89", "\U0001CCF0", "\u0378", "\ue000", "😀", "\u200d", "\ufe0f",
        "ด", "ໄ", "ក", "က", "\u00b5", "Ω", "K", "ſ", "\x0b", "\x0c", "\x1c", "\x00", "\x7f", "€", "£", "¬", "…",
        "。", "，", "“", "！", "ｚ", "Ａ", "\u2019", "\U00020000", "\U0002A700", "ㄅ", "︰", "İ", "ﬁ", "Ǆ", "ǈ"]
    out = []
    for _ in range(n):
        k = rng.randint(1, 24)
        chars = []
        for _ in range(k):
            if rng.random() < 0.15:
                c = rng.randrange(0x110000)
                while 0xD800 <= c <= 0xDFFF:
                    c = rng.randrange(0x110000)
                chars.append(chr(c))
            else:
                chars.append(rng.choice(pool))
        out.append("".join(chars))
    return out


def write_gz(path: Path, doc: dict) -> None:
    raw = json.dumps(doc, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    path.write_bytes(buf.getvalue())
    print(f"{path}: {len(buf.getvalue()):,} bytes", file=sys.stderr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path, help="llama.cpp source tree (commit 0c1e570)")
    ap.add_argument("libdir", type=Path, help="directory holding the libllama.so built from that tree")
    ap.add_argument("--texts", type=int, default=600, help="random texts for the split vectors (default 600)")
    args = ap.parse_args(argv)
    import tokenizers

    doc_tables = tables.data()
    commit = doc_tables["llama_cpp_commit"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        split_bin, tok_bin = build(args.tree, args.libdir, work)

        known, letters_digits = unicode16_codepoints()
        texts = [chr(c) + s for c in known for s in SUFFIXES]
        payload = b"".join(record(t) for t in texts)
        per_tokenizer = {}
        for name, (path, vocab_size, config) in TOKENIZERS.items():
            gguf_path = convert(args.tree, work, name, path, vocab_size, config)
            lines = run_lines([str(tok_bin), str(gguf_path), "0", "1"], payload, len(texts))
            per_tokenizer[name] = {"gguf_pre": gguf_pre(args.tree, gguf_path),
                                   "ids": [[int(x) for x in line.split()] for line in lines]}
            print(f"{name}: tokenizer.ggml.pre = {per_tokenizer[name]['gguf_pre']}", file=sys.stderr)
        write_gz(DATA / "llamacpp-unicode16-vectors.json.gz", {
            "description": (
                f"llama.cpp {commit[:7]} llama_tokenize(add_special=false, parse_special=true) ids, recorded by "
                "scripts/llamacpp_vectors/make_vectors.py from libllama built from the llama-cpp-python 0.3.36 sdist "
                "(vendor/llama.cpp) on vocab-only GGUFs written by that tree's convert_hf_to_gguf.py. Texts: each code "
                "point in `codepoints` followed by each suffix, code point major."
            ),
            "llama_cpp_commit": commit,
            "codepoints_selected_with": f"tokenizers {tokenizers.__version__}: regex engine knows the code point "
                                        "(not \\p{Cn}) while llama.cpp's unicode-data.cpp marks it UNDEFINED",
            "codepoints": known,
            "letters_or_digits": letters_digits,
            "suffixes": SUFFIXES,
            "tokenizers": per_tokenizer,
        })

        samples = random_texts(args.texts)
        payload = b"".join(record(t) for t in samples)
        splits = {}
        for tname, pre in sorted(doc_tables["pre_types"].items()):
            regs = pre["regex"]
            head = record(str(len(regs))) + b"".join(record(r) for r in regs)
            lines = run_lines([str(split_bin)], head + payload, len(samples))
            splits[tname] = [line if line.startswith("ERR") else [int(x) for x in line.split()] for line in lines]
        write_gz(DATA / "llamacpp-split-vectors.json.gz", {
            "description": (
                f"llama.cpp {commit[:7]} unicode_regex_split(text, regex_exprs, byte_encode=false): UTF-8 byte length of "
                "each word (zero-length words included), per LLAMA_VOCAB_PRE_TYPE (regex lists as in "
                "promptlint/data/llamacpp-tables.json.gz), recorded by scripts/llamacpp_vectors/make_vectors.py from "
                "src/unicode.cpp and src/unicode-data.cpp compiled with g++."
            ),
            "llama_cpp_commit": commit,
            "texts": samples,
            "words": splits,
        })
    return 0


if __name__ == "__main__":
    sys.exit(main())
