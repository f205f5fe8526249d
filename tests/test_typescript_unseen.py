"""A second set of TS/JS agent code, written after the first suite was green, in other styles: a
Next.js route importing through a `@/` path alias, a class-based agent, an MCP tool registry class
filled in completion order, a default-exported arrow prompt, a barrel `export *`, a `for ... of
await readdir()` loop building text with `+=`, `JSON.stringify` of per-process values, a
`uuid` v4 alias, LangGraph.js `createReactAgent({ prompt })`, a time before a breakpoint; and clean
files (the date after the shared text, tools sorted after an async fill, `Promise.all` results).

Ten hazards were listed before the first run. That run found 6 of 10 (missed: the `@/` alias, the
registry method on an instance, the `for ... of` loop iterable, the agent factory); each miss was
closed as a family (tsconfig `paths` and `@/`/`~/`, methods and `this.x` mutations of classes of
the linted modules, `for ... of` iterables, agent constructors and factories), and this file
pins the result: every hazard at its line and column, nothing on the clean files.
"""

from __future__ import annotations

from pathlib import Path

from test_typescript import run

FILES = {
    "package.json": '{"name": "orbit", "private": true}\n',
    'app/api/chat/route.ts': "import { openai } from \"@ai-sdk/openai\";\nimport { streamText, type CoreMessage } from \"ai\";\nimport { buildSystem } from \"@/lib/prompts/system\";\n\nexport const runtime = \"edge\";\n\nexport async function POST(req: Request) {\n  const { messages }: { messages: CoreMessage[] } = await req.json();\n  const result = streamText({\n    model: openai(\"gpt-4o-mini\"),\n    system: buildSystem(\"orbit\"),\n    messages,\n  });\n  return result.toDataStreamResponse();\n}\n",
    'lib/prompts/system.ts': "import dayjs from \"dayjs\";\n\nconst GUIDELINES = [\n  \"You are Orbit, a careful pair programmer working inside the user's repository.\",\n  \"Read the relevant files before proposing changes and keep every diff minimal.\",\n  \"Never run destructive shell commands without asking first.\",\n  \"When tests fail, explain the failure before attempting a fix.\",\n];\n\nexport const buildSystem = (repoName: string): string =>\n  `Generated ${dayjs().format(\"YYYY-MM-DD HH:mm:ss\")}\\n${GUIDELINES.join(\"\\n\")}\\nRepository: ${repoName}`;\n",
    'src/agent/Agent.ts': "import Anthropic from \"@anthropic-ai/sdk\";\nimport type { MessageParam } from \"@anthropic-ai/sdk/resources/messages\";\n\nconst RULES = `You are a release assistant. You prepare changelogs from merged pull requests, group them by area,\nand flag anything that changes a public API. You never invent pull request numbers and you always link to\nthe pull request you summarise. Write in plain English and keep each entry to one line.`;\n\nexport class ReleaseAgent {\n  private client = new Anthropic();\n  private history: MessageParam[] = [];\n\n  private systemPrompt(): string {\n    const today = new Date().toLocaleDateString(\"en-US\", { weekday: \"long\", year: \"numeric\", month: \"long\", day: \"numeric\" });\n    return [`Today is ${today}.`, RULES].join(\"\\n\\n\");\n  }\n\n  async send(text: string) {\n    this.history.push({ role: \"user\", content: text });\n    const reply = await this.client.messages.create({\n      model: \"claude-3-5-haiku-latest\",\n      max_tokens: 2048,\n      system: this.systemPrompt(),\n      messages: this.history,\n    });\n    return reply;\n  }\n}\n",
    'src/agent/billing.ts': "import OpenAI from \"openai\";\nimport buildPrompt from \"./prompt\";\n\nconst openai = new OpenAI();\n\nexport const answerBilling = async (user: string, plan: string, question: string) => {\n  const completion = await openai.chat.completions.create({\n    model: \"gpt-4o\",\n    messages: [\n      { role: \"system\", content: buildPrompt({ user, plan }) },\n      { role: \"user\", content: question },\n    ],\n  });\n  return completion.choices[0].message.content;\n};\n",
    'src/agent/cached.ts': "import Anthropic from \"@anthropic-ai/sdk\";\n\nconst client = new Anthropic();\nconst HANDBOOK = Array.from({ length: 60 }, (_, i) => `Rule ${i + 1}: answer from the handbook, cite the section, and never guess.`).join(\"\\n\");\n\nexport async function ask(q: string) {\n  const stamp = `Local clock: ${new Date().toLocaleTimeString()}`;\n  return client.messages.create({\n    model: \"claude-sonnet-4-5\",\n    max_tokens: 1024,\n    system: [\n      { type: \"text\", text: stamp },\n      { type: \"text\", text: HANDBOOK, cache_control: { type: \"ephemeral\" } },\n    ],\n    messages: [{ role: \"user\", content: q }],\n  });\n}\n",
    'src/agent/graph.ts': "import { ChatAnthropic } from \"@langchain/anthropic\";\nimport { createReactAgent } from \"@langchain/langgraph/prebuilt\";\n\nconst model = new ChatAnthropic({ model: \"claude-sonnet-4-5\" });\n\nexport const agent = createReactAgent({\n  llm: model,\n  tools: [],\n  prompt: `It is ${new Date().toUTCString()}. You are an on-call assistant. Summarise alerts, find the owning team and suggest the runbook. Never acknowledge pages on behalf of a human.`,\n});\n",
    'src/agent/loop.ts': "import Anthropic from \"@anthropic-ai/sdk\";\nimport { ToolRegistry } from \"../tools/registry\";\n\nconst anthropic = new Anthropic();\nconst registry = new ToolRegistry();\n\nexport async function step(input: string) {\n  return anthropic.messages.create({\n    model: \"claude-sonnet-4-5\",\n    max_tokens: 1024,\n    tools: registry.list(),\n    messages: [{ role: \"user\", content: input }],\n  });\n}\n",
    'src/agent/prompt.ts': "interface Ctx { user: string; plan: string }\n\nexport default (ctx: Ctx) => `Session started ${new Date().toISOString()}\nYou are the billing assistant. Explain invoices, refunds and plan changes. Quote amounts exactly as they appear on the invoice and never promise refunds yourself.\nCustomer: ${ctx.user} (${ctx.plan})`;\n",
    'src/agent/responses.ts': "import OpenAI from \"openai\";\nimport { v4 as uuidv4 } from \"uuid\";\n\nconst client = new OpenAI();\nconst STYLE = \"You are a documentation writer. Use short sentences, active voice and concrete examples. Prefer tables for comparisons and never use marketing language. Link to the API reference for every function you mention.\";\n\nexport async function draft(topic: string) {\n  const requestId = uuidv4();\n  return client.responses.create({\n    model: \"gpt-4.1\",\n    input: [\n      { role: \"developer\", content: `request ${requestId}\\n${STYLE}` },\n      { role: \"user\", content: topic },\n    ],\n  });\n}\n",
    'src/agent/support.mjs': "import OpenAI from \"openai\";\nimport { readdir, readFile } from \"node:fs/promises\";\nimport { NODE_INFO } from \"../lib/index.js\";\n\nconst client = new OpenAI();\n\nasync function loadPlaybooks(dir) {\n  let text = \"\";\n  for (const name of await readdir(dir)) {\n    text += `## ${name}\\n` + (await readFile(`${dir}/${name}`, \"utf8\")) + \"\\n\";\n  }\n  return text;\n}\n\nexport async function support(question) {\n  const playbooks = await loadPlaybooks(\"./playbooks\");\n  return client.chat.completions.create({\n    model: \"gpt-4o\",\n    messages: [\n      { role: \"system\", content: `You are the support bot.\\n${playbooks}` },\n      { role: \"system\", content: NODE_INFO },\n      { role: \"user\", content: question },\n    ],\n  });\n}\n",
    'src/agent/telemetry.js': "const Anthropic = require(\"@anthropic-ai/sdk\");\nconst os = require(\"os\");\n\nconst client = new Anthropic();\nconst POLICY = \"You triage production incidents. Read the alert, find the owning service, propose the first diagnostic command, and never restart anything yourself. Always state your confidence.\";\n\nasync function triage(alert) {\n  const meta = { host: os.hostname(), pid: process.pid, region: \"eu-west-1\" };\n  return client.messages.create({\n    model: \"claude-sonnet-4-5\",\n    max_tokens: 512,\n    system: `Runner: ${JSON.stringify(meta)}\\n${POLICY}`,\n    messages: [{ role: \"user\", content: alert }],\n  });\n}\n\nmodule.exports = { triage };\n",
    'src/clean/route.ts': "import { anthropic } from \"@ai-sdk/anthropic\";\nimport { generateText, type CoreMessage } from \"ai\";\n\nconst SYSTEM = \"You are a concise assistant for the Acme developer portal. Answer with code samples where possible and link to the docs.\";\n\nexport async function answer(history: CoreMessage[], input: string) {\n  return generateText({\n    model: anthropic(\"claude-sonnet-4-5\"),\n    system: SYSTEM,\n    messages: [...history, { role: \"user\", content: `${input}\\n\\n(sent ${new Date().toISOString()})` }],\n  });\n}\n",
    'src/clean/tools.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\n\nexport async function run(servers: { listTools(): Promise<any[]> }[], q: string) {\n  const registry: Record<string, any> = {};\n  await Promise.all(servers.map(async (s) => { for (const t of await s.listTools()) registry[t.name] = t; }));\n  const tools = Object.values(registry).sort((a, b) => a.name.localeCompare(b.name));\n  const perServer = await Promise.all(servers.map((s) => s.listTools()));\n  return client.chat.completions.create({ model: \"gpt-4o\", tools: [...tools, ...perServer.flat()], messages: [{ role: \"user\", content: q }] });\n}\n",
    'src/lib/host.ts': "import { hostname } from \"node:os\";\nexport const NODE_INFO = `Served by ${hostname()}`;\n",
    'src/lib/index.ts': "export * from \"./host\";\n",
    'src/tools/registry.ts': "import type { Client } from \"@modelcontextprotocol/sdk/client/index.js\";\n\nexport interface ToolDef { name: string; description: string; input_schema: unknown }\n\nexport class ToolRegistry {\n  private tools = new Map<string, ToolDef>();\n\n  async connect(clients: Client[]) {\n    await Promise.all(\n      clients.map(async (c) => {\n        const { tools } = await c.listTools();\n        tools.forEach((t) => this.tools.set(t.name, { name: t.name, description: t.description ?? \"\", input_schema: t.inputSchema }));\n      }),\n    );\n  }\n\n  list(): ToolDef[] {\n    return Array.from(this.tools.values());\n  }\n}\n",
}

# (file, line, column, code): the hazard, and where it is reported. A value written in another module
# is reported there, naming the call that sends it (docs/typescript.md, "Findings in other modules").
HAZARDS = [
    ("lib/prompts/system.ts", 11, 16, "M101"),  # 1. dayjs() in lib/prompts/system.ts, imported as "@/lib/..."
    ("src/agent/Agent.ts", 13, 19, "M101"),  # 2. toLocaleDateString in a class's systemPrompt() (daily)
    ("src/tools/registry.ts", 10, 19, "M202"),  # 3. ToolRegistry.list(): a Map filled in async callbacks
    ("src/agent/prompt.ts", 3, 49, "M101"),  # 4. default-exported arrow prompt with new Date()
    # 5. hostname() through `export * from "./host"` (src/lib/host.ts, 2, 39) is no longer listed: M101
    # was changed after this set's run to report only when at least a block of shared text follows the
    # value (docs/rules/M101.md, "What it does"), and `Served by <host>` is the last system message right
    # before the user turn. This case is why the count changed (11 findings, now 10).
    ("src/agent/support.mjs", 9, 22, "M203"),  # 6. `text +=` over `await readdir(dir)`
    ("src/agent/telemetry.js", 8, 24, "M101"),  # 7. JSON.stringify({ host: os.hostname(), pid: ... })
    ("src/agent/telemetry.js", 8, 44, "M101"),  # 7. ... and its process.pid
    ("src/agent/responses.ts", 8, 21, "M101"),  # 8. uuidv4() (`v4 as uuidv4` from "uuid") in a developer item
    ("src/agent/graph.ts", 9, 20, "M101"),  # 9. createReactAgent({ prompt: `It is ${new Date()...}` })
    ("src/agent/cached.ts", 7, 33, "M106"),  # 10. toLocaleTimeString() before the handbook's breakpoint
]


def test_second_set_every_hazard_found_and_no_false_alarm(tmp_path):
    for name, text in FILES.items():
        path = tmp_path / "repo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    findings = run(tmp_path / "repo")
    got = sorted((Path(f.path).relative_to(tmp_path / "repo").as_posix(), f.line, f.column, f.code) for f in findings)
    assert got == sorted(HAZARDS), [(f.path, f.line, f.column, f.code, f.message) for f in findings]


# A third set, written after the second was green (an Express handler, an object-literal method,
# an async generator over a stream, a Gemini chat, plugins from a glob, a ternary, a static method,
# LangChain structured output, a Mastra agent, `unshift`). Its first run found 7 of 10: missed
# `Intl.DateTimeFormat(...).format(new Date())`, `prompts.system()` on an object literal and
# `Prompts.system()` (static); closed as families (formatters of a volatile value, object-literal
# methods here or imported, static methods).
THIRD = {
    'agents/gemini_chat.ts': "import { GoogleGenAI } from \"@google/genai\";\n\nconst ai = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY });\nconst PERSONA = \"You are a travel planner. Suggest itineraries with realistic travel times, mention visa requirements, and always give a budget range in the traveller's currency.\";\n\nexport function startPlanner(history: any[]) {\n  return ai.chats.create({\n    model: \"gemini-2.5-flash\",\n    config: { systemInstruction: `Today: ${new Date().toLocaleDateString()}\\n${PERSONA}` },\n    history,\n  });\n}\n",
    'agents/incident.ts': "import OpenAI from \"openai\";\nimport { prompts } from \"./prompts\";\n\nconst client = new OpenAI();\n\nexport async function incident(team: string, update: string) {\n  return client.chat.completions.create({\n    model: \"gpt-4o\",\n    messages: [\n      { role: \"system\", content: prompts.system({ team }) },\n      { role: \"user\", content: update },\n    ],\n  });\n}\n",
    'agents/mastra.ts': "import { Agent } from \"@mastra/core/agent\";\nimport { openai } from \"@ai-sdk/openai\";\n\nfunction buildInstructions(): string {\n  return `Clock: ${new Date().toISOString()}\\nYou are a recruiting coordinator. Schedule interviews in the candidate's time zone, confirm by email, and never share feedback with candidates.`;\n}\n\nexport const recruiter = new Agent({\n  name: \"recruiter\",\n  instructions: buildInstructions(),\n  model: openai(\"gpt-4o\"),\n});\n",
    'agents/plans.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\nconst COMMON = \"Answer billing questions with the exact figures from the account. Never change a plan without explicit confirmation from the account owner.\";\n\nexport async function billing(isPro: boolean, q: string) {\n  const sys = isPro\n    ? `Pro plan support. Local time ${new Date().toTimeString()}.\\n${COMMON}`\n    : `Free plan support. Local time ${new Date().toTimeString()}.\\n${COMMON}`;\n  return client.chat.completions.create({ model: \"gpt-4o\", messages: [{ role: \"system\", content: sys }, { role: \"user\", content: q }] });\n}\n",
    'agents/prompts.ts': "export const prompts = {\n  system(ctx: { team: string }) {\n    return `Epoch ${Date.now()}\\nYou are the incident commander's assistant for ${ctx.team}. Keep a timeline, assign owners, and never declare an incident resolved yourself.`;\n  },\n};\n",
    'agents/static.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\n\nclass Prompts {\n  static system(): string {\n    return `Build ${process.env.GIT_SHA}, tick ${process.hrtime.bigint()}\\nYou review pull requests for security issues. Point to the exact line, explain the risk and suggest a fix. Never approve a pull request yourself.`;\n  }\n}\n\nexport async function review(diff: string) {\n  return client.chat.completions.create({ model: \"gpt-4o\", messages: [{ role: \"system\", content: Prompts.system() }, { role: \"user\", content: diff }] });\n}\n",
    'agents/stream.ts': "import Anthropic from \"@anthropic-ai/sdk\";\nimport { randomUUID } from \"node:crypto\";\n\nconst client = new Anthropic();\nconst BASE = Array(80).fill(\"Answer from the knowledge base only; cite the article id; say you do not know when it is not covered.\").join(\"\\n\");\n\nexport async function* answer(question: string) {\n  const stream = client.messages.stream({\n    model: \"claude-sonnet-4-5\",\n    max_tokens: 1024,\n    system: [\n      { type: \"text\", text: `Session ${randomUUID()}` },\n      { type: \"text\", text: BASE, cache_control: { type: \"ephemeral\" } },\n    ],\n    messages: [{ role: \"user\", content: question }],\n  });\n  for await (const event of stream) yield event;\n}\n",
    'agents/structured.ts': "import { ChatOpenAI } from \"@langchain/openai\";\nimport { z } from \"zod\";\n\nconst model = new ChatOpenAI({ model: \"gpt-4o\" }).withStructuredOutput(z.object({ label: z.string() }));\nconst TAXONOMY = \"Classify the ticket into exactly one of: billing, bug, feature-request, account, other. Use 'other' only when nothing else fits, and never invent a new label.\";\n\nexport async function classify(ticket: string) {\n  const nonce = Math.random().toString(36).slice(2);\n  return model.stream([[\"system\", `Run ${nonce}\\n${TAXONOMY}`], [\"human\", ticket]]);\n}\n",
    'agents/tools.ts': "import Anthropic from \"@anthropic-ai/sdk\";\nimport { globSync } from \"glob\";\n\nconst client = new Anthropic();\n\nexport async function withPlugins(q: string) {\n  const handlers: Record<string, any> = {};\n  for (const file of globSync(\"plugins/*.js\")) {\n    const mod = await import(file);\n    handlers[mod.name] = mod;\n  }\n  const tools = Object.entries(handlers).map(([name, h]) => ({ name, description: h.description, input_schema: h.schema }));\n  return client.messages.create({ model: \"claude-sonnet-4-5\", max_tokens: 512, tools, messages: [{ role: \"user\", content: q }] });\n}\n",
    'agents/unshift.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\nconst BASE = \"You are a SQL assistant. Write ANSI SQL, explain each join, and refuse to run statements that modify data. Always add a LIMIT to exploratory queries.\";\n\nexport async function sql(history: { role: \"user\" | \"assistant\"; content: string }[], q: string) {\n  const messages: any[] = [...history, { role: \"user\", content: q }];\n  const header = `[${new Date().toISOString()}] `;\n  messages.unshift({ role: \"system\", content: header + BASE });\n  return client.chat.completions.create({ model: \"gpt-4o\", messages });\n}\n",
    'clean/skills.ts': "import OpenAI from \"openai\";\nimport { readdirSync } from \"node:fs\";\n\nconst client = new OpenAI();\nconst SKILLS = readdirSync(\"./skills\").sort().map((f) => `- ${f}`).join(\"\\n\");\n\nexport async function ask(q: string) {\n  return client.chat.completions.create({ model: \"gpt-4o\", messages: [{ role: \"system\", content: `Skills:\\n${SKILLS}\\nRegion: ${process.env.REGION}` }, { role: \"user\", content: `${q}\\n(asked at ${new Date().toISOString()})` }] });\n}\n",
    'package.json': "{\"name\":\"third\"}\n",
    'server/app.js': "const express = require(\"express\");\nconst OpenAI = require(\"openai\");\n\nconst openai = new OpenAI();\nconst app = express();\nconst RULES = \"You are the storefront assistant. Recommend products from the catalog only, quote prices with currency, and hand over to a human for returns or complaints. Never collect payment details in chat.\";\n\nconst systemFor = (user) => `Now: ${new Intl.DateTimeFormat(\"en-GB\", { dateStyle: \"full\", timeStyle: \"long\" }).format(new Date())}\\n${RULES}\\nShopper: ${user.name}`;\n\napp.post(\"/chat\", async (req, res) => {\n  const completion = await openai.chat.completions.create({\n    model: \"gpt-4o-mini\",\n    messages: [{ role: \"system\", content: systemFor(req.user) }, ...req.body.messages],\n  });\n  res.json(completion);\n});\n",
}

THIRD_HAZARDS = [
    ("server/app.js", 8, 119, "M101"),  # Intl.DateTimeFormat(...).format(new Date()) in an Express handler's prompt
    ("agents/prompts.ts", 3, 21, "M101"),  # Date.now() in an object literal's method, imported
    ("agents/stream.ts", 12, 40, "M106"),  # randomUUID() before the knowledge base's breakpoint
    ("agents/gemini_chat.ts", 9, 44, "M101"),  # ai.chats.create config.systemInstruction (daily)
    ("agents/tools.ts", 8, 22, "M202"),  # tools from a globSync() loop, via Object.entries(...).map
    ("agents/plans.ts", 8, 39, "M101"),  # toTimeString() in either branch of a ternary
    ("agents/static.ts", 7, 50, "M101"),  # process.hrtime.bigint() in a static method
    ("agents/structured.ts", 8, 17, "M101"),  # Math.random() through .withStructuredOutput(...).stream
    ("agents/mastra.ts", 5, 20, "M101"),  # new Agent({ instructions: buildInstructions() })
    ("agents/unshift.ts", 8, 22, "M101"),  # a system message unshifted onto the history
]


def test_third_set_every_hazard_found_and_no_false_alarm(tmp_path):
    for name, text in THIRD.items():
        path = tmp_path / "repo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    findings = run(tmp_path / "repo")
    got = sorted((Path(f.path).relative_to(tmp_path / "repo").as_posix(), f.line, f.column, f.code) for f in findings)
    assert got == sorted(THIRD_HAZARDS), [(f.path, f.line, f.column, f.code, f.message) for f in findings]


# A fourth set, written after the third was green (date-fns `format`, a `beta...parse` with an
# arrow building messages, `forEach(async ...)`, module-level per-process ids, `messages.push`, a
# settings object from `readdirSync`, a Bedrock `ConverseStreamCommand` input built apart, a wrapper
# `callLLM({ system, user })` in another module, a class field arrow, LangChain `fromTemplate`).
# Its first run found 7 of 10: missed the wrapper in another module (also not walked: the caller
# names no SDK), the class field arrow and `SystemMessagePromptTemplate.fromTemplate`; closed as
# families (cross-module wrappers as sinks and their callers walked, arrow fields as methods,
# LangChain.js prompt templates).
FOURTH = {
    'package.json': "{\"name\":\"fourth\"}\n",
    'src/bedrock.ts': "import { BedrockRuntimeClient, ConverseStreamCommand, type ConverseStreamCommandInput } from \"@aws-sdk/client-bedrock-runtime\";\n\nconst client = new BedrockRuntimeClient({ region: \"us-east-1\" });\nconst POLICY = \"You are a compliance assistant. Cite the regulation article for every statement and flag anything that needs legal review.\";\n\nexport async function stream(q: string) {\n  const params: ConverseStreamCommandInput = {\n    modelId: \"anthropic.claude-3-haiku-20240307-v1:0\",\n    system: [{ text: `${new Date().toUTCString()}\\n${POLICY}` }],\n    messages: [{ role: \"user\", content: [{ text: q }] }],\n  };\n  return client.send(new ConverseStreamCommand(params));\n}\n",
    'src/bot.ts': "import Anthropic from \"@anthropic-ai/sdk\";\n\nexport class Bot {\n  private client = new Anthropic();\n  private build = () => `Tick ${Date.now()}\\nYou moderate the community forum. Remove spam, warn on first offence, and escalate threats to a human moderator immediately.`;\n\n  async run(post: string) {\n    return this.client.messages.create({ model: \"claude-sonnet-4-5\", max_tokens: 128, system: this.build(), messages: [{ role: \"user\", content: post }] });\n  }\n}\n",
    'src/caller.ts': "import { callLLM } from \"./llm\";\n\nconst POLICY = \"You write release notes for the mobile app. Group changes by feature, keep each bullet under twenty words, and never mention internal ticket numbers.\";\n\nexport async function notes(changes: string) {\n  return callLLM({ system: `Date ${new Date().toDateString()}\\n${POLICY}`, user: changes });\n}\n",
    'src/foreach.js': "const Anthropic = require(\"@anthropic-ai/sdk\");\nconst client = new Anthropic();\n\nasync function withServers(servers, q) {\n  const tools = [];\n  servers.forEach(async (s) => {\n    tools.push(...(await s.list()));\n  });\n  await new Promise((r) => setTimeout(r, 100));\n  return client.messages.create({ model: \"claude-sonnet-4-5\", max_tokens: 256, tools, messages: [{ role: \"user\", content: q }] });\n}\nmodule.exports = { withServers };\n",
    'src/instance.ts': "import os from \"node:os\";\nimport OpenAI from \"openai\";\n\nconst client = new OpenAI();\nconst INSTANCE = `${os.hostname()}-${process.pid}`;\nconst GUIDE = \"You answer questions about the internal deployment pipeline. Name the exact job, the stage and the owner team, and link the runbook.\";\n\nexport async function ask(q: string) {\n  return client.chat.completions.create({ model: \"gpt-4o\", messages: [{ role: \"system\", content: `[${INSTANCE}] ${GUIDE}` }, { role: \"user\", content: q }] });\n}\n",
    'src/lctemplate.ts': "import { ChatPromptTemplate, SystemMessagePromptTemplate, HumanMessagePromptTemplate } from \"@langchain/core/prompts\";\n\nconst RULES = \"You are a code reviewer for TypeScript. Point to the line, explain the problem, and propose a minimal fix. Do not comment on formatting.\";\n\nexport const reviewPrompt = ChatPromptTemplate.fromMessages([\n  SystemMessagePromptTemplate.fromTemplate(`Reviewed at ${new Date().toISOString()}\\n${RULES}`),\n  HumanMessagePromptTemplate.fromTemplate(\"{diff}\"),\n]);\n",
    'src/llm.ts': "import OpenAI from \"openai\";\n\nconst openai = new OpenAI();\n\nexport async function callLLM({ system, user }: { system: string; user: string }) {\n  return openai.chat.completions.create({\n    model: \"gpt-4o\",\n    messages: [{ role: \"system\", content: system }, { role: \"user\", content: user }],\n  });\n}\n",
    'src/object.ts': "import { generateObject } from \"ai\";\nimport { google } from \"@ai-sdk/google\";\nimport { format } from \"date-fns\";\nimport { z } from \"zod\";\n\nconst RUBRIC = \"Grade the essay on structure, evidence and clarity from 1 to 5 each. Quote the sentence that justifies every grade and never grade content you cannot see.\";\n\nexport async function grade(essay: string) {\n  return generateObject({\n    model: google(\"gemini-2.0-flash\"),\n    schema: z.object({ structure: z.number(), evidence: z.number(), clarity: z.number() }),\n    system: `Graded on ${format(new Date(), \"PPPpp\")}\\n${RUBRIC}`,\n    prompt: essay,\n  });\n}\n",
    'src/parse.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\nconst SYSTEM = \"Extract the invoice fields: vendor, date, total, currency and line items. Return null for anything missing and never guess a currency.\";\n\nconst buildMessages = (history: OpenAI.ChatCompletionMessageParam[]) => [\n  { role: \"system\" as const, content: `t=${Date.now()}\\n${SYSTEM}` },\n  ...history,\n];\n\nexport async function extract(history: OpenAI.ChatCompletionMessageParam[]) {\n  return client.beta.chat.completions.parse({ model: \"gpt-4o-2024-08-06\", messages: buildMessages(history) });\n}\n",
    'src/pushsys.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\nconst PERSONA = \"You are a friendly onboarding guide for new engineers. Point them to the right docs, explain acronyms, and suggest who to ask for help.\";\n\nexport async function onboard(q: string) {\n  const messages: OpenAI.ChatCompletionMessageParam[] = [];\n  messages.push({ role: \"system\", content: `conversation ${crypto.randomUUID()}\\n${PERSONA}` });\n  messages.push({ role: \"user\", content: q });\n  return client.chat.completions.create({ model: \"gpt-4o\", messages });\n}\n",
    'src/settings.ts': "import OpenAI from \"openai\";\nimport { readdirSync, readFileSync } from \"node:fs\";\n\nconst client = new OpenAI();\n\nexport async function configured(q: string) {\n  const settings: Record<string, string> = {};\n  for (const f of readdirSync(\"./settings\")) settings[f] = readFileSync(`./settings/${f}`, \"utf8\");\n  return client.chat.completions.create({ model: \"gpt-4o\", messages: [{ role: \"system\", content: `Settings: ${JSON.stringify(settings)}` }, { role: \"user\", content: q }] });\n}\n",
}

FOURTH_HAZARDS = [
    ("src/object.ts", 12, 33, "M101"),  # format(new Date(), "PPPpp") (date-fns) in generateObject's system
    ("src/parse.ts", 7, 44, "M101"),  # Date.now() in an arrow that builds the messages of beta...parse
    ("src/foreach.js", 6, 19, "M202"),  # tools pushed from `servers.forEach(async ...)`
    ("src/instance.ts", 5, 21, "M101"),  # a module-level `${os.hostname()}-${process.pid}` id
    ("src/instance.ts", 5, 38, "M101"),  # ... and its pid
    ("src/pushsys.ts", 8, 60, "M101"),  # crypto.randomUUID() in a system message pushed first
    ("src/settings.ts", 9, 111, "M201"),  # JSON.stringify of an object filled over readdirSync()
    ("src/bedrock.ts", 9, 25, "M101"),  # toUTCString() in a ConverseStreamCommandInput built apart
    ("src/caller.ts", 6, 36, "M101"),  # toDateString() passed to callLLM({ system }) of src/llm.ts
    ("src/bot.ts", 5, 33, "M101"),  # Date.now() in a class field arrow, called as this.build()
    ("src/lctemplate.ts", 6, 59, "M101"),  # SystemMessagePromptTemplate.fromTemplate(`Reviewed at ${...}`)
]


def test_fourth_set_every_hazard_found_and_no_false_alarm(tmp_path):
    for name, text in FOURTH.items():
        path = tmp_path / "repo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    findings = run(tmp_path / "repo")
    got = sorted((Path(f.path).relative_to(tmp_path / "repo").as_posix(), f.line, f.column, f.code) for f in findings)
    assert got == sorted(FOURTH_HAZARDS), [(f.path, f.line, f.column, f.code, f.message) for f in findings]


# A fifth set, written after the fourth was green (a NestJS service, a Remix action, plugins merged
# with Object.assign in async callbacks, JSON of a context holding a Date, OpenAI Assistants runs, a
# fluent request builder, Vercel tools with a conditional spread, a Fly.io machine id, a random
# seed, a Gemini startChat). Its first run found 6 of 10 with one false alarm (a date after the
# user's input `q` in the user message: `q` was not known to be per-request). Closed as families:
# Object.assign fills its target, JSON of partly unknown data keeps its volatile values, Assistants
# `instructions` (request object in second place), unknown text in a user message is that request's
# input. The fluent builder (`new RequestBuilder().system(...).build()`) was missed until objects of the
# linted classes were carried through the method calls made on them (tssource.instances).
FIFTH = {
    'package.json': "{\"name\":\"fifth\"}\n",
    'src/action.ts': "import OpenAI from \"openai\";\n\nconst openai = new OpenAI();\n\nfunction stamp(): string {\n  return Date.now().toString(36);\n}\n\nconst systemPrompt = () => `build ${stamp()}\\nYou are a recipe assistant. Suggest recipes from the user's pantry, list missing ingredients, and give cooking times in minutes.`;\n\nexport const action = async ({ request }: { request: Request }) => {\n  const form = await request.formData();\n  return openai.chat.completions.create({ model: \"gpt-4o-mini\", messages: [{ role: \"system\", content: systemPrompt() }, { role: \"user\", content: String(form.get(\"q\")) }] });\n};\n",
    'src/assistant.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\n\nexport async function run(threadId: string) {\n  return client.beta.threads.runs.create(threadId, {\n    assistant_id: \"asst_123\",\n    instructions: `Timestamp ${new Date().toISOString()}. You are a tutoring assistant. Ask one question at a time, never give the full solution, and praise effort.`,\n  });\n}\n",
    'src/builder.ts': "import Anthropic from \"@anthropic-ai/sdk\";\n\nconst client = new Anthropic();\n\nclass RequestBuilder {\n  private params: any = { model: \"claude-sonnet-4-5\", max_tokens: 512 };\n  system(text: string) { this.params.system = text; return this; }\n  user(text: string) { this.params.messages = [{ role: \"user\", content: text }]; return this; }\n  build() { return this.params; }\n}\n\nexport async function ask(q: string) {\n  const params = new RequestBuilder().system(`Run ${Math.random()}\\nYou summarise meeting notes into decisions, owners and deadlines. Keep it to ten bullets.`).user(q).build();\n  return client.messages.create(params);\n}\n",
    'src/clean/ordered.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\nconst TOOLS = { lookup: { description: \"Look up an order\" }, refund: { description: \"Start a refund\" } };\n\nexport async function ask(q: string) {\n  const tools = Object.entries(TOOLS).map(([name, t]) => ({ type: \"function\" as const, function: { name, description: t.description } }));\n  return client.chat.completions.create({ model: \"gpt-4o\", tools, messages: [{ role: \"system\", content: `Region: ${process.env.REGION}` }, { role: \"user\", content: `${q} (at ${new Date().toISOString()})` }] });\n}\n",
    'src/context.ts': "import Anthropic from \"@anthropic-ai/sdk\";\n\nconst client = new Anthropic();\n\nexport async function answer(user: { id: string; plan: string }, q: string) {\n  const context = { time: new Date(), plan: user.plan };\n  return client.messages.create({\n    model: \"claude-sonnet-4-5\",\n    max_tokens: 256,\n    system: `Context:\\n${JSON.stringify(context, null, 2)}\\nYou help customers with their subscription. Quote prices from the plan table only and never offer discounts.`,\n    messages: [{ role: \"user\", content: q }],\n  });\n}\n",
    'src/edge.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\nconst STYLE = \"You write product descriptions in a warm, concise tone. Mention materials and care instructions, and never exaggerate.\";\n\nexport async function describe(product: string) {\n  const seed = crypto.getRandomValues(new Uint32Array(1))[0];\n  return client.chat.completions.create({ model: \"gpt-4o\", messages: [{ role: \"system\", content: `Variant ${seed}\\n${STYLE}` }, { role: \"user\", content: product }] });\n}\n",
    'src/fly.ts': "import OpenAI from \"openai\";\n\nconst client = new OpenAI();\nconst RULES = \"You route support tickets to the right queue: billing, technical, account or sales. Reply with the queue name and a one-line reason.\";\n\nexport async function route(ticket: string) {\n  return client.chat.completions.create({ model: \"gpt-4o-mini\", messages: [{ role: \"system\", content: `Machine: ${process.env.FLY_MACHINE_ID}\\n${RULES}` }, { role: \"user\", content: ticket }] });\n}\n",
    'src/gemini.ts': "import { GoogleGenerativeAI } from \"@google/generative-ai\";\n\nconst genAI = new GoogleGenerativeAI(process.env.GOOGLE_API_KEY!);\nconst model = genAI.getGenerativeModel({ model: \"gemini-1.5-flash\" });\n\nexport function coach(history: any[]) {\n  return model.startChat({\n    history,\n    systemInstruction: { role: \"system\", parts: [{ text: `Session opened ${new Date().toISOString()}. You are a running coach. Build weekly plans, adjust for injuries, and never give medical advice.` }] },\n  });\n}\n",
    'src/plugins.ts': "import OpenAI from \"openai\";\n\nconst openai = new OpenAI();\n\nexport async function withPlugins(plugins: { tools(): Promise<Record<string, any>> }[], q: string) {\n  const toolsByName: Record<string, any> = {};\n  await Promise.all(plugins.map(async (p) => Object.assign(toolsByName, await p.tools())));\n  const tools = Object.entries(toolsByName).map(([name, t]) => ({ type: \"function\" as const, function: { name, description: t.description, parameters: t.schema } }));\n  return openai.chat.completions.create({ model: \"gpt-4o\", tools, messages: [{ role: \"user\", content: q }] });\n}\n",
    'src/support.service.ts': "import { Injectable } from \"@nestjs/common\";\nimport Anthropic from \"@anthropic-ai/sdk\";\n\n@Injectable()\nexport class SupportService {\n  constructor(private readonly anthropic: Anthropic) {}\n\n  private buildSystem(user: { name: string }): string {\n    return `Fiscal year ${new Date().getFullYear()}. You are the finance help desk. Explain expense rules, approval limits and reimbursement timelines. Never approve expenses yourself. The employee is ${user.name}.`;\n  }\n\n  async reply(user: { name: string }, text: string) {\n    return this.anthropic.messages.create({ model: \"claude-sonnet-4-5\", max_tokens: 512, system: this.buildSystem(user), messages: [{ role: \"user\", content: text }] });\n  }\n}\n",
    'src/vercel.ts': "import { anthropic } from \"@ai-sdk/anthropic\";\nimport { streamText, tool, convertToCoreMessages } from \"ai\";\nimport { z } from \"zod\";\n\nconst SYSTEM = `UTC now: ${new Date().toLocaleString(\"en-US\", { timeZone: \"UTC\" })}\nYou are the docs assistant for Acme's API. Answer with code samples in TypeScript and link to the reference page.`;\n\nconst adminTools = { purge: tool({ description: \"Purge a cache\", parameters: z.object({ key: z.string() }) }) };\n\nexport function POST(user: { isAdmin: boolean }, messages: any[]) {\n  return streamText({\n    model: anthropic(\"claude-3-5-haiku-latest\"),\n    system: SYSTEM,\n    messages: convertToCoreMessages(messages),\n    tools: { search: tool({ description: \"Search the docs\", parameters: z.object({ q: z.string() }) }), ...(user.isAdmin ? adminTools : {}) },\n  });\n}\n",
}

FIFTH_HAZARDS = [
    ("src/support.service.ts", 9, 27, "M101"),  # getFullYear() in a NestJS service's buildSystem (daily)
    ("src/action.ts", 6, 10, "M101"),  # Date.now().toString(36) in a Remix action's system prompt
    ("src/plugins.ts", 7, 33, "M202"),  # tools merged with Object.assign inside async callbacks
    ("src/context.ts", 6, 27, "M101"),  # JSON.stringify({ time: new Date(), plan }, null, 2)
    ("src/assistant.ts", 8, 32, "M101"),  # beta.threads.runs.create(threadId, { instructions })
    ("src/builder.ts", 13, 53, "M101"),  # Math.random() through a fluent RequestBuilder (found since tssource.instances)
    ("src/vercel.ts", 5, 28, "M101"),  # toLocaleString at the head of a module-level SYSTEM
    ("src/fly.ts", 7, 115, "M101"),  # process.env.FLY_MACHINE_ID
    ("src/edge.ts", 7, 16, "M101"),  # crypto.getRandomValues(...)[0]
    ("src/gemini.ts", 9, 76, "M101"),  # startChat({ systemInstruction: { parts: [{ text }] } })
]


def test_fifth_set_every_hazard_found_and_no_false_alarm(tmp_path):
    for name, text in FIFTH.items():
        path = tmp_path / "repo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    findings = run(tmp_path / "repo")
    got = sorted((Path(f.path).relative_to(tmp_path / "repo").as_posix(), f.line, f.column, f.code) for f in findings)
    assert got == sorted(FIFTH_HAZARDS), [(f.path, f.line, f.column, f.code, f.message) for f in findings]


# A sixth set, written after the fifth was green, in styles no earlier set used (a Next.js route
# handler importing its system blocks from lib/, the Vercel AI SDK's providerOptions cacheControl
# on a system message, LangChain.js ChatPromptTemplate tuples, a Bedrock ConverseCommand in
# CommonJS, @google/genai systemInstruction, a class-based agent whose subclass overrides the prompt
# its base class sends, a Map filled from readdirSync in a forEach, fetches pushed from `.then`
# callbacks, JSON of Object.entries of flags filled by forEach(async ...), process.cwd imported from
# node:process), and clean counter-examples. The expected findings were written before the first run.
# That run found 6 of 10, no false alarm. Missed: the Next.js route (`const { question, team } =
# await req.json()` gave both names one node, so the team read as the user's question and the clock
# after it as this turn's), the subclass's prompt (no `extends` lookup), the Map filled in a
# `forEach` over `readdirSync` (a callback's iterable was not an order source) and the `.then`
# pushes (only `async` callbacks ran in completion order). Closed as families
# (test_typescript_families): destructured names are distinct values, methods/getters/fields/
# constructors through the classes a class extends, array-method callbacks iterate their receiver,
# promise continuations run in completion order.
SIXTH = {
    "package.json": '{"name": "sixth", "private": true}\n',
    # 1. Next.js route handler; the prompt module in lib/ builds a two-block system with the clock
    #    in the first block, the breakpoint on the second (M106 at toLocaleString in lib/prompt.ts)
    "lib/prompt.ts": (
        'const HANDBOOK = Array.from({ length: 40 }, (_, i) => `Section ${i + 1}: answer only from the handbook and cite the section number.`).join("\\n");\n'
        "\n"
        "export function systemBlocks(team: string) {\n"
        "  return [\n"
        '    { type: "text" as const, text: `Team ${team}. Local time ${new Date().toLocaleString("en-GB")}` },\n'
        '    { type: "text" as const, text: HANDBOOK, cache_control: { type: "ephemeral" as const } },\n'
        "  ];\n"
        "}\n"),
    "app/api/assist/route.ts": (
        'import Anthropic from "@anthropic-ai/sdk";\n'
        'import { NextRequest, NextResponse } from "next/server";\n'
        'import { systemBlocks } from "../../../lib/prompt";\n'
        "\n"
        "const anthropic = new Anthropic();\n"
        "\n"
        "export async function POST(req: NextRequest) {\n"
        "  const { question, team } = await req.json();\n"
        "  const msg = await anthropic.messages.create({\n"
        '    model: "claude-sonnet-4-5",\n'
        "    max_tokens: 1024,\n"
        "    system: systemBlocks(team),\n"
        '    messages: [{ role: "user", content: question }],\n'
        "  });\n"
        "  return NextResponse.json(msg);\n"
        "}\n"),
    # 2. Vercel AI SDK: a system message with providerOptions.anthropic.cacheControl, Date.now() in it (M106)
    "src/vercel-cache.ts": (
        'import { streamText, type CoreMessage } from "ai";\n'
        'import { anthropic } from "@ai-sdk/anthropic";\n'
        "\n"
        'const GUIDE = Array.from({ length: 30 }, (_, i) => `Guideline ${i + 1}: prefer small, reviewable changes.`).join("\\n");\n'
        "\n"
        "export function review(diff: string) {\n"
        "  const messages: CoreMessage[] = [\n"
        "    {\n"
        '      role: "system",\n'
        "      content: `Review started ${Date.now()}\\n${GUIDE}`,\n"
        '      providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },\n'
        "    },\n"
        '    { role: "user", content: diff },\n'
        "  ];\n"
        '  return streamText({ model: anthropic("claude-sonnet-4-5"), messages });\n'
        "}\n"),
    # 3. LangChain.js ChatPromptTemplate with a daily date in the system tuple (M101)
    "src/lc-prompt.ts": (
        'import { ChatPromptTemplate } from "@langchain/core/prompts";\n'
        'import { ChatOpenAI } from "@langchain/openai";\n'
        "\n"
        "const model = new ChatOpenAI({ model: \"gpt-4o-mini\" });\n"
        "\n"
        "export async function classify(input: string) {\n"
        "  const prompt = ChatPromptTemplate.fromMessages([\n"
        '    ["system", `As of ${new Date().toDateString()} you classify support tickets into billing, bugs, or accounts. Answer with one word and nothing else.`],\n'
        '    ["human", "{input}"],\n'
        "  ]);\n"
        "  return prompt.pipe(model).invoke({ input });\n"
        "}\n"),
    # 4. Bedrock ConverseCommand: the host name before the cachePoint (M106), CommonJS
    "src/bedrock.cjs": (
        'const { BedrockRuntimeClient, ConverseCommand } = require("@aws-sdk/client-bedrock-runtime");\n'
        'const os = require("node:os");\n'
        "\n"
        "const client = new BedrockRuntimeClient({});\n"
        'const POLICY = Array.from({ length: 40 }, (_, i) => `Policy ${i + 1}: never share customer data outside the account.`).join("\\n");\n'
        "\n"
        "async function answer(question) {\n"
        "  const command = new ConverseCommand({\n"
        '    modelId: "anthropic.claude-3-5-sonnet-20241022-v2:0",\n'
        "    system: [{ text: `Served by ${os.hostname()}\\n${POLICY}` }, { cachePoint: { type: \"default\" } }],\n"
        '    messages: [{ role: "user", content: [{ text: question }] }],\n'
        "  });\n"
        "  return client.send(command);\n"
        "}\n"
        "\n"
        "module.exports = { answer };\n"),
    # 5. Gemini (@google/genai) config.systemInstruction with performance.now() (M101)
    "src/gemini.mts": (
        'import { GoogleGenAI } from "@google/genai";\n'
        "\n"
        "const ai = new GoogleGenAI({});\n"
        'const STYLE = "You are a travel planner. Suggest three itineraries, each with a budget line, and ask one clarifying question at the end.";\n'
        "\n"
        "export async function plan(request: string) {\n"
        "  const t0 = performance.now();\n"
        "  return ai.models.generateContent({\n"
        '    model: "gemini-2.5-flash",\n'
        "    contents: request,\n"
        "    config: { systemInstruction: `trace=${t0.toFixed(0)}\\n${STYLE}` },\n"
        "  });\n"
        "}\n"),
    # 6. class-based agent: the subclass overrides the prompt its base class sends (M101)
    "src/agents/base.ts": (
        'import OpenAI from "openai";\n'
        "\n"
        "export abstract class BaseAgent {\n"
        "  protected client = new OpenAI();\n"
        "  protected abstract systemPrompt(): string;\n"
        "\n"
        "  async run(input: string) {\n"
        "    return this.client.chat.completions.create({\n"
        '      model: "gpt-4o",\n'
        "      messages: [\n"
        '        { role: "system", content: this.systemPrompt() },\n'
        '        { role: "user", content: input },\n'
        "      ],\n"
        "    });\n"
        "  }\n"
        "}\n"),
    "src/agents/support.ts": (
        'import { BaseAgent } from "./base";\n'
        "\n"
        "export class SupportAgent extends BaseAgent {\n"
        "  protected systemPrompt(): string {\n"
        "    return `Session opened ${new Date().toISOString()}. You are a support agent for Acme. Be concise, link to the docs and never promise a refund.`;\n"
        "  }\n"
        "}\n"
        "\n"
        "export const support = (q: string) => new SupportAgent().run(q);\n"),
    # 7. Map filled from readdirSync in a forEach callback, its values as tools (M202 at readdirSync)
    "src/tool-dir.js": (
        'import OpenAI from "openai";\n'
        'import { readdirSync, readFileSync } from "node:fs";\n'
        "\n"
        "const client = new OpenAI();\n"
        "const registry = new Map();\n"
        'readdirSync("./tools").forEach((f) => registry.set(f, JSON.parse(readFileSync(`./tools/${f}`, "utf8"))));\n'
        "\n"
        "export async function act(q) {\n"
        "  return client.chat.completions.create({\n"
        '    model: "gpt-4o",\n'
        "    tools: [...registry.values()],\n"
        '    messages: [{ role: "user", content: q }],\n'
        "  });\n"
        "}\n"),
    # 8. Promise.all over fetches whose .then callbacks push in completion order, joined into the system (M203 at `chunks`)
    "src/gather.ts": (
        'import OpenAI from "openai";\n'
        "\n"
        "const openai = new OpenAI();\n"
        "\n"
        "export async function brief(urls: string[], q: string) {\n"
        "  const chunks: string[] = [];\n"
        "  await Promise.all(urls.map((u) => fetch(u).then((r) => r.text()).then((t) => chunks.push(t))));\n"
        '  const context = chunks.join("\\n---\\n");\n'
        "  return openai.chat.completions.create({\n"
        '    model: "gpt-4o",\n'
        "    messages: [\n"
        '      { role: "system", content: `Sources:\\n${context}` },\n'
        '      { role: "user", content: q },\n'
        "    ],\n"
        "  });\n"
        "}\n"),
    # 9. JSON.stringify of an object built from Object.entries of flags filled by forEach(async ...) (M201)
    "src/flags.ts": (
        'import Anthropic from "@anthropic-ai/sdk";\n'
        "\n"
        "const client = new Anthropic();\n"
        "\n"
        "export async function withFlags(names: string[], load: (n: string) => Promise<{ on: boolean }>, q: string) {\n"
        "  const flags: Record<string, { on: boolean }> = {};\n"
        "  names.forEach(async (n) => { flags[n] = await load(n); });\n"
        "  const summary = JSON.stringify(Object.fromEntries(Object.entries(flags).map(([k, v]) => [k, v.on])));\n"
        "  return client.messages.create({\n"
        '    model: "claude-sonnet-4-5",\n'
        "    max_tokens: 512,\n"
        "    system: `Feature flags: ${summary}\\nYou answer questions about the product's current behaviour.`,\n"
        '    messages: [{ role: "user", content: q }],\n'
        "  });\n"
        "}\n"),
    # 10. process.cwd() through `import { cwd } from "node:process"` in a module-level system text (M101)
    "scripts/repo-bot.mjs": (
        'import OpenAI from "openai";\n'
        'import { cwd } from "node:process";\n'
        "\n"
        "const client = new OpenAI();\n"
        "const SYSTEM = `Repository root: ${cwd()}\\nYou are a code-review bot. Comment only on correctness and security, one comment per issue.`;\n"
        "\n"
        "export async function reviewFile(patch) {\n"
        "  return client.chat.completions.create({ model: \"gpt-4.1\", messages: [{ role: \"system\", content: SYSTEM }, { role: \"user\", content: patch }] });\n"
        "}\n"),
    # clean counter-examples
    "clean/route.ts": (
        'import OpenAI from "openai";\n'
        "\n"
        "const openai = new OpenAI();\n"
        'const SYSTEM = "You are the Acme help desk. Answer in two sentences and link to the relevant article.";\n'
        "\n"
        "export async function POST(req: Request) {\n"
        "  const { question } = await req.json();\n"
        "  return openai.chat.completions.create({\n"
        '    model: "gpt-4o",\n'
        "    messages: [\n"
        '      { role: "system", content: SYSTEM },\n'
        '      { role: "user", content: `${question}\\n\\nSent at ${new Date().toISOString()}` },\n'
        "    ],\n"
        "  });\n"
        "}\n"),
    "clean/tools-in-order.ts": (
        'import OpenAI from "openai";\n'
        "\n"
        "const client = new OpenAI();\n"
        "\n"
        "export async function act(servers: { listTools(): Promise<{ name: string }[]> }[], q: string) {\n"
        "  const byName = new Map<string, { name: string }>();\n"
        "  for (const s of servers) {\n"
        "    for (const t of await s.listTools()) byName.set(t.name, t);\n"
        "  }\n"
        '  return client.chat.completions.create({ model: "gpt-4o", tools: [...byName.values()], messages: [{ role: "user", content: q }] });\n'
        "}\n"),
    "clean/summaries.ts": (
        'import OpenAI from "openai";\n'
        "\n"
        "const client = new OpenAI();\n"
        "\n"
        "export async function digest(docs: { summarize(): Promise<string> }[], q: string) {\n"
        "  const parts = await Promise.all(docs.map(async (d) => d.summarize()));\n"
        '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: parts.join("\\n") }, { role: "user", content: q }] });\n'
        "}\n"),
    "clean/sorted-flags.ts": (
        'import OpenAI from "openai";\n'
        "\n"
        "const client = new OpenAI();\n"
        "\n"
        "export async function flagged(names: string[], load: (n: string) => Promise<boolean>, q: string) {\n"
        "  const flags: Record<string, boolean> = {};\n"
        "  await Promise.all(names.map(async (n) => { flags[n] = await load(n); }));\n"
        "  const text = JSON.stringify(Object.fromEntries(Object.entries(flags).sort(([a], [b]) => a.localeCompare(b))));\n"
        '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: `Flags ${text}` }, { role: "user", content: q }] });\n'
        "}\n"),
    "clean/bedrock-static.ts": (
        'import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";\n'
        "\n"
        "const client = new BedrockRuntimeClient({});\n"
        'const POLICY = Array.from({ length: 40 }, (_, i) => `Policy ${i + 1}: never share customer data outside the account.`).join("\\n");\n'
        "\n"
        "export async function ask(q: string) {\n"
        "  return client.send(new ConverseCommand({\n"
        '    modelId: "anthropic.claude-3-5-sonnet-20241022-v2:0",\n'
        '    system: [{ text: POLICY }, { cachePoint: { type: "default" } }],\n'
        "    messages: [{ role: \"user\", content: [{ text: `${q}\\n(${new Date().toISOString()})` }] }],\n"
        "  }));\n"
        "}\n"),
}


SIXTH_HAZARDS = [
    ("lib/prompt.ts", 5, 64, "M106"),  # 1. Next.js route; clock before the handbook's breakpoint (in lib/)
    ("src/vercel-cache.ts", 10, 34, "M106"),  # 2. providerOptions cacheControl on a system message
    ("src/lc-prompt.ts", 8, 25, "M101"),  # 3. ChatPromptTemplate system tuple, daily date
    ("src/bedrock.cjs", 10, 35, "M106"),  # 4. ConverseCommand, host name before cachePoint
    ("src/gemini.mts", 7, 14, "M101"),  # 5. Gemini systemInstruction, performance.now()
    ("src/agents/support.ts", 5, 30, "M101"),  # 6. subclass prompt sent by the base class's run()
    ("src/tool-dir.js", 6, 1, "M202"),  # 7. Map from readdirSync in forEach -> tools
    ("src/gather.ts", 8, 19, "M203"),  # 8. .then(...) pushes in completion order, joined
    ("src/flags.ts", 8, 19, "M201"),  # 9. JSON of Object.entries of flags filled by forEach(async)
    ("scripts/repo-bot.mjs", 5, 36, "M101"),  # 10. process.cwd via `import { cwd } from "node:process"`
]


def test_sixth_set_every_hazard_found_and_no_false_alarm(tmp_path):
    for name, text in SIXTH.items():
        path = tmp_path / "repo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    findings = run(tmp_path / "repo")
    got = sorted((Path(f.path).relative_to(tmp_path / "repo").as_posix(), f.line, f.column, f.code) for f in findings)
    assert got == sorted(SIXTH_HAZARDS), [(f.path, f.line, f.column, f.code, f.message) for f in findings]
