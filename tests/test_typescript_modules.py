"""TS/JS values made in an imported module are reported in that module, at the line that makes the
hazard, naming the call that sends them (as the Python flow does, pysource.rules.HazardScan.add):
two values reaching one call are two findings, one value sent from two modules is one finding
naming both senders, and a suppression comment at the value's line silences it."""

from __future__ import annotations

from pathlib import Path

from test_typescript import POLICY, run

PROMPTS = (
    f'const POLICY = "{POLICY}";\n'
    "export const STAMP = `Now ${Date.now()}`;\n"  # line 2, column 29
    "export const HOST = `Host ${process.pid}`;\n"  # line 3, column 29
    "export const SYSTEM = `${STAMP}\\n${HOST}\\n${POLICY}`;\n")
AGENT = (
    'import OpenAI from "openai";\n'
    'import { SYSTEM } from "./prompts";\n'
    "const client = new OpenAI();\n"
    'export const ask = (q: string) => client.chat.completions.create({ model: "gpt-4o", '
    'messages: [{ role: "system", content: SYSTEM }, { role: "user", content: q }] });\n')  # the call: line 4


def _write(root: Path, files: dict) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _sent_by(f) -> list:
    return [n.split(" at ")[-1].rsplit("/", 1)[-1] for n in f.notes if n.startswith(("sent by ", "also sent by "))]


def test_two_values_of_an_imported_module_are_two_findings_where_they_are_written(tmp_path):
    root = _write(tmp_path / "repo", {"src/prompts.ts": PROMPTS, "src/agent.ts": AGENT})
    findings = run(root)
    got = [(Path(f.path).name, f.line, f.column, f.code, f.variable) for f in findings]
    assert got == [("prompts.ts", 2, 29, "M101", "Date.now()"), ("prompts.ts", 3, 29, "M101", "process.pid")], \
        [(f.path, f.line, f.message, f.notes) for f in findings]
    for f in findings:  # each names the call that sends it, in the file that sends it
        assert _sent_by(f) == ["agent.ts:4"], f.notes
        assert not any("at line 4" in n for n in f.notes)  # "line 4" of agent.ts, not of prompts.ts
    # the stamp opens the prompt: every block of the system text is lost; both are measured on it
    assert findings[0].first_divergent_token.index < findings[1].first_divergent_token.index


def test_one_value_sent_from_two_modules_is_one_finding_naming_both(tmp_path):
    other = AGENT.replace("export const ask =", "export const ask2 =")
    root = _write(tmp_path / "repo", {"src/prompts.ts": PROMPTS, "src/agent.ts": AGENT, "src/other.js": other
                                      .replace("(q: string)", "(q)")})
    findings = run(root)
    assert [(Path(f.path).name, f.line) for f in findings] == [("prompts.ts", 2), ("prompts.ts", 3)]
    for f in findings:
        assert _sent_by(f) == ["agent.ts:4", "other.js:4"], f.notes


def test_suppression_at_the_value_line_silences_it(tmp_path):
    prompts = PROMPTS.replace("`Now ${Date.now()}`;\n", "`Now ${Date.now()}`;  // promptlint: ignore[M101]\n")
    root = _write(tmp_path / "repo", {"src/prompts.ts": prompts, "src/agent.ts": AGENT})
    findings = run(root)
    assert [(Path(f.path).name, f.line, f.code) for f in findings] == [("prompts.ts", 3, "M101")]


BUILDER = (
    f'const POLICY = "{POLICY}";\n'
    "export function systemPrompt(tenant: string): string {\n"
    "  const now = new Date().toISOString();\n"  # line 3, column 15
    "  return `Today is ${now}.\\n${POLICY}\\nTenant: ${tenant}`;\n"
    "}\n")
SENDER = (
    'import Anthropic from "@anthropic-ai/sdk";\n'
    'import { systemPrompt } from "./prompts";\n'
    "const client = new Anthropic();\n"
    "export const ask = (q: string) => client.messages.create({ model: \"claude-sonnet-4-5\", max_tokens: 256, "
    'system: systemPrompt("acme"), messages: [{ role: "user", content: q }] });\n')


def test_prompt_module_alone_reports_its_value_and_says_the_call_was_not_seen(tmp_path):
    """As the Python scan judges a prompt module alone (HazardScan.returned_prompts): what `systemPrompt()`
    returns is a request of its own; with its sender linted too, the sender's finding replaces it."""
    root = _write(tmp_path / "repo", {"src/prompts.ts": BUILDER, "src/agent.ts": SENDER})
    alone = run(root / "src" / "prompts.ts")
    assert [(Path(f.path).name, f.line, f.column, f.code) for f in alone] == [("prompts.ts", 3, 15, "M101")]
    assert any("`systemPrompt()` returns (line 4)" in n and "not in the linted files" in n for n in alone[0].notes)
    both = run(root)
    assert [(Path(f.path).name, f.line, f.column, f.code) for f in both] == [("prompts.ts", 3, 15, "M101")]
    assert _sent_by(both[0]) == ["agent.ts:4"] and not any("not in the linted files" in n for n in both[0].notes)


def test_suppression_in_a_walked_prompt_module_is_used_alone_and_with_its_sender(tmp_path):
    """The comment silences the finding wherever the module is linted from: no unused-suppression PL100
    when the prompt module is linted on its own."""
    prompts = BUILDER.replace("toISOString();\n", "toISOString();  // promptlint: ignore[M101]\n")
    root = _write(tmp_path / "repo", {"src/prompts.ts": prompts, "src/agent.ts": SENDER})
    assert [(f.code, f.line) for f in run(root / "src" / "prompts.ts")] == []
    assert [(f.code, f.line) for f in run(root)] == []
