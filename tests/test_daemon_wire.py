"""daemon/wire.py: the frame headers' JSON without the json package, compared with json itself on
the values a header carries and on generated ones (hypothesis), and on text json refuses."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from promptlint.daemon import wire

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
                      max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_dumps_is_json_dumps_and_loads_reads_it_back(value):
    text = wire.dumps(value)
    assert text == json.dumps(value)
    assert wire.loads(text) == json.loads(text)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_loads_reads_what_json_writes_in_any_layout(value):
    for text in (json.dumps(value, indent=2), json.dumps(value, ensure_ascii=False), " \n" + json.dumps(value) + "\t\r\n"):
        assert wire.loads(text) == json.loads(text)


def test_a_request_header_round_trips_with_what_argv_and_environ_can_hold():
    # a file name that is not UTF-8 reaches argv and the environment as lone surrogates (surrogateescape)
    header = {"op": "check", "argv": ["check", "caf\udce9.j2", "--select", "M1"], "cwd": "/tmp/x y",
              "env": {"LANG": "C.UTF-8", "WEIRD": "tab\tquote\"back\\slash\x00nul\u2028"},
              "stdout": {"tty": False, "encoding": "utf-8", "errors": "strict"}, "columns": 80, "verify": True}
    text = wire.dumps(header)
    assert text == json.dumps(header) and text.isascii()
    assert wire.loads(text) == header == json.loads(text)


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a": 1} x', "[1,]", "nul", '"\\x"', '{"a" 1}', "[1] [2]", "\ufeff{}"])
def test_loads_refuses_what_json_refuses(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        wire.loads(text)


def test_dumps_falls_back_to_json_for_what_it_does_not_spell_itself():
    assert wire.dumps({1: float("nan"), None: [float("inf")]}) == json.dumps({1: float("nan"), None: [float("inf")]})
    with pytest.raises(TypeError):
        wire.dumps({"a": object()})


def test_a_header_nested_past_the_recursion_limit_is_a_protocol_error_not_a_crash():
    import socket

    from promptlint.daemon import protocol

    a, b = socket.socketpair()
    try:
        protocol.send(a, b"[" * 20_000 + b"]" * 20_000)  # past any recursion limit, within the socket buffer
        with pytest.raises(protocol.ProtocolError):
            protocol.recv_json(b)
        protocol.send(a, b"\xff{}")
        with pytest.raises(protocol.ProtocolError):
            protocol.recv_json(b)
    finally:
        a.close()
        b.close()
