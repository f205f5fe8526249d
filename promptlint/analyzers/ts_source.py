"""TypeScript and JavaScript prompt-building code: the Python analyzer's request model and rules,
another front end (promptlint.tssource).

Parse (tree-sitter, grammars loaded on first use) -> module index and flow, across the linted
modules a file imports -> each SDK request as a ``pysource.layout.Layout`` -> the Python
analyzer's request rules and token measurements. A file that does not parse is one E009 finding
at tree-sitter's first error. Minified bundles (``*.min.js``) and build output (``dist/``,
``build/``, ``.next/``; ``node_modules/`` is never walked) are not taken by a directory walk.
"""

from __future__ import annotations

from pathlib import Path
from typing import List

from promptlint.base import registry
from promptlint.analyzers.files import Files
from promptlint.analysis.kernel import Context, file_error
from promptlint.base.records import Finding

CODES = registry.implements(__name__, "E009")
# A directory walk lints a script only when it names an LLM SDK or builds a chat message.
PROMPT_CODE_MARKERS = (
    b"openai", b"anthropic", b"@ai-sdk", b"from \"ai\"", b"from 'ai'", b"require(\"ai\")", b"langchain",
    b"generateText", b"streamText", b"generateObject", b"bedrock", b"genai", b"generative-ai", b"role:",
    b"\"role\"", b"'role'", b"cache_control", b"cacheControl", b"cachePoint", b"systemInstruction",
    # a call of a wrapper another module defines (`callLLM({ system, user })`) names the request's fields
    b"system:", b"systemPrompt", b"instructions:", b"messages:",
    # ... or hands a prompt to a base class, a factory or an agent another module defines
    # (`super(SYSTEM_PROMPT)`, `createAgent({ prompt })`, `new SupportAgent(instructions)`)
    b"rompt", b"PROMPT", b"instructions",
)
FILES = Files(
    suffixes=(".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"),
    markers=PROMPT_CODE_MARKERS,
    sniff_bytes=1_000_000,
    never_patterns=("*.min.js", "*.min.mjs", "*.min.cjs", "*.bundle.js", "*.d.ts", "*.d.mts", "*.d.cts"),
    never_dirs=("dist", ".next", ".nuxt", ".output", ".svelte-kit", "node_modules", "bower_components"),
)


def handles(path: Path) -> bool:
    return FILES.matches_name(path)


def scan(path: Path, source: bytes, display: str, ctx: Context):
    """(RequestScan, None) or (None, E009 finding)."""
    from promptlint.scenarios.names import name_patterns
    from promptlint.tssource import grammar
    from promptlint.tssource.flow import Flow
    from promptlint.tssource.project import Project, parsed
    from promptlint.tssource.requests import RequestScan

    tree, index = parsed(path, source, keep=False)
    problem = grammar.first_error(tree)
    if problem is not None:
        line = source.split(b"\n")[problem.line - 1] if problem.line - 1 < source.count(b"\n") + 1 else b""
        column = len(line[: problem.column].decode("utf-8", "replace")) + 1
        return None, file_error(display, "E009", f"{grammar.dialect(path).capitalize()} syntax error: {problem.what}; "
                                "promptlint cannot analyse this file (fix it, or exclude the file)", problem.line,
                                column, end_column=column)
    kind_of = name_patterns().kind_of
    project = Project(kind_of, ctx.depend, (ctx.settings.root, path.parent), display=ctx.display)
    flow = Flow(display, index, kind_of, project, str(path), source)
    project.add(path, flow)
    found = RequestScan(flow)
    found.run()
    return found, None


def lint_file(path: Path, text: str, ctx: Context) -> List[Finding]:
    from promptlint.analyzers import python_source as py

    display = ctx.display(path)
    text = text[1:] if text.startswith("\ufeff") else text
    found, error = scan(path, text.encode("utf-8"), display, ctx)
    if error is not None:
        return [error]
    return py.findings_of(list(found.candidates.values()), ctx, display, text.splitlines())


def measure(path: Path, text: str, ctx: Context) -> list:
    """Each request the module sends, its eligible blocks per request (``check --baseline``)."""
    from promptlint.analysis import per_request as rows
    from promptlint.analyzers import python_source as py
    from promptlint.arithmetic.compare import engine_profile
    from promptlint.pysource import breakpoints, per_request

    display = ctx.display(path)
    profile = engine_profile(ctx.settings.engine, ctx.settings.block_size)
    text = text[1:] if text.startswith("\ufeff") else text
    found, error = scan(path, text.encode("utf-8"), display, ctx)
    if error is not None:
        return [rows.failed(display, error.code, error.message, profile.block_size)]
    if not found.sent:
        return []
    encode = py._encoder(ctx.tokenizer(), {})
    table = breakpoints.tables(ctx)
    return [per_request.measure(s, name, display, encode, profile, table)
            for s, name in zip(found.sent, _names(found))]


def _names(found) -> List[str]:
    """A request's identity in the file: what sends it and the function it is in (``#2`` for the
    second in the same function), not its line."""
    from promptlint.tssource.index import text as node_text

    out, seen = [], {}
    for s in found.sent:
        node = found.index.scope_node.get(s.scope)
        where = "module level"
        if node is not None:
            n = node.child_by_field_name("name")
            if n is None and node.parent is not None and node.parent.type == "variable_declarator":
                n = node.parent.child_by_field_name("name")
            where = f"{node_text(n)}()" if n is not None else "a function"
        base = f"{s.callee} in {where}" if node is not None else f"{s.callee} at module level"
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base} #{seen[base]}")
    return out
