"""Write the embedded tokenizer's compact form, promptlint/data/cl100k_base.bpe, from
promptlint/data/cl100k_base.tokenizer.json.gz (promptlint.fastbpe).

    python scripts/build_fast_tokenizer.py          # (re)write it; refuses unless proven identical

The form records the engine proven (promptlint.fastbpe.engine: no Rust BPE model is built on
the cold path); the script refuses to write one without it. Run it when the embedded tokenizer or the `tokenizers` version the package is tested with
changes: a form proven with another version is not used (the embedded tokenizer.json is parsed
and a form of it is written to the user cache instead). tests/test_fastbpe.py checks that the
shipped form holds the shipped JSON's sha256 and gives its encodings.
"""

from __future__ import annotations

import gzip
import hashlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tokenizers import Tokenizer  # noqa: E402

from promptlint import fastbpe  # noqa: E402
from promptlint.fastbpe import form, store  # noqa: E402


def main() -> int:
    raw = gzip.decompress((REPO / "promptlint" / "data" / "cl100k_base.tokenizer.json.gz").read_bytes())
    text = raw.decode("utf-8")
    blob, reason = fastbpe.proven_form(hashlib.sha256(raw).hexdigest(), text, Tokenizer.from_str(text))
    if blob is None:
        print(f"cl100k_base: no compact form ({reason}); nothing written", file=sys.stderr)
        return 1
    if not form.decode(blob).header.get("engine"):
        print("cl100k_base: the engine is not proven on it; nothing written", file=sys.stderr)
        return 1
    store.PACKAGED.write_bytes(blob)
    print(f"wrote {store.PACKAGED.relative_to(REPO)} ({len(blob):,} bytes, tokenizers {form.tokenizers_version()}, engine proven)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
