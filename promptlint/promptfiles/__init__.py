"""Prompt files whose text is not sent as one prompt: Prompty (`.prompty`: YAML front matter,
then a Jinja body whose rendered role lines split it into chat messages), promptflow's chat
templates (`system:`/`user:` role lines) and Semantic Kernel's (`<message role="...">`).

``read(path, source)`` gives a ``PromptFile``: the template to render (the front matter masked
by a Jinja comment of the same lines, so every line and column of the body is the file's own),
the front matter's sample inputs (``sample:``, and ``inputs.<name>.sample`` / ``default``), the
API it is sent through and the role-line style; the renderer splits and frames each render
(``roles.frame``). Plain templates are None: nothing changes for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from promptlint.promptfiles.frontmatter import FrontMatterError, parse, split

SUFFIX = ".prompty"
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class PromptFile:
    """A prompt file read: the template to render and what its front matter says."""

    template: str  # what is rendered: the body, the front matter replaced by a comment of as many lines
    style: Optional[str]  # "prompty", "promptflow", "semantic-kernel"; None: the render is the prompt
    samples: Dict[str, Any] = field(default_factory=dict)  # input -> the front matter's sample value
    sample_keys: Dict[str, str] = field(default_factory=dict)  # input -> where in the front matter
    model: Optional[str] = None  # the deployment or model the front matter names
    api: str = "chat"
    notes: List[str] = field(default_factory=list)
    shifts: Dict[int, int] = field(default_factory=dict)  # line -> columns the masking moved it left (YAML indentation)

    def framing_note(self) -> str:
        how = {"prompty": "Prompty's role lines", "promptflow": "promptflow's role lines",
               "semantic-kernel": "Semantic Kernel's `<message role>` elements"}[self.style or "prompty"]
        model = f" (`{self.model}`)" if self.model else ""
        return (f"the render is split into chat messages on {how} and framed in ChatML (`<|im_start|>role`...`<|im_end|>`): "
                f"the served model's{model} chat template decides the real text, so token figures are approximate")

    def frame(self, text: str, chunks: List[tuple]):
        """The render as the model sees it: split into messages and framed (roles.frame)."""
        from promptlint.promptfiles.roles import frame

        if self.style is None:
            return text, chunks
        return frame(self.style, text, chunks)


def read(path: Path, source: str) -> Optional[PromptFile]:
    """The prompt file ``source`` (the text of ``path``) is, or None for a plain template; raises
    FrontMatterError for front matter that cannot be read."""
    from promptlint.promptfiles.roles import style_of

    if Path(path).suffix in YAML_SUFFIXES:
        from promptlint.promptfiles.yaml_prompts import embedded

        found = embedded(source)
        if found is None:
            return None
        masked, shifts, key, samples = found
        out = PromptFile(masked, style_of(masked), samples, {k: f"a default of `{k}`" for k in samples}, shifts=shifts)
        out.notes.append(f"the template is the YAML key `{key}`'s text (its indentation removed, as YAML reads it)")
        return out
    if Path(path).suffix != SUFFIX:
        style = style_of(source)
        return PromptFile(source, style) if style else None
    found = split(source)
    if found is None:  # a .prompty without front matter: a Prompty body all the same
        return PromptFile(source, "prompty")
    text, first, closing = found
    data = parse(text, first)
    lines = source.split("\n")
    # `{#` + the front matter's newlines + `#}`: renders nothing and keeps the body's lines and columns
    # where they are; the empty `if` drops the newline after the closing `---` (as Prompty's split
    # does) and gives the body's first text its line (Jinja marks no line for text after a comment)
    masked = "{#" + "\n" * (closing - 1) + "#}{%- if true -%}{%- endif -%}" + source[len("\n".join(lines[:closing])) :]
    out = PromptFile(masked, "prompty")
    if isinstance(data, dict):
        _model(data.get("model"), out)
        _samples(data, out)
    if out.api != "chat":
        out.style = None  # `api: completion`: the rendered body is the prompt
    return out


def _model(model: Any, out: PromptFile) -> None:
    if not isinstance(model, dict):
        return
    if isinstance(model.get("api"), str):
        out.api = model["api"].strip().lower()
    config = model.get("configuration")
    if isinstance(config, dict):
        for key in ("azure_deployment", "model", "name", "deployment_name"):
            if isinstance(config.get(key), str):
                out.model = config[key]
                break


def _samples(data: dict, out: PromptFile) -> None:
    inputs = data.get("inputs")
    if isinstance(inputs, dict):  # Prompty 2: per input `sample:` (else `default:`)
        for name, spec in inputs.items():
            if isinstance(spec, dict):
                for key in ("sample", "default"):
                    if key in spec and spec[key] is not None:
                        out.samples[str(name)] = spec[key]
                        out.sample_keys[str(name)] = f"inputs.{name}.{key}"
                        break
    sample = data.get("sample")
    if isinstance(sample, dict):
        for name, value in sample.items():
            out.samples[str(name)] = value
            out.sample_keys[str(name)] = f"sample.{name}"
    elif isinstance(sample, str) and sample.strip():
        out.notes.append(
            f"the front matter's `sample:` names a file ({sample.strip()[:80]}), which is not read: the inputs "
            "are inferred; give their values in a samples file beside the template"
        )


__all__ = ["FrontMatterError", "PromptFile", "read", "SUFFIX", "YAML_SUFFIXES"]
