"""Generated rule docs must match the rule files."""

import importlib.util

from conftest import REPO


def test_generated_rule_docs_are_current():
    spec = importlib.util.spec_from_file_location("gen_rule_docs", REPO / "scripts" / "gen_rule_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    stale = [
        name for name, text in gen.generated().items()
        if not (REPO / "docs" / "rules" / name).is_file()
        or (REPO / "docs" / "rules" / name).read_text(encoding="utf-8") != text
    ]
    assert not stale, f"docs/rules is stale for {stale}: run `python scripts/gen_rule_docs.py`"
