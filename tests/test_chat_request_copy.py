"""A chat request's copy (promptlint.chat.request.plain_copy): what copy.deepcopy gives -- equal,
sharing nothing with the original, shared and cyclic parts kept as such -- without deepcopy's
dispatch for plain data (dicts, lists, strings, numbers)."""

from __future__ import annotations

import copy
from datetime import datetime

from promptlint.chat import request as request_mod
from promptlint.chat.request import ChatRequest, plain_copy


def _data():
    shared = {"type": "function", "function": {"name": "get_order", "parameters": {"required": ["id"]}}}
    cyclic = ["loop"]
    cyclic.append(cyclic)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "tool_calls": [shared, shared], "when": datetime(2025, 3, 14, 9, 26), "pair": (1, [2])}]
    return messages, shared, cyclic


def test_plain_copy_is_deepcopy():
    messages, shared, cyclic = _data()
    for value in (messages, {"k": cyclic, 1: None, "b": b"x", "f": 0.5, "t": True}, cyclic, "text", 7, None):
        mine, theirs = plain_copy(value), copy.deepcopy(value)
        assert repr(mine) == repr(theirs)
    mine = plain_copy(messages)
    assert mine == messages and mine is not messages and mine[0] is not messages[0]
    calls = mine[2]["tool_calls"]
    assert calls[0] is calls[1] and calls[0] is not shared  # shared once, as deepcopy shares it
    assert mine[2]["pair"] == (1, [2]) and mine[2]["pair"][1] is not messages[2]["pair"][1]
    loop = plain_copy(cyclic)
    assert loop[1] is loop and loop is not cyclic


def test_a_request_copy_of_plain_data_needs_no_deepcopy(monkeypatch):
    req = ChatRequest([{"role": "user", "content": "Where is my order?"}], tools=[{"type": "function", "function": {"name": "f"}}],
                      documents=[{"title": "Policy", "text": "Returns within 30 days."}], add_generation_prompt=True,
                      kwargs={"enable_thinking": False, "custom": {"a": [1, 2]}})
    calls = []
    real = copy.deepcopy
    monkeypatch.setattr(request_mod.copy, "deepcopy", lambda *a, **k: calls.append(a) or real(*a, **k))
    mine = req.copy()
    assert calls == []
    assert mine == req and repr(mine) == repr(real(req))
    assert mine.messages is not req.messages and mine.kwargs["custom"]["a"] is not req.kwargs["custom"]["a"]
    mine.messages[0]["content"] = "changed"
    assert req.messages[0]["content"] == "Where is my order?"
