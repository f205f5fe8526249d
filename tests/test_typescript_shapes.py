"""TypeScript and JavaScript: the SDK request shapes real code uses, and everything around the analysis
(syntax errors, what a walk skips, suppression comments, outputs, the baseline, the language server).

The projects are written once and laid out as TypeScript and as CommonJS JavaScript
(test_typescript.as_js); findings are expected at lines and columns found by a marker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import QWEN
from test_typescript import LANGS, POLICY, at, run, write

from promptlint.base import registry

LONG = POLICY * 40  # about 1,400 tokens: past every hosted minimum for Claude


SHAPES = {
    # name -> (modules, [(code, module, marker)])
    "anthropic-system-block-breakpoint-after-date": ({
        "src/agent": (
            'import Anthropic from "@anthropic-ai/sdk";\n'
            "const client = new Anthropic();\n"
            f'const POLICY = "{LONG}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            "  const system = [\n"
            "    { type: \"text\", text: `Now: ${new Date().toISOString()}\\n${POLICY}`, cache_control: { type: \"ephemeral\" } },\n"
            "  ];\n"
            '  return client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 64, system, messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    }, [("M106", "src/agent", "new Date()")]),
    "anthropic-breakpoint-below-minimum": ({
        "src/agent": (
            'import Anthropic from "@anthropic-ai/sdk";\n'
            "const client = new Anthropic();\n"
            "export async function ask(q⟨: string⟩) {\n"
            '  return client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 64,\n'
            '    system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],\n'
            '    messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    }, [("M703", "src/agent", "{ type: \"text\", text: \"Be brief.\"")]),
    "vercel-providerOptions-cacheControl": ({
        "app/chat": (
            'import { streamText } from "ai";\n'
            'import { anthropic } from "@ai-sdk/anthropic";\n'
            f'const POLICY = "{LONG}";\n'
            "export function chat(history⟨: any[]⟩) {\n"
            "  return streamText({\n"
            '    model: anthropic("claude-sonnet-4-5"),\n'
            "    messages: [\n"
            "      { role: \"system\", content: `Today ${new Date().toLocaleDateString()}\\n${POLICY}`,\n"
            '        providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } },\n'
            "      ...history,\n"
            "    ],\n"
            "  });\n"
            "}\n"),
    }, [("M106", "app/chat", "new Date()")]),
    "bedrock-converse-cachePoint": ({
        "src/bedrock": (
            'import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";\n'
            "const client = new BedrockRuntimeClient({});\n"
            f'const POLICY = "{LONG}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            "  const cmd = new ConverseCommand({\n"
            '    modelId: "anthropic.claude-3-5-sonnet-20240620-v1:0",\n'
            "    system: [{ text: `Request ${crypto.randomUUID()}\\n${POLICY}` }, { cachePoint: { type: \"default\" } }],\n"
            '    messages: [{ role: "user", content: [{ text: q }] }],\n'
            "  });\n"
            "  return client.send(cmd);\n"
            "}\n"),
    }, [("M106", "src/bedrock", "crypto.randomUUID()")]),
    "gemini-generateContent-systemInstruction": ({
        "src/gemini": (
            'import { GoogleGenAI } from "@google/genai";\n'
            "const ai = new GoogleGenAI({});\n"
            f'const POLICY = "{POLICY}";\n'
            "export async function ask(q⟨: string⟩) {\n"
            "  return ai.models.generateContent({ model: \"gemini-2.5-flash\", contents: q,\n"
            "    config: { systemInstruction: `Date: ${new Date().toDateString()}\\n${POLICY}` } });\n"
            "}\n"),
    }, [("M101", "src/gemini", "new Date()")]),
    "gemini-getGenerativeModel": ({
        "src/gemini": (
            'import { GoogleGenerativeAI } from "@google/generative-ai";\n'
            "const genAI = new GoogleGenerativeAI(process.env.GEMINI_KEY);\n"
            f'const POLICY = "{POLICY}";\n'
            "const model = genAI.getGenerativeModel({ model: \"gemini-1.5-pro\", systemInstruction: `Run ${Date.now()}\\n${POLICY}` });\n"
            "export async function ask(q⟨: string⟩) {\n"
            "  return model.generateContent(q);\n"
            "}\n"),
    }, [("M101", "src/gemini", "Date.now()")]),
    "langchain-SystemMessage-invoke": ({
        "src/lc": (
            'import { ChatOpenAI } from "@langchain/openai";\n'
            'import { SystemMessage, HumanMessage } from "@langchain/core/messages";\n'
            f'const POLICY = "{POLICY}";\n'
            'const llm = new ChatOpenAI({ model: "gpt-4o" }).bindTools([]);\n'
            "export async function ask(q⟨: string⟩) {\n"
            "  return llm.invoke([new SystemMessage(`Time ${new Date().toISOString()}\\n${POLICY}`), new HumanMessage(q)]);\n"
            "}\n"),
    }, [("M101", "src/lc", "new Date()")]),
    "langchain-fromMessages": ({
        "src/lc": (
            'import { ChatPromptTemplate } from "@langchain/core/prompts";\n'
            f'const POLICY = "{POLICY}";\n'
            "export const prompt = ChatPromptTemplate.fromMessages([\n"
            "  [\"system\", `Trace ${Math.random()}\\n${POLICY}`],\n"
            '  ["human", "{input}"],\n'
            "]);\n"),
    }, [("M101", "src/lc", "Math.random()")]),
    "openai-tools-from-directory-listing": ({
        "src/agent": (
            'import OpenAI from "openai";\n'
            'import fs from "fs";\n'
            "const client = new OpenAI();\n"
            "export async function run(q⟨: string⟩) {\n"
            '  const tools = fs.readdirSync("./tools").map((f) => ({ type: "function", function: { name: f } }));\n'
            '  return client.chat.completions.create({ model: "gpt-4o", tools, messages: [{ role: "user", content: q }] });\n'
            "}\n"),
    }, [("M202", "src/agent", "fs.readdirSync")]),
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_sdk_shape(tmp_path, shape, lang):
    files, expected = SHAPES[shape]
    root = write(tmp_path, files, lang)
    findings = run(root)
    got = sorted((f.code,) + (Path(f.path).name, f.line, f.column) for f in findings)
    want = sorted((code,) + at(root, module, lang, marker) for code, module, marker in expected)
    assert got == want, [(f.code, f.line, f.column, f.message) for f in findings]


def test_breakpoint_measure_names_the_cached_prefix(tmp_path, qwen):
    """M106 on a TS request: the breakpoint's prefix length is the test's own count of the request
    text in cache order (system block, then the user's question is after the breakpoint)."""
    files, _ = SHAPES["anthropic-system-block-breakpoint-after-date"]
    findings = run(write(tmp_path, files, "ts"))
    f = next(f for f in findings if f.code == "M106")
    base = f.evidence["base_render"]
    assert base.startswith("Now: ") and base.endswith("\n" + LONG)  # the system block alone
    assert f.evidence["breakpoint_tokens"] == len(qwen.encode(base, add_special_tokens=False).ids)


# ----------------------------------------------------------------------------- syntax errors


def typescript_cases():
    return [pytest.param(rule.code, case, id=f"{rule.code}-{case['name']}")
            for rule in registry.all_rules().values() for case in rule.cases if "typescript" in case]


@pytest.mark.parametrize("code,case", typescript_cases())
def test_rule_file_typescript_case(tmp_path, code, case):
    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint

    path = tmp_path / case.get("filename", "case.ts")
    path.write_text(case["typescript"], encoding="utf-8")
    report = lint([str(path)], Settings(tokenizer=str(QWEN), root=tmp_path))
    got = sorted((f.code, f.line, f.column) for f in report.findings + report.errors)
    assert got == sorted((e["code"], e["line"], e["column"]) for e in case.get("expect", []))


@pytest.mark.parametrize("name,source,where", [
    ("broken.js", 'const openai = require("openai");\nif (ready {\n  go();\n}\n', (2, 10)),
    ("broken.tsx", 'import OpenAI from "openai";\nexport const A = () => <div>{</div>;\n', (2, 31)),
    ("unclosed.mts", 'import OpenAI from "openai";\nconst s = `never closed ${1 + \n', (2, 1)),
])
def test_a_file_that_does_not_parse_is_one_E009(tmp_path, name, source, where):
    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint

    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    report = lint([str(path)], Settings(tokenizer=str(QWEN), root=tmp_path))
    assert [e.code for e in report.errors] == ["E009"] and report.findings == []
    e = report.errors[0]
    assert "syntax error" in e.message and "exclude" in e.message
    assert (e.line, e.column) == where  # tree-sitter's innermost error (a missing `)`, the JSX `</`)


# ----------------------------------------------------------------------------- what a walk takes


STAMPED = ('import OpenAI from "openai";\nconst client = new OpenAI();\n'
           "client.chat.completions.create({ model: \"gpt-4o\", messages: [{ role: \"system\", content: `Now ${Date.now()}\\n"
           + POLICY + '` }, { role: "user", content: "hi" }] });\n')


def test_bundles_and_build_output_are_not_walked_but_explicit_paths_are(tmp_path):
    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint

    for rel in ("src/agent.ts", "dist/agent.js", "web/.next/server/page.js", "public/vendor.min.js",
                "node_modules/pkg/index.js", "types/agent.d.ts"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(STAMPED, encoding="utf-8")
    report = lint([str(tmp_path)], Settings(tokenizer=str(QWEN), root=tmp_path))
    assert sorted(Path(f.path).relative_to(tmp_path).as_posix() for f in report.findings) == ["src/agent.ts"]
    explicit = lint([str(tmp_path / "public" / "vendor.min.js")], Settings(tokenizer=str(QWEN), root=tmp_path))
    assert [f.code for f in explicit.findings] == ["M101"]


def test_a_huge_bundle_named_explicitly_is_refused_in_one_line(tmp_path):
    from promptlint.doors import bounded_io
    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint

    path = tmp_path / "app.js"
    path.write_text(STAMPED + "//" + "x" * bounded_io.MAX_FILE_BYTES + "\n", encoding="utf-8")
    report = lint([str(path)], Settings(tokenizer=str(QWEN), root=tmp_path))
    assert [e.code for e in report.errors] == ["E005"] and "larger than" in report.errors[0].message


# ----------------------------------------------------------------------------- suppression, outputs


def test_suppression_comments_in_both_comment_styles(tmp_path):
    from promptlint.project.config import Settings
    from promptlint.driver.lint import lint

    source = ('import OpenAI from "openai";\n'
              "const client = new OpenAI();\n"
              "export async function a() {\n"
              "  // promptlint: ignore[M101] the clock is the point of this demo\n"
              f"  const system = `Now ${{Date.now()}}\\n{POLICY}`;\n"
              '  const other = `Id ${crypto.randomUUID()}\\n' + POLICY + '`; /* promptlint: ignore[M101] */\n'
              '  const third = `Pid ${process.pid}\\n' + POLICY + '`; // promptlint: ignore[M202]\n'
              '  await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: system }] });\n'
              '  await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: other }] });\n'
              '  return client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "system", content: third }] });\n'
              "}\n")
    path = tmp_path / "agent.ts"
    path.write_text(source, encoding="utf-8")
    report = lint([str(path)], Settings(tokenizer=str(QWEN), root=tmp_path))
    # lines 5 and 6 are suppressed; line 7's comment names another rule: its M101 stays, the comment is unused
    assert sorted((f.code, f.line) for f in report.findings) == [("M101", 7), ("PL100", 7)]


def test_per_file_ignores_and_sarif_locations(tmp_path, cli):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "agent.ts").write_text(STAMPED, encoding="utf-8")
    (tmp_path / "src" / "legacy.js").write_text(STAMPED, encoding="utf-8")
    (tmp_path / "promptlint.toml").write_text('[per-file-ignores]\n"src/legacy.js" = ["M101"]\n', encoding="utf-8")
    r = cli("check", str(tmp_path), "--tokenizer", str(QWEN), "--output-format", "sarif")
    assert r.code == 1, r.err
    results = json.loads(r.out)["runs"][0]["results"]
    locs = [(x["ruleId"], x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             x["locations"][0]["physicalLocation"]["region"]["startLine"],
             x["locations"][0]["physicalLocation"]["region"]["startColumn"]) for x in results]
    # line 3: `...content: \`Now ${Date.now()}`: column of `Date`, counted in the source line
    col = STAMPED.split("\n")[2].index("Date.now()") + 1
    assert [(rule, Path(uri).name, line, c) for rule, uri, line, c in locs] == [("M101", "agent.ts", 3, col)]


def test_language_server_lints_typescript_documents():
    from promptlint.editor.lsp import lintable

    for name in ("a.ts", "a.tsx", "a.mts", "a.cts", "a.js", "a.jsx", "a.mjs", "a.cjs"):
        assert lintable(Path(name)), name
    assert not lintable(Path("a.json"))


# ----------------------------------------------------------------------------- --baseline


def ts_builder(system: str) -> str:
    from test_baseline_python import POLICY_LINES

    policy = " +\n".join("  " + json.dumps(line) for line in POLICY_LINES)
    return (
        'import Anthropic from "@anthropic-ai/sdk";\n'
        "const client = new Anthropic();\n"
        f"const POLICY =\n{policy};\n"
        "function buildSystem() {\n"
        f'  return [{{ type: "text", text: {system}, cache_control: {{ type: "ephemeral" }} }}];\n'
        "}\n"
        "export async function answer(question: string) {\n"
        '  return client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, system: buildSystem(),\n'
        '    messages: [{ role: "user", content: question }] });\n'
        "}\n")


def test_baseline_gate_on_a_typescript_regression(tmp_path, qwen, cli):
    """The Python baseline test's repository, with the builder in TypeScript: the same figures,
    computed by the test from the two requests' text (test_baseline_python.expected_anthropic)."""
    import shutil

    from test_baseline_python import B as BLOCK, expected_anthropic, git

    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(QWEN, root / "tokenizer.json")
    git(root, "init", "-q")
    for files, message in (({"promptlint.toml": 'tokenizer = "tokenizer.json"\n', "agent.ts": ts_builder("POLICY")}, "a builder"),
                           ({"agent.ts": ts_builder('`Now: ${new Date()}\\n` + POLICY')}, "the change")):
        for name, text in files.items():
            (root / name).write_text(text, encoding="utf-8")
        git(root, "add", "-A")
        git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
    want = expected_anthropic(qwen)
    r = cli("check", "--no-cache", "--output-format", "json", "--baseline", "HEAD~1", cwd=root)
    assert r.code == 1, r.err
    doc = r.json()
    [row] = doc["baseline"]["templates"]
    assert row["path"] == "agent.ts" and row["template"] == "client.messages.create in answer()"
    assert row["status"] == "regression" and row["before"] == want["before"] and row["after"] == want["after"]
    assert row["lost_tokens"] == want["before"]["eligible_blocks"] * BLOCK
    [finding] = doc["findings"]
    assert finding["code"] == "M106" and finding["baseline"] == "new"


# ----------------------------------------------------------------------------- imports and caching


def test_template_only_run_never_imports_tree_sitter(tmp_path):
    import subprocess
    import sys

    (tmp_path / "t.j2").write_text("You are helpful.\nQuestion: {{ question }}\n", encoding="utf-8")
    code = (
        "import sys; from promptlint.project.config import Settings; from promptlint.driver.lint import lint; from pathlib import Path;"
        f"lint([{str(tmp_path)!r}], Settings(tokenizer={str(QWEN)!r}, root=Path({str(tmp_path)!r})));"
        "bad = [m for m in sys.modules if m.startswith(('tree_sitter', 'promptlint.tssource'))]; print(bad); assert not bad"
    )
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(root)})
    assert r.returncode == 0, r.stdout + r.stderr


def test_cached_result_follows_the_modules_a_file_imports(tmp_path, cli):
    """The sending file is unchanged; the module it imports gains a timestamp: the cached result of
    the first run must not hide it (the import is a dependency of the file's result)."""
    (tmp_path / "agent.ts").write_text(
        'import OpenAI from "openai";\nimport { SYSTEM } from "./prompt";\nconst client = new OpenAI();\n'
        'export const go = (q: string) => client.chat.completions.create({ model: "gpt-4o", '
        'messages: [{ role: "system", content: SYSTEM }, { role: "user", content: q }] });\n', encoding="utf-8")
    (tmp_path / "prompt.ts").write_text(f'export const SYSTEM = "{POLICY}";\n', encoding="utf-8")
    first = cli("check", str(tmp_path / "agent.ts"), "--tokenizer", str(QWEN), "--output-format", "json", cwd=tmp_path)
    assert first.code == 0 and first.json()["findings"] == []
    (tmp_path / "prompt.ts").write_text(f'export const SYSTEM = `Now ${{Date.now()}}\\n{POLICY}`;\n', encoding="utf-8")
    second = cli("check", str(tmp_path / "agent.ts"), "--tokenizer", str(QWEN), "--output-format", "json", cwd=tmp_path)
    # reported where the timestamp is written, naming the call in agent.ts that sends it
    assert second.code == 1 and [(f["code"], f["path"], f["line"], f["column"]) for f in second.json()["findings"]] \
        == [("M101", "prompt.ts", 1, 30)]
    assert "sent by `client.chat.completions.create(...)` at agent.ts:4" in second.json()["findings"][0]["notes"]


def test_add_suppressions_writes_line_comments_outside_template_literals(tmp_path, cli):
    source = ('import OpenAI from "openai";\nconst client = new OpenAI();\n'
              f'const POLICY = "{POLICY}";\n'
              "const NOTE = `a template literal that spans\n"
              "two lines, ${Date.now()} inside it`;\n"
              'export const go = () => client.chat.completions.create({ model: "gpt-4o", messages: '
              '[{ role: "system", content: `Now ${Date.now()}\\n${POLICY}` }, { role: "user", content: NOTE + POLICY }] });\n')
    path = tmp_path / "agent.ts"
    path.write_text(source, encoding="utf-8")
    r = cli("check", str(path), "--tokenizer", str(QWEN), "--add-suppressions", cwd=tmp_path)
    assert r.code == 0, r.out + r.err
    lines = path.read_text(encoding="utf-8").split("\n")
    # line 4 is inside the template literal (a comment there would be text); its finding is on line 5
    assert lines[3] == "const NOTE = `a template literal that spans"
    assert lines[4].endswith("inside it`;  // promptlint: ignore[M101]")
    assert lines[5].endswith("] });  // promptlint: ignore[M101]")
    again = cli("check", str(path), "--tokenizer", str(QWEN), "--output-format", "json", cwd=tmp_path)
    assert again.code == 0 and again.json()["findings"] == []


def test_pre_commit_hook_takes_scripts_and_leaves_bundles():
    import re

    text = (Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    files = re.compile(re.search(r"  files: '([^']+)'", text).group(1))
    exclude = re.compile(re.search(r"  exclude: '([^']+)'", text).group(1))
    for name in ("src/agent.ts", "app/page.tsx", "a.mts", "a.cts", "lib/x.js", "c.jsx", "m.mjs", "c.cjs"):
        assert files.search(name) and not exclude.search(name), name
    for name in ("public/vendor.min.js", "dist/agent.js", "node_modules/pkg/index.js", "web/dist/app.mjs"):
        assert files.search(name) and exclude.search(name), name
    for name in ("a.json", "a.ts.bak", "types.tsbuildinfo"):
        assert not files.search(name), name
