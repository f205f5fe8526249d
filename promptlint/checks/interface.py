"""What a run offers the checks: the ``Run`` protocol (and, for chat templates, ``Conversation``).

A check is ``check(run: Run) -> list[Finding]`` (plus an optional ``plan(run)`` listing the
variants it will render, so they are tokenized in one batch). It sees only these members:
``promptlint.analysis.template_run.TemplateRun`` implements ``Run`` for application templates and
``promptlint.chat.run.ChatRun`` for one chat scenario, whose ``conversation`` is itself.
tests/test_architecture.py checks that checks use nothing else (no private attributes).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, List, Optional, Protocol, Sequence, Tuple

if TYPE_CHECKING:  # types only: this module imports nothing at run time
    from promptlint.arithmetic.compare import Comparison, Profile
    from promptlint.base.records import Finding
    from promptlint.render import Rendered
    from promptlint.render.sourcemap import Location
    from promptlint.scenarios import Scenario, Variable
    from promptlint.tokenization.tokens import Encoding, LoadedTokenizer


class Sample(Protocol):
    """One render of one scenario and its tokens."""

    rendered: "Rendered"
    encoding: "Encoding"

    @property
    def text(self) -> str: ...

    @property
    def ids(self) -> Sequence[int]: ...


class Conversation(Protocol):
    """A chat scenario's request, for checks that grow the conversation (M204)."""

    chat_scenario: Any  # promptlint.chat.scenarios.ChatScenario: request, reply, next_user, now

    @property
    def template_text(self) -> str: ...

    @property
    def frontend(self) -> str: ...  # "transformers" | "vllm"

    @property
    def eos_token(self) -> str: ...

    def request_with(self, overrides: dict) -> Tuple[Any, datetime]: ...  # (ChatRequest, clock)

    def render_request(self, request: Any, now: Optional[datetime] = None) -> Tuple[Sample, str]: ...


class Run(Protocol):
    """One template (or one chat scenario) under analysis."""

    scenario: "Scenario"
    profile: "Profile"
    engine: str
    add_special_tokens: bool

    @property
    def tokenizer(self) -> "LoadedTokenizer": ...  # what the engine encodes with

    @property
    def pinned_tokenizer(self) -> "LoadedTokenizer": ...  # the pinned Hugging Face tokenizer

    @property
    def conversation(self) -> Optional[Conversation]: ...  # None for an application template

    def enabled(self, code: str) -> bool: ...

    def sample(self, clock: Optional[datetime] = None, **overrides: Any) -> Sample: ...

    def base(self) -> Sample: ...

    # each exactly ``tokenizer.encode(text, add_special_tokens)``, tokenized in a window around where a
    # text differs from the base render (promptlint.tokenization.window_encode): for texts other than the scenario's
    def encode_variants(self, texts: Sequence[str]) -> List["Encoding"]: ...

    def compare(self, variant: Sample) -> "Comparison": ...

    def first_divergent_char(self, variant: Sample) -> int: ...

    def locate(self, offset: int) -> "Location": ...

    def locate_change(self, var: "Variable", variant: Sample) -> "Location": ...

    def text_inputs(self) -> List[Tuple[str, Any]]: ...

    def scenario_order(self, name: str) -> Optional[str]: ...

    def scenario_tools_pinned(self) -> bool: ...

    def finding(
        self,
        code: str,
        message: str,
        location: "Location",
        *,
        variable: Optional[str] = None,
        variant: Optional[Sample] = None,
        cmp: Optional["Comparison"] = None,
        help: Optional[str] = None,
        notes: Sequence[str] = (),
        severity: Optional[str] = None,
        cause: Optional[str] = None,
        variant_description: Optional[str] = None,
        **figures: Any,
    ) -> "Finding":
        """The finding, built complete (findings are frozen): ``severity`` overrides the rule
        file's, ``cause`` is M204's, ``variant_description`` the controlled change in words;
        ``variant`` and ``cmp`` give the figures, else ``figures`` (``figures.of(...)``) do."""
        ...
