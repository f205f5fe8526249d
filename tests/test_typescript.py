"""TypeScript and JavaScript prompt builders: the Python analyzer's hazards, found in TS/JS projects.

Each value family of issue 30 is a small project of several modules, written once and laid out
twice: as TypeScript (ESM ``import``/``export``, type annotations, ``.ts``) and as JavaScript
(CommonJS ``require``/``module.exports``, ``.js``). Every hazard is expected at a line and column
found in the source by a marker, and every M101 figure is recomputed here: the base render must be
the static text around the value exactly (what the test wrote, escapes decoded), the first
divergent token is recomputed with the test's own ``tokenizers`` encode, and the lost blocks from
eligible = floor(min(S, P-1)/B) blocks by hand (B = 16, vLLM's default). Clean counter-examples
(the value after the shared text, sorted tools, a breakpoint on the static head) give nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import QWEN, shared_prefix

from promptlint.project.config import Settings
from promptlint.driver.lint import lint

B = 16
POLICY = ("You are the support assistant for Acme Corporation. Answer questions about orders, shipping and "
          "returns politely and precisely. Always cite the relevant policy section. Never invent order numbers. "
          "Keep answers short, and escalate to a human when the customer is angry or asks for a refund over 500 EUR.")


# ----------------------------------------------------------------------------- layout


def as_js(source: str) -> str:
    """The TypeScript module as CommonJS JavaScript, line for line (types dropped, exports collected)."""
    exported = []
    out = []
    for line in source.split("\n"):
        line = re.sub(r"⟨[^⟩]*⟩", "", line)
        m = re.match(r'import \{ ([^}]*) \} from "([^"]+)";$', line)
        if m:
            line = f'const {{ {m.group(1)} }} = require("{m.group(2)}");'
        m = re.match(r'import (?:\* as )?(\w+) from "([^"]+)";$', line)
        if m:
            line = f'const {m.group(1)} = require("{m.group(2)}");'
        m = re.match(r"export (async function|function|const|let|class) (\w+)", line)
        if m:
            exported.append(m.group(2))
            line = line[len("export "):]
        out.append(line)
    if exported:
        out.append(f"module.exports = {{ {', '.join(exported)} }};")
    return "\n".join(out)


def as_ts(source: str) -> str:
    return re.sub(r"⟨([^⟩]*)⟩", r"\1", source)


def write(tmp_path: Path, files: dict, lang: str) -> Path:
    root = tmp_path / lang
    for name, source in files.items():
        path = root / (name + (".ts" if lang == "ts" else ".js"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(as_ts(source) if lang == "ts" else as_js(source), encoding="utf-8")
    return root


def run(root: Path):
    report = lint([str(root)], Settings(tokenizer=str(QWEN), root=root.parent))
    assert not report.errors, [(e.code, e.message) for e in report.errors]
    return report.findings


def at(root: Path, name: str, lang: str, needle: str):
    """(display suffix, line, column) of the first ``needle`` in a module, as findings count them."""
    path = root / (name + (".ts" if lang == "ts" else ".js"))
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if needle in line:
            return path.name, n, line.index(needle) + 1
    raise AssertionError(f"{needle!r} not in {path}")


def at_call(root: Path, lang: str) -> int:
    """The line of the call that sends the request in a project's one agent module."""
    path = next(root.rglob(f"agent.{lang}"))
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1)
                if ".create(" in line)


def check_figures(f, qwen, prefix: str, suffix: str = "") -> None:
    """The M101 figures, recomputed: exact static text around the value, the divergent token by a
    direct encode, the lost blocks by the formula. ``{Q}`` in ``suffix``: the user's input (what a
    user message holds that is not literal is per-request), rendered as the sample question; the
    ideal shares everything before it."""
    from promptlint.scenarios import PER_REQUEST_SAMPLES

    question = "{Q}" in suffix
    suffix = suffix.replace("{Q}", PER_REQUEST_SAMPLES[0])
    base, variant = f.evidence["base_render"], f.evidence["variant_render"]
    assert base.startswith(prefix) and base.endswith(suffix), (base, prefix, suffix)
    assert variant.startswith(prefix) and variant.endswith(suffix)
    a = qwen.encode(base, add_special_tokens=False).ids
    b = qwen.encode(variant, add_special_tokens=False).ids
    s = shared_prefix(a, b)
    assert len(qwen.encode(prefix.rstrip(), add_special_tokens=False).ids) - 1 <= s  # divergence is inside the value
    assert f.first_divergent_token.index == s and f.first_divergent_token.base_id == a[s]
    p = len(b)
    eligible = min(s, p - 1) // B
    if question:  # S if only the question differed: the base against the base with the next question
        other = qwen.encode(base[: -len(PER_REQUEST_SAMPLES[0])] + PER_REQUEST_SAMPLES[1], add_special_tokens=False).ids
        ideal = min(shared_prefix(a, other), p - 1) // B
    else:
        ideal = (p - 1) // B  # nothing per-request: the whole prompt could be shared
    assert (f.arithmetic.eligible_blocks, f.arithmetic.ideal_eligible_blocks) == (eligible, ideal)
    assert f"{ideal - eligible} of {ideal} eligible KV blocks lost" in f.message


def found(findings, code):
    return [(Path(f.path).name, f.line, f.column) for f in findings if f.code == code]


LANGS = ["ts", "js"]


# ----------------------------------------------------------------------------- volatile values


VOLATILE = {
    # family -> (modules, expected finding: (module, marker), the value, static prefix, static suffix)
    "template-literal-toISOString": ({
        "src/prompts": (
            f'export const POLICY = "{POLICY}";\n'
            "export function systemPrompt(tenant⟨: string⟩)⟨: string⟩ {\n"
            "  const now = new Date().toISOString();\n"
            "  return `Today is ${now}.\\n${POLICY}\\nTenant:\\t${tenant}`;\n"
            "}\n"),
        "src/agent": (
            'import Anthropic from "@anthropic-ai/sdk";\n'
            'import { systemPrompt } from "./prompts";\n'
            "const client = new Anthropic();\n"
            "export async function answer(question⟨: string⟩) {\n"
            "  return client.messages.create({\n"
            '    model: "claude-sonnet-4-5", max_tokens: 512,\n'
            '    system: systemPrompt("acme"),\n'
            '    messages: [{ role: "user", content: question }],\n'
            "  });\n"
            "}\n"),
    }, ("src/prompts", "new Date()"), "new Date()", "Today is ", f".\n{POLICY}\nTenant:\tacme\n\n{{Q}}"),
    "concatenation-Date.now": ({
        "lib/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            f'const POLICY = "{POLICY}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            '  const system = "Request epoch: " + Date.now() + "\\n" + POLICY;\n'
            "  return client.chat.completions.create({\n"
            '    model: "gpt-4o",\n'
            '    messages: [{ role: "system", content: system }, { role: "user", content: q }],\n'
            "  });\n"
            "}\n"),
    }, ("lib/agent", "Date.now()"), "Date.now()", "Request epoch: ", f"\n{POLICY}\n\n{{Q}}"),
    "join-Math.random": ({
        "lib/parts": (
            f'export const RULES = ["{POLICY}", "Cite sources.", "Be brief."];\n'
            "export function header()⟨: string[]⟩ {\n"
            '  return ["Sampling seed " + Math.random(), ...RULES];\n'
            "}\n"),
        "lib/agent": (
            'import OpenAI from "openai";\n'
            'import { header } from "./parts";\n'
            "const client = new OpenAI();\n"
            "export async function run(input⟨: string⟩) {\n"
            '  const instructions = header().join("\\n");\n'
            '  return client.responses.create({ model: "gpt-4.1", instructions, input });\n'
            "}\n"),
    }, ("lib/parts", "Math.random()"), "Math.random()", "Sampling seed ", f"\n{POLICY}\nCite sources.\nBe brief.\n\n{{Q}}"),
    "object-spread-toLocaleString": ({
        "src/request": (
            f'const POLICY = "{POLICY}";\n'
            "export function common() {\n"
            '  return { model: "claude-sonnet-4-5", max_tokens: 256, system: `Local time: ${new Date().toLocaleString()}\\n${POLICY}` };\n'
            "}\n"),
        "src/agent": (
            'import Anthropic from "@anthropic-ai/sdk";\n'
            'import { common } from "./request";\n'
            "const anthropic = new Anthropic();\n"
            "export async function reply(text⟨: string⟩) {\n"
            "  const base = { ...common(), temperature: 0 };\n"
            '  return anthropic.messages.create({ ...base, messages: [{ role: "user", content: text }] });\n'
            "}\n"),
    }, ("src/request", "new Date()"), "new Date()", "Local time: ", f"\n{POLICY}\n\n{{Q}}"),
    "crypto.randomUUID": ({
        "app/agent": (
            'import { generateText } from "ai";\n'
            'import { openai } from "@ai-sdk/openai";\n'
            f'const POLICY = "{POLICY}";\n'
            "export async function chat(prompt⟨: string⟩) {\n"
            "  const session = crypto.randomUUID();\n"
            '  return generateText({ model: openai("gpt-4o"), system: `Session ${session}\\n${POLICY}`, prompt });\n'
            "}\n"),
    }, ("app/agent", "crypto.randomUUID()"), "crypto.randomUUID()", "Session ", f"\n{POLICY}\n\n{{Q}}"),
    "process.pid": ({
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            f'const POLICY = "{POLICY}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            "  return client.chat.completions.create({ model: \"gpt-4o\", messages: [\n"
            "    { role: \"system\", content: `worker ${process.pid}\\n${POLICY}` },\n"
            '    { role: "user", content: q },\n'
            "  ] });\n"
            "}\n"),
    }, ("src/agent", "process.pid"), "process.pid", "worker ", f"\n{POLICY}\n\n{{Q}}"),
    "os.hostname": ({
        "src/env": (
            'import os from "os";\n'
            "export const HOST = os.hostname();\n"),
        "src/agent": (
            'import OpenAI from "openai";\n'
            'import { HOST } from "./env";\n'
            "const client = new OpenAI();\n"
            f'const POLICY = "{POLICY}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            '  const messages = [{ role: "system", content: "Host: " + HOST + "\\n" + POLICY }, { role: "user", content: q }];\n'
            '  return client.chat.completions.create({ model: "gpt-4o", messages });\n'
            "}\n"),
    }, ("src/env", "os.hostname()"), "os.hostname()", "Host: ", f"\n{POLICY}\n\n{{Q}}"),
    "process.cwd": ({
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            f'const POLICY = "{POLICY}";\n'
            "function system()⟨: string⟩ {\n"
            "  return `Working directory: ${process.cwd()}\\n${POLICY}`;\n"
            "}\n"
            "export async function ask(q⟨: string⟩) {\n"
            '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: system() }, { role: "user", content: q }] });\n'
            "}\n"),
    }, ("src/agent", "process.cwd()"), "process.cwd()", "Working directory: ", f"\n{POLICY}\n\n{{Q}}"),
    "process.env-replica": ({
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            f'const POLICY = "{POLICY}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            "  const pod = process.env.HOSTNAME;\n"
            '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: `Replica ${pod}\\n${POLICY}` }, { role: "user", content: q }] });\n'
            "}\n"),
    }, ("src/agent", "process.env.HOSTNAME"), "process.env.HOSTNAME", "Replica ", f"\n{POLICY}\n\n{{Q}}"),
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("family", sorted(VOLATILE))
def test_volatile_value_is_found_with_exact_figures(tmp_path, qwen, family, lang):
    files, (module, marker), label, prefix, suffix = VOLATILE[family]
    root = write(tmp_path, files, lang)
    findings = run(root)
    assert found(findings, "M101") == [at(root, module, lang, marker)], [(f.code, f.line, f.message) for f in findings]
    f = next(f for f in findings if f.code == "M101")
    assert f.variable == label
    if module != "src/agent" and not module.endswith("/agent"):  # made in an imported module: reported there
        assert [n for n in f.notes if n.startswith("sent by `")][0].endswith(f"agent.{lang}:{at_call(root, lang)}"), f.notes
    check_figures(f, qwen, prefix, suffix)
    assert [x.code for x in findings] == ["M101"]


# ----------------------------------------------------------------------------- order of tools and text


ORDER = {
    # family -> (modules, code, (module, marker) of the finding)
    "Promise.all-push-completion-order": ({
        "src/tools": (
            "export async function loadTools(servers⟨: any[]⟩) {\n"
            "  const tools⟨: any[]⟩ = [];\n"
            "  await Promise.all(servers.map(async (s) => {\n"
            "    tools.push(...(await s.listTools()));\n"
            "  }));\n"
            "  return tools;\n"
            "}\n"),
        "src/agent": (
            'import Anthropic from "@anthropic-ai/sdk";\n'
            'import { loadTools } from "./tools";\n'
            "const client = new Anthropic();\n"
            "export async function run(servers⟨: any[]⟩, q⟨: string⟩) {\n"
            "  const tools = await loadTools(servers);\n"
            '  return client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 64, tools, messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    }, "M202", ("src/tools", "async (s) =>")),
    "Map-values-filled-async": ({
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            "export async function run(servers⟨: any[]⟩, q⟨: string⟩) {\n"
            "  const byName = new Map();\n"
            "  await Promise.all(servers.map(async (s) => {\n"
            "    for (const t of await s.listTools()) byName.set(t.name, t);\n"
            "  }));\n"
            "  const tools = [...byName.values()];\n"
            '  return client.chat.completions.create({ model: "gpt-4o", tools, messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    }, "M202", ("src/agent", "async (s) =>")),
    "Object.values-of-async-registry": ({
        "src/agent": (
            'import { generateText, tool } from "ai";\n'
            'import { anthropic } from "@ai-sdk/anthropic";\n'
            "export async function run(plugins⟨: any[]⟩, prompt⟨: string⟩) {\n"
            "  const registry⟨: Record<string, any>⟩ = {};\n"
            "  await Promise.all(plugins.map(async (p) => { registry[p.name] = tool(await p.spec()); }));\n"
            "  const tools = Object.fromEntries(Object.entries(registry));\n"
            '  return generateText({ model: anthropic("claude-sonnet-4-5"), tools, prompt });\n'
            "}\n"),
    }, "M202", ("src/agent", "async (p) =>")),
    "JSON.stringify-of-unordered-object": ({
        "src/catalog": (
            "export async function catalog(sources⟨: any[]⟩) {\n"
            "  const out⟨: Record<string, string>⟩ = {};\n"
            "  await Promise.all(sources.map(async (s) => { out[s.id] = await s.summary(); }));\n"
            "  return out;\n"
            "}\n"),
        "src/agent": (
            'import OpenAI from "openai";\n'
            'import { catalog } from "./catalog";\n'
            "const client = new OpenAI();\n"
            "export async function run(sources⟨: any[]⟩, q⟨: string⟩) {\n"
            "  const data = await catalog(sources);\n"
            "  const system = `Catalog:\\n${JSON.stringify(data, null, 2)}`;\n"
            '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: system }, { role: "user", content: q }] });\n'
            "}\n"),
    }, "M201", ("src/agent", "JSON.stringify")),
    "readdir-joined-into-system": ({
        "src/skills": (
            'import fs from "fs";\n'
            "export function skillList(dir⟨: string⟩)⟨: string⟩ {\n"
            '  return fs.readdirSync(dir).map((f) => `- ${f}`).join("\\n");\n'
            "}\n"),
        "src/agent": (
            'import Anthropic from "@anthropic-ai/sdk";\n'
            'import { skillList } from "./skills";\n'
            "const client = new Anthropic();\n"
            "export async function run(q⟨: string⟩) {\n"
            '  const system = [{ type: "text", text: "Skills:\\n" + skillList("./skills") }];\n'
            '  return client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 64, system, messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    }, "M203", ("src/skills", "fs.readdirSync")),
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("family", sorted(ORDER))
def test_unordered_source_is_found(tmp_path, family, lang):
    files, code, (module, marker) = ORDER[family]
    root = write(tmp_path, files, lang)
    findings = run(root)
    assert [(f.code,) + (Path(f.path).name, f.line, f.column) for f in findings] == [(code,) + at(root, module, lang, marker)], \
        [(f.code, f.line, f.column, f.message) for f in findings]


# ----------------------------------------------------------------------------- clean counter-examples


CLEAN = {
    "date-at-the-end": {
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            f'const POLICY = "{POLICY}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            '  return client.chat.completions.create({ model: "gpt-4o", messages: [\n'
            '    { role: "system", content: POLICY },\n'
            "    { role: \"user\", content: `${q}\\n(sent ${new Date().toISOString()})` },\n"
            "  ] });\n"
            "}\n"),
    },
    "sorted-tools": {
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            "export async function run(servers⟨: any[]⟩, q⟨: string⟩) {\n"
            "  const byName = new Map();\n"
            "  await Promise.all(servers.map(async (s) => {\n"
            "    for (const t of await s.listTools()) byName.set(t.name, t);\n"
            "  }));\n"
            "  const tools = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));\n"
            '  return client.chat.completions.create({ model: "gpt-4o", tools, messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    },
    "Promise.all-keeps-input-order": {
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            "export async function run(servers⟨: any[]⟩, q⟨: string⟩) {\n"
            "  const lists = await Promise.all(servers.map((s) => s.listTools()));\n"
            "  const tools = lists.flat();\n"
            "  const catalog = JSON.stringify(Object.fromEntries(tools.map((t) => [t.name, t.description])));\n"
            '  return client.chat.completions.create({ model: "gpt-4o", tools, messages: [{ role: "system", content: catalog }, { role: "user", content: q }] });\n'
            "}\n"),
    },
    "breakpoint-on-static-head": {
        "src/agent": (
            'import Anthropic from "@anthropic-ai/sdk";\n'
            "const client = new Anthropic();\n"
            f'const POLICY = "{POLICY * 20}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            "  return client.messages.create({\n"
            '    model: "claude-sonnet-4-5", max_tokens: 64,\n'
            '    system: [{ type: "text", text: POLICY, cache_control: { type: "ephemeral" } }],\n'
            "    messages: [{ role: \"user\", content: `Now: ${new Date().toISOString()}\\n${q}` }],\n"
            "  });\n"
            "}\n"),
    },
    "deployment-constant-env": {
        "src/agent": (
            'import OpenAI from "openai";\n'
            "const client = new OpenAI();\n"
            "export async function ask(q⟨: string⟩) {\n"
            "  const system = `You work for ${process.env.COMPANY_NAME}. Be brief.`;\n"
            '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: system }, { role: "user", content: q }] });\n'
            "}\n"),
    },
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("family", sorted(CLEAN))
def test_clean_counter_example_gives_nothing(tmp_path, family, lang):
    root = write(tmp_path, CLEAN[family], lang)
    assert [(f.code, f.line, f.message) for f in run(root)] == []
