"""Record chat prompts from llama.cpp's own server code (commit 0c1e570) into tests/data.

``render.cpp`` compiles llama.cpp's ``tools/server/server-common.cpp`` and calls its
``oaicompat_chat_params_parse`` (what ``/v1/chat/completions`` runs) with llama-server's default
settings, so the prompt comes from llama.cpp's request parsing, ``common/chat.cpp`` and its own
Jinja engine (``common/jinja``). For every corpus chat template in tests/data/chat_templates
and every request body below it records the prompt (or the server's error), and the template
capabilities llama.cpp derived (``common_chat_templates_get_caps``).

Usage (llama.cpp tree of the llama-cpp-python 0.3.36 sdist, libllama and llama-common built
from it with -DLLAMA_BUILD_COMMON=ON):

    python scripts/llamacpp_vectors/make_render_vectors.py TREE BUILD

Output: tests/data/llamacpp-render-vectors.json.gz. llama.cpp puts the server's date into
``date_string``/``datetime``; the driver runs with TZ=UTC and the date is recorded.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "tests" / "data"
COMMIT = "0c1e57098bba43ac29e6e3b677cdceebdd22334f"

SYSTEM = {"role": "system", "content": "You are a support assistant for Acme. Be brief."}
USER = {"role": "user", "content": "What's the weather in Paris?"}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}}},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    },
}
NO_DESCRIPTION = {"type": "function", "function": {"name": "list_orders", "parameters": {"type": "object", "properties": {"limit": {"type": "integer"}}}}}
STRICT = {
    "type": "function",
    "function": {
        "name": "cancel_order",
        "description": "Cancel an order.",
        "strict": True,
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"], "additionalProperties": False},
    },
    "x-vendor": {"cost": 1},
}
NAME_ONLY = {"type": "function", "function": {"name": "ping"}}
ARGS = {"location": {"city": "Paris", "country": "FR"}, "unit": "celsius"}


def call(arguments):
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]}


TOOL_RESULT = {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": '{"temp_c": 17, "rain": true}'}

BODIES = {
    "plain": {"messages": [SYSTEM, USER]},
    "no-system": {"messages": [USER]},
    "no-generation-prompt": {"messages": [SYSTEM, USER], "add_generation_prompt": False},
    "tools-without-description": {"messages": [SYSTEM, USER], "tools": [WEATHER, NO_DESCRIPTION]},
    "tools-with-strict": {"messages": [SYSTEM, USER], "tools": [STRICT, WEATHER]},
    "tool-name-only": {"messages": [SYSTEM, USER], "tools": [NAME_ONLY]},
    "tool-call-string-arguments": {"messages": [SYSTEM, USER, call(json.dumps(ARGS)), TOOL_RESULT], "tools": [WEATHER]},
    "tool-call-object-arguments": {"messages": [SYSTEM, USER, call(ARGS), TOOL_RESULT], "tools": [WEATHER]},
    "tool-call-compact-string-arguments": {"messages": [SYSTEM, USER, call(json.dumps(ARGS, separators=(",", ":"))), TOOL_RESULT], "tools": [WEATHER]},
    "tool-call-invalid-string-arguments": {"messages": [SYSTEM, USER, call("city=Paris"), TOOL_RESULT], "tools": [WEATHER]},
    "content-parts": {"messages": [
        {"role": "system", "content": [{"type": "text", "text": "You are a support assistant."}, {"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "First part."}, {"type": "text", "text": "Second part."}]},
    ]},
    "empty-content-parts": {"messages": [SYSTEM, {"role": "user", "content": []}]},
    "developer-role": {"messages": [{"role": "developer", "content": "Answer in French."}, USER]},
    "extra-message-keys": {"messages": [SYSTEM, dict(USER, metadata={"id": 7}, name="alice"),
                                        {"role": "assistant", "content": "Sunny.", "refusal": None}, USER]},
    "prefill": {"messages": [SYSTEM, USER, {"role": "assistant", "content": "The weather in Paris is"}]},
    "prefill-with-generation-prompt": {"messages": [USER, {"role": "assistant", "content": "It is"}], "add_generation_prompt": True},
    "continue-final-message": {"messages": [USER, {"role": "assistant", "content": "It is"}], "continue_final_message": True,
                               "add_generation_prompt": False},
    "reasoning-history": {"messages": [SYSTEM, USER, {"role": "assistant", "content": "Sunny.", "reasoning_content": "Check the forecast."}, USER]},
    "thinking-off": {"messages": [SYSTEM, USER], "chat_template_kwargs": {"enable_thinking": False}},
    "image-part": {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}]},
}


def record(s: str) -> bytes:
    b = s.encode("utf-8")
    return str(len(b)).encode() + b"\n" + b


def read_records(data: bytes, n: int):
    out, pos = [], 0
    for _ in range(n):
        nl = data.index(b"\n", pos)
        size = int(data[pos:nl])
        out.append(data[nl + 1:nl + 1 + size].decode("utf-8"))
        pos = nl + 1 + size
    return out


def build(tree: Path, build_dir: Path, work: Path) -> Path:
    exe = work / "render"
    inc = [f"-I{tree / d}" for d in ("include", "ggml/include", "common", "tools/server", "tools/mtmd", "vendor")]
    stubs = work / "mtmd_stubs.o"
    subprocess.run(["gcc", "-c", str(HERE / "mtmd_stubs.c"), "-o", str(stubs)], check=True)
    lib = build_dir / "bin"
    cmd = ["g++", "-O1", "-std=c++17", *inc, str(HERE / "render.cpp"), str(tree / "tools/server/server-common.cpp"), str(stubs),
           f"-L{lib}", "-lllama-common", *[str(p) for p in build_dir.rglob("libllama-common-base.a")],
           "-lllama", "-lggml", "-lggml-base", f"-Wl,-rpath,{lib}", "-lpthread", "-o", str(exe)]
    subprocess.run(cmd, check=True)
    return exe


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("build", type=Path, help="cmake build directory (bin/libllama.so, common/libllama-common.a)")
    args = ap.parse_args(argv)
    meta = json.loads((DATA / "chat_templates" / "meta.json").read_text(encoding="utf-8"))["templates"]
    env = dict(os.environ, TZ="UTC")
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(args.tree, args.build, Path(tmp))
        names = list(BODIES)
        payload = record("CAPS") + b"".join(record(json.dumps(BODIES[n])) for n in names)
        for template in sorted(meta):
            m = meta[template]
            bos, eos = m.get("bos") or "", m.get("eos") or ""
            r = subprocess.run([str(exe), str(DATA / "chat_templates" / template), bos, eos], input=payload,
                               capture_output=True, env=env, timeout=600)
            if r.returncode != 0:
                raise SystemExit(f"{template}: render driver failed: {r.stderr.decode()[-2000:]}")
            recs = read_records(r.stdout, len(names) + 1)
            out[template] = {"bos_token": bos, "eos_token": eos, "caps": json.loads(recs[0]),
                             "prompts": dict(zip(names, recs[1:]))}
            print(f"{template}: {sum(not p.startswith('ERR ') for p in recs[1:])}/{len(names)} rendered", file=sys.stderr)
    if datetime.now(timezone.utc).strftime("%Y-%m-%d") != date:
        raise SystemExit("the date changed while recording; run again")
    doc = {
        "description": (
            f"llama.cpp {COMMIT[:7]} llama-server prompts: oaicompat_chat_params_parse (tools/server/server-common.cpp) "
            "with the server's defaults (--jinja, prefill_assistant, enable_thinking), compiled from the llama-cpp-python "
            "0.3.36 sdist by scripts/llamacpp_vectors/make_render_vectors.py; `ERR <message>` where the server rejects "
            "the request. `caps`: common_chat_templates_get_caps. bos/eos as the GGUF would give them (meta.json)."
        ),
        "llama_cpp_commit": COMMIT,
        "date_utc": date,
        "bodies": BODIES,
        "templates": out,
    }
    # key order matters (templates print JSON in the order given): never sort
    raw = (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    path = DATA / "llamacpp-render-vectors.json.gz"
    path.write_bytes(buf.getvalue())
    print(f"{path}: {len(buf.getvalue()):,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
