"""A seeded fleet trace: several instances and tenants, conversations that grow by turns
(heavy prefix sharing), rows with token ids, fingerprint rows, captured request/response
pairs without token ids (derived through the Qwen2.5 chat template), usage-only rows, a
non-inference OTel span (skipped), a malformed row (failed), and arrivals a little out of
order (logs written at completion). Shared by the fleet tests and benchmarks/audit_throughput.py.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Dict, List

DATA = Path(__file__).parent / "data"
QWEN = DATA / "tokenizers" / "qwen2.5" / "tokenizer.json"
QWEN_TEMPLATE = DATA / "chat_templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"
WORDS = ("order", "refund", "ship", "when", "where", "invoice", "late", "box", "address", "thanks", "item", "7")
KEY = bytes(range(32))


def rows(n: int, seed: int = 0, instances: int = 3, tenants: int = 3, derived_share: float = 0.3,
         bad: bool = True) -> List[Any]:
    """``n`` request rows in arrival order (a few swapped within a second), plus the skipped and failed rows."""
    rnd = random.Random(seed)
    common = [rnd.randrange(1000, 5000) for _ in range(40)]  # a preamble every tenant shares (M4 across tenants)
    systems = [common + [rnd.randrange(1000, 5000) for _ in range(rnd.randrange(0, 60))] for _ in range(tenants)]
    sys_text = [" ".join(rnd.choice(WORDS) for _ in range(30)) for _ in range(tenants)]
    convs: Dict[int, Any] = {}
    out: List[Any] = []
    for i in range(n):
        c = rnd.randrange(max(2, n // 6))
        tenant = c % tenants
        inst = f"i{rnd.randrange(instances)}"
        ts = i * 0.5 + (0.7 if rnd.random() < 0.1 else 0.0)  # some rows logged late: out of order
        base = {"request_id": f"r{i}", "arrival_ts": ts, "instance": inst, "tenant": f"t{tenant}",
                "model_rev": "m1", "engine": "vllm", "block_size": 16}
        kind = rnd.random()
        if kind < derived_share:
            msgs = convs.setdefault(("m", c), [{"role": "system", "content": sys_text[tenant]}])
            msgs.append({"role": "user", "content": " ".join(rnd.choice(WORDS) for _ in range(rnd.randrange(3, 40)))})
            P = 20 + sum(len(m["content"]) for m in msgs) // 4
            out.append({"request": {"model": "qwen", "messages": list(msgs)},
                        "response": {"id": f"r{i}", "usage": {"prompt_tokens": P, "prompt_tokens_details": {
                            "cached_tokens": rnd.randrange(0, P // 16 + 1) * 16}}},
                        "request_id": f"r{i}", "arrival_ts": ts, "instance": inst, "tenant": f"t{tenant}",
                        "model_rev": "m1", "engine": "vllm", "block_size": 16})
            msgs.append({"role": "assistant", "content": " ".join(rnd.choice(WORDS) for _ in range(5))})
        elif kind < 0.9:
            ids = convs.get(("t", c)) or list(systems[tenant])
            ids = ids + [rnd.randrange(6000, 9000) for _ in range(rnd.randrange(5, 60))]
            convs[("t", c)] = ids
            O = min(len(ids), rnd.randrange(0, len(ids) // 16 + 1) * 16)
            out.append(dict(base, token_ids=ids, prompt_tokens=len(ids), cached_tokens=O,
                            flags={"prompt_logprobs": rnd.random() < 0.05}))
        else:
            out.append(dict(base, prompt_tokens=rnd.randrange(50, 500), cached_tokens=0))  # usage only
        if bad and i == n // 3:
            out.append({"attributes": {"http.method": "GET"}, "spanId": "ab12"})  # not an inference span
        if bad and i == n // 2:
            out.append(dict(base, request_id=f"bad{i}", block_size=0, prompt_tokens=10))  # fails
    return out


def write(path: Path, lines: List[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def fingerprint_rows(lines: List[Any]) -> List[Any]:
    """The token-id rows turned into ``block_fp`` rows with :data:`KEY` (the audit needs --fp-key)."""
    from promptlint.audit.fingerprints import chain_hex

    out = []
    for r in lines:
        if isinstance(r, dict) and "token_ids" in r:
            r = dict(r)
            r["block_fp"] = chain_hex(r.pop("token_ids"), 16, KEY)
            r["fp_tokens"] = 16
        out.append(r)
    return out
