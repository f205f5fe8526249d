"""The families the sixth unseen TS/JS set (test_typescript_unseen.SIXTH) missed on its first run,
each closed in general and pinned here in TypeScript and in CommonJS JavaScript:

- destructured names are distinct values (`const { question, team } = await req.json()`): the
  team is not the user's question, so a clock after it still precedes the breakpoint (M106);
- a base class's method sends the prompt its subclass overrides (`class SupportAgent extends
  BaseAgent`), the base here or imported (M101 at the subclass's value);
- a collection filled in a callback an array method runs per item (`readdirSync(d).forEach(f =>
  m.set(f, ...))`) keeps the order of what is iterated (M202 at the directory listing);
- a promise continuation (`.then((t) => chunks.push(t))`) runs in completion order, like an
  `async` callback (M203 where the text is joined);

and clean counter-examples: the listing sorted before `forEach`, continuations whose values
`Promise.all` collects in input order.
"""

from __future__ import annotations

import pytest

from test_typescript import POLICY, at, check_figures, run, write

HANDBOOK = "Section {i}: answer only from the handbook and cite the section number."

FAMILIES = {
    # family -> (modules, code, (module, marker) of the finding)
    "destructured-names-are-distinct-values": ({
        "lib/prompt": (
            f'const HANDBOOK = "{HANDBOOK}\\n".repeat(40);\n'
            "export function systemBlocks(team⟨: string⟩) {\n"
            "  return [\n"
            '    { type: "text", text: `Team ${team}. Local time ${new Date().toLocaleString("en-GB")}` },\n'
            '    { type: "text", text: HANDBOOK, cache_control: { type: "ephemeral" } },\n'
            "  ];\n"
            "}\n"),
        "app/route": (
            'import Anthropic from "@anthropic-ai/sdk";\n'
            'import { systemBlocks } from "../lib/prompt";\n'
            "const anthropic = new Anthropic();\n"
            "export async function POST(req⟨: Request⟩) {\n"
            "  const { question, team } = await req.json();\n"
            '  return anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 256, system: systemBlocks(team), '
            'messages: [{ role: "user", content: question }] });\n'
            "}\n"),
    }, "M106", ("lib/prompt", "new Date()")),
    "subclass-prompt-sent-by-the-base-class": ({
        "src/base": (
            'import OpenAI from "openai";\n'
            "export class BaseAgent {\n"
            "  client = new OpenAI();\n"
            '  systemPrompt()⟨: string⟩ { return "You are a helpful agent."; }\n'
            "  async run(input⟨: string⟩) {\n"
            '    return this.client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: this.systemPrompt() }, { role: "user", content: input }] });\n'
            "  }\n"
            "}\n"),
        "src/support": (
            'import { BaseAgent } from "./base";\n'
            f'const POLICY = "{POLICY}";\n'
            "export class SupportAgent extends BaseAgent {\n"
            "  systemPrompt()⟨: string⟩ { return `Opened ${new Date().toISOString()}\\n${POLICY}`; }\n"
            "}\n"
            "export const support = (q⟨: string⟩) => new SupportAgent().run(q);\n"),
    }, "M101", ("src/support", "new Date()")),
    "forEach-over-a-directory-listing": ({
        "src/agent": (
            'import OpenAI from "openai";\n'
            'import { readdirSync, readFileSync } from "fs";\n'
            "const client = new OpenAI();\n"
            "const registry = new Map();\n"
            'readdirSync("./tools").forEach((f) => registry.set(f, JSON.parse(readFileSync(f, "utf8"))));\n'
            "export async function act(q⟨: string⟩) {\n"
            '  return client.chat.completions.create({ model: "gpt-4o", tools: [...registry.values()], messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    }, "M202", ("src/agent", 'readdirSync("./tools")')),
    "promise-continuations-push-in-completion-order": ({
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const openai = new OpenAI();\n"
            "export async function brief(urls⟨: string[]⟩, q⟨: string⟩) {\n"
            "  const chunks⟨: string[]⟩ = [];\n"
            "  await Promise.all(urls.map((u) => fetch(u).then((r) => r.text()).then((t) => chunks.push(t))));\n"
            '  const context = chunks.join("\\n---\\n");\n'
            '  return openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: `Sources:\\n${context}` }, { role: "user", content: q }] });\n'
            "}\n"),
    }, "M203", ("src/agent", "chunks.join")),
}

CLEAN = {
    "forEach-over-a-sorted-listing": {
        "src/agent": (
            'import OpenAI from "openai";\n'
            'import { readdirSync, readFileSync } from "fs";\n'
            "const client = new OpenAI();\n"
            "const registry = new Map();\n"
            'readdirSync("./tools").sort().forEach((f) => registry.set(f, JSON.parse(readFileSync(f, "utf8"))));\n'
            "export async function act(q⟨: string⟩) {\n"
            '  return client.chat.completions.create({ model: "gpt-4o", tools: [...registry.values()], messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    },
    "continuations-collected-by-Promise.all": {
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const openai = new OpenAI();\n"
            "export async function brief(urls⟨: string[]⟩, q⟨: string⟩) {\n"
            "  const chunks = await Promise.all(urls.map((u) => fetch(u).then((r) => r.text())));\n"
            '  return openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: `Sources:\\n${chunks.join("\\n")}` }, { role: "user", content: q }] });\n'
            "}\n"),
    },
}


@pytest.mark.parametrize("lang", ["ts", "js"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_is_found_where_its_value_is_made(tmp_path, qwen, family, lang):
    files, code, (module, marker) = FAMILIES[family]
    root = write(tmp_path, files, lang)
    findings = run(root)
    assert [(f.code,) + (f.path.rsplit("/", 1)[-1], f.line, f.column) for f in findings] == \
        [(code,) + at(root, module, lang, marker)], [(f.code, f.path, f.line, f.message) for f in findings]
    if family == "subclass-prompt-sent-by-the-base-class":
        check_figures(findings[0], qwen, "Opened ", f"\n{POLICY}\n\n{{Q}}")


@pytest.mark.parametrize("lang", ["ts", "js"])
@pytest.mark.parametrize("family", sorted(CLEAN))
def test_clean_counter_example_gives_nothing(tmp_path, family, lang):
    root = write(tmp_path, CLEAN[family], lang)
    assert [(f.code, f.line, f.message) for f in run(root)] == []
