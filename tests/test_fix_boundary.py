"""Issue 32, family 9: a move refused for a boundary merge carries a hard boundary instead.

A trace id on line 1 (`Trace: {{ trace_id }}`) moved to the end of the template lands after
static text, where the Llama-3 pre-tokenizer (shared by Qwen2.5 and cl100k_base, the vocabulary
Llama 3 extends) glues the static space to a value that starts with a letter (` c1…`). In this
template that token sits on a block edge (index 79, block size 16), so the plain move trades the
M101 for an M104 and was refused. The fix now moves the line with a line break before the value,
and the prover checks it as before (renders, no new finding, the blocks won back).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import DATA

RULES = "Answer the customer politely and cite the policy section exactly as written." + " Please" * 13
# The question's line opens with more than a block of static text: a trace id moved to just before
# that line is still followed by a block of shared text (M101 keeps firing), so the move that clears
# it is the one to the end of the template.
BODY = (RULES + "\nKeep answers short and friendly and never promise refunds that the policy does not allow.\n"
        "Escalate legal questions to a human agent right away.\n"
        "The customer's question, quoted exactly as they wrote it in the support form: {{ question }}\n")
TEMPLATE = "Trace: {{ trace_id }}\n" + BODY
FIXED = BODY + "Trace:\n{{ trace_id }}\n"
SAMPLES = {"variables": {
    "trace_id": {"value": "7f3c9a2e-4b1d-4e8a", "kind": "volatile", "variant": "c1a9e4d2-8f3b-4a7c"},
    "question": {"value": "Can I return a gift?", "kind": "per-request", "variant": "Where is my order?"},
}}
TOKENIZERS = {
    "qwen2.5": DATA / "tokenizers" / "qwen2.5" / "tokenizer.json",
    "cl100k_base": None,  # the embedded default
}


def _write(tmp_path: Path) -> Path:
    (tmp_path / "support.j2").write_text(TEMPLATE, encoding="utf-8")
    (tmp_path / "support.samples.json").write_text(json.dumps(SAMPLES), encoding="utf-8")
    return tmp_path / "support.j2"


@lru_cache(maxsize=None)
def _tokenizer(name: str):
    """`tokenizers` itself over the file (the embedded default: promptlint's shipped file), parsed
    once per test process, not once per encode: encoding changes nothing in a Tokenizer."""
    import gzip

    from tokenizers import Tokenizer

    if TOKENIZERS[name] is not None:
        return Tokenizer.from_file(str(TOKENIZERS[name]))
    packed = Path(__file__).parent.parent / "promptlint" / "data" / "cl100k_base.tokenizer.json.gz"
    return Tokenizer.from_str(gzip.decompress(packed.read_bytes()).decode("utf-8"))


def _encode(name: str, text: str):
    """The tokenizer's ids by `tokenizers` itself."""
    return _tokenizer(name).encode(text, add_special_tokens=False).ids


def _ids(ids):
    return ids


def _shared(a, b) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
def test_the_plain_move_merges_on_a_block_edge(name):
    """Independent of promptlint: render the plain move with str.replace, encode with the tokenizer.
    The values part at character len(prefix) (the `7`/`c`), but the shared tokens stop one earlier:
    the static space and `c` are one token, at index 79 = 5*16 - 1, so block 5 is lost."""
    plain = BODY + "Trace: {{ trace_id }}\n"
    render = lambda v: plain.replace("{{ question }}", "Can I return a gift?").replace("{{ trace_id }}", v)
    a, b = _ids(_encode(name, render("7f3c9a2e-4b1d-4e8a"))), _ids(_encode(name, render("c1a9e4d2-8f3b-4a7c")))
    clean = _ids(_encode(name, render("7f3c9a2e-4b1d-4e8a")[: render("x").index("Trace: x") + len("Trace: ")]))
    assert _shared(a, b) == 79 and len(clean) == 80  # 79 // 16 = 4 blocks shared, 80 // 16 = 5 when split


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
def test_the_moved_line_carries_a_line_break(name, tmp_path, cli):
    path = _write(tmp_path)
    args = ["--no-cache"] + (["--tokenizer", TOKENIZERS[name]] if TOKENIZERS[name] else [])
    r = cli("check", *args, "--fix", "--unsafe-fixes", path.name, cwd=tmp_path)
    assert "M101 fixed in support.j2" in r.out and "with a line break before `trace_id`" in r.out, r.out
    assert path.read_text(encoding="utf-8") == FIXED
    again = cli("check", *args, "--output-format", "json", path.name, cwd=tmp_path)
    assert [f["code"] for f in again.json()["findings"]] == []
    # independently: with the line break the values part at a token edge (`:\n` then the value)
    render = lambda v: FIXED.replace("{{ question }}", "Can I return a gift?").replace("{{ trace_id }}", v)
    a, b = _ids(_encode(name, render("7f3c9a2e-4b1d-4e8a"))), _ids(_encode(name, render("c1a9e4d2-8f3b-4a7c")))
    assert _shared(a, b) == len(_ids(_encode(name, render("x")[: render("x").rindex("x")])))
