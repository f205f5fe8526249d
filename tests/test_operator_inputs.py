"""Malformed rows and inputs for the operator commands (`audit`, `diff`, `hashes`, `tokenize`):
a clear one-line error naming the file, the line and the field, never an internal error, a
silent default or a row dropped without a count (issue 15 item 13, issue 20 items 3 and 4)."""

from __future__ import annotations

import json

import pytest

from conftest import DATA, QWEN

OTEL = DATA / "audit" / "otel_spans.jsonl"
LITELLM = DATA / "audit" / "litellm_payload.jsonl"
ROW = {"request_id": "r1", "arrival_ts": 1.0, "prompt_tokens": 20, "cached_tokens": 0, "token_ids": list(range(1, 21))}


def clean(res, code):
    assert res.code == code, (res.code, res.err)
    assert "internal error" not in res.err and "Traceback" not in res.err, res.err


def write_lines(tmp_path, *rows, name="t.jsonl"):
    p = tmp_path / name
    p.write_bytes(b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in rows))
    return p


def failed_row(cli, tmp_path, bad, *fields):
    """Audit [good, bad, good]: the bad line is named on stderr with its field, the good rows are audited."""
    p = write_lines(tmp_path, ROW, bad, dict(ROW, request_id="r3", arrival_ts=3.0))
    res = cli("audit", p, "--output-format", "json")
    clean(res, 1)
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"promptlint: error: {p}:2: "), res.err
    for f in fields:
        assert f in lines[0], (f, lines[0])
    summary = res.json()["summary"]
    assert summary["requests"] == 2
    assert {k: summary["rows"][k] for k in ("read", "used", "skipped", "failed")} == {
        "read": 3, "used": 2, "skipped": 0, "failed": 1}
    assert summary["rows"]["failures"][0]["line"] == 2
    return lines[0]


# --- audit: token ids ------------------------------------------------------------------------

@pytest.mark.parametrize("bad_id, says", [
    (-1, "the number -1"), (2**32, "the number 4294967296"), (2**64, "the number 18446744073709551616"),
    (1.5, "the number 1.5"), ("7", "a string"), ([7], "a list"), (True, "a boolean"), (None, "null"),
])
def test_audit_bad_token_id_fails_its_row(cli, tmp_path, bad_id, says):
    ids = list(range(1, 21))
    ids[5] = bad_id  # in the first full 16-token chunk, so it would be fingerprinted
    msg = failed_row(cli, tmp_path, dict(ROW, request_id="r2", arrival_ts=2.0, token_ids=ids),
                     "item 5 of `token_ids`", says)
    assert "2^32-1" in msg


def test_audit_token_ids_not_a_list(cli, tmp_path):
    failed_row(cli, tmp_path, dict(ROW, request_id="r2", arrival_ts=2.0, token_ids="1 2 3"), "`token_ids`", "a string")


def test_audit_bad_ids_in_a_captured_response(cli, tmp_path):
    bad = {"request_id": "r2", "arrival_ts": 2.0, "request": {},
           "response": {"usage": {"prompt_tokens": 2}, "prompt_token_ids": [5, -3]}}
    failed_row(cli, tmp_path, bad, "`response.prompt_token_ids`", "item 1", "-3")


# --- audit: block size, timestamps, counts ------------------------------------------------------

@pytest.mark.parametrize("value, says", [(0, ">= 1, not 0"), (1.5, "1.5"), (float("nan"), "nan"),
                                         (float("inf"), "inf"), ("16", "a string"), (-16, "-16")])
def test_audit_bad_block_size(cli, tmp_path, value, says):
    failed_row(cli, tmp_path, dict(ROW, request_id="r2", arrival_ts=2.0, block_size=value), "`block_size`", says)


@pytest.mark.parametrize("value, says", [(float("nan"), "nan"), (float("inf"), "inf"), ("abc", "non-numeric string"),
                                         ([1], "a list")])
def test_audit_bad_arrival_ts_names_the_line(cli, tmp_path, value, says):
    # the old message was "could not convert string to float: 'abc'" with no line and no field
    failed_row(cli, tmp_path, dict(ROW, request_id="r2", arrival_ts=value), "`arrival_ts`", says)


@pytest.mark.parametrize("field, value", [("prompt_tokens", "20"), ("prompt_tokens", -1), ("cached_tokens", 2.5),
                                          ("cached_tokens", 21), ("ttft_s", "fast"), ("flags", ["preempted"]),
                                          ("request_id", {"id": 1}), ("tenant", [1]), ("engine", "tgi"),
                                          ("fp_tokens", 0)])
def test_audit_wrong_typed_native_fields(cli, tmp_path, field, value):
    row = {**ROW, "request_id": "r2", "arrival_ts": 2.0, field: value}
    if field == "fp_tokens":
        row = {"request_id": "r2", "arrival_ts": 2.0, "prompt_tokens": 32, "block_fp": ["0" * 16], "fp_tokens": 0}
    msg = failed_row(cli, tmp_path, row, field if field != "cached_tokens" or value != 21 else "cached tokens 21")
    assert "'20'" not in msg and "fast" not in msg  # a bad value is described, never echoed


@pytest.mark.parametrize("row, field", [
    ({"block_fp": "abc"}, "`block_fp`"),
    ({"block_fp": [1.5]}, "`block_fp[0]`"),
    ({"block_fp": ["not-a-fingerprint"]}, "`block_fp[0]`"),
    ({"checkpoints": "x"}, "`checkpoints`"),
    ({"checkpoints": {"abc": "0" * 16}}, "checkpoints key"),
    ({"checkpoints": {"32": "0" * 16}}, "checkpoint at 32 tokens"),
    ({"checkpoints": [3]}, "`checkpoints[0]`"),
])
def test_audit_bad_fingerprint_rows(cli, tmp_path, row, field):
    failed_row(cli, tmp_path, dict({"request_id": "r2", "arrival_ts": 2.0, "prompt_tokens": 64}, **row), field)


@pytest.mark.parametrize("row, field", [
    ({"hash_ids": "1 2", "input_length": 32}, "`hash_ids`"),
    ({"hash_ids": [1.5], "input_length": 32}, "`hash_ids[0]`"),
    ({"hash_ids": [1, 2], "input_length": 32, "timestamp": "noon"}, "`timestamp`"),
])
def test_audit_bad_hash_ids_rows(cli, tmp_path, row, field):
    failed_row(cli, tmp_path, dict(row, chat_id="r2"), field)


# --- audit: OTel and LiteLLM --------------------------------------------------------------------

def _otel(mutate):
    obj = json.loads(OTEL.read_text())
    mutate(obj["resourceSpans"][0]["scopeSpans"][0]["spans"][0])
    return obj


def _attr(span, key, value):
    span["attributes"] = [a for a in span["attributes"] if a["key"] != key] + [{"key": key, "value": value}]


@pytest.mark.parametrize("mutate, field", [
    (lambda s: s.update(attributes="gen_ai.usage.input_tokens=5"), "`attributes`"),
    (lambda s: s.update(attributes=[1]), "`attributes[0]`"),
    (lambda s: _attr(s, "gen_ai.usage.input_tokens", {"intValue": "abc"}), "gen_ai.usage.input_tokens"),
    (lambda s: _attr(s, "gen_ai.usage.input_tokens", {"intValue": "-5"}), "gen_ai.usage.input_tokens"),
    (lambda s: _attr(s, "gen_ai.usage.cache_read.input_tokens", {"doubleValue": 1.5}), "cache_read"),
    (lambda s: _attr(s, "gen_ai.usage.cache_read.input_tokens", {"intValue": "4096"}), "exceed"),  # > input 2048
    (lambda s: s.update(startTimeUnixNano="noon"), "`startTimeUnixNano`"),
])
def test_audit_wrong_typed_otel_fields(cli, tmp_path, mutate, field):
    msg = failed_row(cli, tmp_path, _otel(mutate), field)
    assert "span eee19b7ec3c1b174" in msg  # the span is named when the line holds several


def test_audit_otel_export_of_wrong_shape(cli, tmp_path):
    for bad, field in (({"resourceSpans": "x"}, "`resourceSpans`"), ({"resourceSpans": [1]}, "`resourceSpans[0]`"),
                       ({"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]}, "spans")):
        failed_row(cli, tmp_path, bad, field)


def test_audit_otel_spans_without_input_tokens_are_counted_as_skipped(cli, tmp_path):
    export = json.loads(OTEL.read_text())
    spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
    http = {"spanId": "00000000000000aa", "name": "GET /health", "attributes": [
        {"key": "http.method", "value": {"stringValue": "GET"}}]}
    spans.append(http)
    p = write_lines(tmp_path, export, dict(http, spanId="00000000000000bb"))
    res = cli("audit", p, "--output-format", "json")
    clean(res, 0)  # skipping a span that is not a request is not a failure
    rows = res.json()["summary"]["rows"]
    assert (rows["read"], rows["used"], rows["skipped"], rows["failed"]) == (3, 1, 2, 0)
    assert list(rows["skipped_reasons"].values()) == [2]
    assert "input token count" in next(iter(rows["skipped_reasons"]))
    res = cli("audit", p)
    clean(res, 0)
    assert "rows read 3: 1 audited, 2 skipped, 0 failed" in res.out
    assert "skipped 2: OTel span without an input token count" in res.out


@pytest.mark.parametrize("change, field", [
    ({"metadata": "team-a"}, "`metadata`"),
    ({"startTime": "yesterday"}, "`startTime`"),
    ({"completionStartTime": float("nan")}, "`completionStartTime`"),
    ({"metadata": {"usage_object": {"prompt_tokens_details": {"cached_tokens": "many"}}}}, "cached_tokens"),
    ({"hidden_params": [1]}, "`hidden_params`"),
    ({"prompt_tokens": None}, "`prompt_tokens`"),
])
def test_audit_wrong_typed_litellm_fields(cli, tmp_path, change, field):
    row = dict(json.loads(LITELLM.read_text()), **change)
    msg = failed_row(cli, tmp_path, row, field)
    assert "secret prompt" not in msg


def test_audit_captured_response_with_wrong_typed_usage(cli, tmp_path):
    for response, field in (({"usage": "x"}, "`usage`"), ({"usage": {"prompt_tokens": "lots"}}, "usage.prompt_tokens"),
                            ({"usage": {"prompt_tokens": 5}, "metrics": {"time_to_first_token_ms": "x"}},
                             "time_to_first_token_ms")):
        failed_row(cli, tmp_path, {"request_id": "r2", "request": {}, "response": response}, field)
    failed_row(cli, tmp_path, {"request_id": "r2", "request": [1], "response": {}}, "`request`")


# --- audit: the line itself ---------------------------------------------------------------------

def test_audit_deep_json_line(cli, tmp_path):
    failed_row(cli, tmp_path, b"[" * 100_000 + b"]" * 100_000, "nested too deeply")


def test_audit_deep_template_inputs_fail_their_row(cli, tmp_path):
    deep = b'{"request_id": "r2", "prompt_tokens": 5, "template_inputs": ' + b"[" * 900 + b"]" * 900 + b"}"
    p = write_lines(tmp_path, ROW, deep)
    res = cli("audit", p, "--output-format", "json")
    assert res.code in (0, 1) and "internal error" not in res.err  # read (digested) or failed, never a crash
    rows = res.json()["summary"]["rows"]
    assert rows["used"] + rows["failed"] == 2


def test_audit_invalid_utf8_names_the_line(cli, tmp_path):
    msg = failed_row(cli, tmp_path, b'{"request_id": "r\xff2", "prompt_tokens": 3}', "not UTF-8", "0xff")
    assert "byte 18 of the line" in msg  # 1-based: `{"request_id": "r` is 17 bytes


def test_audit_lone_surrogate_in_a_label(cli, tmp_path):
    # a label is written to the worksheet and the summary: it must be Unicode text
    line = b'{"request_id": "r2", "arrival_ts": 2.0, "prompt_tokens": 5, "tenant": "t\\ud800"}'
    failed_row(cli, tmp_path, line, "`tenant`", "lone surrogate", "\\ud800")


def test_audit_lone_surrogate_in_template_inputs_is_data(cli, tmp_path):
    line = b'{"request_id": "r2", "arrival_ts": 2.0, "prompt_tokens": 5, "template_inputs": {"m": "a\\udc00"}}'
    res = cli("audit", write_lines(tmp_path, ROW, line), "--output-format", "json")
    clean(res, 0)
    assert res.json()["summary"]["rows"]["used"] == 2


def test_audit_not_an_object(cli, tmp_path):
    failed_row(cli, tmp_path, b"[1, 2, 3]", "JSON object")
    failed_row(cli, tmp_path, b'{"request_id": "r2", "prompt_tokens": 3', "invalid JSON", "column")


def test_audit_lines_end_at_newline_only(cli, tmp_path):
    """Raw U+2028, U+0085, U+001C-U+001E, \\v, \\f and \\r inside a JSON string do not end a line."""
    seps = "\u2028\u2029\u0085\x1c\x1d\x1e\x0b\x0c\r"
    row = dict(ROW, tenant="a" + seps + "b")
    p = tmp_path / "t.jsonl"
    p.write_bytes(json.dumps(row, ensure_ascii=False).replace("\\r", "\r").replace("\\u000b", "\x0b")
                  .replace("\\u000c", "\x0c").replace("\\u001c", "\x1c").replace("\\u001d", "\x1d")
                  .replace("\\u001e", "\x1e").encode("utf-8") + b"\n")
    raw = p.read_bytes()
    assert raw.count(b"\n") == 1 and b"\r" in raw and "\u2028".encode() in raw and b"\x1c" in raw
    res = cli("audit", p, "--output-format", "json")
    clean(res, 0)
    (req,) = res.json()["requests"]
    assert req["tenant"] == "a" + seps + "b"


def test_audit_many_failed_rows_are_counted_and_capped_on_stderr(cli, tmp_path):
    rows = [dict(ROW, request_id=f"r{i}", arrival_ts=float(i), block_size=0) for i in range(25)]
    res = cli("audit", write_lines(tmp_path, *rows), "--output-format", "json")
    clean(res, 1)
    err = res.err.strip().splitlines()
    assert len(err) == 21 and "5 more rows failed" in err[-1] and "25 rows not audited" in err[-1]
    rows = res.json()["summary"]["rows"]
    assert rows["failed"] == 25 and len(rows["failures"]) == 20


def test_audit_failure_without_a_tally_raises_with_file_and_line():
    """The library reader (no tally) stops at the first bad row, naming it."""
    import io

    from promptlint.audit.ingest import Options, TraceError, read

    data = io.BytesIO(json.dumps(ROW).encode() + b"\n\n" + json.dumps(dict(ROW, block_size=0)).encode() + b"\n")
    with pytest.raises(TraceError, match=r"^t\.jsonl:3: `block_size`"):
        list(read(data, "t.jsonl", Options(b"k" * 32)))


# --- audit: options and side files -------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["--block-size", "0"], "--block-size 0"),
    (["--hash-block-tokens", "0"], "--hash-block-tokens 0"),
    (["--index-blocks", "0"], "--index-blocks 0"),
    (["--capacity-curve", "0"], "--capacity-curve 0"),
    (["--capacity-blocks", "-4"], "--capacity-blocks -4"),
    (["--reorder-window", "nan"], "--reorder-window"),
    (["--engine", "tgi"], "--engine tgi"),
    (["--worksheet", "/nonexistent-dir/w.csv"], "cannot write the worksheet"),
    (["--kv-events", "."], "cannot read the KV events"),
])
def test_audit_bad_options_are_one_line_usage_errors(cli, tmp_path, args, needle):
    res = cli("audit", write_lines(tmp_path, ROW), *args)
    clean(res, 2)
    assert needle in res.err and res.err.count("\n") == 1


@pytest.mark.parametrize("event, field", [
    ({"instance": "a", "seq": 1, "ts": "x", "events": []}, "`ts`"),
    ({"instance": "a", "seq": 1, "ts": 0.5, "events": "x"}, "`events`"),
    ({"instance": "a", "seq": 1, "ts": 0.5, "events": [{"type": "BlockStored", "block_hashes": [[1, 2]],
                                                         "token_ids": list(range(16)), "block_size": 16}]},
     "block_hashes[0]"),
    ({"instance": "a", "seq": 1, "ts": 0.5, "events": [{"type": "BlockStored", "block_hashes": [1],
                                                         "token_ids": [-1] * 16, "block_size": 16}]}, "token_ids"),
    ({"instance": "a", "seq": 1, "ts": 0.5, "events": [{"type": "BlockStored", "block_hashes": [1],
                                                         "token_ids": list(range(16)), "block_size": 0}]},
     "block_size"),
])
def test_audit_bad_kv_event_line_stops_with_its_line(cli, tmp_path, event, field):
    ev = write_lines(tmp_path, {"instance": "a", "seq": 0, "ts": 0.1, "events": []}, event, name="events.jsonl")
    res = cli("audit", write_lines(tmp_path, ROW, dict(ROW, request_id="r2", arrival_ts=2.0)), "--kv-events", ev)
    clean(res, 2)
    assert f"{ev}:2: " in res.err and field in res.err and res.err.count("\n") == 1


def test_audit_underived_rows_say_why(cli, tmp_path):
    """A row whose messages cannot be rendered stays usage-only, and its evidence says why."""
    import sys

    sys.path.insert(0, str(DATA.parent))
    from chat_helpers import model_dir

    d = model_dir("Qwen-Qwen2.5-7B-Instruct.jinja", tmp_path)
    rows = [{"request_id": "a", "request": {"messages": "hello"}, "response": {"usage": {"prompt_tokens": 5}}},
            {"request_id": "b", "request": {"messages": [{"role": "user", "content": "x\ud800"}]},
             "response": {"usage": {"prompt_tokens": 5}}}]
    res = cli("audit", write_lines(tmp_path, *rows), "--tokenizer", QWEN, "--chat-template", d, "--output-format", "json")
    clean(res, 0)
    a, b = res.json()["requests"]
    assert a["tokens_source"] == b["tokens_source"] == "usage"
    assert "token ids not derived: `messages` must be a list of objects" in a["evidence"]
    assert any("lone surrogate" in e for e in b["evidence"])


# --- diff and hashes ----------------------------------------------------------------------------

@pytest.mark.parametrize("content, says", [
    ("[1, -2]", "item 1 of the JSON array is the number -2"),
    (f"[1, {2**32}]", "item 1 of the JSON array is the number 4294967296"),
    (f"[1, {2**64}]", "item 1 of the JSON array is the number 18446744073709551616"),
    ("[1, 2.5]", "item 1 of the JSON array is the number 2.5"),
    ('[1, "2"]', "item 1 of the JSON array is a string"),
    ("[1, [2]]", "item 1 of the JSON array is a list"),
    ("[true]", "item 0 of the JSON array is a boolean"),
    ('{"prompt": [1, -2]}', "item 1 of `prompt` is the number -2"),
    ('{"prompt": [[1, 2.5]]}', "item 1 of `prompt` is the number 2.5"),
])
@pytest.mark.parametrize("command", ["diff", "hashes"])
def test_bad_token_id_arrays_are_errors_not_text(cli, tmp_path, content, says, command):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    ok = tmp_path / "ok.json"
    ok.write_text("[1, 2, 3]")
    res = cli(command, *([ok, bad] if command == "diff" else [bad]), "--tokenizer", QWEN)
    clean(res, 2)
    assert f"{bad}: {says}" in res.err and res.err.count("\n") == 1
    if content.startswith("["):
        assert "--input-format text" in res.err  # how to say it really is a rendered prompt


def test_a_json_array_is_text_when_asked(cli, tmp_path, qwen):
    p = tmp_path / "p.txt"
    p.write_text("[1, -2]")
    res = cli("diff", p, p, "--tokenizer", QWEN, "--input-format", "text", "--output-format", "json")
    clean(res, 0)
    assert res.json()["prompt_tokens"] == len(qwen.encode("[1, -2]", add_special_tokens=False).ids)


def test_ids_beyond_the_vocabulary_are_an_error(cli, tmp_path, qwen):
    n = qwen.get_vocab_size(with_added_tokens=True)
    assert qwen.id_to_token(n) is None and qwen.id_to_token(n - 1) is not None
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("[1, 2, 3]")
    b.write_text(f"[1, 2, {n}]")
    for argv in (["diff", a, b], ["hashes", b]):
        res = cli(*argv, "--tokenizer", QWEN)
        clean(res, 2)
        assert f"token id {n} (position 2) is not in the vocabulary" in res.err
    res = cli("diff", a, b)  # no tokenizer: ids are compared, never decoded
    clean(res, 0)


def test_ids_beyond_the_embedded_vocabulary_next_to_text(cli, tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.json"
    a.write_text("hello")
    b.write_text("[151644, 8948]")  # Qwen ids; the embedded cl100k_base has 100,277 ids
    res = cli("diff", a, b)
    clean(res, 2)
    assert "token id 151644 (position 0) is not in the vocabulary of cl100k_base" in res.err


@pytest.mark.parametrize("content, says", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"prompt": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"prompt": "a\\ud800b"}', "lone surrogate (\\ud800 at character 1)"),
])
@pytest.mark.parametrize("command", ["diff", "hashes"])
def test_deep_json_and_lone_surrogates(cli, tmp_path, content, says, command):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    res = cli(command, *([bad, bad] if command == "diff" else [bad]), "--tokenizer", QWEN)
    clean(res, 2)
    assert says in res.err and res.err.count("\n") == 1


@pytest.mark.parametrize("engine", ["openai", "anthropic", "gemini"])
def test_diff_text_under_a_hosted_engine(cli, tmp_path, qwen, engine):
    """docs/operators.md: `diff a.txt b.txt --engine openai --tokenizer ...` (was an internal error)."""
    a_text = "System prompt.\n" * 200 + "Question one?"
    b_text = "System prompt.\n" * 200 + "Question two?"
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(a_text)
    b.write_text(b_text)
    ea, eb = (qwen.encode(t, add_special_tokens=False).ids for t in (a_text, b_text))
    S = next(i for i, (x, y) in enumerate(zip(ea, eb)) if x != y)
    res = cli("diff", a, b, "--engine", engine, "--tokenizer", QWEN, "--output-format", "json")
    clean(res, 0)
    r = res.json()
    assert r["engine"] == engine and r["shared_tokens"] == S and r["prompt_tokens"] == len(eb)
    if engine == "openai":  # 1,024 minimum, then 128-token steps (docs/operators.md)
        assert r["eligible_tokens"] == (1024 + (min(S, len(eb) - 1) - 1024) // 128 * 128 if S >= 1024 else 0)


# --- tokenize --jsonl ---------------------------------------------------------------------------

@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "\r"])
def test_tokenize_jsonl_lines_end_at_newline_only(cli, tmp_path, qwen, sep):
    text = f"first{sep}second"
    p = tmp_path / "in.jsonl"
    # the separator raw inside the JSON string, as a logger that does not escape it writes it
    p.write_bytes(('{"text": "first' + sep + 'second"}\n{"text": "next"}\n').encode("utf-8"))
    res = cli("tokenize", "--jsonl", p, "--tokenizer", QWEN)
    clean(res, 0)
    got = [json.loads(line)["token_ids"] for line in res.out.splitlines()]
    assert got == [qwen.encode(text, add_special_tokens=False).ids, qwen.encode("next", add_special_tokens=False).ids]


@pytest.mark.parametrize("line2, says", [
    (b'{"text": "a\\ud800"}', '"text" holds a lone surrogate (\\ud800 at character 1)'),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"text": "\xff"}', "not UTF-8 (byte 0xff"),
    (b'{"text": 5}', 'expected an object with a "text" string'),
])
def test_tokenize_jsonl_bad_line_names_its_line(cli, tmp_path, line2, says):
    p = tmp_path / "in.jsonl"
    p.write_bytes(b'{"text": "ok"}\n' + line2 + b"\n")
    res = cli("tokenize", "--jsonl", p, "--tokenizer", QWEN)
    clean(res, 2)
    assert f"{p}:2: " in res.err and says in res.err and res.err.count("\n") == 1


# --- help and legends (issue 15 item 22) --------------------------------------------------------

@pytest.mark.parametrize("command", ["diff", "hashes", "audit"])
def test_help_description_starts_with_a_capital(cli, command):
    res = cli(command, "--help")
    assert res.code == 0
    description = res.out.split("\n\n")[1]
    assert description[0].isupper(), description


def test_hashes_text_output_has_a_header(cli, tmp_path):
    p = tmp_path / "ids.json"
    p.write_text(json.dumps(list(range(40))))
    res = cli("hashes", p)
    clean(res, 0)
    lines = res.out.splitlines()
    assert lines[0] == "block\tend_token\thash" and [ln.split("\t")[:2] for ln in lines[1:]] == [["0", "16"], ["1", "32"]]
    res = cli("hashes", p, "--checkpoints", "16,64")
    assert res.out.splitlines()[0] == "tokens\tfingerprint" and res.out.splitlines()[2] == "64\t-"


def test_audit_full_output_explains_its_abbreviations(cli):
    res = cli("audit", DATA.parent.parent / "examples" / "audit" / "trace.jsonl")
    clean(res, 0)
    table = {line.split()[0]: line for line in res.out.splitlines() if line.startswith("  ") and len(line.split()) > 4}
    assert "rounding" in table["M3"] and "replica" in table["M6"] and "tenant" in table["M4"]
    assert "evicted" in table["M5"] and "unexplained" in table["U"]
    assert "E_inst, E_tmpl = the ceilings above" in res.out and "ceiling (E_inst)" in res.out


@pytest.mark.parametrize("depth", [400, 800, 950, 990, 5000])
def test_diff_of_texts_with_deeply_nested_json(cli, tmp_path, depth):
    """json_order's canonical comparison recurses per level: a deep fragment names no cause, never crashes."""
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("[" * depth + "1" + "]" * depth)
    b.write_text("[" * depth + "2" + "]" * depth)
    res = cli("diff", a, b, "--tokenizer", QWEN, "--input-format", "text", "--output-format", "json")
    clean(res, 0)
    assert res.json()["first_divergent_token"] is not None


def test_audit_a_row_later_than_the_reorder_window_fails_alone(cli, tmp_path):
    rows = [dict(ROW, request_id="a", arrival_ts=100.0), dict(ROW, request_id="b", arrival_ts=200.0),
            dict(ROW, request_id="late", arrival_ts=10.0), dict(ROW, request_id="c", arrival_ts=300.0)]
    res = cli("audit", write_lines(tmp_path, *rows), "--reorder-window", "5", "--output-format", "json")
    clean(res, 1)
    assert ":3: arrival_ts 10 is earlier than requests already audited" in res.err and res.err.count("\n") == 1
    assert [r["request_id"] for r in res.json()["requests"]] == ["a", "b", "c"]
    rows = res.json()["summary"]["rows"]
    assert (rows["read"], rows["used"], rows["failed"]) == (4, 3, 1)


def test_audit_otlp_export_without_spans_is_a_skipped_row(cli, tmp_path):
    res = cli("audit", write_lines(tmp_path, ROW, {"resourceSpans": []}), "--output-format", "json")
    clean(res, 0)
    rows = res.json()["summary"]["rows"]
    assert (rows["read"], rows["used"], rows["skipped"]) == (2, 1, 1)
    assert rows["skipped_reasons"] == {"OTLP export line without spans": 1}


def test_audit_a_line_over_the_cap_fails_alone_without_being_held(cli, tmp_path, monkeypatch):
    from promptlint.base import jsonl

    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 2000)
    long_row = dict(ROW, request_id="long", arrival_ts=2.0, token_ids=list(range(1000)), prompt_tokens=1000)
    p = write_lines(tmp_path, ROW, long_row, dict(ROW, request_id="r3", arrival_ts=3.0))
    assert len(p.read_bytes().split(b"\n")[1]) > 2000
    res = cli("audit", p, "--output-format", "json")
    clean(res, 1)
    assert f"{p}:2: line longer than 2,000 bytes" in res.err
    assert [r["request_id"] for r in res.json()["requests"]] == ["r1", "r3"]


@pytest.mark.parametrize("body", ['{"messages": 5, "system": "x"}', '{"messages": 1.5}', '{"messages": true, "tools": []}'])
@pytest.mark.parametrize("command", ["diff", "hashes"])
def test_request_body_whose_messages_is_not_a_list(cli, tmp_path, body, command):
    p = tmp_path / "body.json"
    p.write_text(body)
    res = cli(command, *([p, p] if command == "diff" else [p]), "--tokenizer", QWEN)
    clean(res, 2)
    assert "`messages` must be a" in res.err or "needs the chat template" in res.err  # SDK or chat-completions reader
