"""One template under analysis: render scenarios, tokenize them, compare variants.

Checks (``promptlint/checks/``) receive a ``TemplateRun`` (what it offers them is the
``Run`` protocol of ``promptlint/checks/interface.py``) and ask it for renders of the base
scenario and of controlled variants; renders and encodings are memoised so every check
shares the work. Its figures come from ``promptlint.arithmetic.figures``, as every analyzer's do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

from promptlint.arithmetic import figures
from promptlint.analysis import kernel
from promptlint.tokenization import window_encode
from promptlint.arithmetic.compare import Comparison, Profile, shared_prefix
from promptlint.base.paths import display_path
from promptlint.base.records import DivergentToken, Finding
from promptlint.render import LoadedTemplate, Limits, Rendered, render
from promptlint.render.sourcemap import Location
from promptlint.scenarios import Scenario
from promptlint.tokenization.tokens import Encoding, LoadedTokenizer


@dataclass
class Sample:
    """One render of one scenario and its token ids."""

    rendered: Rendered
    encoding: Encoding

    @property
    def text(self) -> str:
        return self.rendered.text

    @property
    def ids(self):
        return self.encoding.ids


_BASE = (None, ())  # the memo key of the base render


class TemplateRun:
    def __init__(
        self,
        path: Path,
        display_path: str,
        loaded: LoadedTemplate,
        scenario: Scenario,
        tokenizer: Callable[[], LoadedTokenizer],
        profile: Profile,
        limits: Limits,
        add_special_tokens: bool = False,
        search_paths=(),
        is_enabled=None,
        pinned: Optional[Callable[[], LoadedTokenizer]] = None,
        engine: str = "vllm",
        renders: Optional[Dict[Tuple, Any]] = None,
        base: Optional[Path] = None,
    ):
        self.display_base = base  # the run's base directory: what an include's display path is relative to
        self.path = path
        self.display_path = display_path
        self.loaded = loaded
        self.scenario = scenario
        self._tokenizer = tokenizer
        self.profile = profile
        self.limits = limits
        self.add_special_tokens = add_special_tokens
        self.search_paths = list(search_paths)
        self._memo: Dict[Tuple, Sample] = {}
        self._is_enabled = is_enabled or (lambda code: True)
        self._pinned = pinned or tokenizer
        self.engine = engine
        # key -> Rendered or the RenderError it raised; shared by the runs of several models
        # (promptlint.driver.models): an application template's render does not depend on the tokenizer
        self._renders: Dict[Tuple, Any] = {} if renders is None else renders

    @property
    def pinned_tokenizer(self) -> LoadedTokenizer:
        """The pinned Hugging Face tokenizer (``tokenizer`` may be an engine's variant of it)."""
        return self._pinned()

    def enabled(self, code: str) -> bool:
        return self._is_enabled(code)

    def scenario_order(self, name: str) -> Optional[str]:
        var = self.scenario.variables.get(name)
        return var.order if var is not None else None

    def scenario_tools_pinned(self) -> bool:
        return self.scenario.tools_order == "pinned"

    @property
    def tokenizer(self) -> LoadedTokenizer:
        return self._tokenizer()

    def sample(self, clock: Optional[datetime] = None, **overrides: Any) -> Sample:
        """Render the base scenario with ``overrides`` and tokenize it (memoised)."""
        key = (clock, tuple(sorted((k, repr(v)) for k, v in overrides.items())))
        if key not in self._memo:
            rendered = self._rendered(key, overrides, clock)
            self._memo[key] = Sample(rendered, self.encode_variants([rendered.text], key != _BASE)[0])
        return self._memo[key]

    def encode_variants(self, texts, variants: bool = True):
        """Encodings of ``texts``; variants of the base render are tokenized in a window around
        their change (promptlint.tokenization.window_encode), the exact full-encode answer."""
        base = self._window_base() if variants else None
        if base is None:
            return window_encode.encode_all(self.tokenizer, list(texts), self.add_special_tokens)
        return window_encode.encode_variants(self.tokenizer, base.text, base.encoding, texts, self.add_special_tokens)

    def _window_base(self) -> Optional[Sample]:
        """The base render and its encoding, None when it cannot be rendered."""
        if _BASE not in self._memo:
            try:
                self.sample()
            except Exception:  # a render or request error: the check asking for the base reports it
                return None
        return self._memo.get(_BASE)

    def base(self) -> Sample:
        return self.sample()

    def prefetch(self, plans) -> None:
        """Render the planned variants and tokenize them in one `encode_batch` call.

        Tokenizing dominates a cold run and the Rust batch encoder uses every core; a variant
        that fails to render is left for the check that needs it (which then reports it).
        """
        from promptlint.render import RenderError

        pending = []
        for overrides in plans:
            key = (None, tuple(sorted((k, repr(v)) for k, v in overrides.items())))
            if key in self._memo or any(k == key for k, _ in pending):
                continue
            if key == _BASE:  # the base first: the variants are windows against it
                self._window_base()
                continue
            try:
                pending.append((key, self._render_variant(overrides)))
            except RenderError:
                continue
        if not pending:
            return
        encodings = self.encode_variants([r.text for _, r in pending])
        for (key, rendered), encoding in zip(pending, encodings):
            self._memo[key] = Sample(rendered, encoding)

    def _render_variant(self, overrides: Dict[str, Any]) -> Rendered:
        return self._rendered((None, tuple(sorted((k, repr(v)) for k, v in overrides.items()))), overrides, None)

    def _rendered(self, key: Tuple, overrides: Dict[str, Any], clock: Optional[datetime]) -> Rendered:
        """The render of ``key`` (the base scenario with ``overrides``), once across the models' runs."""
        from promptlint.render import RenderError

        if key not in self._renders:
            try:
                self._renders[key] = render(self.loaded, self.scenario.values(**overrides), self.limits, clock)
            except RenderError as e:
                self._renders[key] = e
        done = self._renders[key]
        if isinstance(done, RenderError):
            raise RenderError(done.code, done.message, done.template, done.line)
        return done

    def plan(self, modules) -> list:
        """Every variant the ideal prefix and the given check modules will ask for."""
        plans = self.plan_ideal()
        for module in modules:
            plans += module.plan(self) if hasattr(module, "plan") else []
        return plans

    def plan_ideal(self):
        """The variant behind the ideal shared prefix: every per-request input changed."""
        per_request = self.scenario.of_kind("per-request")
        return [{v.name: v.variant_value() for v in per_request}] if per_request else []

    def text_inputs(self):
        """(name, value) of every per-request input (M103 looks for special-token text in them)."""
        return [(v.name, v.value) for v in self.scenario.of_kind("per-request")]

    def ideal_shared(self, variant: Sample) -> int:
        """S if only genuinely per-request inputs differed; P when there are none."""
        per_request = self.plan_ideal()
        changed = self.sample(**per_request[0]).ids if per_request else None
        return figures.ideal_shared(self.base().ids, changed, len(variant.ids))

    def compare(self, variant: Sample) -> Comparison:
        return figures.measure(self.base().ids, variant.ids, self.ideal_shared(variant), self.profile.block_size)

    @property
    def conversation(self):
        """A chat run's conversation (M204); None for an application template."""
        return None

    # ----------------------------------------------------------- findings helpers

    def divergent_token(self, variant: Sample, cmp: Comparison) -> DivergentToken:
        base = self.base()
        offset = figures.token_offset(base.encoding.offsets, base.text, cmp.shared)
        return figures.divergent_token(self.tokenizer, base.ids, variant.ids, cmp.shared, offset)

    def first_divergent_char(self, variant: Sample) -> int:
        return shared_prefix(self.base().text, variant.text)

    def locate_change(self, var, variant: Sample) -> Location:
        """Template location responsible for ``var``'s change in ``variant`` (the first divergent character's)."""
        return self.locate(self.first_divergent_char(variant))

    def locate(self, offset: int) -> Location:
        loc = self.base().rendered.sourcemap.locate(offset)
        if loc is None:
            return Location(self.loaded.name, 1, 1, 1, 1)
        return loc

    def path_of(self, template_name: str) -> str:
        """Display path of a template the render used (the file itself or an include)."""
        if template_name == self.loaded.name:
            return self.display_path
        for root in [self.path.parent, *self.search_paths]:
            candidate = Path(root) / template_name
            if candidate.is_file():
                return display_path(candidate, self.display_base)
        return template_name

    def finding(
        self,
        code: str,
        message: str,
        location: Location,
        *,
        variable: Optional[str] = None,
        variant: Optional[Sample] = None,
        cmp: Optional[Comparison] = None,
        help: Optional[str] = None,
        notes=(),
        **complete,
    ) -> Finding:
        """The finding, complete (``complete``: ``kernel.finding``'s severity, cause,
        variant_description and figures); with ``variant`` and ``cmp``, the figures of that comparison."""
        where = self.path_of(location.template)
        if where != self.display_path:  # in an included/extended file: measured in this template's render
            notes = [f"in the render of {self.display_path}, which includes or extends {where}", *notes]
        if variant is not None and cmp is not None:
            proof = figures.evidence(self.base().text, variant.text, self.add_special_tokens)
            complete = {**figures.of(self.divergent_token(variant, cmp), cmp, proof), **complete}
        return kernel.finding(
            code,
            where,
            message,
            location.line,
            location.column,
            location.end_line,
            location.end_column,
            variable=variable,
            help=help,
            notes=notes,
            **complete,
        )
