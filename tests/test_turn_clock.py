"""Issue 32 family 7 (the clock between turns): turn N+1 is rendered seconds after turn N, so a
template that stamps each reply with `strftime_now` to the second (in the generation prompt, and
again when the history re-renders it) re-renders the reply differently on the next turn (M204,
figures re-computed here). M101 cannot see it (the stamp comes after the request) and a frozen
clock hid it: turn N's stamp and turn N+1's re-rendered one were the same. A daily
date does not move between turns that are seconds apart and stays clean.

The template follows the ChatML shape (Qwen 2.5); renders are rebuilt with plain Jinja in a
sandbox as transformers does, tokens from the real Qwen2.5 tokenizer.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from jinja2.sandbox import ImmutableSandboxedEnvironment

from conftest import QWEN, shared_prefix

B = 16
NOW = datetime(2025, 3, 14, 9, 26, 53)  # the chat scenarios' documented clock
TEMPLATE = """\
{{- '<|im_start|>system\\nYou are Orbit, the research assistant of the Helios lab. You answer from the lab notebook, cite entries by their id, and say so when the notebook does not cover a question. Keep answers short and precise.<|im_end|>\\n' }}
{%- for message in messages %}
    {%- if message.role == 'assistant' %}
        {{- '<|im_start|>assistant\\n[' + strftime_now('%H:%M:%S') + ']\\n' + message.content + '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n[' + strftime_now('%H:%M:%S') + ']\\n' }}{%- endif %}
"""
MESSAGES = [{"role": "user", "content": "What did we measure on Tuesday?"}]


def render(src, now, messages, add_generation_prompt=True):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["strftime_now"] = lambda fmt: now.strftime(fmt)
    return env.from_string(src).render(messages=messages, add_generation_prompt=add_generation_prompt)


def check(cli, tmp_path, src):
    (tmp_path / "orbit.jinja").write_text(src)
    (tmp_path / "orbit.samples.json").write_text(json.dumps({"messages": MESSAGES, "add_generation_prompt": True}))
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "--evidence", "orbit.jinja", cwd=tmp_path)
    assert r.code in (0, 1), r.err
    return r.json()


def test_a_per_second_stamp_on_each_reply_moves_between_turns(tmp_path, cli, qwen):
    from promptlint.checks.history_not_prefix_stable import NEXT_USER, REPLY  # the scenario's inputs

    doc = check(cli, tmp_path, TEMPLATE)
    (f,) = [f for f in doc["findings"] if f["code"] == "M204"]
    assert f["line"] == 4 and [g for g in doc["findings"] if g["code"] == "M101"] == []
    prompt = render(TEMPLATE, NOW, MESSAGES)
    grown = MESSAGES + [{"role": "assistant", "content": REPLY}, {"role": "user", "content": NEXT_USER}]
    after = render(TEMPLATE, NOW + timedelta(seconds=7), grown)
    assert f["evidence"]["variant_render"] == after
    # the engine holds turn N's prompt and the generated reply (its stop token never cached)
    cached = qwen.encode(prompt).ids + qwen.encode(REPLY).ids
    assert prompt.endswith("<|im_start|>assistant\n[09:26:53]\n")
    a = qwen.encode(after).ids
    s = shared_prefix(cached, a)
    assert (prompt + REPLY)[len(qwen.decode(cached[:s], skip_special_tokens=False)):].startswith("6:53]")  # the reply's stamp
    assert (f["first_divergent_token"]["index"], f["prompt_tokens"]) == (s, len(a))
    assert f["lost_blocks"] == min(len(cached), len(a) - 1) // B - min(s, len(a) - 1) // B > 0


def test_a_daily_date_does_not_move_between_turns(tmp_path, cli):
    doc = check(cli, tmp_path, TEMPLATE.replace("%H:%M:%S", "%Y-%m-%d"))
    assert [f for f in doc["findings"] if f["code"] == "M204"] == []
