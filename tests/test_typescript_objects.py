"""TS/JS objects of the linted modules' classes (tssource.instances): a fluent builder whose methods
write fields and return `this`, a builder filled by statements, a getter, a static field and an
instance field read from another module, a constructor's parameter property reaching a request
its method sends. Each project in TypeScript and in CommonJS JavaScript (test_typescript.as_js)
where the syntax allows; the M101 figures recomputed by test_typescript.check_figures."""

from __future__ import annotations

import pytest

from test_typescript import POLICY, at, check_figures, found, run, write

OBJECTS = {
    # family -> (modules, (module, marker) of the finding, the value, static prefix, static suffix)
    "fluent-chain-returning-this": ({
        "src/builder": (
            "export class RequestBuilder {\n"
            '  ⟨private ⟩params⟨: any⟩ = { model: "claude-sonnet-4-5", max_tokens: 512 };\n'
            "  system(text⟨: string⟩) { this.params.system = text; return this; }\n"
            '  user(text⟨: string⟩) { this.params.messages = [{ role: "user", content: text }]; return this; }\n'
            "  build() { return this.params; }\n"
            "}\n"),
        "src/agent": (
            'import Anthropic from "@anthropic-ai/sdk";\n'
            'import { RequestBuilder } from "./builder";\n'
            "const client = new Anthropic();\n"
            f'const POLICY = "{POLICY}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            "  const params = new RequestBuilder().system(`Run ${Math.random()}\\n${POLICY}`).user(q).build();\n"
            "  return client.messages.create(params);\n"
            "}\n"),
    }, ("src/agent", "Math.random()"), "Math.random()", "Run ", f"\n{POLICY}\n\n{{Q}}"),
    "builder-filled-by-statements": ({
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            f'const POLICY = "{POLICY}";\n'
            "class PromptBuilder {\n"
            "  ⟨private ⟩parts⟨: string[]⟩ = [];\n"
            "  add(text⟨: string⟩) { this.parts.push(text); }\n"
            '  build()⟨: string⟩ { return this.parts.join("\\n"); }\n'
            "}\n"
            "export async function ask(q⟨: string⟩) {\n"
            "  const b = new PromptBuilder();\n"
            "  b.add(`Generated ${new Date().toISOString()}`);\n"
            "  b.add(POLICY);\n"
            '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: b.build() }, { role: "user", content: q }] });\n'
            "}\n"),
    }, ("src/agent", "new Date()"), "new Date()", "Generated ", f"\n{POLICY}\n\n{{Q}}"),
    "getter": ({
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            f'const POLICY = "{POLICY}";\n'
            "export class Assistant {\n"
            "  get system()⟨: string⟩ { return `Host ${process.pid}\\n${POLICY}`; }\n"
            "  ask(q⟨: string⟩) {\n"
            '    return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: this.system }, { role: "user", content: q }] });\n'
            "  }\n"
            "}\n"),
    }, ("src/agent", "process.pid"), "process.pid", "Host ", f"\n{POLICY}\n\n{{Q}}"),
    "static-field-of-an-imported-class": ({
        "src/prompts": (
            f'const POLICY = "{POLICY}";\n'
            "export class Prompts {\n"
            "  static SYSTEM = `Epoch ${Date.now()}\\n${POLICY}`;\n"
            "}\n"),
        "src/agent": (
            'import OpenAI from "openai";\n'
            'import { Prompts } from "./prompts";\n'
            "const client = new OpenAI();\n"
            "export async function ask(q⟨: string⟩) {\n"
            '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: Prompts.SYSTEM }, { role: "user", content: q }] });\n'
            "}\n"),
    }, ("src/prompts", "Date.now()"), "Date.now()", "Epoch ", f"\n{POLICY}\n\n{{Q}}"),
    "instance-field-of-an-imported-class": ({
        "src/persona": (
            'import os from "os";\n'
            f'const POLICY = "{POLICY}";\n'
            "export class Persona {\n"
            "  intro = `Node ${os.hostname()}\\n${POLICY}`;\n"
            "}\n"),
        "src/agent": (
            'import OpenAI from "openai";\n'
            'import { Persona } from "./persona";\n'
            "const client = new OpenAI();\n"
            "const persona = new Persona();\n"
            "export async function ask(q⟨: string⟩) {\n"
            '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: persona.intro }, { role: "user", content: q }] });\n'
            "}\n"),
    }, ("src/persona", "os.hostname()"), "os.hostname()", "Node ", f"\n{POLICY}\n\n{{Q}}"),
}


@pytest.mark.parametrize("lang", ["ts", "js"])
@pytest.mark.parametrize("family", sorted(OBJECTS))
def test_object_of_a_linted_class_carries_its_fields_to_the_request(tmp_path, qwen, family, lang):
    files, (module, marker), label, prefix, suffix = OBJECTS[family]
    root = write(tmp_path, files, lang)
    findings = run(root)
    assert found(findings, "M101") == [at(root, module, lang, marker)], [(f.code, f.line, f.message) for f in findings]
    f = next(f for f in findings if f.code == "M101")
    assert f.variable == label
    check_figures(f, qwen, prefix, suffix)
    assert [x.code for x in findings] == ["M101"]


def test_parameter_property_reaches_the_request_a_method_sends(tmp_path, qwen):
    """`constructor(private readonly system: string)`: the object built with a timestamped system
    prompt sends it from its own method; reported where the timestamp is written."""
    files = {"src/agent": (
        'import Anthropic from "@anthropic-ai/sdk";\n'
        "const client = new Anthropic();\n"
        f'const POLICY = "{POLICY}";\n'
        "class Agent {\n"
        "  constructor(private readonly system: string, private readonly model = \"claude-sonnet-4-5\") {}\n"
        "  ask(q: string) {\n"
        "    return client.messages.create({ model: this.model, max_tokens: 256, system: this.system, messages: [{ role: \"user\", content: q }] });\n"
        "  }\n"
        "}\n"
        "export async function run(q: string) {\n"
        "  const agent = new Agent(`Started ${new Date().toISOString()}\\n${POLICY}`);\n"
        "  return agent.ask(q);\n"
        "}\n")}
    root = write(tmp_path, files, "ts")
    findings = run(root)
    assert found(findings, "M101") == [at(root, "src/agent", "ts", "new Date()")], [(f.line, f.message) for f in findings]
    check_figures(findings[0], qwen, "Started ", f"\n{POLICY}\n\n{{Q}}")


def test_registry_filled_by_a_method_called_elsewhere_keeps_its_order_hazard(tmp_path):
    """The object never had `connect()` called where it is used: the field is the class's view of it,
    filled in completion order by that method (M202 at the async callback), not the empty initialiser."""
    files = {
        "src/registry": (
            "export class Registry {\n"
            "  ⟨private ⟩tools = new Map();\n"
            "  async connect(servers⟨: any[]⟩) {\n"
            "    await Promise.all(servers.map(async (s) => { for (const t of await s.listTools()) this.tools.set(t.name, t); }));\n"
            "  }\n"
            "  list() { return [...this.tools.values()]; }\n"
            "}\n"),
        "src/agent": (
            'import OpenAI from "openai";\n'
            'import { Registry } from "./registry";\n'
            "const client = new OpenAI();\n"
            "const registry = new Registry();\n"
            "export async function ask(q⟨: string⟩) {\n"
            '  return client.chat.completions.create({ model: "gpt-4o", tools: registry.list(), messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    }
    for lang in ("ts", "js"):
        root = write(tmp_path, files, lang)
        findings = run(root)
        assert [(f.code,) + (f.path.rsplit("/", 1)[-1], f.line, f.column) for f in findings] == \
            [("M202",) + at(root, "src/registry", lang, "async (s) =>")], [(f.code, f.line, f.message) for f in findings]
