"""How far the TS/JS evaluator follows a prompt: the families earlier unseen sets missed, each closed in
general and pinned here in TypeScript and JavaScript (CommonJS where the family is CommonJS), the
value written in one module and sent from another where the family is about crossing:

- a base class's constructor given the prompt by `super(...)`;
- `this` inside arrow callbacks, and pushes in a loop (or `forEach`) over a known array, applied
  item by item;
- function values that keep their bindings: a factory returning an object literal of prompt
  methods, a higher-order prompt factory (`const make = (opts) => () => `...``), an agent object a
  factory returns whose method sends the request, OpenAI Agents' `instructions: (ctx) => ...`;
- `export default class` (and `module.exports = Class`), `module.exports.x = function`,
  `module.exports = function` imported as a whole;
- objects a factory returns (`await Agent.create()`), a constructor's arguments taken from the
  module's own `new Agent(...)` (TypeScript parameter properties included);
- more volatile sources: `new Intl.DateTimeFormat(...).format()`, `performance.now()` from
  `perf_hooks`, an id generator made by `customAlphabet(...)` (here or imported),
  `process.env["HOSTNAME"]` and `const { POD_NAME } = process.env`, `require("os").hostname()`, a
  process manager's instance number (`NODE_APP_INSTANCE`), arithmetic and `Math.floor` on the
  clock, `+new Date()`;
- `dedent(...)` called (not tagged); a switch on a mode assigning the prompt in its cases, or
  returning request options; a table or a `Map` of prompts indexed by mode; a default after `??`;
  a random pick from a list; React's `useMemo`; a generator yielding the prompt's sections; a
  digest of the clock; tools pushed by an event listener (in arrival order, M202); `reduce` (folded
  item by item over a known array; text folded from a listing keeps its order, M203); listing
  functions named by their package (`fast-glob`, `glob`, `globby`), a name that only holds a
  listing reported at the listing (the third unseen set's miss);

with the M101 figures recomputed (test_typescript.check_figures), the finding reached through the
call that sends it (never "the call that sends it is not in the linted files"), and clean
counter-examples (every branch overwrites the clock; the clock at the end of a factory's text; a
deployment constant read by subscript; a loop over a sorted listing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_typescript import POLICY, as_js, as_ts, check_figures, run

SUFFIX = {"ts": ".ts", "js": ".js", "cjs": ".cjs"}
# A closing instruction of more than a block (B = 16) of tokens: after the last stamp of a loop, so
# the stamps precede shared text and M101 is a real hazard (docs/rules/M101.md, the threshold).
CLOSING = "Be brief, quote the order number and the policy section you rely on, and offer a human agent when unsure."
ALONE = "not in the linted files"


def write(tmp_path: Path, files: dict, lang: str) -> Path:
    """Each module as TypeScript or CommonJS JavaScript (test_typescript.as_js), or as written for that
    language when the family gives both (``{"ts": ..., "js": ...}``)."""
    root = tmp_path / lang
    for name, source in files.items():
        if isinstance(source, dict):
            source = source["js" if lang == "cjs" else lang]
        else:
            source = as_ts(source) if lang == "ts" else as_js(source)
        path = root / (name + SUFFIX[lang])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root


def at(root: Path, name: str, lang: str, needle: str):
    path = root / (name + SUFFIX[lang])
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if needle in line:
            return path.name, n, line.index(needle) + 1
    raise AssertionError(f"{needle!r} not in {path}")


AGENT_OPENAI = (
    'import OpenAI from "openai";\n'
    "const client = new OpenAI();\n")


def sends(call: str) -> str:
    return ("export async function ask(q⟨: string⟩) {\n"
            f'  return client.chat.completions.create({{ model: "gpt-4o", messages: [{{ role: "system", content: {call} }}, '
            '{ role: "user", content: q }] });\n'
            "}\n")


# family -> (modules, langs, (module, marker) of the M101, the base render's static prefix and suffix)
FAMILIES = {
    "super-arguments-reach-the-base-constructor": ({
        "src/base": (
            'import OpenAI from "openai";\n'
            "export class BaseAgent {\n"
            "  client = new OpenAI();\n"
            "  system⟨: string⟩;\n"
            "  constructor(system⟨: string⟩) { this.system = system; }\n"
            "  async run(input⟨: string⟩) {\n"
            '    return this.client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: this.system }, { role: "user", content: input }] });\n'
            "  }\n"
            "}\n"),
        "src/support": (
            'import { BaseAgent } from "./base";\n'
            f'const SUPPORT_PROMPT = "{POLICY}";\n'
            "export class SupportAgent extends BaseAgent {\n"
            "  constructor() { super(`Opened ${new Date().toISOString()}\\n${SUPPORT_PROMPT}`); }\n"
            "}\n"
            "export const support = (q⟨: string⟩) => new SupportAgent().run(q);\n"),
    }, ("ts", "js"), ("src/support", "new Date()"), "Opened ", f"\n{POLICY}\n\n{{Q}}"),
    "this-in-arrow-callbacks-over-known-items": ({
        "src/builder": (
            "export class PromptBuilder {\n"
            "  parts⟨: string[]⟩ = [];\n"
            "  sections⟨: string[]⟩;\n"
            "  constructor(sections⟨: string[]⟩) { this.sections = sections; }\n"
            "  stamp()⟨: string⟩ { return new Date().toISOString(); }\n"
            "  build()⟨: string⟩ {\n"
            "    this.sections.forEach((s) => this.parts.push(`[${this.stamp()}] ${s}`));\n"
            '    return this.parts.join("\\n");\n'
            "  }\n"
            "}\n"),
        "src/agent": (
            AGENT_OPENAI + 'import { PromptBuilder } from "./builder";\n'
            f'const POLICY = "{POLICY}";\n'
            + sends(f'new PromptBuilder([POLICY, "{CLOSING}"]).build()')),
    }, ("ts", "js"), ("src/builder", "new Date()"), "[", f"] {CLOSING}\n\n{{Q}}"),
    "for-of-pushes-over-a-known-array": ({
        "src/agent": (
            AGENT_OPENAI + f'const SECTIONS = ["{POLICY}", "Cite sources.", "Be brief."];\n'
            "function build()⟨: string⟩ {\n"
            "  const parts⟨: string[]⟩ = [];\n"
            "  for (const s of SECTIONS) parts.push(`${s} (${Date.now()})`);\n"
            f'  parts.push("{CLOSING}");\n'
            '  return parts.join("\\n");\n'
            "}\n" + sends("build()")),
    }, ("ts", "js"), ("src/agent", "Date.now()"), f"{POLICY} (", f")\n{CLOSING}\n\n{{Q}}"),
    "factory-returns-an-object-of-prompt-methods": ({
        "src/prompts": (
            f'const POLICY = "{POLICY}";\n'
            "export function createPrompts(product⟨: string⟩) {\n"
            "  return {\n"
            "    system() { return `Generated ${new Date().toISOString()}\\n${POLICY}\\nProduct: ${product}`; },\n"
            "  };\n"
            "}\n"),
        "src/agent": (AGENT_OPENAI + 'import { createPrompts } from "./prompts";\nconst prompts = createPrompts("acme");\n'
                      + sends("prompts.system()")),
    }, ("ts", "js"), ("src/prompts", "new Date()"), "Generated ", f"\n{POLICY}\nProduct: acme\n\n{{Q}}"),
    "higher-order-prompt-factory": ({
        "src/prompts": (
            f'const POLICY = "{POLICY}";\n'
            "export const makeSystem = (opts⟨: { team: string }⟩) => () => `Epoch ${Date.now()}\\n${POLICY}\\nTeam ${opts.team}`;\n"),
        "src/agent": (AGENT_OPENAI + 'import { makeSystem } from "./prompts";\nconst system = makeSystem({ team: "core" });\n'
                      + sends("system()")),
    }, ("ts", "js"), ("src/prompts", "Date.now()"), "Epoch ", f"\n{POLICY}\nTeam core\n\n{{Q}}"),
    "agent-object-made-by-a-factory": ({
        "src/agentlib": (
            AGENT_OPENAI +
            "export function createAgent(opts⟨: { system: string }⟩) {\n"
            "  return {\n"
            "    async ask(q⟨: string⟩) {\n"
            '      return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: opts.system }, { role: "user", content: q }] });\n'
            "    },\n"
            "  };\n"
            "}\n"),
        "src/main": (
            'import { createAgent } from "./agentlib";\n'
            f'const POLICY = "{POLICY}";\n'
            "const agent = createAgent({ system: `Now ${new Date().toISOString()}\\n${POLICY}` });\n"
            "export const go = (q⟨: string⟩) => agent.ask(q);\n"),
    }, ("ts", "js"), ("src/main", "new Date()"), "Now ", f"\n{POLICY}\n\n{{Q}}"),
    "agent-instructions-function": ({
        "src/agent": (
            'import { Agent } from "@openai/agents";\n'
            f'const POLICY = "{POLICY}";\n'
            "export const agent = new Agent({\n"
            '  name: "support",\n'
            "  instructions: (ctx⟨: unknown⟩) => `Now ${new Date().toISOString()}\\n${POLICY}`,\n"
            "});\n"),
    }, ("ts", "js"), ("src/agent", "new Date()"), "Now ", f"\n{POLICY}"),
    "default-exported-class": ({
        "src/prompter": {
            "ts": (f'const POLICY = "{POLICY}";\n'
                   "export default class Prompter {\n"
                   "  system(): string { return `Now ${new Date().toISOString()}\\n${POLICY}`; }\n"
                   "}\n"),
            "js": (f'const POLICY = "{POLICY}";\n'
                   "class Prompter {\n"
                   "  system() { return `Now ${new Date().toISOString()}\\n${POLICY}`; }\n"
                   "}\n"
                   "module.exports = Prompter;\n"),
        },
        "src/agent": (AGENT_OPENAI + 'import P from "./prompter";\nconst p = new P();\n' + sends("p.system()")),
    }, ("ts", "js"), ("src/prompter", "new Date()"), "Now ", f"\n{POLICY}\n\n{{Q}}"),
    "module.exports-function-imported-whole": ({
        "src/prompts": {"js": (f'const POLICY = "{POLICY}";\n'
                               "module.exports = function () { return `Now ${new Date().toISOString()}\\n${POLICY}`; };\n")},
        "src/agent": {"js": ('const OpenAI = require("openai");\nconst client = new OpenAI();\n'
                             'const buildSystem = require("./prompts");\n'
                             + as_js(sends("buildSystem()")))},
    }, ("js", "cjs"), ("src/prompts", "new Date()"), "Now ", f"\n{POLICY}\n\n{{Q}}"),
    "module.exports-member-function": ({
        "src/prompts": {"js": (f'const POLICY = "{POLICY}";\n'
                               "module.exports.buildSystem = function () { return `Epoch ${Date.now()}\\n${POLICY}`; };\n")},
        "src/agent": {"js": ('const OpenAI = require("openai");\nconst client = new OpenAI();\n'
                             'const { buildSystem } = require("./prompts");\n'
                             + as_js(sends("buildSystem()")))},
    }, ("js", "cjs"), ("src/prompts", "Date.now()"), "Epoch ", f"\n{POLICY}\n\n{{Q}}"),
    "Intl.DateTimeFormat-format": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      'const clock = new Intl.DateTimeFormat("en-US", { dateStyle: "full", timeStyle: "long" });\n'
                      + sends("`It is ${clock.format()}\\n${POLICY}`")),
    }, ("ts", "js"), ("src/agent", "clock.format()"), "It is ", f"\n{POLICY}\n\n{{Q}}"),
    "performance.now-from-perf_hooks": ({
        "src/agent": (AGENT_OPENAI + 'import { performance } from "node:perf_hooks";\n' f'const POLICY = "{POLICY}";\n'
                      + sends("`t=${performance.now().toFixed(0)}\\n${POLICY}`")),
    }, ("ts", "js"), ("src/agent", "performance.now()"), "t=", f"\n{POLICY}\n\n{{Q}}"),
    "id-generator-made-by-customAlphabet": ({
        "src/ids": ('import { customAlphabet } from "nanoid";\n'
                    'export const traceId = customAlphabet("0123456789abcdef", 12);\n'),
        "src/agent": (AGENT_OPENAI + 'import { traceId } from "./ids";\n' f'const POLICY = "{POLICY}";\n'
                      "const tag = () => `Trace ${traceId()}`;\n"
                      + sends("`${tag()}\\n${POLICY}`")),
    }, ("ts", "js"), ("src/agent", "traceId()"), "Trace ", f"\n{POLICY}\n\n{{Q}}"),
    "process.env-destructured": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      "const { POD_NAME } = process.env;\n"
                      + sends('`Pod ${POD_NAME}\\n${POLICY}`')),
    }, ("ts", "js"), ("src/agent", "POD_NAME }"), "Pod ", f"\n{POLICY}\n\n{{Q}}"),
    "process.env-by-subscript": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      + sends('`Replica ${process.env["HOSTNAME"]}\\n${POLICY}`')),
    }, ("ts", "js"), ("src/agent", 'process.env["HOSTNAME"]'), "Replica ", f"\n{POLICY}\n\n{{Q}}"),
    "require(os).hostname": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      + sends('`Host ${require("node:os").hostname()}\\n${POLICY}`')),
    }, ("ts", "js"), ("src/agent", 'require("node:os").hostname()'), "Host ", f"\n{POLICY}\n\n{{Q}}"),
    "dedent-called": ({
        "src/prompts": ('import dedent from "dedent";\n' f'const POLICY = "{POLICY}";\n'
                        "export function systemText()⟨: string⟩ {\n"
                        "  return dedent(`\n    Now ${new Date().toISOString()}\n    ${POLICY}\n  `);\n"
                        "}\n"),
        "src/agent": AGENT_OPENAI + 'import { systemText } from "./prompts";\n' + sends("systemText()"),
    }, ("ts", "js"), ("src/prompts", "new Date()"), "Now ", f"\n{POLICY}\n\n{{Q}}"),
    "switch-on-mode-assigns-the-prompt": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      "export async function ask(mode⟨: string⟩, q⟨: string⟩) {\n"
                      "  let system = POLICY;\n"
                      "  switch (mode) {\n"
                      '    case "debug":\n'
                      "      system = `Debug session ${Date.now()}\\n${POLICY}`;\n"
                      "      break;\n"
                      '    case "terse":\n'
                      "      system = `Terse mode.\\n${POLICY}`;\n"
                      "      break;\n"
                      "  }\n"
                      '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: system }, { role: "user", content: q }] });\n'
                      "}\n"),
    }, ("ts", "js"), ("src/agent", "Date.now()"), "Debug session ", f"\n{POLICY}\n\n{{Q}}"),
    "generator-yields-the-sections": ({
        "src/sections": (f'const POLICY = "{POLICY}";\n'
                         "export function* sections() {\n"
                         "  yield `Generated ${new Date().toISOString()}`;\n"
                         "  yield POLICY;\n"
                         '  yield "Be brief.";\n'
                         "}\n"),
        "src/agent": AGENT_OPENAI + 'import { sections } from "./sections";\n' + sends('[...sections()].join("\\n")'),
    }, ("ts", "js"), ("src/sections", "new Date()"), "Generated ", f"\n{POLICY}\nBe brief.\n\n{{Q}}"),
    "arithmetic-and-Math-on-the-clock": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      "const epoch = () => Math.floor(Date.now() / 1000);\n"
                      + sends("`Epoch ${epoch()}\\n${POLICY}`")),
    }, ("ts", "js"), ("src/agent", "Date.now()"), "Epoch ", f"\n{POLICY}\n\n{{Q}}"),
    "unary-plus-of-a-date": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      + sends("`Request ${+new Date()}\\n${POLICY}`")),
    }, ("ts", "js"), ("src/agent", "new Date()"), "Request ", f"\n{POLICY}\n\n{{Q}}"),
    "process-manager-instance-env": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      + sends("`Worker ${process.env.NODE_APP_INSTANCE}\\n${POLICY}`")),
    }, ("ts", "js"), ("src/agent", "process.env.NODE_APP_INSTANCE"), "Worker ", f"\n{POLICY}\n\n{{Q}}"),
    "object-from-a-static-factory-method": ({
        "src/agent": {
            "ts": (AGENT_OPENAI.replace("⟨", "") + f'const POLICY = "{POLICY}";\n'
                   "export class Agent {\n"
                   "  constructor(private readonly system: string) {}\n"
                   "  static async create(): Promise<Agent> { return new Agent(`Booted ${new Date().toISOString()}\\n${POLICY}`); }\n"
                   "  async ask(q: string) {\n"
                   '    return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: this.system }, { role: "user", content: q }] });\n'
                   "  }\n"
                   "}\n"),
            "js": ('const OpenAI = require("openai");\nconst client = new OpenAI();\n' f'const POLICY = "{POLICY}";\n'
                   "class Agent {\n"
                   "  constructor(system) { this.system = system; }\n"
                   "  static async create() { return new Agent(`Booted ${new Date().toISOString()}\\n${POLICY}`); }\n"
                   "  async ask(q) {\n"
                   '    return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: this.system }, { role: "user", content: q }] });\n'
                   "  }\n"
                   "}\n"
                   "module.exports = { Agent };\n"),
        },
        "src/main": ('import { Agent } from "./agent";\n'
                     "export async function handle(q⟨: string⟩) {\n"
                     "  const agent = await Agent.create();\n"
                     "  return agent.ask(q);\n"
                     "}\n"),
    }, ("ts", "js"), ("src/agent", "new Date()"), "Booted ", f"\n{POLICY}\n\n{{Q}}"),
    "prompt-table-indexed-by-mode": ({
        "src/prompts": (f'const POLICY = "{POLICY}";\n'
                        "export const PROMPTS⟨: Record<string, string>⟩ = {\n"
                        "  chat: POLICY,\n"
                        "  debug: `Debug ${new Date().toISOString()}\\n${POLICY}`,\n"
                        "};\n"),
        "src/agent": (AGENT_OPENAI + 'import { PROMPTS } from "./prompts";\n'
                      "export async function ask(mode⟨: string⟩, q⟨: string⟩) {\n"
                      '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: PROMPTS[mode] }, { role: "user", content: q }] });\n'
                      "}\n"),
    }, ("ts", "js"), ("src/prompts", "new Date()"), "Debug ", f"\n{POLICY}\n\n{{Q}}"),
    "Map-of-prompts-by-mode": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      "const MODES = new Map([\n"
                      '  ["chat", POLICY],\n'
                      '  ["debug", `Debug ${new Date().toISOString()}\\n${POLICY}`],\n'
                      "]);\n"
                      "export async function ask(mode⟨: string⟩, q⟨: string⟩) {\n"
                      '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: MODES.get(mode) ?? POLICY }, { role: "user", content: q }] });\n'
                      "}\n"),
    }, ("ts", "js"), ("src/agent", "new Date()"), "Debug ", f"\n{POLICY}\n\n{{Q}}"),
    "random-pick-from-a-list": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      'const OPENERS = ["Hi!", "Hello!", "Hey there!"];\n'
                      "const opener = () => OPENERS[Math.floor(Math.random() * OPENERS.length)];\n"
                      + sends("`${opener()}\\n${POLICY}`")),
    }, ("ts", "js"), ("src/agent", "OPENERS[Math.floor"), "", f"\n{POLICY}\n\n{{Q}}"),
    "switch-returns-request-options": ({
        "src/config": (f'const POLICY = "{POLICY}";\n'
                       "export function config(mode⟨: string⟩) {\n"
                       "  switch (mode) {\n"
                       '    case "plain":\n'
                       "      return { system: POLICY, temperature: 0 };\n"
                       "    default:\n"
                       "      return { system: `Session ${Date.now()}\\n${POLICY}`, temperature: 1 };\n"
                       "  }\n"
                       "}\n"),
        "src/agent": (AGENT_OPENAI + 'import { config } from "./config";\n'
                      "export async function ask(mode⟨: string⟩, q⟨: string⟩) {\n"
                      "  const c = config(mode);\n"
                      '  return client.chat.completions.create({ model: "gpt-4o", temperature: c.temperature, messages: [{ role: "system", content: c.system }, { role: "user", content: q }] });\n'
                      "}\n"),
    }, ("ts", "js"), ("src/config", "Date.now()"), "Session ", f"\n{POLICY}\n\n{{Q}}"),
    "default-prompt-after-??": ({
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      "export async function ask(q⟨: string⟩, opts⟨: { system?: string }⟩ = {}) {\n"
                      "  const system = opts.system ?? `Started ${new Date().toISOString()}\\n${POLICY}`;\n"
                      '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: system }, { role: "user", content: q }] });\n'
                      "}\n"),
    }, ("ts", "js"), ("src/agent", "new Date()"), "Started ", f"\n{POLICY}\n\n{{Q}}"),
    "React-useMemo-prompt": ({
        "src/useChat": ('import OpenAI from "openai";\nimport { useMemo } from "react";\n'
                        "const client = new OpenAI({ dangerouslyAllowBrowser: true });\n"
                        f'const POLICY = "{POLICY}";\n'
                        "export function useChat() {\n"
                        "  const system = useMemo(() => `Opened ${new Date().toLocaleString()}\\n${POLICY}`, []);\n"
                        '  return (q⟨: string⟩) => client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: system }, { role: "user", content: q }] });\n'
                        "}\n"),
    }, ("ts", "js"), ("src/useChat", "new Date()"), "Opened ", f"\n{POLICY}\n\n{{Q}}"),
    "reduce-over-known-sections": ({
        "src/agent": (AGENT_OPENAI + f'const SECTIONS = ["{POLICY}", "Cite sources.", "Be brief."];\n'
                      "const system = () => SECTIONS.reduce((acc, s) => `${acc}\\n${s}`, `Opened ${new Date().toISOString()}`);\n"
                      + sends("system()")),
    }, ("ts", "js"), ("src/agent", "new Date()"), "Opened ", f"\n{POLICY}\nCite sources.\nBe brief.\n\n{{Q}}"),
    "digest-of-the-clock": ({
        "src/agent": (AGENT_OPENAI + 'import { createHash } from "node:crypto";\n' f'const POLICY = "{POLICY}";\n'
                      "export async function ask(q⟨: string⟩) {\n"
                      '  const tag = createHash("sha1").update(String(Date.now())).digest("hex").slice(0, 8);\n'
                      '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: `Tag ${tag}\\n${POLICY}` }, { role: "user", content: q }] });\n'
                      "}\n"),
    }, ("ts", "js"), ("src/agent", "Date.now()"), "Tag ", f"\n{POLICY}\n\n{{Q}}"),
}

CASES = [(family, lang) for family in sorted(FAMILIES) for lang in FAMILIES[family][1]]


@pytest.mark.parametrize("family,lang", CASES)
def test_family_is_followed_to_the_request(tmp_path, qwen, family, lang):
    files, _, (module, marker), prefix, suffix = FAMILIES[family]
    root = write(tmp_path, files, lang)
    findings = run(root)
    assert [(f.code, Path(f.path).name, f.line, f.column) for f in findings] == [("M101",) + at(root, module, lang, marker)], \
        [(f.code, f.path, f.line, f.column, f.message, f.notes) for f in findings]
    assert not any(ALONE in n for n in findings[0].notes), findings[0].notes  # judged at the call that sends it
    check_figures(findings[0], qwen, prefix, suffix)


# family -> (modules, code, (module, marker)): an order hazard
ORDER = {
    "event-listener-fills-the-tools": ({
        "src/tools": ('import { EventEmitter } from "events";\n'
                      "export const bus = new EventEmitter();\n"
                      "export const tools⟨: any[]⟩ = [];\n"
                      'bus.on("tool", (t⟨: any⟩) => tools.push(t));\n'),
        "src/agent": ('import Anthropic from "@anthropic-ai/sdk";\nimport { tools } from "./tools";\nconst client = new Anthropic();\n'
                      "export async function ask(q⟨: string⟩) {\n"
                      '  return client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 256, tools, messages: [{ role: "user", content: q }] });\n'
                      "}\n"),
    }, "M202", ("src/tools", "(t")),
    # a listing named by its package, held by a name, folded into text by `reduce`: at the listing
    "listing-folded-by-reduce": ({
        "lib/handbook": ('import fg from "fast-glob";\n'
                         'import { readFileSync } from "fs";\n'
                         "export function loadHandbook(root⟨: string⟩)⟨: string⟩ {\n"
                         "  const files = fg.sync(`${root}/**/*.md`);\n"
                         '  return files.reduce((text, file) => text + `## ${file}\\n` + readFileSync(file, "utf8"), "");\n'
                         "}\n"),
        "src/agent": (AGENT_OPENAI + 'import { loadHandbook } from "../lib/handbook";\n'
                      + sends('`${loadHandbook("handbook")}\\nAnswer from the handbook only.`')),
    }, "M203", ("lib/handbook", "fg.sync(")),
    "fast-glob-called-as-its-package-joined": ({
        "lib/skills": ('import fg from "fast-glob";\n'
                       "export async function skills()⟨: Promise<string>⟩ {\n"
                       '  const found = await fg("skills/*.md");\n'
                       '  return found.join("\\n");\n'
                       "}\n"),
        "src/agent": (AGENT_OPENAI + 'import { skills } from "../lib/skills";\n'
                      + sends("`Skills:\\n${await skills()}`")),
    }, "M203", ("lib/skills", 'fg("skills')),
}


@pytest.mark.parametrize("lang", ["ts", "js"])
@pytest.mark.parametrize("family", sorted(ORDER))
def test_order_family_is_followed_to_the_request(tmp_path, family, lang):
    files, code, (module, marker) = ORDER[family]
    root = write(tmp_path, files, lang)
    findings = run(root)
    assert [(f.code, Path(f.path).name, f.line, f.column) for f in findings] == [(code,) + at(root, module, lang, marker)], \
        [(f.code, f.path, f.line, f.column, f.message) for f in findings]


CLEAN = {
    "listener-filled-tools-sorted": {
        "src/tools": ('import { EventEmitter } from "events";\n'
                      "export const bus = new EventEmitter();\n"
                      "export const tools⟨: any[]⟩ = [];\n"
                      'bus.on("tool", (t⟨: any⟩) => tools.push(t));\n'),
        "src/agent": ('import Anthropic from "@anthropic-ai/sdk";\nimport { tools } from "./tools";\nconst client = new Anthropic();\n'
                      "export async function ask(q⟨: string⟩) {\n"
                      "  const sorted = [...tools].sort((a, b) => a.name.localeCompare(b.name));\n"
                      '  return client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 256, tools: sorted, messages: [{ role: "user", content: q }] });\n'
                      "}\n"),
    },
    "every-branch-overwrites-the-clock": {
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      "export async function ask(mode⟨: string⟩, q⟨: string⟩) {\n"
                      "  let system = `Started ${Date.now()}\\n${POLICY}`;\n"
                      '  if (mode === "terse") {\n'
                      "    system = `Terse mode.\\n${POLICY}`;\n"
                      "  } else {\n"
                      "    system = POLICY;\n"
                      "  }\n"
                      '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: system }, { role: "user", content: q }] });\n'
                      "}\n"),
    },
    "factory-with-the-clock-at-the-end": {
        "src/prompts": (f'const POLICY = "{POLICY}";\n'
                        "export const makeSystem = (opts⟨: { team: string }⟩) => () => `${POLICY}\\nTeam ${opts.team}.`;\n"),
        "src/agent": (AGENT_OPENAI + 'import { makeSystem } from "./prompts";\nconst system = makeSystem({ team: "core" });\n'
                      "export async function ask(q⟨: string⟩) {\n"
                      '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: system() }, '
                      "{ role: \"user\", content: `${q}\\n(sent ${new Date().toISOString()})` }] });\n"
                      "}\n"),
    },
    "deployment-constant-by-subscript": {
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      "const { REGION } = process.env;\n"
                      + sends('`Region ${REGION}, tier ${process.env["TIER"]}\\n${POLICY}`')),
    },
    "elapsed-time-at-the-end": {
        "src/agent": (AGENT_OPENAI + f'const POLICY = "{POLICY}";\n'
                      "export async function ask(q⟨: string⟩) {\n"
                      "  const t0 = Date.now();\n"
                      '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: POLICY }, '
                      "{ role: \"user\", content: `${q}\\n(queued ${Math.round((Date.now() - t0) / 1000)} s)` }] });\n"
                      "}\n"),
    },
    "sorted-listing-folded-by-reduce": {
        "lib/handbook": ('import fg from "fast-glob";\n'
                         'import { readFileSync } from "fs";\n'
                         "export function loadHandbook(root⟨: string⟩)⟨: string⟩ {\n"
                         "  const files = fg.sync(`${root}/**/*.md`).sort();\n"
                         '  return files.reduce((text, file) => text + `## ${file}\\n` + readFileSync(file, "utf8"), "");\n'
                         "}\n"),
        "src/agent": (AGENT_OPENAI + 'import { loadHandbook } from "../lib/handbook";\n'
                      + sends('`${loadHandbook("handbook")}\\nAnswer from the handbook only.`')),
    },
    "loop-over-a-sorted-listing": {
        "src/agent": (AGENT_OPENAI + 'import { readdirSync } from "fs";\n'
                      "function skills()⟨: string⟩ {\n"
                      "  const lines⟨: string[]⟩ = [];\n"
                      '  for (const f of readdirSync("./skills").sort()) lines.push(`- ${f}`);\n'
                      '  return lines.join("\\n");\n'
                      "}\n" + sends("`Skills:\\n${skills()}`")),
    },
}


@pytest.mark.parametrize("lang", ["ts", "js"])
@pytest.mark.parametrize("family", sorted(CLEAN))
def test_clean_counter_example_gives_nothing(tmp_path, family, lang):
    root = write(tmp_path, CLEAN[family], lang)
    assert [(f.code, f.line, f.message) for f in run(root)] == []
