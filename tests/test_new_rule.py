"""A new template rule is two hand-written files: its TOML and its check module.

In a copy of the checkout, a throwaway rule (M998: literal `TODO` text in a prompt) is added as
``rules/M998.toml`` and ``promptlint/checks/leftover_todo.py``, and nothing else is edited: the
docs generator is run (it writes docs/rules/), and then the rule runs in `check`, its rule cases
pass, and the house rules that name rules (one implementation per code, checks found by
registration, generated docs current) hold without a list to extend.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import OUTER_FORMS_ENV, QWEN

import promptlint

# the checkout of the promptlint under test (its package, rules, docs and tests are copied)
CHECKOUT = Path(promptlint.__file__).resolve().parent.parent

RULE = '''code = "M998"
name = "leftover-todo"
miss-class = "M1"
severity = "warning"
summary = "A prompt still says TODO."

[docs]
what-it-does = "Reports literal `TODO` text in the rendered prompt."

[data.wording]
message = "the prompt says `{word}` at character {offset:,}"
help = "finish the prompt"

[[cases]]
name = "todo-left"
kind = "fail"
template = "You are helpful.\\nTODO: say more\\nQ: {{ question }}\\n"
[[cases.expect]]
code = "M998"
line = 2
column = 1

[[cases]]
name = "finished"
kind = "pass"
template = "You are helpful.\\nQ: {{ question }}\\n"
expect = []
'''

CHECK = '''"""M998 leftover-todo: literal TODO text in a prompt (a throwaway rule)."""

from promptlint.base import registry

CODES = registry.implements(__name__, "M998")


def check(run):
    wording = registry.get("M998").data["wording"]
    offset = run.base().text.find("TODO")
    if offset < 0:
        return []
    return [run.finding("M998", wording["message"].format(word="TODO", offset=offset), run.locate(offset),
                        help=wording["help"])]
'''


def _copy(dest: Path) -> Path:
    # bytecode (__pycache__) comes along: copytree keeps modification times, so the checkout's .pyc
    # files stay valid and the copy's three interpreters do not compile the whole package again
    ignore = shutil.ignore_patterns(".pytest_cache")
    for part in ("promptlint", "rules", "scripts", "docs"):
        shutil.copytree(CHECKOUT / part, dest / part, ignore=ignore)
    (dest / "tests").mkdir()
    for f in (CHECKOUT / "tests").glob("*.py"):
        shutil.copy2(f, dest / "tests" / f.name)
    if (CHECKOUT / "tests" / "__pycache__").is_dir():
        shutil.copytree(CHECKOUT / "tests" / "__pycache__", dest / "tests" / "__pycache__")
    os.symlink(CHECKOUT / "tests" / "data", dest / "tests" / "data")
    shutil.copy(CHECKOUT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def _run(checkout: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROMPTLINT_", "PYTEST_"))}
    env["PROMPTLINT_FAST_TOKENIZER_DIR"] = os.environ["PROMPTLINT_FAST_TOKENIZER_DIR"]  # the session's proven forms (conftest)
    # and the nested pytest's too (its conftest would make an empty forms directory and prove
    # qwen2.5's 151k vocabulary again, ~10 s, for a rule case about a rule, not about loading)
    env[OUTER_FORMS_ENV] = os.environ["PROMPTLINT_FAST_TOKENIZER_DIR"]
    env.update(PYTHONPATH=str(checkout), NO_COLOR="1", PROMPTLINT_NO_PROGRESS="1")
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_a_new_template_rule_is_its_toml_and_its_module(tmp_path):
    checkout = _copy(tmp_path / "checkout")
    (checkout / "rules" / "M998.toml").write_text(RULE, encoding="utf-8")
    (checkout / "promptlint" / "checks" / "leftover_todo.py").write_text(CHECK, encoding="utf-8")
    r = _run(checkout, checkout, "scripts/gen_rule_docs.py")  # generated, not hand-written
    assert r.returncode == 0, r.stderr
    assert (checkout / "docs" / "rules" / "M998.md").read_text(encoding="utf-8").startswith("# M998 `leftover-todo`")

    work = tmp_path / "work"
    work.mkdir()
    (work / "p.j2").write_text("You are helpful.\nTODO: say more\nQ: {{ question }}\n", encoding="utf-8")
    r = _run(checkout, work, "-m", "promptlint", "check", "--tokenizer", str(QWEN), "--no-cache",
             "--output-format", "concise", "p.j2")
    assert r.stdout == "p.j2:2:1: M998 the prompt says `TODO` at character 17\n", r.stdout + r.stderr  # len("You are helpful.\n")

    r = _run(checkout, checkout, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
             "tests/test_architecture.py", "tests/test_rule_cases.py", "tests/test_docs.py",
             "-k", "M998 or exactly_one_implementation or registration_in_code_order or generated_rule_docs")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    # the M998 fail and pass cases, its cases' kinds, one implementation per code, checks by registration, docs
    assert "6 passed" in r.stdout, r.stdout[-1000:]
