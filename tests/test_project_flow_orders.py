"""M202/M203 on Python code, measured in tokens (pysource.orders): the request rendered with three stand-in
items in one order and reversed, tokenized with the pinned tokenizer, compared.

The expected figures are computed here from the test's own texts: the stand-ins as docs/python.md
documents them, placed where the collection sits (joined by its separator; tools first, as JSON blocks),
blocks joined by a blank line, the per-request sample for the question. S = the first divergent token,
P = the variant's length, ideal = the divergence of the per-request variant;
lost = floor(min(ideal, P - 1) / B) - floor(min(S, P - 1) / B), B = 16.
"""

from __future__ import annotations

import json

from test_agent_call_shapes import B, QUESTION, line_of
from test_project_flow import PS, check, project, where
from test_sdk_shapes import divergence, enc

from test_agent_call_shapes import POLICY

ITEMS = [f"sample item {i} of the unordered collection (its real text is not known to promptlint)" for i in (1, 2, 3)]
TOOLS = [json.dumps({"name": f"sample_tool_{i}", "description": f"sample tool {i} of the unordered collection",
                     "parameters": {"type": "object", "properties": {}}}) for i in (1, 2, 3)]


def figures(tok, base, variant, per_request):
    a, b = enc(tok, base), enc(tok, variant)
    s = divergence(a, b)
    ideal = divergence(a, enc(tok, per_request))
    p = len(b)
    eligible, ideal_eligible = min(s, p - 1) // B * B, min(ideal, p - 1) // B * B
    return s, (ideal_eligible - eligible) // B, ideal_eligible // B


KB = {
    "kb.py": """
        import os


        def documents(folder):
            return [open(os.path.join(folder, n)).read() for n in os.listdir(folder)]
        """,
    "rag.py": """
        import anthropic

        from kb import documents

        client = anthropic.Anthropic()


        def ask(question):
            context = "\\n---\\n".join(documents("kb"))
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system="Answer from the documents.",
                                          messages=[{"role": "user", "content": context + "\\n\\n" + question}])
        """,
}


def test_listing_joined_in_another_module_has_exact_figures(tmp_path, qwen):
    src = project(tmp_path, KB)
    findings = check(tmp_path, "rag.py")
    assert where(findings) == [("M203", "kb.py", line_of(src["kb.py"], "os.listdir(folder)"))]
    f = findings[0]

    def text(items, q):
        return "Answer from the documents.\n\n" + "\n---\n".join(items) + "\n\n" + q

    s, lost, ideal = figures(qwen, text(ITEMS, QUESTION[0]), text(ITEMS[::-1], QUESTION[0]), text(ITEMS, QUESTION[1]))
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == lost and f.arithmetic.ideal_eligible_blocks == ideal and lost >= 3
    assert f"{lost} of {ideal} eligible KV blocks lost" in f.message


TOOLBOX = {
    "toolbox.py": """
        ENABLED = {"search_orders", "refund", "track_parcel"}
        SPECS = {name: {"type": "function", "function": {"name": name}} for name in sorted(ENABLED)}


        def tool_specs():
            return [SPECS[name] for name in ENABLED]
        """,
    "agent.py": f"""
        from openai import OpenAI

        from toolbox import tool_specs

        client = OpenAI()
        POLICY = {PS}


        def answer(question):
            return client.chat.completions.create(model="gpt-4o", tools=tool_specs(), messages=[
                {{"role": "system", "content": POLICY}}, {{"role": "user", "content": question}}])
        """,
}


def test_tools_from_a_set_in_another_module_have_exact_figures(tmp_path, qwen):
    src = project(tmp_path, TOOLBOX)
    findings = check(tmp_path, "agent.py")
    assert where(findings) == [("M202", "toolbox.py", line_of(src["toolbox.py"], "for name in ENABLED]"))]
    f = findings[0]

    def text(tools, q):  # tools first, then the system prompt and the question
        return "\n\n".join(tools) + "\n\n" + POLICY + "\n\n" + q

    s, lost, ideal = figures(qwen, text(TOOLS, QUESTION[0]), text(TOOLS[::-1], QUESTION[0]), text(TOOLS, QUESTION[1]))
    assert f.first_divergent_token.index == s and s < 16
    assert f.arithmetic.lost_blocks == lost and f.arithmetic.ideal_eligible_blocks == ideal and lost > 20
    assert "sent by `client.chat.completions.create(...)`" in " ".join(f.notes)


def test_messages_built_from_a_set_have_exact_figures(tmp_path, qwen):
    src = project(tmp_path, {
        "memory.py": f"""
            import anthropic

            client = anthropic.Anthropic()
            FACTS = {{"likes tents", "lives in Oslo", "orders monthly"}}


            def ask(question):
                history = [{{"role": "user", "content": fact}} for fact in FACTS]
                history.append({{"role": "user", "content": question}})
                return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system={PS}, messages=history)
            """,
    })
    findings = check(tmp_path, "memory.py")
    assert where(findings) == [("M203", "memory.py", line_of(src["memory.py"], "for fact in FACTS"))]
    f = findings[0]

    def text(items):  # the history's place: one block per stand-in; the appended question is not known
        return POLICY + "\n\n" + "\n\n".join(items)

    a, b = enc(qwen, text(ITEMS)), enc(qwen, text(ITEMS[::-1]))
    s = divergence(a, b)  # no per-request input is known in the list: the ideal is the whole prompt
    assert f.first_divergent_token.index == s
    assert f.arithmetic.lost_blocks == (len(b) - 1) // B - s // B


def test_a_collection_after_the_question_is_not_reported(tmp_path):
    # the documents follow the per-request question: their order moves nothing a next request could share
    project(tmp_path, {
        "kb.py": KB["kb.py"],
        "rag.py": f"""
            import anthropic

            from kb import documents

            client = anthropic.Anthropic()


            def ask(question):
                context = "\\n---\\n".join(documents("kb"))
                return client.messages.create(model="claude-sonnet-4-5", max_tokens=99, system={PS},
                                              messages=[{{"role": "user", "content": question + "\\n\\n" + context}}])
            """,
    })
    assert check(tmp_path, "rag.py") == []
