"""Names that matter: prompt sinks, volatile calls, set-like sources, logging and metrics calls.

Matching is by the dotted name written in the code (``client.chat.completions.create``,
``datetime.now``), after mapping ``from x import y [as z]`` aliases back to ``x.y``.
"""

from __future__ import annotations

import ast
from typing import Dict, Optional, Tuple

# LLM calls: suffix of the dotted call name -> positional parameters (index -> role)
LLM_CALL_SUFFIXES: Tuple[Tuple[str, Dict[int, str]], ...] = (
    ("chat.completions.create", {}),
    ("chat.completions.parse", {}),
    ("chat.completions.stream", {}),
    ("completions.create", {}),  # legacy completions endpoint: prompt=
    ("ChatCompletion.create", {}),  # the openai<1.0 module API: openai.ChatCompletion.create(messages=...)
    ("ChatCompletion.acreate", {}),
    ("Completion.create", {}),
    ("Completion.acreate", {}),
    ("chat.complete", {}),  # mistralai: client.chat.complete(model=..., messages=...)
    ("chat.complete_async", {}),
    ("chat.stream", {}),
    ("chat.stream_async", {}),
    ("chat_completion", {0: "messages"}),  # huggingface_hub InferenceClient
    ("responses.create", {}),
    ("responses.parse", {}),
    ("responses.stream", {}),
    ("messages.create", {}),
    ("messages.stream", {}),
    ("messages.parse", {}),
    ("messages.count_tokens", {}),
    ("converse", {}),  # boto3 bedrock-runtime Converse
    ("converse_stream", {}),
    ("invoke_model", {}),  # Bedrock InvokeModel: body=json.dumps({...Anthropic Messages body...})
    ("invoke_model_with_response_stream", {}),
    ("generate_content", {0: "contents"}),  # google-genai client.models / google.generativeai GenerativeModel
    ("generate_content_stream", {0: "contents"}),
    ("chats.create", {}),  # google-genai: history= is the conversation so far
    ("completion", {1: "messages"}),  # litellm.completion, litellm Router().completion
    ("acompletion", {1: "messages"}),
    ("litellm.text_completion", {1: "prompt"}),
    ("apply_chat_template", {0: "conversation"}),
    ("from_messages", {0: "messages"}),
    ("generate", {0: "prompts", 1: "sampling_params"}),  # vLLM LLM.generate / AsyncLLMEngine.generate
    ("chat", {0: "messages", 1: "sampling_params"}),  # vLLM LLM.chat, LlamaIndex llm.chat([ChatMessage(...)])
    ("achat", {0: "messages"}),  # LlamaIndex async / streaming chat
    ("stream_chat", {0: "messages"}),
    ("astream_chat", {0: "messages"}),
)
BARE_LLM_FUNCTIONS = {"completion": {1: "messages"}, "acompletion": {1: "messages"}, "text_completion": {1: "prompt"}}

# Segments an SDK puts between the resource and its method without changing the request:
# `client.messages.with_raw_response.create`, `client.chat.completions.with_streaming_response.create`,
# `client.with_options(timeout=5).messages.create`. Dropped before the suffix match.
PASS_THROUGH_PREFIX = "with_"

# Structured-output wrappers that return a client whose own `create(...)` sends the wrapped SDK's request
# (instructor: `client = instructor.from_openai(OpenAI()); client.create(response_model=..., messages=...)`):
# wrapper -> the SDK call it stands for. Their `client.chat.completions.create`/`client.messages.create`
# match the suffixes above like the SDK's own, as do observability wrappers (`wrap_openai(OpenAI())`).
CLIENT_WRAPPERS = {
    "instructor.from_openai": "chat.completions.create",
    "instructor.patch": "chat.completions.create",
    "instructor.apatch": "chat.completions.create",
    "instructor.from_litellm": "chat.completions.create",
    "instructor.from_mistral": "chat.completions.create",
    "instructor.from_anthropic": "messages.create",
    "instructor.from_provider": "chat.completions.create",  # "anthropic/..." models: messages.create
}
WRAPPED_CREATE_METHODS = {"create", "acreate", "create_with_completion", "create_partial", "create_iterable"}

# LangChain runnables: a chat model's invoke/stream takes the messages as its first argument.
# The receiver must be a chat model (see is_chat_model); `.bind_tools(tools)` and friends keep it one.
RUNNABLE_METHODS = {"invoke", "ainvoke", "stream", "astream"}
RUNNABLE_WRAPPERS = {"bind_tools", "bind", "with_config", "with_retry", "with_fallbacks", "with_structured_output"}

# Agent frameworks that take the system prompt when the agent is built (pydantic-ai
# `Agent(model, system_prompt=...)`, openai-agents `Agent(name=..., instructions=...)`): keyword -> request field
# (also autogen `AssistantAgent(name, system_message=...)`, LangGraph `create_react_agent(model, tools, prompt=...)`)
AGENT_PROMPT_KWARGS = {"system_prompt": "system", "instructions": "instructions", "system_message": "system",
                       "prompt": "system"}
# pydantic-ai `@agent.system_prompt` / `@agent.instructions`: what the decorated function returns is the prompt
AGENT_PROMPT_DECORATORS = {"system_prompt", "instructions"}

# how the provider behind a call builds its prompt (pysource.layout); anything else is "chat"
PROVIDER_OF_SUFFIX = {
    "messages.create": "anthropic", "messages.stream": "anthropic", "messages.parse": "anthropic",
    "messages.count_tokens": "anthropic",
    "converse": "bedrock", "converse_stream": "bedrock",
    "invoke_model": "bedrock-invoke", "invoke_model_with_response_stream": "bedrock-invoke",
    "responses.create": "openai-responses", "responses.parse": "openai-responses", "responses.stream": "openai-responses",
    "generate_content": "gemini", "generate_content_stream": "gemini", "chats.create": "gemini",
}

# keyword -> what the value is
MESSAGES_KWARGS = {"messages", "conversation"}
TOOLS_KWARGS = {"tools", "functions"}
DOCUMENTS_KWARGS = {"documents"}

# volatile calls -> sub-kind (scenarios.volatile_value understands timestamp/date/time/id)
VOLATILE_CALLS: Dict[str, str] = {
    "datetime.now": "timestamp",
    "datetime.utcnow": "timestamp",
    "datetime.today": "timestamp",
    "datetime.datetime.now": "timestamp",
    "datetime.datetime.utcnow": "timestamp",
    "datetime.datetime.today": "timestamp",
    "date.today": "date",
    "datetime.date.today": "date",
    "time.time": "number",
    "time.time_ns": "number",
    "time.monotonic": "number",
    "time.perf_counter": "number",
    "time.ctime": "timestamp",
    "time.strftime": "timestamp",
    "time.localtime": "timestamp",
    "time.gmtime": "timestamp",
    "uuid.uuid1": "id",
    "uuid.uuid4": "id",
    "os.getpid": "number",
    # the machine: one value per replica, so replicas behind one provider cache never share the prefix
    # ("process", as the TypeScript analyzer's `os.hostname()`: measured with id-like samples)
    "socket.gethostname": "process",
    "socket.getfqdn": "process",
    "platform.node": "process",
    "os.uname": "process",
    "time.monotonic_ns": "number",
    "time.perf_counter_ns": "number",
    "time.process_time": "number",
    "time.asctime": "timestamp",
    "uuid.uuid6": "id",
    "uuid.uuid7": "id",
    "os.urandom": "id",
    # the other random-byte sources and clocks of the standard library (any function of `random`/`secrets` is
    # listed below, in VOLATILE_MODULES)
    "os.getrandom": "id",
    "ssl.RAND_bytes": "id",
    "time.process_time_ns": "number",
    "time.thread_time": "number",
    "time.thread_time_ns": "number",
    "time.clock_gettime": "number",
    "time.clock_gettime_ns": "number",
    "pendulum.now": "timestamp",
    "pendulum.today": "date",
    "pendulum.tomorrow": "date",
    "pendulum.yesterday": "date",
    "arrow.now": "timestamp",
    "arrow.utcnow": "timestamp",
    # frameworks' clocks: Django's timezone-aware now, pandas timestamps
    "django.utils.timezone.now": "timestamp",
    "django.utils.timezone.localtime": "timestamp",
    "django.utils.timezone.localdate": "date",
    "pandas.Timestamp.now": "timestamp",
    "pandas.Timestamp.utcnow": "timestamp",
    "pandas.Timestamp.today": "timestamp",
    "pandas.datetime.now": "timestamp",
    # id libraries: one new id per call
    "ulid.new": "id",
    "ulid.ulid": "id",
    "ulid.ULID": "id",
    "shortuuid.uuid": "id",
    "shortuuid.random": "id",
    "shortuuid.ShortUUID.uuid": "id",
    "nanoid.generate": "id",
    "nanoid.non_secure_generate": "id",
    "cuid.cuid": "id",
    "cuid2.cuid_wrapper": "id",
    "ksuid.ksuid": "id",
    "ksuid.Ksuid": "id",
    "torch.rand": "number",
    "torch.randn": "number",
    "torch.randint": "number",
}
# any function of the module (numpy's generators draw a new value per call too; `np.` maps to `numpy.`)
VOLATILE_MODULES = {"random": "number", "secrets": "id", "numpy.random": "number"}

# calls whose result is an unordered collection of strings (safe to wrap in sorted())
UNORDERED_CALLS = {
    "set": "a set",
    "frozenset": "a frozenset",
    "glob.glob": "glob.glob() (file-system order)",
    "glob.iglob": "glob.iglob() (file-system order)",
    "os.listdir": "os.listdir() (file-system order)",
    "os.scandir": "os.scandir() (file-system order)",
    "os.walk": "os.walk() (file-system order)",
}
UNORDERED_METHODS = {"glob": "Path.glob() (file-system order)", "rglob": "Path.rglob() (file-system order)",
                     "iterdir": "Path.iterdir() (file-system order)"}
SET_METHODS = {"union", "intersection", "difference", "symmetric_difference", "copy"}

# how a value becomes text while keeping what it is
TEXT_METHODS = {
    "isoformat", "strftime", "strip", "lstrip", "rstrip", "upper", "lower", "title", "capitalize",
    "replace", "hex", "ctime", "date", "time", "timestamp", "encode", "decode", "casefold", "zfill",
    "expandtabs", "center", "ljust", "rjust", "removeprefix", "removesuffix", "getvalue",
}
TEXT_FUNCTIONS = {"str", "format", "repr", "textwrap.dedent", "inspect.cleandoc", "int", "float", "round"}

LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "fatal"}


def dotted(node: ast.AST) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain; `?.b.c` when the chain starts with a call or subscript."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif parts:
        parts.append("?")
    else:
        return None
    return ".".join(reversed(parts))


def canonical(name: Optional[str], aliases: Dict[str, str]) -> Optional[str]:
    """Map the first segment through import aliases: `dt.now` with `from datetime import datetime as dt`."""
    if not name:
        return name
    head, _, rest = name.partition(".")
    if head in aliases:
        head = aliases[head]
    return head + ("." + rest if rest else "")


# the suffixes by their method name: most calls of a module end in a name no SDK call ends in
_BY_METHOD = {m: tuple(x for x in LLM_CALL_SUFFIXES if x[0].rsplit(".", 1)[-1] == m)
              for m in {s.rsplit(".", 1)[-1] for s, _ in LLM_CALL_SUFFIXES}}


def llm_call(name: Optional[str]) -> Optional[Tuple[str, Dict[int, str]]]:
    """(matched suffix, positional roles) when ``name`` is an LLM or chat-template call."""
    if not name:
        return None
    if name in BARE_LLM_FUNCTIONS:
        return name, BARE_LLM_FUNCTIONS[name]
    name = ".".join(p for p in name.split(".") if not p.startswith(PASS_THROUGH_PREFIX))
    for suffix, positional in _BY_METHOD.get(name.rsplit(".", 1)[-1], ()):
        if name == suffix or name.endswith("." + suffix):
            if "." not in suffix and "." not in name:
                continue  # a bare generate()/chat()/converse() function is not an SDK method
            return suffix, positional
    return None


def is_chat_model(name: Optional[str]) -> bool:
    """A LangChain chat model class or factory: `ChatOpenAI`, `AzureChatOpenAI`, `init_chat_model`."""
    last = (name or "").rsplit(".", 1)[-1]
    if last == "init_chat_model":
        return True
    # ChatPromptTemplate, ChatMessage, ChatMessageHistory are the prompt's parts, not the model
    return last[:1].isupper() and "Chat" in last and not last.endswith(("Message", "Template", "History", "Session"))


def is_agent(name: Optional[str]) -> bool:
    """An agent framework's agent class or factory (`Agent`, `pydantic_ai.Agent`, `AssistantAgent`,
    `create_react_agent`)."""
    segments = (name or "").split(".")
    last = segments[-1]
    if len(segments) > 1 and last.startswith("from_") and segments[-2][:1].isupper() and segments[-2].endswith("Agent"):
        return True  # LlamaIndex `ReActAgent.from_tools(tools, system_prompt=...)`
    return (last[:1].isupper() and last.endswith("Agent")) or (last.startswith("create_") and last.endswith("agent"))


def volatile_sub(name: Optional[str]) -> Optional[str]:
    if not name:
        return None
    if name in VOLATILE_CALLS:
        return VOLATILE_CALLS[name]
    parts = name.split(".")
    for n in range(len(parts) - 1, 0, -1):  # `numpy.random.rand`: the longest module prefix listed
        sub = VOLATILE_MODULES.get(".".join(parts[:n]))
        if sub:
            return sub
    return None


def is_log_call(name: Optional[str]) -> bool:
    if not name:
        return False
    if name in ("print", "warnings.warn"):
        return True
    receiver, _, method = name.rpartition(".")
    return method in LOG_METHODS and ("log" in receiver.lower() or receiver == "logging")


def is_metrics_labels(name: Optional[str]) -> bool:
    return bool(name) and (name.endswith(".labels") or name.endswith(".tags") or name.endswith(".set_attribute"))
