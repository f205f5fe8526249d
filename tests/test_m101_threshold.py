"""M101's threshold (docs/rules/M101.md, "What it does"): reported only when blocks are lost AND at
least one full block (B = 16) of shared text follows the value's changed tokens before the ideal
divergence (the first per-request input, or the end of the prompt). With less, the value already
sits where the fix would put it, and whether its own block is lost is only where block edges fall.

Every figure here comes from this test's own render (plain jinja2, or the text the code builds)
and a direct `tokenizers` encode with the pinned Qwen2.5 tokenizer: S, P, the ideal S, the tokens
that follow the value, and lost = floor(min(S_ideal, P-1)/B) - floor(min(S, P-1)/B).
"""

from __future__ import annotations

import json
from pathlib import Path

import jinja2

from conftest import QWEN, shared_prefix
from promptlint.driver.lint import lint
from promptlint.project.config import Settings

B = 16
NOW, LATER = "2025-03-14 09:26:53", "2025-03-14 09:27:00"
Q1, Q2 = "Can I return a tent I bought two weeks ago?", "Where is my order 10023? It was due on Monday."
SAMPLES = {"variables": {
    "now": {"value": NOW, "variant": LATER, "kind": "volatile", "sub-kind": "timestamp"},
    "question": {"value": Q1, "variant": Q2, "kind": "per-request"},
}}
POLICY = (
    "You are the customer-support assistant of Acme Outdoor Gear, an online shop for hiking, camping and "
    "climbing equipment. Be friendly, concise and precise. Only answer questions about Acme products, orders, "
    "shipping, returns, warranties and store policies. Never invent order numbers, tracking codes, prices or "
    "delivery dates; if you do not know, say so and offer to connect the customer with a human agent."
)
# more than a block of tokens of shared instructions (measured below)
LONG_TAIL = "Cite the policy section you rely on, for example (Returns policy, section 4), and answer in the customer's language."
SHORT_TAIL = "Be brief."


def _ids(tok, text: str):
    return tok.encode(text, add_special_tokens=False).ids


def _render(template: str, **change) -> str:
    return jinja2.Environment().from_string(template).render(**{"now": NOW, "question": Q1, **change})


def _figures(tok, base_text: str, variant_text: str, other_text: str) -> dict:
    """S, the ideal S (only the question changed), lost blocks by the formula, and the tokens of shared
    text between the end of the value's changed span and the ideal divergence."""
    base, variant, other = _ids(tok, base_text), _ids(tok, variant_text), _ids(tok, other_text)
    s, ideal_s, p = shared_prefix(base, variant), shared_prefix(base, other), len(variant)
    trailing = 0  # the tokens both renders end with, after the changed span
    while trailing < min(len(base), len(variant)) - s and base[-1 - trailing] == variant[-1 - trailing]:
        trailing += 1
    eligible, ideal = min(s, p - 1) // B, min(ideal_s, p - 1) // B
    return {"s": s, "eligible": eligible, "ideal": ideal, "lost": ideal - eligible, "following": ideal_s - (len(base) - trailing)}


def _template_figures(tok, template: str) -> dict:
    return _figures(tok, _render(template), _render(template, now=LATER), _render(template, question=Q2))


def _check(cli, root: Path, names) -> dict:
    for name, template in names.items():
        (root / f"{name}.j2").write_text(template, encoding="utf-8")
        (root / f"{name}.samples.json").write_text(json.dumps(SAMPLES), encoding="utf-8")
    r = cli("check", "--tokenizer", QWEN, "--no-cache", "--output-format", "json", "--evidence", *[f"{n}.j2" for n in names], cwd=root)
    assert r.code in (0, 1), r.err
    return r.json()


def _padded(k: int) -> str:
    return POLICY + " Please" * k  # from k = 1, one token per word: k = 1..16 move the value through every alignment


# ------------------------------------------------------------------------------------------ Jinja


def use_instead(k: int) -> str:
    """The docs' "Use instead" layout: the policy, the clock, the question."""
    return _padded(k) + "\nCurrent time: {{ now }}\nQuestion: {{ question }}\n"


def test_the_use_instead_layout_is_never_m101_at_any_alignment(tmp_path, cli, qwen):
    figures = {k: _template_figures(qwen, use_instead(k)) for k in range(1, 17)}
    assert {f["s"] % B for f in figures.values()} == set(range(B))  # every block alignment of the value
    assert all(f["following"] < B for f in figures.values())  # `\nQuestion: ` only
    assert any(f["lost"] > 0 for f in figures.values())  # the old rule (lost > 0) fired on some of them
    doc = _check(cli, tmp_path, {f"layout{k}": use_instead(k) for k in range(1, 17)})
    # (where the question's first token crosses a block edge, M104 reports its merge with `Question:`: another rule)
    m101 = [(f["path"], f["message"]) for f in doc["findings"] if f["code"] == "M101"]
    assert doc["errors"] == [] and m101 == [], m101


def tail_template(k: int, tail: str) -> str:
    return _padded(k) + "\nCurrent time: {{ now }}\n" + tail + "\nQuestion: {{ question }}\n"


def test_a_tail_of_a_block_or_more_after_the_value_is_m101_with_its_figures(tmp_path, cli, qwen):
    assert len(_ids(qwen, "\n" + LONG_TAIL + "\n")) >= B
    template = tail_template(0, LONG_TAIL)
    mine = _template_figures(qwen, template)
    assert mine["following"] >= B and mine["lost"] > 0
    doc = _check(cli, tmp_path, {"tail": template})
    (f,) = doc["findings"]
    assert (f["code"], f["line"], f["variable"]) == ("M101", 2, "now")
    assert f["evidence"]["base_render"] == _render(template) and f["evidence"]["variant_render"] == _render(template, now=LATER)
    assert f["first_divergent_token"]["index"] == mine["s"]
    assert (f["lost_blocks"], f["eligible_blocks"], f["ideal_eligible_blocks"]) == (mine["lost"], mine["eligible"], mine["ideal"])
    assert f"{mine['lost']} of {mine['ideal']} eligible KV blocks lost" in f["message"]


def test_a_tail_under_a_block_is_not_m101_even_when_a_block_is_lost(tmp_path, cli, qwen):
    assert len(_ids(qwen, "\n" + SHORT_TAIL + "\n")) < B
    k = next(k for k in range(1, 17) if _template_figures(qwen, tail_template(k, SHORT_TAIL))["lost"] > 0)
    template = tail_template(k, SHORT_TAIL)
    mine = _template_figures(qwen, template)
    assert mine["lost"] == 1 and mine["following"] < B  # only the value's own block, lost to alignment
    doc = _check(cli, tmp_path, {"short": template})
    assert doc["errors"] == [] and [f for f in doc["findings"] if f["code"] == "M101"] == [], doc["findings"]


# ----------------------------------------------------------------------------- Python and TypeScript

# The system message and the user's message render as `system + "\n\n" + question` (checked against
# the finding's evidence below); the user's message is per-request, so the ideal shares what precedes it.
SEP = "\n\n"


def _lint(root: Path, name: str, source: str):
    (root / name).write_text(source, encoding="utf-8")
    report = lint([str(root / name)], Settings(tokenizer=str(QWEN), root=root), use_cache=False)
    assert not report.errors, [(e.code, e.message) for e in report.errors]
    return report.findings


def _code_figures(tok, system: str) -> dict:
    from promptlint.scenarios import PER_REQUEST_SAMPLES as SAMPLE  # the question the code's user message renders

    def render(clock, question):
        return system.replace("{CLOCK}", clock) + SEP + question

    return _figures(tok, render(NOW, SAMPLE[0]), render(LATER, SAMPLE[0]), render(NOW, SAMPLE[1]))


# The clock's place, as the code renders it; the policy's length (padding) puts the clock ending the
# system message across a block edge, so the old rule reported it (asserted by the figures below).
CODE_POLICY = _padded(6)
LAST = CODE_POLICY + "\nCurrent time: {CLOCK}"
FIRST = "Current time: {CLOCK}\n" + CODE_POLICY

PY = '''from datetime import datetime

from openai import OpenAI

client = OpenAI()
POLICY = {policy!r}


def ask(question: str):
    system = {system}
    return client.chat.completions.create(
        model="gpt-4o",
        messages=[{{"role": "system", "content": system}}, {{"role": "user", "content": question}}],
    )
'''


def test_python_a_clock_ending_the_system_message_is_not_m101(tmp_path, qwen):
    mine = _code_figures(qwen, LAST)
    assert mine["lost"] == 1 and mine["following"] < B
    source = PY.format(policy=CODE_POLICY, system='f"{POLICY}\\nCurrent time: {datetime.now().isoformat()}"')
    assert _lint(tmp_path, "bot.py", source) == []


def test_python_the_same_clock_before_the_policy_is_m101_at_its_line(tmp_path, qwen):
    mine = _code_figures(qwen, FIRST)
    assert mine["following"] >= B and mine["lost"] > 0
    source = PY.format(policy=CODE_POLICY, system='f"Current time: {datetime.now().isoformat()}\\n{POLICY}"')
    (f,) = _lint(tmp_path, "bot.py", source)
    line = source.splitlines().index('    system = f"Current time: {datetime.now().isoformat()}\\n{POLICY}"') + 1
    assert (f.code, f.line) == ("M101", line)
    from promptlint.scenarios import PER_REQUEST_SAMPLES as SAMPLE

    assert f.evidence["base_render"] == FIRST.replace("{CLOCK}", NOW) + SEP + SAMPLE[0]
    assert f.first_divergent_token.index == mine["s"]
    assert (f.arithmetic.lost_blocks, f.arithmetic.ideal_eligible_blocks) == (mine["lost"], mine["ideal"])


TS = '''import OpenAI from "openai";

const client = new OpenAI();
const POLICY = {policy};

export async function ask(question: string) {{
  const system = {system};
  return client.chat.completions.create({{ model: "gpt-4o", messages: [{{ role: "system", content: system }}, {{ role: "user", content: question }}] }});
}}
'''


def test_typescript_a_clock_ending_the_system_message_is_not_m101_and_before_the_policy_is(tmp_path, qwen):
    last, first = _code_figures(qwen, LAST), _code_figures(qwen, FIRST)
    assert last["lost"] == 1 and last["following"] < B
    assert first["following"] >= B and first["lost"] > 0
    clean, hazard = tmp_path / "clean", tmp_path / "hazard"
    clean.mkdir()
    hazard.mkdir()
    policy = json.dumps(CODE_POLICY)
    assert _lint(clean, "agent.ts", TS.format(policy=policy, system="`${POLICY}\\nCurrent time: ${new Date().toISOString()}`")) == []
    source = TS.format(policy=policy, system="`Current time: ${new Date().toISOString()}\\n${POLICY}`")
    (f,) = _lint(hazard, "agent.ts", source)
    assert (f.code, f.line) == ("M101", 7)
    from promptlint.scenarios import PER_REQUEST_SAMPLES as SAMPLE

    assert f.evidence["base_render"] == FIRST.replace("{CLOCK}", NOW) + SEP + SAMPLE[0]
    assert f.first_divergent_token.index == first["s"]
    assert (f.arithmetic.lost_blocks, f.arithmetic.ideal_eligible_blocks) == (first["lost"], first["ideal"])


def test_the_tail_is_counted_in_the_bases_positions_when_nothing_is_per_request():
    """No per-request input: the ideal is the whole prompt. A value of 1 token in the base and 3 in
    the variant, then 15 shared tokens: 15 < 16 follow it, whatever the variant's length says."""
    from promptlint.arithmetic.compare import compare
    from promptlint.checks.volatile_before_shared_prefix import precedes_shared

    head, tail = list(range(100, 132)), list(range(200, 215))  # 32 shared tokens, then the value, then 15
    base, variant = head + [1] + tail, head + [2, 3, 4] + tail
    cmp = compare(base, variant, len(variant), 16)  # ideal_shared: the variant's whole length
    assert cmp.lost_blocks == 1  # floor(49/16) - floor(32/16) = 3 - 2
    assert not precedes_shared(base, variant, cmp)
    longer = tail + [215]  # 16 follow it: reported
    base, variant = head + [1] + longer, head + [2, 3, 4] + longer
    cmp = compare(base, variant, len(variant), 16)
    assert cmp.lost_blocks == 1 and precedes_shared(base, variant, cmp)
