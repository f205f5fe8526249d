"""Every deployed model at once (``tokenizers`` in the configuration; docs/configuration.md).

The project is linted once per model (promptlint.driver.Workspace runs them), with that model's
tokenizer, pin, engine and block size (each tokenizer is loaded once, for its own run, and released
after it). What does not depend
on the model is done once for all the runs: an application template's load, scenario and renders
(promptlint.analyzers.jinja_template.prepare); each run tokenizes them. The runs' findings are
merged by where they are and what they say: one finding per hazard, with ``models`` listing
each model it hits, that model's first divergent token and blocks. Its top-level figures are
those of the model that loses the most tokens (the old single-tokenizer fields keep their
meaning for one model, and say the worst case for several).
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Tuple

from promptlint.project.config import Settings
from promptlint.driver.lint import LintResult
from promptlint.base.records import Finding, ModelHit, ModelRun


def model_settings(settings: Settings) -> List[Tuple[str, Settings]]:
    """(name, the settings of that model's run) for each configured model, in the file's order."""
    out = []
    for name, path, sha, block, engine in settings.tokenizers:
        same_engine = engine is None or engine == settings.engine
        out.append((name, dataclasses.replace(
            settings, tokenizer=path, tokenizer_sha256=sha, tokenizers=(), engine=engine or settings.engine,
            block_size=block if block is not None else (settings.block_size if same_engine else None),
        )))
    return out


def choose(settings: Settings, name: Optional[str]) -> Settings:
    """The settings of one model for a command that uses one tokenizer (``render``, ``diff``:
    ``--model NAME``; default: the first configured). Raises ConfigError naming the file."""
    from promptlint.project.config import ConfigError

    where = settings.config_path or "the configuration"
    if not settings.tokenizers:
        if name is not None:
            raise ConfigError(f"--model {name}: {where} configures no `tokenizers` (one entry per deployed model); "
                              "drop --model or add the table")
        return settings
    models = model_settings(settings)
    if name is None:
        return models[0][1]
    for model, chosen in models:
        if model == name:
            return chosen
    raise ConfigError(f"--model {name}: not one of the `tokenizers` in {where} ({', '.join(m for m, _ in models)})")


def _key(f: Finding) -> Tuple:
    return (f.code, f.path, f.line, f.column, f.end_line, f.end_column, f.variable or "", f.cause or "")


def merge(runs: List[Tuple[str, LintResult]]) -> LintResult:
    """One Result for several models' runs (in the configuration's order): built here, once."""
    first = runs[0][1]
    models = tuple(
        ModelRun(name, None if r.tokenizer is None or r.tokenizer.embedded else str(r.tokenizer.path), r.tokenizer_sha256,
                 r.engine, r.block_size)
        for name, r in runs
    )
    merged: Dict[str, List[Finding]] = {}
    for kind in ("findings", "errors"):
        groups: Dict[Tuple, List[Tuple[str, LintResult, Finding]]] = {}
        for name, r in runs:
            for f in getattr(r, kind):
                groups.setdefault(_key(f), []).append((name, r, f))
        out = []
        for hits in groups.values():
            # the top-level figures: the model losing the most tokens (the first such, in the file's order)
            _, _, worst = max(hits, key=lambda h: h[2].arithmetic.lost_tokens if h[2].arithmetic else -1)
            out.append(dataclasses.replace(worst, models=[
                ModelHit(name, r.engine, r.block_size, f.first_divergent_token, f.arithmetic) for name, r, f in hits]))
        merged[kind] = sorted(out, key=lambda f: f.sort_key)
    notices = list(dict.fromkeys(notice for _, r in runs for notice in r.notices))
    return LintResult(
        findings=merged["findings"], errors=merged["errors"], files=max(r.files for _, r in runs),
        tokenizer=first.tokenizer, tokenizer_sha256=first.tokenizer_sha256, notices=notices, engine=first.engine,
        block_size=first.block_size, models=models,
    )
