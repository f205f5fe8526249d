"""Zero-configuration analysis of real-style application templates (tests/data/app_templates).

Shapes follow every use (loops over records with nested fields, macros, namespaces, includes,
extends); kinds follow the words of a name (camelCase time names, retrieved context, history).
Token figures are checked against a direct `tokenizers` encode of renders built here with plain
Jinja from the values the test states, never against promptlint's own arithmetic.
"""

from __future__ import annotations

import json
import shutil
import tomllib

from jinja2 import Environment, FileSystemLoader

from conftest import DATA, QWEN, shared_prefix

APP = DATA / "app_templates"
B = 16  # vLLM's default block size


def corpus(tmp_path):
    dst = tmp_path / "prompts"
    shutil.copytree(APP, dst, ignore=shutil.ignore_patterns("*.md"))
    return dst


def render(name, values):
    """The test's own render of a corpus template with plain Jinja defaults."""
    return Environment(loader=FileSystemLoader(str(APP))).get_template(name).render(**values)


def lost(shared, ideal, prompt):
    return min(ideal, prompt - 1) // B - min(shared, prompt - 1) // B


def check_json(cli, *paths, cwd):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", *paths, cwd=cwd)
    assert r.code in (0, 1), r.err
    return r.json()


def test_a_directory_of_real_style_templates_is_analysed_without_configuration(tmp_path, cli):
    d = corpus(tmp_path)
    doc = check_json(cli, d, cwd=tmp_path)
    assert doc["files"] == len(list(APP.rglob("*.j2"))) == 21  # computed/: computed includes, own filters and helpers
    assert doc["errors"] == [], doc["errors"]  # no E001/E002/E004: every template rendered
    assert not [f for f in doc["findings"] if f["code"].startswith("E")]
    assert not list(d.glob("*.samples.*"))  # and no samples file was needed


AGENT = {
    "currentDateTime": "2025-03-14 09:26:53",
    "tools": [
        {"name": "issue_refund", "description": "Issue a refund for an order.",
         "arguments": [{"name": "reason", "type": "string"}, {"name": "order_id", "type": "string"}]},
        {"name": "search_orders", "description": "Look up an order by its number.",
         "arguments": [{"name": "reason", "type": "string"}, {"name": "order_id", "type": "string"}]},
    ],
    "engineer": {"name": "Alan Turing", "team": "sample engineer.team"},
    "task": "How do I reset my password?",
}


def test_camelcase_time_on_line_3_of_an_agent_prompt(tmp_path, cli, qwen):
    doc = check_json(cli, corpus(tmp_path) / "agent_system.j2", cwd=tmp_path)
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert (f["variable"], f["line"], f["column"]) == ("currentDateTime", 3, 24)

    base = render("agent_system.j2", AGENT)
    later = render("agent_system.j2", {**AGENT, "currentDateTime": "2025-03-14 09:27:00"})
    other_task = render("agent_system.j2", {**AGENT, "task": "Where is my order #4417?"})
    assert f["evidence"]["base_render"] == base  # the inferred inputs are the records above
    assert f["evidence"]["variant_render"] == later
    b, v, q = (qwen.encode(t, add_special_tokens=False).ids for t in (base, later, other_task))
    s, ideal, p = shared_prefix(b, v), shared_prefix(b, q), len(v)
    t = f["first_divergent_token"]
    assert t["index"] == s and (t["base_id"], t["variant_id"]) == (b[s], v[s])
    assert (t["base_text"], t["variant_text"]) == ("6", "7")  # Qwen encodes digits one by one
    assert (f["shared_tokens"], f["ideal_shared_tokens"], f["prompt_tokens"]) == (s, ideal, p)
    assert f["lost_blocks"] == lost(s, ideal, p) > 10


RAG = {
    "currentDateTime": "2025-03-14 09:26:53",
    "retrieved_documents": [
        {"metadata": {"source": "gift-cards.md"},
         "page_content": "Gift cards never expire and can be combined with one promotional code per order."},
        {"metadata": {"source": "refunds.md"},
         "page_content": "Refunds are issued to the original payment method within 5 business days of receiving the returned item."},
    ],
    "chat_history": [
        {"inputs": {"question": "Can I change the delivery address?"}, "outputs": {"answer": "Yes, until the parcel leaves the warehouse."}},
        {"inputs": {"question": "How long does a refund take?"}, "outputs": {"answer": "Refunds reach your card within 5 business days."}},
    ],
    "question": "How do I reset my password?",
}
RAG_NEXT = {  # the next request: other documents, another conversation, another question
    "retrieved_documents": [
        {"metadata": {"source": "damage.md"},
         "page_content": "Damaged items must be reported within 14 days of delivery with a photo of the damage."},
        {"metadata": {"source": "shipping.md"},
         "page_content": "Orders over 50 dollars ship free; express shipping costs 15 dollars and takes one to two business days."},
    ],
    "chat_history": [
        {"inputs": {"question": "Do you ship to Canada?"}, "outputs": {"answer": "Yes, shipping to Canada takes five to seven business days."}},
        {"inputs": {"question": "Is the two-person tent waterproof?"}, "outputs": {"answer": "Yes, its seams are taped and the fly is rated to 3,000 mm."}},
    ],
    "question": "Where is my order #4417?",
}


def test_retrieved_context_before_history_ends_the_ideal_prefix(tmp_path, cli, qwen):
    doc = check_json(cli, corpus(tmp_path) / "rag_chat.j2", cwd=tmp_path)
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert (f["variable"], f["line"], f["column"]) == ("currentDateTime", 2, 10)

    base = render("rag_chat.j2", RAG)
    assert f["evidence"]["base_render"] == base
    later = render("rag_chat.j2", {**RAG, "currentDateTime": "2025-03-14 09:27:00"})
    next_request = render("rag_chat.j2", {**RAG, **RAG_NEXT})
    # were the documents static, the ideal prefix would run on to the conversation
    docs_static = render("rag_chat.j2", {**RAG, **RAG_NEXT, "retrieved_documents": RAG["retrieved_documents"]})
    b, v, q, old = (qwen.encode(t, add_special_tokens=False).ids for t in (base, later, next_request, docs_static))
    s, ideal, p = shared_prefix(b, v), shared_prefix(b, q), len(v)
    # " gift-cards.md" is one run of tokens with its space: the shared prefix stops right before it
    assert base[: len(qwen.decode(b[:ideal]))].endswith("Sources:\n[1]")
    assert f["first_divergent_token"]["index"] == s
    assert (f["ideal_shared_tokens"], f["prompt_tokens"]) == (ideal, p)
    assert f["lost_blocks"] == lost(s, ideal, p)
    # the timestamp is charged only for the blocks before the retrieved text, not those after it
    assert shared_prefix(b, old) > ideal and lost(s, shared_prefix(b, old), p) > f["lost_blocks"]


def test_react_steps_and_tools_get_their_record_shapes(tmp_path, cli):
    d = corpus(tmp_path)
    r = cli("samples", d / "react_agent.j2", cwd=tmp_path)
    assert r.code == 0, r.err
    v = tomllib.loads(r.out)["variables"]
    steps = v["intermediate_steps"]
    assert (steps["kind"], steps["sub-kind"]) == ("per-request", "retrieved")
    assert [set(s) for s in steps["value"]] == [{"thought", "action", "observation"}] * 2
    assert [set(s["action"]) for s in steps["value"]] == [{"tool", "tool_input"}] * 2
    assert [set(t) for t in v["tools"]["value"]] == [{"name", "description"}] * 2  # |map(attribute="name") and the loop
    assert (v["input"]["kind"], v["input"]["sub-kind"]) == ("per-request", "input")


def test_macros_from_another_file_shape_their_arguments(tmp_path, cli):
    d = corpus(tmp_path)
    r = cli("samples", d / "support_with_macros.j2", cwd=tmp_path)
    assert r.code == 0, r.err
    v = tomllib.loads(r.out)["variables"]
    turns = v["conversation"]["value"]
    # render_turn(turn): turn.role, turn.content as text or a list of {type, text} parts, tool calls
    assert [t["role"] for t in turns] == ["user", "assistant"]
    assert all(p["type"] == "text" and isinstance(p["text"], str) for t in turns for p in t["content"])
    assert {c["function"]["name"] for t in turns for c in t["tool_calls"]} <= {"issue_refund", "search_orders"}
    assert [set(k) for k in v["knowledge_base"]["value"]] == [{"title", "text"}] * 2  # render_doc(doc, n)
    assert v["knowledge_base"]["sub-kind"] == "retrieved" and v["conversation"]["sub-kind"] == "history"


def test_set_aliases_namespaces_and_loop_previtem(tmp_path, cli):
    d = corpus(tmp_path)
    r = cli("samples", d / "memory_agent.j2", "--write", cwd=tmp_path)
    assert r.code == 0, r.err
    v = tomllib.loads((d / "memory_agent.samples.toml").read_text(encoding="utf-8"))["variables"]
    # `recent = messages[-6:]`, `ns.last_user = m`, `loop.previtem.role`: all of them are `messages`
    assert [set(m) for m in v["messages"]["value"]] == [{"role", "content"}] * 2
    assert isinstance(v["memory_variables"]["value"], dict)  # .items()
    r = cli("render", d / "memory_agent.j2", "--scenario", d / "memory_agent.samples.toml", "--tokenizer", QWEN,
            "--output-format", "json", cwd=tmp_path)
    first_user = v["messages"]["value"][0]["content"]
    assert f"The user's last message was: {first_user}" in r.json()["render"]


def test_extends_and_includes_are_followed(tmp_path, cli):
    d = corpus(tmp_path)
    doc = check_json(cli, d / "handbook_qa.j2", d / "search_summary.j2", cwd=tmp_path)
    where = {(f["path"], f["variable"]) for f in doc["findings"] if f["code"] == "M101"}
    # the date in the parent template and the clock and id in the included header, found from the child
    assert {("prompts/base_prompt.j2", "today_str"), ("prompts/header.j2", "now_utc"), ("prompts/header.j2", "requestId")} <= where


def test_written_samples_round_trip_to_the_same_findings(tmp_path, cli):
    d = corpus(tmp_path)
    before = check_json(cli, d, cwd=tmp_path)
    templates = sorted(d.glob("*.j2"))
    r = cli("samples", "--write", *templates, cwd=tmp_path)
    assert r.code == 0, r.err
    assert sorted(p.name for p in d.glob("*.samples.toml")) == sorted(t.stem + ".samples.toml" for t in templates)
    after = check_json(cli, d, cwd=tmp_path)

    def same(findings):
        # an order finding on inferred stand-in items says so (and how to declare the order) until
        # the samples file holds them: its help and notes follow the file, every figure stays the same
        return [{k: v for k, v in f.items() if not (f["code"] in ("M202", "M203") and k in ("help", "notes", "variant"))}
                for f in findings]

    assert same(before["findings"]) == same(after["findings"]) and before["errors"] == after["errors"] == []
    assert len(before["findings"]) >= 8


def test_samples_output_says_what_and_why(tmp_path, cli):
    d = corpus(tmp_path)
    r = cli("samples", d / "rag_chat.j2", cwd=tmp_path)
    assert r.code == 0, r.err
    text = r.out
    assert "[variables.currentDateTime]\n# volatile timestamp: the name's words (current, date, time) include `time`\n" in text
    assert "# shape: a list of records, each with .metadata.source, .page_content (iterated at line 6)" in text
    assert "# per-request history: the name's words (chat, history) include `history`" in text
    doc = tomllib.loads(text)["variables"]
    assert [k for k in doc] == ["currentDateTime", "retrieved_documents", "chat_history", "question"]  # first use
    assert doc["retrieved_documents"]["value"] == RAG["retrieved_documents"]
    assert doc["retrieved_documents"]["variant"] == RAG_NEXT["retrieved_documents"]
    assert doc["chat_history"]["value"] == RAG["chat_history"]
    assert "variant" not in doc["question"]  # the kind's default second value (another question)


def test_check_show_inferred_prints_each_templates_samples(tmp_path, cli):
    d = corpus(tmp_path)
    r = cli("check", "--tokenizer", QWEN, "--no-cache", "--show-inferred", d / "rag_chat.j2", d / "react_agent.j2", cwd=tmp_path)
    assert r.code == 1, r.err
    assert "inferred samples for prompts/rag_chat.j2 (write them beside it: promptlint samples prompts/rag_chat.j2 --write)" in r.out
    assert "[variables.intermediate_steps]" in r.out and "[variables.chat_history]" in r.out
    assert r.out.index("Found ") < r.out.index("inferred samples for")  # after the report
    r = cli("check", "--tokenizer", QWEN, "--show-inferred", "--output-format", "json", d / "rag_chat.j2", cwd=tmp_path)
    assert r.code == 2 and "--show-inferred prints in the full output format" in r.err


def test_samples_command_errors_name_the_file(tmp_path, cli):
    d = corpus(tmp_path)
    cases = [
        ((d,), "prompts: give template files, not a directory"),
        ((d / "missing.j2",), "prompts/missing.j2: no such file"),
    ]
    (tmp_path / "app.py").write_text("x = 1\n", encoding="utf-8")
    cases.append(((tmp_path / "app.py",), "app.py: not an application template"))
    (d / "broken.j2").write_text("Hello {{ name ", encoding="utf-8")
    cases.append(((d / "broken.j2",), "prompts/broken.j2:1: E001 template syntax error"))
    for args, words in cases:
        r = cli("samples", *args, cwd=tmp_path)
        assert r.code == 2 and words in r.err, (args, r.err)
    assert cli("samples", "--write", d / "rag_chat.j2", cwd=tmp_path).code == 0
    r = cli("samples", "--write", d / "rag_chat.j2", cwd=tmp_path)
    assert r.code == 2 and "prompts/rag_chat.samples.toml exists; pass --force to replace it" in r.err
    assert cli("samples", "--write", "--force", d / "rag_chat.j2", cwd=tmp_path).code == 0
    (d / "react_agent.samples.json").write_text('{"variables": {}}', encoding="utf-8")
    r = cli("samples", "--write", d / "react_agent.j2", cwd=tmp_path)
    assert r.code == 2 and "prompts/react_agent.samples.json exists" in r.err
    assert not (d / "react_agent.samples.toml").exists()


def test_a_template_with_a_samples_file_shows_declared_and_inferred(tmp_path, cli):
    d = corpus(tmp_path)
    (d / "rag_chat.samples.toml").write_text('[variables]\nquestion = "Where is my parcel?"\n', encoding="utf-8")
    r = cli("samples", d / "rag_chat.j2", cwd=tmp_path)
    assert r.code == 0, r.err
    assert "[variables.question]\n# declared in prompts/rag_chat.samples.toml\nkind = \"static\"" in r.out
    assert json.dumps("Where is my parcel?") in r.out and "[variables.chat_history]" in r.out


def test_a_mapping_iterated_by_its_keys_and_indexed_by_them(tmp_path, cli, qwen):
    # `{% for key in prefs %}{{ prefs[key] }}` iterates a dict's keys: the input is a mapping (a list
    # would fail the render with E004), and its insertion order reaches the prompt (M201)
    src = ("You are a helpful assistant for Northwind Traders. Use the customer's preferences below.\n"
           "{% for key in preferences %}{{ key }} = {{ preferences[key] }}\n{% endfor %}"
           "Question: {{ question }}\n")
    (tmp_path / "prefs.j2").write_text(src, encoding="utf-8")
    doc = check_json(cli, tmp_path / "prefs.j2", cwd=tmp_path)
    assert doc["errors"] == []
    (f,) = [f for f in doc["findings"] if f["code"] == "M201"]
    assert (f["variable"], f["line"]) == ("preferences", 2)
    env = Environment()
    prefs = {"key_a": "sample preferences.key_a", "key_b": "sample preferences.key_b"}
    base = env.from_string(src).render(preferences=prefs, question="How do I reset my password?")
    flipped = env.from_string(src).render(preferences=dict(reversed(list(prefs.items()))), question="How do I reset my password?")
    assert (f["evidence"]["base_render"], f["evidence"]["variant_render"]) == (base, flipped)
    b, v = (qwen.encode(t, add_special_tokens=False).ids for t in (base, flipped))
    assert f["first_divergent_token"]["index"] == shared_prefix(b, v)
