"""`promptlint audit`: attribute every prefix-cache miss of a request trace to a class.

Standard library only at module level; the audit modules are imported in run().
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import IO, Any, Dict, List, Optional, Tuple

HELP = "attribute the prefix-cache misses of a request trace to miss classes (worksheet + summary)"
DESCRIPTION = ("Attribute the prefix-cache misses of a request trace to miss classes (worksheet + summary). "
               "Exit status: 0 every row audited or skipped, 1 some rows failed (each named on stderr), "
               "2 usage error. See docs/audit.md.")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("audit", help=HELP, description=DESCRIPTION)
    p.add_argument("trace", nargs="*", help="trace file (JSONL; '-' for stdin): native audit rows, OpenAI-compatible "
                   "request/response pairs, LiteLLM payloads, OTel GenAI spans or hash_ids traces, or a llama.cpp server log "
                   "or /slots snapshots; or shards: several "
                   "files, a directory or a glob, JSONL or Parquet (.parquet, needs the fleet extra), merged by arrival time")
    p.add_argument("--output-format", choices=("full", "json", "csv"), default="full",
                   help="full: summary text (default); json: requests + summary; csv: the worksheet")
    p.add_argument("--worksheet", metavar="PATH", help="also write the per-request worksheet (.csv or .jsonl)")
    p.add_argument("--scrape-before", action="append", default=[], metavar="[INSTANCE=]FILE",
                   help="Prometheus /metrics scrape taken before the trace window (repeat per instance)")
    p.add_argument("--scrape-after", action="append", default=[], metavar="[INSTANCE=]FILE",
                   help="the matching scrape after the window")
    p.add_argument("--scrape", action="append", default=[], metavar="[INSTANCE=]PATH",
                   help="a time series of /metrics scrapes: a directory (files in name order) or a file, repeated "
                   "in time order; shows hit ratio and evictions per interval beside the trace's own figures")
    p.add_argument("--kv-events", metavar="FILE", help="decoded vLLM KV events (JSONL) to prove evictions (M5)")
    p.add_argument("--capacity-blocks", action="append", default=[], metavar="[INSTANCE=]N",
                   help="KV cache size in blocks (num_gpu_blocks); enables inferred M5 via stack distances")
    p.add_argument("--capacity-curve", type=int, metavar="MAX_BLOCKS",
                   help="compute hit tokens versus capacity up to MAX_BLOCKS blocks (Mattson, one pass)")
    p.add_argument("--plot", metavar="PATH.svg", help="write an SVG of the class waterfall (and capacity curve)")
    p.add_argument("--fp-key", metavar="FILE", help="fingerprint key file (default: a fresh random key per run); "
                   "needed when the trace carries block_fp/checkpoints made with that key")
    p.add_argument("--chunk-tokens", type=int, default=16, help="tokens per fingerprint chunk for token-id rows (16)")
    p.add_argument("--hash-block-tokens", type=int, default=16,
                   help="tokens per hash id in hash_ids traces (16 Alibaba/Qwen, 512 Mooncake)")
    p.add_argument("--block-size", type=int, help="block size when a row does not give one")
    p.add_argument("--engine", help="engine when a row does not say (vllm, sglang, llamacpp, openai, anthropic, gemini)")
    p.add_argument("--tenant-field", help="LiteLLM metadata key or OTel attribute holding the tenant label")
    p.add_argument("--tokenizer", help="tokenizer.json to derive token ids for rows without them")
    p.add_argument("--chat-template", help="chat template used with --tokenizer to derive token ids: a model directory, tokenizer_config.json or chat .jinja file (rendered as vLLM's OpenAI server does)")
    p.add_argument("--index-blocks", type=int, default=750_000,
                   help="fingerprints kept per model revision (horizon; memory bound: ~0.8 KB each, under 1 GB at "
                   "the default 750,000); a partner older than the horizon is not found, and the summary counts the "
                   "requests that looked back over the horizon only")
    p.add_argument("--reorder-window", type=float, default=60.0,
                   help="seconds of arrival-time disorder tolerated (logs written at completion); default 60")
    p.add_argument("--workers", type=int, metavar="N",
                   help="processes for the per-row stage (parse, derive token ids, fingerprint); default: the "
                   "machine's cores (traces of a few hundred rows stay in one process); 1 = this process only")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run the per-row stage on a Ray cluster (ray.init(ADDRESS); a local Ray when no address; "
                   "write --ray=ADDRESS or put --ray after the trace); needs the fleet extra")
    return p


def _labelled(values: List[str], what: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for v in values:
        if "=" in v and not v.split("=", 1)[0].endswith((".prom", ".txt")):
            k, path = v.split("=", 1)
        else:
            k, path = "*", v
        out[k] = path
    return out


def run(args: argparse.Namespace) -> int:
    from promptlint.audit import fingerprints, ingest
    from promptlint.audit.pipeline import Auditor
    from promptlint.audit.summary import Summary
    from promptlint.commands import UsageError

    _trace_after_ray(args)
    try:
        key = fingerprints.load_key(args.fp_key)
    except (OSError, ValueError) as e:
        reason = (e.strerror if isinstance(e, OSError) else None) or e
        raise UsageError(f"{args.fp_key}: cannot use as fingerprint key ({reason}); give a file of >= 16 random bytes")
    _check_numbers(args)
    scrapes = _scrapes(args)
    capacity = _capacity(args)
    opts = ingest.Options(key, args.chunk_tokens, args.tenant_field, args.hash_block_tokens, args.block_size,
                          _deriver(args), args.engine)
    kv = _kv_events(args, key)
    auditor = Auditor(args.index_blocks, capacity, args.capacity_curve or 0, kv)
    auditor.series = _series(args)
    summary = Summary()
    printer = _FailurePrinter(ingest.MAX_SHOWN_FAILURES)
    tally = ingest.Tally(printer)
    out = sys.stdout
    with contextlib.ExitStack() as stack:
        sheet_file = stack.enter_context(_output(args.worksheet, "worksheet")) if args.worksheet else None
        if args.plot:
            _refuse_early(args.plot, "plot")
        sinks, js = _sinks(args, out, sheet_file)
        _stream(args, opts, auditor, summary, sinks, tally)
        result = _result(args, summary, auditor, scrapes, kv)
        result["rows"] = tally.as_dict()
        _emit(args, result, out, js)
    printer.finish(tally.failed)
    return 1 if tally.failed else 0


@contextlib.contextmanager
def _output(path: str, what: str):
    """A file the audit writes (the worksheet, the plot), through promptlint.doors.safe_write: never
    through a link, and only once complete (the worksheet appears when the audit ends)."""
    from promptlint.doors import safe_write

    in_body = False  # an OSError of the audit itself (a trace unreadable) is not the file's
    try:
        with safe_write.replacing(path, newline="", cwd=os.getcwd()) as f:  # the user's own directory
            in_body = True
            yield f
            in_body = False
    except OSError as e:
        if in_body:
            raise
        raise _write_error(path, what, e) from None


def _refuse_early(path: str, what: str) -> None:
    from promptlint.doors import safe_write

    try:
        safe_write.check_target(path, cwd=os.getcwd())
    except OSError as e:
        raise _write_error(path, what, e) from None


def _write_error(path: str, what: str, e: OSError):
    from promptlint.commands import UsageError
    from promptlint.doors.safe_write import WriteRefused

    if isinstance(e, WriteRefused):
        return UsageError(f"{path}: the {what} is not written: {e}")
    return UsageError(f"{path}: cannot write the {what} ({e.strerror or e})")


class _FailurePrinter:
    """One stderr line per failed row (the first ``shown``; the summary counts them all)."""

    def __init__(self, shown: int) -> None:
        self.shown = shown
        self.n = 0

    def __call__(self, where: str, message: str) -> None:
        from promptlint.doors.line_guard import one_line

        self.n += 1
        if self.n <= self.shown:
            print(f"promptlint: error: {one_line(where)}: {one_line(message)} (row not audited)", file=sys.stderr)

    def finish(self, failed: int) -> None:
        if failed > self.shown:
            print(f"promptlint: error: {failed - self.shown} more rows failed (not shown); "
                  f"{failed} rows not audited in all", file=sys.stderr)


def _check_numbers(args: argparse.Namespace) -> None:
    """Numeric options that would otherwise divide by zero or never release a row."""
    import math

    from promptlint.audit.ingest import ENGINE_BLOCK
    from promptlint.commands import UsageError

    for flag, value in (("--chunk-tokens", args.chunk_tokens), ("--hash-block-tokens", args.hash_block_tokens),
                        ("--block-size", args.block_size), ("--index-blocks", args.index_blocks),
                        ("--capacity-curve", args.capacity_curve), ("--workers", args.workers)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} {value}: must be >= 1")
    if not math.isfinite(args.reorder_window) or args.reorder_window < 0:
        raise UsageError(f"--reorder-window {args.reorder_window}: must be a number of seconds >= 0")
    if args.engine is not None and args.engine not in ENGINE_BLOCK:
        raise UsageError(f"--engine {args.engine}: choose one of {', '.join(ENGINE_BLOCK)}")


def _scrapes(args: argparse.Namespace) -> Dict[str, Tuple[Any, Any]]:
    """INSTANCE -> (before, after) Prometheus scrapes."""
    from promptlint.audit import prom
    from promptlint.commands import UsageError

    before, after = _labelled(args.scrape_before, "before"), _labelled(args.scrape_after, "after")
    if set(before) != set(after):
        raise UsageError("--scrape-before/--scrape-after: give one 'after' scrape per 'before' scrape "
                         "(same INSTANCE= labels)")
    scrapes = {}
    for inst in before:
        try:
            scrapes[inst] = (prom.load(before[inst]), prom.load(after[inst]))
        except OSError as e:
            raise UsageError(f"{e.filename}: cannot read the scrape ({e.strerror})")
        except prom.ScrapeError as e:
            raise UsageError(str(e))
    return scrapes


def _series(args: argparse.Namespace):
    """INSTANCE -> scrapes in time order (--scrape), or None."""
    if not args.scrape:
        return None
    from promptlint.audit import prom, series
    from promptlint.commands import UsageError

    groups: Dict[str, list] = {}
    for v in args.scrape:
        inst, path = next(iter(_labelled([v], "scrape").items()))
        try:
            for f in series.files(path):
                samples, t, source = series.load(f)
                groups.setdefault(inst, []).append((f, samples, t, source))
        except OSError as e:
            raise UsageError(f"{e.filename}: cannot read the scrape ({e.strerror})")
        except prom.ScrapeError as e:
            raise UsageError(str(e))
    for inst, scrapes in groups.items():
        if len(scrapes) < 2:
            raise UsageError(f"--scrape {inst if inst != '*' else ''}: a series needs at least two scrapes "
                             "(a directory of them, or --scrape repeated)")
    return series.Series(groups)


def _capacity(args: argparse.Namespace) -> Dict[str, int]:
    from promptlint.commands import UsageError

    capacity: Dict[str, int] = {}
    for inst, n in _labelled(args.capacity_blocks, "capacity").items():
        try:
            capacity[inst] = int(n)
        except ValueError:
            raise UsageError(f"--capacity-blocks {n}: not a number of blocks")
        if capacity[inst] < 1:
            raise UsageError(f"--capacity-blocks {n}: must be >= 1 block")
    return capacity


def _deriver(args: argparse.Namespace):
    """Re-render + tokenize captured messages (--tokenizer with --chat-template), or None."""
    from promptlint.commands import UsageError

    if not (args.tokenizer or args.chat_template):
        return None
    if not (args.tokenizer and args.chat_template):
        raise UsageError("--tokenizer and --chat-template go together (both pinned) to derive token ids")
    from promptlint.audit.derive import Deriver, DeriverSetupError
    try:
        return Deriver(args.tokenizer, args.chat_template, engine=args.engine).check()
    except DeriverSetupError as e:
        raise UsageError(str(e))


def _kv_events(args: argparse.Namespace, key: bytes):
    from promptlint.audit.ingest import TraceError
    from promptlint.commands import UsageError

    if not args.kv_events:
        return None
    from promptlint.audit.kvevents import KvEvents
    try:
        return KvEvents(args.kv_events, key, args.chunk_tokens)
    except OSError as e:
        raise UsageError(f"{args.kv_events}: cannot read the KV events ({e.strerror}); check the path")
    except TraceError as e:
        raise UsageError(str(e))


def _sinks(args: argparse.Namespace, out: IO[str], sheet_file: Optional[IO[str]]) -> Tuple[List[Any], Any]:
    """Where each classified row goes (worksheet, stdout), and the JSON stream if any."""
    from promptlint.audit import report

    sinks: List[Any] = []
    if sheet_file is not None:
        sinks.append(report.Worksheet(sheet_file, "csv" if args.worksheet.endswith(".csv") else "jsonl"))
    js = None
    if args.output_format == "json":
        js = report.JsonStream(out)
        sinks.append(js)
    elif args.output_format == "csv":
        sinks.append(report.Worksheet(out, "csv"))
    return sinks, js


def _stream(args: argparse.Namespace, opts, auditor, summary, sinks: List[Any], tally) -> None:
    """Read the shards, parse their rows (in parallel when asked), classify each request in
    arrival order (shards merged by arrival time), hand every row to the sinks."""
    import heapq

    from promptlint.audit import ingest, parallel, sources
    from promptlint.audit.derive import DeriverSetupError
    from promptlint.audit.progress import Progress
    from promptlint.commands import UsageError

    try:
        shards = sources.expand(args.trace)
    except sources.SourceError as e:
        raise UsageError(str(e))
    # the closing line whenever stderr is a terminal; the bar only beside the full format (for people)
    progress = Progress.for_stderr(sum(s.size for s in shards), os.environ, bar=args.output_format == "full")
    try:
        ex = parallel.executor(opts, _workers(args), args.ray, explicit=args.workers is not None)
    except parallel.RayError as e:
        raise UsageError(str(e))
    parts = None
    try:
        window = max(2, -(-4 * ex.workers // len(shards)))  # batches in flight per shard (memory bound)

        def requests(shard):
            rows = sources.rows(shard, progress.read if progress else None)
            for n, items in parallel.parsed(rows, shard.name, ex, window):
                yield from ingest.counted(items, f"{shard.name}:{n}", n, tally)

        streams = [ingest.in_arrival_order(requests(s), args.reorder_window, s.name, tally) for s in shards]
        reqs = streams[0] if len(streams) == 1 else heapq.merge(*streams, key=_arrival)
        parts = parallel.capacity_partitions(ex, auditor.stack_limit, auditor.curve_limit)
        if parts is not None:
            from promptlint.audit.instances import annotated

            reqs = annotated(reqs, parts, ex.workers)
            auditor.partitioned = True
        for row in auditor.audit(reqs):
            tally.used += 1
            summary.add(row)
            for s in sinks:
                s.write(row)
            if progress:
                progress.audited()
        if parts is not None:
            auditor.remote_curves = parts.curves()
    except ingest.TraceError as e:
        raise UsageError(str(e))
    except (sources.SourceError, DeriverSetupError) as e:
        raise UsageError(str(e))
    except OSError as e:
        raise UsageError(f"{e.filename or ', '.join(args.trace)}: cannot read the trace ({e.strerror})")
    finally:
        if parts is not None:
            parts.close()
        ex.close()
        if progress:
            progress.finish(tally)


def _arrival(r) -> float:
    return r.arrival_ts


def _trace_after_ray(args: argparse.Namespace) -> None:
    """`audit --ray trace.jsonl`: --ray takes an optional address, so argparse hands it the trace.
    An address is never a file, '-' or a name with a trace suffix: those go back to the traces."""
    import glob
    import os

    from promptlint.audit.sources import TRACE_SUFFIXES
    from promptlint.commands import UsageError

    ray = args.ray
    if ray and (ray == "-" or os.path.exists(ray) or ray.lower().endswith(TRACE_SUFFIXES) or glob.has_magic(ray)):
        args.trace.insert(0, ray)
        args.ray = ""  # a local Ray
    if not args.trace:
        raise UsageError("audit: give at least one trace (a file, '-' for stdin, a directory or a glob)")


def _workers(args: argparse.Namespace) -> int:
    import os

    if args.workers is not None:
        return args.workers
    if args.ray is not None:
        return 0  # Ray: one actor per CPU of the cluster
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _result(args: argparse.Namespace, summary, auditor, scrapes, kv) -> Dict[str, Any]:
    """The summary record: sums, reconciliation, capacity curve, index horizon."""
    from promptlint.audit import reconcile
    from promptlint.audit.capacity import default_grid
    from promptlint.audit.summary import ratio

    result = summary.as_dict()
    if scrapes:
        result["reconciliation"] = reconcile.reconcile(scrapes, auditor.trace_sums)
    else:
        result["reconciliation"] = {"status": "not requested"}
    if auditor.series is not None:
        result["scrape_series"] = auditor.series.report()
    curve = auditor.curve()
    if curve is not None:
        result["capacity"] = {
            "model": "LRU over tenant-scoped chained blocks, one stack per instance; the head of a chain evicted last",
            "lookup_tokens": curve.lookup_tokens,
            "curve": [{"blocks": c, "hit_tokens": curve.hit_tokens(c),
                       "share_of_lookup": ratio(curve.hit_tokens(c), curve.lookup_tokens)}
                      for c in default_grid(args.capacity_curve)],
        }
    shards = auditor.index.shards.values()
    result["index"] = {"horizon_fingerprints_per_model_rev": args.index_blocks,
                       "rotations": sum(s.rotations for s in shards),
                       "dropped_fingerprints": sum(s.dropped for s in shards),
                       "bounded_lookback_requests": auditor.bounded}
    if kv is not None and kv.gaps:
        result["kv_events_gaps"] = kv.gaps
    return result


def _horizon(ix: Dict[str, Any]) -> str:
    """The index horizon and, when generations were dropped, the precision it cost."""
    text = f"index horizon: {ix['horizon_fingerprints_per_model_rev']} fingerprints per model revision"
    if ix["rotations"]:
        text += (f" ({ix['rotations']} generation(s) dropped, {ix['dropped_fingerprints']} fingerprints forgotten: "
                 f"{ix['bounded_lookback_requests']} requests looked back over the horizon only, so a partner older "
                 "than it was not seen: their shared prefixes and ceilings are lower bounds; raise --index-blocks)")
    return text


def _emit(args: argparse.Namespace, result: Dict[str, Any], out: IO[str], js) -> None:
    from promptlint.audit import report

    if result["index"]["rotations"] and args.output_format != "full":
        print(f"promptlint: note: {_horizon(result['index'])}", file=sys.stderr)  # never a silent loss
    if js is not None:
        js.close(result)
    elif args.output_format == "full":
        report.full(result, out, _horizon(result["index"]))
    if args.plot:
        from promptlint.audit.plot import svg

        with _output(args.plot, "plot") as pf:
            pf.write(svg(result))
