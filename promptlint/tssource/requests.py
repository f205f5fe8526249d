"""Each SDK call of a TS/JS module as the request the Python analyzer builds (``pysource.layout``),
judged by the Python analyzer's own request rules (``pysource.rules.HazardScan``).

Only the way requests are found differs: the request object an SDK method takes (openai-node,
anthropic-sdk-typescript, @google/genai), a Bedrock ``ConverseCommand``, the Vercel AI SDK's
``generateText``/``streamText``/``generateObject`` (its ``tools`` object becomes the tool list;
the model factory, ``anthropic("claude-...")``, says which provider lays out the prompt),
LangChain.js (``ChatPromptTemplate.fromMessages``, a chat model's ``invoke``), and message
objects (``{ role, content }``) built anywhere. A hazard whose value is written in another
module is reported there, at its own line, with a note naming the call that sends it.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from promptlint.pysource import layout, sinks
from promptlint.pysource.flow import Val
from promptlint.pysource.rules import Candidate, HazardScan, SentPrompt, _literal, _prompt_named
from promptlint.tssource import closures, instances, names
from promptlint.tssource.flow import Flow
from promptlint.tssource.index import MODULE
from promptlint.tssource.values import args_of, text

_NOT_TEXT = {"class", "class_declaration", "arrow_function", "function_expression", "function", "new_expression"}
_FACTORY = re.compile(r"^([\w$.]+)\(\s*[\"'`]([^\"'`]+)")


class RequestScan(HazardScan):
    """One module's hazards at its requests, as the Python analyzer's candidates (``run``)."""

    def __init__(self, flow: Flow):  # the Python index and evaluator are not built: the TS ones stand in
        self.source = ""
        self.index = flow.index
        self.flow = flow
        self.candidates: Dict[Tuple[str, int, int], Candidate] = {}
        self.seen_dicts: set = set()
        self.claimed: set = set()
        self.sent: List[SentPrompt] = []
        self._self_attrs = None
        # the Python scan's cross-module state: a hazard made in an imported module is reported there, at
        # its own line, naming the call that sends it (pysource.rules.HazardScan.add)
        self.project = _Modules(flow)
        self.display = flow.path
        self._sending = None  # the request being judged: (its node, its text, this file)
        self._in = (flow, {})
        self._inside: List[Tuple[int, int]] = []  # byte ranges of request calls

    def unordered_candidate(self, h, code: str, where: str, request=None) -> None:
        """The Python rule's wording, with JavaScript's way of sorting (``sort()``, not ``sorted()``)."""
        before = set(self.candidates)
        super().unordered_candidate(h, code, where, request)
        for key in set(self.candidates) - before:
            c = self.candidates[key]
            c.message = c.message.replace("without `sorted()`", "without `sort()`")

    def run(self) -> List[Candidate]:
        for call, scope in self.index.calls:
            found = self.request_of(call, scope)
            if found is not None:
                self._inside.append((call.start_byte, call.end_byte))
                self.judge(call, scope, *found)
            elif call.type == "call_expression":
                self.wrapped(call, scope)
        for obj, scope in self.index.objects:
            if any(a <= obj.start_byte < b for a, b in self._inside) or not _is_message(obj):
                continue
            val = self.flow.ev(obj, scope)
            content = (val.mapping or {}).get("content")
            if content is None:
                continue
            request = layout.Layout("chat")
            request.add(layout.block_text(content), "message content", "messages")
            span = self.flow.span(obj)
            self.sent.append(SentPrompt(scope, "message", span, request))
            self.prompt_hazards(request, f"the message at line {span.lineno}", "messages")
        self.returned_prompts()
        return list(self.candidates.values())

    def returned_prompts(self) -> None:
        """A prompt module's own hazards, as the Python scan judges them (``HazardScan._returned``): what a
        function named like a prompt (``buildSystemPrompt``, ``instructions()``) or one that builds
        messages returns, and what a module constant so named holds, is a request on its own, reported
        only when it loses blocks and noting that the call that sends it is not in the linted files
        (a linted importer's finding at the same place replaces it: ``driver.lint.prefer_sent``)."""
        index, flow = self.index, self.flow
        with_messages = {scope for obj, scope in index.objects if _is_message(obj)}
        for scope, node in index.scope_node.items():
            full = flow._function_name(node) or ""
            name = full.rsplit(".", 1)[-1]
            named = bool(name) and _prompt_named(name)
            if not named and scope not in with_messages or self._sent_here(full):
                continue
            for r in index.returns.get(scope, []):
                self._returned(flow.ev(r, scope), named, f"`{name or 'a function'}()` returns (line {flow.span(r).lineno})")
        for (scope, name), entries in index.bindings.items():
            values = [e.value for e in entries if e.kind == "assign" and e.value is not None]
            if scope != MODULE or not _prompt_named(name) or not values or any(v.type in _NOT_TEXT for v in values):
                continue
            v = flow._binding(MODULE, name, 1 << 60, 0, {})
            if v is not None:
                self._returned(v, True, f"`{name}` holds (line {flow.span(values[-1]).lineno})")

    def _sent_here(self, function: str) -> bool:
        """Whether a function is called inside a request this module sends: its values were judged there."""
        return any(a <= call.start_byte < b for call, _ in self.index.call_sites.get(function, ()) for a, b in self._inside)

    def wrapped(self, call, scope: int) -> None:
        """A call of a function that sends a request itself, judged here with its parameters bound to this
        call's arguments: a function of another linted module (``callLLM({ system, user })``), or a method
        called on an object of a linted class (``new Agent(system).ask(q)``: ``this`` is that object, so
        what its constructor and earlier calls wrote reaches the request). Values written in this file
        are reported where they are written, the rest in their own module, naming this call."""
        callee = call.child_by_field_name("function")
        found = self._method_on_object(callee, scope)
        held = None
        if found is not None:
            other, func = found
        else:
            target = self.flow.function_of(callee, scope, 0)
            held = self._made_function(callee, scope) if target is None else None
            if held is not None:
                other, func = held[0].flow, held[0].node
            elif target is None or target[0] is self.flow:
                return  # a function of this module: its parameters already take this module's call sites
            else:
                other, func = target
        params = other.index.param_list(func.child_by_field_name("parameters") or func.child_by_field_name("parameter"))
        if not params and found is None and held is None:
            return
        inner_calls = other.index.calls_in.get(func.id, [])
        if not inner_calls:
            return
        receiver = self.flow.ev(callee.child_by_field_name("object"), scope) if found is not None else None
        args = [self.flow.ev(a, scope) for a in args_of(call)]
        env = dict(held[0].env) if held is not None else {}
        env.update(other._bind_params(params, args, func.id, 1))
        if held is not None and held[1] is not None and func.type != "arrow_function":
            receiver = held[1]
        if closures.is_object(receiver) or held is not None and receiver is not None:
            env["this"] = receiver
        for inner in inner_calls:
            found_request = self.request_of(inner, func.id, other, env or None)
            if found_request is not None:
                self._inside.append((call.start_byte, call.end_byte))
                self.judge(call, scope, *found_request, sender=inner, sender_flow=other)

    def _made_function(self, callee, scope: int):
        """(closure, the object holding it) for ``agent.ask(q)`` or ``ask(q)`` when ``agent``/``ask`` is bound
        to what a call returned (``const agent = createAgent({ persona })``: a factory's object literal or
        function, ``closures``), else None. Only names bound to a call are evaluated."""
        obj = callee.child_by_field_name("object") if callee is not None and callee.type == "member_expression" else callee
        if obj is None or obj.type != "identifier":
            return None
        made = self.flow._declared_value(obj, scope)
        while made is not None and made.type in ("await_expression", "parenthesized_expression") and made.named_children:
            made = made.named_children[0]
        if made is None or made.type != "call_expression":
            return None
        value = self.flow.ev(obj, scope)
        if obj is callee:
            c = closures.of(value)
            return (c, None) if c is not None else None
        c = closures.of((value.mapping or {}).get(text(callee.child_by_field_name("property"))))
        return (c, value) if c is not None else None

    def _method_on_object(self, callee, scope: int):
        """(flow, method) for ``agent.ask(q)`` on an object of a linted class whose method makes calls
        (the object itself is evaluated only then), else None."""
        if callee is None or callee.type != "member_expression":
            return None
        obj = callee.child_by_field_name("object")
        owner = self.flow.instance_of(obj, scope, 0) if obj is not None and obj.type != "this" else None
        found = instances.method(owner[0], owner[1], text(callee.child_by_field_name("property"))) if owner else None
        if found is None or not any(_may_send(c) for c in found[0].index.calls_in.get(found[2].id, [])):
            return None
        return found[0], found[2]

    # ------------------------------------------------------------------ finding requests
    def request_of(self, call, scope: int, flow: Optional[Flow] = None, env: Optional[dict] = None):
        """(suffix, provider, get, receiver, model) for a call that sends a request, else None
        (``flow``, ``env``: a call inside a function of another module, its parameters bound)."""
        flow = flow or self.flow
        ev = lambda n: flow.ev(n, scope, env)  # noqa: E731
        args = args_of(call)
        if call.type == "new_expression":
            ctor = flow.name_of(call.child_by_field_name("constructor")) or ""
            suffix = names.REQUEST_COMMANDS.get(ctor.rsplit(".", 1)[-1])
            if suffix is None and names.is_agent(ctor) and args:
                return self._agent(ev(args[0]))
            if suffix is None or not args:
                return None
            body = ev(args[0])
            return suffix, "bedrock", _getter(body), None, _literal((body.mapping or {}).get("modelId"))
        callee = call.child_by_field_name("function")
        name = flow.name_of(callee)
        if not name:
            return None
        last = name.rsplit(".", 1)[-1]
        suffix = names.request_method(name)
        at = names.request_argument(name)
        if suffix is not None and len(args) > at:
            first = ev(args[at])
            receiver = None
            if suffix == "generate_content":
                receiver = ev(callee.child_by_field_name("object"))
                if first.mapping is None or "contents" not in first.mapping:
                    first = Val(mapping={"contents": first}).add(first)
            elif suffix == "chats.create" and first.mapping is not None and "history" in first.mapping:
                receiver = ev(callee.child_by_field_name("object"))
            provider = sinks.PROVIDER_OF_SUFFIX.get(suffix, "chat")
            model = _literal((first.mapping or {}).get("model"))
            if model is None and receiver is not None and receiver.mapping is not None:
                model = _literal(receiver.mapping.get("model"))
            return suffix, provider, _getter(first), receiver, model
        if names.is_agent(name) and args and flow.function_of(callee, scope, 0) is None:
            return self._agent(ev(args[0]))
        if last in names.AI_SDK_FUNCTIONS and args and flow.function_of(callee, scope, 0) is None:
            return self._ai_sdk(ev(args[0]))
        if last == "fromMessages" and args:
            msgs = ev(args[0])
            return "from_messages", "chat", lambda k: msgs if k == "messages" else None, None, None
        if last in names.RUNNABLE_METHODS and args and callee.type == "member_expression" \
                and self._is_chat_model(callee.child_by_field_name("object"), scope, 0, flow):
            msgs = ev(args[0])
            return "invoke", "chat", lambda k: msgs if k == "messages" else None, None, None
        return None

    def _ai_sdk(self, opts: Val):
        m = opts.mapping or {}
        model_val = m.get("model")
        label = model_val.parts[0].label if model_val is not None and model_val.parts and not isinstance(model_val.parts[0], str) else ""
        factory = _FACTORY.match(label or "")
        provider = names.provider_of_model(factory.group(1) if factory else label)
        model = factory.group(2) if factory else _literal(model_val)
        tools = _tool_list(m.get("tools"))
        messages = m.get("messages")
        if messages is None and m.get("prompt") is not None:
            messages = Val(items=[Val(mapping={"role": Val(parts=["user"]), "content": m["prompt"]})]).add(m["prompt"])

        def get(key: str) -> Optional[Val]:
            if key == "tools":
                return tools
            if key == "messages":
                return messages
            if key in ("prompt",):
                return None
            return m.get(key)

        if provider in ("anthropic", "bedrock"):
            return "messages.create", "anthropic-as-" + provider, get, None, model
        return "ai-sdk", "chat", get, None, model

    def _agent(self, opts: Val):
        """An agent built with its prompt (LangGraph.js ``createReactAgent({ prompt })``, OpenAI Agents
        and Mastra ``new Agent({ instructions })``): that text is the system prompt of every request."""
        m = opts.mapping or {}
        prompt = next((m[k] for k in names.AGENT_PROMPT_KEYS if k in m), None)
        if prompt is None:
            return None
        dynamic = closures.of(prompt)
        if dynamic is not None:  # `instructions: (ctx) => `...``: what the function returns, on every run
            prompt = closures.call(dynamic, [], 1)
        tools = _tool_list(m.get("tools"))
        model = _literal(m.get("model"))
        return "agent", "chat", lambda k: prompt if k == "system" else tools if k == "tools" else None, None, model

    def _is_chat_model(self, node, scope: int, depth: int, flow: Optional[Flow] = None) -> bool:
        if node is None or depth > 4:
            return False
        flow = flow or self.flow
        index = flow.index
        if node.type == "new_expression":
            return names.is_chat_model(flow.name_of(node.child_by_field_name("constructor")))
        if node.type == "call_expression":
            f = node.child_by_field_name("function")
            if f is not None and f.type == "member_expression" and text(f.child_by_field_name("property")) in names.RUNNABLE_WRAPPERS:
                return self._is_chat_model(f.child_by_field_name("object"), scope, depth + 1, flow)
            return names.is_chat_model(flow.name_of(f))
        if node.type in ("await_expression", "parenthesized_expression") and node.named_children:
            return self._is_chat_model(node.named_children[0], scope, depth + 1, flow)
        if node.type == "member_expression" and node.child_by_field_name("object").type == "this":
            cls = flow._class_of(scope)
            values = index.attrs.get((cls, text(node.child_by_field_name("property"))), []) if cls else []
            return any(self._is_chat_model(v, scope, depth + 1, flow) for v in values)
        if node.type == "identifier":
            s = scope
            while True:
                entries = index.bindings.get((s, text(node)))
                if entries:
                    return any(e.kind == "assign" and self._is_chat_model(e.value, s, depth + 1, flow) for e in entries)
                if s == MODULE:
                    return False
                s = index.parent.get(s, MODULE)
        return False

    # ------------------------------------------------------------------ judging one request
    def judge(self, call, scope: int, suffix: str, provider: str, get, receiver, model,
              sender=None, sender_flow: Optional[Flow] = None) -> None:
        flow = self.flow
        span = flow.span(call)
        callee = call.child_by_field_name("function") or call.child_by_field_name("constructor")
        shown = ("new " if call.type == "new_expression" else "") + flow.text_of(callee, 50)
        where = f"`{shown}(...)` at line {span.lineno}"
        if sender is not None:  # through a function of another module that sends the request
            inner = sender.child_by_field_name("function") or sender.child_by_field_name("constructor")
            where += f" (it sends `{sender_flow.text_of(inner, 50)}(...)` at {sender_flow.path}:{sender_flow.span(sender).lineno})"
        self._sending = (span, shown, self.display)
        try:
            self._judge(call, scope, suffix, provider, get, receiver, model, where, span, shown)
        finally:
            self._sending = None

    def _judge(self, call, scope: int, suffix: str, provider: str, get, receiver, model, where: str, span, shown) -> None:
        as_provider = None
        if provider.startswith("anthropic-as-"):
            provider, as_provider = "anthropic", provider[len("anthropic-as-"):]
        request = layout.build(provider, get, suffix, receiver)
        if as_provider == "bedrock":
            request.provider = "bedrock"
        self.field_collection_hazards(get, where)
        if request.blocks:
            self.sent.append(SentPrompt(scope, shown, span, request, model))
            self.prompt_hazards(request, where, suffix, span, model)
        for key in sorted(sinks.TOOLS_KWARGS):
            val = get(key)
            if val is not None:
                self.tool_hazards(val, where, key)
        for holder, key in ((get("toolConfig"), "toolConfig.tools"), (get("config"), "config.tools")):
            tools = holder.mapping.get("tools") if holder is not None and holder.mapping is not None else None
            if tools is not None:
                self.tool_hazards(tools, where, key)


class _Modules:
    """What ``pysource.rules`` asks of the project: the imported module a node (a ``Span``) is in."""

    def __init__(self, flow: Flow):
        self.flow = flow

    def owner(self, node):
        path = getattr(node, "path", self.flow.path)
        if path == self.flow.path or self.flow.project is None:
            return None
        return self.flow.project.by_display(path)


_SENDING_NAMES = frozenset({m.rsplit(".", 1)[-1] for m in names.REQUEST_METHODS} | names.AI_SDK_FUNCTIONS
                           | names.RUNNABLE_METHODS | {"fromMessages"})


def _may_send(call) -> bool:
    """Whether a call's name could be one that sends a request (a cheap test before evaluating anything)."""
    if call.type == "new_expression":
        return True  # `new ConverseCommand(...)`, `new Agent(...)`
    f = call.child_by_field_name("function")
    if f is not None and f.type == "member_expression":
        f = f.child_by_field_name("property")
    return f is not None and (text(f) in _SENDING_NAMES or names.is_agent(text(f)))


def _getter(body: Val):
    mapping = body.mapping or {}
    return lambda key: mapping.get(key)


def _tool_list(tools: Optional[Val]) -> Optional[Val]:
    """The Vercel AI SDK's ``tools: { name: tool({...}) }`` as the list of tool definitions it sends."""
    if tools is None or tools.items is not None:
        return tools
    out = Val(unordered=tools.unordered, node=tools.node).add(tools)
    if tools.mapping is not None:
        out.items = []
        for name, spec in tools.mapping.items():
            fields = {"name": Val(parts=[name])}
            fields.update(spec.mapping or {})
            out.items.append(Val(mapping=fields, node=spec.node).add(spec))
    return out


def _is_message(obj) -> bool:
    keys = set()
    for c in obj.named_children:
        if c.type == "pair":
            k = c.child_by_field_name("key")
            keys.add(text(k).strip("'\"`"))
        elif c.type == "shorthand_property_identifier":
            keys.add(text(c))
    return "role" in keys and "content" in keys
