"""What a cold one-template `check` pays for: no Rust BPE model, no process, socket or git
machinery when the check runs in-process, one rule file parsed for a rule's wording, and name
patterns matched without compiling a regex per pattern (docs/performance.md)."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from promptlint.base import registry

PROBE = r"""
import json, sys
from promptlint.fastbpe import engine, form
built = {"engine": 0, "rust": 0}
def counted(kind, f):
    def g(*a):
        built[kind] += 1
        return f(*a)
    return g
engine.build, form.build = counted("engine", engine.build), counted("rust", form.build)
from promptlint.cli import main
try:
    main(["check", "--", sys.argv[1]])
except SystemExit:
    pass
print(json.dumps({
    "modules": sorted(m for m in ("socket", "subprocess", "ctypes", "jsonschema", "promptlint.driver.baseline",
                                  "promptlint.project.git_tree") if m in sys.modules),
    "built": built,
}), file=sys.stderr)
"""


def test_a_plain_check_in_process_builds_no_rust_model_and_starts_no_machinery(tmp_path):
    """`check -- one.j2` with the daemon off, after an edit (the project's configuration already
    validated once, as on every run but a project's first): the embedded tokenizer is the engine
    and no Rust BPE model is built; neither socket (the daemon client), subprocess and git (only
    for --baseline), ctypes (the render watchdog off the main thread) nor jsonschema is imported."""
    template = tmp_path / "one.j2"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPTLINT_")}
    env.update(PYTHONPATH=str(Path(registry.__file__).parents[2]), PROMPTLINT_DAEMON="0", XDG_CACHE_HOME=str(tmp_path / "cache"),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    for edit in ("first", "second"):
        template.write_text(f"Current time: {{{{ now }}}}\nYou are the Acme assistant ({edit}).\n"
                            "Answer questions about orders, shipping and returns in a few friendly sentences, and cite the policy.\n"
                            "{{ question }}\n", encoding="utf-8")  # over a block of shared text after the clock: an M101
        r = subprocess.run([sys.executable, "-c", PROBE, "one.j2"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
        assert "M101" in r.stdout
    seen = json.loads(r.stderr.strip().splitlines()[-1])
    assert seen == {"modules": [], "built": {"engine": 1, "rust": 0}}


def test_a_rules_wording_parses_its_own_rule_file_only(monkeypatch):
    """M101's message reads M101.toml's [data.wording]: one file parsed, not all thirty."""
    from promptlint.base import toml_io

    parsed = []
    real = toml_io.toml_loads
    monkeypatch.setattr(toml_io, "toml_loads", lambda text: parsed.append(1) or real(text))
    registry.all_rules.cache_clear()
    registry._parsed_rule.cache_clear()
    try:
        assert "wording" in registry.get("M101").data
        assert len(parsed) == 1
        assert registry.get("M101").code == "M101" and len(parsed) == 1
    finally:
        registry.all_rules.cache_clear()
        registry._parsed_rule.cache_clear()


def test_name_patterns_match_as_fnmatch_does():
    """Patterns without a wildcard are compared as text: the same answers as fnmatchcase for
    every pattern of name_words.toml against words that hit and miss them."""
    from promptlint.base.toml_io import toml_loads
    from promptlint.scenarios import names

    data = toml_loads((REPO / "promptlint" / "data" / "name_words.toml").read_text(encoding="utf-8"))
    patterns = sorted({str(p).lower() for row in data["roles"] for key in ("words", "heads", "qualifiers", "names", "unless")
                       for p in row.get(key, ())})
    assert any("*" in p for p in patterns) and any(not set("*?[") & set(p) for p in patterns)
    words = set(patterns) | {p.replace("*", "x") for p in patterns} | {p + "s" for p in patterns} | {"", "x", "time", "date"}
    for p in patterns:
        for w in words:
            assert names._fits(w, p) == fnmatch.fnmatchcase(w, p), (w, p)
