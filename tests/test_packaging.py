"""The wheel ships what the linter reads at run time: rule files, schemas, the embedded tokenizer."""

import importlib.metadata
import importlib.util

import pytest


def test_installed_distribution_contains_runtime_data():
    if importlib.util.find_spec("promptlint._rules") is None:
        pytest.skip("running from a source tree (rules/ is read directly)")
    try:
        files = {str(f) for f in importlib.metadata.files("promptlint-kv") or []}
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("promptlint-kv is not installed (running from a source tree)")
    if not any(f.startswith("promptlint/") for f in files):
        pytest.skip("editable install: files live in the source tree")
    for needed in (
        "promptlint/_rules/M101.toml",
        "promptlint/_rules/E001.toml",
        "promptlint/schemas/config.schema.json",
        "promptlint/schemas/samples.schema.json",
        "promptlint/data/cl100k_base.tokenizer.json.gz",
    ):
        assert needed in files, needed
