"""Read a trace line by line into AuditRequest records.

Formats (detected per line): the native audit JSONL; captured OpenAI-compatible
request/response pairs (OpenAI, vLLM, SGLang, llama.cpp, Anthropic, Gemini); LiteLLM
StandardLoggingPayload; OpenTelemetry GenAI spans (OTLP-JSON); Mooncake/Alibaba block-hash
traces (``hash_ids``). Prompt text, messages, template inputs and salts are turned into
fingerprints or digests here and dropped: nothing downstream ever sees them.
"""

from __future__ import annotations

import heapq
import math
import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from promptlint.base import jsonl
from promptlint.audit import fingerprints as fpm
from promptlint.audit import usage as usage_mod
from promptlint.audit.fields import (
    RowError, arr, count, fingerprint, fingerprints, flag_values, kind, label, number, obj, objects, opt_count, text, token_ids,
)
from promptlint.audit.records import AuditRequest

ENGINE_BLOCK = {"vllm": 16, "sglang": 1, "llamacpp": 1, "openai": 128, "anthropic": 1, "gemini": 1}
FLAG_KEYS = ("prompt_logprobs", "caching_disabled", "preempted")
MAX_SHOWN_FAILURES = 20  # failed rows listed in the summary and on stderr (all are counted)


class TraceError(ValueError):
    """A malformed trace: ``file:line: what is wrong; what to do``."""


class Skip:
    """A row that is read but is not a request (the reason is counted)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Tally:
    """Every row read is counted once: used (audited), skipped (with the reason) or failed.
    A row is one trace line, or one span of an OTLP export line. The reader counts skips and
    failures; whoever audits the requests counts ``used``."""

    def __init__(self, on_failure: Optional[Callable[[str, str], None]] = None) -> None:
        self.used = 0
        self.skipped: Dict[str, int] = {}
        self.failed = 0
        self.failures: List[Dict[str, Any]] = []  # the first MAX_SHOWN_FAILURES
        self.on_failure = on_failure

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def fail(self, where: str, line: int, message: str) -> None:
        self.failed += 1
        if len(self.failures) < MAX_SHOWN_FAILURES:
            self.failures.append({"line": line, "error": message})
        if self.on_failure is not None:
            self.on_failure(where, message)

    def as_dict(self) -> Dict[str, Any]:
        skipped = sum(self.skipped.values())
        return {"read": self.used + skipped + self.failed, "used": self.used, "skipped": skipped,
                "skipped_reasons": dict(sorted(self.skipped.items())), "failed": self.failed,
                "failures": self.failures}


class Options:
    def __init__(self, key: bytes, chunk: int = fpm.DEFAULT_CHUNK, tenant_field: Optional[str] = None,
                 hash_block_tokens: int = 16, block_size: Optional[int] = None,
                 deriver: Optional[Callable[[Dict[str, Any]], List[int]]] = None,
                 engine: Optional[str] = None) -> None:
        self.key = key
        self.chunk = chunk
        self.tenant_field = tenant_field
        self.hash_block_tokens = hash_block_tokens
        self.block_size = block_size
        self.deriver = deriver  # re-render + tokenize captured inputs (rows marked "derived"); raises DeriveError
        self.engine = engine


def _req_int(obj: Dict[str, Any], k: str, default: Optional[int] = None) -> int:
    """A required count (``default`` when absent); the error names the field."""
    v = obj.get(k, default)
    if v is None:
        raise RowError(f"`{k}` must be a whole number >= 0; fix the trace row")
    return count(v, k)


def _engine(v: Any, name: str) -> str:
    e = text(v, name)
    if e not in ENGINE_BLOCK:
        raise RowError(f"`{name}` {e[:20]!r} is not an engine promptlint knows; use one of {', '.join(ENGINE_BLOCK)}")
    return e


def _cached(O: Optional[int], P: int) -> Optional[int]:
    if O is not None and O > P:
        raise RowError(f"cached tokens {O} exceed the prompt's {P} tokens; fix the usage fields")
    return O


def _template(row: Dict[str, Any], opts: Options) -> Tuple[Optional[str], Optional[str]]:
    ti = row.get("template_inputs")
    if ti is not None:
        d = fpm.template_digests(ti, opts.key)
        return d["raw"], d["canonical"]
    raw, canon = row.get("template_inputs_digest"), row.get("template_inputs_canonical_digest")
    return (None if raw is None else text(raw, "template_inputs_digest"),
            None if canon is None else text(canon, "template_inputs_canonical_digest"))


def _identity(r: AuditRequest, ids: Optional[Sequence[int]], opts: Options, source: str) -> None:
    r.chunk = math.gcd(opts.chunk, r.block_size or opts.chunk)  # g must divide B for exact ceilings
    r.fps = fpm.chain_hex(ids, r.chunk, opts.key)
    r.ids = list(ids)
    r.source = source


def native(row: Dict[str, Any], where: str, opts: Options) -> AuditRequest:
    if "request_id" not in row:
        raise RowError("missing `request_id`; every row needs one")
    engine = _engine(row["engine"], "engine") if row.get("engine") else (opts.engine or "vllm")
    bs = row.get("block_size")
    B = count(bs, "block_size", 1) if bs is not None else (opts.block_size or ENGINE_BLOCK.get(engine, 16))
    r = AuditRequest(
        request_id=label(row["request_id"], "request_id"),
        arrival_ts=number(row.get("arrival_ts"), "arrival_ts", 0.0),
        instance=label(row.get("instance"), "instance"), tenant=label(row.get("tenant"), "tenant"),
        model_rev=label(row.get("model_rev"), "model_rev"), tokenizer_rev=label(row.get("tokenizer_rev"), "tokenizer_rev"),
        template_rev=label(row.get("template_rev"), "template_rev"), engine=engine, block_size=B,
        flags=flag_values(row.get("flags"), "flags", FLAG_KEYS),
        ttft_s=number(row.get("ttft_s"), "ttft_s", minimum=0),
    )
    r.cached_tokens = opt_count(row.get("cached_tokens"), "cached_tokens")
    r.tmpl_raw, r.tmpl_canon = _template(row, opts)
    if row.get("token_ids") is not None:
        ids = token_ids(row["token_ids"], "token_ids")
        _identity(r, ids, opts, "exact")
        r.prompt_tokens = _req_int(row, "prompt_tokens", len(ids))
        if len(ids) != r.prompt_tokens:
            r.flags["ids_truncated"] = len(ids) < r.prompt_tokens
    elif row.get("block_fp") is not None:
        r.chunk = count(row.get("fp_tokens", fpm.DEFAULT_CHUNK), "fp_tokens", 1)
        r.fps = fingerprints(row["block_fp"], "block_fp")
        r.source = "block_fp"
        r.prompt_tokens = _req_int(row, "prompt_tokens")
        if len(r.fps) > r.prompt_tokens // r.chunk:
            raise RowError(f"{len(r.fps)} fingerprints of {r.chunk} tokens exceed prompt_tokens "
                           f"{r.prompt_tokens}; fingerprint full chunks only")
    elif row.get("checkpoints") is not None:
        r.prompt_tokens = _req_int(row, "prompt_tokens")
        r.checkpoints = _checkpoints(row["checkpoints"], r.prompt_tokens)
        r.chunk = fpm.DEFAULT_CHUNK
        r.source = "checkpoint"
    else:
        r.source = "usage"
        r.prompt_tokens = _req_int(row, "prompt_tokens")
    r.cached_tokens = _cached(r.cached_tokens, r.prompt_tokens)
    return r


def _checkpoints(cp: Any, P: int) -> Dict[int, str]:
    """``{"16": fp, "64": fp}`` or ``[{"tokens": 16, "fp": fp}, ...]`` -> {16: fp, ...}."""
    if isinstance(cp, list):
        pairs = [(c.get("tokens"), c.get("fp")) for c in objects(cp, "checkpoints")]
    elif isinstance(cp, dict):
        pairs = list(cp.items())
    else:
        raise RowError(f"`checkpoints` must be an object {{\"16\": fp, ...}} or a list, not {kind(cp)}")
    out: Dict[int, str] = {}
    for k, v in pairs:
        n = count(k, "checkpoints key", 1, strings=True)
        if n not in fpm.CHECKPOINT_TOKENS:
            raise RowError(f"checkpoint at {n} tokens: checkpoints are taken at "
                           f"{', '.join(map(str, fpm.CHECKPOINT_TOKENS))} tokens")
        if n > P:
            raise RowError(f"checkpoint at {n} tokens is beyond prompt_tokens {P}")
        out[n] = fingerprint(v, f"checkpoints[{n}]")
    return out


def hash_ids_row(row: Dict[str, Any], where: str, opts: Options, n: int) -> AuditRequest:
    """Mooncake/Alibaba: timestamp (ms), input_length, hash_ids (one per chunk, unchained)."""
    g = opts.hash_block_tokens
    P = _req_int(row, "input_length")
    ids = arr(row["hash_ids"], "hash_ids")
    for i, x in enumerate(ids):
        if not (isinstance(x, int) and not isinstance(x, bool)) and not isinstance(x, str):
            raise RowError(f"`hash_ids[{i}]` must be an integer (or string) block id, not {kind(x)}")
    # only full chunks are block identities; a last partial chunk is dropped
    full = ids[: P // g]
    return AuditRequest(
        request_id=label(row.get("chat_id", row.get("request_id", f"line{n}")), "chat_id"),
        arrival_ts=number(row.get("timestamp"), "timestamp", 0.0) / 1000.0, instance="-", tenant="-", model_rev="-",
        tokenizer_rev="-", template_rev="-", engine=opts.engine or "vllm",
        block_size=opts.block_size or g, prompt_tokens=P, cached_tokens=None, source="hash_ids",
        chunk=g, fps=fpm.chain_ids_hex(full, opts.key),
    )


_OTEL_TYPES = ("intValue", "doubleValue", "stringValue", "boolValue")
_INT64 = re.compile(r"-?[0-9]{1,19}")
_SPAN_ID = re.compile(r"[0-9a-fA-F]{1,32}")


def _otel_attrs(attrs: Any, name: str) -> Dict[str, Any]:
    """OTLP-JSON ``[{"key", "value": {"intValue": ...}}]`` (or a plain object) -> {key: value}."""
    if attrs is None or isinstance(attrs, dict):
        return attrs or {}
    out: Dict[str, Any] = {}
    for i, a in enumerate(objects(attrs, name)):
        k = a.get("key")
        if not isinstance(k, str):
            raise RowError(f"`{name}[{i}].key` must be a string, not {kind(k)}")
        v = obj(a.get("value"), f"{name}[{i}].value")
        for t in _OTEL_TYPES:
            if t in v:
                out[k] = _otel_int(v[t], k) if t == "intValue" else v[t]
    return out


def _otel_int(v: Any, key: str) -> int:
    """An AnyValue ``intValue``: int64, written as a decimal string in OTLP-JSON."""
    if isinstance(v, str) and _INT64.fullmatch(v.strip()):
        return int(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise RowError(f"`{key}` intValue must be an integer, not {kind(v)}")


_CACHE_READ = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
               "gen_ai.usage.input_tokens.cached", "llm.token_count.prompt_details.cache_input")
_INPUT = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
NO_INPUT_TOKENS = "OTel span without an input token count (not an inference span)"
NO_SPANS = "OTLP export line without spans"


def otel_spans(row: Dict[str, Any], where: str, opts: Options) -> Iterator[Union[AuditRequest, Skip, RowError]]:
    """OTLP-JSON export (resourceSpans/scopeSpans/spans) or one bare span per line. Each span
    is a row of its own: a request, a :class:`Skip`, or the :class:`RowError` that failed it."""
    if "resourceSpans" not in row:
        yield _span_or_error(row, {}, where, opts)
        return
    n = 0
    for n, item in enumerate(_export_spans(row, where, opts), 1):
        yield item
    if not n:
        yield Skip(NO_SPANS)


def _export_spans(row: Dict[str, Any], where: str, opts: Options) -> Iterator[Union[AuditRequest, Skip, RowError]]:
    for i, rs in enumerate(objects(row["resourceSpans"], "resourceSpans")):
        try:
            res = _otel_attrs(obj(rs.get("resource"), "resource").get("attributes"), "resource.attributes")
            scopes = objects(rs.get("scopeSpans"), f"resourceSpans[{i}].scopeSpans")
        except RowError as e:
            yield e
            continue
        for j, ss in enumerate(scopes):
            try:
                spans = objects(ss.get("spans"), f"resourceSpans[{i}].scopeSpans[{j}].spans")
            except RowError as e:
                yield e
                continue
            for sp in spans:
                yield _span_or_error(sp, res, where, opts)


def _span_or_error(sp: Dict[str, Any], res: Dict[str, Any], where: str, opts: Options) -> Union[AuditRequest, Skip, RowError]:
    try:
        return _otel_span(sp, res, where, opts)
    except RowError as e:
        span_id = sp.get("spanId")
        return RowError(f"span {span_id}: {e}") if isinstance(span_id, str) and _SPAN_ID.fullmatch(span_id) else e


def _otel_span(sp: Dict[str, Any], res: Dict[str, Any], where: str, opts: Options) -> Union[AuditRequest, Skip]:
    a = dict(res)
    a.update(_otel_attrs(sp.get("attributes"), "attributes"))
    key = next((k for k in _INPUT if k in a), None)
    if key is None:
        return Skip(NO_INPUT_TOKENS)
    P = count(a[key], key)
    ckey = next((k for k in _CACHE_READ if k in a), None)
    O = None if ckey is None else opt_count(a[ckey], ckey)
    provider = text(a.get("gen_ai.provider.name") or a.get("gen_ai.system") or "openai", "gen_ai.provider.name")
    engine = provider if provider in ENGINE_BLOCK else (opts.engine or "openai")
    # The GenAI conventions say input_tokens SHOULD include cached tokens; an Anthropic
    # instrumentation that copies the provider's additive usage breaks that, so add them back.
    if engine == "anthropic" and a.get("gen_ai.usage.input_tokens.inclusive") is False:
        P = P + (O or 0) + (opt_count(a.get("gen_ai.usage.cache_creation.input_tokens"),
                                      "gen_ai.usage.cache_creation.input_tokens") or 0)
    start = count(sp.get("startTimeUnixNano", 0), "startTimeUnixNano", strings=True) / 1e9
    host = label(a.get("server.address"), "server.address")
    port = a.get("server.port")
    inst = f"{host}:{label(port, 'server.port')}" if host != "-" and port else host
    tenant = label(a.get(opts.tenant_field), opts.tenant_field) if opts.tenant_field else "-"
    rid = a.get("gen_ai.response.id") or sp.get("spanId")
    return AuditRequest(
        request_id=label(rid, "gen_ai.response.id") if rid else where, arrival_ts=start,
        instance=inst, tenant=tenant,
        model_rev=label(a.get("gen_ai.response.model") or a.get("gen_ai.request.model"), "gen_ai.response.model"),
        tokenizer_rev="-", template_rev="-", engine=engine, block_size=opts.block_size or ENGINE_BLOCK.get(engine, 1),
        prompt_tokens=P, cached_tokens=_cached(O, P), source="usage",
        ttft_s=number(a.get("gen_ai.response.time_to_first_chunk"), "gen_ai.response.time_to_first_chunk", minimum=0),
    )


def litellm(row: Dict[str, Any], where: str, opts: Options) -> AuditRequest:
    """LiteLLM StandardLoggingPayload. ``cache_hit``/``cache_key`` are LiteLLM's own
    response cache, not the engine's prefix cache: ignored."""
    md = obj(row.get("metadata"), "metadata")
    hp = obj(row.get("hidden_params"), "hidden_params")
    uo = obj(md.get("usage_object"), "metadata.usage_object") or obj(hp.get("usage_object"), "hidden_params.usage_object")
    O = opt_count(usage_mod._get(uo, "prompt_tokens_details", "cached_tokens"),
                  "usage_object.prompt_tokens_details.cached_tokens", strings=True)
    start = number(row.get("startTime"), "startTime")
    first = number(row.get("completionStartTime"), "completionStartTime")
    tenant = None
    if opts.tenant_field:
        tenant = md.get(opts.tenant_field, row.get(opts.tenant_field))
    P = _req_int(row, "prompt_tokens")
    r = AuditRequest(
        request_id=label(row.get("id") or row.get("litellm_call_id") or where, "id"), arrival_ts=start or 0.0,
        instance=label(row.get("api_base") or row.get("model_id"), "api_base"),
        tenant=label(tenant, opts.tenant_field or "tenant"),
        model_rev=label(row.get("model"), "model"), tokenizer_rev="-", template_rev="-",
        engine=opts.engine or "openai", prompt_tokens=P, cached_tokens=_cached(O, P), source="usage",
        ttft_s=(first - start) if first and start else None,
    )
    r.block_size = opts.block_size or ENGINE_BLOCK.get(r.engine, 1)
    mp = obj(row.get("model_parameters"), "model_parameters")
    _derive(r, {"messages": row.get("messages"), "tools": mp.get("tools")}, opts)
    return r


def openai_pair(row: Dict[str, Any], where: str, opts: Options) -> AuditRequest:
    """A captured request/response pair: {"request": body, "response": body, ...labels}."""
    req, resp = obj(row.get("request"), "request"), obj(row.get("response"), "response")
    engine = _engine(row["engine"], "engine") if row.get("engine") else (opts.engine or usage_mod.detect_engine(resp))
    P, O = usage_mod.normalise(resp, engine)
    if P is None:
        raise RowError("no prompt token count in the response usage; capture the full response body")
    bs = row.get("block_size")
    metrics = obj(resp.get("metrics"), "response.metrics")
    ttft = number(row.get("ttft_s"), "ttft_s", minimum=0)
    if ttft is None:
        ms = number(metrics.get("time_to_first_token_ms"), "response.metrics.time_to_first_token_ms", minimum=0)
        ttft = None if ms is None else ms / 1000.0
    r = AuditRequest(
        request_id=label(row.get("request_id") or resp.get("id") or where, "request_id"),
        arrival_ts=(number(row["arrival_ts"], "arrival_ts") if row.get("arrival_ts") not in (None, 0)
                    else number(resp.get("created"), "response.created", 0.0)),
        instance=label(row.get("instance"), "instance"),
        tenant=label(row.get("tenant") or req.get("prompt_cache_key"), "tenant"),
        model_rev=label(row.get("model_rev") or resp.get("model"), "model_rev"),
        tokenizer_rev=label(row.get("tokenizer_rev"), "tokenizer_rev"),
        template_rev=label(row.get("template_rev"), "template_rev"), engine=engine,
        block_size=count(bs, "block_size", 1) if bs is not None else (opts.block_size or ENGINE_BLOCK.get(engine, 1)),
        prompt_tokens=P, cached_tokens=_cached(O, P), source="usage", ttft_s=ttft,
        flags={"prompt_logprobs": True} if req.get("prompt_logprobs") else {},
    )
    ids = resp.get("prompt_token_ids")
    name = "response.prompt_token_ids"
    if ids is None:
        ids, name = obj(resp.get("sglext"), "response.sglext").get("input_ids"), "response.sglext.input_ids"
    if ids:
        _identity(r, token_ids(ids, name), opts, "exact")
    else:
        _derive(r, req, opts)
    tin = {k: req[k] for k in ("messages", "tools", "documents", "system") if k in req}
    if tin:
        d = fpm.template_digests(tin, opts.key)
        r.tmpl_raw, r.tmpl_canon = d["raw"], d["canonical"]
    return r


def _derive(r: AuditRequest, inputs: Dict[str, Any], opts: Options) -> None:
    """Token ids from the captured messages (``tokens_source = derived``); when they cannot be
    derived the row stays usage-only and its evidence says why."""
    if opts.deriver is None or not inputs.get("messages"):
        return
    from promptlint.audit.derive import DeriveError

    try:
        ids = opts.deriver(inputs)
    except DeriveError as e:
        r.flags["not_derived"] = str(e)
        return
    if ids:
        _identity(r, ids, opts, "derived")
        if len(ids) != r.prompt_tokens:
            r.flags["derived_length"] = len(ids)


_LLAMACPP = {"llamacpp_slot", "llamacpp_skip", "llamacpp_error"}


def _llamacpp(row: Dict[str, Any], opts: Options) -> Union[AuditRequest, Skip]:
    from promptlint.audit import llamacpp

    if "llamacpp_skip" in row:
        return Skip(text(row["llamacpp_skip"], "llamacpp_skip"))
    if "llamacpp_error" in row:
        raise RowError(text(row["llamacpp_error"], "llamacpp_error"))
    return llamacpp.request(obj(row["llamacpp_slot"], "llamacpp_slot"), opts)


def parse_obj(row: Any, where: str, n: int, opts: Options) -> Iterator[Union[AuditRequest, Skip, RowError]]:
    """The rows of one parsed line: requests, skips, or (OTLP spans only) the error of one span;
    an error that fails the whole line is raised."""
    if not isinstance(row, dict):
        raise RowError("each line must be a JSON object")
    if "hash_ids" in row:
        yield hash_ids_row(row, where, opts, n)
    elif row.keys() & _LLAMACPP:  # made by the reader from a llama.cpp slot log or /slots snapshot
        yield _llamacpp(row, opts)
    elif "resourceSpans" in row or ("attributes" in row and ("spanId" in row or "traceId" in row)):
        yield from otel_spans(row, where, opts)
    elif "response" in row and isinstance(row.get("response"), dict):
        yield openai_pair(row, where, opts)
    elif "startTime" in row and ("model_id" in row or "api_base" in row or "litellm_call_id" in row):
        yield litellm(row, where, opts)
    else:
        yield native(row, where, opts)


def parse_line(n: int, line: Any, where: str, opts: Options) -> List[Union[AuditRequest, Skip, RowError]]:
    """The rows of one line (raw JSONL bytes, or a row already decoded from a columnar file):
    requests, skips and row errors. Needs no other line, so it is the parallel stage."""
    try:
        obj = line if isinstance(line, dict) else jsonl.loads(line, first=n == 1)
        items = list(parse_obj(obj, where, n, opts))
    except (jsonl.LineError, RowError) as e:
        items = [RowError(str(e))]
    except RecursionError:
        items = [RowError("nested too deeply to read; flatten the row")]
    for item in items:
        if isinstance(item, AuditRequest):
            item.line = n
    return items


def counted(items: Sequence[Union[AuditRequest, Skip, RowError]], where: str, n: int,
            tally: Optional[Tally] = None) -> Iterator[AuditRequest]:
    """The requests among one line's rows; skips and errors go to the ``tally`` (without one,
    the first error raises :class:`TraceError`)."""
    for item in items:
        if isinstance(item, AuditRequest):
            yield item
        elif isinstance(item, Skip):
            if tally is not None:
                tally.skip(item.reason)
        elif tally is None:
            raise TraceError(f"{where}: {item}")
        else:
            tally.fail(where, n, str(item))


def read(lines: Iterable[Union[bytes, str]], name: str, opts: Options,
         tally: Optional[Tally] = None) -> Iterator[AuditRequest]:
    """The requests of a trace, line by line (a line ends at \n only: pass a binary stream).
    With a ``tally``, a bad row is counted and reported through it and reading goes on;
    without one, the first bad row raises :class:`TraceError`."""
    for n, line in jsonl.numbered_lines(lines):
        where = f"{name}:{n}"
        yield from counted(parse_line(n, line, where, opts), where, n, tally)


def in_arrival_order(reqs: Iterable[AuditRequest], window: float, name: str,
                     tally: Optional[Tally] = None) -> Iterator[AuditRequest]:
    """Re-order a nearly sorted stream (logs are written at completion) with a bounded
    buffer: a request is released once one ``window`` seconds later has been read. A request
    later than that fails (through the ``tally``; without one, :class:`TraceError`)."""
    heap: List[Tuple[float, int, AuditRequest]] = []
    seq = 0
    last = float("-inf")
    for r in reqs:
        if r.arrival_ts < last:
            msg = (f"arrival_ts {r.arrival_ts:g} is earlier than requests already audited "
                   f"(more than --reorder-window {window:g}s out of order); sort the trace by arrival_ts "
                   "or widen --reorder-window")
            if tally is None:
                raise TraceError(f"{name}:{r.line}: {msg}")
            tally.fail(f"{name}:{r.line}", r.line, msg)
            continue
        heapq.heappush(heap, (r.arrival_ts, seq, r))
        seq += 1
        while heap and heap[0][0] <= r.arrival_ts - window:
            last, _, out = heapq.heappop(heap)
            yield out
    while heap:
        last, _, out = heapq.heappop(heap)
        yield out
