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

from typing import Any, Dict, Iterator, List, Optional, Tuple

from promptlint.doors import bounded_io
from promptlint.base import jsonl
from promptlint.audit.fields import RowError, arr, count, kind, label, number, objects, token_ids
from promptlint.audit.fingerprints import ROOT, chain_hex

KNOWN = ("BlockStored", "BlockRemoved", "AllBlocksCleared")


def _events(path: str) -> Iterator[Tuple[float, int, str, Dict[str, Any]]]:
    """(ts, seq, instance, event) per event; a malformed line stops the audit naming it
    (events prove evictions: a gap in them would make a proof wrong)."""
    from promptlint.audit.ingest import TraceError

    try:
        f = bounded_io.open_stream(path)
    except OSError as e:
        raise TraceError(f"{path}: cannot read the KV events ({e.strerror}); check the path") from None
    with f:
        for n, line in jsonl.numbered_lines(f):
            try:
                batch = _batch(jsonl.loads(line, first=n == 1), n)
            except (jsonl.LineError, RowError) as e:
                raise TraceError(f"{path}:{n}: {e}; fix or drop the event line") from None
            except RecursionError:
                raise TraceError(f"{path}:{n}: nested too deeply to read; fix or drop the event line") from None
            yield from batch


def _batch(obj: Any, n: int) -> List[Tuple[float, int, str, Dict[str, Any]]]:
    if not isinstance(obj, dict):
        raise RowError(f"each line must be a JSON object, not {kind(obj)}")
    inst = label(obj.get("instance", "-"), "instance")
    ts = number(obj.get("ts"), "ts", 0.0)
    seq = count(obj.get("seq", n), "seq")
    events = objects(obj["events"], "events") if "events" in obj else [obj]
    return [(ts, seq, inst, _event(ev, f"events[{i}]" if "events" in obj else "event")) for i, ev in enumerate(events)]


def _scalar(v: Any, name: str) -> Any:
    """A block hash: an integer or a string (it is a dictionary key)."""
    if v is None or isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)):
        return v
    raise RowError(f"`{name}` must be an integer or a string, not {kind(v)}")


def _event(ev: Dict[str, Any], name: str) -> Dict[str, Any]:
    """The fields of one event the audit uses, checked (token ids and extra keys dropped after use)."""
    t = ev.get("type")
    if t not in KNOWN:
        return {"type": None}  # other event types say nothing about these blocks
    out: Dict[str, Any] = {"type": t}
    if t in ("BlockStored", "BlockRemoved"):
        out["block_hashes"] = [_scalar(h, f"{name}.block_hashes[{i}]")
                               for i, h in enumerate(arr(ev.get("block_hashes"), f"{name}.block_hashes"))]
    if t == "BlockStored":
        bs = ev.get("block_size")
        out["block_size"] = 16 if bs is None else count(bs, f"{name}.block_size", 1)
        out["parent_block_hash"] = _scalar(ev.get("parent_block_hash"), f"{name}.parent_block_hash")
        out["token_ids"] = token_ids(ev.get("token_ids") or [], f"{name}.token_ids")
    return out


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
            bs = ev["block_size"]
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
