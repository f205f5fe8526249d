"""Scenario inference: every input a template reads, with a kind (from its name, unless the
template only tests it: then it is a switch, static) and a value of the shape the template uses
it in (from its AST)."""

from __future__ import annotations

from typing import Iterable, List, Optional

from promptlint.scenarios.model import Scenario, Variable, set_field
from promptlint.scenarios.names import NamePatterns


class TemplateSet(list):
    """A template's AST followed by those it includes/imports/extends; ``names[i]`` names ``self[i]``."""

    def __init__(self, asts: Iterable, names: Iterable[str]):
        super().__init__(asts)
        self.names: List[str] = list(names)


MAIN = "<template>"  # the name the analysed template's AST goes by when the caller does not say


def template_asts(env, ast, limit: int = 50, name: str = MAIN) -> TemplateSet:
    """The template's AST plus those of the templates it includes/imports/extends (by constant name)."""
    from jinja2 import meta

    out = TemplateSet([ast], [name])
    seen, queue = {name}, [ast]
    while queue and len(out) < limit:
        node = queue.pop()
        for ref in meta.find_referenced_templates(node):
            if ref is None or ref in seen:
                continue
            seen.add(ref)
            try:
                source, _, _ = env.loader.get_source(env, ref)
                sub = env.parse(source)
            except Exception:  # a missing include is reported when rendering
                continue
            out.append(sub)
            out.names.append(ref)
            queue.append(sub)
    return out


def infer_scenario(asts, known: Iterable[str], patterns: NamePatterns, declared: Optional[Scenario] = None) -> Scenario:
    """Fill in every undeclared variable of the template (and its includes) not in ``declared``."""
    from jinja2 import meta

    from promptlint.scenarios.shapes import walk

    if not isinstance(asts, (list, tuple)):
        asts = [asts]
    names = list(getattr(asts, "names", [])) or [MAIN] + [f"<referenced {i}>" for i in range(1, len(asts))]
    templates = dict(zip(names, asts))
    known = set(known)
    shapes, walked = walk(templates, names[0], known)
    for tname, ast in templates.items():  # templates the walk did not reach: their names, as text
        if tname not in walked:
            for n in sorted(meta.find_undeclared_variables(ast)):
                if n not in shapes and n not in known:
                    from promptlint.scenarios.shapes import Shape

                    shapes[n] = Shape()
    scenario = declared or Scenario()
    for name, shape in shapes.items():
        if name in scenario.variables or name in known:
            continue
        var = scenario.variables[name] = infer_variable(name, shape, patterns)
        if (var.kind, var.sub_kind) in (("static", None), ("per-request", "input")) and not patterns.is_static_name(name):
            for field in volatile_fields(name, shape, patterns):
                if field.name not in scenario.variables:
                    scenario.variables[field.name] = field
                    var.value = set_field(var.value, field.path[1:], field.value)
    return scenario


def volatile_fields(root: str, shape, patterns: NamePatterns, depth: int = 0) -> List[Variable]:
    """The fields of a static record that change per request (`user.last_login_at`, `session.id`,
    `ctx.trace_id`), each a volatile variable named by its path, classified by the same words as
    an input: a field of several words by its own name, a one-word field with its record's last
    word (`session.id` is `session_id`, volatile; `user.id` is `user_id`, static). Only records
    read field by field are searched, static ones and the request's own record (`request.received_at`:
    the ideal variant changes the request's content and keeps such fields, so they are charged like any
    volatile input); the items of a list, retrieved text and history are content (a document's
    `updated_at` changes when the document does)."""
    from promptlint.scenarios.names import name_words
    from promptlint.scenarios.shapes import MAPPING
    from promptlint.scenarios.values import form_of, shaped_value

    r = shape.find()
    if depth > 4 or form_of(r) != MAPPING:
        return []
    out: List[Variable] = []
    parent = name_words(root.rsplit(".", 1)[-1])
    for field, sub_shape in r.fields.items():
        words = name_words(field)
        if field.startswith("#") or "." in field or not words:
            continue
        said = field if len(words) > 1 or not parent else f"{parent[-1]}_{field}"
        c = patterns.classify(said)
        path = f"{root}.{field}"
        if c.kind == "volatile":
            value, variant = shaped_value(path, sub_shape, "volatile", c.sub_kind)
            why = f"volatile {c.sub_kind}: a field of `{root}`; {c.why}" + (f" (read as `{said}`)" if said != field else "")
            out.append(Variable(path, value, "volatile", c.sub_kind, variant, why=(why,)))
        elif not patterns.is_static_name(field):
            out += volatile_fields(path, sub_shape, patterns, depth + 1)
    return out


def infer_variable(name: str, shape, patterns: NamePatterns) -> Variable:
    from promptlint.scenarios.shapes import LIST, tested_only
    from promptlint.scenarios.values import describe, form_of, shaped_value

    c = patterns.classify(name)
    kind, sub, why = c.kind, c.sub_kind, c.why
    switch = tested_only(shape) if kind != "static" else None
    if switch is not None:  # how the template uses it beats what its words say
        kind, sub, why = "static", None, f"static: only tested as a condition ({switch}), so it switches text on or off; its words said {c.kind} {c.sub_kind}"
    if kind == "static" and not patterns.is_static_name(name) and form_of(shape) == LIST:
        item = shape.find().element_if_any()
        hint = patterns.history_field(item.find().fields) if item is not None else None
        if hint is not None:
            kind, sub, why = "per-request", "history", f"its items have a `{hint}` field, as a conversation's turns do"
    value, variant = shaped_value(name, shape, kind, sub)
    if switch is not None:
        pass
    elif kind == "static" and patterns.flag_word(name) is not None:
        why = f"static: {c.why} (configuration)"
    elif kind == "static":
        why = "static: no word of the name says time, id, input, retrieved text or history"
        if patterns.is_static_name(name):
            why = "static: the name's words mark configuration or authored text"
    else:
        why = f"{kind} {sub}: {why}"
    return Variable(name, value, kind, sub, variant, why=(why, f"shape: {describe(shape)}"))


def template_scenario(loaded, text: str, samples=None, limits=None) -> Scenario:
    """The scenario an application template is checked with: what its samples file (``samples``,
    a path or None) declares, every other input inferred. Raises SamplesError for a bad file.
    ``limits``: the run's render limits (the configured render-timeout), for the one render a prompt
    file's roles need."""
    from promptlint.scenarios.files import load_samples, scenario_from_samples
    from promptlint.scenarios.names import name_patterns

    roots = getattr(loaded.env.loader, "roots", None)  # the sidecar may lead where includes may
    declared = scenario_from_samples(load_samples(samples, roots), samples) if samples is not None else None
    prompt_file = getattr(loaded, "prompt_file", None)
    if prompt_file is not None:
        text = prompt_file.template  # the front matter is not template text
    asts = template_asts(loaded.env, loaded.env.parse(text), name=loaded.name)
    scenario = infer_scenario(asts, loaded.env.globals, name_patterns(), declared)
    if prompt_file is not None:
        given_samples(scenario, prompt_file)
        if prompt_file.style is not None:
            user_turn_inputs(loaded, scenario, limits)
    from promptlint.scenarios.includes import resolve

    scenario.unresolved_includes = resolve(scenario, asts, loaded.path, dict(scenario.include_choices))
    # file names the samples file (or the template) declares for an include input: an error may name them
    loaded.declare_names(o for options in scenario.include_choices.values() for o in options)
    add_volatile_stubs(scenario, loaded.env)
    return scenario


def given_samples(scenario: Scenario, prompt_file) -> None:
    """A prompt file's own sample values (Prompty's `sample:`) are the inputs' values; their kinds
    stay inferred (a sample question is still per request). A samples file's declaration wins."""
    for name, value in prompt_file.samples.items():
        var = scenario.variables.get(name)
        if var is None or var.declared or value is None:
            continue
        var.value = value
        var.why = tuple(var.why) + (f"value from the front matter's `{prompt_file.sample_keys.get(name, name)}`",)


def user_turn_inputs(loaded, scenario: Scenario, limits=None) -> None:
    """Kind by role: in a prompt file split into messages, a text input printed only inside user
    turns is what the user sends on each request (per-request input), whatever its words say,
    unless a samples file declares it. One render of the base scenario shows where each prints."""
    import re

    from promptlint.render import Limits, RenderError, render

    try:
        rendered = render(loaded, scenario.values(), limits or Limits())
    except RenderError:
        return
    text, sources = rendered.text, rendered.sourcemap.sources
    roles: dict = {}
    for chunk in rendered.sourcemap.chunks:
        src = sources.get(chunk.template)
        if chunk.kind != "expression" or chunk.source_start is None or src is None or chunk.end <= chunk.start:
            continue
        m = re.match(r"\{\{-?\s*([A-Za-z_]\w*)", src.text[chunk.source_start:chunk.source_end])
        if m is None:
            continue
        marker = text.rfind("<|im_start|>", 0, chunk.start)
        role = text[marker + 12:text.find("\n", marker)] if marker >= 0 else ""
        roles.setdefault(m.group(1), set()).add(role)
    for name, seen in roles.items():
        var = scenario.variables.get(name)
        if var is None or var.declared or var.kind != "static" or seen != {"user"} or not isinstance(var.value, str):
            continue
        var.kind, var.sub_kind = "per-request", "input"
        said = "per-request input: printed only in the user turn of a prompt file (what the user sends each request)"
        var.why = (said,) + tuple(w for w in var.why if not w.startswith("static"))


def add_volatile_stubs(scenario: Scenario, env) -> None:
    """A volatile stand-in (`{{ now() }}`, `| stamp`; render/stubs.py) reads its value from the
    context under its own key (`now()`), so it is varied like any volatile input."""
    from promptlint.render.stubs import volatile_stubs

    for stub, sub, value in volatile_stubs(env):
        if stub.key in scenario.variables:
            continue
        how = "declared" if stub.declared else "assumed from the name's words"
        scenario.variables[stub.key] = Variable(
            stub.key, value, "volatile", sub, why=(f"volatile {sub}: the {stub.role[:-1]} `{stub.label()}` is a stand-in of kind {stub.kind} ({how})",)
        )
