"""One coverage rule for every comparison with the past: a change against an earlier period is
shown only where the data cover that whole period (from 180 days after the oldest listing's
entry); else "—" and a note saying why. On a sandbox with one year of history the year-earlier
window of a report falls in its build-up months (no YoY, a note); on the default multi-year
sandbox every quarter of the quarterly trends table with a covered year before it has its YoY,
and the headline its change against a year earlier.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from report_html import parse, same

import realtyframes as rf
from realtyframes.report import MarketReportOptions, compute_market_report, load_market_frames
from realtyframes.report._html import esc
from realtyframes.report.compute import COVERAGE_DAYS, covered_from
from realtyframes.report.render import render_market_report
from realtyframes.sandbox import SandboxOptions, start

DAY = "2026-06-30"


def _report(url: str, cache: Any, **options: Any) -> Any:
    options = MarketReportOptions(as_of=DAY, source="test sandbox", edition="analyst", **options)
    with rf.Client(base_url=url, cache_dir=cache, progress=False) as client:
        frames = load_market_frames(client, options)
    return compute_market_report(frames, options)


@pytest.fixture(scope="module")
def short_history(sandbox_as_of: Any) -> Iterator[str]:
    """A sandbox whose history starts a year before the report's day."""
    with start(seed=7, listings=3000, as_of=sandbox_as_of, history_years=1) as sandbox:
        yield sandbox.url


@pytest.fixture(scope="module")
def report(short_history: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The report of two cities on one year of history."""
    cache = tmp_path_factory.mktemp("cache")
    return _report(short_history, cache, cities=("Miami", "Doral"))


@pytest.fixture(scope="module")
def multiyear(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The whole market's report on the shared sandbox: the default history (3 years)."""
    assert SandboxOptions().history_years == 3
    return _report(sandbox_url, tmp_path_factory.mktemp("cache"))


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
    # every YoY of the trends is blank: no month or quarter has a covered one a year before it
    assert report.trend_total["median_sale_price_yoy"].isna().all()
    assert report.quarters["median_sale_price_yoy"].isna().all()
    first = pd.Timestamp(report.trend_total["period_begin"].min()).tz_localize("UTC")
    assert first >= report.covered_from  # the first month starts once the data cover it
    values = parse(html).values
    yoy = [v for (t, _, c), (v, _) in values.items()
           if t == "trends_quarterly" and c.endswith("_yoy")]  # fmt: skip
    assert yoy and set(yoy) == {""}  # shown as "—", no value behind it
    assert "YoY: against the same quarter a year earlier, shown only where the data cover" in html


def test_the_period_not_over_has_no_change_against_the_past(report: Any) -> None:
    total = report.trend_total
    partial = ~total["complete"].astype(bool)
    assert partial.sum() == 0 or total.loc[partial, "median_sale_price_yoy"].isna().all()
    raw = rf.market_trends(
        report.frames.listings, report.frames.history, freq="M",
        start=total["period_begin"].min().date(), end=report.options.day,
        min_sample=report.options.min_sample,
    )  # fmt: skip
    done = raw["complete"].astype(bool).to_numpy()
    for column in ("homes_sold_mom", "median_sale_price_mom"):
        np.testing.assert_array_equal(total.loc[done, column], raw.loc[done, column])
        assert total.loc[~done, column].isna().all()


def test_a_partial_period_loses_its_changes_and_only_it() -> None:
    """The rule on a frame whose last month is not over (the sandbox reports may end on a whole
    month): its MoM and YoY are blanked, the whole months keep theirs, the counts stay."""
    from realtyframes.report.compute import _no_partial_yoy

    trends = pd.DataFrame({"complete": [True, True, False], "homes_sold": [10, 12, 4],
                           "homes_sold_mom": [np.nan, 0.2, -0.67],
                           "homes_sold_yoy": [0.1, 0.3, -0.5],
                           "months_of_supply": [4.0, 4.2, 9.9]})  # fmt: skip
    trends.attrs = {"freq": "M"}
    out = _no_partial_yoy(trends)
    assert out["homes_sold_mom"].iloc[1] == 0.2
    assert out["homes_sold_yoy"].iloc[:2].tolist() == [0.1, 0.3]
    assert out[["homes_sold_mom", "homes_sold_yoy"]].iloc[2].isna().all()
    assert out["homes_sold"].tolist() == [10, 12, 4] and out.attrs == {"freq": "M"}
    # months of supply of the period so far stays (market_trends takes its days so far)
    assert out["months_of_supply"].tolist() == [4.0, 4.2, 9.9]
    assert trends["homes_sold_yoy"].iloc[2] == -0.5  # the caller's frame is left alone


def test_the_multiyear_sandbox_shows_yoy_for_every_quarter_with_a_covered_year_before(
    multiyear: Any,
) -> None:
    report = multiyear
    listings, changes = report.frames.listings, report.frames.history
    covered = covered_from(listings)
    assert report.covered_from == covered
    assert covered is not None and covered < pd.Timestamp("2024-01-01", tz="UTC")
    # the headline: the whole year-earlier window is covered, so each card says the change
    assert report.year_ago is not None
    html = render_market_report(report)
    notes = re.findall(r'<div class="card-note">(.*?)</div>', html)
    assert sum("vs a year earlier" in n for n in notes) >= 4
    assert "No change against" not in html
    # the quarterly table: every quarter over whose quarter a year earlier is covered has its
    # YoY, as rf.market_trends computes it on the same frames from the first covered quarter on
    first = pd.offsets.QuarterBegin(startingMonth=1).rollforward(covered.ceil("D")).date()
    raw = rf.market_trends(
        listings, changes, freq="Q", start=max(first, report.quarters["period_begin"].min().date()),
        end=report.options.day, min_sample=report.options.min_sample,
    ).set_index("period_begin")  # fmt: skip
    months = report.trend_total["period_begin"]
    values = parse(html).values
    shown = 0
    for _, row in report.quarters.iterrows():
        quarter = row["period_begin"]
        if quarter < months.min() - pd.offsets.QuarterBegin(startingMonth=1):
            continue  # before the months shown: in the frame for its YoY, not in the table
        year_before = pd.Timestamp(quarter).tz_localize("UTC") - pd.DateOffset(years=1)
        label = f"{quarter.year} Q{quarter.quarter}"
        if not row["complete"] or year_before < covered:
            assert pd.isna(row["median_sale_price_yoy"])  # not over, or no covered year before
            continue
        for column in ("median_sale_price_yoy", "median_sale_ppsf_yoy", "homes_sold_yoy"):
            expected = raw.loc[quarter, column]
            assert not pd.isna(expected), (quarter, column)
            assert row[column] == pytest.approx(expected, rel=1e-12)
            value, text = values[("trends_quarterly", label, column)]
            assert same(value, expected) and text not in ("", "—")
        shown += 1
    assert shown >= 6  # of the eight quarters shown (the data cover this sandbox from 2023-12)
    # the monthly table has no YoY column: a month's median stands on too few sales to compare
    assert not [c for (t, _, c) in values if t == "trends" and c.endswith("_yoy")]


def test_the_multiyear_period_not_over_has_no_change_against_the_past(multiyear: Any) -> None:
    test_the_period_not_over_has_no_change_against_the_past(multiyear)


def test_a_market_too_thin_for_a_price_index_says_so(
    short_history: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No month with ``min_sample`` sales: no base period, so no index; the report says why (the
    reason rf.price_index gives) and draws no empty index chart."""
    thin = _report(short_history, tmp_path_factory.mktemp("cache"), cities=("Doral",),
                   min_sample=1000)  # fmt: skip
    assert thin.index is None
    (note,) = [n for n in thin.notes if n.startswith("Price index:")]
    assert "no base period with min_sample=1000" in note
    html = render_market_report(thin, workers=0)
    assert f'<p class="notice">{esc(note)}</p>' in html
    assert 'data-chart="price_index"' not in html
    assert 'data-table="price_index"' not in html
