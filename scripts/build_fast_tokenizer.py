"""Write the embedded tokenizer's compact form, promptlint/data/cl100k_base.bpe, from
promptlint/data/cl100k_base.tokenizer.json.gz (promptlint.fastbpe).

    python scripts/build_fast_tokenizer.py          # (re)write it; refuses unless proven identical

Run it when the embedded tokenizer or the `tokenizers` version the package is tested with
changes: a form proven with another version is not used (the embedded tokenizer.json is parsed
and a form of it is written to the user cache instead). tests/test_fastbpe.py checks that the
shipped form holds the shipped JSON's sha256 and gives its encodings.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tokenizers import Tokenizer  # noqa: E402

from promptlint.fastbpe import form, proof, store  # noqa: E402


def main() -> int:
    raw = gzip.decompress((REPO / "promptlint" / "data" / "cl100k_base.tokenizer.json.gz").read_bytes())
    data = json.loads(raw)
    reason = form.ineligible(data)
    if reason:
        print(f"cl100k_base: no compact form ({reason})", file=sys.stderr)
        return 1
    blob = form.encode(data, hashlib.sha256(raw).hexdigest(), len(raw))
    if not proof.proven(form.build(form.decode(blob)), Tokenizer.from_str(raw.decode("utf-8"))):
        print("cl100k_base: the compact form is not proven identical; nothing written", file=sys.stderr)
        return 1
    store.PACKAGED.write_bytes(blob)
    print(f"wrote {store.PACKAGED.relative_to(REPO)} ({len(blob):,} bytes, tokenizers {form.tokenizers_version()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
