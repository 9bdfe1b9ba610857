"""One question, one answer: the report, the MCP server's tools and the Python API read a market
"as of" a day by one rule (``realtyframes.analysis.market_as_of``), so they give the same figures
for the same market and day."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import realtyframes as rf
from realtyframes.analysis import market_as_of
from realtyframes.mcp_server import TOOLS
from realtyframes.report import MarketReportOptions, compute_market_report, load_market_frames
from realtyframes.sandbox import RunningSandbox

CITY = "Miami Beach"
FIGURES = ("homes_sold", "median_sale_price", "active_listings", "new_listings")


def _mcp_row(client: rf.Client, **arguments: object) -> dict[str, object]:
    result = TOOLS["market_summary"].run(client, {"City": CITY, **arguments})
    (row,) = [r for r in result["rows"] if r["City"] == CITY]
    return row


@pytest.mark.parametrize("days_back", [0, 120])
def test_report_mcp_and_python_give_the_same_figures(
    sandbox: RunningSandbox, sandbox_as_of: dt.datetime, tmp_path: Path, days_back: int
) -> None:
    """The sandbox's day (the MCP tool's default, no as_of given) and a day 120 days earlier (an
    as_of each is given; the report rebuilds the market of that day from the history)."""
    day = (sandbox_as_of - dt.timedelta(days=days_back)).date()
    with rf.Client(sandbox.url, cache_dir=tmp_path, progress=False) as client:
        options = MarketReportOptions(as_of=day, cities=(CITY,))
        report = compute_market_report(load_market_frames(client, options), options)
        reported = report.comparison[CITY]
        asked = {} if days_back == 0 else {"as_of": day.isoformat()}
        tool = _mcp_row(client, **asked)
        market = client.sync_listings(City=CITY)
        at = market_as_of(market, client.listing_history(City=CITY), asked.get("as_of"))
        python = rf.market_summary(at, as_of=at.attrs["as_of"]).loc[CITY]
    for figure in FIGURES:
        assert float(tool[figure]) == pytest.approx(float(reported[figure]), nan_ok=True), figure
        assert float(python[figure]) == pytest.approx(float(reported[figure]), nan_ok=True), figure
    assert reported["homes_sold"] > 0
