"""M204 history-not-prefix-stable: a conversation that grows by one turn must extend the cached tokens.

Turn N is the scenario's request (ending with a user or tool message, with the generation
prompt). The engine caches turn N's prompt tokens followed by the tokens the model generated.
Turn N+1 is the same conversation plus the assistant's reply and one more user message,
rendered again from scratch. Only the common prefix of the two is reused; a template that moves
a block (Mistral Nemo's ``[AVAILABLE_TOOLS]`` and system message sit before the *last* user
message), drops the generation prompt's own text (``<think>\\n``), or strips earlier reasoning
from history (Qwen3, QwQ, DeepSeek-R1, gpt-oss) loses everything after the divergence on
every turn.

What "plus the assistant's reply" means here: the generated tokens, not the reply re-rendered.
The model's output is what the template renders for the reply when it is the final message of
the conversation (``add_generation_prompt=False``), i.e. the text after turn N's prompt, up to
and including the first special token after the reply's content (the stop token). Those tokens
are encoded on their own (prompt ids + generated ids, as the engine holds them) and the stop
token is dropped: its KV is never computed, so it is never cached. When the template's render
of the final reply does not even start with turn N's prompt, no generated tokens are assumed
and the divergence lies inside turn N's prompt.

A request that offers tools also grows the way an agent loop does: the model answers with a
tool call (and its reasoning, in the form the template reads) and turn N+1 is the same
conversation plus that call and the tool's result. A template that renders a past tool call
otherwise than the model emitted it (its id or arguments left out, its reasoning dropped once
a tool result follows) loses the call's tokens on every step of the loop. Both growths are
measured; the worse is reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from promptlint.arithmetic import figures
from promptlint.base import registry
from promptlint.checks.history_causes import BY_DESIGN, Cause, chunk_line, classify, loop_last_lines, nodes_of
from promptlint.checks.history_causes import show as _show
from promptlint.checks.history_growth import check_application, growth_comparison
from promptlint.checks.history_growth import plan  # noqa: F401 - application templates' turn N+1, prefetched
from promptlint.arithmetic.compare import Comparison
from promptlint.render.sourcemap import Location

if TYPE_CHECKING:
    from promptlint.checks.interface import Conversation, Run, Sample
    from promptlint.base.records import Finding

CODES = registry.implements(__name__, "M204")

NEXT_USER = "Thanks! And if it has already left the warehouse, can the courier still redirect it?"
REPLY = (
    "Order 58213 is still in the warehouse, so I have redirected it to 12 Harbour Road, Portsmouth. "
    "You will receive a confirmation e-mail with the updated delivery estimate within the hour."
)
REASONING = (
    "The customer gave order 58213 and a new address. Policy 4.2 allows redirecting an order until it leaves "
    "the warehouse. The order status shows it is still being packed, so the address can be changed. I should "
    "confirm the change, repeat the new address so the customer can check it, and mention the confirmation "
    "e-mail. No clarifying question is needed because the order number and the address are both complete."
)
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
# the agent-loop growth: the model calls the request's first tool, the tool answers
TOOL_REASONING = "The customer asks about the weather; the get_weather tool gives the forecast, so I call it first."
TOOL_CALL_ID = "call7f3c9"  # 9 characters: Mistral templates require it
TOOL_RESULT = '{"temperature": 17, "condition": "light rain", "forecast": [{"hour": 15, "rain_mm": 1.2}]}'


def default_reply(template_text: str) -> Dict[str, Any]:
    """The built-in reply, with reasoning in the form the template reads (a field, or in-band <think>)."""
    if reasoning_field(template_text):
        return {"role": "assistant", "content": REPLY, "reasoning_content": REASONING}
    if _splits_think(template_text) or _switches_think_off(template_text):
        return {"role": "assistant", "content": f"<think>\n{REASONING}\n</think>\n\n{REPLY}"}
    return {"role": "assistant", "content": REPLY}


@lru_cache(maxsize=32)  # pure in the template text; asked once per scenario and turn
def reasoning_field(template_text: str) -> Optional[str]:
    """The reasoning field the template reads from a message (`message.reasoning_content`,
    `message['reasoning']`): an attribute or item access, not the word in a name such as
    `reasoning_mode`."""
    from jinja2 import nodes

    for node in nodes_of(template_text):
        if not isinstance(node, (nodes.Getattr, nodes.Getitem)):
            continue
        key = node.attr if isinstance(node, nodes.Getattr) else (node.arg.value if isinstance(node.arg, nodes.Const) else None)
        if key in REASONING_FIELDS:
            return key
    return None


@lru_cache(maxsize=32)  # pure in the template text; asked once per scenario and turn
def _splits_think(template_text: str) -> bool:
    """The template handles in-band reasoning: it tests for or splits on the `</think>` string itself
    (not a system prompt that happens to mention the tags)."""
    from jinja2 import nodes

    consts = [n for n in nodes_of(template_text) if isinstance(n, nodes.Const)]
    return any(isinstance(c.value, str) and c.value.strip() == "</think>" for c in consts)


@lru_cache(maxsize=32)  # pure in the template text; asked once per scenario and turn
def _switches_think_off(template_text: str) -> bool:
    """The template renders an empty `<think></think>` block of its own (SmolLM3's `/no_think`
    mode): the model's format has in-band reasoning, which it emits in the content when thinking
    is on; the client may send it back or drop it (both are modelled)."""
    import re

    from jinja2 import nodes

    empty = re.compile(r"<think>\s*</think>")
    consts = [n for n in nodes_of(template_text) if isinstance(n, nodes.Const)]
    return any(isinstance(c.value, str) and len(c.value.strip()) <= 40 and empty.search(c.value) for c in consts)


@dataclass
class Turns:
    """Turn N (the scenario's request) and turn N+1 (grown by the reply and one more user message)."""

    request: Any  # ChatRequest of turn N
    now: Any
    reply: Dict[str, Any]
    grown_messages: int
    next_user: str
    base: "Sample"  # turn N's prompt
    replied: "Sample"  # turn N's conversation ending with the reply (add_generation_prompt=False)
    after: "Sample"  # turn N+1's prompt


@dataclass
class Cached:
    """What the engine holds after turn N: the prompt's tokens and the generated ones."""

    ids: List[int]
    generated_text: str
    generated_offsets: List[int]  # of each generated token, within generated_text
    generated: int  # generated tokens (the stop token dropped)
    derived: bool  # the reply's tokens come from the template's render of it (else assumed)
    separator: int = 0  # characters of the template's own separator before the reply, not generated (SentencePiece)


def check(run: "Run") -> List["Finding"]:
    conv = run.conversation
    if not run.enabled("M204"):
        return []
    if conv is None:
        return check_application(run)  # an application template's history-like list, grown by one exchange
    worst = None
    # the client sends the reasoning back, or drops it; the reply is text, or a tool call answered by
    # the tool (a request with tools): the worse is reported
    for tool_call, sent_back in ((False, True), (False, False), (True, True), (True, False)):
        turns = grow(run, conv, sent_back, tool_call)
        if turns is None:
            continue
        cached = cached_after_turn(run, conv, turns)
        if not sent_back and (_reasoning(turns.reply) or "")[:40] not in cached.generated_text:
            continue  # the template's own render of the reply has no reasoning: the model emits none to drop
        cmp = growth_comparison(cached.ids, turns.after.ids, len(cached.ids), run.profile.block_size)
        if cmp.shared >= len(cached.ids):
            continue
        if cmp.lost_blocks > 0 and (worst is None or cmp.lost_blocks > worst[2].lost_blocks):
            worst = (turns, cached, cmp)
    return [_finding(run, *worst)] if worst else []


def next_turn_clock(run: "Run", now):
    """The clock of turn N+1: seconds later when the template reads it to the second (a daily date
    stays: turns are seconds apart), unless M101 already reports the clock (one finding per hazard)."""
    from promptlint.checks.volatile_before_shared_prefix import reports

    clock = run.scenario.variables.get("strftime_now")  # the chat run's clock variable (chat/run.py)
    if clock is None or clock.sub_kind != "timestamp" or now is None or reports(run, clock):
        return now
    return clock.variant_value()


def grow(run: "Run", conv: "Conversation", sent_back: bool = True, tool_call: bool = False) -> Optional[Turns]:
    """Render turn N, turn N with the reply, and turn N+1; None when the rule does not apply.

    The model emits the built-in reply's reasoning either way; ``sent_back=False`` is a client that
    sends the next turn without it (None when there is no reasoning to drop, or the samples file
    gives its own reply). ``tool_call``: the reply calls the request's first tool and turn N+1 adds
    the call and the tool's result (None for a request without tools or one not ending with a user)."""
    from promptlint.render import RenderError

    request, now = conv.request_with({})
    if not request.messages or request.continue_final_message:
        return None
    add_gen = request.add_generation_prompt
    if add_gen is None:
        add_gen = conv.frontend in ("vllm", "llamacpp")  # their servers default to true
    last = request.messages[-1]
    if not add_gen or not isinstance(last, dict) or last.get("role") not in ("user", "tool"):
        return None
    scenario = conv.chat_scenario
    given = getattr(scenario, "reply", None)
    if tool_call:
        reply = tool_call_reply(conv.template_text, request.tools, last.get("role"))
        if reply is None:
            return None
    else:
        reply = dict(given or default_reply(conv.template_text))
    reply.setdefault("role", "assistant")
    history = reply
    if not sent_back:
        if (given and not tool_call) or _reasoning(reply) is None:
            return None
        history = _without_reasoning(reply) if tool_call else {"role": "assistant", "content": REPLY}
    if tool_call:
        name = reply["tool_calls"][0]["function"]["name"]
        next_user = {"role": "tool", "tool_call_id": TOOL_CALL_ID, "name": name, "content": TOOL_RESULT}
    else:
        next_user = {"role": "user", "content": getattr(scenario, "next_user", None) or NEXT_USER}

    final = request.copy()
    final.messages.append(dict(reply))
    final.add_generation_prompt = False
    grown = request.copy()
    grown.messages += [dict(history), next_user]
    grown.add_generation_prompt = True
    try:
        base = run.base()
        replied, _ = conv.render_request(final, now)
        after, _ = conv.render_request(grown, next_turn_clock(run, now))
    except RenderError:
        return None  # the template refuses the longer conversation: not this rule's business
    return Turns(request, now, reply, len(grown.messages), next_user["content"], base, replied, after)


def tool_call_reply(template_text: str, tools, last_role: Optional[str]) -> Optional[Dict[str, Any]]:
    """The model's call of the request's first tool, with reasoning in the form the template reads
    (a field, or in-band `<think>`); None without tools or after a tool result (one call per loop step)."""
    name = _tool_name(tools[0]) if tools else None
    if not name or last_role != "user":
        return None
    fn = tools[0].get("function") if isinstance(tools[0].get("function"), dict) else tools[0]
    call = {"id": TOOL_CALL_ID, "type": "function", "function": {"name": name, "arguments": _arguments(fn.get("parameters"))}}
    reply: Dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": [call]}
    if reasoning_field(template_text):
        reply["reasoning_content"] = TOOL_REASONING
    elif _splits_think(template_text) or _switches_think_off(template_text):
        reply["content"] = f"<think>\n{TOOL_REASONING}\n</think>\n\n"
    return reply


def _arguments(schema: Any) -> str:
    """JSON arguments for a tool's required parameters (a string, as the OpenAI API sends them)."""
    import json

    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return "{}"
    samples = {"string": "Paris", "integer": 3, "number": 1.5, "boolean": True, "array": [], "object": {}}
    args = {}
    for key in (schema.get("required") or list(props)[:1]):
        spec = props.get(key) if isinstance(props.get(key), dict) else {}
        if spec.get("type") == "object":
            args[key] = json.loads(_arguments(spec))
        else:
            args[key] = spec["enum"][0] if spec.get("enum") else samples.get(spec.get("type"), "Paris")
    return json.dumps(args)


def _without_reasoning(reply: Dict[str, Any]) -> Dict[str, Any]:
    out = {k: v for k, v in reply.items() if k not in REASONING_FIELDS}
    if isinstance(out.get("content"), str) and "</think>" in out["content"]:
        out["content"] = out["content"].split("</think>")[-1].lstrip("\n")
    return out


def cached_after_turn(run: "Run", conv: "Conversation", turns: Turns) -> Cached:
    """Turn N's prompt tokens followed by the tokens the model generated (the stop token dropped)."""
    tok = run.tokenizer
    prompt_text = turns.base.text
    separator = 0
    if turns.replied.text.startswith(prompt_text):
        suffix = turns.replied.text[len(prompt_text) :]
        separator = _separator(suffix, _content(turns.reply), tok)
        if turns.reply.get("tool_calls"):
            generated_text, stop = _generated_call(suffix, tok)
        else:
            generated_text, stop = _generated(suffix[separator:], _content(turns.reply), tok)
        derived = True
    else:  # the template re-renders turn N's prompt itself: assume the reply's text and the stop token
        eos = conv.eos_token
        reply = turns.reply
        raw = reply.get("content") if isinstance(reply.get("content"), str) else _content(reply)
        generated_text, stop, derived = raw + eos, bool(eos), False
    gen_ids, gen_offsets = _generated_ids(run, tok, turns.base, generated_text)
    if stop and gen_ids:
        gen_ids, gen_offsets = gen_ids[:-1], gen_offsets[:-1]
    return Cached(list(turns.base.ids) + gen_ids, generated_text, gen_offsets, len(gen_ids), derived, separator)


def _separator(suffix: str, content: str, tok) -> int:
    """Characters of the template's own whitespace before the reply that the model does not generate.

    A SentencePiece model marks a word start with `▁` inside the token: it emits `▁Order`, not a
    space and then `Order`. When the template writes `" " + content` after its prompt (Mistral's
    `[/INST] `) and that space tokenizes on its own, the space is the template's, not the model's."""
    at = suffix.find(content) if content else -1
    if at <= 0 or suffix[:at].strip():
        return 0
    piece = getattr(tok, "id_to_token", None)
    alone = tok.encode(content, add_special_tokens=False).ids
    spaced = tok.encode(suffix[:at] + content, add_special_tokens=False).ids
    if piece and alone and (piece(alone[0]) or "").startswith("\u2581") and len(spaced) > len(alone):
        return at
    return 0


def _finding(run: "Run", turns: Turns, cached: Cached, cmp: Comparison) -> "Finding":
    base, after = turns.base, turns.after
    shared = cmp.shared
    prompt_text = base.text
    in_prompt = shared < len(base.ids)
    if in_prompt:
        offset = base.encoding.offsets[shared][0]
        location = run.locate(offset)
    else:
        offset = len(prompt_text) + cached.generated_offsets[shared - len(base.ids)]
        location = (turns.replied.rendered.sourcemap.locate(offset) if cached.derived else None) or run.locate(
            max(len(prompt_text) - 1, 0)
        )
    token = figures.divergent_token(run.tokenizer, cached.ids, after.ids, shared, offset)
    reasoning = _reasoning(turns.reply)
    cause = _cause(run, turns, cached, reasoning)
    w = wording()
    cause_location, cause_notes, help_text = _explain(run, turns, cached, cause, cmp)
    location = cause_location or location
    notes = cause_notes + _generation_prompt_note(run, turns, offset, in_prompt)
    message = w["message"].format(
        cause=cause.name, where=w["where-prompt"] if in_prompt else w["where-reply"], shared=shared,
        base_token=_show(token.base_text), variant_token=_show(token.variant_text),
        lost_blocks=cmp.lost_blocks, ideal_eligible_blocks=cmp.ideal_eligible_blocks,
    )
    notes.append(w["eligible"].format(
        engine=run.profile.name, block_size=cmp.block_size, cached=len(cached.ids), prompt=len(base.ids),
        generated=cached.generated, assumed="" if cached.derived else w["assumed"], after=len(after.ids),
        eligible_blocks=cmp.eligible_blocks, ideal_eligible_blocks=cmp.ideal_eligible_blocks,
    ))
    proof = figures.evidence(
        prompt_text + cached.generated_text, after.text, run.add_special_tokens,
        prompt_tokens=len(base.ids), generated_tokens=cached.generated,
    )
    return run.finding(
        "M204", message, location, help=help_text, notes=notes, cause=cause.name,
        severity="info" if cause.name in BY_DESIGN else None,
        variant_description=w["variant-tool-call" if turns.reply.get("tool_calls") else "variant"].format(
                                                reasoning=w["with-reasoning"] if reasoning else "",
                                                before=len(turns.request.messages), after=turns.grown_messages),
        **figures.of(token, cmp, proof),
    )


def _cause(run: "Run", turns: Turns, cached: Cached, reasoning: Optional[str]) -> Cause:
    conv = run.conversation
    prompt_text = turns.base.text
    bare = turns.request.copy()
    bare.add_generation_prompt = False
    generation_prompt = ""
    try:
        without, _ = conv.render_request(bare, turns.now)
        if prompt_text.startswith(without.text):
            generation_prompt = prompt_text[len(without.text) :]
    except Exception:  # RenderError: a template that requires the generation prompt
        pass
    messages = turns.request.messages
    system = next((m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "system" and isinstance(m.get("content"), str)), "")
    tool_names = [n for n in (_tool_name(t) for t in (turns.request.tools or [])) if n]
    specials = sorted(run.tokenizer.added_tokens(special_only=True), key=len, reverse=True)
    lines = loop_last_lines(conv.template_text)
    maps = {"after": turns.after.rendered.sourcemap, "cached": turns.replied.rendered.sourcemap if cached.derived else turns.base.rendered.sourcemap}

    def under_loop_last(side: str, offset: int) -> bool:
        at = _chunk(maps[side], side, offset, cached, prompt_text)
        return at is not None and at[1] in lines

    return classify(
        prompt_text + cached.generated_text, turns.after.text, len(prompt_text), _content(turns.reply), reasoning,
        turns.next_user, generation_prompt, specials, system, tool_names, under_loop_last,
    )


def _chunk(sourcemap, side: str, offset: int, cached: Cached, prompt_text: str):
    """(template, line) of a character of the cached text (prompt + generated) or of turn N+1."""
    if side == "cached" and offset >= len(prompt_text):
        if not cached.derived:
            return None
        offset += cached.separator
    return chunk_line(sourcemap, offset)


def wording() -> dict:
    """M204's wording: the rule file's ``[data.wording]`` (rules/M204.toml), filled in with str.format."""
    return registry.get("M204").data["wording"]


def _what(w: dict, cause: Cause) -> str:
    """What ``cause`` is, in the rule file's words (``[data.wording.cause]``)."""
    side = w["cause"]["whitespace-after" if cause.side == "after" else "whitespace-cached"]
    return w["cause"][cause.name].format(detail=_show(cause.detail), side=side, offset=cause.offset,
                                         moved_to=cause.moved_to, cached=cause.texts[0], after=cause.texts[1])


def _explain(run: "Run", turns: Turns, cached: Cached, cause: Cause, cmp: Comparison):
    """(location of the responsible template line or None, notes, help) for ``cause``."""
    w = wording()
    recomputed = len(cached.ids) - cmp.shared
    cost = w["cost"].format(recomputed=recomputed, lost_blocks=cmp.lost_blocks)
    help_text = registry.get("M204").data["help"][cause.name]
    if cause.name in BY_DESIGN:
        return None, [w["by-design-note"].format(cause=cause.name, what=_what(w, cause)), cost], help_text
    maps = {"after": turns.after.rendered.sourcemap, "cached": turns.replied.rendered.sourcemap if cached.derived else turns.base.rendered.sourcemap}
    at = _chunk(maps[cause.side], cause.side, cause.offset, cached, turns.base.text)
    loc = None
    notes = []
    notes.append(w["template-bug-note"].format(cause=cause.name, what=_what(w, cause)))
    if at is not None:
        template, line = at
        src = maps[cause.side].sources.get(template)
        line_text = src.line_text(line) if src is not None else ""
        if line_text.strip():
            col = len(line_text) - len(line_text.lstrip()) + 1
            loc = Location(template, line, col, line, len(line_text.rstrip()) + 1)
            notes.append(w["template-line"].format(line=line, text=_show(line_text.strip(), 80)))
    return loc, notes, help_text


def _tool_name(tool: Any) -> Optional[str]:
    if isinstance(tool, dict):
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = fn.get("name")
        return name if isinstance(name, str) else None
    return None


def _generated_ids(run: "Run", tok, base, generated_text: str) -> Tuple[List[int], List[int]]:
    """The generated tokens and their character offsets within ``generated_text``.

    In context (prompt + generated encoded together) when that leaves the prompt's tokens unchanged:
    a model generates the in-context tokenization (no SentencePiece prefix space at the start);
    else on their own (the prompt's last token and the reply would have merged)."""
    if not generated_text:
        return [], []
    n = len(base.ids)
    joint = run.encode_variants([base.text + generated_text])[0]  # the base render, extended: a window at its end
    if list(joint.ids[:n]) == list(base.ids):
        start = len(base.text)
        return list(joint.ids[n:]), [max(o[0] - start, 0) for o in joint.offsets[n:]]
    alone = tok.encode(generated_text, add_special_tokens=False)
    return list(alone.ids), [o[0] for o in alone.offsets]


def _content(reply: Dict[str, Any]) -> str:
    content = reply.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    content = content if isinstance(content, str) else ""
    return content.split("</think>")[-1].strip()


def _reasoning(reply: Dict[str, Any]) -> Optional[str]:
    for k in REASONING_FIELDS:
        if isinstance(reply.get(k), str) and reply[k]:
            return reply[k]
    content = reply.get("content")
    if isinstance(content, str) and "</think>" in content:
        return content.split("</think>")[0].replace("<think>", "").strip()
    return None


def _generated(suffix: str, content: str, tok) -> Tuple[str, bool]:
    """The model's output within the template's render of the final reply: up to the stop token."""
    end = suffix.rfind(content) + len(content) if content and content in suffix else -1
    if end < 0:
        return suffix.rstrip(), False
    rest = suffix[end:]
    specials = sorted(tok.added_tokens(special_only=True), key=len, reverse=True)
    for s in specials:
        if s and rest.startswith(s):
            return suffix[: end + len(s)], True
    return suffix[:end], False


def _generated_call(suffix: str, tok) -> Tuple[str, bool]:
    """The model's output for a tool call: the render of the final call up to its last special token
    (the stop token: `<|im_end|>`, `<|eot_id|>`, `</s>`); the whole render when it has none."""
    specials = [s for s in tok.added_tokens(special_only=True) if s]
    end = max((suffix.rfind(s) + len(s) for s in specials if s in suffix), default=-1)
    return (suffix[:end], True) if end > 0 else (suffix.rstrip(), False)


def _generation_prompt_note(run: "Run", turns: Turns, offset: int, in_prompt: bool) -> List[str]:
    """A divergence in turn N's generation prompt: the note saying history does not render it again.
    (A block moving down the prompt is the cause's own note: `moved-block`, `format-by-design`.)"""
    from promptlint.render import RenderError

    prompt_text = turns.base.text
    if not in_prompt:
        return []
    bare = turns.request.copy()
    bare.add_generation_prompt = False
    try:
        without, _ = run.conversation.render_request(bare, turns.now)
    except RenderError:
        return []
    if prompt_text.startswith(without.text) and offset >= len(without.text) > 0:
        return [wording()["generation-prompt"].format(prompt=_show(prompt_text[len(without.text):]))]
    return []
