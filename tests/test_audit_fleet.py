"""`audit` for a fleet: --workers, --ray, shards and Parquet give the single-process result,
row for row and in the summary, on a multi-instance, multi-tenant trace with evictions,
derived rows (no token ids), usage-only, skipped and failed rows."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import audit_fleet as fleet
from promptlint.cli import main

pytestmark = pytest.mark.slow  # a real end-to-end run (docs/architecture.md, "Tests")

N = 150


def audit(tmp: Path, trace_args, *extra):
    """(worksheet rows, summary, exit code) of one audit run, in this process."""
    sheet = tmp / f"sheet{len(list(tmp.glob('sheet*')))}.jsonl"
    key = tmp / "fp.key"
    key.write_bytes(fleet.KEY)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        rc = main(["audit", *map(str, trace_args), "--output-format", "json", "--worksheet", str(sheet),
                   "--fp-key", str(key), "--tokenizer", str(fleet.QWEN), "--chat-template", str(fleet.QWEN_TEMPLATE),
                   "--capacity-blocks", "6", "--capacity-blocks", "i1=3", "--capacity-curve", "32", *extra])
    rows = [json.loads(line) for line in sheet.read_text(encoding="utf-8").splitlines()]
    return rows, json.loads(buf.getvalue())["summary"], rc


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fleet")
    lines = fleet.rows(N, seed=5)
    return tmp, lines, fleet.write(tmp / "trace.jsonl", lines)


@pytest.fixture(scope="module")
def single(trace):
    tmp, _, path = trace
    return audit(tmp, [path], "--workers", "1")


def test_the_trace_exercises_every_stage(trace, single):
    """Not a vacuous comparison: the baseline has what the stages must agree on."""
    _, lines, _ = trace
    rows, summary, rc = single
    assert rc == 1  # the one malformed row fails
    derived = sum(1 for r in lines if "response" in r)
    assert sum(r["tokens_source"] == "derived" for r in rows) == derived > 20
    assert len({r["instance"] for r in rows}) == 3 and len({r["tenant"] for r in rows}) == 3
    assert summary["classes"]["M5"]["requests"] > 0  # evictions inferred at 6 / 3 blocks
    assert summary["classes"]["M6"]["requests"] > 0 and summary["classes"]["M4"]["requests"] > 0
    assert summary["usage_only_requests"] == sum(1 for r in lines if "prompt_tokens" in r and "token_ids" not in r
                                                 and "response" not in r and r.get("block_size") != 0)
    assert summary["rows"]["used"] == N and summary["rows"]["failed"] == 1 and summary["rows"]["skipped"] == 1
    # arrival order, not file order: the late rows were moved
    ts = [r["arrival_ts"] for r in rows]
    assert ts == sorted(ts) and [r["request_id"] for r in rows] != [f"r{i}" for i in range(N)]


def _same(a, b):
    rows_a, sum_a, rc_a = a
    rows_b, sum_b, rc_b = b
    assert rc_a == rc_b
    assert rows_a == rows_b
    strip = lambda s: {k: v for k, v in s.items() if k != "rows"}  # noqa: E731
    assert strip(sum_a) == strip(sum_b)
    ra, rb = dict(sum_a["rows"]), dict(sum_b["rows"])
    # shards number their own lines: the failure is the same row, at its line in its shard
    assert [f["error"] for f in ra.pop("failures")] == [f["error"] for f in rb.pop("failures")]
    assert ra == rb


def test_workers_give_the_single_process_result(trace, single):
    tmp, _, path = trace
    _same(single, audit(tmp, [path], "--workers", "2"))


def test_consecutive_jsonl_shards_directory_and_glob(trace, single):
    tmp, lines, _ = trace
    d = tmp / "shards"
    d.mkdir()
    cut = [0, 40, 97, len(lines)]
    for k in range(3):
        fleet.write(d / f"part-{k}.jsonl", lines[cut[k]:cut[k + 1]])
    _same(single, audit(tmp, [d / "part-0.jsonl", d / "part-1.jsonl", d / "part-2.jsonl"]))
    _same(single, audit(tmp, [d]))
    _same(single, audit(tmp, [d / "part-*.jsonl"], "--workers", "2"))


def test_one_shard_per_instance_is_merged_by_arrival_time(trace, single):
    """Each replica writes its own log: shards are merged by arrival_ts (each re-ordered in its window)."""
    tmp, lines, _ = trace
    d = tmp / "per-instance"
    d.mkdir()
    for inst in ("i0", "i1", "i2"):
        fleet.write(d / f"{inst}.jsonl", [r for r in lines if r.get("instance", "i0") == inst])
    _same(single, audit(tmp, [d]))


def test_parquet_shards_give_the_jsonl_result(trace, single):
    pa = pytest.importorskip("pyarrow", reason="pyarrow comes with the fleet extra")
    import pyarrow.parquet as pq

    tmp, lines, _ = trace
    d = tmp / "parquet"
    d.mkdir()
    table = lambda part: pa.Table.from_struct_array(pa.array(part))  # noqa: E731  (columns: union of all rows)
    pq.write_table(table(lines[:70]), d / "a.parquet")
    pq.write_table(table(lines[70:]), d / "b.parquet", row_group_size=16)
    _same(single, audit(tmp, [d]))


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="Ray comes with the fleet extra")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ray
    ray.shutdown()


def test_local_ray_gives_the_single_process_result(trace, single, local_ray):
    tmp, _, path = trace
    _same(single, audit(tmp, [path], "--ray"))


def _blocked(tmp: Path, module: str) -> dict:
    """An environment where ``import module`` fails as if it were not installed."""
    site = tmp / f"no-{module}"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r} or name.startswith({module + '.'!r}):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _Block())\n", encoding="utf-8")
    import os

    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([str(site), root, env.get("PYTHONPATH", "")])
    return env


def test_ray_missing_exits_2_with_the_install_line(trace, tmp_path):
    _, _, path = trace
    env = _blocked(tmp_path, "ray")
    probe = subprocess.run([sys.executable, "-c", "import ray"], env=env, capture_output=True, text=True)
    assert "No module named 'ray'" in probe.stderr  # the block works
    res = subprocess.run([sys.executable, "-m", "promptlint", "audit", str(path), "--ray"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == ["promptlint: error: --ray needs Ray: pip install 'promptlint-kv[fleet]'"]


def test_parquet_without_pyarrow_exits_2_with_the_install_line(tmp_path):
    p = tmp_path / "t.parquet"
    p.write_bytes(b"PAR1")
    res = subprocess.run([sys.executable, "-m", "promptlint", "audit", str(p)],
                         env=_blocked(tmp_path, "pyarrow"), capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert "reading Parquet traces needs pyarrow: pip install 'promptlint-kv[fleet]'" in res.stderr


def test_a_plain_audit_imports_neither_ray_nor_pyarrow(trace, tmp_path):
    _, _, path = trace
    code = ("import sys; from promptlint.cli import main; main(['audit', sys.argv[1], '--output-format', 'json', "
            "'--workers', '1']); print(sorted(m for m in ('ray', 'pyarrow') if m in sys.modules), file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                         env=_blocked(tmp_path, "nothing_blocked"))
    assert res.stderr.strip().splitlines()[-1] == "[]"


def test_shard_arguments_that_name_nothing_are_usage_errors(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    res = cli("audit", tmp_path / "empty")
    assert res.code == 2 and "no trace files" in res.err
    res = cli("audit", tmp_path / "nope-*.jsonl")
    assert res.code == 2 and "matches no file" in res.err
    res = cli("audit", tmp_path / "x.jsonl", "--workers", "0")
    assert res.code == 2 and "--workers 0: must be >= 1" in res.err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_broken_tokenizer_is_one_usage_error_in_every_mode(trace, tmp_path, cli, workers):
    _, _, path = trace
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json", encoding="utf-8")
    res = cli("audit", path, "--tokenizer", bad, "--chat-template", fleet.QWEN_TEMPLATE, "--workers", workers)
    assert res.code == 2
    assert len(res.err.strip().splitlines()) == 1 and str(bad) in res.err, res.err


def test_a_bounded_index_counts_and_reports_its_loss_of_precision(tmp_path, cli):
    """--index-blocks 2, five requests of two 16-token chunks, the last repeating the first.
    By hand: r1 fills the first generation (rotation 1, nothing dropped yet), r3 the second
    (rotation 2 drops r0's and r1's 4 fingerprints); r2, r3, r4 look up after a rotation;
    r4 no longer finds r0 (S = 0 instead of 32)."""
    ids = [[100 * k + j for j in range(32)] for k in range(4)]
    rows = [{"request_id": f"r{k}", "arrival_ts": k, "instance": "a", "tenant": "t", "model_rev": "m",
             "block_size": 16, "token_ids": ids[k] + [9], "cached_tokens": 0} for k in range(4)]
    rows.append(dict(rows[0], request_id="r4", arrival_ts=4))
    trace = fleet.write(tmp_path / "t.jsonl", rows)
    exact = cli("audit", trace, "--output-format", "json")
    assert exact.json()["requests"][4]["shared_tokens"] == 33 and exact.err == ""
    res = cli("audit", trace, "--output-format", "json", "--index-blocks", "2")
    data = res.json()
    assert data["requests"][4]["shared_tokens"] == 0
    assert data["summary"]["index"] == {"horizon_fingerprints_per_model_rev": 2, "rotations": 2,
                                        "dropped_fingerprints": 4, "bounded_lookback_requests": 3}
    assert res.err.startswith("promptlint: note: index horizon: 2 fingerprints") and "3 requests" in res.err
    full = cli("audit", trace, "--index-blocks", "2")
    assert "4 fingerprints forgotten: 3 requests looked back over the horizon only" in full.out


def test_progress_and_final_line_on_a_terminal(trace):
    """stderr on a terminal (a pty): the closing line counts rows used, skipped and failed, with reasons."""
    import os
    import pty

    _, lines, path = trace
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.Popen([sys.executable, "-m", "promptlint", "audit", str(path), "--workers", "1"],
                            stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the pty closes when the process exits
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=120) == 1
    os.close(master)
    last = b"".join(chunks).decode().replace("\r\x1b[K", "\n").strip().splitlines()[-1]
    bad = next(i for i, r in enumerate(lines, 1) if r.get("block_size") == 0)
    assert last.startswith(f"promptlint: audit: {N + 2:,} rows in 0:")
    assert last.endswith(f": {N} used, 1 skipped (1 OTel span without an input token count (not an inference span)), "
                         f"1 failed (first: line {bad}: `block_size` must be a whole number >= 1, not 0; all named above)")


def test_progress_bar_counts_trace_bytes_and_requests():
    import promptlint.audit.progress as pm

    out = io.StringIO()
    p = pm.Progress(4_000_000, out)
    p.read(1_000_000)  # a quarter of the trace's bytes
    for _ in range(pm.POSTFIX_EVERY):
        p.audited()
    bar = p.bar._bar  # tqdm's own counters: the bar draws itself from them (rate, ETA)
    assert (bar.n, bar.total, bar.unit) == (1_000_000, 4_000_000, "B")
    assert bar.postfix == f"{pm.POSTFIX_EVERY:,} requests"
    assert "auditing:" in out.getvalue()


def test_the_command_default_horizon_is_the_index_default():
    import argparse

    from promptlint.audit.index import DEFAULT_INDEX_BLOCKS
    from promptlint.commands import audit as cmd

    p = argparse.ArgumentParser()
    cmd.add_parser(p.add_subparsers())
    assert p.parse_args(["audit", "t.jsonl"]).index_blocks == DEFAULT_INDEX_BLOCKS == 750_000


def test_workers_keep_kv_event_proofs_and_the_hand_computed_table(tmp_path):
    """The §7.4 synthetic trace (KV events prove an eviction, capacity infers others): --workers 2
    gives the same rows as one process, and its rows are still the hand-computed ones."""
    import audit_synth as syn

    trace, events = syn.write(tmp_path)
    runs = []
    for workers in ("1", "2"):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["audit", str(trace), "--output-format", "json", "--kv-events", str(events),
                         "--capacity-blocks", f"a={syn.C}", "--capacity-curve", "16", "--workers", workers]) == 0
        runs.append(json.loads(buf.getvalue()))
    assert runs[0] == runs[1]
    got = {r["request_id"]: (r["class"], r["shared_tokens"], r["ceiling_tokens"]) for r in runs[1]["requests"]}
    assert got == {rid: v[:3] for rid, v in syn.EXPECTED.items()}


def _prom(t_ms, q, h, life_sum, life_n, evicted):
    return "".join(f'{name}{{engine="0"}} {v} {t_ms}\n' for name, v in (
        ("vllm:prefix_cache_queries_total", q), ("vllm:prefix_cache_hits_total", h),
        ("vllm:kv_block_lifetime_seconds_sum", life_sum), ("vllm:kv_block_lifetime_seconds_count", life_n),
        ("vllm:kv_block_idle_before_evict_seconds_count", evicted)))


def test_scrape_series_intervals_flags_and_trace_figures(tmp_path):
    """Five scrapes 100 s apart (sample timestamps). By hand: hit ratios 800/1000, 700/1000, 600/1000
    (falling three intervals in a row, 20 points: decaying); evicted blocks of the first interval
    lived 500/10 = 50 s < 100 s (churn), of the second 2000/10 = 200 s (no churn); the fourth
    interval's queries went down (reset: no ratio). The trace's requests fall into the intervals
    by arrival time; the prompt_logprobs row is not a query."""
    d = tmp_path / "scrapes"
    d.mkdir()
    T = 1_700_000_000
    for k, vals in enumerate([(0, 0, 0, 0, 0), (1000, 800, 500, 10, 10), (2000, 1500, 2500, 20, 20),
                              (3000, 2100, 2500, 20, 20), (2500, 2100, 2500, 20, 20)]):
        (d / f"s{k}.prom").write_text(_prom((T + 100 * k) * 1000, *vals), encoding="utf-8")
    rows = [{"request_id": "x0", "arrival_ts": T + 10, "instance": "a", "prompt_tokens": 100, "cached_tokens": 50},
            {"request_id": "x1", "arrival_ts": T + 150, "instance": "a", "prompt_tokens": 200, "cached_tokens": 0},
            {"request_id": "x2", "arrival_ts": T + 160, "instance": "a", "prompt_tokens": 50, "cached_tokens": 0,
             "flags": {"prompt_logprobs": True}},
            {"request_id": "x3", "arrival_ts": T + 350, "instance": "a", "prompt_tokens": 10, "cached_tokens": 0}]
    trace = fleet.write(tmp_path / "t.jsonl", rows)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["audit", str(trace), "--output-format", "json", "--scrape", f"a={d}"]) == 0
    s = json.loads(buf.getvalue())["summary"]["scrape_series"]["a"]
    assert s["scrapes"] == 5 and s["time_source"] == ["sample timestamps"]
    iv = s["intervals"]
    assert [e["status"] for e in iv] == ["ok", "ok", "ok", "reset detected"]
    assert [e["local_hit_ratio"] for e in iv[:3]] == [0.8, 0.7, 0.6]
    assert [e["evictions_sampled"] for e in iv[:3]] == [10, 10, 0]
    assert iv[0]["mean_evicted_lifetime_s"] == 50.0 and iv[1]["mean_evicted_lifetime_s"] == 200.0
    assert iv[0]["trace"] == {"requests": 1, "prompt_tokens": 100, "queried_tokens": 100,
                              "queried_cached_tokens": 50, "hit_ratio": 0.5}
    assert iv[0]["residual"] == {"queries": 900, "hits": 750}
    assert iv[1]["trace"]["requests"] == 2 and iv[1]["trace"]["queried_tokens"] == 200
    assert iv[3]["trace"]["requests"] == 1 and "went down" in iv[3]["reason"]
    assert s["flags"] == [f"decaying hit ratio: 80.0% -> 60.0% over 3 intervals ending {T + 300}",
                          f"eviction churn: blocks evicted between {T} and {T + 100} lived 50.0s on average, "
                          "less than the 100s interval"]
    full = io.StringIO()
    with contextlib.redirect_stdout(full):
        main(["audit", str(trace), "--scrape", f"a={d}"])
    assert "FLAG decaying hit ratio" in full.getvalue() and "reset detected" in full.getvalue()


def test_a_scrape_series_needs_two_scrapes(tmp_path, cli):
    one = tmp_path / "one.prom"
    one.write_text(_prom(1000, 1, 1, 0, 0, 0), encoding="utf-8")
    trace = fleet.write(tmp_path / "t.jsonl", [{"request_id": "x", "prompt_tokens": 5}])
    res = cli("audit", trace, "--scrape", one)
    assert res.code == 2 and "at least two scrapes" in res.err


def test_a_trace_after_ray_is_a_trace_and_an_address_stays_an_address(tmp_path, cli):
    """`--ray` takes an optional address: `audit --ray trace.jsonl` must audit the trace on a
    local Ray, not connect to a cluster named "trace.jsonl"."""
    from promptlint.cli import build_parser
    from promptlint.commands.audit import _trace_after_ray

    trace = tmp_path / "t.jsonl"
    trace.write_text("", encoding="utf-8")
    parser = build_parser("audit")
    args = parser.parse_args(["audit", "--ray", str(trace)])
    _trace_after_ray(args)
    assert (args.trace, args.ray) == ([str(trace)], "")
    args = parser.parse_args(["audit", "--ray", "shards/*.jsonl", str(trace)])  # a glob is traces too
    _trace_after_ray(args)
    assert (args.trace, args.ray) == (["shards/*.jsonl", str(trace)], "")
    args = parser.parse_args(["audit", "--ray", "ray://head:10001", str(trace)])
    _trace_after_ray(args)
    assert (args.trace, args.ray) == ([str(trace)], "ray://head:10001")
    res = cli("audit", "--workers", "1")
    assert res.code == 2 and res.err.strip() == "promptlint: error: audit: give at least one trace (a file, '-' for stdin, a directory or a glob)"
