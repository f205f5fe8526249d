"""Work a run does once instead of per render: a chat request rendered once per scenario
(chat/run.py), a render's source map built when first read (render/sourcemap.py), where a
chunk came from worked out once per yield point (render/trace.py)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from conftest import QWEN
from promptlint import render as render_module
from promptlint.chat.request import ChatProfile, ChatRequest
from promptlint.chat.run import ChatRun, ChatTemplate
from promptlint.chat.scenarios import ChatScenario
from promptlint.chat.source import ChatSource
from promptlint.arithmetic.compare import engine_profile
from promptlint.render import load_template, render
from promptlint.render.sourcemap import Location, SourceMap, SourceText
from promptlint.tokenization.tokens import load, resolve

NOW = datetime(2025, 3, 14, 9, 26, 53)
CHAT = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"


def chat_run():
    source = ChatSource(Path("t.jinja"), {"default": CHAT}, {}, [])
    chat = ChatTemplate(source, ChatProfile())
    scenario = ChatScenario("simple", ChatRequest([{"role": "user", "content": "Where is my order?"}], add_generation_prompt=True), now=NOW)
    return ChatRun(chat, scenario, "t.jinja", lambda: load(resolve(str(QWEN))), engine_profile("vllm", 16))


def test_a_chat_request_is_rendered_once_per_scenario():
    run = chat_run()
    first = ChatRequest([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], add_generation_prompt=False)
    same = ChatRequest([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], add_generation_prompt=False)
    reordered = ChatRequest([{"content": "hi", "role": "user"}, {"role": "assistant", "content": "hello"}], add_generation_prompt=False)
    run.base()  # the scenario's own render: other requests are tokenized in a window against it
    before = render_module.render_count()
    a, _ = run.render_request(first)
    b, _ = run.render_request(same)
    assert b is a and render_module.render_count() - before == 1
    assert a.text == "<|user|>hi\n<|assistant|>hello\n"
    c, _ = run.render_request(reordered)  # another key order is another request (a template may print the dict)
    assert c is not a and c.text == a.text and render_module.render_count() - before == 2
    d, _ = run.render_request(first, datetime(2025, 3, 15))  # another clock: rendered again
    assert d is not a and render_module.render_count() - before == 3
    from tokenizers import Tokenizer

    assert list(a.ids) == Tokenizer.from_file(str(QWEN)).encode(a.text, add_special_tokens=False).ids


def test_a_deferred_source_map_locates_as_one_built_chunk_by_chunk(tmp_path):
    text = "Hello {{ name }}!\n{% for d in docs %}[{{ loop.index }}] {{ d }}\n{% endfor %}Bye {{ name }}\n"
    path = tmp_path / "t.j2"
    path.write_text(text, encoding="utf-8")
    loaded = load_template(path, source=text)
    rendered = render(loaded, {"name": "Ann", "docs": ["alpha", "beta"]})
    assert rendered.text == "Hello Ann!\n[1] alpha\n[2] beta\nBye Ann"  # Jinja drops the final newline
    eager = SourceMap({"t.j2": SourceText(text)})
    offset = 0
    for chunk in rendered.sourcemap.chunks:  # rebuilt by add(), chunk by chunk
        piece = rendered.text[chunk.start : chunk.end]
        eager.add(offset, piece, chunk.template, chunk.line, chunk.kind == "literal")
        offset += len(piece)
    assert eager.chunks == rendered.sourcemap.chunks
    line2 = text.splitlines()[1]
    # `beta` (the second pass of the loop's `{{ d }}`): that expression on line 2
    col = line2.index("{{ d }}") + 1
    at = rendered.text.index("beta")
    assert rendered.sourcemap.locate(at) == Location("t.j2", 2, col, 2, col + len("{{ d }}")) == eager.locate(at)
    # the literal `Bye ` after the loop, on line 3
    col = text.splitlines()[2].index("Bye") + 1
    assert rendered.sourcemap.locate(rendered.text.index("Bye")) == Location("t.j2", 3, col, 3, col + 1)


def test_every_render_of_a_template_maps_its_chunks_alike(tmp_path):
    text = "{% for d in docs %}{{ d }}|{% endfor %}\nend {{ x }}\n"
    path = tmp_path / "t.j2"
    path.write_text(text, encoding="utf-8")
    loaded = load_template(path, source=text)
    one = render(loaded, {"docs": ["a", "b", "c"], "x": 1})
    two = render(loaded, {"docs": ["a", "b", "c"], "x": 1})  # every yield point seen before
    assert [(c.template, c.kind, c.line, c.source_start) for c in one.sourcemap.chunks] == [
        (c.template, c.kind, c.line, c.source_start) for c in two.sourcemap.chunks
    ]
    kinds = [(one.text[c.start : c.end], c.kind, c.line) for c in one.sourcemap.chunks]
    assert kinds[:6] == [("a", "expression", 1), ("|", "literal", 1), ("b", "expression", 1), ("|", "literal", 1),
                         ("c", "expression", 1), ("|", "literal", 1)]
    assert ("1", "expression", 2) in kinds
