"""Cache lifetimes in `promptlint conversation`: a gap between two requests longer than what the
earlier one cached lives is expiry, not a hazard (no break reported, nothing lost), said with the
lifetime assumed; within the lifetime the hazard stays. Gaps are computed here by hand from the
JSON Lines `time` field (epoch seconds or ISO 8601)."""

from __future__ import annotations

import json

import pytest

POLICY = "".join(f"Rule {i}: answer in full sentences and cite the order number when there is one.\n" for i in range(80))


def anthropic_pair(ttl, clock_changes=True):
    marker = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    first = {"model": "claude-sonnet-4-5", "max_tokens": 64,
             "system": [{"type": "text", "text": "Now: 10:00:01.\n" + POLICY, "cache_control": marker}],
             "messages": [{"role": "user", "content": "Where is order 1042?"}]}
    second = json.loads(json.dumps(first))
    if clock_changes:
        second["system"][0]["text"] = "Now: 10:00:09.\n" + POLICY
    second["messages"] += [{"role": "assistant", "content": "Noted."}, {"role": "user", "content": "And 1043?"}]
    return first, second


def write(tmp_path, rows):
    path = tmp_path / "capture.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("ttl, gap, expired, lifetime", [
    (None, 299, False, 300), (None, 301, True, 300),  # Anthropic's default: 5 minutes
    ("1h", 301, False, 3600), ("1h", 3601, True, 3600),  # a breakpoint with ttl 1h
])
def test_anthropic_gap_against_the_breakpoints_lifetime(cli, tmp_path, ttl, gap, expired, lifetime):
    first, second = anthropic_pair(ttl)
    rows = [{"conversation": "c", "time": 1_800_000_000, **first}, {"conversation": "c", "time": 1_800_000_000 + gap, **second}]
    done = cli("conversation", "--output-format", "json", write(tmp_path, rows))
    doc = done.json()
    [conv] = doc["conversations"]
    if expired:
        assert doc["findings"] == [] and done.code == 0  # the clock changed, but nothing cached was left to lose
        [e] = conv["expired"]
        assert (e["request"], e["gap_seconds"], e["lifetime_seconds"]) == (2, float(gap), float(lifetime))
        assert e["lifetime"] == (f"{ttl} (anthropic: the breakpoints' ttl {ttl})" if ttl else
                                 "5m (anthropic: the default, no ttl on the breakpoints)")
        assert (conv["reused_tokens"], conv["lost_tokens"]) == (0, 0)
    else:
        assert [(f["code"], f["line"]) for f in doc["findings"]] == [("M101", 2)]
        assert conv["expired"] == [] and conv["lost_tokens"] > 0


@pytest.mark.parametrize("retention, gap, expired", [(None, 600, False), (None, 601, True), ("24h", 601, False),
                                                     ("24h", 86401, True)])
def test_openai_gap_against_ten_minutes_or_the_retention(cli, tmp_path, retention, gap, expired):
    system = {"role": "system", "content": "Now: 10:00:01.\n" + POLICY}
    first = {"model": "gpt-4.1", "messages": [system, {"role": "user", "content": "hi"}]}
    if retention:
        first["prompt_cache_retention"] = retention
    second = dict(first, messages=[dict(system, content="Now: 10:00:09.\n" + POLICY), {"role": "user", "content": "hi"},
                                   {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}])
    # ISO 8601 times, the gap computed here
    import datetime as dt

    t0 = dt.datetime(2026, 12, 1, 10, 0, 0, tzinfo=dt.timezone.utc)
    rows = [{"session": "s", "timestamp": t0.isoformat(), **first},
            {"session": "s", "timestamp": (t0 + dt.timedelta(seconds=gap)).isoformat().replace("+00:00", "Z"), **second}]
    doc = cli("conversation", "--output-format", "json", write(tmp_path, rows)).json()
    [conv] = doc["conversations"]
    assert bool(conv["expired"]) is expired
    assert [f["code"] for f in doc["findings"]] == ([] if expired else ["M101"])
    if expired:
        assert conv["expired"][0]["lifetime_seconds"] == (86400.0 if retention else 600.0)


def test_unknown_times_leave_the_gap_unknown(cli, tmp_path):
    first, second = anthropic_pair(None)
    rows = [{"conversation": "c", "time": "yesterday", **first}, {"conversation": "c", "time": 1_900_000_000, **second}]
    doc = cli("conversation", "--output-format", "json", write(tmp_path, rows)).json()
    assert doc["conversations"][0]["expired"] == [] and [f["code"] for f in doc["findings"]] == ["M101"]
