"""A TypeScript project and its Python twin, laid out as agent code bases are (benchmarks/ts_parse.py).

``generate(root, n)`` writes ``n`` files per language under ``root/ts`` and ``root/py``: a shared
prompt module (a timestamp before the policy) and tool list, one agent module in four (a class whose
method sends an Anthropic request built from the shared modules and a utility module), and utility
modules (types, a cache class, fetch helpers) that name no SDK: a directory walk skips them by their
bytes, as it skips most of a real project.
"""

from pathlib import Path

POLICY = ("You are the support assistant for Acme Corporation. Answer questions about orders, shipping and "
          "returns politely and precisely. Always cite the relevant policy section.")

TS_PROMPTS = '''export const POLICY = "{policy}";
export function buildSystem(tenant: string): string {{
  const now = new Date().toISOString();
  return `Now: ${{now}}\\n${{POLICY}}\\nTenant: ${{tenant}}`;
}}
'''
TS_TOOLS = '''export const TOOLS = [
  {{ name: "lookup", description: "Look up an order", input_schema: {{ type: "object", properties: {{ id: {{ type: "string" }} }} }} }},
  {{ name: "refund", description: "Start a refund", input_schema: {{ type: "object", properties: {{ id: {{ type: "string" }} }} }} }},
];
'''
TS_AGENT = '''import Anthropic from "@anthropic-ai/sdk";
import {{ buildSystem }} from "../common/prompts";
import {{ TOOLS }} from "../common/tools";
import {{ format{j} as format{i} }} from "../util/util{j}";

const client = new Anthropic();

interface Ctx {{ tenant: string; plan: "free" | "pro"; history: {{ role: "user" | "assistant"; content: string }}[] }}

export class Agent{i} {{
  private turns = 0;
  constructor(private readonly ctx: Ctx) {{}}

  summary(): string {{
    return this.ctx.history.map((m) => `${{m.role}}: ${{m.content}}`).join("\\n");
  }}

  async answer(question: string) {{
    this.turns += 1;
    const response = await client.messages.create({{
      model: "claude-sonnet-4-5",
      max_tokens: 512,
      system: buildSystem(this.ctx.tenant),
      tools: TOOLS,
      messages: [...this.ctx.history, {{ role: "user", content: format{i}(question) }}],
    }});
    return response.content;
  }}
}}
'''
TS_UTIL = '''export type Row{i} = {{ id: number; name: string; tags: string[]; score?: number }};

export function format{i}(s: string): string {{
  return s.trim().replace(/\\s+/g, " ");
}}

export function sortRows{i}(rows: Row{i}[]): Row{i}[] {{
  return [...rows].sort((a, b) => (a.score ?? 0) - (b.score ?? 0) || a.name.localeCompare(b.name));
}}

export class Cache{i}<T> {{
  private store = new Map<string, {{ value: T; at: number }}>();
  constructor(private readonly ttl = 60_000) {{}}
  get(key: string): T | undefined {{
    const hit = this.store.get(key);
    if (!hit) return undefined;
    if (Date.now() - hit.at > this.ttl) {{
      this.store.delete(key);
      return undefined;
    }}
    return hit.value;
  }}
  set(key: string, value: T): void {{
    this.store.set(key, {{ value, at: Date.now() }});
  }}
}}

export async function fetchAll{i}(urls: string[]): Promise<string[]> {{
  const out: string[] = [];
  for (const u of urls) {{
    const r = await fetch(u, {{ headers: {{ accept: "application/json" }} }});
    if (!r.ok) throw new Error(`bad status ${{r.status}} for ${{u}}`);
    out.push(await r.text());
  }}
  return out;
}}

export const handlers{i} = {{
  onOpen: (id: number) => console.log("open", id),
  onClose: (id: number) => console.log("close", id),
  onError: (e: unknown) => console.error(e instanceof Error ? e.message : String(e)),
}};
'''
PY_PROMPTS = '''from datetime import datetime

POLICY = "{policy}"


def build_system(tenant: str) -> str:
    now = datetime.now().isoformat()
    return f"Now: {{now}}\\n{{POLICY}}\\nTenant: {{tenant}}"
'''
PY_TOOLS = '''TOOLS = [
    {{"name": "lookup", "description": "Look up an order", "input_schema": {{"type": "object", "properties": {{"id": {{"type": "string"}}}}}}}},
    {{"name": "refund", "description": "Start a refund", "input_schema": {{"type": "object", "properties": {{"id": {{"type": "string"}}}}}}}},
]
'''
PY_AGENT = '''from dataclasses import dataclass, field
from typing import List

import anthropic

from common.prompts import build_system
from common.tools import TOOLS
from util.util{j} import format{j} as format{i}

client = anthropic.Anthropic()


@dataclass
class Ctx:
    tenant: str
    plan: str
    history: List[dict] = field(default_factory=list)


class Agent{i}:
    def __init__(self, ctx: Ctx):
        self.ctx = ctx
        self.turns = 0

    def summary(self) -> str:
        return "\\n".join(f"{{m['role']}}: {{m['content']}}" for m in self.ctx.history)

    def answer(self, question: str):
        self.turns += 1
        response = client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=512,
            system=build_system(self.ctx.tenant),
            tools=TOOLS,
            messages=[*self.ctx.history, {{"role": "user", "content": format{i}(question)}}],
        )
        return response.content
'''
PY_UTIL = '''import re
import time
from dataclasses import dataclass
from typing import Dict, Generic, List, Optional, Tuple, TypeVar
from urllib.request import urlopen

T = TypeVar("T")


@dataclass
class Row{i}:
    id: int
    name: str
    tags: List[str]
    score: Optional[float] = None


def format{i}(s: str) -> str:
    return re.sub(r"\\s+", " ", s.strip())


def sort_rows{i}(rows: List[Row{i}]) -> List[Row{i}]:
    return sorted(rows, key=lambda r: (r.score or 0, r.name))


class Cache{i}(Generic[T]):
    def __init__(self, ttl: float = 60.0):
        self.ttl = ttl
        self.store: Dict[str, Tuple[T, float]] = {{}}

    def get(self, key: str) -> Optional[T]:
        hit = self.store.get(key)
        if hit is None:
            return None
        if time.time() - hit[1] > self.ttl:
            del self.store[key]
            return None
        return hit[0]

    def set(self, key: str, value: T) -> None:
        self.store[key] = (value, time.time())


def fetch_all{i}(urls: List[str]) -> List[str]:
    out = []
    for u in urls:
        with urlopen(u) as r:
            if r.status != 200:
                raise ValueError(f"bad status {{r.status}} for {{u}}")
            out.append(r.read().decode())
    return out


HANDLERS{i} = {{
    "on_open": lambda i: print("open", i),
    "on_close": lambda i: print("close", i),
    "on_error": lambda e: print(str(e)),
}}
'''


def generate(root: Path, n: int, agents_every: int = 4):
    """n files per language: one agent module per ``agents_every`` files, the rest utilities."""
    for lang in ("ts", "py"):
        base = root / lang
        (base / "common").mkdir(parents=True, exist_ok=True)
        (base / "util").mkdir(parents=True, exist_ok=True)
        (base / "agents").mkdir(parents=True, exist_ok=True)
    (root / "ts" / "common" / "prompts.ts").write_text(TS_PROMPTS.format(policy=POLICY), encoding="utf-8")
    (root / "ts" / "common" / "tools.ts").write_text(TS_TOOLS.format(), encoding="utf-8")
    (root / "py" / "common" / "__init__.py").write_text("", encoding="utf-8")
    (root / "py" / "util" / "__init__.py").write_text("", encoding="utf-8")
    (root / "py" / "common" / "prompts.py").write_text(PY_PROMPTS.format(policy=POLICY), encoding="utf-8")
    (root / "py" / "common" / "tools.py").write_text(PY_TOOLS.format(), encoding="utf-8")
    for i in range(n - 2):
        if i % agents_every == 0:
            (root / "ts" / "agents" / f"agent{i}.ts").write_text(TS_AGENT.format(i=i, j=i + 1), encoding="utf-8")
            (root / "py" / "agents" / f"agent{i}.py").write_text(PY_AGENT.format(i=i, j=i + 1), encoding="utf-8")
        else:
            (root / "ts" / "util" / f"util{i}.ts").write_text(TS_UTIL.format(i=i), encoding="utf-8")
            (root / "py" / "util" / f"util{i}.py").write_text(PY_UTIL.format(i=i), encoding="utf-8")
