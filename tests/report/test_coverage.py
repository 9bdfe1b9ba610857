"""One coverage rule for every comparison with the past: a change against an earlier period is
shown only where the data cover that whole period (from 180 days after the oldest listing's
entry); else "—" and a note saying why. The default sandbox's history starts about 18 months
back, so the year-earlier window of a report falls in its build-up months.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from report_html import parse

import realtyframes as rf
from realtyframes.report import MarketReportOptions, compute_market_report, load_market_frames
from realtyframes.report.compute import COVERAGE_DAYS, covered_from
from realtyframes.report.render import render_market_report

DAY = "2026-06-30"


@pytest.fixture(scope="module")
def report(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    options = MarketReportOptions(as_of=DAY, source="test sandbox", cities=("Miami", "Doral"))
    cache = tmp_path_factory.mktemp("cache")
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        frames = load_market_frames(client, options)
    return compute_market_report(frames, options)


def test_no_year_over_year_where_the_data_do_not_cover_the_year_before(report: Any) -> None:
    listings = report.frames.listings
    oldest = pd.to_datetime(listings["OriginalEntryTimestamp"], utc=True).min()
    assert (
        report.covered_from == covered_from(listings) == oldest + pd.Timedelta(days=COVERAGE_DAYS)
    )
    year_earlier = report.options.window_start - pd.Timedelta(days=365)
    assert year_earlier < report.covered_from  # the sandbox's build-up months
    assert report.year_ago is None
    html = render_market_report(report)
    notes = re.findall(r'<div class="card-note">(.*?)</div>', html)
    assert len(notes) >= 5 and not [n for n in notes if "year earlier" in n]
    since = report.covered_from.date().isoformat()
    assert f"No change against a year earlier: the data cover this market from {since} on" in html
    # every YoY of the trends is blank: no month has a covered month a year before it
    assert report.trend_total["median_sale_price_yoy"].isna().all()
    first = pd.Timestamp(report.trend_total["period_begin"].min()).tz_localize("UTC")
    assert first >= report.covered_from  # the first month starts once the data cover it
    values = parse(html).values
    yoy = [v for (t, _, c), (v, _) in values.items() if t == "trends" and c.endswith("_yoy")]
    assert yoy and set(yoy) == {""}  # shown as "—", no value behind it
    assert "YoY is shown only where the data cover the whole month a year earlier" in html


def test_the_period_not_over_has_no_change_against_the_past(report: Any) -> None:
    total = report.trend_total
    partial = ~total["complete"].astype(bool)
    assert partial.sum() == 0 or total.loc[partial, "median_sale_price_yoy"].isna().all()
    raw = rf.market_trends(
        report.frames.listings, report.frames.changes, freq="M",
        start=total["period_begin"].min().date(), end=report.options.day,
        min_sample=report.options.min_sample,
    )  # fmt: skip
    for column in ("homes_sold_mom", "median_sale_price_mom"):
        if column in raw.columns:
            done = raw["complete"].astype(bool).to_numpy()
            np.testing.assert_array_equal(total.loc[done, column], raw.loc[done, column])
            assert total.loc[~done, column].isna().all()
