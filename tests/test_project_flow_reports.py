"""A Python hazard made in one module and sent from another, as the reports carry it: the JSON record
keeps every field it had and gains `sent_by` (the sending call's file, line, column and text); SARIF gives
the result a `relatedLocations` entry at the sending call, and the document still validates."""

from __future__ import annotations

import json

import pytest

from integration_helpers import DATA, QWEN, run_cli
from test_agent_call_shapes import line_of
from test_project_flow import GENERATOR, KB_LISTING, project


def test_json_keeps_its_fields_and_names_the_sending_call(tmp_path, capsys, monkeypatch):
    src = project(tmp_path, GENERATOR)
    (tmp_path / ".git").mkdir()
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--output-format", "json", "client.py")
    assert code == 1, err
    (f,) = json.loads(out)["findings"]
    assert f["path"] == "prompts.py" and f["line"] == line_of(src["prompts.py"], "datetime.now()")
    call = line_of(src["client.py"], "chat.completions.create")
    column = src["client.py"].splitlines()[call - 1].index("client.chat") + 1
    assert f["sent_by"] == [{"path": "client.py", "line": call, "column": column,
                             "call": "client.chat.completions.create(...)"}]
    # the fields a finding had before stay, in their order, before the new one
    assert list(f)[:10] == ["code", "name", "miss_class", "severity", "message", "path", "line", "column", "end_line",
                            "end_column"]
    assert any(n.startswith("sent by `client.chat.completions.create(...)`") for n in f["notes"])


def test_sarif_related_location_is_the_sending_call(tmp_path, capsys, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    src = project(tmp_path, KB_LISTING)
    (tmp_path / ".git").mkdir()
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--output-format", "sarif", "rag.py")
    assert code == 1, err
    doc = json.loads(out)
    jsonschema.Draft4Validator(json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))).validate(doc)
    (result,) = doc["runs"][0]["results"]
    assert result["ruleId"] == "M203"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "kb.py"
    call = line_of(src["rag.py"], "messages.create")
    column = src["rag.py"].splitlines()[call - 1].index("client.messages") + 1
    assert result["relatedLocations"] == [{
        "physicalLocation": {"artifactLocation": {"uri": "rag.py", "uriBaseId": "%SRCROOT%"},
                             "region": {"startLine": call, "startColumn": column, "endLine": call}},
        "id": 0, "message": {"text": "sent by `client.messages.create(...)`"}}]
    assert "sent_by" not in result["properties"]


def test_a_finding_sent_from_its_own_module_has_no_related_location(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"app.py": """
        from datetime import datetime

        from openai import OpenAI

        client = OpenAI()


        def answer(question):
            return client.chat.completions.create(model="gpt-4o", messages=[
                {"role": "system", "content": f"Now: {datetime.now()}. You are the support agent of Nordwind Outdoor, "
                                              "an online shop for tents, stoves and sleeping bags. Be brief and kind."},
                {"role": "user", "content": question}])
        """})
    code, out, err = run_cli(capsys, monkeypatch, tmp_path, "check", "--tokenizer", QWEN, "--output-format", "sarif", "app.py")
    results = json.loads(out)["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["M101"] and "relatedLocations" not in results[0]


def test_two_importers_sending_one_prompt_module_give_one_finding_naming_both(tmp_path):
    # two clients send the prompt module's message: one finding at its line, both calls named (notes and sent_by)
    from test_project_flow import check, where

    files = dict(GENERATOR)
    files["client2.py"] = GENERATOR["client.py"].replace("def answer(", "def answer_again(")
    src = project(tmp_path, files)
    findings = check(tmp_path, "client.py", "client2.py")
    assert where(findings) == [("M101", "prompts.py", line_of(src["prompts.py"], "datetime.now()"))]
    (f,) = findings
    call = line_of(src["client.py"], "chat.completions.create")
    assert [(s.path.rsplit("/", 1)[-1], s.line) for s in f.sent_by] == [("client.py", call), ("client2.py", call)]
    assert any(n.startswith("also sent by `client.chat.completions.create(...)`") and "client2.py" in n for n in f.notes)
