"""llama.cpp server slot logs and /slots snapshots as audit input (llama.cpp 0c1e570).

Every expected number is read off the fixtures by hand: `task.n_tokens` of a task's
`new prompt` line is P, its first `cached n_tokens` line is the reuse O (n_past), and
`prompt eval time ... / N tokens` is N = P - O. See tests/data/audit/README.md.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from promptlint.audit import llamacpp
from promptlint.cli import main

DATA = Path(__file__).parent / "data" / "audit"

# (request, instance, P, O) per task, in launch order (task 2 is released before task 0)
TRACE_ROWS = [
    ("task0", "slot0", 1200, 0),
    ("task2", "slot1", 800, 0),
    ("task4", "slot0", 1500, 1230),  # selected by LCP similarity: 1230 of the slot's 1239 tokens reused
    ("task6", "slot1", 2600, 40),  # two prompt batches: only the first `cached n_tokens` (40) is n_past
    ("task8", "slot0", 1500, 1499),  # the whole prompt cached: llama.cpp steps back one token
]


def audit(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", *map(str, args), "--output-format", "json", "--workers", "1"])
    return code, json.loads(out.getvalue()), err.getvalue()


def rows(result, server):
    return [(r["request_id"], r["instance"], r["prompt_tokens"], r["cached_tokens"]) for r in result["requests"]]


def expected(server, table):
    return [(f"{server}/{t}", f"{server}/{s}", P, O) for t, s, P, O in table]


def sheet_rows(tmp_path, trace):
    sheet = tmp_path / "rows.jsonl"
    code, res, _ = audit(trace, "--worksheet", sheet)
    return code, res, [json.loads(l) for l in sheet.read_text().splitlines()]


def test_trace_log_one_row_per_task(tmp_path):
    code, res, sheet = sheet_rows(tmp_path, DATA / "llamacpp_server_trace.log")
    assert code == 0
    assert rows(res, "llamacpp_server_trace") == expected("llamacpp_server_trace", TRACE_ROWS)
    first = sheet[0]
    assert first["arrival_ts"] == pytest.approx(60 + 2.113401)  # "1.02.113.401": minutes.seconds.ms.us
    assert (first["engine"], first["tokens_source"], first["block_size"]) == ("llamacpp", "usage", 1)
    s = res["summary"]
    assert (s["prompt_tokens"], s["cached_tokens"]) == (1200 + 800 + 1500 + 2600 + 1500, 1230 + 40 + 1499)
    by = s["by"]["instance"]
    assert (by["llamacpp_server_trace/slot0"]["prompt_tokens"], by["llamacpp_server_trace/slot0"]["cached_tokens"]) == (4200, 2729)
    assert (by["llamacpp_server_trace/slot1"]["prompt_tokens"], by["llamacpp_server_trace/slot1"]["cached_tokens"]) == (3400, 40)
    assert s["rows"]["read"] == 5 and s["rows"]["skipped"] == 0
    assert any("no prompt tokens" in e for e in res["requests"][0]["evidence"])


def test_prompt_length_from_cached_plus_evaluated(tmp_path):
    """Without the `new prompt` lines, P = n_past + the `prompt eval` token count."""
    log = tmp_path / "srv.log"
    log.write_text("".join(l for l in (DATA / "llamacpp_server_trace.log").read_text().splitlines(True)
                           if "new prompt" not in l))
    _, res, _ = audit(log)
    assert rows(res, "srv") == expected("srv", TRACE_ROWS)


def test_default_verbosity_is_counted_as_skipped_with_the_fix():
    code, res, _ = audit(DATA / "llamacpp_server_default.log")
    assert code == 0 and res["requests"] == []
    assert res["summary"]["rows"]["skipped_reasons"] == {llamacpp.NEEDS_TRACE: 2}
    assert "-lv 4" in llamacpp.NEEDS_TRACE


def test_jsonl_log(tmp_path):
    _, res, sheet = sheet_rows(tmp_path, DATA / "llamacpp_server_log.jsonl")
    assert rows(res, "x") == [("llamacpp_server_log/task0", "llamacpp_server_log/slot0", 1200, 0)]
    assert sheet[0]["arrival_ts"] == pytest.approx(62.113401)  # "time" is microseconds


def test_slots_snapshots():
    _, res, _ = audit(DATA / "llamacpp_slots.jsonl")
    # poll 1: task 4 (3 tokens decoded) 1230 + 270; poll 2: task 6 40 + 2560; poll 3: task 8 1499 + 1
    assert rows(res, "x") == expected("llamacpp_slots", [("task4", "slot0", 1500, 1230), ("task6", "slot1", 2600, 40),
                                                         ("task8", "slot0", 1500, 1499)])
    assert res["summary"]["rows"]["skipped_reasons"] == {llamacpp.SLOT_PROMPT: 1, llamacpp.SLOT_SEEN: 1, llamacpp.SLOT_IDLE: 1}


def test_pretty_printed_snapshot_and_prompt_text_never_written(tmp_path):
    snap = json.loads((DATA / "llamacpp_slots.jsonl").read_text().splitlines()[2])
    snap[0]["prompt"] = "SECRET-PROMPT-TEXT"  # LLAMA_SERVER_SLOTS_DEBUG adds the prompt text
    snap.append({"id": 2, "n_ctx": 4096, "speculative": False, "is_processing": False})
    f = tmp_path / "slots.json"
    f.write_text(json.dumps(snap, indent=2))
    sheet = tmp_path / "rows.csv"
    code, res, err = audit(f, "--worksheet", sheet)
    assert code == 0
    assert rows(res, "x") == [("slots/task8", "slots/slot0", 1500, 1499)]
    assert res["summary"]["rows"]["skipped_reasons"] == {llamacpp.SLOT_IDLE: 1, llamacpp.SLOT_NO_TASK: 1}
    assert "SECRET" not in json.dumps(res) + err + sheet.read_text()


def test_bad_snapshot_fails_its_row(tmp_path):
    f = tmp_path / "slots.jsonl"
    f.write_text('[{"id": 0, "is_processing": true, "id_task": 3, "n_prompt_tokens_cache": -1, '
                 '"n_prompt_tokens_processed": 5, "next_token": [{"n_decoded": 1}]}]\n[1, 2\n')
    code, res, err = audit(f)
    assert code == 1 and res["summary"]["rows"]["failed"] == 2
    assert "n_prompt_tokens_cache" in err and "not a JSON array" in err


def test_jsonl_trace_with_a_bad_first_line_is_not_a_log(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text('not json\n{"request_id": "a", "prompt_tokens": 10, "cached_tokens": 0}\n')
    code, res, _ = audit(f)
    assert code == 1 and [r["request_id"] for r in res["requests"]] == ["a"]


def test_logs_in_a_directory_merge_by_time(tmp_path):
    for name in ("llamacpp_server_trace.log", "llamacpp_server_default.log"):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    _, res, _ = audit(tmp_path)
    assert rows(res, "x") == expected("llamacpp_server_trace", TRACE_ROWS)
    assert res["summary"]["rows"]["skipped_reasons"] == {llamacpp.NEEDS_TRACE: 2}
