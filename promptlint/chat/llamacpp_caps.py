"""What llama.cpp's server believes a chat template supports (``jinja::caps_get``, common/jinja/caps.cpp).

llama.cpp (commit 0c1e570) renders each template once per probe request and watches which
inputs the template reads ("used") and how (a ``string`` test, iteration, indexing,
``selectattr``). The server then adapts every real request to the result: string content
becomes a list of text parts (or the reverse), a system message is merged into the next one,
tool-call arguments given as JSON strings become objects. The probes below are llama.cpp's;
they run in promptlint's Jinja environment on tracking containers:

- reading a mapping's key (``m.content``, ``m['content']``, ``m.get('content')``, ``items()``,
  ``values()``) marks that value used; ``tojson`` and ``string`` mark everything inside;
- iterating a list, or indexing it with an integer, is "array access"; iterating a string
  fails (llama.cpp's ``for`` accepts only arrays and objects).

llama.cpp also counts a variable read by name (``{% set c = m.get('content') %}{{ c }}``);
Jinja gives no hook for that, so ``get``/``items``/``values`` count as reads here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, Optional, Set, Tuple

STRING_MARKER = "STRING_MARKER"


@dataclass(frozen=True)
class Caps:
    supports_string_content: bool = True
    supports_typed_content: bool = False
    supports_system_role: bool = True
    supports_tools: bool = True
    supports_tool_calls: bool = True
    supports_object_arguments: bool = False


class _Tracker:
    def __init__(self):
        self.used: Set[Tuple] = set()
        self.ops: Dict[Tuple, Set[str]] = {}

    def use(self, path: Tuple) -> None:
        self.used.add(path)

    def op(self, path: Tuple, name: str) -> None:
        self.used.add(path)
        self.ops.setdefault(path, set()).add(name)

    def deep(self, value: Any) -> None:
        path = getattr(value, "_path", None)
        if path is None:
            return
        self.used.add(path)
        if isinstance(value, dict):
            for v in dict.values(value):
                self.deep(v)
        elif isinstance(value, list):
            for v in list.__iter__(value):
                self.deep(v)


class _TDict(dict):
    def __init__(self, items, tracker: _Tracker, path: Tuple):
        super().__init__((k, _wrap(v, tracker, path + (k,))) for k, v in items)
        self._tracker = tracker
        self._path = path

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        self._tracker.op(self._path, "object_access")
        self._tracker.use(self._path + (key,))
        return value

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            return self[key]
        self._tracker.op(self._path, "get")
        return default

    def items(self):
        self._tracker.op(self._path, "items")
        for k in dict.keys(self):
            self._tracker.use(self._path + (k,))
        return dict.items(self)

    def values(self):
        self._tracker.op(self._path, "values")
        for k in dict.keys(self):
            self._tracker.use(self._path + (k,))
        return dict.values(self)

    def __iter__(self):
        self._tracker.op(self._path, "object_access")
        return dict.__iter__(self)


class _TList(list):
    def __init__(self, items, tracker: _Tracker, path: Tuple):
        super().__init__(_wrap(v, tracker, path + (i,)) for i, v in enumerate(items))
        self._tracker = tracker
        self._path = path

    def __iter__(self):
        self._tracker.op(self._path, "array_access")
        for item in list.__iter__(self):
            path = getattr(item, "_path", None)
            if path is not None:
                self._tracker.use(path)  # the loop variable is read in the body
            yield item

    def __getitem__(self, index):
        value = list.__getitem__(self, index)
        if isinstance(index, int):
            self._tracker.op(self._path, "array_access")
            path = getattr(value, "_path", None)
            if path is not None:
                self._tracker.use(path)
        return value


class _TStr(str):
    def __new__(cls, value, tracker: _Tracker, path: Tuple):
        s = super().__new__(cls, value)
        s._tracker = tracker
        s._path = path
        return s

    def __iter__(self):
        self._tracker.op(self._path, "array_access")
        raise TypeError("Expected iterable or object type in for loop: got string")

    def __getitem__(self, index):
        if isinstance(index, int):
            self._tracker.op(self._path, "array_access")
        return str.__getitem__(self, index)


def _wrap(value, tracker: _Tracker, path: Tuple):
    if isinstance(value, dict):
        return _TDict(value.items(), tracker, path)
    if isinstance(value, list):
        return _TList(value, tracker, path)
    if isinstance(value, str):
        return _TStr(value, tracker, path)
    return value


def _environment(tracker: _Tracker):
    from jinja2 import pass_context

    from promptlint.render.environments import make_environment

    env = make_environment("transformers")
    tojson, string, selectattr = env.filters["tojson"], env.filters["string"], env.filters["selectattr"]
    is_string = env.tests["string"]

    def tracked_tojson(value, *args, **kwargs):
        tracker.deep(value)
        return tojson(value, *args, **kwargs)

    def tracked_string(value, *args, **kwargs):
        tracker.deep(value)
        return string(value, *args, **kwargs)

    @pass_context
    def tracked_selectattr(context, value, *args, **kwargs):
        path = getattr(value, "_path", None)
        if path is not None:
            tracker.op(path, "selectattr")
        return selectattr(context, value, *args, **kwargs)

    def tracked_is_string(value):
        path = getattr(value, "_path", None)
        if path is not None:
            tracker.op(path, "test_is_string")
        return is_string(value)

    env.filters["tojson"] = tracked_tojson
    env.filters["string"] = tracked_string
    env.filters["selectattr"] = tracked_selectattr
    env.tests["string"] = tracked_is_string
    return env


def _probe(template_text: str, messages, tools=None) -> Tuple[bool, str, _Tracker]:
    """Render one probe (llama.cpp's ``caps_try_execute``): (success, output, tracker)."""
    from promptlint.render.limits import RenderGuard

    tracker = _Tracker()
    env = _environment(tracker)
    variables = {
        "messages": _wrap(messages, tracker, ("messages",)),
        "tools": _wrap(tools if tools is not None else [], tracker, ("tools",)),
        "bos_token": "",
        "eos_token": "",
        "add_generation_prompt": True,
    }
    try:
        with RenderGuard(env, 5.0, None, 1_000_000):
            out = env.from_string(template_text).render(variables)
        return True, out, tracker
    except BaseException as e:  # noqa: B036 - a probe that fails is a finding of the probe, as in llama.cpp
        if isinstance(e, KeyboardInterrupt):
            raise
        return False, "", tracker


_TOOLS = [
    {
        "name": "tool",
        "type": "function",
        "function": {
            "name": "tool1",
            "description": "Tool description",
            "parameters": {
                "type": "object",
                "properties": {"arg": {"type": "string", "description": "Arg description"}},
                "required": ["arg"],
            },
        },
    }
]


def _tool_messages(arguments):
    return [
        {"role": "user", "content": "User message"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "call00001", "type": "function", "function": {"name": "tool1", "arguments": arguments}}],
        },
        {"role": "tool", "content": "Tool response", "tool_call_id": "call00001"},
        {"role": "assistant", "content": "The tool response was 'tool response'"},
        {"role": "user", "content": "User message"},
    ]


@lru_cache(maxsize=64)
def template_caps(template_text: str) -> Caps:
    """``caps_get``: the capabilities llama.cpp's server derives for this template."""
    caps: Dict[str, bool] = {f: getattr(Caps(), f) for f in Caps.__dataclass_fields__}
    content = ("messages", 0, "content")

    # typed content
    ok, out, t = _probe(template_text, [{"role": "user", "content": STRING_MARKER}])
    ops = t.ops.get(content, set())
    checks_for_string = "test_is_string" in ops
    as_array = bool(ops & {"selectattr", "array_access"})
    if as_array:
        caps["supports_typed_content"] = True
    if not ok:
        caps["supports_string_content"] = False
    elif as_array and STRING_MARKER not in out:
        caps["supports_string_content"] = False
    if checks_for_string:
        ok, _, t = _probe(template_text, [{"role": "user", "content": []}])
        if ok and t.ops.get(content, set()) & {"selectattr", "array_access"}:
            caps["supports_typed_content"] = True

    # system role
    _, _, t = _probe(template_text, [{"role": "system", "content": "System message"}, {"role": "user", "content": "User message"}])
    if content not in t.used:
        caps["supports_system_role"] = False

    # tools, with object arguments
    ok, _, t = _probe(template_text, _tool_messages({"arg": "value"}), _TOOLS)
    if ok:
        if ("tools", 0, "function", "name") not in t.used:
            caps["supports_tools"] = False
        if ("messages", 1, "tool_calls") not in t.used:
            caps["supports_tool_calls"] = False
        elif ("messages", 1, "tool_calls", 0, "function", "arguments", "arg") in t.used:
            caps["supports_object_arguments"] = True
    if not caps["supports_object_arguments"]:
        ok, _, t = _probe(template_text, _tool_messages('{"arg": "value"}'), _TOOLS)
        if not ok:
            caps["supports_tool_calls"] = False
            caps["supports_tools"] = False
        else:
            if ("tools", 0, "function", "name") not in t.used:
                caps["supports_tools"] = False
            if ("messages", 1, "tool_calls") not in t.used:
                caps["supports_tool_calls"] = False
    return Caps(**caps)


_USER = {"role": "user", "content": "U_USER_MSG Hello END_U"}
_THINKING = "REASON_PART I am thinking END_R"


def _plain_render(template_text: str, variables: dict) -> Optional[str]:
    from promptlint.render.environments import make_environment
    from promptlint.render.limits import RenderGuard

    env = make_environment("transformers")
    try:
        with RenderGuard(env, 5.0, None, 1_000_000):
            return env.from_string(template_text).render({"bos_token": "", "eos_token": "", **variables})
    except BaseException as e:  # noqa: B036 - a probe that fails finds nothing, as in llama.cpp
        if isinstance(e, KeyboardInterrupt):
            raise
        return None


@lru_cache(maxsize=64)
def has_reasoning_markers(template_text: str) -> bool:
    """Would llama.cpp's template analysis (common/chat-diff-analyzer.cpp, ``analyze_reasoning``
    and its workarounds) find reasoning tags in this template?

    An approximation of its differential analysis: the template shows an assistant message's
    ``reasoning_content``, or ``enable_thinking`` changes the generation prompt, or it is one of
    the templates the analysis patches by name (old Qwen/DeepSeek ``content.split('</think>')``,
    Granite 3.3). Used only to refuse what promptlint does not model (continuing a message).
    """
    if "content.split('</think>')" in template_text and "reasoning_content" not in template_text:
        return True
    if "Write your thoughts between <think></think> and write your response between <response></response>" in template_text:
        return True
    answer = {"role": "assistant", "content": "A_ASST_MSG I can help END_A"}
    shown = _plain_render(template_text, {"messages": [_USER, dict(answer, reasoning_content=_THINKING)],
                                          "add_generation_prompt": False, "enable_thinking": True})
    if shown is not None and _THINKING in shown:
        return True
    off = _plain_render(template_text, {"messages": [_USER], "add_generation_prompt": True, "enable_thinking": False})
    on = _plain_render(template_text, {"messages": [_USER], "add_generation_prompt": True, "enable_thinking": True})
    return off is not None and on is not None and off != on
