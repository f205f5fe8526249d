"""llama.cpp server slot logs and ``GET /slots`` snapshots as audit rows (llama.cpp 0c1e570).

Neither is one request per line: a task's prompt length and cache reuse are spread over
several log lines, and a polled ``/slots`` shows the same task again and again. So a shard of
either kind is turned into rows here, in the (sequential) reading stage; the parse stage then
sees one ``{"llamacpp_slot": {...}}`` row per task (or ``{"llamacpp_skip": reason}``).

What a row knows: the task's prompt tokens P and the tokens the slot reused from its cache O
(``n_past`` after llama.cpp's longest-common-prefix match, the checkpoint rules and the
one-token step back: the engine's own figure). Logs and snapshots carry no token ids, so rows
are usage-only. Prompt text (``prompt``/``generated`` of a debug snapshot) is never read.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from promptlint.audit.fields import RowError, count, label
from promptlint.audit.records import AuditRequest

# common/log.cpp: "[M.ss.mmm.uuu ]L " before every message when prefix and timestamps are on
# (llama-server's default); tools/server/server-common.h SLT_*: "slot %12.*s: id %2d | task %d | ".
_PREFIX = r"(?:(?P<m>\d+)\.(?P<s>\d{2})\.(?P<ms>\d{3})\.(?P<us>\d{3}) )?(?:[IWED] )?"
_SLOT = r"slot +\w{1,12}: id +(?P<slot>\d+) \| task (?P<task>-?\d+) \| (?P<msg>.*)"
SLOT_LINE = re.compile(_PREFIX + _SLOT)
SERVER_LINE = re.compile(_PREFIX + r"(?:slot|srv|que) +\w{1,12}: ")

# the messages of tools/server/server-context.cpp that say something about a task's prompt
LAUNCH = re.compile(r"processing task, is_child = (\d+)")  # SLT_INF, launch_slot_with_task
NEW_PROMPT = re.compile(r"new prompt, n_ctx_slot = \d+, n_keep = -?\d+, task\.n_tokens = (\d+)")  # SLT_TRC (-lv 4)
CACHED = re.compile(r"cached n_tokens = (\d+), memory_seq_rm \[\d+, end\)")  # SLT_TRC, once per prompt batch
PROMPT_EVAL = re.compile(r"prompt eval time = +[0-9.]+ ms / +(\d+) tokens")  # SLT_INF, print_timings
RELEASE = re.compile(r"stop processing: n_tokens = \d+, truncated = \d+")  # SLT_INF, release

SNIFF_LINES = 1000  # a shard is a server log when one of its first lines is a llama.cpp server line

NEEDS_TRACE = ("llama.cpp slot task without its prompt length (the log is at the default verbosity: run "
               "llama-server with -lv 4 so it logs `new prompt` and `cached n_tokens`)")
NOT_PROCESSED = "llama.cpp slot task released before its prompt was processed (error or cancelled)"
EMPTY = "llama.cpp slot task with an empty prompt"
CHILD = "llama.cpp child task (n > 1 sampling: the parent task carries the prompt)"
SLOT_IDLE = "llama.cpp /slots: idle slot (the server clears a task's counts when it releases the slot)"
SLOT_NO_TASK = "llama.cpp /slots: slot that has run no task"
SLOT_PROMPT = "llama.cpp /slots: prompt still being processed (counts not final)"
SLOT_SEEN = "llama.cpp /slots: task already read from an earlier snapshot"
SLOTS_NONE = "llama.cpp /slots: a snapshot listing no slots"


def sniff(lines: List[Tuple[int, Any]]) -> Optional[str]:
    """"log", "slots" or None (JSONL trace) from a shard's first non-blank lines."""
    if not lines:
        return None
    first = _text(lines[0][1]).lstrip("\ufeff \t")
    if first.startswith("["):
        return "slots"
    if first.startswith("{"):
        return "log" if _json_log(first) is not None else None
    return "log" if any(SERVER_LINE.match(_text(line)) for _, line in lines) else None


def rows(lines: Iterable[Tuple[int, Any]], kind: str, server: str) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """``(line number, row)`` of every task of a server log or every slot of a ``/slots`` series."""
    return _log_rows(lines, server) if kind == "log" else _slots_rows(lines, server)


def server_label(path: str) -> str:
    """The instance prefix of a shard's rows: the file name without its extension."""
    if path == "-":
        return "stdin"
    base = os.path.basename(path)
    return base.split(".", 1)[0] or base


def _text(line: Any) -> str:
    if isinstance(line, bytes):
        return line.decode("utf-8", "replace").rstrip("\r\n")
    return line.rstrip("\r\n") if isinstance(line, str) else ""


def _json_log(text: str) -> Optional[Tuple[str, float]]:
    """``--log-jsonl``: {"type": "log", "time": us, "level", "msg"} -> (message, seconds)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):  # not a JSON log line (too deep to be one either)
        return None
    if isinstance(obj, dict) and obj.get("type") == "log" and isinstance(obj.get("msg"), str):
        t = obj.get("time")
        return obj["msg"].rstrip("\n"), (t / 1e6 if isinstance(t, (int, float)) and not isinstance(t, bool) else 0.0)
    return None


class _Task:
    __slots__ = ("line", "ts", "slot", "task", "child", "P", "O", "N", "done")

    def __init__(self, line: int, ts: float, slot: int, task: int, child: bool) -> None:
        self.line, self.ts, self.slot, self.task, self.child = line, ts, slot, task, child
        self.P: Optional[int] = None
        self.O: Optional[int] = None
        self.N: Optional[int] = None
        self.done = False

    def row(self, server: str) -> Dict[str, Any]:
        if self.child:
            return {"llamacpp_skip": CHILD}
        P, O = self.P, self.O
        if P is None and O is not None and self.N is not None:
            P = O + self.N
        if O is None and P is not None and self.N is not None:
            O = P - self.N
        if P is None and O is None and self.N is None:
            return {"llamacpp_skip": NOT_PROCESSED}
        if P == 0:
            return {"llamacpp_skip": EMPTY}
        if P is None or O is None:
            return {"llamacpp_skip": NEEDS_TRACE}
        return {"llamacpp_slot": {"request_id": f"{server}/task{self.task}", "instance": f"{server}/slot{self.slot}",
                                  "arrival_ts": self.ts, "prompt_tokens": P, "cached_tokens": O}}


def _log_rows(lines: Iterable[Tuple[int, Any]], server: str) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """Tasks in launch order, each once it is released (a handful of slots run at once, so the
    buffer of open tasks stays small); a task still open at the end of the log is not a row."""
    open_tasks: Dict[Tuple[int, int], _Task] = {}  # (slot, task) -> task, in launch order
    for n, raw in lines:
        text = _text(raw)
        ts = None
        if text.startswith("{"):
            got = _json_log(text)
            if got is None:
                continue
            text, ts = got
        m = SLOT_LINE.match(text)
        if m is None:
            continue
        if ts is None:
            ts = (int(m["m"]) * 60 + int(m["s"]) + int(m["ms"]) / 1e3 + int(m["us"]) / 1e6) if m["m"] else 0.0
        key, msg = (int(m["slot"]), int(m["task"])), m["msg"]
        t = open_tasks.get(key)
        launch = LAUNCH.match(msg)
        if launch:
            open_tasks[key] = _Task(n, ts, key[0], key[1], launch[1] != "0")
            continue
        if t is None:
            continue  # a task launched before the log starts, or a line of no task (id_task -1)
        _note(t, msg)
        if t.done:
            while open_tasks:
                first = next(iter(open_tasks.values()))
                if not first.done:
                    break
                del open_tasks[(first.slot, first.task)]
                yield first.line, first.row(server)


def _note(t: _Task, msg: str) -> None:
    g = NEW_PROMPT.match(msg)
    if g:
        t.P = int(g[1])
        return
    g = CACHED.match(msg)
    if g:
        if t.O is None:  # the first prompt batch starts at n_past; later ones further on
            t.O = int(g[1])
        return
    g = PROMPT_EVAL.match(msg)
    if g:
        t.N = int(g[1])
        return
    if RELEASE.match(msg):
        t.done = True


def _slots_rows(lines: Iterable[Tuple[int, Any]], server: str) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """One row per slot object of each snapshot; a task is read from the first snapshot that
    shows its final counts. A snapshot is one JSON array per line (a polling loop's output), or
    one array spread over the whole file (pretty-printed)."""
    buf: List[Tuple[int, Any]] = []
    seen = set()
    for n, raw in lines:
        if buf or (_text(raw).strip() == "["):
            buf.append((n, raw))
            continue
        yield from _snapshot(n, _text(raw), server, seen)
    if buf:
        yield from _snapshot(buf[0][0], "\n".join(_text(r) for _, r in buf), server, seen)


def _snapshot(n: int, text: str, server: str, seen: set) -> Iterator[Tuple[int, Dict[str, Any]]]:
    try:
        snap = json.loads(text)
    except RecursionError:
        yield n, {"llamacpp_error": "JSON nested too deeply to read"}
        return
    except ValueError:
        yield n, {"llamacpp_error": "not a JSON array of slots; save each GET /slots response as one line"}
        return
    if not isinstance(snap, list):
        yield n, {"llamacpp_error": "a /slots snapshot must be a JSON array of slot objects"}
        return
    if not snap:  # still a row of the summary: every snapshot read is accounted for
        yield n, {"llamacpp_skip": SLOTS_NONE}
        return
    for slot in snap:
        yield n, _slot_row(slot, server, seen)


def _slot_row(slot: Any, server: str, seen: set) -> Dict[str, Any]:
    """server_slot::to_json: id, n_ctx, is_processing, id_task, n_prompt_tokens_cache,
    n_prompt_tokens_processed, next_token[0].n_decoded, params, ..."""
    if not isinstance(slot, dict):
        return {"llamacpp_error": "each /slots entry must be a slot object"}
    if slot.get("id_task") is None:
        return {"llamacpp_skip": SLOT_NO_TASK}
    if not slot.get("is_processing"):
        return {"llamacpp_skip": SLOT_IDLE}
    nt = slot.get("next_token")
    decoded = nt[0].get("n_decoded") if isinstance(nt, list) and nt and isinstance(nt[0], dict) else None
    if decoded is None:
        return {"llamacpp_error": "`next_token[0].n_decoded` missing; save the whole /slots response"}
    if decoded == 0:
        return {"llamacpp_skip": SLOT_PROMPT}  # the first token is sampled once the whole prompt is in
    key = (slot.get("id"), slot.get("id_task"))
    if key in seen:
        return {"llamacpp_skip": SLOT_SEEN}
    seen.add(key)
    return {"llamacpp_slot": {"request_id": f"{server}/task{slot.get('id_task')}",
                              "instance": f"{server}/slot{slot.get('id')}", "arrival_ts": 0.0,
                              "cached": slot.get("n_prompt_tokens_cache"),
                              "processed": slot.get("n_prompt_tokens_processed"), "decoded": decoded}}


def request(row: Dict[str, Any], opts: Any) -> AuditRequest:
    """The AuditRequest of one task row (usage only: no token ids in logs or snapshots)."""
    if "processed" in row:  # a /slots entry: P = cached + processed once the prompt is done
        O = count(row.get("cached"), "n_prompt_tokens_cache")
        P = O + count(row.get("processed"), "n_prompt_tokens_processed")
        count(row.get("decoded"), "next_token[0].n_decoded")
    else:
        P, O = count(row["prompt_tokens"], "task.n_tokens"), count(row["cached_tokens"], "cached n_tokens")
    if O > P:
        raise RowError(f"cached tokens {O} exceed the prompt's {P} tokens; the log or snapshot is inconsistent")
    return AuditRequest(
        request_id=label(row["request_id"], "id_task"), arrival_ts=float(row["arrival_ts"]),
        instance=label(row["instance"], "id"), tenant="-", model_rev="-", tokenizer_rev="-", template_rev="-",
        engine="llamacpp", block_size=opts.block_size or 1, prompt_tokens=P, cached_tokens=O, source="usage",
        flags={"not_derived": "a llama.cpp slot log or /slots snapshot has no prompt tokens or messages"},
    )
