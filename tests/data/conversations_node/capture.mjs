// Agent conversations sent by the official JS SDKs (openai, @anthropic-ai/sdk) to a local fake
// provider (node:http), recorded as HAR 1.2 (by the fake server: what arrived on the wire) and as
// OTLP JSON (Anthropic: the SDK's own OpenTelemetry spans; OpenAI, whose SDK has no tracing: spans
// this script writes with the GenAI semantic-convention attributes). See README.md.
//
//   npm install && node capture.mjs OUTDIR
//
// Times: HAR startedDateTime and the OpenAI spans' start times come from a simulated clock (each
// request 2 s after the one before, unless a conversation says otherwise) so that a gap longer
// than a cache lifetime can be recorded without waiting for it. Anthropic's own spans carry real time.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";

const OUT = process.argv[2] ?? ".";
const POLICY = Array.from({ length: 80 }, (_, i) => `Rule ${i}: answer in full sentences and cite the order number when there is one.\n`).join("");
const WEATHER = { type: "function", function: { name: "get_weather", description: "Weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
const CLOCK = { type: "function", function: { name: "get_time", description: "Time in a city",
  parameters: { type: "object", properties: { city: { type: "string" } } } } };
const A_WEATHER = { name: "get_weather", description: "Weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const A_CLOCK = { name: "get_time", description: "Time in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } } } };
const EPOCH = Date.parse("2026-12-01T10:00:00.000Z");

// ----------------------------------------------------------------------------- the fake provider

let clock = EPOCH;
const entries = [];
const pages = new Map();

function openaiReply(body, turn) {
  const text = `Answer ${turn}: it ships today.`;
  if (!body.stream) {
    return { json: { id: `chatcmpl-${turn}`, object: "chat.completion", created: 1, model: body.model,
      choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: text, refusal: null } }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } };
  }
  const chunk = (delta, finish = null) => ({ id: `chatcmpl-${turn}`, object: "chat.completion.chunk", created: 1,
    model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const pieces = text.match(/.{1,7}/g);
  return { sse: [chunk({ role: "assistant", content: "" }), ...pieces.map((p) => chunk({ content: p })), chunk({}, "stop")]
    .map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n" };
}

function anthropicReply(body, turn) {
  const text = `Noted ${turn}.`;
  const message = { id: `msg_${turn}`, type: "message", role: "assistant", model: body.model,
    content: [{ type: "text", text }], stop_reason: "end_turn", stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 } };
  if (!body.stream) return { json: message };
  const events = [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    ...text.match(/.{1,4}/g).map((p) => ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } }]),
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 1 } }],
    ["message_stop", { type: "message_stop" }],
  ];
  return { sse: events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("") };
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    const body = JSON.parse(text);
    const page = req.headers["x-conversation"];
    clock += 1000 * Number(req.headers["x-advance-seconds"] ?? 2);
    if (!pages.has(page)) pages.set(page, { startedDateTime: new Date(clock).toISOString(), id: page, title: page, pageTimings: {} });
    const turn = entries.filter((e) => e.pageref === page).length + 1;
    const made = req.url.endsWith("/chat/completions") ? openaiReply(body, turn) : anthropicReply(body, turn);
    const payload = made.sse ?? JSON.stringify(made.json);
    const mimeType = made.sse ? "text/event-stream" : "application/json";
    res.writeHead(200, { "content-type": mimeType, "request-id": `req_${entries.length + 1}` });
    res.end(payload);
    // no header is written to the HAR: the API key travels in one
    entries.push({ pageref: page, startedDateTime: new Date(clock).toISOString(), time: 1,
      request: { method: req.method, url: `http://127.0.0.1${req.url}`, httpVersion: "HTTP/1.1", headers: [], queryString: [],
        cookies: [], headersSize: -1, bodySize: Buffer.byteLength(text), postData: { mimeType: "application/json", text } },
      response: { status: 200, statusText: "OK", httpVersion: "HTTP/1.1", headers: [], cookies: [], redirectURL: "",
        headersSize: -1, bodySize: Buffer.byteLength(payload), content: { size: Buffer.byteLength(payload), mimeType, text: payload } },
      cache: {}, timings: { send: 0, wait: 1, receive: 0 } });
  });
});

// ----------------------------------------------------------------------------- tracing

const contextManager = new AsyncLocalStorageContextManager().enable();
context.setGlobalContextManager(contextManager);
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer("capture.mjs");

function parts(content) {
  return typeof content === "string" ? [{ type: "text", content }] : content;
}

// The OpenAI SDK has no tracing of its own: one span per call, with the semantic-convention
// attributes an instrumentation writes (gen_ai.input.messages etc., as JSON strings).
async function tracedOpenAI(client, conversation, request, advance) {
  const system = request.messages.filter((m) => m.role === "system");
  const span = tracer.startSpan(`chat ${request.model}`, { kind: 2, startTime: clock + 1000 * advance, attributes: {
    "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": request.model,
    "gen_ai.conversation.id": conversation,
    "gen_ai.system_instructions": JSON.stringify(system.flatMap((m) => parts(m.content))),
    "gen_ai.input.messages": JSON.stringify(request.messages.filter((m) => m.role !== "system").map((m) => ({ role: m.role,
      parts: m.tool_calls ? m.tool_calls.map((c) => ({ type: "tool_call", id: c.id, name: c.function.name, arguments: c.function.arguments }))
        : m.role === "tool" ? [{ type: "tool_call_response", id: m.tool_call_id, response: m.content }] : parts(m.content) }))),
    ...(request.tools ? { "gen_ai.tool.definitions": JSON.stringify(request.tools) } : {}),
  } });
  let answer = "";
  if (request.stream) {
    const stream = await client.chat.completions.create(request, { headers: { "x-advance-seconds": String(advance) } });
    for await (const chunk of stream) answer += chunk.choices[0]?.delta?.content ?? "";
  } else {
    const reply = await client.chat.completions.create(request, { headers: { "x-advance-seconds": String(advance) } });
    answer = reply.choices[0].message.content;
  }
  span.setAttribute("gen_ai.output.messages", JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: answer }], finish_reason: "stop" }]));
  span.end(clock + 1000);
  return answer;
}

// ----------------------------------------------------------------------------- the agents

const port = await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
const base = `http://127.0.0.1:${port}`;
const openai = (name) => new OpenAI({ apiKey: "sk-test-not-a-secret", baseURL: `${base}/v1`, maxRetries: 0,
  defaultHeaders: { "x-conversation": name } });
const anthropic = (name) => new Anthropic({ apiKey: "sk-ant-test-not-a-secret", baseURL: base, maxRetries: 0,
  defaultHeaders: { "x-conversation": name },
  openTelemetry: { tracerProvider: provider, propagation: false, traces: { contentMode: "content" } } });

// Each OpenAI conversation: turns of (system text, tools, the user's question, seconds since the
// request before, whether to stream), the history kept as the agent keeps it (history rewritten
// where the family says so).
async function openaiAgent(name, turns, rewrite) {
  const client = openai(name);
  let history = [];
  for (const [i, turn] of turns.entries()) {
    history.push(...(turn.insert ?? []), { role: "user", content: turn.user });
    if (rewrite && i === turns.length - 1) history = rewrite(history);
    const request = { model: "gpt-4.1", messages: [{ role: "system", content: turn.system }, ...history],
      ...(turn.tools ? { tools: turn.tools } : {}), ...(turn.stream ? { stream: true } : {}) };
    const answer = await tracedOpenAI(client, name, request, turn.advance ?? 2);
    history.push({ role: "assistant", content: answer });
  }
}

const sys = `You are the support bot.\n${POLICY}`;
const toolCall = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function",
  function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] };
const toolResult = { role: "tool", tool_call_id: "call_1", content: "Paris: 18 C, light rain, wind 12 km/h from the west, humidity 81%." };

await openaiAgent("openai-clean", [
  { system: sys, tools: [WEATHER, CLOCK], user: "Where is order 1042?", stream: true },
  { system: sys, tools: [WEATHER, CLOCK], user: "And order 1043?", stream: true },
  { system: sys, tools: [WEATHER, CLOCK], user: "Thanks." },
]);
await openaiAgent("openai-clock", [
  { system: `Now: 2026-12-01 10:00:04.\n${sys}`, user: "Where is order 1042?" },
  { system: `Now: 2026-12-01 10:00:06.\n${sys}`, user: "And order 1043?" },
]);
await openaiAgent("openai-tools-reordered", [
  { system: sys, tools: [WEATHER, CLOCK], user: "Weather in Paris?" },
  { system: sys, tools: [CLOCK, WEATHER], user: "And the time there?" },
]);
await openaiAgent("openai-history-rewritten", [
  { system: sys, tools: [WEATHER], user: "Weather in Paris?" },
  { system: sys, tools: [WEATHER], user: "Shall I take an umbrella?", insert: [toolCall, toolResult] },
  { system: sys, tools: [WEATHER], user: "And tomorrow?" },
], (history) => history.map((m) => (m.role === "tool" ? { ...m, content: "[elided]" } : m)));
await openaiAgent("openai-expired", [
  { system: `Now: 2026-12-01 10:00:04.\n${sys}`, user: "Where is order 1042?" },
  { system: `Now: 2026-12-01 10:12:04.\n${sys}`, user: "And order 1043?", advance: 720 },
]);

const cached = (text) => [{ type: "text", text, cache_control: { type: "ephemeral" } }];
const userBlock = (text, cache) => ({ role: "user", content: [{ type: "text", text, ...(cache ? { cache_control: { type: "ephemeral" } } : {}) }] });

// Each Anthropic conversation: turns of (system, tools, user text, whether the newest user block
// carries a breakpoint, stream or not); the assistant turn is sent back as the SDK returned it.
async function anthropicAgent(name, turns, rewrite) {
  const client = anthropic(name);
  await tracer.startActiveSpan(`agent ${name}`, async (root) => {
    const history = [];
    for (const [i, turn] of turns.entries()) {
      const sent = history.map((m) => ({ ...m, content: m.content.map(({ cache_control, ...b }) => b) }));
      sent.push(userBlock(turn.user, turn.cache));
      if (rewrite && i === turns.length - 1) rewrite(sent);
      const request = { model: "claude-sonnet-4-5", max_tokens: 256, system: turn.system, messages: sent,
        ...(turn.tools ? { tools: turn.tools } : {}) };
      const options = { headers: { "x-advance-seconds": String(turn.advance ?? 2) } };
      const reply = turn.stream ? await client.messages.stream(request, options).finalMessage()
        : await client.messages.create(request, options);
      history.push(userBlock(turn.user), { role: "assistant", content: reply.content });
    }
    root.end();
  });
}

await anthropicAgent("anthropic-clean", [
  { system: cached(POLICY), tools: [A_WEATHER, A_CLOCK], user: "Where is order 1042?", cache: true, stream: true },
  { system: cached(POLICY), tools: [A_WEATHER, A_CLOCK], user: "And order 1043?", cache: true, stream: true },
  { system: cached(POLICY), tools: [A_WEATHER, A_CLOCK], user: "Thanks.", cache: true },
]);
await anthropicAgent("anthropic-cache-control-dropped", [
  { system: cached(POLICY), user: "Where is order 1042?", cache: true },
  { system: [{ type: "text", text: POLICY }], user: "And order 1043?" },
]);
await anthropicAgent("anthropic-clock", [
  { system: cached(`Now: 2026-12-01T10:00:04Z.\n${POLICY}`), user: "Where is order 1042?", cache: true },
  { system: cached(`Now: 2026-12-01T10:00:06Z.\n${POLICY}`), user: "And order 1043?", cache: true },
]);
await anthropicAgent("anthropic-tools-reordered", [
  { system: cached(POLICY), tools: [A_WEATHER, A_CLOCK], user: "Weather in Paris?", cache: true },
  { system: cached(POLICY), tools: [A_CLOCK, A_WEATHER], user: "And the time there?", cache: true },
]);
await anthropicAgent("anthropic-history-rewritten", [
  { system: cached(POLICY), user: "Where is order 1042?", cache: true },
  { system: cached(POLICY), user: "And order 1043?", cache: true },
  { system: cached(POLICY), user: "Thanks.", cache: true },
], (sent) => { sent[1] = { role: "assistant", content: [{ type: "text", text: "(summary of the earlier answer)" }] }; });
await anthropicAgent("anthropic-expired", [
  { system: cached(POLICY), user: "Where is order 1042?", cache: true },
  { system: cached(POLICY), user: "And order 1043?", cache: true, advance: 400 },
]);

server.close();
await provider.forceFlush();

// ----------------------------------------------------------------------------- the files

const har = (prefix) => ({ log: { version: "1.2", creator: { name: "capture.mjs", version: "1" },
  pages: [...pages.values()].filter((p) => p.id.startsWith(prefix)),
  entries: entries.filter((e) => e.pageref.startsWith(prefix)) } });
fs.writeFileSync(path.join(OUT, "openai.har"), JSON.stringify(har("openai"), null, 1) + "\n");
fs.writeFileSync(path.join(OUT, "anthropic.har"), JSON.stringify(har("anthropic"), null, 1) + "\n");
const spans = exporter.getFinishedSpans();
const otlp = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
fs.writeFileSync(path.join(OUT, "traces.json"), JSON.stringify(otlp) + "\n");  // one export a line, as the collector's file exporter writes
console.log(`${entries.length} requests; ${spans.length} spans`);
