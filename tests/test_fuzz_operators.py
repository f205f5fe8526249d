"""Property tests for the operator commands: whatever the trace row, captured input or JSONL
line, `audit`, `diff`, `hashes` and `tokenize` answer cleanly (a counted row failure or a
one-line error), never an internal error; every audit row is counted.

Bounded to a few seconds; ``scripts/fuzz.py --suite operators`` runs the long version.
"""

from __future__ import annotations

import json
import sys

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import DATA, QWEN, REPO  # noqa: E402
from integration_helpers import in_process_cli

FAST = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.sampled_from(["\ud800", "a\udc00", "12", "", "0" * 16, "NaN"]),
    st.lists(st.integers(-5, 2**33), max_size=20),
)
JSON_VALUES = st.recursive(HOSTILE, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=6), inner, max_size=3), max_leaves=8)

# field names across the formats `audit` reads (native, captured pairs, LiteLLM, OTel, hash_ids)
FIELDS = ["request_id", "arrival_ts", "instance", "tenant", "model_rev", "engine", "block_size", "prompt_tokens",
          "cached_tokens", "token_ids", "block_fp", "fp_tokens", "checkpoints", "flags", "ttft_s", "template_inputs",
          "template_inputs_digest", "request", "response", "metadata", "hidden_params", "startTime",
          "completionStartTime", "attributes", "startTimeUnixNano", "spanId", "resourceSpans", "hash_ids",
          "input_length", "timestamp", "messages", "model_parameters"]


def fixture_rows():
    rows = [{"request_id": "n1", "arrival_ts": 1.0, "prompt_tokens": 40, "cached_tokens": 16,
             "token_ids": list(range(40)), "block_size": 16}]
    for p in sorted((DATA / "audit").glob("*.jsonl")):
        rows += [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if isinstance(r, dict)]  # trace rows (a /slots snapshot line is an array)


ROWS = fixture_rows()


run_cli = in_process_cli


def assert_clean(code, out, err):
    assert code in (0, 1, 2), (code, out, err)
    assert "Traceback" not in out + err, err
    assert "internal error" not in err, err
    if code == 2:
        assert len([ln for ln in err.strip().splitlines() if not ln.startswith("promptlint: note:")]) == 1, err


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzzops")


@FAST
@given(which=st.integers(0, len(ROWS) - 1), changes=st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=4),
       ascii_only=st.booleans())
def test_random_field_values_in_audit_rows(workdir, which, changes, ascii_only):
    good = ROWS[0]
    bad = dict(ROWS[which], **changes)
    line = json.dumps(bad, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    trace = workdir / "trace.jsonl"
    trace.write_bytes(json.dumps(good).encode() + b"\n" + line + b"\n")
    code, out, err = run_cli(["audit", trace, "--output-format", "json"])
    assert_clean(code, out, err)
    assert code in (0, 1), err  # a bad row fails alone; the audit goes on
    rows = json.loads(out)["summary"]["rows"]
    assert rows["read"] == rows["used"] + rows["skipped"] + rows["failed"] >= 2
    assert rows["used"] >= 1 and (code == 1) == (rows["failed"] > 0)


@FAST
@given(data=st.binary(max_size=300))
def test_random_bytes_as_an_audit_line(workdir, data):
    trace = workdir / "bytes.jsonl"
    trace.write_bytes(json.dumps(ROWS[0]).encode() + b"\n" + data.replace(b"\n", b" ") + b"\n")
    code, out, err = run_cli(["audit", trace, "--output-format", "json"])
    assert_clean(code, out, err)
    assert json.loads(out)["summary"]["rows"]["used"] == 1


@FAST
@given(value=JSON_VALUES, command=st.sampled_from(["diff", "hashes"]), fmt=st.sampled_from(["auto", "ids", "request"]))
def test_random_json_as_diff_and_hashes_input(workdir, value, command, fmt):
    p = workdir / "in.json"
    p.write_bytes(json.dumps({"prompt": value} if isinstance(value, str) else value).encode("utf-8", "surrogatepass"))
    argv = [command, p, p] if command == "diff" else [command, p]
    assert_clean(*run_cli(argv + ["--tokenizer", QWEN, "--input-format", fmt]))


@FAST
@given(texts=st.lists(st.text(max_size=20), min_size=1, max_size=3), raw=st.booleans())
def test_random_texts_in_tokenize_jsonl(workdir, texts, raw):
    p = workdir / "in.jsonl"
    p.write_bytes(b"".join(json.dumps({"text": t}, ensure_ascii=not raw).encode("utf-8", "surrogatepass") + b"\n"
                           for t in texts))
    code, out, err = run_cli(["tokenize", "--jsonl", p, "--tokenizer", QWEN])
    assert_clean(code, out, err)
    if code == 0:  # one output line per input line, whatever line separators the texts hold
        assert len(out.splitlines()) == len(texts)


def test_the_long_fuzz_script_runs_clean_on_a_short_run(capsys):
    sys.path.insert(0, str(REPO / "scripts"))
    from fuzz_operators import run

    assert run(40, seed=5) == 0, capsys.readouterr().out
