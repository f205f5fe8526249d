"""M204 on application templates: the conversation grown by one turn must re-render the history as cached.

An application template that renders a history-like list (an input of kind per-request,
sub-kind ``history``, whose value is a list: ``chat_history``, ``messages``, a list whose items
have a ``role``) is rendered for turn N (the base scenario) and for turn N+1: every such list
grown by one exchange (the previous question and an answer, shaped like its own items), every
other per-request and volatile input changed (the next question, other retrieved text, a later
clock). The engine holds turn N's prompt. Everything turn N rendered up to the end of its
history is turn N+1's history too, so that much should be reused (the ideal); what follows it is
the new request. A divergence before the end of the history recomputes the whole history on
every turn. The cause names what moved it:

- ``changed-input``: an input that changes every turn (retrieved context, a timestamp, a
  summary) is rendered before the history ends; found by rendering turn N+1 with that input
  kept at its turn-N value, which moves the divergence past it;
- ``loop-last``: the history renders its last item differently (a branch on ``loop.last``);
- ``history-derived``: text computed from the history (its length, its last message, its order)
  is rendered before the history ends;
- ``current-turn``: turn N's history comes back unchanged, but turn N's own request (the question
  with the sources or other material appended to it, the reply's lead-in) is not rendered back in
  turn N+1 as it was sent: the engine holds turn N's whole prompt and the reply it generated, so
  the prefix breaks at the last request on every turn.

The end of turn N's history is the end of the last expression in its render that prints the text
of a history item (a field read, a macro call or a filter over the list). The arithmetic is
M204's (``growth_comparison``): S is the first divergent token, the ideal S the tokens before
that end (the first three causes), or for ``current-turn`` all of turn N's prompt plus the reply
the model generated (the grown history's answer, encoded on its own as generated tokens are), P
the tokens of turn N+1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from promptlint.arithmetic import figures
from promptlint.base import registry
from promptlint.checks.history_causes import chunk_line, loop_last_lines, show as _show
from promptlint.arithmetic.compare import Comparison, shared_prefix

if TYPE_CHECKING:
    from promptlint.checks.interface import Run, Sample
    from promptlint.base.records import Finding
    from promptlint.scenarios import Variable

APPLICATION_CAUSES = ("changed-input", "loop-last", "history-derived", "current-turn")
_PROBE = 24  # characters of a history item's text looked for in a printed expression
_MIN_TEXT = 12  # shorter item texts (roles, names) are not evidence of where the history is


def growth_comparison(cached_ids, after_ids, ideal_shared: int, block_size: int) -> Comparison:
    """M204's arithmetic, chat and application templates alike: what the engine cached for turn N
    against turn N+1's prompt (P), with ``ideal_shared`` the tokens turn N+1 should reuse."""
    return Comparison(shared_prefix(cached_ids, after_ids), len(after_ids), ideal_shared, block_size)


def histories(run: "Run") -> List["Variable"]:
    """The history-like lists of the run's scenario (per-request, sub-kind history, a non-empty list)."""
    return [
        v for v in run.scenario.of_kind("per-request")
        if v.sub_kind == "history" and isinstance(v.value, list) and v.value
    ]


def next_turn(run: "Run", grown: List["Variable"]) -> Tuple[Dict[str, Any], List[str], List[str]]:
    """Turn N+1's overrides: the histories grown by one exchange, every other per-request and
    volatile input changed, except a volatile value M101 reports (one finding per hazard: it
    changes on every request, turns included); the names of the changed and of the kept inputs."""
    from promptlint.checks.volatile_before_shared_prefix import reports
    from promptlint.scenarios.values import grown_history

    names = {v.name for v in grown}
    question = next(
        (v.value for v in run.scenario.of_kind("per-request") if v.sub_kind == "input" and isinstance(v.value, str)), None
    )
    overrides: Dict[str, Any] = {v.name: grown_history(v.value, question) for v in grown}
    changed, kept = [], []
    for v in run.scenario.of_kind("per-request") + run.scenario.of_kind("volatile"):
        if v.name in names:
            continue
        if v.kind == "volatile" and reports(run, v):
            kept.append(v.name)
            continue
        overrides[v.name] = v.variant_value()
        changed.append(v.name)
    return overrides, changed, kept


def plan(run: "Run") -> list:
    """Turn N+1 (prefetched and tokenized with the other variants)."""
    grown = histories(run) if run.conversation is None else []
    return [next_turn(run, grown)[0]] if grown else []


def history_end(sample: "Sample", histories: List[List[Any]]) -> int:
    """Character offset in ``sample``'s render just after the history: the end of the last of the
    expressions that first print each text of its items (a text printed again later, e.g. "the
    last message was ...", belongs to the new request, not to the history)."""
    from promptlint.scenarios.values import value_leaves

    text = sample.text
    printed = [(ch.start, ch.end) for ch in sample.rendered.sourcemap.chunks if ch.kind == "expression" and ch.end > ch.start]
    probes = {t[:_PROBE] for t in value_leaves(histories) if isinstance(t, str) and len(t.strip()) >= _MIN_TEXT}
    return max([next((e for s, e in printed if p in text[s:e]), 0) for p in probes] + [0])


def check_application(run: "Run") -> List["Finding"]:
    from promptlint.render import RenderError

    grown = histories(run)
    if not grown:
        return []
    overrides, changed, kept = next_turn(run, grown)
    try:
        base = run.base()
        after = run.sample(**overrides)
    except RenderError:
        return []  # the template refuses the longer history: not this rule's business
    end = history_end(base, [v.value for v in grown])
    c = shared_prefix(base.text, after.text)
    if end == 0 or c >= len(base.text):
        return []  # turn N+1 extends turn N's whole prompt (the rest is the reply and the new request)
    if c >= end:  # the history came back unchanged; turn N's own request did not
        return _current_turn(run, base, after, grown, overrides, changed, kept, c)
    ideal = sum(1 for s, e in base.encoding.offsets if e <= end)
    cmp = growth_comparison(base.ids, after.ids, ideal, run.profile.block_size)
    if cmp.lost_blocks <= 0:
        return []
    moved, rest = _moved_inputs(run, base, overrides, changed, c, end)
    return [_finding(run, base, after, cmp, grown, overrides, changed, kept, moved, rest, end)]


def _current_turn(run: "Run", base, after, grown, overrides, changed, kept, c: int) -> List["Finding"]:
    """M204 ``current-turn``: the engine holds turn N's whole prompt and the generated reply; turn
    N+1 diverges inside turn N's last request (after its history)."""
    from promptlint.scenarios.values import grown_answer

    generated = list(run.tokenizer.encode(grown_answer()).ids)
    cached = list(base.ids) + generated
    cmp = growth_comparison(cached, after.ids, len(cached), run.profile.block_size)
    if cmp.lost_blocks <= 0:
        return []
    history = ", ".join(f"`{v.name}`" for v in grown)
    token_offset = figures.token_offset(base.encoding.offsets, base.text, cmp.shared)
    token = figures.divergent_token(run.tokenizer, cached, after.ids, cmp.shared, token_offset)
    location = run.locate(c)
    message = (
        f"the conversation does not grow as a prefix (current-turn): turn N+1 renders turn N's request back differently "
        f"from token {cmp.shared} (`{_show(token.base_text)}` → `{_show(token.variant_text)}`), after the history {history}: "
        f"{cmp.lost_blocks:,} of {cmp.ideal_eligible_blocks:,} eligible KV blocks lost on every turn"
    )
    notes = [
        f"cause `current-turn`: turn N sent `{_show(base.text[c:c + 40], 60)}` where turn N+1's history has "
        f"`{_show(after.text[c:c + 40], 60)}` (template line {location.line}: `{_show(_line_text(base, location), 80)}`)",
        f"{run.profile.name}, block {cmp.block_size}: turn N caches {len(cached):,} tokens ({len(base.ids):,} prompt + "
        f"{len(generated):,} generated); turn N+1 ({len(after.ids):,} tokens) reuses {cmp.eligible_blocks:,} blocks, "
        f"{cmp.ideal_eligible_blocks:,} if it extended turn N's prompt and reply",
    ]
    help_text = registry.get("M204").data["help-application"]["current-turn"]
    grew = ", ".join(f"`{v.name}` {len(v.value)} → {len(overrides[v.name])} items" for v in grown)
    inputs = f"; changed: {', '.join(changed)}" if changed else ""
    inputs += f"; kept (M101 reports them): {', '.join(kept)}" if kept else ""
    return [run.finding(
        "M204", message, location, help=help_text, notes=notes, cause="current-turn",
        variant_description=f"the conversation grown by one turn: + the previous question and an answer ({grew}){inputs}",
        **figures.of(token, cmp, figures.evidence(base.text + grown_answer(), after.text, run.add_special_tokens)),
    )]


def _moved_inputs(run: "Run", base: "Sample", overrides: Dict[str, Any], changed: List[str], c: int, end: int) -> Tuple[List[Tuple[str, int]], int]:
    """(input, offset in turn N) of each changed input rendered before the history ends, in order
    (keeping it at its turn-N value moves the divergence past it); and the divergence with all of
    them kept (before the end of the history: the history itself renders differently)."""
    from promptlint.render import RenderError

    kept: Dict[str, Any] = dict(overrides)
    out = []
    while c < end and len(out) < len(changed):
        for name in changed:
            if name in dict(out):
                continue
            trial = dict(kept)
            trial[name] = run.scenario.variables[name].value
            try:
                moved = shared_prefix(base.text, run.sample(**trial).text)
            except RenderError:
                continue
            if moved > c:
                out.append((name, c))
                kept, c = trial, moved
                break
        else:
            break
    return out, c


def _history_itself(run: "Run", base, after, c: int):
    """(cause, what, location of the responsible line or None) when no input explains the divergence."""
    from promptlint.render.sourcemap import Location

    line = chunk_line(base.rendered.sourcemap, c)
    source = base.rendered.sourcemap.sources.get(line[0]) if line else None
    if line and source is not None and line[1] in loop_last_lines(source.text):
        text = source.line_text(line[1])
        col = len(text) - len(text.lstrip()) + 1
        what = _wording()["loop-last"].format(before=_show(base.text[c:c + 12]), after=_show(after.text[c:c + 12]))
        return "loop-last", what, Location(line[0], line[1], col, line[1], len(text.rstrip()) + 1)
    what = _wording()["history-derived"].format(before=_show(base.text[c:c + 24]), after=_show(after.text[c:c + 24]))
    return "history-derived", what, None


def _wording() -> dict:
    """M204's wording for application templates (rules/M204.toml ``[data.wording.application]``)."""
    return registry.get("M204").data["wording"]["application"]


def _line_text(base, at) -> str:
    source = base.rendered.sourcemap.sources.get(at.template)
    return source.line_text(at.line).strip() if source is not None else ""


def _finding(run: "Run", base, after, cmp: Comparison, grown, after_values, changed, kept, moved, rest: int, end: int) -> "Finding":
    c = moved[0][1] if moved else rest
    history = ", ".join(f"`{v.name}`" for v in grown)
    token_offset = figures.token_offset(base.encoding.offsets, base.text, cmp.shared)
    token = figures.divergent_token(run.tokenizer, base.ids, after.ids, cmp.shared, token_offset)
    location = run.locate(c)
    notes = []
    w, rule = _wording(), registry.get("M204").data["wording"]
    if moved:
        cause = "changed-input"
        name = moved[0][0]
        var = run.scenario.variables[name]
        what = w["changed-input"].format(name=name, kind=var.kind + (", " + var.sub_kind if var.sub_kind else ""))
        others = [w["also-changed-item"].format(name=n, line=run.locate(at).line) for n, at in moved[1:]]
        if others:
            what += w["also-changed"].format(others=", ".join(others))
        if rest < end:
            what += w["history-too"].format(line=run.locate(rest).line)
    else:
        name = None
        cause, what, at = _history_itself(run, base, after, c)
        if at is not None:
            location = at
            notes.append(rule["template-line"].format(line=at.line, text=_show(_line_text(base, at), 80)))
    message = rule["message"].format(
        cause=cause, where=rule["where-history"].format(history=history), shared=cmp.shared,
        base_token=_show(token.base_text), variant_token=_show(token.variant_text),
        lost_blocks=cmp.lost_blocks, ideal_eligible_blocks=cmp.ideal_eligible_blocks,
    )
    notes.insert(0, w["cause-note"].format(cause=cause, what=what))
    notes.append(w["eligible"].format(
        engine=run.profile.name, block_size=cmp.block_size, prompt=len(base.ids), ideal_shared=cmp.ideal_shared, end=end,
        after=len(after.ids), eligible_blocks=cmp.eligible_blocks, ideal_eligible_blocks=cmp.ideal_eligible_blocks,
    ))
    help_text = registry.get("M204").data["help-application"][cause].format(variable=name or "")
    proof = figures.evidence(base.text, after.text, run.add_special_tokens)
    grew = ", ".join(w["grew"].format(name=v.name, before=len(v.value), after=len(after_values[v.name])) for v in grown)
    inputs = w["changed"].format(names=", ".join(changed)) if changed else ""
    inputs += w["kept"].format(names=", ".join(kept)) if kept else ""
    return run.finding(
        "M204", message, location, variable=name, help=help_text, notes=notes, cause=cause,
        variant_description=w["variant"].format(grew=grew, inputs=inputs),
        **figures.of(token, cmp, proof),
    )


__all__ = ["APPLICATION_CAUSES", "check_application", "growth_comparison", "histories", "history_end", "next_turn", "plan"]
