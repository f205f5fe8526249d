"""Read a trace line by line into AuditRequest records.

Formats (detected per line): the native audit JSONL; captured OpenAI-compatible
request/response pairs (OpenAI, vLLM, SGLang, llama.cpp, Anthropic, Gemini); LiteLLM
StandardLoggingPayload; OpenTelemetry GenAI spans (OTLP-JSON); Mooncake/Alibaba block-hash
traces (``hash_ids``). Prompt text, messages, template inputs and salts are turned into
fingerprints or digests here and dropped: nothing downstream ever sees them.
"""

from __future__ import annotations

import heapq
import json
import math
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from promptlint.audit import fingerprints as fpm
from promptlint.audit import usage as usage_mod
from promptlint.audit.records import AuditRequest

ENGINE_BLOCK = {"vllm": 16, "sglang": 1, "llamacpp": 1, "openai": 128, "anthropic": 1, "gemini": 1}
FLAG_KEYS = ("prompt_logprobs", "caching_disabled", "preempted")


class TraceError(ValueError):
    """A malformed trace line: ``file:line: what is wrong; what to do``."""


class Options:
    def __init__(self, key: bytes, chunk: int = fpm.DEFAULT_CHUNK, tenant_field: Optional[str] = None,
                 hash_block_tokens: int = 16, block_size: Optional[int] = None,
                 deriver: Optional[Callable[[Dict[str, Any]], Optional[List[int]]]] = None,
                 engine: Optional[str] = None) -> None:
        self.key = key
        self.chunk = chunk
        self.tenant_field = tenant_field
        self.hash_block_tokens = hash_block_tokens
        self.block_size = block_size
        self.deriver = deriver  # re-render + tokenize captured inputs (rows marked "derived")
        self.engine = engine


def _req_int(obj: Dict[str, Any], k: str, where: str, default: Optional[int] = None) -> int:
    v = obj.get(k, default)
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or int(v) != v:
        raise TraceError(f"{where}: `{k}` must be a non-negative integer; fix the trace row")
    return int(v)


def _label(v: Any) -> str:
    return "-" if v is None or v == "" else str(v)


def _template(obj: Dict[str, Any], opts: Options) -> Tuple[Optional[str], Optional[str]]:
    ti = obj.get("template_inputs")
    if ti is not None:
        d = fpm.template_digests(ti, opts.key)
        return d["raw"], d["canonical"]
    return obj.get("template_inputs_digest"), obj.get("template_inputs_canonical_digest")


def _identity(r: AuditRequest, ids: Optional[Sequence[int]], opts: Options, source: str) -> None:
    r.chunk = math.gcd(opts.chunk, r.block_size or opts.chunk)  # g must divide B for exact ceilings
    r.fps = fpm.chain_hex(ids, r.chunk, opts.key)
    r.ids = list(ids)
    r.source = source


def native(obj: Dict[str, Any], where: str, opts: Options) -> AuditRequest:
    if "request_id" not in obj:
        raise TraceError(f"{where}: missing `request_id`; every row needs one")
    engine = str(obj.get("engine") or opts.engine or "vllm")
    B = obj.get("block_size") or opts.block_size or ENGINE_BLOCK.get(engine, 16)
    flags = obj.get("flags") or {}
    r = AuditRequest(
        request_id=str(obj["request_id"]),
        arrival_ts=float(obj.get("arrival_ts") or 0.0),
        instance=_label(obj.get("instance")), tenant=_label(obj.get("tenant")),
        model_rev=_label(obj.get("model_rev")), tokenizer_rev=_label(obj.get("tokenizer_rev")),
        template_rev=_label(obj.get("template_rev")), engine=engine, block_size=int(B),
        flags={k: bool(flags.get(k)) for k in FLAG_KEYS if k in flags}, ttft_s=obj.get("ttft_s"),
    )
    co = obj.get("cached_tokens")
    r.cached_tokens = None if co is None else _req_int(obj, "cached_tokens", where)
    r.tmpl_raw, r.tmpl_canon = _template(obj, opts)
    if obj.get("token_ids") is not None:
        ids = obj["token_ids"]
        if not isinstance(ids, list):
            raise TraceError(f"{where}: `token_ids` must be a list of integers")
        _identity(r, ids, opts, "exact")
        r.prompt_tokens = _req_int(obj, "prompt_tokens", where, len(ids))
        if len(ids) != r.prompt_tokens:
            r.flags["ids_truncated"] = len(ids) < r.prompt_tokens
    elif obj.get("block_fp") is not None:
        r.chunk = int(obj.get("fp_tokens") or fpm.DEFAULT_CHUNK)
        fps = obj["block_fp"]
        r.fps = fps if not fps or isinstance(fps[0], str) else [fpm.normalise_fp(x) for x in fps]
        r.source = "block_fp"
        r.prompt_tokens = _req_int(obj, "prompt_tokens", where)
        if len(r.fps) > r.prompt_tokens // r.chunk:
            raise TraceError(f"{where}: {len(r.fps)} fingerprints of {r.chunk} tokens exceed prompt_tokens "
                             f"{r.prompt_tokens}; fingerprint full chunks only")
    elif obj.get("checkpoints") is not None:
        cp = obj["checkpoints"]
        if isinstance(cp, list):
            cp = {str(c.get("tokens")): c.get("fp") for c in cp if isinstance(c, dict)}
        r.checkpoints = {int(k): fpm.normalise_fp(v) for k, v in cp.items()}
        r.chunk = fpm.DEFAULT_CHUNK
        r.source = "checkpoint"
        r.prompt_tokens = _req_int(obj, "prompt_tokens", where)
    else:
        r.source = "usage"
        r.prompt_tokens = _req_int(obj, "prompt_tokens", where)
    return r


def hash_ids_row(obj: Dict[str, Any], where: str, opts: Options, n: int) -> AuditRequest:
    """Mooncake/Alibaba: timestamp (ms), input_length, hash_ids (one per chunk, unchained)."""
    g = opts.hash_block_tokens
    P = _req_int(obj, "input_length", where)
    ids = obj["hash_ids"]
    # only full chunks are block identities; a last partial chunk is dropped
    full = ids[: P // g]
    r = AuditRequest(
        request_id=str(obj.get("chat_id", obj.get("request_id", f"line{n}"))),
        arrival_ts=float(obj.get("timestamp", 0)) / 1000.0, instance="-", tenant="-", model_rev="-",
        tokenizer_rev="-", template_rev="-", engine=opts.engine or "vllm",
        block_size=opts.block_size or g, prompt_tokens=P, cached_tokens=None, source="hash_ids",
        chunk=g, fps=fpm.chain_ids_hex(full, opts.key),
    )
    return r


def _otel_attrs(attrs: Any) -> Dict[str, Any]:
    if isinstance(attrs, dict):
        return attrs
    out: Dict[str, Any] = {}
    for a in attrs or []:
        v = a.get("value", {})
        for t in ("intValue", "doubleValue", "stringValue", "boolValue"):
            if t in v:
                out[a.get("key")] = int(v[t]) if t == "intValue" else v[t]
    return out


_CACHE_READ = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
               "gen_ai.usage.input_tokens.cached", "llm.token_count.prompt_details.cache_input")
_INPUT = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")


def otel_spans(obj: Dict[str, Any], where: str, opts: Options) -> Iterator[AuditRequest]:
    """OTLP-JSON export (resourceSpans/scopeSpans/spans) or one bare span per line."""
    if "resourceSpans" in obj:
        for rs in obj["resourceSpans"]:
            res = _otel_attrs(rs.get("resource", {}).get("attributes"))
            for ss in rs.get("scopeSpans", []):
                for sp in ss.get("spans", []):
                    r = _otel_span(sp, res, where, opts)
                    if r is not None:
                        yield r
    else:
        r = _otel_span(obj, {}, where, opts)
        if r is not None:
            yield r


def _otel_span(sp: Dict[str, Any], res: Dict[str, Any], where: str, opts: Options) -> Optional[AuditRequest]:
    a = dict(res)
    a.update(_otel_attrs(sp.get("attributes")))
    P = next((a[k] for k in _INPUT if k in a), None)
    if P is None:
        return None  # not an inference span
    O = next((a[k] for k in _CACHE_READ if k in a), None)
    provider = str(a.get("gen_ai.provider.name") or a.get("gen_ai.system") or "openai")
    engine = provider if provider in ENGINE_BLOCK else (opts.engine or "openai")
    # The GenAI conventions say input_tokens SHOULD include cached tokens; an Anthropic
    # instrumentation that copies the provider's additive usage breaks that, so add them back.
    if engine == "anthropic" and a.get("gen_ai.usage.input_tokens.inclusive") is False:
        P = int(P) + int(O or 0) + int(a.get("gen_ai.usage.cache_creation.input_tokens") or 0)
    start = int(sp.get("startTimeUnixNano", 0)) / 1e9
    host = a.get("server.address")
    inst = f"{host}:{a['server.port']}" if host and a.get("server.port") else host
    ttft = a.get("gen_ai.response.time_to_first_chunk")
    tenant = a.get(opts.tenant_field) if opts.tenant_field else None
    return AuditRequest(
        request_id=str(a.get("gen_ai.response.id") or sp.get("spanId") or where), arrival_ts=start,
        instance=_label(inst), tenant=_label(tenant), model_rev=_label(a.get("gen_ai.response.model") or a.get("gen_ai.request.model")),
        tokenizer_rev="-", template_rev="-", engine=engine, block_size=opts.block_size or ENGINE_BLOCK.get(engine, 1),
        prompt_tokens=int(P), cached_tokens=None if O is None else int(O), source="usage", ttft_s=ttft,
    )


def litellm(obj: Dict[str, Any], where: str, opts: Options) -> AuditRequest:
    """LiteLLM StandardLoggingPayload. ``cache_hit``/``cache_key`` are LiteLLM's own
    response cache, not the engine's prefix cache: ignored."""
    md = obj.get("metadata") or {}
    hp = obj.get("hidden_params") or {}
    uo = md.get("usage_object") or hp.get("usage_object") or {}
    O = usage_mod._get(uo, "prompt_tokens_details", "cached_tokens")
    start = obj.get("startTime")
    first = obj.get("completionStartTime")
    tenant = None
    if opts.tenant_field:
        tenant = md.get(opts.tenant_field, obj.get(opts.tenant_field))
    r = AuditRequest(
        request_id=str(obj.get("id") or obj.get("litellm_call_id") or where), arrival_ts=float(start or 0),
        instance=_label(obj.get("api_base") or obj.get("model_id")), tenant=_label(tenant),
        model_rev=_label(obj.get("model")), tokenizer_rev="-", template_rev="-",
        engine=opts.engine or "openai", prompt_tokens=_req_int(obj, "prompt_tokens", where),
        cached_tokens=None if O is None else int(O), source="usage",
        ttft_s=(float(first) - float(start)) if first and start else None,
    )
    r.block_size = opts.block_size or ENGINE_BLOCK.get(r.engine, 1)
    _derive(r, {"messages": obj.get("messages"), "tools": (obj.get("model_parameters") or {}).get("tools")}, opts)
    return r


def openai_pair(obj: Dict[str, Any], where: str, opts: Options) -> AuditRequest:
    """A captured request/response pair: {"request": body, "response": body, ...labels}."""
    req, resp = obj.get("request") or {}, obj.get("response") or {}
    engine = str(obj.get("engine") or opts.engine or usage_mod.detect_engine(resp))
    P, O = usage_mod.normalise(resp, engine)
    if P is None:
        raise TraceError(f"{where}: no prompt token count in the response usage; "
                         "capture the full response body")
    r = AuditRequest(
        request_id=str(obj.get("request_id") or resp.get("id") or where),
        arrival_ts=float(obj.get("arrival_ts") or resp.get("created") or 0), instance=_label(obj.get("instance")),
        tenant=_label(obj.get("tenant") or req.get("prompt_cache_key")), model_rev=_label(obj.get("model_rev") or resp.get("model")),
        tokenizer_rev=_label(obj.get("tokenizer_rev")), template_rev=_label(obj.get("template_rev")), engine=engine,
        block_size=int(obj.get("block_size") or opts.block_size or ENGINE_BLOCK.get(engine, 1)),
        prompt_tokens=P, cached_tokens=O, source="usage", ttft_s=obj.get("ttft_s"),
        flags={"prompt_logprobs": True} if req.get("prompt_logprobs") else {},
    )
    metrics = resp.get("metrics") or {}
    if r.ttft_s is None and metrics.get("time_to_first_token_ms") is not None:
        r.ttft_s = metrics["time_to_first_token_ms"] / 1000.0
    ids = resp.get("prompt_token_ids") or (resp.get("sglext") or {}).get("input_ids")
    if isinstance(ids, list) and ids:
        _identity(r, ids, opts, "exact")
    else:
        _derive(r, req, opts)
    tin = {k: req[k] for k in ("messages", "tools", "documents", "system") if k in req}
    if tin:
        d = fpm.template_digests(tin, opts.key)
        r.tmpl_raw, r.tmpl_canon = d["raw"], d["canonical"]
    return r


def _derive(r: AuditRequest, inputs: Dict[str, Any], opts: Options) -> None:
    if opts.deriver is None or not inputs.get("messages"):
        return
    ids = opts.deriver(inputs)
    if ids:
        _identity(r, ids, opts, "derived")
        if len(ids) != r.prompt_tokens:
            r.flags["derived_length"] = len(ids)


def parse_obj(obj: Any, where: str, n: int, opts: Options) -> Iterator[AuditRequest]:
    if not isinstance(obj, dict):
        raise TraceError(f"{where}: each line must be a JSON object")
    if "hash_ids" in obj:
        yield hash_ids_row(obj, where, opts, n)
    elif "resourceSpans" in obj or ("attributes" in obj and ("spanId" in obj or "traceId" in obj)):
        yield from otel_spans(obj, where, opts)
    elif "response" in obj and isinstance(obj.get("response"), dict):
        yield openai_pair(obj, where, opts)
    elif "startTime" in obj and ("model_id" in obj or "api_base" in obj or "litellm_call_id" in obj):
        yield litellm(obj, where, opts)
    else:
        yield native(obj, where, opts)


def read(lines: Iterable[str], name: str, opts: Options) -> Iterator[AuditRequest]:
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        where = f"{name}:{n}"
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise TraceError(f"{where}: not valid JSON ({e.msg}); one JSON object per line") from None
        for r in parse_obj(obj, where, n, opts):
            r.line = n
            yield r


def in_arrival_order(reqs: Iterable[AuditRequest], window: float, name: str) -> Iterator[AuditRequest]:
    """Re-order a nearly sorted stream (logs are written at completion) with a bounded
    buffer: a request is released once one ``window`` seconds later has been read."""
    heap: List[Tuple[float, int, AuditRequest]] = []
    seq = 0
    last = float("-inf")
    for r in reqs:
        if r.arrival_ts < last:
            raise TraceError(
                f"{name}:{r.line}: arrival_ts {r.arrival_ts} is earlier than requests already audited "
                f"(more than --reorder-window {window:g}s out of order); sort the trace by arrival_ts "
                "or widen --reorder-window")
        heapq.heappush(heap, (r.arrival_ts, seq, r))
        seq += 1
        while heap and heap[0][0] <= r.arrival_ts - window:
            last, _, out = heapq.heappop(heap)
            yield out
    while heap:
        last, _, out = heapq.heappop(heap)
        yield out
