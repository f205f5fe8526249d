"""`promptlint conversation FILE…`: captured requests, conversation by conversation — where a
request stops extending the one before it, which field broke it, and what that costs.

Captures are JSON Lines of request bodies, HAR 1.2 files or OTLP JSON traces
(``promptlint/conversation/readers.py``; docs/conversations.md). Standard library only at
module level.
"""

from __future__ import annotations

import argparse
import os
import sys

HELP = "check captured conversations: the first request that stops extending the previous one, the field that broke it, the cost"
PROVIDERS = ("auto", "openai", "anthropic", "gemini", "bedrock", "vllm", "sglang", "llamacpp")


def add_parser(subparsers) -> argparse.ArgumentParser:
    from promptlint.report import FORMATS

    p = subparsers.add_parser("conversation", help=HELP, description=HELP[:1].upper() + HELP[1:] + ".")
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines of request bodies, a HAR 1.2 file or an OTLP JSON trace")
    p.add_argument("--tokenizer", metavar="PATH", help="the model's tokenizer.json (or model directory); "
                   "default: the embedded cl100k_base, figures approximate")
    p.add_argument("--tokenizer-sha256", metavar="HEX", help="expected sha256 of the tokenizer file (pin)")
    p.add_argument("--chat-template", metavar="PATH", help="chat template for Chat Completions bodies (default: "
                   "--tokenizer when it is a model directory; else an approximate ChatML framing)")
    p.add_argument("--provider", choices=PROVIDERS, default="auto",
                   help="whose reuse rule applies (default auto: from the endpoint or the body's shape)")
    p.add_argument("--block-size", type=int, metavar="N", help="block size of a self-hosted --provider")
    p.add_argument("--cache-minimums", metavar="FILE", help="JSON file merged over the dated table of cache minimums")
    p.add_argument("--price-table", metavar="FILE", help="JSON file merged over the dated price table")
    p.add_argument("--provider-rules", metavar="FILE", help="JSON file merged over the dated provider rules")
    p.add_argument("--table-max-age", type=int, default=365, metavar="DAYS",
                   help="a dated table older than this is reported as a note (default 365)")
    p.add_argument("--output-format", choices=tuple(FORMATS), default="full", help="output format (default full)")
    p.add_argument("--jobs", type=int, metavar="N", help="worker processes for large captures (default: "
                   "PROMPTLINT_JOBS, else one per CPU, at most 8)")
    return p


def run(args) -> int:
    from promptlint.commands import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
    from promptlint.operators.captured import InputError, Settings
    from promptlint.conversation import readers

    if args.block_size is not None and args.block_size < 1:
        raise UsageError(f"--block-size {args.block_size}: must be a positive number of tokens")
    tables = _tables(args)
    from promptlint.driver import parallel

    try:
        jobs = parallel.jobs_wanted(args.jobs, os.environ)
    except ValueError as e:
        raise UsageError(str(e)) from None
    settings = Settings(tokenizer=args.tokenizer, tokenizer_sha256=args.tokenizer_sha256, chat_template=args.chat_template,
                        quiet=True)
    try:
        tok = settings.load_tokenizer()
    except InputError as e:
        raise UsageError(str(e)) from None
    requests = []
    for path in args.files:
        try:
            capture = readers.read(path)
        except readers.ReadError as e:
            raise UsageError(str(e)) from None
        for line in capture.bad:
            print(f"promptlint: {line}", file=sys.stderr)
        if capture.bad:
            print(f"promptlint: {path}: {len(capture.bad)} record{'s' if len(capture.bad) != 1 else ''} skipped, "
                  f"{len(capture.requests)} analysed", file=sys.stderr)
        requests += capture.requests
    if not requests:
        print("promptlint: error: no request bodies in " + ", ".join(args.files) + "; pass a capture of LLM requests "
              "(JSON Lines of bodies, HAR or OTLP JSON; docs/conversations.md)", file=sys.stderr)
        return EXIT_ERROR
    import gc

    # the capture, read with the collector paused, lives to the end: collections during the
    # analysis leave it alone instead of traversing it (~20% of a 1,000-request analysis)
    gc.freeze()
    try:
        result, summary = analyse_requests(requests, settings, tok, tables, args.provider, args.block_size, args.files, jobs)
    finally:
        gc.unfreeze()
    used = {t["provider"] for t in summary} | {"anthropic" for t in summary if t["provider"] == "bedrock"}
    stale = {k: v for k, v in tables["stale"].items() if k.split(" ")[0] in used}
    _write(result, summary, args.output_format, tok.spec.embedded, stale)
    return EXIT_FINDINGS if result.findings else EXIT_OK


def _tables(args) -> dict:
    from datetime import datetime, timezone
    from pathlib import Path

    from promptlint.arithmetic import compare, cost
    from promptlint.base import dated_tables
    from promptlint.commands import UsageError

    try:
        minimums = compare.load_cache_minimums(args.cache_minimums)
        prices = cost.load_prices(args.price_table)
        rules = dated_tables.merged(Path(cost.__file__).parent.parent / "data" / "provider-rules.json", args.provider_rules,
                                    "the provider rules", compare.CacheTableError, _rule_models)
    except (compare.CacheTableError, cost.CostConfigError) as e:
        raise UsageError(str(e)) from None
    today = datetime.now(timezone.utc).date().isoformat()
    stale = {}
    for name, table in (("cache-minimums", minimums), ("prices", prices), ("rules", rules)):
        for provider, as_of in dated_tables.stale(table, today, args.table_max_age).items():
            stale[f"{provider} {name}"] = as_of
    return {"minimums": minimums, "prices": prices, "rules": rules, "stale": stale}


def _rule_models(path, provider, block):
    from promptlint.arithmetic.compare import CacheTableError

    if not isinstance(block, dict):
        raise CacheTableError(f"{path}: each provider's rules must be a JSON object")
    return {}


PARALLEL_REQUESTS = 2000  # fewer requests than this: one process (forking costs more than it wins)


def analyse_requests(requests, settings, tok, tables, provider="auto", block_size=None, files=(), jobs=None):
    """Group, analyse and total: (a LintResult for the reporters, the per-conversation totals).
    Conversations are independent: a large capture is analysed in ``jobs`` forked workers
    (``promptlint.driver.parallel``), the results put back in the order of the conversations."""
    from promptlint.driver import parallel
    from promptlint.conversation import analysis, grouping, report
    from promptlint.driver.lint import LintResult

    groups = grouping.group(requests)

    def unit(chunk):
        out = []
        opening = None  # the previous conversation's first request: the next one's is encoded against it
        for i in chunk:
            conv = analysis.analyse(groups[i][0], groups[i][1], settings, tok, tables, provider, block_size, opening)
            opening = conv.opening or opening
            out.append((i, conv.findings, report.totals(conv, tables["prices"], tables["rules"]), conv.errors))
        return out

    workers = parallel.workers_for(len(groups), len(groups), jobs) if len(requests) >= PARALLEL_REQUESTS else 0
    if workers:
        import gc

        units = parallel.chunks(list(range(len(groups))), workers)
        # each worker encodes about its share of the conversations' final prompts: past the engine's
        # switch volume the tokenizer's model is built once here and shared, not once per worker
        tok.expect(sum(_messages(reqs[-1].body) for _, reqs in groups) * 64 // workers)  # 64 characters a message, at least
        gc.freeze()  # the capture is left out of the workers' collections: its pages stay shared, untouched
        try:
            done = sorted(r for _, rows in parallel.run(units, unit, workers) for r in rows)
        finally:
            gc.unfreeze()
    else:
        done = unit(range(len(groups)))
    findings, summary = [], []
    for _, found, totals, errors in done:
        for line in errors:
            print(f"promptlint: {line}", file=sys.stderr)
        findings += found
        summary.append(totals)
    findings.sort(key=lambda f: f.sort_key)
    result = LintResult(findings=findings, files=len(set(files)) or 1, tokenizer=tok.spec, tokenizer_sha256=tok.sha256,
                        engine=summary[0]["provider"] if summary else "openai", block_size=1)
    return result, summary


def _messages(body: dict) -> int:
    """How many messages a body holds (any provider's key)."""
    return max((len(v) for k in ("messages", "contents", "input") if isinstance(v := body.get(k), list)), default=0)


def _write(result, summary, fmt: str, approximate: bool, stale: dict) -> None:
    import json

    from promptlint import report as reporters
    from promptlint.conversation import report

    if fmt == "json":
        from promptlint import __version__

        doc = result.to_dict(__version__)
        doc["conversations"] = summary
        doc["approximate"] = approximate
        doc["stale_tables"] = stale
        json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return
    from promptlint.commands.report_context import from_process

    reporters.get(fmt).write(result, from_process(sys.stdout), sys.stdout)
    if fmt in ("full", "concise"):
        sys.stdout.write(report.format_text(summary, approximate, stale))
