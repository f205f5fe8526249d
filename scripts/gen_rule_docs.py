"""Regenerate docs/rules/<CODE>.md and docs/rules/README.md from the rule files in rules/.

Run `python scripts/gen_rule_docs.py` after editing a rule; tests/test_docs.py fails when
the generated files are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from promptlint.base import registry  # noqa: E402


def generated() -> dict:
    rules = registry.all_rules()
    out = {}
    index = ["# Rules", "", "Generated from `rules/*.toml` by `scripts/gen_rule_docs.py`; do not edit by hand.", "",
             "| code | name | miss class | severity | summary |", "| --- | --- | --- | --- | --- |"]
    for code, rule in rules.items():
        out[f"{code}.md"] = rule.markdown()
        index.append(f"| [{code}]({code}.md) | `{rule.name}` | {rule.miss_class} | {rule.severity} | {rule.summary} |")
    out["README.md"] = "\n".join(index) + "\n"
    return out


def main() -> int:
    target = ROOT / "docs" / "rules"
    target.mkdir(parents=True, exist_ok=True)
    for name, text in generated().items():
        (target / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
