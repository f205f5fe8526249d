"""Decoded vLLM KV-cache events -> proof that a needed block was evicted (M5).

Input: JSONL, one decoded ``KVEventBatch`` per line ``{"instance", "seq", "ts", "events":
[...]}`` or one event per line ``{"instance", "seq", "ts", "type", ...}``; event types
``BlockStored`` (``block_hashes``, ``parent_block_hash``, ``token_ids``, ``block_size``),
``BlockRemoved`` (``block_hashes``) and ``AllBlocksCleared``. The engine's block hashes are
mapped to the audit's own keyed fingerprints by re-fingerprinting ``token_ids`` chained to
the parent; the token ids and ``extra_keys`` (which carry the cache_salt string) are
dropped at once. Events are consumed in step with the trace (streaming merge by ``ts``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterator, Optional, Tuple

from promptlint.audit.fingerprints import ROOT, chain_hex


def _events(path: str) -> Iterator[Tuple[float, int, str, Dict[str, Any]]]:
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            inst = str(obj.get("instance", "-"))
            ts = float(obj.get("ts", 0.0))
            seq = int(obj.get("seq", n))
            for ev in obj.get("events", [obj]):
                yield ts, seq, inst, ev


class KvEvents:
    def __init__(self, path: str, key: bytes, chunk: int) -> None:
        self._it = _events(path)
        self._next = next(self._it, None)
        self.key, self.chunk = key, chunk
        self.engine_to_fp: Dict[Tuple[str, Any], str] = {}
        self.last: Dict[Tuple[str, str], Tuple[str, float, int]] = {}  # (inst, fp) -> (kind, ts, seq)
        self.cleared: Dict[str, Tuple[float, int]] = {}
        self.last_seq: Dict[str, int] = {}
        self.gaps = 0

    def advance(self, t: float) -> None:
        """Apply every event with ts < t."""
        while self._next is not None and self._next[0] < t:
            ts, seq, inst, ev = self._next
            prev = self.last_seq.get(inst)
            if prev is not None and seq > prev + 1:
                self.gaps += 1  # dropped events (publisher high-water mark)
            self.last_seq[inst] = max(seq, prev or 0)
            self._apply(ts, seq, inst, ev)
            self._next = next(self._it, None)

    def _apply(self, ts: float, seq: int, inst: str, ev: Dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind == "BlockStored":
            bs = int(ev.get("block_size") or 16)
            parent = self.engine_to_fp.get((inst, ev.get("parent_block_hash")), ROOT)
            ids = ev.get("token_ids") or []
            for i, h in enumerate(ev.get("block_hashes") or []):
                block = ids[i * bs : (i + 1) * bs]
                if len(block) < bs or bs % self.chunk:
                    break
                parent = chain_hex(block, self.chunk, self.key, parent=parent)[-1]
                self.engine_to_fp[(inst, h)] = parent
                self.last[(inst, parent)] = ("stored", ts, seq)
        elif kind == "BlockRemoved":
            for h in ev.get("block_hashes") or []:
                fp = self.engine_to_fp.pop((inst, h), None)
                if fp is not None:
                    self.last[(inst, fp)] = ("removed", ts, seq)
        elif kind == "AllBlocksCleared":
            self.cleared[inst] = (ts, seq)
            self.engine_to_fp = {k: v for k, v in self.engine_to_fp.items() if k[0] != inst}

    def proof(self, instance: str, block_fp: str) -> Optional[str]:
        """Evidence that ``block_fp`` was evicted from ``instance`` and not stored again."""
        last = self.last.get((instance, block_fp))
        if last is not None and last[0] == "removed":
            return f"BlockRemoved seq={last[2]} ts={last[1]:g}"
        cl = self.cleared.get(instance)
        if cl is not None and last is not None and last[0] == "stored" and last[1] < cl[0]:
            return f"AllBlocksCleared seq={cl[1]} ts={cl[0]:g}"
        return None
