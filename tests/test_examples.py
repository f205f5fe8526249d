"""The bundled examples/ report what the README promises, at token indices a direct encode confirms."""

from __future__ import annotations

from conftest import REPO, shared_prefix


def test_examples_findings(cli, mistral):
    r = cli("check", "--no-cache", "examples", "--output-format", "json", "--evidence", cwd=REPO)
    assert r.code == 1, r.err
    doc = r.json()
    assert doc["errors"] == [] and doc["files"] == 3
    by_key = {(f["path"], f["code"]): f for f in doc["findings"]}
    assert set(by_key) == {
        ("examples/prompts/support_timestamp.j2", "M101"),
        ("examples/prompts/agent_request_id.j2", "M101"),
        ("examples/prompts/agent_request_id.j2", "M202"),
    }
    ts = by_key["examples/prompts/support_timestamp.j2", "M101"]
    rid = by_key["examples/prompts/agent_request_id.j2", "M101"]
    tools = by_key["examples/prompts/agent_request_id.j2", "M202"]
    assert tools["variant"] == "tools reversed: get_order, track_parcel → track_parcel, get_order"
    assert (tools["line"], tools["column"]) == (6, 3)
    assert (ts["line"], ts["column"], ts["variable"]) == (1, 15, "now")
    assert (rid["line"], rid["column"], rid["variable"]) == (1, 13, "rid")
    for f in (ts, rid, tools):
        ev = f["evidence"]
        b = mistral.encode(ev["base_render"], add_special_tokens=False).ids
        v = mistral.encode(ev["variant_render"], add_special_tokens=False).ids
        assert f["first_divergent_token"]["index"] == shared_prefix(b, v)
        assert f["first_divergent_token"]["base_id"] == b[f["shared_tokens"]]
        assert f["prompt_tokens"] == len(v)
    # SentencePiece splits digits: '▁Current', '▁time', ':', '▁', '2','0','2','5','-','0','3','-','1','4','▁','0','9',':','2' | '6'
    assert ts["first_divergent_token"]["index"] == 19
    assert ts["eligible_blocks"] == 1


def test_promptlint_lints_its_own_repository_clean(cli):
    # dogfooding: the repository's own [tool.promptlint] excludes the deliberately hazardous test data
    r = cli("check", "--no-cache", "--output-format", "concise", cwd=REPO)
    assert r.code == 0, r.out
