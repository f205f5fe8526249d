"""Issue 32 family 5 (M107): static instructions after the per-request material.

A RAG prompt in the style of promptflow's chat-with-docs flows puts its instructions after the
retrieved documents: every request recomputes them. The figures are re-computed here: S from two
renders that differ in every per-request input (plain Jinja, the real Qwen2.5 tokenizer), T the
tokens of the static passage, the ideal S + T. A one-line trailer after the question is not reported.
"""

from __future__ import annotations

import json

from jinja2 import Environment

from conftest import QWEN, shared_prefix

B = 16
RULES = (
    "You are the compliance assistant of Tailspin Toys. Use only the retrieved documents, quote the clause number\n"
    "for every statement, and answer \"not covered\" when the documents do not address the question. Do not give\n"
    "legal advice, do not speculate about future regulation, and keep answers under one hundred and fifty words."
)
TEMPLATE = "Retrieved documents:\n{{ documents }}\n" + RULES + "\nQuestion: {{ question }}\n"
SAMPLES = {"variables": {
    "documents": {"value": "Clause 4.2: toys for children under three must not contain parts smaller than 3 cm.",
                  "kind": "per-request", "sub-kind": "retrieved",
                  "variant": "Clause 7.1: batteries must be enclosed in a compartment secured by a screw."},
    "question": {"value": "Can we ship the marble run to nurseries?", "kind": "per-request", "sub-kind": "input",
                 "variant": "Is the remote-control car compliant?"},
}}


def check(cli, tmp_path, template):
    (tmp_path / "compliance.j2").write_text(template)
    (tmp_path / "compliance.samples.json").write_text(json.dumps(SAMPLES))
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "compliance.j2", cwd=tmp_path)
    assert r.code in (0, 1), r.err
    return [f for f in r.json()["findings"] if f["code"] == "M107"]


def test_instructions_after_the_documents(tmp_path, cli, qwen):
    (f,) = check(cli, tmp_path, TEMPLATE)
    assert (f["line"], f["column"]) == (3, 1)

    def render(which):
        values = {k: v[which] for k, v in SAMPLES["variables"].items()}
        return Environment().from_string(TEMPLATE).render(**values)

    b, a = qwen.encode(render("value")).ids, qwen.encode(render("variant")).ids
    s = shared_prefix(b, a)
    t = len(qwen.encode(RULES).ids)  # the static passage, moved before the documents
    assert (f["shared_tokens"], f["ideal_shared_tokens"], f["prompt_tokens"]) == (s, s + t, len(a))
    assert f["lost_blocks"] == min(s + t, len(a) - 1) // B - min(s, len(a) - 1) // B > 0


def test_instructions_first_and_a_one_line_trailer_are_clean(tmp_path, cli):
    template = RULES + "\nRetrieved documents:\n{{ documents }}\nQuestion: {{ question }}\nAnswer in English, briefly.\n"
    assert check(cli, tmp_path, template) == []
