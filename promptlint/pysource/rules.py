"""Hazards reaching prompt sinks -> candidate findings; literal prompts are measured in tokens.

``analyze`` is structural (no tokenizer); ``measure`` renders the prompt text around a
volatile value twice, tokenizes both with the pinned tokenizer and computes the first
divergent token and lost blocks exactly as the template check M101 does.
"""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from promptlint.base import registry
from promptlint.checks import prefix_caching_disabled as m701
from promptlint.pysource import breakpoints, layout, objects, orders, sinks
from promptlint.pysource.flow import DUMPS, Flow, Hazard, Hole, Index, Part, Val, merge
from promptlint.pysource.layout import literal as _literal
from promptlint.pysource.project import NOT_SEEN_NOTE, SENT_NOTE

# The codes only Python code can show; the others found here (M101, M102, M201-M203, M701) are
# implemented, and worded, by their modules under promptlint/checks/.
CODES = registry.implements(__name__, "M401", "M402", "M702")

AGENT_SYSTEM = "__agent_system_prompt__"
CHAIN_MESSAGES = "__chain_messages__"
CREW_FIELDS = ("role", "goal", "backstory")  # CrewAI Agent(...) fields its system prompt is made of  # the name a LangChain chain's filled template is bound to  # the name a decorated agent's composed system prompt is bound to

# dict literals passed as these keywords are request bodies / sampling parameters
REQUEST_KWARGS = {"extra_body", "json", "body", "data", "sampling_params", "params"}
REQUEST_KEYS = {"model", "prompt", "messages", "max_tokens", "temperature", "top_p", "n", "logprobs", "stream"}


def _scope_of(flow, node: ast.AST):
    """The function (None: the module) a dict or call of ``flow``'s module is written in."""
    for n, scope in flow.index.dicts:
        if n is node:
            return scope
    for n, scope in flow.index.calls:
        if n is node:
            return scope
    return None


def _is_launch_text(text: str, m) -> bool:
    """The flag as a command-line argument (an argv element, or a command line), not prose or a pattern."""
    if text.strip() == m.group(0) or text.strip().startswith(m.group(0) + "="):
        return True
    if any(tok in text for tok in ("\\b", "(?", "|", "[")):
        return False  # a regular expression or a pattern naming the flag
    low = text.lower()
    return any(word in low for word in ("vllm", "sglang", "serve", "launch_server", "python -m"))


SALT_ID_PATTERNS = ("*request_id*", "*requestid*", "*trace_id*", "*span_id*", "*correlation_id*", "*uuid*", "nonce",
                    "*_nonce", "*message_id*", "*x_request_id*", "rid", "req_id")


@dataclass
class Candidate:
    """A finding before it is turned into a record (and, for M101, before it is measured)."""

    code: str
    node: ast.AST
    message: str
    help: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    variable: Optional[str] = None
    fix: Optional[str] = None  # "sort-keys" | "sorted"
    prompt: Optional[List[Part]] = None  # M101: the prompt text to measure
    hole: Optional[Hole] = None
    sink: str = ""
    measure: Optional[Callable] = None  # M106/M703: (tokenizer, encode, ctx) -> Measured or None (pysource.breakpoints)
    module: Optional[Flow] = None  # reported in an imported module (its Flow: display path and text); None: this one
    sent_at: Optional[Tuple[str, str]] = None  # ("at line 12", "at client.py:12"): the sending call named from afar
    measured_only: bool = False  # M101 of a prompt whose sender is not seen: reported only when blocks are lost
    order: Optional[Tuple[List[Part], List[Part]]] = None  # M202/M203: the prompt with stand-in items in two orders
    sender: Optional[Tuple[str, int, int, str]] = None  # (its file, line, 1-based column, callee): the call that sends it


@dataclass
class SentPrompt:
    """One prompt the module sends (an LLM call's request, or a message dict): what ``check
    --baseline`` measures per request (pysource.per_request). ``scope``: the enclosing function
    (None: module level); ``callee``: the call's text, or "message" for a message dict."""

    scope: Optional[ast.AST]
    callee: str
    node: ast.AST  # the call or the dict: source order among prompts of the same name
    request: "layout.Layout"
    model: Optional[str] = None


class HazardScan:
    """One module's hazards at prompt sinks, as candidate findings (``run``)."""

    _sending: Optional[Tuple[ast.Call, str, str]] = None  # the LLM call being judged: (call, text, its file)
    _request: Optional["layout.Layout"] = None  # the request being judged (order findings are measured in it)

    def __init__(self, source: str, tree: ast.Module, kind_of: Callable[[str], Tuple[str, Optional[str]]],
                 project=None, display: Optional[str] = None, index: Optional[Index] = None):
        """``project``: the other linted modules imports reach (pysource.project.Project), None: this module alone;
        ``index``: the tree's Index when it was built already (pysource.project's parse of the same bytes)."""
        self.source = source
        self.index = index if index is not None else Index(tree)
        self.flow_kind = lambda name: kind_of(name)[0]
        # a file of an installed package: its calls of each other send no prompt of the user's (_calls_into, _wrapper)
        self.installed = project is not None and any(p in ("site-packages", "dist-packages") for p in project.path.parts)
        if project is not None and not self._reaches_prompts(source) and not self._calls_into(project):
            project = None  # nothing here can make or send a prompt: its imports are not read (pysource.project)
        self.flow = Flow(self.index, source, kind_of, project, display)
        self.project = project
        self.display = display or "this file"
        self._sending: Optional[Tuple[ast.Call, str, str]] = None  # the LLM call being judged: (call, text, its file)
        # where the request's fields are evaluated: this module, or a wrapper in another module called with
        # this module's arguments (wrapped_sinks): (Flow, env)
        self._in: Tuple[Flow, Dict[str, Val]] = (self.flow, {})
        if project is not None:
            self.flow.real_path = project.path
            project.attach(self.flow)
        self.candidates: Dict[Tuple[str, int, int], Candidate] = {}
        self.seen_dicts: set = set()
        self.claimed: set = set()  # volatile values already judged in the LLM request that sends them
        self.sent: List[SentPrompt] = []  # every prompt found, in source order of its sink
        self._self_attrs: Optional[Dict[str, List[ast.AST]]] = None  # self.<attr> -> assigned values
        # wrapped_sinks' memos for this scan: (flow, function, level) -> sends; (flow, call, scope) -> callees
        self._sends_memo: Dict[Tuple[int, int, int], bool] = {}
        self._callees_memo: Dict[Tuple[int, int, int], list] = {}

    def add(self, c: Candidate) -> None:
        owner = self.project.owner(c.node) if self.project is not None else None
        key = (c.code, id(owner), getattr(c.node, "lineno", 0), getattr(c.node, "col_offset", 0))
        if key in self.candidates:
            return
        if owner is not None:  # made in an imported module: reported there, naming the call that sends it
            c.module = owner
            if self._sending is not None:
                call, callee, display = self._sending
                here = f"{display}:{call.lineno}"
                if display == self.display:
                    c.sent_at = (f"at line {call.lineno}", f"at {here}")
                c.notes.append(f"{SENT_NOTE}`{callee}(...)` at {here}")
        if self._sending is not None and (owner is not None or self._in[0] is not self.flow):
            c.sender = self._sender()  # the request goes out in another module than the hazard's
        self.candidates[key] = c

    def _sender(self) -> Tuple[str, int, int, str]:
        """(its file, line, 1-based column in characters, callee) of the LLM call being judged."""
        call, callee, display = self._sending
        lines = getattr(self._in[0], "_lines", None) or []
        line = lines[call.lineno - 1] if 0 < call.lineno <= len(lines) else b""
        column = len(line[:call.col_offset].decode("utf-8", "replace")) + 1  # ast columns are UTF-8 bytes
        return display, call.lineno, column, f"{callee}(...)"
        self.candidates[key] = c

    def _reaches_prompts(self, source: str) -> bool:
        """Whether a value of this module can be, or reach, a prompt: it calls a model (an SDK call, a chat
        model, an agent), builds a role/content message or a prompt-named value, or reads a clock, an id or an
        unordered source that may be sent elsewhere. A module with none of these (most of an SDK's own files)
        is analysed alone: following its imports could find nothing it sends or makes."""
        if any(_is_message_dict(d) for d, _ in self.index.dicts):
            return True
        if any(_prompt_named(f.name) for f in list(self.index.functions.values()) + list(self.index.methods.values())):
            return True
        if any(sid == 0 and _prompt_named(name) and any(_text_like(e.value) for e in entries)
               for (sid, name), entries in self.index.bindings.items()):
            return True
        if _decorates_prompts(source):
            return True
        for call, _ in self.index.calls:
            f = call.func
            name = sinks.canonical(sinks.dotted(f), self.index.aliases)
            if sinks.llm_call(name) or sinks.volatile_sub(name) or sinks.is_agent(name) or name in sinks.UNORDERED_CALLS:
                return True
            if isinstance(f, ast.Attribute) and (f.attr in sinks.RUNNABLE_METHODS or f.attr in sinks.UNORDERED_METHODS):
                return True
        return False

    def _calls_into(self, project) -> bool:
        """Whether this module hands work to an object or function of its project that may send a prompt
        (``Bot().answer(q)``, ``bot = Agent(); bot.run(question)``, ``answer("What is ...")``): a call of an
        imported class, of a method of an object one made, or of an imported function given a per-request
        input (a name such as ``question``, a string written here, ``input()``). wrapped_sinks then follows
        it into the module that sends. A helper call such as ``backoff(attempt)`` is none of these, and the
        files of an installed package (under ``site-packages``) are analysed alone, as before: they are
        many, and their calls of each other send no prompt of the user's."""
        if self.installed:
            return False
        imports = self.index.imports

        def root(node):
            while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and node.args:
                    node = node.args[0]  # `getattr(bot, "run")`: bot's
                    continue
                node = node.func if isinstance(node, ast.Call) else node.value
            return node.id if isinstance(node, ast.Name) else None

        def made_here(value) -> bool:  # a call of an imported class: `Bot(...)`, `agents.Bot(...)`
            if not isinstance(value, ast.Call):
                return False
            name = sinks.dotted(value.func) or ""
            return root(value.func) in imports and name.rsplit(".", 1)[-1][:1].isupper()

        def imported_class(node) -> bool:  # `Support`, `agents.Support`: an imported class named, not called
            name = sinks.dotted(node) or ""
            return root(node) in imports and name.rsplit(".", 1)[-1][:1].isupper()

        def table_of_them(value) -> bool:  # `{"support": Support(), "sales": Sales}`: a table of such objects or classes
            items = value.values if isinstance(value, ast.Dict) else value.elts if isinstance(value, (ast.List, ast.Tuple)) else ()
            return any(made_here(v) or imported_class(v) for v in items[:64])

        objects_ = {name for (_, name), entries in self.index.bindings.items()
                    if any(e.kind == "assign" and (made_here(e.value) or table_of_them(e.value)) for e in entries)}
        if objects_:  # `agent = AGENTS[mode]()`: a name bound to what one of them gives
            objects_ |= {name for (_, name), entries in self.index.bindings.items()
                         if any(e.kind == "assign" and root(e.value) in objects_ for e in entries)}
        for call, _ in self.index.calls:
            r = root(call.func)
            if r in objects_ or made_here(call.func.value if isinstance(call.func, ast.Attribute) else None):
                return True
            if r in imports and any(self._request_input(a) for a in list(call.args) + [k.value for k in call.keywords]):
                return True
        return False

    def _request_input(self, node: ast.AST) -> bool:
        """A per-request input given to a call: a name that says so, a string written here, ``input()``."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str) or isinstance(node, ast.JoinedStr):
            return True
        if isinstance(node, ast.Call):
            return sinks.dotted(node.func) == "input"
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        return name is not None and self.flow_kind(name) == "per-request"

    def line(self, node: ast.AST) -> int:
        return getattr(node, "lineno", 1)

    # ----------------------------------------------------------------- driver
    def run(self) -> List[Candidate]:
        salt_names: Dict[int, set] = {}
        for call, scope in self.index.calls:
            name = self.flow.name_of(call.func)
            m = sinks.llm_call(name) or self.framework_call(call, scope, name)
            forwarded = forwarded_call(self.flow, call, scope) if m is None else None
            if forwarded is not None:  # `create(...)` of `create = partial(client.messages.create, ...)`
                name = self.flow.name_of(forwarded.func)
                m = sinks.llm_call(name)
                self.llm_call(forwarded, scope, name, m[0], m[1])
                m = None
            wrapped = _wrapped_client_call(self.flow, call, scope) if m is None and forwarded is None else None
            if wrapped is not None:  # instructor's `client.create(...)` on `instructor.from_openai(OpenAI())`
                self.llm_call(call, scope, name, wrapped, {})
            http = http_request(self.flow, call, scope) if m is None and forwarded is None and wrapped is None else None
            if http is not None:  # `httpx.post("https://api.anthropic.com/v1/messages", json=payload)`
                self.llm_call(http[0], scope, name, http[1], {})
            if m is not None and m[0] == "crew":
                self._crew_agent(call, scope, name)
            elif m is not None:
                self.llm_call(call, scope, name, m[0], m[1])
            self.double_bos(call, scope, name)
            for kw in call.keywords:
                self.keyword(kw.arg, kw.value, call, scope, salt_names)
        for func, call, system in self.decorated_prompts():
            self._in = (self.flow, {AGENT_SYSTEM: system})
            try:
                self.llm_call(call, func, "agent", "agent", {})
            finally:
                self._in = (self.flow, {})
        self.template_chains()
        self.wrapped_sinks()
        self.returned_prompts()
        request_dicts = {id(kw.value) for call, _ in self.index.calls for kw in call.keywords if kw.arg in REQUEST_KWARGS}
        for d, scope in self.index.dicts:
            keys = {k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            # a dict is a request only when it looks like one: a record that merely names the flag is not
            requestlike = id(d) in request_dicts or bool(keys & REQUEST_KEYS)
            for k, v in zip(d.keys, d.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    if k.value == "prompt_logprobs" and not requestlike:
                        continue
                    self.keyword(k.value, v, d, scope, salt_names)
                elif k is None and requestlike:  # `{**DEFAULTS, "model": m}`: the spread settings' own keys
                    self._spread_flags(v, d)
            if id(d) not in self.seen_dicts and _is_message_dict(d):
                text = layout.turn_text(self.flow.ev(d, scope))
                if text is not None:
                    request = layout.Layout("chat")
                    request.add(text, "message content", "messages")
                    self.sent.append(SentPrompt(scope, "message", d, request))
                    self.prompt_hazards(request, f"the message at line {d.lineno}", "messages")
        for s in self.index.strings:
            m = m701.FLAG.search(s.value)
            if m and _is_launch_text(s.value, m):
                self.add(Candidate("M701", s, m701.message(m.group(0)), help=m701.help_text()))
        self.salt_leaks(salt_names)
        return list(self.candidates.values())

    # ----------------------------------------------------------------- LLM calls
    def llm_call(self, call: ast.Call, scope, name: str, suffix: str, positional: Dict[int, str]) -> None:
        args: Dict[str, ast.AST] = {}
        for i, a in enumerate(call.args):
            if i in positional and not isinstance(a, ast.Starred):
                args[positional[i]] = a
        for kw in call.keywords:
            if kw.arg:
                args[kw.arg] = kw.value
        if suffix == "agent":  # the agent's prompt is the request's system prompt
            args = {sinks.AGENT_PROMPT_KWARGS.get(k, k): (self._called_prompt(v, scope) if k in sinks.AGENT_PROMPT_KWARGS
                                                          else v)
                    for k, v in args.items() if k in sinks.AGENT_PROMPT_KWARGS or k in sinks.TOOLS_KWARGS}
        flow = self._in[0]
        text = flow.text_of(call.func, 50)
        at = f"line {call.lineno}" if flow is self.flow else f"{flow.display}:{call.lineno}"
        where = f"`{text}(...)` at {at}"
        self._sending = (call, text, flow.display if flow is not self.flow else self.display)
        try:
            self._llm_request(call, scope, suffix, args, where)
        finally:
            self._sending = None

    def _llm_request(self, call: ast.Call, scope, suffix: str, args: Dict[str, ast.AST], where: str) -> None:
        get = self._request_fields(call, scope, args)
        flow, env = self._in
        provider = sinks.PROVIDER_OF_SUFFIX.get(suffix, "chat")
        model = _literal(get("model") or get("modelId") or get("model_name"))
        if model is None and provider == "chat":  # the model named by the chat model's constructor
            model = self._constructed_model(call, scope)
        receiver = None
        if provider == "bedrock-invoke":
            body = flow.dumped(args["body"], scope) if "body" in args and not env else None
            get = lambda key, body=body: body if key == "body" else None  # noqa: E731
        elif provider == "gemini" and isinstance(call.func, ast.Attribute):
            receiver = flow.ev(call.func.value, scope, env)
            if model is None and receiver.mapping is not None:  # GenerativeModel(model_name=...)
                model = _literal(receiver.mapping.get("model_name") or receiver.mapping.get("model"))
        request = layout.build(provider, get, suffix, receiver)
        for _, bp in request.breakpoints:
            if bp.automatic and "cache_control" in args:
                bp.node = args["cache_control"]  # point at the keyword, not at the constant it names
        for key in sorted(sinks.MESSAGES_KWARGS):
            if key in args:
                self._mark_dicts(args[key])
        self._request = request
        try:
            self._judge_request(call, scope, suffix, get, request, where, model)
        finally:
            self._request = None

    def _judge_request(self, call, scope, suffix: str, get, request: "layout.Layout", where: str, model) -> None:
        flow = self._in[0]
        self.field_collection_hazards(get, where, lambda key: suffix != "generate" or key == "prompts")
        if request.blocks and flow is self.flow:
            self.sent.append(SentPrompt(scope, self.flow.text_of(call.func, 50), call, request, model))
        if request.blocks:
            self.prompt_hazards(request, where, suffix, call, model)
        for key in sorted(sinks.TOOLS_KWARGS):
            val = get(key)
            if val is not None:
                self.tool_hazards(val, where, key)
        for holder, key in ((get("toolConfig"), "tools"), (get("config"), "tools")):
            tools = holder.mapping.get(key) if holder is not None and holder.mapping is not None else None
            if tools is not None:  # Bedrock toolConfig={"tools": [...]}, Gemini config=GenerateContentConfig(tools=[...])
                self.tool_hazards(tools, where, "toolConfig.tools" if holder is get("toolConfig") else "config.tools")
        for key in sorted(sinks.DOCUMENTS_KWARGS):
            val = get(key)
            if val is not None:
                self.collection_hazards(val, where, "documents", key, _with_documents(request, val, get))
        self.body_flags(call, scope, get)

    def body_flags(self, call: ast.Call, scope, get) -> None:
        """``cache_salt``/``prompt_logprobs`` in a dict the request sends but this call does not spell: a
        settings dict passed as ``extra_body=``, a body builder's dict posted as ``json=`` or spread with
        ``**``, in this module or an imported one; judged at the dict's own key (what it holds, evaluated)."""
        flow, env = self._in
        holders = [get(k) for k in sorted(REQUEST_KWARGS)]
        holders += [flow.ev(kw.value, scope, env) for kw in call.keywords if kw.arg is None]
        for holder in holders:
            d = holder.node if holder is not None and holder.mapping is not None else None
            if isinstance(d, ast.Call):  # `SamplingParams(prompt_logprobs=1)` made by a helper, a default, a module
                for kw in d.keywords:
                    if kw.arg == "prompt_logprobs" and not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                        self._prompt_logprobs(kw.value)
                    elif kw.arg == "cache_salt" and not isinstance(kw.value, ast.Constant) and "cache_salt" in holder.mapping:
                        self._salt(kw.value, holder.mapping["cache_salt"])  # `dict(cache_salt=..., top_k=40)`
                    elif kw.arg is None:  # `SamplingParams(**DECODING)`: the spread dict's own entries
                        self._spread_flags(kw.value, d)
                continue
            if not isinstance(d, ast.Dict):
                continue
            for k, v in zip(d.keys, d.values):
                key = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
                if key == "cache_salt" and not isinstance(v, ast.Constant) and key in holder.mapping:
                    self._salt(v, holder.mapping[key])
                elif key == "prompt_logprobs" and not (isinstance(v, ast.Constant) and v.value is None):
                    self._prompt_logprobs(v)

    def _spread_flags(self, value: ast.AST, at: ast.AST, depth: int = 0) -> None:
        """``cache_salt``/``prompt_logprobs`` in a mapping spread with ``**`` into a request (``SamplingParams(
        **DECODING)``, ``{**DEFAULTS, "model": m}``): the dict it names, in this module or an imported one,
        judged at that dict's own key."""
        owner = self.flow._flow_of(at)
        d = owner.ev(value, _scope_of(owner, at)).node
        if depth > 3 or not isinstance(d, (ast.Dict, ast.Call)):
            return
        owner = self.flow._flow_of(d)
        scope = _scope_of(owner, d)
        entries = (zip(d.keys, d.values) if isinstance(d, ast.Dict)
                   else ((ast.Constant(kw.arg) if kw.arg else None, kw.value) for kw in d.keywords))
        for k, v in entries:
            key = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
            if k is None:
                self._spread_flags(v, d, depth + 1)
            elif key == "cache_salt" and not isinstance(v, ast.Constant):
                self._salt(v, owner.ev(v, scope))
            elif key == "prompt_logprobs" and not (isinstance(v, ast.Constant) and v.value is None):
                self._prompt_logprobs(v)

    def template_chains(self) -> None:
        """LangChain ``(prompt | llm).invoke(variables)`` (also through a name bound to the chain): the prompt
        template filled with the variables is the chat model's messages (pysource.flow.fill_template)."""
        for call, scope in self.index.calls:
            f = call.func
            if not (isinstance(f, ast.Attribute) and f.attr in sinks.RUNNABLE_METHODS and call.args):
                continue
            owner, where, steps = self._chain_steps(f.value, scope)
            if len(steps) < 2:
                continue
            template = owner.ev(steps[0], where)
            if template.node is None or not any(self._is_chat_model(s, where, 0, owner) for s in steps[1:]):
                continue
            from promptlint.pysource.flow import _is_prompt_template

            if not _is_prompt_template(template):
                continue
            values = self.flow.ev(call.args[0], scope)
            messages = self.flow.fill_template(template, dict(values.mapping or {}), call).add(values)
            sent = ast.copy_location(ast.Call(func=f, args=[ast.copy_location(ast.Name(id=CHAIN_MESSAGES, ctx=ast.Load()),
                                                                              call)], keywords=[]), call)
            self._in = (self.flow, {CHAIN_MESSAGES: messages})
            try:
                self.llm_call(sent, scope, "invoke", "invoke", {0: "messages"})
            finally:
                self._in = (self.flow, {})

    def _chain_steps(self, node: ast.AST, scope) -> Tuple[Flow, Any, List[ast.AST]]:
        """(the Flow of the module that wrote it, the scope, the steps) of a ``a | b | c`` chain, written here,
        bound to a name, or imported from a linted module (``from chains import support_chain``, ``import
        chains`` then ``chains.support_chain``); no steps for anything else."""
        owner = self.flow
        if isinstance(node, ast.Name):
            entries = self.index.bindings.get((Index.sid(scope), node.id)) or self.index.bindings.get((0, node.id)) or []
            assigned = [e.value for e in entries if e.kind == "assign" and e.pos < (node.lineno, node.col_offset)]
            if not assigned and entries and entries[0].kind == "assign":
                assigned = [entries[0].value]
            if not entries:
                r = objects.resolve(self.flow, node.id)
                owner, assigned = (r[0], _module_values(r[0], r[1])) if r is not None and r[1] else (owner, [])
                scope = None
            node = assigned[-1] if assigned else node
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id not in ("self", "cls"):
            r = objects.resolve(self.flow, node.value.id)
            if r is not None and r[1] is None:
                values = _module_values(r[0], node.attr)
                owner, scope, node = r[0], None, values[-1] if values else node
        steps: List[ast.AST] = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            steps.insert(0, node.right)
            node = node.left
        return owner, scope, [node] + steps if steps else []

    def wrapped_sinks(self) -> None:
        """A call of a wrapper that sends what it is given (``llm.ask(system, question)`` whose body calls the
        SDK): the wrapper's LLM calls judged with its parameters bound to this call's arguments. Wrappers in
        other linted modules and methods of known objects (a module's own functions are followed from their
        call sites already, ``Flow._param``); a wrapper that hands the work on (``answer(q)`` doing
        ``Bot().answer(q)``) is followed through up to ``MAX_WRAPPERS`` calls."""
        for call, scope in list(self.index.calls):
            self._wrapper(self.flow, call, scope, {}, 0)

    def _wrapper(self, flow: Flow, call: ast.Call, scope, env: Dict[str, Val], level: int) -> None:
        found = self._callees(flow, call, scope)
        if not found and level:
            func = flow._local_function(call, scope)  # inside a wrapper: its module's own functions too
            found = [(flow, func, None)] if func is not None else []
        for one in found:
            self._wrapped(flow, call, scope, env, level, one)

    def _wrapped(self, flow: Flow, call: ast.Call, scope, env: Dict[str, Val], level: int, found) -> None:
        cflow, func, bound = found
        if not self._sends(cflow, func, level):
            return  # no LLM call within reach: binding this call's arguments would judge nothing
        inner = _llm_calls_by_function(cflow).get(id(func))
        deeper = level + 1 < MAX_WRAPPERS and not self.installed
        calls = _calls_by_function(cflow).get(id(func)) if not inner and deeper else None
        if not inner and not calls:
            return
        bound_env = flow.bind_arguments(call, func, scope, env, 0, cflow, objects.read_from(bound, scope))
        if not inner:
            for c in calls:
                self._wrapper(cflow, c, func, bound_env, level + 1)
            return
        self._in = (cflow, bound_env)
        try:
            for c, (suffix, positional) in inner:
                self.llm_call(c, func, cflow.name_of(c.func), suffix, positional)
        finally:
            self._in = (self.flow, {})

    def _sends(self, flow: Flow, func, level: int) -> bool:
        """Whether ``_wrapped`` at ``level`` judges an LLM call under ``func``: one in its body, or one
        reached through its calls in the levels left (the callees ``_wrapper`` finds, which depend on the
        call and its scope, never on the arguments bound). Once per function and level, so a call chain
        that sends nothing is not bound again for every call site (most calls of a module)."""
        memo = self._sends_memo
        key = (id(flow), id(func), level)
        if key not in memo:
            sends = bool(_llm_calls_by_function(flow).get(id(func)))
            if not sends and level + 1 < MAX_WRAPPERS and not self.installed:
                for c in _calls_by_function(flow).get(id(func)) or ():
                    found = self._callees(flow, c, func)
                    if not found:
                        local = flow._local_function(c, func)
                        found = [(flow, local, None)] if local is not None else []
                    if any(self._sends(cflow, f, level + 1) for cflow, f, _ in found):
                        sends = True
                        break
            memo[key] = sends
        return memo[key]

    def _callees(self, flow: Flow, call: ast.Call, scope) -> list:
        """``objects.callees`` once per call and scope in this scan (it reads no bound arguments)."""
        memo = self._callees_memo
        key = (id(flow), id(call), id(scope))
        if key not in memo:
            memo[key] = objects.callees(flow, call, scope)
        return memo[key]

    def returned_prompts(self) -> None:
        """Prompts this module builds for callers it does not contain (a library's prompt module): what a
        function returns, or a module constant holds, is judged as a request on its own when its shape
        says it is one (a list of role/content messages) or its name does (``build_system_prompt``,
        ``INSTRUCTIONS``). Values an LLM call of this module already sent were judged there (``claimed``)."""
        with_messages = {Index.sid(scope) for d, scope in self.index.dicts if _is_message_dict(d)}
        for func in list(self.index.functions.values()) + list(self.index.methods.values()):
            named = _prompt_named(func.name)
            if not named and id(func) not in with_messages:
                continue
            params = set(self.index.params(func)) - {"self", "cls"}
            for r in self.index.returns.get(id(func), []):
                self._returned(self.flow.ev(r, func), named, f"`{func.name}()` returns (line {r.lineno})", params)
        for (sid, name), entries in self.index.bindings.items():
            if sid == 0 and _prompt_named(name) and any(e.kind == "assign" for e in entries):
                self._returned(self.flow.ev(ast.Name(id=name, ctx=ast.Load(), lineno=10**9, col_offset=0), None),
                               True, f"`{name}` holds (line {entries[-1].pos[0]})")

    def _returned(self, val: Val, named: bool, what: str, params: frozenset = frozenset()) -> None:
        messages = val.items is not None and any(i.mapping is not None and "role" in i.mapping for i in val.items)
        if messages:
            request = layout.build("chat", lambda key: val if key == "messages" else None)
        elif named and val.parts is not None and val.items is None:
            request = layout.Layout("chat")
            request.add(val, "system", "system")
        else:
            return
        if params:  # the function's own inputs, which no call here binds, are what each caller passes per call
            for b in request.blocks:
                if b.val.parts and any(_caller_input(p, params) for p in b.val.parts):
                    b.val = dataclasses.replace(b.val, parts=[
                        dataclasses.replace(p, kind="per-request") if _caller_input(p, params) else p
                        for p in b.val.parts])
        if any(isinstance(p, Hole) and p.kind == "volatile" for b in request.blocks for p in b.val.parts or ()):
            before = set(self.candidates)
            self.prompt_hazards(request, f"the prompt {what}; {NOT_SEEN_NOTE}", "returned")
            for key in set(self.candidates) - before:  # no sender, no "not measured": only a measured loss
                self.candidates[key].measured_only = True

    def framework_call(self, call: ast.Call, scope, name: Optional[str]) -> Optional[Tuple[str, Dict[int, str]]]:
        """(suffix, positional roles) for a LangChain chat model's ``invoke``/``stream`` and for an agent
        framework's ``Agent(..., system_prompt=/instructions=)``; None for anything else."""
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr in sinks.RUNNABLE_METHODS and self._is_chat_model(f.value, scope, 0):
            return "invoke", {0: "messages"}
        if isinstance(f, ast.Attribute) and f.attr == "bind_tools" and self._is_chat_model(f.value, scope, 0):
            return "bind_tools", {0: "tools"}  # the tool list every later invoke sends
        if sinks.is_agent(name) and any(kw.arg in sinks.AGENT_PROMPT_KWARGS for kw in call.keywords):
            return "agent", {}
        if sinks.is_agent(name) and any(kw.arg in CREW_FIELDS for kw in call.keywords):
            return "crew", {}
        return None

    def _crew_agent(self, call: ast.Call, scope, name: str) -> None:
        """CrewAI ``Agent(role=..., goal=..., backstory=...)``: its system prompt is CrewAI's role-playing text
        ``You are {role}. {backstory}\nYour personal goal is: {goal}`` (crewai/translations/en.json)."""
        fields = {kw.arg: self.flow.ev(kw.value, scope) for kw in call.keywords if kw.arg in CREW_FIELDS}
        system = Val(parts=[])
        for piece in ("You are ", "role", ". ", "backstory", "\nYour personal goal is: ", "goal"):
            if piece not in CREW_FIELDS:
                system.parts.append(piece)
                continue
            v = fields.get(piece)
            if v is None:
                continue
            system.add(v)
            system.parts.extend(v.parts if v.parts is not None else [Hole("static", piece, call)])
        sent = ast.copy_location(ast.Call(func=call.func, args=[], keywords=[ast.keyword(
            arg="system_prompt", value=ast.copy_location(ast.Name(id=AGENT_SYSTEM, ctx=ast.Load()), call))] + [
            kw for kw in call.keywords if kw.arg in sinks.TOOLS_KWARGS]), call)
        self._in = (self.flow, {AGENT_SYSTEM: system})
        try:
            self.llm_call(sent, scope, name, "agent", {})
        finally:
            self._in = (self.flow, {})

    def decorated_prompts(self):
        """(the first decorated function, a synthetic agent call, the system prompt) for each agent with
        ``@agent.system_prompt``/``@agent.instructions``-decorated functions in this module: the agent sends its
        own ``system_prompt=``/``instructions=`` text, then what each decorated function returns, in the order
        they are registered (source order), as one system prompt (parts joined by a blank line); the call
        sits at the first decorator's line."""
        if not _decorates_prompts(self.source):
            return  # no decorator of that name: the walk below finds nothing
        agents: Dict[object, list] = {}
        for node in ast.walk(self.index.tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if not (isinstance(target, ast.Attribute) and target.attr in sinks.AGENT_PROMPT_DECORATORS
                        and self._is_agent(target.value, node)):
                    continue
                returns = self.index.returns.get(id(node), [])
                if returns:
                    key = sinks.dotted(target.value) or id(target.value)
                    agents.setdefault(key, []).append((d, target, node, returns))
        for parts in agents.values():
            parts.sort(key=lambda p: (p[0].lineno, p[0].col_offset))
            d, target, first, _ = parts[0]
            made = self.flow.ev(target.value, None)
            static = [made.mapping[k] for k in ("system_prompt", "instructions")
                      if made.mapping is not None and made.mapping.get(k) is not None]
            vals = static + [merge([self.flow.ev(r, func) for r in returns]) for _, _, func, returns in parts]
            system = Val(parts=[])
            for i, v in enumerate(vals):
                system.add(v)
                if system.parts is not None:
                    system.parts = system.parts + (["\n\n"] if i else []) + (
                        v.parts if v.parts is not None else [Hole("static", "the agent's prompt", d)])
            call = ast.Call(func=target, args=[], keywords=[ast.keyword(arg="system_prompt",
                                                                        value=ast.Name(id=AGENT_SYSTEM, ctx=ast.Load()))])
            ast.copy_location(call, d)
            ast.copy_location(call.keywords[0].value, d)
            yield first, call, system

    def _called_prompt(self, node: ast.AST, scope) -> ast.AST:
        """An agent's prompt given as a callable (openai-agents ``Agent(instructions=dynamic_instructions)``,
        LangGraph ``prompt=`` a function, a lambda): the framework calls it for every run, so the prompt is what
        it returns (a synthetic call with no arguments: its parameters are unknown values); anything else as is."""
        flow = self._in[0]
        if isinstance(node, ast.Lambda):
            return node.body
        is_function = False
        if isinstance(node, ast.Name):
            local = flow.index.bindings.get((Index.sid(scope), node.id)) or flow.index.bindings.get((0, node.id))
            if node.id in flow.index.functions and not local:
                is_function = True
            elif node.id in flow.index.imports:
                r = objects.resolve(flow, node.id)
                is_function = r is not None and r[1] is not None and r[1] in r[0].index.functions
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in ("self", "cls") and scope is not None:
                is_function = flow._local_function(ast.Call(func=node, args=[], keywords=[]), scope) is not None
            elif node.value.id in flow.index.imports:
                r = objects.resolve(flow, node.value.id)
                is_function = r is not None and r[1] is None and node.attr in r[0].index.functions
        if not is_function:
            return node
        return ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node)

    def _is_agent(self, node: ast.AST, scope) -> bool:
        if isinstance(node, ast.Call):
            return sinks.is_agent(self.flow.name_of(node.func))
        if isinstance(node, ast.Name):
            val = self.flow.ev(node, None)
            made = [val.node] + [p.node for p in val.parts or () if isinstance(p, Hole)]
            return any(isinstance(n, ast.Call) and sinks.is_agent(self.flow.name_of(n.func)) for n in made)
        return False

    def _is_chat_model(self, node: ast.AST, scope, depth: int, flow: Optional[Flow] = None) -> bool:
        """``node`` evaluates to a chat model: its constructor call, a name or ``self.x`` bound to one,
        or one of them wrapped by ``.bind_tools(...)`` and the like (``flow``: the module that wrote it)."""
        return self._chat_model(node, scope, depth, flow) is not None

    def _chat_model(self, node: ast.AST, scope, depth: int, flow: Optional[Flow] = None) -> Optional[ast.Call]:
        """The constructor call of the chat model ``node`` evaluates to (see ``_is_chat_model``), else None;
        a factory of the linted files that returns one (``self.llm = make_llm()``) counts."""
        if depth > 4:
            return None
        if flow is not None and flow is not self.flow:  # a chain written in another module: by its own names
            if isinstance(node, ast.Name):
                values = _module_values(flow, node.id)
                node = values[-1] if values else node
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in sinks.RUNNABLE_WRAPPERS:
                node = node.func.value
            return node if isinstance(node, ast.Call) and sinks.is_chat_model(flow.name_of(node.func)) else None
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in sinks.RUNNABLE_WRAPPERS:
                return self._chat_model(f.value, scope, depth + 1)
            if sinks.is_chat_model(self.flow.name_of(f)):
                return node
            if self._factory_call(node, scope):  # `make_llm()`: what a function of the linted files returns
                made = self.flow.ev(node, scope).node
                if isinstance(made, ast.Call) and made is not node:
                    return self._chat_model(made, None, depth + 1, self.flow._flow_of(made))
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            return next((c for v in self._attribute_values(node.attr)
                         for c in [self._chat_model(v, None, depth + 1)] if c is not None), None)
        if isinstance(node, ast.Name):
            if scope is not None and node.id in self.index.params(scope):  # `llm: BaseChatModel`
                ann = next((a.annotation for a in scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs
                            if a.arg == node.id and a.annotation is not None), None)
                if ann is not None and any(sinks.is_chat_model(sinks.dotted(n)) for n in ast.walk(ann)):
                    return ann  # a chat model whose constructor is not seen
            val = self.flow.ev(node, scope)
            made = [val.node] + [p.node for p in val.parts or () if isinstance(p, Hole)]
            return next((c for n in made if isinstance(n, ast.Call)
                         for c in [self._chat_model(n, scope, depth + 1)] if c is not None), None)
        return None

    def _factory_call(self, node: ast.Call, scope) -> bool:
        """A call of a function of the linted files with a plain name (this module's or an imported one), or a
        ``self.`` method: one whose return may be a chat model built elsewhere."""
        f = node.func
        if isinstance(f, ast.Name):
            return f.id in self.index.functions or f.id in self.index.imports
        return (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls")
                and scope is not None and self.flow._local_function(node, scope) is not None)

    def _constructed_model(self, call: ast.Call, scope) -> Optional[str]:
        """The model named where the chat model a call is made on was built (``ChatAnthropic(model="claude-...")``,
        ``Anthropic(model=...)`` of LlamaIndex, in another method or module), as a literal; else None."""
        f = call.func
        if not isinstance(f, ast.Attribute):
            return None
        made = self._chat_model(f.value, scope, 0)
        if made is None and self.flow.name_of(f) is not None and sinks.llm_call(self.flow.name_of(f)):
            v = self._in[0].ev(f.value, scope, self._in[1])  # a LlamaIndex `llm` record: `Anthropic(model=...)`
            made = v.node if isinstance(v.node, ast.Call) and v.node is not call else None
        if not isinstance(made, ast.Call):
            return None
        owner = self.flow._flow_of(made)
        for key in MODEL_KEYWORDS:
            node = _kw(made, key)
            if node is not None:
                return _model_name(_literal(owner.ev(node, None)))
        return None

    def _attribute_values(self, attr: str) -> List[ast.AST]:
        """Every value assigned to ``self.<attr>`` in the module (a class builds its model in ``__init__``);
        indexed on first use, once per module."""
        if self._self_attrs is None:
            self._self_attrs = {}
            for node in ast.walk(self.index.tree):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            self._self_attrs.setdefault(t.attr, []).append(node.value)
        return self._self_attrs.get(attr, [])

    def _request_fields(self, call: ast.Call, scope, args: Dict[str, ast.AST]):
        """``get(key)``: a request field from a keyword, else from a ``**params`` dict the module builds."""
        cache: Dict[str, Optional[Val]] = {}
        spread = [kw.value for kw in call.keywords if kw.arg is None]

        def get(key: str) -> Optional[Val]:
            if key not in cache:
                flow, env = self._in
                val = flow.ev(args[key], scope, env) if key in args else None
                for node in spread if val is None else ():
                    mapping = flow.ev(node, scope, env).mapping or {}
                    if key in mapping:
                        val = mapping[key]
                        break
                cache[key] = val
            return cache[key]

        return get

    def _mark_dicts(self, node: ast.AST) -> None:
        if isinstance(node, (ast.List, ast.Tuple)):
            for e in node.elts:
                if isinstance(e, ast.Dict):
                    self.seen_dicts.add(id(e))

    # ----------------------------------------------------------------- hazards by kind
    def prompt_hazards(self, request: "layout.Layout", where: str, sink: str, call: Optional[ast.Call] = None,
                       model: Optional[str] = None) -> None:
        prompt = request.parts()
        holes: Dict[int, Tuple[Hole, int]] = {}  # first occurrence of each volatile value -> its block
        for k, block in enumerate(request.blocks):
            for p in block.val.parts or ():
                if isinstance(p, Hole) and p.kind == "volatile" and id(p.node) not in holes:
                    holes[id(p.node)] = (p, k)
            for h in block.val.hazards if block.section != "tools" else ():  # tool_hazards reports those (M202)
                if h.kind == "json":
                    self.json_candidate(h, f"{block.where} of {where}")
                elif h.kind == "unordered":
                    self.unordered_candidate(h, "M203", f"{block.where} of {where}", request)
        marks = request.breakpoints
        # a volatile value after the first per-request one belongs to this turn's message, which a
        # conversation resends unchanged as history: it only moves what was never shared
        order = {id(p.node): n for n, p in reversed(list(enumerate(prompt))) if isinstance(p, Hole)}
        first_per_request = min((order[id(p.node)] for p in prompt if isinstance(p, Hole) and p.kind == "per-request"),
                                default=None)
        for key, (hole, k) in holes.items():
            if key in self.claimed:
                continue  # already judged inside the LLM request that sends it
            if call is not None:
                self.claimed.add(key)
            after = [(i, bp) for i, bp in marks if i >= k]
            if first_per_request is not None and order[key] > first_per_request:
                after = []
            if after:
                self.add(Candidate("M106", hole.node, "", variable=hole.label, prompt=prompt, hole=hole,
                                   sink=f"reaches {where}",
                                   measure=breakpoints.volatile_measure(request, hole, after, model, sink=f"reaches {where}")))
            elif marks and breakpoints.explicit_only(request, model, marks[0][1].marker):
                continue  # after the last breakpoint: this provider caches nothing there
            else:
                self.add(Candidate("M101", hole.node, "", variable=hole.label, prompt=prompt, hole=hole,
                                   sink=f"reaches {where}"))
        if call is None or not marks:
            return
        fallback = call
        for n, (i, bp) in enumerate(marks):
            if not breakpoints.unknown_prefix(request, i):
                self.add(Candidate("M703", bp.node or fallback, "", measure=breakpoints.minimum_measure(
                    request, n, model, sink=f"in {where}")))
        c = breakpoints.too_many(request, model, where)
        if c is not None:
            node, message, notes, help_ = c
            self.add(Candidate("M704", node or fallback, message, help=help_, notes=notes))

    def field_collection_hazards(self, get: Callable[[str], Optional[Val]], where: str,
                                 prompt_key: Callable[[str], bool] = lambda key: True) -> None:
        """Order hazards in a request's message fields and in its prompt fields (``prompt_key``: which
        of layout.PROMPT_KEYS the call really sends); every front end's requests go through here."""
        for key in sorted(sinks.MESSAGES_KWARGS) + ["system"]:
            val = get(key)
            if val is not None:
                self.collection_hazards(val, where, "messages", key)
        for key in layout.PROMPT_KEYS:
            val = get(key)
            if val is not None and prompt_key(key):
                self.collection_hazards(val, where, "prompt parts", key)

    def collection_hazards(self, val: Val, where: str, what: str, key: str,
                           request: Optional["layout.Layout"] = None) -> None:
        for h in val.hazards:
            if h.kind == "unordered":
                self.unordered_candidate(h, "M203", f"`{key}=` of {where}", request)
            elif h.kind == "json":
                self.json_candidate(h, f"`{key}=` of {where}")

    def tool_hazards(self, val: Val, where: str, key: str) -> None:
        if val.unordered is not None:
            origin, what = val.unordered[:2]
            owner = self.project.owner(origin) if self.project is not None else None
            h = Hazard("unordered", origin, (owner or self.flow).text_of(origin), origin=origin, origin_label=what, fix=None)
            self.unordered_candidate(h, "M202", f"`{key}=` of {where}")
        for h in val.hazards:
            if h.kind == "unordered":
                self.unordered_candidate(h, "M202", f"`{key}=` of {where}")
            elif h.kind == "json":
                self.json_candidate(h, f"`{key}=` of {where}")

    def json_candidate(self, h: Hazard, where: str) -> None:
        self.add(Candidate(
            "M201", h.node,
            f"`{h.label}` serializes keys in insertion order and reaches {where}: the same data built in another "
            "order changes the prompt",
            help="pass `sort_keys=True`" if h.fix else "serialize with sorted keys", fix=h.fix))

    def unordered_candidate(self, h: Hazard, code: str, where: str, request: Optional["layout.Layout"] = None) -> None:
        what = "tools" if code == "M202" else "prompt parts"
        origin = h.origin_label or "an unordered collection"
        at = ""
        if h.origin is not None and h.origin is not h.node:
            owner = self.project.owner(h.origin) if self.project is not None else None
            same = owner is (self.project.owner(h.node) if self.project is not None else None)
            at = f" (line {h.origin.lineno})" if same else f" ({(owner.display if owner else self.display)}:{h.origin.lineno})"
        self.add(Candidate(
            code, h.node,
            f"{what} come from iterating {origin}{at} without `sorted()` and reach {where}: their order can differ "
            "between processes, changing every token after the first one that moves",
            help=f"iterate `sorted({h.label})`" if h.fix else "sort before building the prompt",
            notes=["set and dict-from-set order depends on string hashing (PYTHONHASHSEED), which differs per "
                   "process and replica; file-system listings follow directory order"],
            fix=h.fix, order=orders.renders(request or self._request, h, code) if (request or self._request) else None))

    # ----------------------------------------------------------------- double BOS
    def double_bos(self, call: ast.Call, scope, name: Optional[str]) -> None:
        if not name or not call.args and not call.keywords:
            return
        tail = name.rsplit(".", 1)[-1]
        arg = None
        kind = None
        if tail == "encode" or "tokenizer" in tail.lower() or tail in ("tok", "tokenize"):
            if _kw_is(call, "add_special_tokens", False):
                return
            arg = call.args[0] if call.args else _kw(call, "text")
            kind = f"`{self.flow.text_of(call.func, 40)}(...)` adds the tokenizer's special tokens (add_special_tokens defaults to True)"
        elif name.endswith("completions.create") and not name.endswith("chat.completions.create"):
            arg = _kw(call, "prompt")
            kind = "the completions endpoint tokenizes `prompt` with add_special_tokens=True"
        elif tail == "generate" and "." in name:
            arg = call.args[0] if call.args else (_kw(call, "prompts") or _kw(call, "prompt"))
            kind = "`LLM.generate` tokenizes a text prompt with add_special_tokens=True"
        if arg is None:
            return
        val = self.flow.ev(arg, scope)
        for h in val.hazards:
            if h.kind == "chat-text":
                self.add(Candidate(
                    "M102", call,
                    f"text from `{h.label}` ({self._line_of(h.node)}, tokenize=False) already holds the chat template's "
                    f"special tokens, and {kind}: BOS is duplicated, and these requests share no blocks with "
                    "chat-endpoint traffic",
                    help="pass `add_special_tokens=False`, send token ids, or use the chat endpoint with messages",
                    notes=["whether a second BOS appears depends on the model's tokenizer post-processor "
                           "(Llama, Mistral and Gemma add one; Qwen2.5 adds none)"]))
                break

    # ----------------------------------------------------------------- M4 and M7 keywords
    def keyword(self, key: Optional[str], value: ast.AST, owner: ast.AST, scope, salt_names: Dict[int, set]) -> None:
        if key == "cache_salt":
            if isinstance(value, ast.Name):
                salt_names.setdefault(Index.sid(scope), set()).add(value.id)
            if isinstance(value, ast.Constant):
                return
            self._salt(value, self.flow.ev(value, scope))
        elif key == "enable_prefix_caching" and isinstance(value, ast.Constant) and value.value is False:
            self.add(Candidate("M701", value, m701.message("enable_prefix_caching=False"),
                               help="remove it (prefix caching is on by default in vLLM V1)"))
        elif key == "disable_radix_cache" and isinstance(value, ast.Constant) and value.value is True:
            self.add(Candidate("M701", value, "`disable_radix_cache=True` turns SGLang's prefix cache off: every request pays the full prefill",
                               help="remove it"))
        elif key == "prompt_logprobs" and not (isinstance(value, ast.Constant) and value.value is None):
            self._prompt_logprobs(value)

    def _salt(self, value: ast.AST, val: Val) -> None:
        """M401 when the salt ``value`` (evaluated: ``val``) changes per request."""
        why = None
        for h in val.hazards:
            if h.kind == "volatile":
                why = f"`{h.label}` ({self._line_of(h.node)}) changes on every request"
                break
        if why is None:
            ids = sorted(n for n in val.names | set(_identifiers(value)) if n and _matches(n, SALT_ID_PATTERNS))
            if ids:
                why = f"it is built from `{ids[0]}`, which is unique per request"
        if why:
            self.add(Candidate(
                "M401", value,
                f"per-request `cache_salt`: {why}, so no request can reuse another's KV blocks",
                help="salt per tenant or per user (the isolation boundary), never per request"))

    def _line_of(self, node: ast.AST) -> str:
        """``line N`` in this module, ``file.py:N`` when ``node`` was read from another module of the project."""
        owner = self.flow._flow_of(node)
        return f"line {node.lineno}" if owner is self.flow else f"{owner.display}:{node.lineno}"

    def _prompt_logprobs(self, value: ast.AST) -> None:
        """M702: any prompt_logprobs value but None."""
        self.add(Candidate(
            "M702", value,
            "`prompt_logprobs` makes vLLM skip the prefix-cache lookup for this request: its whole prompt is prefilled again",
            help="request prompt logprobs only on requests that need them (evaluation), not on serving traffic"))

    def salt_leaks(self, salt_names: Dict[int, set]) -> None:
        def salty(n: ast.AST, names: set) -> bool:
            if isinstance(n, ast.Name):
                return n.id in names or "salt" in n.id.lower()
            if isinstance(n, ast.Attribute):
                return "salt" in n.attr.lower()
            if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant):
                return isinstance(n.slice.value, str) and "salt" in n.slice.value.lower()
            return False

        def check(node: ast.AST, scope, what: str) -> None:
            names = salt_names.get(Index.sid(scope), set()) | salt_names.get(0, set())
            for n in ast.walk(node):
                if salty(n, names):
                    self.add(Candidate(
                        "M402", n,
                        f"the cache salt `{self.flow.text_of(n, 40)}` is written to {what}: anyone who reads it can "
                        "probe the tenant's cached prefixes (timing side channel), defeating the isolation the salt buys",
                        help="log a hash prefix or the tenant id, never the salt"))
                    return

        for call, scope in self.index.calls:
            name = self.flow.name_of(call.func)
            if sinks.is_log_call(name):
                for a in list(call.args) + [k.value for k in call.keywords]:
                    check(a, scope, "logs")
            elif sinks.is_metrics_labels(name):
                for a in list(call.args) + [k.value for k in call.keywords]:
                    check(a, scope, "metrics labels")
        for r, scope in self.index.raises:
            if isinstance(r.exc, ast.Call):
                for a in r.exc.args:
                    check(a, scope, "an error message")


# a name that says "this is a prompt" ("message" is not one: log and error helpers format messages too;
# a list of role/content messages is recognised by its shape)
def forwarded_call(flow: Flow, call: ast.Call, scope) -> Optional[ast.Call]:
    """The SDK call a call makes through a function value: ``create(...)`` where ``create =
    functools.partial(client.messages.create, model=..., system=...)`` (the partial's arguments first; also
    ``self.create`` bound so in a method), or a helper given the SDK method and its arguments
    (``with_retries(client.messages.create, **request)``, ``asyncio.to_thread(client.chat.completions.create,
    ...)``); None for anything else. Only methods named by their SDK resource (``messages.create``,
    ``generate_content``...): a bare ``self.chat`` passed on may be any function. One node per call."""
    memo = flow.__dict__.setdefault("_forwarded", {})
    if id(call) in memo:
        return memo[id(call)]
    f = call.func
    target, args, keywords = None, list(call.args), list(call.keywords)
    partial = _partial_of(flow, f, call, scope)
    if partial is not None:
        target = partial.args[0]
        args, keywords = partial.args[1:] + args, partial.keywords + keywords
    elif call.args and flow.name_of(f) not in PARTIAL:
        for i, a in enumerate(call.args[:2]):
            if isinstance(a, ast.Attribute) and _sdk_method(flow.name_of(a)):
                target, args = a, list(call.args[i + 1:])
                break
    out = None
    if target is not None and _sdk_method(flow.name_of(target)):
        out = ast.copy_location(ast.Call(func=target, args=args, keywords=keywords), call)
        out.end_lineno, out.end_col_offset = call.end_lineno, call.end_col_offset
    memo[id(call)] = out
    return out


PARTIAL = ("functools.partial", "partial")


def _partial_of(flow: Flow, f: ast.AST, at: ast.Call, scope) -> Optional[ast.Call]:
    """The ``functools.partial(...)`` call a name (or ``self.<attr>`` in a method) is bound to, if any."""
    index = flow.index
    if isinstance(f, ast.Name):
        entries = (index.bindings.get((Index.sid(scope), f.id)) if scope is not None else None) \
            or index.bindings.get((0, f.id)) or []
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" and scope is not None:
        entries = index.attrs.get((index.class_of.get(id(scope), ""), f.attr)) or []
    else:
        return None
    for e in reversed(entries):
        v = e.value
        if e.kind == "assign" and isinstance(v, ast.Call) and v.args and flow.name_of(v.func) in PARTIAL:
            return v
    return None


# a provider's HTTP endpoint (the URL's path) -> the SDK method that sends the same body
HTTP_ENDPOINTS = (("/v1/messages", "messages.create"), ("/chat/completions", "chat.completions.create"),
                  ("/v1/responses", "responses.create"), ("/v1/completions", "completions.create"))


def http_request(flow: Flow, call: ast.Call, scope) -> Optional[Tuple[ast.Call, str]]:
    """A model request made over plain HTTP: ``requests.post(url, json=payload)``, ``httpx.post(...)``,
    ``session.post(...)``/``await client.post(...)`` to a URL whose text names a provider's endpoint
    (``.../v1/messages``, ``.../chat/completions``, ``.../v1/responses``); ``data=json.dumps(payload)`` too.
    (a call whose keywords spread the payload, the SDK method's suffix); None for anything else."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr in ("post", "apost")):
        return None
    kws = {k.arg: k.value for k in call.keywords if k.arg}
    url = call.args[0] if call.args else kws.get("url")
    body = kws.get("json")
    if body is None and "data" in kws or body is None and "content" in kws:
        raw = kws.get("data", kws.get("content"))
        body = raw.args[0] if isinstance(raw, ast.Call) and flow.name_of(raw.func) in DUMPS and raw.args else None
    if url is None or body is None:
        return None
    text = "".join(p for p in flow.ev(url, scope).parts or () if isinstance(p, str))
    suffix = next((sfx for path, sfx in HTTP_ENDPOINTS if path in text), None)
    if suffix is None:
        return None
    out = ast.copy_location(ast.Call(func=f, args=[], keywords=[ast.keyword(arg=None, value=body)]), call)
    out.end_lineno, out.end_col_offset = call.end_lineno, call.end_col_offset
    return out, suffix


def _wrapped_client_call(flow: Flow, call: ast.Call, scope) -> Optional[str]:
    """The SDK call (``sinks.CLIENT_WRAPPERS``) that ``client.create(...)`` stands for when ``client`` is a name
    bound, in this function or module or the module it is imported from, to a structured-output wrapper's
    call; None for any other ``create``."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr in sinks.WRAPPED_CREATE_METHODS and isinstance(f.value, ast.Name)):
        return None
    name = f.value.id
    values = [e.value for e in flow.index.bindings.get((Index.sid(scope), name)) or () if e.kind == "assign"] \
        if scope is not None else []
    owner = flow
    values += _module_values(flow, name)
    if not values:
        r = objects.resolve(flow, name)
        if r is not None and r[1] is not None:
            owner, values = r[0], _module_values(r[0], r[1])
    for v in values:
        if isinstance(v, ast.Await):
            v = v.value
        if not isinstance(v, ast.Call):
            continue
        wrapper = owner.name_of(v.func)
        suffix = sinks.CLIENT_WRAPPERS.get(wrapper or "")
        if suffix is None:
            continue
        model = v.args[0] if v.args else None
        if isinstance(model, ast.Constant) and isinstance(model.value, str) and model.value.startswith("anthropic/"):
            return "messages.create"
        return suffix
    return None


def _module_values(flow: Flow, name: str) -> List[ast.AST]:
    """The values a module assigns to a module-level name, in order."""
    return [e.value for e in flow.index.bindings.get((0, name)) or () if e.kind == "assign"]


def _sdk_method(name: Optional[str]) -> bool:
    """An SDK method named by its resource (``client.messages.create``, ``model.generate_content``): a call
    made through a reference to it sends a request."""
    m = sinks.llm_call(name)
    return m is not None and ("." in m[0] or m[0] in sinks.PROVIDER_OF_SUFFIX) and m[0] not in BARE_NAMES


BARE_NAMES = {"generate", "chat", "achat", "stream_chat", "astream_chat", "from_messages", "apply_chat_template"}


def _llm_calls_by_function(flow) -> Dict[int, list]:
    """id(function) -> its LLM calls with their (suffix, positional roles), once per module's Flow."""
    table = flow.__dict__.get("_llm_calls")
    if table is None:
        table = flow.__dict__["_llm_calls"] = {}
        for c, scope in flow.index.calls:
            if scope is not None:
                m = sinks.llm_call(flow.name_of(c.func))
                if m is None:  # a partial of the SDK method, or the method handed to a helper
                    c = forwarded_call(flow, c, scope) or c
                    m = sinks.llm_call(flow.name_of(c.func)) if c is not None else None
                if m is not None:
                    table.setdefault(id(scope), []).append((c, m))
    return table


def _with_documents(request: "layout.Layout", docs: Val, get) -> "layout.Layout":
    """The request with its ``documents=`` as one block after the system prompt (the tools, the system field
    and the leading system messages), where chat templates that take documents (Command R, Granite) render
    them, ahead of the conversation: pysource.orders puts the stand-in items there."""
    out = layout.Layout(request.provider)
    messages = get("messages")
    system = set()
    for i, m in enumerate(messages.items if messages is not None and messages.items is not None else []):
        if _literal((m.mapping or {}).get("role")) not in ("system", "developer"):
            break
        system.add(f"messages[{i}]")
    at = max((k + 1 for k, b in enumerate(request.blocks)
              if b.section in ("tools", "system") or b.where.split(".")[0] in system), default=0)
    out.blocks = request.blocks[:at] + [layout.Block(Val(hazards=list(docs.hazards)), "documents", "documents")] \
        + request.blocks[at:]
    return out


MAX_WRAPPERS = 3  # calls followed from a linted module's call to the one that sends (wrapped_sinks)


def _calls_by_function(flow) -> Dict[int, list]:
    """id(function) -> the calls in its body, once per module's Flow."""
    table = flow.__dict__.get("_calls_in")
    if table is None:
        table = flow.__dict__["_calls_in"] = {}
        for c, scope in flow.index.calls:
            if scope is not None:
                table.setdefault(id(scope), []).append(c)
    return table


def _caller_input(p, params) -> bool:
    """A hole that is one of the judged function's parameters, read as is (no caller in the module bound it)."""
    return isinstance(p, Hole) and p.kind == "static" and isinstance(p.node, ast.Name) and p.node.id in params \
        and p.label == p.node.id


def _text_like(node) -> bool:
    """An assigned value that builds text (a type alias named ``...SystemMessageParam`` is not a prompt)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.JoinedStr, ast.BinOp)):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
        "format", "join", "dedent", "strip", "format_map", "replace")


def _decorates_prompts(source: str) -> bool:
    """The text holds ``@<agent>.system_prompt`` / ``.instructions`` as a decorator (``@a.instructions`` on its
    own line, or called); an attribute read of the same name is not one."""
    return any(f".{d}{end}" in source for d in sinks.AGENT_PROMPT_DECORATORS for end in ("\n", "(", "\r"))


PROMPT_NAMES = ("prompt", "instruction", "system", "preamble", "persona")


def _prompt_named(name: str) -> bool:
    """Named like a prompt, a system message or instructions (``build_system_prompt``, ``INSTRUCTIONS``)."""
    low = name.lower()
    return any(w in low for w in PROMPT_NAMES)


def _is_message_dict(d: ast.Dict) -> bool:
    keys = {k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return "role" in keys and "content" in keys


# a chat model constructor's keywords naming the model (LangChain `model`/`model_name`, Bedrock `model_id`)
MODEL_KEYWORDS = ("model", "model_name", "model_id")


def _model_name(name: Optional[str]) -> Optional[str]:
    """``provider:model`` (pydantic-ai, LangChain's ``init_chat_model``) as the model table's ``provider/model``."""
    if name and ":" in name and "/" not in name.split(":", 1)[0]:
        head, rest = name.split(":", 1)
        if head.isidentifier() and rest and not rest[0].isdigit():
            return f"{head}/{rest}"
    return name


def _kw(call: ast.Call, name: str) -> Optional[ast.AST]:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _kw_is(call: ast.Call, name: str, value) -> bool:
    v = _kw(call, name)
    return isinstance(v, ast.Constant) and v.value is value


def _identifiers(node: ast.AST) -> List[str]:
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.append(n.id)
        elif isinstance(n, ast.Attribute):
            out.append(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) < 40:
            out.append(n.value)
    return out


def _matches(name: str, patterns) -> bool:
    low = name.lower().replace("-", "_")
    return any(fnmatch.fnmatchcase(low, p) for p in patterns)
