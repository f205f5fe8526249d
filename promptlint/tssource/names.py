"""Names that matter in TS/JS: SDK calls that send a request, volatile and per-process values,
unordered sources. Matching is on the dotted callee as written (``client.chat.completions.create``),
after import aliases (``import { randomUUID as id } from "crypto"`` -> ``crypto.randomUUID``).

Request calls map to the Python analyzer's sink suffixes (``pysource.sinks``), which decide
how the request is laid out (``pysource.layout``): one table of providers for both front ends.
"""

from __future__ import annotations

from typing import Dict, Optional

# method suffix of a call whose first argument is the request object -> pysource.sinks suffix
REQUEST_METHODS: Dict[str, str] = {
    "chat.completions.create": "chat.completions.create",
    "chat.completions.parse": "chat.completions.parse",
    "chat.completions.stream": "chat.completions.stream",
    "beta.chat.completions.parse": "chat.completions.parse",
    "responses.create": "responses.create",
    "responses.parse": "responses.create",
    "responses.stream": "responses.create",
    "messages.create": "messages.create",
    "messages.stream": "messages.create",
    "messages.countTokens": "messages.create",
    "beta.messages.create": "messages.create",
    "models.generateContent": "generate_content",
    "models.generateContentStream": "generate_content",
    "generateContent": "generate_content",
    "generateContentStream": "generate_content",
    "startChat": "chats.create",
    "chats.create": "chats.create",
    "beta.assistants.create": "assistants",  # OpenAI Assistants: `instructions` is the system prompt
    "beta.assistants.update": "assistants",
    "beta.threads.runs.create": "assistants",
    "beta.threads.runs.stream": "assistants",
    "beta.threads.runs.createAndPoll": "assistants",
    "beta.threads.createAndRun": "assistants",
}
# methods whose request object is not the first argument (`runs.create(threadId, { ... })`)
REQUEST_ARGUMENT = {"beta.threads.runs.create": 1, "beta.threads.runs.stream": 1, "beta.threads.runs.createAndPoll": 1,
                    "beta.assistants.update": 1}
# constructors whose argument is a Bedrock Converse request
REQUEST_COMMANDS = {"ConverseCommand": "converse", "ConverseStreamCommand": "converse"}
# Vercel AI SDK: functions of `ai` taking {model, system, prompt, messages, tools, providerOptions}
AI_SDK_FUNCTIONS = {"generateText", "streamText", "generateObject", "streamObject"}
# agent frameworks: the option that holds the system prompt (LangGraph.js createReactAgent `prompt`,
# formerly `stateModifier`/`messageModifier`; OpenAI Agents and Mastra `instructions`)
AGENT_PROMPT_KEYS = ("instructions", "prompt", "systemPrompt", "system", "stateModifier", "messageModifier")
# LangChain.js
RUNNABLE_METHODS = {"invoke", "stream", "batch"}
RUNNABLE_WRAPPERS = {"bindTools", "bind", "withConfig", "withRetry", "withFallbacks", "withStructuredOutput"}

# volatile calls -> sub-kind (scenarios.volatile_value: timestamp/date/time/id/number; "process":
# the same for every request of a process, different in the next process or replica)
VOLATILE_CALLS: Dict[str, str] = {
    "Date.now": "number",
    "performance.now": "number",
    "process.hrtime": "number",
    "process.hrtime.bigint": "number",
    "process.uptime": "number",
    "Math.random": "number",
    "crypto.randomUUID": "id",
    "crypto.randomBytes": "id",
    "crypto.getRandomValues": "id",
    "uuid.v1": "id",
    "uuid.v4": "id",
    "uuid.v7": "id",
    "nanoid": "id",
    "nanoid.nanoid": "id",
    "ulid.ulid": "id",
    "cuid": "id",
    "os.hostname": "process",
    "os.uptime": "number",
    "process.cwd": "process",
    "Date": "timestamp",  # `Date()` without `new`: the current time as text
    "crypto.randomInt": "number",
    "os.freemem": "number",
    "os.loadavg": "number",
    "process.memoryUsage": "number",
    "process.memoryUsage.rss": "number",
    "os.networkInterfaces": "process",
    "os.userInfo": "process",
    "Temporal.Now.instant": "timestamp",
    "Temporal.Now.zonedDateTimeISO": "timestamp",
    "Temporal.Now.plainDateTimeISO": "timestamp",
    "Temporal.Now.plainTimeISO": "time",
    "Temporal.Now.plainDateISO": "date",
    "dayjs": "timestamp",
    "moment": "timestamp",
    "DateTime.now": "timestamp",  # luxon
    "DateTime.local": "timestamp",
}
# properties that are volatile by themselves
VOLATILE_PROPERTIES: Dict[str, str] = {"process.pid": "process", "process.ppid": "process"}
# environment variables that name the process or replica (other variables are deployment constants)
PER_PROCESS_ENV = {"HOSTNAME", "HOST", "POD_NAME", "POD_IP", "COMPUTERNAME", "DYNO", "FLY_ALLOC_ID",
                   "FLY_MACHINE_ID", "RENDER_INSTANCE_ID", "INSTANCE_ID", "CONTAINER_ID", "PID",
                   # process managers and platforms that number or name each instance
                   "NODE_APP_INSTANCE", "pm_id", "HEROKU_DYNO_ID", "RAILWAY_REPLICA_ID", "WEBSITE_INSTANCE_ID",
                   "GAE_INSTANCE", "CF_INSTANCE_GUID", "CF_INSTANCE_INDEX", "AWS_LAMBDA_LOG_STREAM_NAME",
                   "ECS_CONTAINER_METADATA_URI", "ECS_CONTAINER_METADATA_URI_V4"}
# functions that turn a number into a number: `Math.floor(Date.now() / 1000)` is still the moment's
NUMERIC_WRAPPERS = {"Math.floor", "Math.round", "Math.ceil", "Math.trunc", "Math.abs", "Number", "parseInt",
                    "parseFloat", "BigInt", "Number.parseInt", "Number.parseFloat"}

# methods on a Date (or a dayjs/moment value): the sub-kind of the text they give (None: keep)
DATE_METHODS: Dict[str, Optional[str]] = {
    "toISOString": "timestamp", "toJSON": "timestamp", "toString": None, "toUTCString": "timestamp",
    "toLocaleString": "timestamp", "toLocaleDateString": "date", "toDateString": "date",
    "toLocaleTimeString": "time", "toTimeString": "time", "getTime": "number", "valueOf": "number",
    "getFullYear": "date", "getMonth": "date", "getDate": "date", "getDay": "date", "getHours": "time",
    "getMinutes": "time", "getSeconds": "time", "format": None, "toFormat": None, "toISO": "timestamp",
    "toISODate": "date", "toLocaleString ": "timestamp", "unix": "number",
}
# calls whose result lists files in directory order
UNORDERED_CALLS: Dict[str, str] = {
    "fs.readdirSync": "fs.readdirSync() (file-system order)",
    "fs.readdir": "fs.readdir() (file-system order)",
    "fs.promises.readdir": "fs.promises.readdir() (file-system order)",
    "fsp.readdir": "fs.promises.readdir() (file-system order)",
    "fs/promises.readdir": "fs.promises.readdir() (file-system order)",
    "readdirSync": "readdirSync() (file-system order)",
    "readdir": "readdir() (file-system order)",
    "glob": "glob() (file-system order)",
    "globSync": "globSync() (file-system order)",
    "glob.sync": "glob.sync() (file-system order)",
    "fg": "fast-glob (file-system order)",
    "fg.sync": "fast-glob (file-system order)",
    "fastGlob": "fast-glob (file-system order)",
    # the same functions named by their package (`import fg from "fast-glob"`, `require("glob")`)
    "fast-glob": "fast-glob (file-system order)",
    "fast-glob.sync": "fast-glob (file-system order)",
    "fast-glob.glob": "fast-glob (file-system order)",
    "fast-glob.globSync": "fast-glob (file-system order)",
    "fast-glob.async": "fast-glob (file-system order)",
    "glob.glob": "glob() (file-system order)",
    "glob.globSync": "globSync() (file-system order)",
    "glob.sync": "glob.sync() (file-system order)",
    "globby": "globby() (file-system order)",
    "globby.globby": "globby() (file-system order)",
    "globby.globbySync": "globbySync() (file-system order)",
    "tinyglobby.glob": "tinyglobby (file-system order)",
    "tinyglobby.globSync": "tinyglobby (file-system order)",
}
# text methods that keep what a value is (a date stays a date); applied to literal text when known
TEXT_METHODS = {"trim", "trimStart", "trimEnd", "toUpperCase", "toLowerCase", "toString", "normalize",
                "padStart", "padEnd", "replace", "replaceAll", "repeat", "concat"}
ORDERED_ARRAY_METHODS = {"map", "filter", "flatMap", "flat", "slice", "concat", "reverse", "toReversed", "values"}
SORTING_METHODS = {"sort", "toSorted", "localeCompare"}
SORTING_FUNCTIONS = {"sortBy", "orderBy", "_.sortBy", "_.orderBy", "lodash.sortBy"}

LOG_RECEIVERS = {"console", "logger", "log", "this.logger", "this.log"}


# factories of id generators: what the function they return gives is a fresh id per call
# (`const newId = customAlphabet("0123456789abcdef", 12); newId()`)
ID_FACTORIES = {"customAlphabet", "customRandom", "monotonicFactory", "cuid2.init", "@paralleldrive/cuid2.init",
                "nanoid.customAlphabet", "nanoid.customRandom", "ulid.monotonicFactory", "ulid.factory"}
# globals written through their holder (`globalThis.performance.now()`) or their module (`perf_hooks`)
_GLOBAL_PREFIXES = ("perf_hooks.", "globalThis.", "window.", "self.")


def id_factory(name: Optional[str]) -> bool:
    return bool(name) and (name in ID_FACTORIES or name.rsplit(".", 1)[-1] in ("customAlphabet", "customRandom",
                                                                             "monotonicFactory"))


def volatile_call(name: Optional[str]) -> Optional[str]:
    if not name:
        return None
    if name.startswith(_GLOBAL_PREFIXES):
        name = name.split(".", 1)[1]
    if name in VOLATILE_CALLS:
        return VOLATILE_CALLS[name]
    last = name.rsplit(".", 1)[-1]
    if last in ("randomUUID", "uuidv4", "uuidv7", "uuidv1", "nanoid", "ulid", "createId", "cuid2") or (
            last in ("v4", "v7", "v1") and name.split(".", 1)[0] in ("uuid",)):
        return "id"
    return None


def unordered_call(name: Optional[str]) -> Optional[str]:
    if not name:
        return None
    if name in UNORDERED_CALLS:
        return UNORDERED_CALLS[name]
    last = name.rsplit(".", 1)[-1]
    if last in ("readdirSync", "readdir", "globSync", "globby", "globbySync"):
        return f"{last}() (file-system order)"
    return None


def request_argument(name: Optional[str]) -> int:
    """Which argument of an SDK method call is the request object."""
    for suffix, i in REQUEST_ARGUMENT.items():
        if (name or "").endswith("." + suffix):
            return i
    return 0


def request_method(name: Optional[str]) -> Optional[str]:
    """The pysource.sinks suffix for an SDK method call (``client.messages.create``), or None."""
    if not name or "." not in name:
        return None
    parts = [p for p in name.split(".") if not p.startswith("with")]  # withResponse, withOptions
    name = ".".join(parts)
    for suffix in _LONGEST_FIRST:
        if name.endswith("." + suffix):
            return REQUEST_METHODS[suffix]
    return None


_LONGEST_FIRST = sorted(REQUEST_METHODS, key=len, reverse=True)


def is_chat_model(name: Optional[str]) -> bool:
    """A LangChain.js chat model class (``ChatOpenAI``, ``ChatAnthropic``, ``AzureChatOpenAI``)."""
    last = (name or "").rsplit(".", 1)[-1]
    if last == "initChatModel":
        return True
    return last[:1].isupper() and "Chat" in last and not last.endswith(("Message", "Template", "History", "Session"))


def is_agent(name: Optional[str]) -> bool:
    """An agent class or factory (``Agent``, ``createReactAgent``, ``createToolCallingAgent``)."""
    last = (name or "").rsplit(".", 1)[-1]
    return (last[:1].isupper() and last.endswith("Agent")) or (last.startswith("create") and last.endswith("Agent"))


def provider_of_model(callee: Optional[str]) -> str:
    """Vercel AI SDK: the provider a model factory names (``anthropic("claude-...")``, ``bedrock(...)``)."""
    low = (callee or "").lower()
    for key in ("bedrock", "anthropic", "openai", "google", "vertex", "mistral"):
        if key in low:
            return key
    return ""
