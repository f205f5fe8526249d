"""Issue 32 family 8: a tool-order M202 on an application template whose tools the template does
not name says that the items shown are promptlint's own stand-ins and how a caller that already
orders its tools stably declares it; declared so, the finding becomes a note."""

from __future__ import annotations

import json

from conftest import QWEN

TEMPLATE = (
    "You are the operations agent of Fabrikam. Use the tools below when a question needs live data, and never guess\n"
    "figures you could look up. Confirm destructive actions with the user before calling a tool that changes state.\n"
    "Tools:\n{% for t in tools %}- {{ t.name }}: {{ t.description }}\n{% endfor %}"
    "Question: {{ question }}\n"
)
TOOLS = [{"name": "get_invoice", "description": "Fetch an invoice by its number."},
         {"name": "refund_order", "description": "Refund an order in full or in part."}]


def m202(cli, tmp_path):
    r = cli("check", "--tokenizer", QWEN, "--output-format", "json", "--no-cache", "ops.j2", cwd=tmp_path)
    assert r.code in (0, 1), r.err
    return [f for f in r.json()["findings"] if f["code"] == "M202"]


def test_inferred_tools_are_named_as_stand_ins_and_the_declaration_is_given(tmp_path, cli):
    (tmp_path / "ops.j2").write_text(TEMPLATE)
    (f,) = m202(cli, tmp_path)
    assert f["line"] == 4 and f["severity"] == "warning"
    assert "sample items promptlint made up: the template names none" in " ".join(f["notes"])
    assert '`[variables.tools]` with `order = "pinned"` and its `value`' in f["help"]

    # the caller's own tools, declared pinned: a note, not a warning; no made-up items mentioned
    (tmp_path / "ops.samples.json").write_text(json.dumps({"variables": {
        "tools": {"value": TOOLS, "kind": "static", "order": "pinned"}}}))
    (f,) = m202(cli, tmp_path)
    assert f["severity"] == "info" and "made up" not in " ".join(f["notes"]) and "get_invoice" in " ".join(f["notes"])
