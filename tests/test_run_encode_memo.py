"""A cold run encodes a text once: a second file (or variant) rendering the same prompt takes the
encoding the run already has (promptlint.tokenization.encode_memo, bounded by RUN_CHARS), and
its findings are the ones the first file's encoding gives."""

from __future__ import annotations

from collections import Counter

from promptlint.fastbpe import engine
from promptlint.tokenization import encode_memo

BODY = "Current time: {{ now }}\n" + "You are the Acme shop's assistant. Answer briefly and cite the policy.\n" * 30 + "Q: {{ q }}\n"


def test_identical_templates_are_encoded_once(tmp_path, cli, monkeypatch):
    seen = Counter()
    encode, batch = engine.FastTokenizer.encode, engine.FastTokenizer.encode_batch

    def counting(self, text, add_special_tokens=True):
        seen[text] += 1
        return encode(self, text, add_special_tokens)

    def counting_batch(self, texts, add_special_tokens=True):
        seen.update(texts)
        return batch(self, texts, add_special_tokens)

    monkeypatch.setattr(engine.FastTokenizer, "encode", counting)
    monkeypatch.setattr(engine.FastTokenizer, "encode_batch", counting_batch)
    for name in ("a.j2", "b.j2"):
        (tmp_path / name).write_text(BODY, encoding="utf-8")
    r = cli("check", "--no-cache", "--output-format", "concise", "a.j2", "b.j2", cwd=tmp_path)
    assert r.code == 1
    lines = [line for line in r.out.splitlines() if "M101" in line]
    assert [line.split(":")[0] for line in lines] == ["a.j2", "b.j2"]  # the clock first: one finding each
    assert lines[0].split(":", 1)[1] == lines[1].split(":", 1)[1]  # the same figures from the one encoding
    long = {t: n for t, n in seen.items() if len(t) >= encode_memo.MIN_CHARS}
    assert long and max(long.values()) == 1, sorted(long.values())
