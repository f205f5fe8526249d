"""Issue 18 item 5: `[tool.promptlint.cost]` turns lost prefill tokens into dollars or
GPU-seconds a day. The baseline rows' token losses are the test's own (a direct `tokenizers`
encode of its own render, as in test_baseline.py); every amount is computed here by hand from
the configured prices or the shipped table's entry."""

from __future__ import annotations

import json
import shutil

import pytest

from test_baseline import CLEAN, STAMP_FIRST, blocks_per_request, repo
from test_markdown_report import tables

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")

R = 20_000  # requests per day


def configure(root, cost: str) -> None:
    (root / "promptlint.toml").write_text('tokenizer = "tokenizer.json"\n\n[cost]\n' + cost, encoding="utf-8")


def run(cli, root, *args):
    return cli("check", "--no-cache", *args, cwd=root)


def test_explicit_prices_price_the_regression_and_the_finding(tmp_path, qwen, cli):
    root = repo(tmp_path, CLEAN)
    (root / "prompts" / "support.j2").write_text(STAMP_FIRST, encoding="utf-8")
    configure(root, f"requests-per-day = {R}\nprice-per-mtok = 3.0\ncached-price-per-mtok = 0.3\n"
                    "prefill-tokens-per-second = 8000\n")
    lost = (blocks_per_request(qwen, CLEAN) - blocks_per_request(qwen, STAMP_FIRST)) * 16
    r = run(cli, root, "--baseline", "HEAD", "--output-format", "json")
    assert r.code == 1, r.err
    doc = r.json()
    [row] = doc["baseline"]["templates"]
    assert row["lost_tokens"] == lost
    assert row["cost"] == {
        "tokens_per_request": lost, "requests_per_day": R, "usd_per_day": pytest.approx(lost * R * 2.7 / 1e6),
        "gpu_seconds_per_day": pytest.approx(lost * R / 8000), "priced_as": "configured prices",
    }
    [m101] = doc["findings"]
    assert m101["cost"]["tokens_per_request"] == m101["lost_tokens"] > 0
    assert m101["cost"]["usd_per_day"] == pytest.approx(m101["lost_tokens"] * R * 2.7 / 1e6)
    assert m101["cost"]["gpu_seconds_per_day"] == pytest.approx(m101["lost_tokens"] * R / 8000)

    full = run(cli, root, "--baseline", "HEAD").out
    dollars = f"${m101['lost_tokens'] * R * 2.7 / 1e6:,.2f}/day"
    assert f"  cost: {m101['lost_tokens']:,} tokens/request × {R:,} requests/day = {dollars}" in full
    assert f"{lost:,} prefill tokens lost per request; {lost:,} tokens/request" in full


def test_a_provider_and_model_from_the_dated_table(tmp_path, cli):
    root = repo(tmp_path, STAMP_FIRST)
    configure(root, f'requests-per-day = {R}\nprovider = "anthropic"\nmodel = "claude-sonnet-4-5-20250929"\n')
    table = json.loads((__import__("promptlint.arithmetic.cost").arithmetic.cost._PRICES_FILE).read_text(encoding="utf-8"))
    price = table["anthropic"]["models"]["claude-sonnet-4-5"]  # the longest listed prefix of the dated name
    [m101] = run(cli, root, "--output-format", "json").json()["findings"]
    assert m101["cost"]["usd_per_day"] == pytest.approx(m101["lost_tokens"] * R * (price["input"] - price["cached"]) / 1e6)
    assert m101["cost"]["priced_as"] == f"anthropic claude-sonnet-4-5, prices as of {table['anthropic']['as_of']}"
    assert "gpu_seconds_per_day" not in m101["cost"]


def test_a_price_table_file_adds_a_model(tmp_path, cli):
    root = repo(tmp_path, STAMP_FIRST)
    (root / "prices.json").write_text(json.dumps({"openai": {"as_of": "2030-01", "models": {
        "house-model": {"input": 10.0, "cached": 1.0}}}}), encoding="utf-8")
    configure(root, f'requests-per-day = {R}\nprovider = "openai"\nmodel = "house-model"\nprice-table = "prices.json"\n')
    [m101] = run(cli, root, "--output-format", "json").json()["findings"]
    assert m101["cost"]["usd_per_day"] == pytest.approx(m101["lost_tokens"] * R * 9.0 / 1e6)
    assert m101["cost"]["priced_as"] == "openai house-model, prices as of 2030-01"


def test_markdown_shows_the_cost_columns(tmp_path, cli):
    root = repo(tmp_path, CLEAN)
    (root / "prompts" / "support.j2").write_text(STAMP_FIRST, encoding="utf-8")
    configure(root, f"requests-per-day = {R}\nprice-per-mtok = 2.0\ncached-price-per-mtok = 0.5\n")
    doc = run(cli, root, "--baseline", "HEAD", "--output-format", "json").json()
    md = run(cli, root, "--baseline", "HEAD", "--output-format", "markdown").out
    baseline_table, findings_table = tables(md)  # the rendered text of the cells ($, not \\$)
    assert baseline_table[0][-1] == "Cost"
    row = doc["baseline"]["templates"][0]
    assert baseline_table[1][-1] == f"${row['lost_tokens'] * R * 1.5 / 1e6:,.2f}/day"
    assert findings_table[0][6:8] == ["Tokens per request", "Cost"]
    m101 = doc["findings"][0]
    assert findings_table[1][6:8] == [f"{m101['lost_tokens']:,}", f"${m101['lost_tokens'] * R * 1.5 / 1e6:,.2f}/day"]


def test_without_the_table_nothing_changes(tmp_path, cli):
    root = repo(tmp_path, STAMP_FIRST)
    doc = run(cli, root, "--output-format", "json").json()
    assert doc["findings"] and all("cost" not in f for f in doc["findings"])
    assert "cost:" not in run(cli, root).out


@pytest.mark.parametrize("cost, says", [
    (f"requests-per-day = {R}\n", "say what a token costs"),
    (f'requests-per-day = {R}\nprovider = "openai"\nprice-per-mtok = 1.0\ncached-price-per-mtok = 0.1\n', "not both"),
    (f"requests-per-day = {R}\nprice-per-mtok = 1.0\n", "needs its pair"),
    (f'requests-per-day = {R}\nprovider = "openai"\nmodel = "no-such-model"\n', "no price for openai model 'no-such-model'"),
    ('provider = "openai"\n', "requests-per-day"),
    (f"requests-per-day = {R}\nprefill-tokens-per-second = nan\n", "finite"),
])
def test_a_bad_cost_table_is_one_line_naming_the_file(tmp_path, cli, cost, says):
    root = repo(tmp_path, STAMP_FIRST)
    configure(root, cost)
    r = run(cli, root)
    assert r.code == 2 and says in r.err and "promptlint.toml" in r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
