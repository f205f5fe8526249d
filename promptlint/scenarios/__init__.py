"""Scenarios: the sample inputs a template is rendered with, and what each input is.

- ``model``: Variable, Scenario (values and kinds);
- ``files``: samples files (``system.samples.toml`` beside ``system.j2``, or ``.json``);
- ``names``: kinds by role, from the words of an input's name (rules/M101.toml data);
- ``shapes``: the structure each input must have, from every use in the template's AST;
- ``values``: realistic values of a shape, and each kind's second value (variants);
- ``infer``: a scenario for a template without (or beyond) its samples file;
- ``writer``: the inferred scenario as a samples file (``promptlint samples``).
"""

from __future__ import annotations

from promptlint.scenarios.files import (
    default_samples_path,
    load_samples,
    samples_path_for,
    scenario_from_samples,
)
from promptlint.scenarios.infer import TemplateSet, infer_scenario, template_asts
from promptlint.scenarios.model import SPEC_KEYS, SamplesError, Scenario, Variable
from promptlint.scenarios.names import NamePatterns, name_patterns, name_words
from promptlint.scenarios.values import (
    PER_REQUEST_SAMPLES,
    guess_sub_kind,
    looks_volatile,
    per_request_variant,
    volatile_value,
    volatile_variant,
)

__all__ = [
    "NamePatterns",
    "PER_REQUEST_SAMPLES",
    "SPEC_KEYS",
    "SamplesError",
    "Scenario",
    "TemplateSet",
    "Variable",
    "default_samples_path",
    "guess_sub_kind",
    "infer_scenario",
    "load_samples",
    "looks_volatile",
    "name_patterns",
    "name_words",
    "per_request_variant",
    "samples_path_for",
    "scenario_from_samples",
    "template_asts",
    "volatile_value",
    "volatile_variant",
]
