"""`check --fix` for an order hazard made in one module and sent from another: the fix goes in the module
that makes the order (``sorted(...)`` around the iterated listing or set), and is kept only when the
re-check of the sending module with the fixed text no longer reports it and reports nothing new."""

from __future__ import annotations

from integration_helpers import QWEN, run_cli
from test_project_flow import KB_LISTING, project

TOOLBOX = {
    "toolbox.py": """
        ENABLED = {"search_orders", "refund", "track_parcel"}
        SPECS = {name: {"type": "function", "function": {"name": name}} for name in sorted(ENABLED)}


        def tool_specs():
            return [SPECS[name] for name in ENABLED]
        """,
    "agent.py": """
        from openai import OpenAI

        from toolbox import tool_specs

        client = OpenAI()


        def answer(question):
            return client.chat.completions.create(model="gpt-4o", tools=tool_specs(), messages=[
                {"role": "system", "content": "You are the support agent of Nordwind Outdoor."},
                {"role": "user", "content": question}])
        """,
}


def test_fix_goes_where_the_order_is_made_and_the_recheck_is_clean(tmp_path, capsys, monkeypatch):
    src = project(tmp_path, KB_LISTING)
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--no-cache", "--fix", "rag.py")
    assert code == 0, out + err
    assert "Fixed 1 finding (M203 kb.py:5:" in out
    assert (tmp_path / "kb.py").read_text(encoding="utf-8") == src["kb.py"].replace(
        "for n in os.listdir(folder)", "for n in sorted(os.listdir(folder))")
    assert (tmp_path / "rag.py").read_text(encoding="utf-8") == src["rag.py"]  # the sender is not touched
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--no-cache", "rag.py")
    assert code == 0 and "All checks passed" in out


def test_diff_shows_the_tool_list_fix_in_the_other_module(tmp_path, capsys, monkeypatch):
    src = project(tmp_path, TOOLBOX)
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--no-cache", "--diff", "agent.py")
    assert "-    return [SPECS[name] for name in ENABLED]" in out
    assert "+    return [SPECS[name] for name in sorted(ENABLED)]" in out
    assert (tmp_path / "toolbox.py").read_text(encoding="utf-8") == src["toolbox.py"]  # --diff writes nothing


def test_two_findings_in_one_module_each_fixed_and_proven(tmp_path, capsys, monkeypatch):
    # the same set reaches the request twice: the tool list (M202) and names joined into the message (M203)
    files = dict(TOOLBOX)
    files["toolbox.py"] = TOOLBOX["toolbox.py"] + '''

        def tool_names():
            return "\\n".join([name for name in ENABLED])
        '''
    files["agent.py"] = TOOLBOX["agent.py"].replace('"content": question}', '"content": tool_names() + question}').replace(
        "from toolbox import tool_specs", "from toolbox import tool_names, tool_specs")
    src = project(tmp_path, files)
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--no-cache", "--output-format",
                             "concise", "agent.py")
    assert out.count("toolbox.py") == 2, out  # M202 (the tools) and M203 (the names in the message)
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--no-cache", "--fix", "agent.py")
    fixed = (tmp_path / "toolbox.py").read_text(encoding="utf-8")
    assert fixed.count("sorted(ENABLED)") == 3  # both fixes proven: each re-check loses its finding, adds none
    assert src["agent.py"] == (tmp_path / "agent.py").read_text(encoding="utf-8")


def proposer(text):
    """An analyzer whose cross-module fix proposes ``text`` for every finding (to show what the proof refuses)."""
    from types import SimpleNamespace

    return SimpleNamespace(fix_sent=lambda path, old, display, findings, settings: (text, list(findings)))


def test_the_proof_refuses_an_edit_that_keeps_the_finding_or_adds_one(tmp_path, monkeypatch):
    from promptlint.driver.lint import lint
    from promptlint.fixes import sent
    from promptlint.project.config import Settings

    src = project(tmp_path, KB_LISTING)
    monkeypatch.chdir(tmp_path)
    settings = Settings(tokenizer=str(QWEN), root=tmp_path)
    (finding,) = lint(["rag.py"], settings, use_cache=False).findings
    path = tmp_path / "kb.py"
    kept = src["kb.py"].replace("def documents", "# a comment\ndef documents")  # the listing moves one line down
    assert sent.fix(proposer(kept), path, "kb.py", src["kb.py"], [finding], settings) == (src["kb.py"], [])
    worse = src["kb.py"].replace("for n in os.listdir(folder)", "for n in set(sorted(os.listdir(folder)))")
    assert sent.fix(proposer(worse), path, "kb.py", src["kb.py"], [finding], settings) == (src["kb.py"], [])
    good = src["kb.py"].replace("for n in os.listdir(folder)", "for n in sorted(os.listdir(folder))")
    assert sent.fix(proposer(good), path, "kb.py", src["kb.py"], [finding], settings) == (good, [finding])
