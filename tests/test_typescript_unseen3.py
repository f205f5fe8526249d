"""A blind TS/JS set (third file of unseen sets): agent CLIs, a Next.js app, an Electron app and a VS Code
extension in styles no earlier set used: a prompt passed through `super(...)` to a base agent class, a
curried prompt factory (closure), Vercel AI SDK tools from `Object.fromEntries` of a Map filled in
`Promise.allSettled` async callbacks, a fast-glob listing folded with `reduce`, `structuredClone` of
probes filled in completion order, a `String.raw` tagged system message, a switch-on-mode builder in
CommonJS, a zod tool whose description carries a module-load time before a system breakpoint, a renamed
re-export (`export { a as b } from`), an `export default class` with ES `#private` methods streamed by an
async generator; and clean look-alikes (the time after the last breakpoint or after the question, tools
sorted after an async fill, `Promise.all` results in input order, `Object.keys` of a literal, a Set of
literal arrays, deployment-constant environment variables, an id only in a non-prompt field).

First run (once, at commit ed7200d of branch s30 merged with this file, before any change made for it):
9 of 10 hazards found at the expected file, line, column and code; no false alarm (nothing on the clean
files, nothing beyond the ten). Missed: 4, `lib/handbook.cjs` (M203 at `fg.sync(`): fast-glob named by its
package (`const fg = require("fast-glob")` makes the call `fast-glob.sync`, which the listing table did
not know), and `files.reduce((text, file) => text + ...)` was not followed (its value was unknown text,
the listing's order lost). Closed as families in tests/test_typescript_reach.py: listing functions named
by their package (fast-glob, glob, globby, tinyglobby), `reduce`/`reduceRight` (folded item by item over a
known array; text folded from an unordered one keeps its order hazard), and a name that only holds a
listing reported at the listing itself. The expectations below are unchanged.

The expected findings below were written before anyone ran promptlint on these files. A hazard is named
by its file, a needle that occurs exactly once in that file and starts where the hazard is made (the
volatile expression, the completion-order callback, the directory listing, the serialisation), and its
code; line and column are the needle's (1-based, as findings count them).
"""

from __future__ import annotations

from pathlib import Path

from test_typescript import run

FILES = {
    "package.json": '{"name": "unseen-three", "private": true, "type": "module"}\n',
    # 1. Agent CLI: the subclass hands its instructions to the base class through super(...); the
    #    base class sends them (M101 at nanoid() in triage-agent.ts, sent from base-agent.ts via cli.ts)
    "src/agents/base-agent.ts": r"""import Anthropic from "@anthropic-ai/sdk";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";

export class BaseAgent {
  protected readonly client = new Anthropic();
  private readonly history: MessageParam[] = [];

  constructor(private readonly instructions: string, private readonly model = "claude-sonnet-4-5") {}

  async ask(text: string) {
    this.history.push({ role: "user", content: text });
    const reply = await this.client.messages.create({
      model: this.model,
      max_tokens: 2048,
      system: this.instructions,
      messages: this.history,
    });
    this.history.push({ role: "assistant", content: reply.content });
    return reply;
  }
}
""",
    "src/agents/triage-agent.ts": r"""import { nanoid } from "nanoid";
import { BaseAgent } from "./base-agent";

const TRIAGE_RULES = [
  "You triage bug reports for the Lumen desktop app.",
  "Ask for the app version, the operating system and the exact steps to reproduce when any of them is missing.",
  "Label each report with exactly one of: crash, data-loss, ui, performance, feature-request.",
  "Search the known-issues list before filing anything new and link the duplicate when you find one.",
  "Quote error messages verbatim inside code blocks and never paraphrase a stack trace.",
  "Never promise a release date and never close a report yourself.",
].join("\n");

export default class TriageAgent extends BaseAgent {
  constructor() {
    super(`conversation ${nanoid()}\n${TRIAGE_RULES}`);
  }
}
""",
    "src/cli.ts": r"""import Anthropic from "@anthropic-ai/sdk";
import { Command } from "commander";
import TriageAgent from "./agents/triage-agent";

const program = new Command("lumen-triage");

program
  .argument("<report>", "the bug report text")
  .action(async (report: string) => {
    try {
      const reply = await new TriageAgent().ask(report);
      console.log(reply.content);
    } catch (err) {
      if (err instanceof Anthropic.APIError) console.error(`API error ${err.status}`);
      else throw err;
    }
  });

program.parseAsync(process.argv);
""",
    # 2. A curried prompt factory: persona(tone) returns a closure; the clock is read inside it
    #    (M101 at moment() in lib/prompt-kit.mjs, sent as Responses `instructions` by lib/newsletter.mjs)
    "lib/prompt-kit.mjs": r"""import moment from "moment";

const VOICE = {
  formal: "Write in a formal register: full sentences, no contractions, no exclamation marks.",
  friendly: "Write in a warm, friendly register: short sentences, plain words, one emoji at most.",
};

const HOUSE_RULES = `You are Quill, the newsletter writer for a small independent bookshop.
Every issue has three parts: new arrivals, a staff pick and upcoming events.
Mention each book with its title in italics, the author and the price in euros.
Never invent a book, an author or an event; use only the catalogue entries you are given.
Keep the whole issue under four hundred words and end with the shop's opening hours.`;

export const persona = (tone) => (section) =>
  `Drafted ${moment().format("dddd, MMMM Do YYYY, h:mm:ss a")}\n${HOUSE_RULES}\n${VOICE[tone]}\nSection: ${section}`;
""",
    "lib/newsletter.mjs": r"""import OpenAI from "openai";
import { persona } from "./prompt-kit.mjs";

const client = new OpenAI();
const friendly = persona("friendly");

export async function draftSection(section, catalogue) {
  const response = await client.responses.create({
    model: "gpt-4.1-mini",
    instructions: friendly(section),
    input: catalogue,
  });
  return response.output_text;
}
""",
    # 3. Next.js route: Vercel AI SDK tools made with tool(), collected into a Map from MCP servers in
    #    Promise.allSettled async callbacks (completion order), handed over as Object.fromEntries(map)
    #    (M202 at the async callback in lib/mcp/tools.ts)
    "lib/mcp/servers.ts": r"""import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const SERVERS = [
  { name: "github", command: "npx", args: ["-y", "@modelcontextprotocol/server-github"] },
  { name: "filesystem", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] },
];

export async function connectServers(): Promise<Client[]> {
  const clients: Client[] = [];
  for (const s of SERVERS) {
    const client = new Client({ name: `web-${s.name}`, version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: s.command, args: s.args }));
    clients.push(client);
  }
  return clients;
}
""",
    "lib/mcp/tools.ts": r"""import { tool, jsonSchema, type Tool } from "ai";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

export async function loadTools(clients: Client[]): Promise<Record<string, Tool>> {
  const byName = new Map<string, Tool>();
  await Promise.allSettled(
    clients.map(async (client) => {
      const { tools } = await client.listTools();
      for (const t of tools) {
        byName.set(
          t.name,
          tool({
            description: t.description ?? "",
            parameters: jsonSchema(t.inputSchema as any),
            execute: async (args) => client.callTool({ name: t.name, arguments: args }),
          }),
        );
      }
    }),
  );
  return Object.fromEntries(byName);
}
""",
    "app/api/agent/route.ts": r"""import { openai } from "@ai-sdk/openai";
import { streamText, type CoreMessage } from "ai";
import { connectServers } from "../../../lib/mcp/servers";
import { loadTools } from "../../../lib/mcp/tools";

export const maxDuration = 60;

const SYSTEM = `You are Harbor, the engineering assistant of the web team.
Use the GitHub tools to read issues and pull requests and the filesystem tools to read the checked-out repository.
Before you change anything, state which files you will touch and why.
Prefer small pull requests with a clear title, a summary of the change and a test plan.
Never push to the main branch, never force-push, and never delete a branch you did not create.
When a tool fails, report the error message verbatim and stop instead of guessing.`;

export async function POST(req: Request) {
  const { messages }: { messages: CoreMessage[] } = await req.json();
  const tools = await loadTools(await connectServers());
  const result = streamText({
    model: openai("gpt-4o"),
    system: SYSTEM,
    tools,
    maxSteps: 8,
    messages,
  });
  return result.toDataStreamResponse();
}
""",
    # 4. CommonJS docs bot: the handbook is the fast-glob listing folded with reduce into one text,
    #    sent first in a LangChain SystemMessage (M203 at fg.sync( in lib/handbook.cjs)
    "lib/handbook.cjs": r"""const fg = require("fast-glob");
const { readFileSync } = require("node:fs");

function loadHandbook(root) {
  const files = fg.sync(`${root}/**/*.md`, { onlyFiles: true });
  return files.reduce((text, file) => text + `### ${file}\n` + readFileSync(file, "utf8") + "\n\n", "");
}

module.exports = { loadHandbook };
""",
    "bin/docs-bot.cjs": r"""const { ChatOpenAI } = require("@langchain/openai");
const { SystemMessage, HumanMessage } = require("@langchain/core/messages");
const { loadHandbook } = require("../lib/handbook.cjs");

const GUIDE = `Answer only from the handbook above. Quote the heading of every section you rely on.
If the handbook does not cover the question, say so and name the team that owns the topic.
Keep answers under two hundred words and use numbered steps for procedures.`;

const model = new ChatOpenAI({ model: "gpt-4o-mini", temperature: 0 });

async function main() {
  const question = process.argv.slice(2).join(" ");
  const handbook = loadHandbook("handbook");
  const res = await model.invoke([new SystemMessage(`${handbook}\n${GUIDE}`), new HumanMessage(question)]);
  console.log(res.content);
}

main();
""",
    # 5. Electron main process: capability probes written into an object in completion order, copied
    #    with structuredClone and serialised first in the system prompt (M201 at JSON.stringify(snapshot)
    "electron/main/probes.ts": r"""import { app } from "electron";
import si from "systeminformation";

const PROBES = {
  gpu: async () => (await si.graphics()).controllers.map((c) => c.model).join(", "),
  memory: async () => `${Math.round((await si.mem()).total / 2 ** 30)} GB`,
  os: async () => {
    const info = await si.osInfo();
    return `${info.distro} ${info.release}`;
  },
  locale: async () => app.getLocale(),
};

export async function capabilityReport(): Promise<string> {
  const caps: Record<string, string> = {};
  await Promise.all(
    Object.keys(PROBES).map(async (key) => {
      caps[key] = await PROBES[key as keyof typeof PROBES]();
    }),
  );
  const snapshot = structuredClone(caps);
  return JSON.stringify(snapshot, null, 2);
}
""",
    "electron/main/assistant.ts": r"""import Anthropic from "@anthropic-ai/sdk";
import { ipcMain } from "electron";
import { capabilityReport } from "./probes";

const anthropic = new Anthropic();

const HELP = `You are the built-in helper of Darkroom, a desktop photo editor.
Explain features in terms of the menus and shortcuts the user can see, and give shortcuts for both macOS and Windows.
When a feature needs a GPU the machine does not have, say so and suggest the CPU alternative.
Never ask for the user's files or account details, and never suggest editing the application's own files.
For crashes, ask for the log file from the Help menu and describe where to find it.`;

export function registerAssistant() {
  ipcMain.handle("assistant:ask", async (_event, question: string) => {
    const machine = await capabilityReport();
    const reply = await anthropic.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      system: `Machine:\n${machine}\n\n${HELP}`,
      messages: [{ role: "user", content: question }],
    });
    return reply.content;
  });
}
""",
    "electron/main/index.ts": r"""import { app, BrowserWindow } from "electron";
import { registerAssistant } from "./assistant";

app.whenReady().then(() => {
  registerAssistant();
  new BrowserWindow({ width: 1200, height: 800 }).loadFile("index.html");
});
""",
    # 6. A String.raw tagged system message with a ulid() trace id at its head, LangChain.js
    #    ChatAnthropic (M101 at ulid() in src/chains/prompts.js)
    "src/chains/prompts.js": r"""import { ulid } from "ulid";
import { SystemMessage } from "@langchain/core/messages";

export const sqlSystem = (dialect) =>
  new SystemMessage(String.raw`trace ${ulid()}
You translate questions about the sales warehouse into SQL.
Use only the tables orders, order_lines, customers and products, and join them on their id columns.
Always qualify column names with the table name and never use SELECT *.
Match text with regular expressions such as '^\d{4}-\d{2}$' instead of LIKE when the question gives a pattern.
Add LIMIT 100 to every query that is not an aggregate, and never write INSERT, UPDATE, DELETE or DDL.
Target dialect: ${dialect}`);
""",
    "src/chains/sql-chain.js": r"""import { ChatAnthropic } from "@langchain/anthropic";
import { HumanMessage } from "@langchain/core/messages";
import { sqlSystem } from "./prompts.js";

const llm = new ChatAnthropic({ model: "claude-3-5-haiku-latest", temperature: 0 });

export async function toSql(question) {
  const answer = await llm.invoke([sqlSystem("PostgreSQL"), new HumanMessage(question)]);
  return String(answer.content);
}
""",
    # 7. A switch-on-mode prompt builder in CommonJS whose banner names the Kubernetes pod
    #    (per process; M101 at process.env.POD_NAME in src/prompts/modes.cjs, sent by src/worker.cjs)
    "src/prompts/modes.cjs": r"""const REVIEW = `You review pull requests for the payments service.
Check error handling, idempotency of every handler and that amounts are integers in minor units.
Point to the exact file and line, explain the risk in one sentence and suggest the smallest fix.
Do not comment on formatting or naming unless it hides a bug.`;

const SUMMARY = `You summarise incident timelines for the payments service.
List what happened in order with UTC timestamps, the customer impact and the follow-up actions with owners.
Do not speculate about causes that the timeline does not support.`;

function buildPrompt(mode) {
  const banner = `worker ${process.env.POD_NAME}`;
  switch (mode) {
    case "review":
      return `${banner}\n${REVIEW}`;
    case "summary":
      return `${banner}\n${SUMMARY}`;
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}

module.exports = { buildPrompt };
""",
    "src/worker.cjs": r"""const OpenAI = require("openai");
const { buildPrompt } = require("./prompts/modes.cjs");

const openai = new OpenAI();

async function handle(job) {
  const completion = await openai.chat.completions.create({
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: buildPrompt(job.mode) },
      { role: "user", content: job.payload },
    ],
  });
  return completion.choices[0].message.content;
}

module.exports = { handle };
""",
    # 8. A zod-schema tool whose description carries the time its module was loaded (per process);
    #    tools come before the system block that carries the breakpoint (M106 at new Date() in
    #    src/tools/search-tool.ts, sent by src/support-agent.ts)
    "src/tools/search-tool.ts": r"""import { z } from "zod";
import { zodToJsonSchema } from "zod-to-json-schema";

const INDEX_LOADED_AT = new Date().toISOString();

const SearchInput = z.object({
  query: z.string().describe("words to look for in ticket titles and bodies"),
  limit: z.number().int().max(20).default(5),
});

export const searchTool = {
  name: "search_tickets",
  description: `Full-text search over support tickets. The index was loaded at ${INDEX_LOADED_AT}; tickets filed later are not in it.`,
  input_schema: zodToJsonSchema(SearchInput) as { type: "object" },
};
""",
    "src/support-agent.ts": r"""import Anthropic from "@anthropic-ai/sdk";
import { searchTool } from "./tools/search-tool";

const client = new Anthropic();
const PLAYBOOK = Array.from(
  { length: 80 },
  (_, i) => `Playbook rule ${i + 1}: find the customer's order first, quote the policy paragraph that applies, and propose exactly one next step.`,
).join("\n");

export async function answerTicket(ticket: string) {
  return client.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    tools: [searchTool],
    system: [{ type: "text", text: PLAYBOOK, cache_control: { type: "ephemeral" } }],
    messages: [{ role: "user", content: ticket }],
  });
}
""",
    # 9. A renamed re-export (`export { composeSystem as systemPrompt } from`) read by a Next.js server
    #    component (.tsx) that asks Gemini (M101 at new Date() in src/prompts/compose.ts)
    "src/prompts/compose.ts": r"""const CATALOGUE_RULES = `You are the shopping assistant of an outdoor equipment store.
Recommend only products from the catalogue, with their name, size range and price.
Ask about the season, the terrain and the budget before recommending a tent, a sleeping bag or boots.
Mention the return policy (thirty days, unused, with receipt) when the customer hesitates.
Never recommend a competitor and never guess stock levels.`;

export function composeSystem(storeName: string): string {
  const refreshed = new Date().toISOString();
  return `Catalogue refreshed ${refreshed}.\n${CATALOGUE_RULES}\nStore: ${storeName}`;
}
""",
    "src/prompts/index.ts": r"""export { composeSystem as systemPrompt } from "./compose";
export const STORE_NAME = "Northwind Outdoor";
""",
    "app/shop/page.tsx": r"""import { GoogleGenerativeAI } from "@google/generative-ai";
import { systemPrompt, STORE_NAME } from "../../src/prompts/index";

const genAI = new GoogleGenerativeAI(process.env.GEMINI_API_KEY ?? "");

export default async function ShopPage({ searchParams }: { searchParams: { q?: string } }) {
  const model = genAI.getGenerativeModel({ model: "gemini-1.5-pro", systemInstruction: systemPrompt(STORE_NAME) });
  const result = await model.generateContent(searchParams.q ?? "What is new this week?");
  return (
    <main className="shop">
      <h1>{STORE_NAME} assistant</h1>
      <p>{result.response.text()}</p>
    </main>
  );
}
""",
    # 10. VS Code extension: an `export default class` whose ES #private method builds the system
    #     prompt, streamed by an async generator method (M101 at Date.now() in ChatSession.ts)
    "extension/src/chat/ChatSession.ts": r"""import OpenAI from "openai";
import * as vscode from "vscode";

const EDITOR_RULES = `You are Pilot, a coding assistant inside VS Code.
Answer about the code the user selected; when nothing is selected, ask which file they mean.
Show changes as unified diffs against the current file and keep each diff under forty lines.
Explain why a change is needed before showing it, and never invent APIs that the project does not import.
When a question is about the terminal, give the command for the shell the user is running.`;

export default class ChatSession {
  #client = new OpenAI({ apiKey: vscode.workspace.getConfiguration("pilot").get<string>("apiKey") });
  #history: OpenAI.ChatCompletionMessageParam[] = [];

  #system(): string {
    const turnId = `t${Date.now()}`;
    return `Turn ${turnId}\n${EDITOR_RULES}`;
  }

  async *reply(text: string): AsyncGenerator<string> {
    this.#history.push({ role: "user", content: text });
    const stream = await this.#client.chat.completions.create({
      model: "gpt-4o",
      stream: true,
      messages: [{ role: "system", content: this.#system() }, ...this.#history],
    });
    for await (const chunk of stream) yield chunk.choices[0]?.delta?.content ?? "";
  }
}
""",
    "extension/src/extension.ts": r"""import * as vscode from "vscode";
import ChatSession from "./chat/ChatSession";

export function activate(context: vscode.ExtensionContext) {
  const session = new ChatSession();
  const output = vscode.window.createOutputChannel("Pilot");
  context.subscriptions.push(
    vscode.commands.registerCommand("pilot.ask", async () => {
      const text = await vscode.window.showInputBox({ prompt: "Ask Pilot" });
      if (!text) return;
      for await (const piece of session.reply(text)) output.append(piece);
      output.show(true);
    }),
  );
}

export function deactivate() {}
""",
    # clean look-alikes: nothing may be reported in these
    # C1. the clock after the last breakpoint (Anthropic caches only up to the breakpoint on the head)
    "clean/head-breakpoint.ts": r"""import Anthropic from "@anthropic-ai/sdk";

const anthropic = new Anthropic();
const RUNBOOK = Array.from(
  { length: 80 },
  (_, i) => `Runbook entry ${i + 1}: confirm the alert is real, find the owning service, and post the first diagnostic command before anything else.`,
).join("\n");

export async function onCall(alert: string) {
  return anthropic.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    system: [
      { type: "text", text: RUNBOOK, cache_control: { type: "ephemeral" } },
      { type: "text", text: `Current time: ${new Date().toISOString()}` },
    ],
    messages: [{ role: "user", content: alert }],
  });
}
""",
    # C2. the same Promise.allSettled fill as case 3, the entries sorted before Object.fromEntries
    "clean/sorted-mcp-tools.ts": r"""import { anthropic } from "@ai-sdk/anthropic";
import { generateText, tool, jsonSchema, type Tool } from "ai";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

const SYSTEM = `You are the release assistant. Use the tools to read merged pull requests and draft the changelog.
Group entries by area, link every pull request, and flag anything that changes a public API.`;

export async function draftChangelog(clients: Client[], prompt: string) {
  const byName = new Map<string, Tool>();
  await Promise.allSettled(
    clients.map(async (client) => {
      const { tools } = await client.listTools();
      for (const t of tools) byName.set(t.name, tool({ description: t.description ?? "", parameters: jsonSchema(t.inputSchema as any) }));
    }),
  );
  const tools = Object.fromEntries([...byName].sort(([a], [b]) => a.localeCompare(b)));
  return generateText({ model: anthropic("claude-sonnet-4-5"), system: SYSTEM, tools, prompt });
}
""",
    # C3. chapters read with Promise.all (input order), JSON of structuredClone of a literal, the date
    #     after the question
    "clean/handbook-in-order.mjs": r"""import OpenAI from "openai";
import { readFile } from "node:fs/promises";

const client = new OpenAI();
const CHAPTERS = ["handbook/intro.md", "handbook/billing.md", "handbook/shipping.md", "handbook/returns.md"];
const DEFAULTS = { currency: "EUR", locale: "de-DE", tone: "neutral" };

export async function answer(question) {
  const chapters = await Promise.all(CHAPTERS.map((p) => readFile(p, "utf8")));
  const settings = JSON.stringify(structuredClone(DEFAULTS));
  return client.chat.completions.create({
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: `Settings: ${settings}\n${chapters.join("\n\n")}\nYou answer customer questions using only the chapters above.` },
      { role: "user", content: `${question}\n\n(asked ${new Date().toISOString()})` },
    ],
  });
}
""",
    # C4. a server action (.tsx): Object.keys of a literal, a deployment-constant region, the time after the input
    "clean/commands-action.tsx": r""""use server";
import { openai } from "@ai-sdk/openai";
import { generateText } from "ai";

const COMMANDS = {
  "/explain": "explain the selected code in plain words",
  "/fix": "propose the smallest change that fixes the reported problem",
  "/test": "write unit tests for the selected function",
  "/doc": "write a doc comment for the selected symbol",
};

const HELP = Object.keys(COMMANDS)
  .map((name) => `${name}: ${COMMANDS[name as keyof typeof COMMANDS]}`)
  .join("\n");

export async function runCommand(input: string) {
  const { text } = await generateText({
    model: openai("gpt-4o-mini"),
    system: `Region ${process.env.DEPLOY_REGION}\nYou are a coding assistant with these commands:\n${HELP}\nAnswer with code first, then one short paragraph.`,
    prompt: `${input}\n\nLocal time: ${new Date().toLocaleTimeString()}`,
  });
  return <pre className="answer">{text}</pre>;
}
""",
    # C5. tools from a Set of literal arrays, pushed by a synchronous this.-arrow forEach; Array.from(map.values())
    "clean/toolbox.ts": r"""import OpenAI from "openai";

type ToolDef = OpenAI.ChatCompletionTool;

const fn = (name: string, description: string): ToolDef => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
});

const DEFS = new Map<string, ToolDef>([
  ["read_file", fn("read_file", "Read a file from the workspace")],
  ["search", fn("search", "Search the workspace for a symbol")],
  ["run_tests", fn("run_tests", "Run the tests under a path")],
]);
const CORE = ["read_file", "search"];
const GUIDE = "You are a workspace assistant. Read before you edit, explain every change, and run the tests after each edit.";

export class Toolbox {
  private readonly defs: ToolDef[] = [];
  private readonly client = new OpenAI();

  constructor(extra: string[]) {
    const names = [...new Set([...CORE, ...extra])];
    names.forEach((n) => {
      const d = DEFS.get(n);
      if (d) this.defs.push(d);
    });
  }

  async ask(q: string) {
    return this.client.chat.completions.create({
      model: "gpt-4o",
      tools: this.defs,
      messages: [{ role: "system", content: GUIDE }, { role: "user", content: `${q}\n(sent ${new Date().toISOString()})` }],
    });
  }

  async askWithAll(q: string) {
    return this.client.chat.completions.create({
      model: "gpt-4o",
      tools: Array.from(DEFS.values()),
      messages: [{ role: "system", content: GUIDE }, { role: "user", content: q }],
    });
  }
}

export const ask = (q: string) => new Toolbox(["run_tests"]).ask(q);
""",
    # C6. the switch-on-mode builder with a deployment constant; the request id only in non-prompt fields
    "clean/region-worker.cjs": r"""const OpenAI = require("openai");
const { randomUUID } = require("node:crypto");

const openai = new OpenAI();
const RULES = {
  review: "You review pull requests for the ledger service. Point to the exact line, explain the risk and suggest the smallest fix.",
  summary: "You summarise incident timelines for the ledger service in order, with impact and owners for every follow-up.",
};

function promptFor(mode) {
  switch (mode) {
    case "review":
      return `Region ${process.env.APP_REGION}\n${RULES.review}`;
    default:
      return `Region ${process.env.APP_REGION}\n${RULES.summary}`;
  }
}

async function run(job) {
  const requestId = randomUUID();
  const res = await openai.chat.completions.create({
    model: "gpt-4o-mini",
    user: requestId,
    metadata: { request_id: requestId },
    messages: [
      { role: "system", content: promptFor(job.mode) },
      { role: "user", content: job.payload },
    ],
  });
  return res.choices[0].message.content;
}

module.exports = { run };
""",
}

# (file, needle, code): the needle occurs once in the file and starts where the hazard is made.
# Written before any run; the line:column each resolves to is in the trailing comment.
HAZARDS = [
    ("src/agents/triage-agent.ts", "nanoid()}", "M101"),  # 1. super(`conversation ${nanoid()}...`) to the base agent (15:27)
    ("lib/prompt-kit.mjs", "moment()", "M101"),  # 2. clock inside a curried persona(tone)(section) closure (15:14)
    ("lib/mcp/tools.ts", "async (client)", "M202"),  # 3. Map filled in Promise.allSettled callbacks -> Object.fromEntries -> tools (7:17)
    ("lib/handbook.cjs", "fg.sync(", "M203"),  # 4. fast-glob listing folded by reduce into the system text (5:17)
    ("electron/main/probes.ts", "JSON.stringify(snapshot", "M201"),  # 5. structuredClone of probes filled in completion order (22:10)
    ("src/chains/prompts.js", "ulid()", "M101"),  # 6. String.raw tagged SystemMessage with a ulid at its head (5:40)
    ("src/prompts/modes.cjs", "process.env.POD_NAME", "M101"),  # 7. pod name in a switch-on-mode builder (11:28)
    ("src/tools/search-tool.ts", "new Date()", "M106"),  # 8. module-load time in a tool description, before the system breakpoint (4:25)
    ("src/prompts/compose.ts", "new Date()", "M101"),  # 9. via `export { composeSystem as systemPrompt } from` into Gemini (8:21)
    ("extension/src/chat/ChatSession.ts", "Date.now()", "M101"),  # 10. #system() of an export default class, async generator (15:24)
]

CLEAN = [
    "clean/head-breakpoint.ts",
    "clean/sorted-mcp-tools.ts",
    "clean/handbook-in-order.mjs",
    "clean/commands-action.tsx",
    "clean/toolbox.ts",
    "clean/region-worker.cjs",
]


def _where(name: str, needle: str) -> tuple[int, int]:
    text = FILES[name]
    assert text.count(needle) == 1, (name, needle)
    for n, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return n, line.index(needle) + 1
    raise AssertionError((name, needle))


def test_unseen_three_needles_are_unique_and_files_distinct():
    assert len(HAZARDS) == 10 and len({(f, n) for f, n, _ in HAZARDS}) == 10
    for name, needle, _ in HAZARDS:
        _where(name, needle)
    assert all(name in FILES for name in CLEAN) and len(CLEAN) >= 5
    assert not {f for f, _, _ in HAZARDS} & set(CLEAN)


def test_unseen_three_every_hazard_found_and_no_false_alarm(tmp_path):
    root = tmp_path / "repo"
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    findings = run(root)
    got = sorted((Path(f.path).relative_to(root).as_posix(), f.line, f.column, f.code) for f in findings)
    expected = sorted((name, *_where(name, needle), code) for name, needle, code in HAZARDS)
    on_clean = [g for g in got if g[0] in CLEAN]
    assert not on_clean, on_clean
    assert got == expected, [(f.path, f.line, f.column, f.code, f.message) for f in findings]
