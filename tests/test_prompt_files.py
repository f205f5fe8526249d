"""Issue 32 family 2: Prompty files and the role-line formats of Python RAG stacks.

- a `.prompty` file's YAML front matter is not prompt text: its `sample:` values are the inputs'
  values (`promptlint samples` accepts the file and shows them), its body is rendered and split
  into messages on role lines as Prompty's `PromptyChatParser.parse` does, and the messages are
  framed as chat turns (ChatML, as `promptlint diff` frames a body without a chat template);
- promptflow's chat prompts (`# system:` / `# user:` lines; contents stripped, as its
  `parse_chat` does) and Semantic Kernel's `<message role="...">` prompts are split the same way;
- findings point at the body's own line and column.

Each test splits and frames the render itself (the runtimes' rules re-implemented here from
their public parsers), encodes with the real Qwen2.5 tokenizer and compares its figures with
promptlint's. The files follow the public samples' shapes (Prompty's Contoso Chat, promptflow's
chat-with-pdf flow, Semantic Kernel's chat prompt templates).
"""

from __future__ import annotations

import re

from jinja2 import Environment

from conftest import QWEN, shared_prefix

B = 16

SUPPORT_PROMPTY = """\
---
name: Router Support Agent
description: Answers home-network questions from the knowledge base.
authors:
  - Support Tools Team
model:
  api: chat
  configuration:
    type: azure_openai
    azure_deployment: gpt-4o-mini
  parameters:
    max_tokens: 800
    temperature: 0.1
sample:
  session_id: 5f2a9c1e-8d4b-4e1a-9a57-2c6e0b1d7f33
  question: How do I reset the password on my router?
  documents:
    - title: Resetting your router
      content: Hold the reset button for ten seconds until the lights blink.
---
system:
Session {{session_id}}.
You are the support assistant for Lumen home routers. Answer only from the knowledge base articles below and
cite each article you use by its title in square brackets. If the articles do not answer the question, say so
and offer to open a ticket. Never ask for the customer's Wi-Fi password and never suggest disabling the firewall.
Keep answers under 120 words and use numbered steps for procedures.

# Knowledge base
{% for doc in documents %}
## {{doc.title}}
{{doc.content}}
{% endfor %}

user:
{{question}}
"""
SESSION_LINE = 22  # `Session {{session_id}}.`: the body's own line in the file

PROMPTFLOW = """\
# system:
You are a financial-documents assistant for Northwind Capital. Answer the question using only the retrieved
passages; quote figures exactly as they appear and name the report each figure comes from. If the passages do
not contain the answer, reply "I could not find this in the reports." Do not give investment advice.
Request received at {{ request_time }}.
Answer in the language of the question, keep each answer under 200 words, and list the reports you used at the end.

{% for item in chat_history %}
# user:
{{ item.inputs.question }}
# assistant:
{{ item.outputs.answer }}
{% endfor %}

# user:
Passages:
{{ contexts }}

Question: {{ question }}
"""

SEMANTIC_KERNEL = """\
<message role="system">You are the travel concierge of Contoso Air. Help travellers with bookings, baggage rules and
loyalty points. Quote fares exactly as the booking tool returns them and never promise an upgrade.
Trace {{ trace_id }}.
Baggage policy: one cabin bag of up to 8 kg and one personal item; checked bags depend on the fare family.
Loyalty: points post 72 hours after the flight; expired points cannot be reinstated.</message>
<message role="user">{{ request }}</message>
"""

PROMPTY_ROLE = re.compile(r"(?i)^\s*#?\s*(assistant|function|system|user|tools)(\[.*\])?\s*:\s*$")


def prompty_split(text):
    """microsoft/prompty PromptyChatParser.parse: role lines start messages, contents joined with \\n."""
    messages, role, buffer = [], "system", []
    for line in text.splitlines():
        m = PROMPTY_ROLE.match(line)
        if m:
            if buffer:
                messages.append((role, "\n".join(buffer)))
            role, buffer = m.group(1).lower(), []
        else:
            buffer.append(line)
    if buffer:
        messages.append((role, "\n".join(buffer)))
    return messages


def promptflow_split(text):
    """promptflow parse_chat: split on role lines, each content stripped."""
    chunks = re.split(r"(?i)^\s*#?\s*(system|user|assistant|function|tool)\s*:\s*\n", text, flags=re.MULTILINE)
    return [(chunks[i].lower(), chunks[i + 1].strip()) for i in range(1, len(chunks) - 1, 2)]


def chatml(messages):
    return "".join(f"<|im_start|>{r}\n{c}<|im_end|>\n" for r, c in messages) + "<|im_start|>assistant\n"


def check(cli, path, cwd):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", path, cwd=cwd)
    assert r.code in (0, 1), r.err
    return r.json()


def lost(shared, ideal, prompt):
    return min(ideal, prompt - 1) // B - min(shared, prompt - 1) // B


def test_prompty_front_matter_samples_and_role_lines(tmp_path, cli, qwen):
    (tmp_path / "support.prompty").write_text(SUPPORT_PROMPTY)
    doc = check(cli, "support.prompty", tmp_path)
    assert doc["errors"] == []
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert (f["line"], f["column"], f["variable"]) == (SESSION_LINE, 9, "session_id")

    body = SUPPORT_PROMPTY.split("---\n", 2)[2]
    docs = [{"title": "Resetting your router", "content": "Hold the reset button for ten seconds until the lights blink."}]

    def framed(session, documents=docs, question="How do I reset the password on my router?"):
        text = Environment(keep_trailing_newline=True).from_string(body).render(session_id=session, documents=documents, question=question)
        return chatml(prompty_split(text))

    base = framed("5f2a9c1e-8d4b-4e1a-9a57-2c6e0b1d7f33")
    assert f["evidence"]["base_render"] == base  # the sample values, split and framed; no front matter
    assert base.startswith("<|im_start|>system\nSession 5f2a9c1e")
    other = re.search(r"Session ([0-9a-z-]{36})\.", f["evidence"]["variant_render"]).group(1)
    assert f["evidence"]["variant_render"] == framed(other)
    b, v = qwen.encode(base).ids, qwen.encode(framed(other)).ids
    ideal = shared_prefix(b, qwen.encode(framed("5f2a9c1e-8d4b-4e1a-9a57-2c6e0b1d7f33", [{"title": "Damaged items", "content": "x"}], "Where is my order?")).ids)
    s = shared_prefix(b, v)
    assert s == 5  # <|im_start|> system \n Session ␣ : the session's first character is token 5
    assert (f["first_divergent_token"]["index"], f["shared_tokens"], f["prompt_tokens"]) == (s, s, len(b))
    assert f["ideal_shared_tokens"] == ideal and f["lost_blocks"] == lost(s, ideal, len(v)) == 8
    assert len(b) < 200  # the front matter (~160 tokens of YAML) is not in the prompt


def test_samples_accepts_a_prompty_file_and_shows_its_sample_values(tmp_path, cli):
    (tmp_path / "support.prompty").write_text(SUPPORT_PROMPTY)
    r = cli("samples", "support.prompty", cwd=tmp_path)
    assert r.code == 0, r.err
    assert 'value = "How do I reset the password on my router?"' in r.out
    assert "value from the front matter's `sample.question`" in r.out
    assert "[variables.session_id]" in r.out and 'kind = "volatile"' in r.out
    assert "azure_deployment" not in r.out and "max_tokens" not in r.out  # front matter keys are no inputs


def test_a_clean_prompty_file_gives_nothing(tmp_path, cli):
    # counter-example: the session id at the end of the user turn; the system turn is shared
    clean = SUPPORT_PROMPTY.replace("Session {{session_id}}.\n", "").replace("{{question}}\n", "{{question}}\n(session {{session_id}})\n")
    (tmp_path / "clean.prompty").write_text(clean)
    doc = check(cli, "clean.prompty", tmp_path)
    assert doc["errors"] == [] and [f["code"] for f in doc["findings"] if f["severity"] != "info"] == []


def test_promptflow_role_lines(tmp_path, cli, qwen):
    (tmp_path / "chat_with_pdf.jinja2").write_text(PROMPTFLOW)
    doc = check(cli, "chat_with_pdf.jinja2", tmp_path)
    assert doc["errors"] == []
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert (f["line"], f["column"], f["variable"]) == (5, 21, "request_time")
    base = f["evidence"]["base_render"]
    # the render, re-split independently, is promptflow's messages framed: role lines gone, contents stripped
    assert "# system:" not in base and "# user:" not in base
    assert base.startswith("<|im_start|>system\nYou are a financial-documents assistant")
    assert ".\n\n<|im_end|>" not in base and "Request received at 2025-03-14 09:26:53.\nAnswer in the" in base
    assert "list the reports you used at the end.<|im_end|>\n" in base
    assert base.endswith("<|im_end|>\n<|im_start|>assistant\n")
    later = base.replace("09:26:53", "09:27:00")
    assert f["evidence"]["variant_render"] == later
    s = shared_prefix(qwen.encode(base).ids, qwen.encode(later).ids)
    assert f["first_divergent_token"]["index"] == s and f["first_divergent_token"]["base_text"] == "6"


def test_promptflow_split_matches_the_runtime_rule(tmp_path, cli):
    # the independent splitter on the framed render's source: same roles in the same order
    text = Environment(trim_blocks=True, keep_trailing_newline=True).from_string(PROMPTFLOW).render(
        request_time="t", chat_history=[{"inputs": {"question": "q1"}, "outputs": {"answer": "a1"}}], contexts="c", question="q2")
    assert [r for r, _ in promptflow_split(text)] == ["system", "user", "assistant", "user"]
    (tmp_path / "p.jinja2").write_text(PROMPTFLOW)
    doc = check(cli, "p.jinja2", tmp_path)
    base = [f for f in doc["findings"] if f["code"] == "M101"][0]["evidence"]["base_render"]
    roles = re.findall(r"<\|im_start\|>(\w+)\n", base)
    assert roles[0] == "system" and roles[-2:] == ["user", "assistant"] and set(roles) <= {"system", "user", "assistant"}


def test_semantic_kernel_message_elements(tmp_path, cli, qwen):
    (tmp_path / "concierge.jinja2").write_text(SEMANTIC_KERNEL)
    doc = check(cli, "concierge.jinja2", tmp_path)
    assert doc["errors"] == []
    (f,) = [f for f in doc["findings"] if f["code"] == "M101"]
    assert (f["line"], f["column"], f["variable"]) == (3, 7, "trace_id")
    base = f["evidence"]["base_render"]
    assert "<message" not in base and base.startswith("<|im_start|>system\nYou are the travel concierge")
    assert "be reinstated.<|im_end|>\n<|im_start|>user\n" in base
    b, v = qwen.encode(base).ids, qwen.encode(f["evidence"]["variant_render"]).ids
    assert f["first_divergent_token"]["index"] == shared_prefix(b, v)


def test_a_plain_template_with_a_role_word_is_not_split(tmp_path, cli):
    # a completion-style transcript whose first line is no role line stays one prompt
    src = "Answer as the Acme helpdesk.\nUser:\n{{ question }}\nAssistant:\n"
    (tmp_path / "plain.j2").write_text(src)
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "plain.j2", cwd=tmp_path)
    assert r.code == 0, r.out
    from promptlint.promptfiles import read

    assert read(tmp_path / "plain.j2", src) is None
