"""Output: the worksheet (CSV or JSONL, streamed), ``json`` (streamed contract) and ``full``."""

from __future__ import annotations

import csv
import json
from typing import IO, Any, Dict

from promptlint.audit.classify import CLASS_MEANING, LOST_KEYS
from promptlint.audit.summary import NA

WORKSHEET_COLUMNS = [
    "request_id", "arrival_ts", "instance", "tenant", "model_rev", "tokenizer_rev", "template_rev", "engine",
    "tokens_source", "prompt_tokens", "block_size", "cached_tokens", "shared_tmpl_tokens", "shared_tokens",
    "partner", "shared_tenant_tokens", "shared_inst_tokens", "ceiling_tokens", "ceiling_all_tokens",
    "ceiling_tenant_tokens", "ceiling_inst_tokens", "gap_tokens", "over_ceiling_tokens", "class",
] + [f"lost_{k}" for k in LOST_KEYS] + ["counted_observed_tokens", "shared_interval", "ceiling_interval",
                                         "stack_m", "ttft_s", "evidence"]

JSON_REQUEST_KEYS = ("request_id", "class", "prompt_tokens", "shared_tokens", "ceiling_tokens", "cached_tokens",
                     "lost", "evidence", "ceiling_inst_tokens", "instance", "tenant", "tokens_source")


def flat(row: Dict[str, Any]) -> Dict[str, Any]:
    out = {k: row.get(k) for k in WORKSHEET_COLUMNS}
    for k in LOST_KEYS:
        out[f"lost_{k}"] = row["lost"].get(k, 0) if row.get("ceiling_tokens") is not None else None
    for k in ("shared_interval", "ceiling_interval"):
        if row.get(k) is not None:
            out[k] = "%d..%d" % tuple(row[k])
    out["evidence"] = "; ".join(row.get("evidence") or [])
    return out


class Worksheet:
    def __init__(self, f: IO[str], fmt: str) -> None:
        self.f, self.fmt = f, fmt
        self.w = None
        if fmt == "csv":
            self.w = csv.DictWriter(f, fieldnames=WORKSHEET_COLUMNS, lineterminator="\n")
            self.w.writeheader()

    def write(self, row: Dict[str, Any]) -> None:
        if self.w is not None:
            self.w.writerow({k: ("" if v is None else v) for k, v in flat(row).items()})
        else:
            self.f.write(json.dumps(worksheet_json(row)) + "\n")


def worksheet_json(row: Dict[str, Any]) -> Dict[str, Any]:
    out = {k: row.get(k) for k in WORKSHEET_COLUMNS if k not in ("evidence",) and not k.startswith("lost_")}
    out["lost"] = row["lost"]
    out["evidence"] = row.get("evidence") or []
    return out


class JsonStream:
    """``{"requests": [...], "summary": {...}}`` written as the rows come (bounded memory)."""

    def __init__(self, f: IO[str]) -> None:
        self.f = f
        self.n = 0
        f.write('{"requests": [')

    def write(self, row: Dict[str, Any]) -> None:
        rec = {k: row.get(k) for k in JSON_REQUEST_KEYS}
        self.f.write(("\n  " if self.n == 0 else ",\n  ") + json.dumps(rec))
        self.n += 1

    def close(self, summary: Dict[str, Any]) -> None:
        self.f.write("\n], \"summary\": " + json.dumps(summary, indent=1) + "}\n")


def _pct(x: Any) -> str:
    return NA if x == NA else f"{100 * x:.1f}%"


def _rows(rows: Any, w) -> None:
    """How many trace rows were read, audited, skipped (why) and failed."""
    if not rows:
        return
    w(f"  rows read {rows['read']}: {rows['used']} audited, {rows['skipped']} skipped, {rows['failed']} failed"
      + (" (named on stderr; not audited)" if rows["failed"] else "") + "\n")
    for reason, n in rows["skipped_reasons"].items():
        w(f"    skipped {n}: {reason}\n")


def _series(series: Any, w) -> None:
    """Per interval of a scrape series: engine hit ratio beside the trace's, evictions, flags."""
    for inst, d in (series or {}).items():
        label = "all instances" if inst == "*" else inst
        w(f"\nscrape series, {label} ({d['scrapes']} scrapes; times from {', '.join(d['time_source'])}):\n")
        for e in d["intervals"]:
            head = f"  {e['start']:.0f}..{e['end']:.0f}  "
            if e["status"] != "ok":
                w(head + f"{e['status']}: {e['reason']} -- no ratio\n")
                continue
            parts = [f"engine {_pct(e.get('local_hit_ratio', NA))}", f"trace {_pct(e['trace']['hit_ratio'])} "
                     f"({e['trace']['requests']} requests)"]
            if "evictions_sampled" in e:
                parts.append(f"evictions (sampled) {e['evictions_sampled']}")
            if "preemptions" in e:
                parts.append(f"preemptions {e['preemptions']}")
            w(head + "; ".join(parts) + "\n")
        for flag in d["flags"]:
            w(f"  FLAG {flag}\n")


def full(summary: Dict[str, Any], f: IO[str], horizon: str = "") -> None:
    s = summary
    w = f.write
    w(f"audited {s['requests']} requests, {s['prompt_tokens']} prompt tokens"
      + (f" ({s['usage_only_requests']} usage-only, no token identity)" if s["usage_only_requests"] else "") + "\n")
    _rows(s.get("rows"), w)
    w(f"  observed cached   {s['cached_tokens']:>12}  {_pct(s['observed_ratio']):>7} of prompt tokens\n")
    w(f"  ceiling (E_tmpl)  {s['ceiling_tokens']:>12}  {_pct(s['ceiling_ratio']):>7}   best possible against any earlier request\n")
    w(f"  ceiling (E_inst)  {s['ceiling_inst_tokens']:>12}  {_pct(s['ceiling_inst_ratio']):>7}   what each replica could have served\n")
    w(f"  realised share    {_pct(s['realised_share']):>20}   observed / E_inst\n")
    if s.get("over_ceiling_tokens"):
        w(f"  over ceiling      {s['over_ceiling_tokens']:>12}  tokens served above E_inst (connector, host tier, older cache)\n")
    w("\nclass     requests        tokens    share   meaning\n")
    for c, d in s["classes"].items():
        w(f"  {c:<10}{d['requests']:>6}  {d['tokens']:>12}  {_pct(d['share']):>7}   {CLASS_MEANING.get(c, '')}\n")
    w("  (share = of all prompt tokens; HIT tokens = cached tokens of HIT requests; M0 tokens = prompt\n"
      "   tokens of cold requests; other rows = tokens lost to that class across all requests)\n")
    legend = False
    for key in ("instance", "tenant", "model_rev"):
        groups = s["by"].get(key, {})
        if len(groups) <= 1:
            continue
        if not legend:
            w("\nper group: cached = observed cached / prompt tokens; E_inst, E_tmpl = the ceilings above / prompt tokens\n")
            legend = True
        w(f"\nby {key}:\n")
        for label, t in groups.items():
            w(f"  {label:<20} requests {t['requests']:>7}  cached {_pct(t['observed_ratio']):>7}  "
              f"E_inst {_pct(t['ceiling_inst_ratio']):>7}  E_tmpl {_pct(t['ceiling_ratio']):>7}\n")
    rec = s.get("reconciliation")
    if rec and rec.get("status") != "not requested":
        w("\nengine counters (two scrapes, exact deltas):\n")
        for inst, e in rec.get("instances", {}).items():
            label = "all instances" if inst == "*" else inst
            if e["status"] != "ok":
                w(f"  {label}: {e['status']}: {e['reason']} -- no ratio\n")
                continue
            parts = []
            if "queries" in e:
                parts.append(f"local {e.get('hits', 0)}/{e['queries']} = {_pct(e['local_hit_ratio'])}")
            if "external_queries" in e:
                parts.append(f"external {e.get('external_hits', 0)}/{e['external_queries']} = {_pct(e['external_hit_ratio'])}")
            if "prompt_tokens" in e:
                parts.append(f"cached/prompt {e.get('prompt_tokens_cached', 0)}/{e['prompt_tokens']} = {_pct(e['cached_prompt_ratio'])}")
            w(f"  {label}: " + "; ".join(parts) + "\n")
            if e.get("cached_by_source"):
                w("    by source: " + ", ".join(f"{k} {v}" for k, v in sorted(e["cached_by_source"].items())) + "\n")
            res = e.get("residual") or {}
            if res:
                w("    counter - trace: " + ", ".join(f"{k} {v:+d}" for k, v in res.items()) + "\n")
        p = rec.get("pooled")
        if p and len(rec.get("instances", {})) > 1 and "queries" in p:
            w(f"  pooled: local {p.get('hits', 0)}/{p['queries']} = {_pct(p['local_hit_ratio'])}"
              + (f" (excluded: {', '.join(p['excluded'])})" if p.get("excluded") else "") + "\n")
    _series(s.get("scrape_series"), w)
    cap = s.get("capacity")
    if cap:
        w("\nhit tokens vs KV capacity (LRU model, per-instance stacks summed):\n")
        for pt in cap["curve"]:
            w(f"  {pt['blocks']:>9} blocks  {pt['hit_tokens']:>12} tokens  {_pct(pt['share_of_lookup'])} of look-up tokens\n")
    if horizon:
        w(f"\n{horizon}\n")
