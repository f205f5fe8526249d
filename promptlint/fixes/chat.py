"""Fixes in a model's chat template: a chat `.jinja` file, or the `chat_template` string of
tokenizer_config.json.

The same proposers and verifier as for application templates, with the chat run (the scenarios,
the serving path, the model's tokenizer) re-measuring every candidate. Every chat-template fix is
unsafe whatever the rule file says: it changes the prompt format the model was trained on, and the
rule pages' advice stands (tool and document order are best fixed in the client, M202/M203).

A template stored in tokenizer_config.json is written back by re-serializing only that JSON
string, in the file's own escaping style (`json.dumps`, with or without `ensure_ascii`); every
other byte stays as it was, and the result must parse to the same object but for the template.
A file whose string uses another style, or that holds a list of named templates, is refused.
"""

from __future__ import annotations

import json
from json.decoder import scanstring
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from promptlint.fixes import UNSAFE, Outcome
from promptlint.fixes.verify import Subject
from promptlint.base.records import Finding

UNSAFE_WHY = ("it changes the model's chat format, which the model was trained on; "
              "build the request in one canonical form in the client where you can (docs/rules/M202.md)")


class ChatSubject(Subject):
    """A chat template under repair: candidates are template texts, linted and run as the file."""

    def __init__(self, path: Path, display: str, settings, embed: Callable[[str], str]):
        super().__init__(path, display, settings)
        self.embed = embed  # template text -> the file's text

    def findings(self, text: str) -> List[Finding]:
        return super().findings(self.embed(text))

    def run(self, text: str, variable: Optional[str] = None):
        """The run of the first scenario that has ``variable`` (the one the finding varies)."""
        from promptlint.analyzers.chat_template import scenario_runs
        from promptlint.analysis.kernel import file_error

        runs = scenario_runs(self.path, self.embed(text), self.ctx)
        if isinstance(runs, list):
            return runs
        first = None
        for run in runs:
            if variable is None or variable in run.scenario.variables:
                return run
            first = first or run
        return first if first is not None else [file_error(self.display, "E002", "no scenario renders")]


def fix_text(
    path: Path, display: str, text: str, findings: Sequence[Finding], settings, unsafe: bool = False,
    only: Optional[Finding] = None,
) -> Tuple[str, List[Outcome]]:
    """(the fixed file text, one outcome per fixable finding), as ``templates.fix_text``."""
    from promptlint.fixes import templates

    if path.name != "tokenizer_config.json":
        subject = ChatSubject(path, display, settings, lambda t: t)
        return templates.fix_text(path, display, text, findings, settings, unsafe, only, subject, UNSAFE_WHY)
    template, reason = stored_template(text)
    if template is None:
        return text, _refused(display, findings, only, reason)
    subject = ChatSubject(path, display, settings, lambda t: embed(text, t)[0] or text)
    fixed, outcomes = templates.fix_text(path, display, template, findings, settings, unsafe, only, subject, UNSAFE_WHY)
    if fixed == template:
        return text, outcomes
    new_text, reason = embed(text, fixed)
    if new_text is None:  # cannot happen once stored_template accepted the file; never write a broken one
        return text, _refused(display, findings, only, reason)
    for o in outcomes:
        if o.text is not None:
            o.text = embed(text, o.text)[0]
    return new_text, outcomes


def stored_template(file_text: str) -> Tuple[Optional[str], str]:
    """(the `chat_template` string, "") or (None, why it cannot be fixed in place)."""
    try:
        config = json.loads(file_text)
    except ValueError as e:
        return None, f"tokenizer_config.json is not valid JSON ({e})"
    template = config.get("chat_template") if isinstance(config, dict) else None
    if not isinstance(template, str):
        return None, "the chat template is not one `chat_template` string (a list of named templates is not fixed in place)"
    new, reason = embed(file_text, template)
    if new != file_text:
        return None, reason or "re-serializing the `chat_template` string would change the file"
    return template, ""


def embed(file_text: str, template: str) -> Tuple[Optional[str], str]:
    """``file_text`` with its `chat_template` string replaced by ``template``, in the same escaping
    style; (None, why) when the style is not reproducible or the JSON would change otherwise."""
    from promptlint.base import json_locate

    quote = json_locate.string_at(file_text, ["chat_template"])
    if quote is None:
        return None, "no `chat_template` string found in tokenizer_config.json"
    end = scanstring(file_text, quote + 1)[1]
    literal = file_text[quote:end]
    original = json.loads(literal)
    style = next((ascii_only for ascii_only in (False, True) if json.dumps(original, ensure_ascii=ascii_only) == literal), None)
    if style is None:
        return None, ("the `chat_template` string is escaped in a style other than json.dumps's, so it cannot be "
                      "rewritten without changing other bytes; fix a chat_template.jinja copy instead")
    new = file_text[:quote] + json.dumps(template, ensure_ascii=style) + file_text[end:]
    expected = json.loads(file_text)
    expected["chat_template"] = template
    if json.loads(new) != expected:
        return None, "rewriting the `chat_template` string would change other values of tokenizer_config.json"
    return new, ""


def _refused(display: str, findings: Sequence[Finding], only: Optional[Finding], reason: str) -> List[Outcome]:
    from promptlint.fixes.templates import fixable

    return [
        Outcome(f.code, display, f.line, f.column, f.variable, UNSAFE, False, reason=reason)
        for f in findings if fixable(f) and f.path == display and (only is None or f is only)
    ]
