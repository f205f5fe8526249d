"""Captures into requests: JSON Lines of request bodies, HAR 1.2, OTLP JSON traces.

- **JSON Lines**: one request body a line, with optional top-level ``conversation`` (also read as
  ``session``/``session_id``) and ``reply`` (the provider's whole response), which are taken out
  of the body; ``model`` stays in it.
- **HAR 1.2**: each entry that POSTs JSON to a known provider endpoint (``/chat/completions``,
  ``/messages``, ``/responses``, ``:generateContent``, ``/converse``); one page is one
  conversation when the file uses pages. Headers are never read: what authenticates a request
  stays in the file.
- **OTLP JSON** (an export, or the file exporter's one export per line): each span carrying GenAI
  semantic-convention prompts (``gen_ai.input.messages``, the ``gen_ai.*.message`` events, or the
  older ``gen_ai.prompt.N.*`` attributes) becomes a Chat Completions-shaped body (a system
  message goes to ``system`` for Anthropic); ``gen_ai.conversation.id`` (else the trace) keys it.

A record that is not a request is one line in ``Capture.bad`` and the rest are read. Every byte
is read through ``bounded_io``.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any, Dict, Iterator, List, Optional, Tuple

from promptlint.doors import bounded_io
from promptlint.conversation.capture import Capture, Request

CONVERSATION_KEYS = ("conversation", "session", "session_id")
TIME_KEYS = ("time", "timestamp")  # when the request was sent: epoch seconds or ISO 8601
ENVELOPE_KEYS = CONVERSATION_KEYS + TIME_KEYS + ("reply",)
BODY_KEYS = ("messages", "input", "contents", "prompt")  # a request body has one of them
# endpoint suffix -> provider (the URL's path, query dropped)
ENDPOINTS = (("/chat/completions", "openai"), ("/v1/messages", "anthropic"), ("/messages", "anthropic"),
             ("/responses", "openai-responses"), (":generateContent", "gemini"),
             (":streamGenerateContent", "gemini"), ("/converse", "bedrock"), ("/converse-stream", "bedrock"))


class ReadError(Exception):
    """The whole file is unusable (missing, a directory, not a capture); one line."""


def read(path: str) -> Capture:
    """The requests of one capture file, whichever of the three formats it is."""
    import gc

    # A capture is millions of parsed objects that all survive the read: each full collection
    # traverses every one built so far (~40% of reading 100,000 requests). Parsed JSON holds no
    # cycles, so the collector is paused while the records are built.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _read(path)
    finally:
        if paused:
            gc.enable()


def _read(path: str) -> Capture:
    try:
        head = bounded_io.read_prefix(path, 4096) if path != "-" else b""
        if path != "-" and not bounded_io.is_regular_file(path):
            raise ReadError(f"{path}: not a regular file; pass a capture (JSON Lines, HAR or OTLP JSON)")
        if _whole_json(head):
            data = bounded_io.read_bytes(path, bounded_io.MAX_INPUT_BYTES)
            doc = _parse(data, path)
            if isinstance(doc, dict) and isinstance(doc.get("log"), dict):
                return _har(path, doc["log"])
            if isinstance(doc, dict) and "resourceSpans" in doc:
                return _otlp(path, [(1, doc)])
        return _lines(path)
    except FileNotFoundError:
        raise ReadError(f"{path}: file not found; pass a capture (JSON Lines, HAR or OTLP JSON)") from None
    except bounded_io.InputRefused as e:
        raise ReadError(f"{path}: {e}") from None
    except OSError as e:
        raise ReadError(f"{path}: cannot read ({e.strerror or e})") from None


def _whole_json(head: bytes) -> bool:
    """A HAR file or a pretty-printed OTLP export: one JSON document over several lines."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return False
    first = text.split(b"\n", 1)[0]
    return b'"log"' in text[:200] or b'"resourceSpans"' in text[:200] and not _complete(first)


def _complete(line: bytes) -> bool:
    try:
        json.loads(line)
        return True
    except ValueError:
        return False


def _parse(data: bytes, path: Optional[str] = None) -> Any:
    """The JSON value, or None; a whole file (``path``) nested too deeply is a ReadError, one
    record nested too deeply is a bad record like any other that is not JSON."""
    try:
        return json.loads(data.decode("utf-8-sig"))
    except RecursionError:
        if path is None:
            return None
        raise ReadError(f"{path}: JSON nested too deeply to read") from None
    except (ValueError, UnicodeDecodeError):
        return None


# ----------------------------------------------------------------------------- JSON Lines


def _lines(path: str) -> Capture:
    from promptlint.base import jsonl

    out = Capture(path, format="jsonl")
    with bounded_io.open_stream(path) as stream:
        rows: List[Tuple[int, Any]] = []
        for n, line in jsonl.numbered_lines(stream):
            try:
                rows.append((n, jsonl.loads(line, first=n == 1)))
            except jsonl.LineError as e:
                out.bad.append(f"{path}:{n}: {e}")
    if rows and isinstance(rows[0][1], dict) and "resourceSpans" in rows[0][1]:
        otlp = _otlp(path, rows)
        otlp.bad[:0] = out.bad
        return otlp
    for n, row in rows:
        if not isinstance(row, dict):
            out.bad.append(f"{path}:{n}: not a JSON object; each line is one request body")
            continue
        body = dict(row)  # the body without the envelope's keys, in its own key order
        for k in ENVELOPE_KEYS:
            body.pop(k, None)
        why = _not_a_body(body)
        if why:
            out.bad.append(f"{path}:{n}: {why}")
            continue
        reply = row.get("reply")
        key = next((row[k] for k in CONVERSATION_KEYS if isinstance(row.get(k), (str, int))), None)
        index = len(out.requests) + 1
        sent = next((when(row[k]) for k in TIME_KEYS if k in row), None)
        out.requests.append(Request(index, body, path, index, None if key is None else str(key),
                                    reply if isinstance(reply, dict) else None, where=f"request {index} (line {n})",
                                    time=sent))
    return out


def _not_a_body(body: Dict[str, Any]) -> Optional[str]:
    if not any(k in body for k in BODY_KEYS):
        return "not a request body (no `messages`, `input`, `contents` or `prompt`); each line is one request body"
    for key in ("messages", "contents", "tools"):
        if key in body and not isinstance(body[key], list):
            return f"`{key}` must be a JSON array"
    messages = body.get("messages")
    if isinstance(messages, list):
        for m in messages:  # a loop, not all(generator): it runs for every message of every record
            if not isinstance(m, dict):
                return "every entry of `messages` must be a JSON object"
    return None


# ----------------------------------------------------------------------------- HAR


def endpoint_provider(url: str) -> Optional[str]:
    """The provider a request URL is for, or None for any other traffic."""
    route = url.split("?", 1)[0].split("#", 1)[0]
    for suffix, provider in ENDPOINTS:
        if route.endswith(suffix):
            return provider
    return None


def with_url_model(body: Dict[str, Any], url: str, provider: Optional[str]) -> Dict[str, Any]:
    """Gemini names the model in the URL (``…/models/gemini-2.5-flash:generateContent``), not the body."""
    if provider != "gemini" or "model" in body or "/models/" not in url:
        return body
    model = url.split("?", 1)[0].split("/models/", 1)[-1].split(":", 1)[0]
    return {"model": model, **body} if model else body


def _har(path: str, log: Dict[str, Any]) -> Capture:
    out = Capture(path, format="har")
    entries = log.get("entries")
    if not isinstance(entries, list):
        raise ReadError(f"{path}: a HAR file without `log.entries`; export the HAR again")
    paged = bool(log.get("pages"))
    for n, entry in enumerate(entries, 1):
        request = entry.get("request") if isinstance(entry, dict) else None
        if not isinstance(request, dict) or not isinstance(request.get("url"), str):
            out.bad.append(f"{path}: entry {n}: no `request.url`; not a HAR entry")
            continue
        provider = endpoint_provider(request["url"])
        if provider is None or str(request.get("method", "POST")).upper() != "POST":
            continue  # other traffic of the page
        post = request.get("postData")
        body = _parse(post["text"].encode("utf-8", "surrogatepass")) if isinstance(post, dict) and isinstance(post.get("text"), str) else None
        why = "no JSON request body (postData.text)" if not isinstance(body, dict) else _not_a_body(body)
        if why:
            out.bad.append(f"{path}: entry {n}: {why}")
            continue
        body = with_url_model(body, request["url"], provider)
        key = entry.get("pageref") if paged and isinstance(entry.get("pageref"), str) else None
        index = len(out.requests) + 1
        out.requests.append(Request(index, body, path, index, key, _har_reply(entry), provider,
                                    where=f"request {index} (HAR entry {n})", time=when(entry.get("startedDateTime"))))
    return out


def _har_reply(entry: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    content = (entry.get("response") or {}).get("content") if isinstance(entry.get("response"), dict) else None
    if not isinstance(content, dict) or not isinstance(content.get("text"), str):
        return None
    raw = content["text"].encode("utf-8", "surrogatepass")
    if content.get("encoding") == "base64":
        try:
            raw = base64.b64decode(raw, validate=False)
        except ValueError:
            return None
    from promptlint.conversation.streams import reply_from_bytes

    return reply_from_bytes(raw)  # a JSON response, or a streamed one (text/event-stream) assembled


def when(value: Any) -> Optional[float]:
    """Seconds since the epoch from epoch seconds or an ISO 8601 time (HAR's ``startedDateTime``);
    None when it is neither (the gap to the next request is then unknown)."""
    import datetime as dt

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    try:
        stamp = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.timezone.utc)).timestamp()


# ----------------------------------------------------------------------------- OTLP


def _otlp(path: str, docs: List[Tuple[int, Any]]) -> Capture:
    out = Capture(path, format="otlp")
    for n, doc in docs:
        if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
            out.bad.append(f"{path}:{n}: not an OTLP export (no `resourceSpans`)")
            continue
        for span in _spans(doc):
            attrs = {**_details(span.get("events")), **_attributes(span.get("attributes"))}
            provider = _otlp_provider(attrs)
            body, why = _otlp_body(attrs, span.get("events"), provider)
            if body is None:
                if why:
                    out.bad.append(f"{path}:{n}: span {str(span.get('name', '?'))[:60]!r}: {why}")
                continue
            key = attrs.get("gen_ai.conversation.id") or span.get("traceId")
            if provider == "anthropic":
                system = [m for m in body["messages"] if m.get("role") == "system"]
                if system:
                    body["system"] = "\n".join(str(m.get("content") or "") for m in system)
                    body["messages"] = [m for m in body["messages"] if m.get("role") != "system"]
            index = len(out.requests) + 1
            reply = _otlp_reply(attrs, provider)
            out.requests.append(Request(index, body, path, index, None if key is None else str(key), reply, provider,
                                        where=f"request {index}", time=_nanos(span.get("startTimeUnixNano")),
                                        cache_markers=_has_marker(body), cache_read_tokens=_count(attrs.get(CACHE_READ))))
    # an export lists spans as they ended, batch by batch: the order sent is their start time
    out.requests.sort(key=lambda r: (r.time is None, r.time or 0.0, r.index))
    return out


def _nanos(value: Any) -> Optional[float]:
    try:
        return int(value) / 1e9 if value not in (None, "", 0, "0") else None
    except (TypeError, ValueError):
        return None


def _spans(doc: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    for rs in doc.get("resourceSpans") or ():
        for ss in (rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or ()) if isinstance(rs, dict) else ():
            for span in (ss.get("spans") or ()) if isinstance(ss, dict) else ():
                if isinstance(span, dict):
                    yield span


def _value(v: Any) -> Any:
    if not isinstance(v, dict):
        return None
    for k in ("stringValue", "boolValue", "doubleValue"):
        if k in v:
            return v[k]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return None
    if "arrayValue" in v:
        return [_value(x) for x in (v["arrayValue"] or {}).get("values") or ()]
    if "kvlistValue" in v:
        return _attributes((v["kvlistValue"] or {}).get("values"))
    return None


def _attributes(items: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for a in items if isinstance(items, list) else ():
        if isinstance(a, dict) and isinstance(a.get("key"), str):
            out[a["key"]] = _value(a.get("value"))
    return out


def _otlp_provider(attrs: Dict[str, Any]) -> Optional[str]:
    name = str(attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system") or "").lower()
    for known in ("anthropic", "openai", "gemini", "bedrock"):
        if known in name or (known == "gemini" and ("google" in name or "vertex" in name)):
            return known if known != "bedrock" else "bedrock"
    return None


# the conventions' event that carries a request's content (under the span attributes' names), for an
# instrumentation records content on events rather than on the span
DETAILS_EVENT = "gen_ai.client.inference.operation.details"


CACHE_READ = "gen_ai.usage.cache_read.input_tokens"  # what the provider said it read from its cache


def _count(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53 else None


def _details(events: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for e in events if isinstance(events, list) else ():
        if isinstance(e, dict) and e.get("name") == DETAILS_EVENT:
            out.update(_attributes(e.get("attributes")))
    return out


def _has_marker(value: Any, depth: int = 0) -> bool:
    """Whether a body carries a cache marker anywhere: the conventions have none, so an explicit-
    caching provider's breakpoints are unknown from a trace unless an instrumentation kept them."""
    if depth > 64:
        return False
    if isinstance(value, dict):
        return "cache_control" in value or any(_has_marker(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_marker(v, depth + 1) for v in value)
    return False


def _tool(tool: Any, provider: Optional[str]) -> Any:
    """A semantic-convention tool definition (``{"type": "function", "name", "description",
    "parameters"}``) in the provider's own wire shape, which is what reaches the prompt; other
    tools (a provider's built-in one, an instrumentation that kept the wire shape) as they are."""
    if not (isinstance(tool, dict) and tool.get("type") == "function" and isinstance(tool.get("name"), str)
            and "function" not in tool):
        return tool
    fields = {k: tool[k] for k in ("name", "description", "parameters") if tool.get(k) is not None}
    if provider == "anthropic":
        return {("input_schema" if k == "parameters" else k): v for k, v in fields.items()}
    return {"type": "function", "function": fields}


def _otlp_body(attrs: Dict[str, Any], events: Any, provider: Optional[str] = None
               ) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """A Chat Completions-shaped body from a span's GenAI prompt, (None, why) when it has none."""
    messages = _semconv_messages(attrs) or _event_messages(events) or _indexed(attrs, "gen_ai.prompt")
    if not messages:
        return None, None  # a span of another kind (an HTTP call, the application's own): not a request
    body: Dict[str, Any] = {}
    if attrs.get("gen_ai.request.model"):
        body["model"] = str(attrs["gen_ai.request.model"])
    tools = _json_attr(attrs.get("gen_ai.tool.definitions")) or _functions(attrs)
    if isinstance(tools, list) and tools:
        body["tools"] = [_tool(t, provider) for t in tools]
    system = _json_attr(attrs.get("gen_ai.system_instructions"))
    if isinstance(system, list) and system:
        messages = [{"role": "system", "content": _parts_text(system)}] + messages
    body["messages"] = messages
    return body, None


def _json_attr(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return json.loads(v)
        except (ValueError, RecursionError):
            return None
    return v


def _parts_text(parts: Any) -> Any:
    """Semantic-convention parts as Chat Completions content: text parts joined, others kept."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return None
    texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    if len(texts) == len(parts):
        return "".join(str(t) for t in texts)
    return [p for p in parts if isinstance(p, dict)]


def _semconv_messages(attrs: Dict[str, Any]) -> List[Dict[str, Any]]:
    raw = _json_attr(attrs.get("gen_ai.input.messages"))
    if not isinstance(raw, list):
        return []
    out = []
    for m in raw:
        if isinstance(m, dict) and isinstance(m.get("role"), str):
            out.append({"role": m["role"], "content": _parts_text(m.get("parts", m.get("content")))})
    return out


def _event_messages(events: Any) -> List[Dict[str, Any]]:
    out = []
    for e in events if isinstance(events, list) else ():
        name = e.get("name") if isinstance(e, dict) else None
        if not isinstance(name, str) or not name.startswith("gen_ai.") or not name.endswith(".message"):
            continue
        attrs = _attributes(e.get("attributes"))
        role = attrs.get("role") or name[len("gen_ai."):-len(".message")]
        content = _json_attr(attrs.get("content")) if str(attrs.get("content", "")).startswith("[") else attrs.get("content")
        message = {"role": str(role), "content": content}
        if attrs.get("tool_calls"):
            message["tool_calls"] = _json_attr(attrs["tool_calls"])
        if attrs.get("id") and role == "tool":
            message["tool_call_id"] = attrs["id"]
        out.append(message)
    return out


def _indexed(attrs: Dict[str, Any], prefix: str) -> List[Dict[str, Any]]:
    """``gen_ai.prompt.0.role`` / ``.content`` (the attributes older instrumentations write)."""
    out = []
    i = 0
    while f"{prefix}.{i}.role" in attrs or f"{prefix}.{i}.content" in attrs:
        out.append({"role": str(attrs.get(f"{prefix}.{i}.role") or "user"), "content": attrs.get(f"{prefix}.{i}.content")})
        i += 1
    return out


def _functions(attrs: Dict[str, Any]) -> List[Dict[str, Any]]:
    out = []
    i = 0
    while f"llm.request.functions.{i}.name" in attrs:
        fn = {"name": attrs[f"llm.request.functions.{i}.name"]}
        if attrs.get(f"llm.request.functions.{i}.description") is not None:
            fn["description"] = attrs[f"llm.request.functions.{i}.description"]
        params = _json_attr(attrs.get(f"llm.request.functions.{i}.parameters"))
        if params is not None:
            fn["parameters"] = params
        out.append({"type": "function", "function": fn})
        i += 1
    return out


def _otlp_reply(attrs: Dict[str, Any], provider: Optional[str]) -> Optional[Dict[str, Any]]:
    raw = _json_attr(attrs.get("gen_ai.output.messages"))
    if isinstance(raw, list) and raw and isinstance(raw[0], dict):
        content = _parts_text(raw[0].get("parts"))
        return {"choices": [{"message": {"role": "assistant", "content": content}}]}
    completion = _indexed(attrs, "gen_ai.completion")
    if completion:
        return {"choices": [{"message": {"role": "assistant", "content": completion[0]["content"]}}]}
    return None
