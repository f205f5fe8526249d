"""Render and tokenize chat scenarios; the ``TemplateRun`` the checks see for a chat template."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable, Dict, List, Optional, Tuple

from promptlint.analysis.template_run import Sample, TemplateRun
from promptlint.chat.frontends import prepare, template_source
from promptlint.chat.request import ChatProfile, ChatRequest, Prepared, RequestError, cut_continued
from promptlint.chat.scenarios import ChatScenario
from promptlint.chat.source import ChatSource
from promptlint.render import Limits, LoadedTemplate, RenderError, Rendered, load_template, render
from promptlint.render.sourcemap import Location
from promptlint.scenarios import Scenario, Variable

CLOCK = "strftime_now"
LAST_USER = "messages[-1 user].content"
REQUEST_LISTS = ("tools", "documents")  # request fields the order rules (M201-M203) vary
_MESSAGE_CONTENT = re.compile(r"^messages\[(\d+)\]\.content$")
_TIME_DIRECTIVES = set("HIMSfpXcTRrsklzZ")


@dataclass
class StrftimeCall:
    template: str
    line: int
    format: str
    output: str


class ChatTemplate:
    """A chat source compiled in the profile's environment (one compile per named template)."""

    def __init__(self, source: ChatSource, profile: ChatProfile = ChatProfile(), limits: Limits = Limits()):
        self.source = source
        self.profile = profile
        self.limits = limits
        self._loaded: Dict[str, LoadedTemplate] = {}
        self._undeclared: Dict[str, frozenset] = {}

    def loaded(self, name: str) -> LoadedTemplate:
        if name not in self._loaded:
            text = template_source(self.source.templates[name], self.profile)
            # no loader: transformers renders a chat template from a string (an include is an error)
            loaded = load_template(self.source.path, self.profile.env_kind, [], source=text, limits=self.limits, includes=False)
            _record_strftime(loaded)
            self._loaded[name] = loaded
        return self._loaded[name]

    def undeclared(self, name: str) -> frozenset:
        if name not in self._undeclared:
            self._undeclared[name] = self.loaded(name).undeclared()  # recorded while compiling
        return self._undeclared[name]

    def select(self, request: ChatRequest) -> str:
        has_tools = bool(request.tools) if self.profile.frontend in ("vllm", "llamacpp") else request.tools is not None
        return self.source.select(has_tools)

    def render(self, request: ChatRequest, now: Optional[datetime] = None) -> Tuple[Rendered, str, Prepared]:
        """(render, template name, prepared inputs); raises RenderError (E0xx) like transformers raises."""
        name = self.select(request)
        loaded = self.loaded(name)
        text = self.source.templates[name]
        if now is None:
            now = datetime.now()
        try:
            prepared = prepare(request, self.source, text, self.undeclared(name), self.profile, now)
        except RequestError as e:
            raise RenderError("E002", f"render failed: {e}", loaded.name, None) from None
        except TypeError as e:
            raise RenderError("E002", f"render failed: TypeError: {e}", loaded.name, None) from None
        loaded.env.strftime_calls = []
        rendered = render(loaded, prepared.variables, self.limits, now)
        if prepared.finish is not None:
            rendered = self._finish(loaded, prepared, rendered, now)
        if prepared.continue_field is not None:
            try:
                cut = cut_continued(rendered.text, prepared.final_text)
            except RequestError as e:
                raise RenderError("E002", f"render failed: {e}", loaded.name, None) from None
            rendered = Rendered(rendered.text[:cut], rendered.sourcemap)
        return rendered, name, prepared

    def _finish(self, loaded: LoadedTemplate, prepared: Prepared, rendered: Rendered, now) -> Rendered:
        """The serving stack's own changes to the render (llama.cpp: continuing a final assistant
        message needs the render with the generation prompt too; promptlint.chat.llamacpp)."""
        calls = list(getattr(loaded.env, "strftime_calls", []))

        def with_generation_prompt() -> str:
            text = render(loaded, dict(prepared.variables, add_generation_prompt=True), self.limits, now).text
            loaded.env.strftime_calls = calls
            return text

        try:
            return Rendered(prepared.finish(rendered.text, with_generation_prompt), rendered.sourcemap)
        except RequestError as e:
            raise RenderError("E002", f"render failed: {e}", loaded.name, None) from None

    def strftime_calls(self, name: str) -> List[StrftimeCall]:
        return list(getattr(self.loaded(name).env, "strftime_calls", []))


def _record_strftime(loaded: LoadedTemplate) -> None:
    """Wrap `strftime_now` so each call records its template line, format and output."""
    env = loaded.env
    original = env.globals.get(CLOCK)
    if original is None:
        return
    env.strftime_calls = []

    def strftime_now(fmt):
        out = original(fmt)
        from promptlint.render.trace import template_line

        name, line = loaded.name, 0
        f = sys._getframe(1)
        while f is not None:
            tmpl = f.f_globals.get("__jinja_template__")
            if tmpl is not None:
                name = f.f_globals.get("name") or loaded.name
                try:
                    line = template_line(tmpl, f.f_lineno)
                except Exception:
                    line = 0
                break
            f = f.f_back
        env.strftime_calls.append(StrftimeCall(name, line, str(fmt), out))
        return out

    env.globals[CLOCK] = strftime_now


def is_date_format(fmt: str) -> bool:
    """A strftime format with no time-of-day directive (changes once a day)."""
    i = 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            d = fmt[i + 1]
            if d in ("-", "#") and i + 2 < len(fmt):
                d = fmt[i + 2]
            if d in _TIME_DIRECTIVES:
                return False
            i += 2
            continue
        i += 1
    return True


def last_user_index(messages: List[Dict[str, Any]]) -> Optional[int]:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
            return i
    return None


class ChatRun(TemplateRun):
    """A ``TemplateRun`` over one chat scenario: variables are kwargs, the clock and the last user turn."""

    def __init__(
        self,
        chat: ChatTemplate,
        scenario: ChatScenario,
        display_path: str,
        tokenizer: Callable,
        engine_profile,
        embedded_note: Optional[str] = None,
        is_enabled: Optional[Callable[[str], bool]] = None,
    ):
        self.chat = chat
        self.chat_scenario = scenario
        self.embedded_note = embedded_note
        self.template_name = chat.select(scenario.request)
        loaded = chat.loaded(self.template_name)
        variables = Scenario(dict(scenario.variables.variables), scenario.samples_path, scenario.variables.tools_order)
        # tools and documents are static inputs of the request: M201 varies their key order, M202/M203 their order
        for name in REQUEST_LISTS:
            value = getattr(scenario.request, name)
            if value and name not in variables.variables:
                order = "pinned" if name == "tools" and scenario.variables.tools_order == "pinned" else None
                sort_key = scenario.variables.sort_keys.get(name)
                variables.variables[name] = Variable(name, value, "static", order=order, sort_key=sort_key)
        super().__init__(
            chat.source.path,
            display_path,
            loaded,
            variables,
            tokenizer,
            engine_profile,
            chat.limits,
            add_special_tokens=chat.profile.add_special_tokens,
            is_enabled=is_enabled,
        )
        idx = last_user_index(scenario.request.messages)
        if idx is not None:
            content = scenario.request.messages[idx]["content"]
            self.scenario.variables[LAST_USER] = Variable(LAST_USER, content, "per-request")
        self._requests: Dict[Tuple[str, str], Tuple[Sample, str]] = {}  # render_request's memo

    # ------------------------------------------------ the conversation (checks' ``Conversation`` protocol)

    @property
    def conversation(self) -> "ChatRun":
        return self

    @property
    def template_text(self) -> str:
        """The source of the chat template this scenario selects."""
        return self.chat.source.templates[self.template_name]

    @property
    def frontend(self) -> str:
        return self.chat.profile.frontend

    @property
    def eos_token(self) -> str:
        return self.chat.source.special_tokens.get("eos_token") or ""

    def request_with(self, overrides: Dict[str, Any]) -> Tuple[ChatRequest, datetime]:
        """The scenario's request (and clock) with ``overrides`` applied to its variables."""
        req = self.chat_scenario.request.copy()
        now = self.chat_scenario.now
        for name, var in self.scenario.variables.items():
            value = overrides.get(name, var.value)
            if name == CLOCK:
                now = value
            elif name in REQUEST_LISTS:
                setattr(req, name, value)
            elif name == LAST_USER:
                idx = last_user_index(req.messages)
                if idx is not None:
                    req.messages[idx]["content"] = value
            else:
                req.kwargs[name] = value
        for name, value in overrides.items():
            m = _MESSAGE_CONTENT.match(name)
            if m and int(m.group(1)) < len(req.messages):
                req.messages[int(m.group(1))]["content"] = value
        return req, now

    def text_inputs(self) -> List[Tuple[str, Any]]:
        """Per-request text the caller passes: the last user turn, then every other user or tool message."""
        out: List[Tuple[str, Any]] = [(v.name, v.value) for v in self.scenario.of_kind("per-request")]
        last = last_user_index(self.chat_scenario.request.messages)
        for i, m in enumerate(self.chat_scenario.request.messages):
            if i != last and isinstance(m, dict) and m.get("role") in ("user", "tool") and isinstance(m.get("content"), str):
                out.append((f"messages[{i}].content", m["content"]))
        return out

    def render_request(self, request: ChatRequest, now: Optional[datetime] = None) -> Tuple[Sample, str]:
        """Render and tokenize another request (same template, profile and serving path), once per
        request: M204 asks for some twice (turn N with the reply, with and without reasoning sent
        back; turn N without the generation prompt, for the cause and for the notes)."""
        now = now or self.chat_scenario.now
        key = (repr(request), repr(now))  # the request's content, its dicts' key order included
        known = self._requests.get(key)
        # a template that reached a limit renders no more (render() raises its E006 again)
        if known is not None and self.chat.loaded(known[1]).limit_error is None:
            return known
        rendered, name, _ = self.chat.render(request, now)
        done = self._requests[key] = (Sample(rendered, self.encode_variants([rendered.text])[0]), name)
        return done

    def sample(self, clock: Optional[datetime] = None, **overrides: Any) -> Sample:
        key = (clock, tuple(sorted((k, repr(v)) for k, v in overrides.items())))
        if key not in self._memo:
            req, now = self.request_with(overrides)
            rendered, _, _ = self.chat.render(req, clock or now)
            self._memo[key] = Sample(rendered, self.encode_variants([rendered.text], bool(overrides) or clock is not None)[0])
            if not overrides and clock is None:
                self._base_calls = self.chat.strftime_calls(self.template_name)
        return self._memo[key]

    def _render_variant(self, overrides: Dict[str, Any]):
        req, now = self.request_with(overrides)
        rendered, _, _ = self.chat.render(req, now)
        return rendered

    def base(self) -> Sample:
        sample = self.sample()
        self._add_clock_variable()
        return sample

    def _add_clock_variable(self) -> None:
        calls = getattr(self, "_base_calls", [])
        if not calls or CLOCK in self.scenario.variables:
            return
        daily = all(is_date_format(c.format) for c in calls)
        now = self.chat_scenario.now
        variant = now + (timedelta(days=1) if daily else timedelta(seconds=7))
        self.scenario.variables[CLOCK] = Variable(CLOCK, now, "volatile", "date" if daily else "timestamp", variant)

    def locate_change(self, var: Variable, variant: Sample) -> Location:
        offset = self.first_divergent_char(variant)
        if var.name != CLOCK:
            return self.locate(offset)
        calls = getattr(self, "_base_calls", [])
        text = self.base().text
        best = None
        for call in calls:  # the call whose output sits at (or nearest before) the first change
            pos = text.rfind(call.output, 0, offset + len(call.output))
            if pos != -1 and pos <= offset and (best is None or pos > best[0]):
                best = (pos, call)
        call = best[1] if best else (calls[0] if calls else None)
        if call is None or not call.line:
            return self.locate(offset)
        src = self.loaded.sources().get(call.template)
        col = 1
        if src is not None:
            line_text = src.line_text(call.line)
            col = line_text.find(CLOCK) + 1 if CLOCK in line_text else 1
        end = col + len(CLOCK) if col > 1 or (src and CLOCK in src.line_text(call.line)) else col + 1
        return Location(call.template, call.line, col, call.line, end)

    def finding(self, code, message, location, **kw):
        notes = list(kw.pop("notes", ()))
        if self.embedded_note:
            notes.append(self.embedded_note)
        if kw.get("variable") == CLOCK:
            fmt = ", ".join(sorted({c.format for c in getattr(self, "_base_calls", [])}))
            notes.append(f"strftime_now({fmt}) renders the serving host's current time into the prompt")
        return super().finding(code, message, location, notes=notes, **kw)
