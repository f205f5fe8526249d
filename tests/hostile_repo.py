"""A repository a hostile pull request could produce, and the checks every command must pass on it.

`build(tmp_path)` makes a real git repository (everything committed, as a pull request's checkout
is) full of traps, plus what a CI job writes beside it (an untracked `.env` with a secret, the
job's token in the environment) and files outside it that nothing may touch:

- **shadow modules** (`shlex.py`, `json.py`, `pip/`, `promptlint/`, `jinja2/`, `tokenizers.py`,
  `yaml.py`, `libcst/`, `sitecustomize.py`, ...): importing any of them writes a file into
  ``canaries``; none may ever exist;
- **links out** at every level a write could take: the cache directory's version folder, its
  `entries` and `manifests` folders, the Action's default `promptlint.sarif`, a `report.md` that
  is `.git/config`;
- **secrets**: `.env` (untracked, as CI writes it) holds ``SECRET``, the environment holds
  ``TOKEN``; templates try to print the first through a computed include name, a mapping key
  and an attribute;
- **a model directory with its own tokenizer** whose pre-tokenizer regex makes the `tokenizers`
  regex engine panic (`(a+)+b` on a run of `a`s: "retry-limit-in-match over");
- **names CI interprets**: a template whose file name holds a newline and `::error::`, a
  template-controlled text with `@org/team`;
- a configuration that asks for a daemon (`daemon = true`: a repository may not start one);
- prompt files (`.prompty` front matter with aliases, a file reference and deep nesting, an unclosed
  one; promptflow and Semantic Kernel role-line bodies; an agent YAML's `system_prompt: |`; a bare
  chat template in a `.j2`) that try the same leaks;
- one honest template with a timestamp first (an M101) that every `check` must still report.

`Hostile.assert_safe(*texts)` is the common verdict: no canary module ran, nothing outside
changed, no secret in any output, no traceback or internal error, no workflow command from data.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import promptlint

DATA = Path(__file__).parent / "data"
SECRET = "hostile-canary-secret-7f3e9a"
TOKEN = "ghs_hostileCanaryToken0123456789"
SHADOWS = ["shlex.py", "json.py", "pip/__init__.py", "promptlint/__init__.py", "promptlint/__main__.py",
           "jinja2/__init__.py", "tokenizers.py", "yaml.py", "libcst/__init__.py", "tomli.py", "sitecustomize.py",
           "usercustomize.py", "typing_extensions.py", "pygls/__init__.py", "pyarrow/__init__.py"]
RULES = "\n".join(f"{i}. Always answer politely; this is rule {i} of the support policy, kept verbatim." for i in range(1, 16))
GOOD = "Time: {{ timestamp }}\nYou are the support assistant of a shop.\n" + RULES + "\nQuestion: {{ question }}\n"
GOOD_SAMPLES = """[variables]
timestamp = { value = "2024-05-01T10:00:00Z", kind = "volatile", sub-kind = "timestamp", variant = "2024-05-01T10:00:07Z" }
question = { value = "Where is my order?", kind = "per-request", variant = "Can I return a tent?" }
"""
# Templates that try to carry `.env` into a message: a computed include name, key and attribute.
LEAKS = {
    "leak_include.j2": "{% set s %}{% include '.env' %}{% endset %}{% include s %}\nHello {{ name }}\n",
    "leak_key.j2": "{% set s %}{% include '.env' %}{% endset %}{{ {'a': 1}[s] }}\nHello {{ name }}\n",
    "leak_attr.j2": "{% set s %}{% include '.env' %}{% endset %}{{ name | attr(s) }}\nHello {{ name }}\n",
    "leak_raise.j2": "{% set s %}{% include '.env' %}{% endset %}{{ raise_exception(s) }}\n",
    "mention.j2": "{{ raise_exception('@octo-org/security and @someone, look') }}\n",
}
# Prompt files (issue 32): front matter with aliases, a file reference to `.env`, deep flow
# nesting and an unclosed block; role-line bodies that try the same leaks; a bare chat template
# (a `.j2` recognised by what it does) raising with a computed text.
PROMPT_FILES = {
    "leak.prompty": "---\nname: &a [*a, *a]\nmodel:\n  api: chat\nsample: ${file:../.env}\n"
                    "inputs:\n  deep:\n    sample: " + "[" * 200 + "x" + "]" * 200 + "\n---\nsystem:\n"
                    "{% set s %}{% include '.env' %}{% endset %}{% include s %}\nuser:\n{{ question }}\n",
    "unclosed.prompty": "---\nname: never closed\nsample:\n  question: hi\nsystem:\n{{ question }}\n",
    "leak_flow.jinja2": "# system:\n{% set s %}{% include '.env' %}{% endset %}{{ {'a': 1}[s] }}\n# user:\n{{ question }}\n",
    "leak_sk.jinja2": '<message role="system">{% set s %}{% include \'.env\' %}{% endset %}{{ name | attr(s) }}</message>'
                      '<message role="user">{{ question }}</message>\n',
    "leak_agent.yaml": "name: &n agent\nalias: *n\nsystem_prompt: |\n  {% set s %}{% include '.env' %}{% endset %}\n"
                       "  {{ s | attr(s) }} {{ question }}\n" + "deep: " + "{" * 300 + "\n",
    "leak_chat.j2": "{% set loop_messages = messages %}{% set s %}{% include '.env' %}{% endset %}"
                    "{% for m in loop_messages %}{{ raise_exception(s) }}{% endfor %}"
                    "{% if add_generation_prompt %}go{% endif %}\n",
}
PANIC_REGEX = "(a+)+b"  # onig gives up ("retry-limit-in-match over") and tokenizers panics


OUTSIDE_TEXT = "OUTSIDE-MODULE-TEXT"
TS_AGENT = """import Anthropic from "@anthropic-ai/sdk";
import { LEAK } from "./link";
import { LEAK as CLIMB } from "../../outside/evil";
const client = new Anthropic();
const POLICY = "You are the support assistant for Acme Corporation. Answer questions about orders, shipping and returns politely and precisely. Always cite the relevant policy section. Never invent order numbers.";
export async function answer(q: string) {
  return client.messages.create({
    model: "claude-sonnet-4-5", max_tokens: 256,
    system: `Now: ${new Date().toISOString()}\n${POLICY}\n${LEAK}\n${CLIMB}`,
    messages: [{ role: "user", content: q }],
  });
}
"""


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env).stdout


def evil_tokenizer_json() -> str:
    """A real tokenizer (Mistral v3's, 1.4 MB) with a pre-tokenizer regex that panics the engine."""
    data = json.loads((DATA / "tokenizers" / "mistral-v3-spm" / "tokenizer.json").read_text(encoding="utf-8"))
    split = {"type": "Split", "pattern": {"Regex": PANIC_REGEX}, "behavior": "Isolated", "invert": False}
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [split] + ([data["pre_tokenizer"]] if data["pre_tokenizer"] else [])}
    return json.dumps(data)


def _digest(path: Path) -> tuple:
    st = os.lstat(path)
    if os.path.islink(path):
        return ("link", os.readlink(path))
    if path.is_dir():
        return ("dir", st.st_mode)
    return ("file", hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_mode)


@dataclass
class Hostile:
    root: Path
    outside: Path
    canaries: Path
    home: Path
    before: Dict[str, tuple] = field(default_factory=dict)

    # ------------------------------------------------------------------ running

    def env(self, **extra: str) -> Dict[str, str]:
        """A CI job's environment: CI and GITHUB_ACTIONS set, the job's token present, a home and
        user cache of its own; PYTHONPATH kept only when the suite runs from a source tree."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "LANG": "C.UTF-8",
               "XDG_CACHE_HOME": str(self.home / ".cache"), "XDG_CONFIG_HOME": str(self.home / ".config"),
               "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_TOKEN": TOKEN, "PROMPTLINT_JOBS": "1"}
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        env.update(extra)
        return env

    def run(self, *args: str, stdin: Optional[str] = None, timeout: float = 180, **env: str) -> subprocess.CompletedProcess:
        """`promptlint ARGS` as a CI step runs it: the installed command, the workspace as cwd."""
        return subprocess.run([*promptlint_command(), *args], cwd=self.root, env=self.env(**env), input=stdin,
                              capture_output=True, text=True, timeout=timeout, errors="replace")

    # ------------------------------------------------------------------ verdicts

    def snapshot(self) -> Dict[str, tuple]:
        files = {str(p.relative_to(self.outside.parent)): _digest(p) for p in sorted(self.outside.rglob("*"))}
        for name in (".git/config", ".git/HEAD"):
            files[name] = _digest(self.root / name)
        return files

    def ran(self) -> List[str]:
        return sorted(p.name for p in self.canaries.iterdir())

    def assert_safe(self, *texts: str) -> None:
        assert self.ran() == [], f"repository code ran: {self.ran()}"
        assert self.snapshot() == self.before, "a file outside the repository (or .git/config) changed"
        for text in texts:
            assert SECRET not in text and TOKEN not in text, "a secret reached the output"
            assert "Traceback (most recent call last)" not in text and "internal error" not in text, text[-2000:]
            for line in text.splitlines():
                if line.lstrip().startswith("::"):
                    # only the github reporter's own commands, well-formed, with a file= location
                    assert re.match(r"::(error|warning|notice) [^\n]*::", line.lstrip()), line
                    assert "::error::pwned" not in line, line


def promptlint_command() -> List[str]:
    """The installed console script beside this interpreter (what a user or CI runs)."""
    script = Path(sys.executable).with_name("promptlint")
    if script.exists():
        return [str(script)]
    found = shutil.which("promptlint")
    assert found, "the promptlint command is not installed"
    return [found]


def _captures(root: Path) -> None:
    """Captured conversations (`promptlint conversation`): the secret in every header, cookie and
    query a capture can hold, a conversation named like a workflow command, records that are not
    requests, JSON nested past any parser's depth, and the run of a's that panics the model's tokenizer."""
    body = {"model": "gpt-4.1", "messages": [{"role": "system", "content": "a" * 300 + "!"}, {"role": "user", "content": "hi"}]}
    later = dict(body, messages=body["messages"] + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "x"}],
                 tools=[{"type": "function", "function": {"name": "t", "parameters": {"b": 1, "a": 2}}}])
    entries = [{"pageref": "p\n::error::pwned", "request": {
        "method": "POST", "url": f"https://api.openai.com/v1/chat/completions?key={SECRET}",
        "headers": [{"name": "Authorization", "value": f"Bearer {SECRET}"}, {"name": "Cookie", "value": SECRET}],
        "cookies": [{"name": "s", "value": SECRET}], "postData": {"mimeType": "application/json", "text": json.dumps(b)}},
        "response": {"status": 200, "headers": [{"name": "Set-Cookie", "value": SECRET}],
                     "content": {"text": "{" * 100_000}}} for b in (body, later)]
    entries.append({"request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages", "postData": {"text": "[" * 100_000}}})
    (root / "capture.har").write_text(json.dumps({"log": {"pages": [{"id": "p\n::error::pwned"}], "entries": entries}}),
                                      encoding="utf-8")
    lines = [json.dumps({"conversation": "c\n::error::pwned", **b}) for b in (body, later)]
    lines += ["[" * 100_000, "{\"messages\": [1, 2]}", "\"::error::pwned\""]
    (root / "capture.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    span = {"traceId": "t", "attributes": [{"key": "gen_ai.input.messages", "value": {"stringValue": "[" * 100_000}},
                                           {"key": "http.request.header.authorization", "value": {"stringValue": SECRET}}]}
    # the conventions' operation-details event and flat tool definitions: attributes that are not a
    # list, values nested as deep as the file's parser allows, a tool named like a workflow command
    # and one with no name, reordered on an Anthropic span (no cache_control: its reuse is unknown)
    deep = {"stringValue": "::error::pwned"}
    for _ in range(200):
        deep = {"arrayValue": {"values": [deep]}}

    def kv(values):
        return [{"key": k, "value": v} for k, v in values.items()]

    text = {"stringValue": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "a" * 300}]}])}
    tools = {"arrayValue": {"values": [{"kvlistValue": {"values": kv({"type": {"stringValue": "function"},
                                                                      "name": {"stringValue": "t\n::error::pwned"},
                                                                      "parameters": deep})}},
                                       {"kvlistValue": {"values": kv({"type": {"stringValue": "function"}, "name": {"intValue": "x"}})}}]}}
    details = "gen_ai.client.inference.operation.details"
    spans = [span] + [{"traceId": "d", "startTimeUnixNano": str(n), "attributes": kv({"gen_ai.provider.name": {"stringValue": "anthropic"}}),
                       "events": [{"name": details, "attributes": "::error::pwned"},
                                  {"name": details, "attributes": kv({"gen_ai.input.messages": text if n else deep,
                                                                      "gen_ai.tool.definitions": tools if n else deep})}]}
                      for n in range(3)]
    spans[-1]["events"][1]["attributes"][1]["value"] = {"arrayValue": {"values": tools["arrayValue"]["values"][::-1]}}
    (root / "trace.json").write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}, indent=1),
                                     encoding="utf-8")
    # streamed replies (text/event-stream) that are not streams of any provider, and times that are not times
    streams = ["data: " + "[" * 100_000 + "\n\n",
               "event: message_start\ndata: {\"type\": \"message_start\", \"message\": \"::error::pwned\"}\n\n"
               "data: {\"type\": \"content_block_start\", \"index\": [1], \"content_block\": {}}\n\n"
               "data: {\"type\": \"content_block_delta\", \"index\": {}, \"delta\": {\"type\": \"input_json_delta\"}}\n\n",
               "data: {\"object\": \"chat.completion.chunk\", \"choices\": [{\"delta\": {\"tool_calls\": [{\"index\": \"x\"}]}}]}\n\n"
               "data: {\"candidates\": {\"0\": 1}}\n\n" * 20_000]
    times = ["9999-99-99T99:99:99Z", "NaN", 1e308, -1e308, True, "::error::pwned"]
    entries = [{"startedDateTime": times[i % len(times)], "request": {
        "method": "POST", "url": "https://api.anthropic.com/v1/messages", "headers": [{"name": "x-api-key", "value": SECRET}],
        "postData": {"text": json.dumps({"model": "claude-sonnet-4-5", "system": "a" * 300, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral", "ttl": "::error::pwned"}}]}]})}},
        "response": {"status": 200, "content": {"mimeType": "text/event-stream", "text": streams[i % len(streams)]}}}
        for i in range(6)]
    (root / "stream.har").write_text(json.dumps({"log": {"entries": entries}}), encoding="utf-8")
    lines = [json.dumps({"time": t, "conversation": "t", **body}) for t in times]
    (root / "timed.jsonl").write_text("\n".join(lines).replace("1e+308", "Infinity", 1) + "\n", encoding="utf-8")


def build(tmp_path: Path) -> Hostile:
    root, outside, canaries, home = (tmp_path / n for n in ("repo", "outside", "canaries", "home"))
    for d in (root, outside, canaries, home):
        d.mkdir(parents=True)
    # files outside: a "binary", a tree of old files a pruning could delete, a victim for reports
    (outside / "victim.bin").write_bytes(b"\x7fELF keep me")
    (outside / "victim.txt").write_text("keep me\n", encoding="utf-8")
    tree = outside / "tree"
    (tree / "ab").mkdir(parents=True)
    for i in range(20):
        p = tree / ("ab" if i % 2 else ".") / f"old{i:02d}.json"
        p.write_text("{}" * 100, encoding="utf-8")
        os.utime(p, ns=(10**9 * (1000 + i),) * 2)
    (outside / "manifests").mkdir()
    (outside / "manifests" / "m.json").write_text("{}", encoding="utf-8")

    for name in SHADOWS:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"open({str(canaries / name.replace('/', '_'))!r}, 'w').close()\n", encoding="utf-8")

    prompts = root / "prompts"
    prompts.mkdir()
    (prompts / "support.j2").write_text(GOOD, encoding="utf-8")
    (prompts / "support.samples.toml").write_text(GOOD_SAMPLES, encoding="utf-8")
    for name, text in {**LEAKS, **PROMPT_FILES}.items():
        (prompts / name).write_text(text, encoding="utf-8")
    (prompts / "x\n::error::pwned.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    (prompts / "@octo-org.j2").write_text("Hello {{ name }}\n", encoding="utf-8")
    # the run of a's makes the model directory's tokenizer panic ("retry-limit-in-match over")
    (root / "request.txt").write_text("You are a helpful assistant.\n" * 8 + "a" * 300 + "!\n", encoding="utf-8")
    (root / "request2.txt").write_text("You are a helpful assistant.\n" * 7 + "Today is Monday.\n", encoding="utf-8")
    _captures(root)

    model = root / "models" / "evil"
    model.mkdir(parents=True)
    (model / "tokenizer.json").write_text(evil_tokenizer_json(), encoding="utf-8")
    (model / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": "<s>", "eos_token": "</s>",
        "chat_template": "{% for m in messages %}" + "a" * 40 + "! {{ m['content'] }}\n{% endfor %}",
    }), encoding="utf-8")

    # a Python agent importing a prompt module that is a link to a file outside: never read (read, its
    # M101 would name the secret in the volatile call's text), and shadow modules are parsed, never run
    (outside / "linked_prompt.py").write_text(
        f"import time\nSYSTEM = 'Clock ' + time.strftime('%H:%M:%S {SECRET}') + ' Follow the shop policy. ' * 40\n",
        encoding="utf-8")
    os.symlink(outside / "linked_prompt.py", root / "linked_prompt.py")
    (root / "agent_link.py").write_text(
        "import json\nimport shlex\n\nfrom openai import OpenAI\n\nfrom linked_prompt import SYSTEM\n\nclient = OpenAI()\n\n\n"
        "def go(q):\n    return client.chat.completions.create(model='m', messages=[\n"
        "        {'role': 'system', 'content': SYSTEM + json.dumps(shlex.split(q))}, {'role': 'user', 'content': q}])\n",
        encoding="utf-8")
    # a TypeScript agent: an honest hazard, and imports that climb out of the repository or follow a
    # link to a module outside it (never read: its text must not reach the output)
    (outside / "evil.ts").write_text(f'export const LEAK = "{OUTSIDE_TEXT} " + Date.now();\n', encoding="utf-8")
    (root / "agent").mkdir()
    os.symlink(outside / "evil.ts", root / "agent" / "link.ts")
    (root / "agent" / "agent.ts").write_text(TS_AGENT, encoding="utf-8")

    (root / "promptlint.toml").write_text('daemon = true\nexclude = ["models/**"]\n', encoding="utf-8")
    # links out, at every level a write could take
    cache = root / ".promptlint_cache" / promptlint.__version__
    cache.mkdir(parents=True)
    (root / ".promptlint_cache" / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n", encoding="utf-8")
    os.symlink(tree, cache / "entries")
    os.symlink(outside / "manifests", cache / "manifests")
    os.symlink(outside / "victim.bin", root / "promptlint.sarif")
    os.symlink(outside / "tree", root / "reports")
    # a trace whose rows are fine, for audit (the example application's)
    (root / "traces").mkdir()
    shutil.copy(Path(__file__).parent.parent / "examples" / "audit" / "trace.jsonl", root / "traces" / "t.jsonl")
    os.symlink(".git/config", root / "report.md")
    git(root, "init", "-q")
    git(root, "add", "-A", "-f")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "hostile pull request")
    # what the CI job writes into the workspace after checkout: untracked
    (root / ".env").write_text(f"API_KEY={SECRET}\n", encoding="utf-8")
    (root / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={SECRET}\n", encoding="utf-8")
    hostile = Hostile(root, outside, canaries, home)
    hostile.before = hostile.snapshot()
    return hostile
