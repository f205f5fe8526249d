"""Recorded bodies parsed with the previous body's history shared (``conversation.bodies``): the
result is always ``json.loads``'s (its errors too), the messages repeated as the same text are the
same objects, and the raw text of each message list is the text of the body."""

from __future__ import annotations

import json

import pytest

from promptlint.conversation.bodies import Parser

FIRST = '{"messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}], "model": "m"}'
SECOND = ('{"messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}, '
          '{"role": "assistant", "content": "Hello \\u00e9"},\n {"role": "user", "content": "more"} ], "model": "m"}')


def test_a_repeated_history_is_shared_and_only_the_new_messages_are_parsed():
    parser = Parser()
    first, raws = parser.parse(FIRST, "t")
    assert first == json.loads(FIRST) and raws == {"messages": FIRST[13:FIRST.index("]") + 1]}
    second, raws = parser.parse(SECOND, "t")
    assert second == json.loads(SECOND) and list(second) == ["messages", "model"]
    assert [m is n for m, n in zip(second["messages"], first["messages"])] == [True, True]
    assert second["messages"] is not first["messages"] and len(first["messages"]) == 2  # a new list; the old one unchanged
    assert raws["messages"] == SECOND[13:SECOND.rindex("]") + 1]
    # another sender, or the same history written otherwise (other separators): parsed whole, the same value
    for text, sender in ((SECOND, "u"), (SECOND.replace('", "', '","'), "t")):
        again, _ = parser.parse(text, sender)
        assert again == json.loads(text) and not any(m is n for m, n in zip(again["messages"], first["messages"]))


@pytest.mark.parametrize("text", [
    '{"messages": [1, 2], "messages": [1]}',  # a repeated key: the last value, as json.loads
    ' \n{"messages": []}\t',
    '{}',
    '[1, 2]',
    '"text"',
    '{"input": "a string"}',
    '{"contents": [{"parts": [{"text": "x"}]}], "n": 1.5e3, "ok": true, "none": null}',
])
def test_the_value_is_json_loads_value(text):
    parser = Parser()
    parser.parse('{"messages": [1]}', "t")
    assert parser.parse(text, "t")[0] == json.loads(text)


@pytest.mark.parametrize("text", [
    '{"messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"},]}',  # a trailing comma
    '{"messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}, }',
    '{"messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}] } x',
    '\ufeff{"messages": []}',
    '{"messages": [1], }',
    '',
])
def test_a_text_json_loads_refuses_is_refused_alike(text):
    parser = Parser()
    parser.parse(FIRST, "t")
    with pytest.raises(ValueError) as theirs:
        json.loads(text)
    with pytest.raises(ValueError) as ours:
        parser.parse(text, "t")
    assert str(ours.value) == str(theirs.value)


def test_grouping_makes_a_shared_openings_text_once(monkeypatch):
    from promptlint.conversation import grouping, shapes
    from promptlint.conversation.capture import Request

    history = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}]
    parser, requests = Parser(), []
    for turn in range(4):  # the same conversation growing: 2, 4, 6, 8 messages
        body, _ = parser.parse(json.dumps({"messages": history, "model": "m"}), "t")
        requests.append(Request(turn + 1, body, "test_app.py", 3, test_id="t"))
        history = history + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": f"q{turn}"}]
    other = {"messages": [{"role": "user", "content": "hi"}], "model": "m"}  # the same opening, its own object
    requests.append(Request(5, json.loads(json.dumps(other)), "test_app.py", 3, test_id="t"))
    made = []
    real = shapes.message_canon
    monkeypatch.setattr(shapes, "message_canon", lambda m, kind: made.append(m) or real(m, kind))
    [(name, grouped)] = grouping.group(requests)
    assert name == "t #1" and [r.index for r in grouped] == [1, 2, 3, 4, 5]  # one conversation, as before
    assert len(made) == 2  # the opening shared by requests 1-4 once, request 5's own once
