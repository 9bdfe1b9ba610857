"""The Trends section's further views: the recent weeks (``--trends-freq``), the months
seasonally adjusted beside the raw ones (or one line saying why not), the price tiers; each
table recomputed from the frames written beside the report, and in the workbook."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from report_html import parse

import realtyframes as rf
from chart_checks import outside, overlapping_ticks
from realtyframes.cli import main
from realtyframes.errors import QueryError
from realtyframes.report import (
    TRENDS_FREQS,
    MarketReportOptions,
    compute_market_report,
    load_market_frames,
    read_report_data,
    write_market_report,
)
from realtyframes.report.compute import covered_from
from realtyframes.report.trend_views import SA_COLUMNS, seasonal_view, weekly_view
from realtyframes.sandbox import RunningSandbox, start

DAY = "2026-06-29"  # a day before the shared sandboxes' clock (2026-06-30 00:00 UTC)


def _frames(url: str, cache: Path, **kw: Any) -> tuple[Any, MarketReportOptions]:
    options = MarketReportOptions(as_of=DAY, source="test sandbox", edition="analyst", **kw)
    with rf.Client(base_url=url, cache_dir=cache, progress=False) as client:
        return load_market_frames(client, options), options


def test_the_trends_view_option_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    """``trends_freq`` / ``--trends-freq``: one of 4W (default), W, M; anything else is refused
    before any request, naming the option and the allowed values."""
    assert MarketReportOptions().trends_freq == "4W" and TRENDS_FREQS == ("4W", "W", "M")
    with pytest.raises(QueryError, match=r"^trends_freq: unknown view '2W'; allowed: 4W, W, M$"):
        MarketReportOptions(trends_freq="2W")
    with pytest.raises(SystemExit) as exited:
        main(["report", "market", "--trends-freq", "2W"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert re.search(
        r"--trends-freq: invalid choice: '2W' \(choose from '?4W'?, '?W'?, '?M'?\)", err
    )
    with pytest.raises(SystemExit):
        main(["report", "market", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--trends-freq {4W,W,M}" in text and "rolling 4-week periods (4W" in text


def test_without_enough_covered_months_the_report_says_why_in_one_line(
    sandbox_url: str, tmp_path: Path
) -> None:
    """On the shared sandbox (3 years of history, so about 30 covered months) no seasonal
    adjustment is drawn: one notice with the analysis error's text, no empty chart or table;
    the weekly view is there, and none with ``trends_freq="M"``."""
    from realtyframes.report._render_views import seasonal_block, weekly_block

    frames, options = _frames(sandbox_url, tmp_path, cities=("Doral",))
    covered = covered_from(frames.listings)
    months, notice = seasonal_view(frames, options, covered)
    assert months is None and notice is not None
    assert re.match(
        r"the data cover 2\d complete months \(\w{3} 20\d\d to May 2026\), from 180 days", notice
    )
    assert (
        "the analysis says: seasonally_adjust(): 'homes_sold' needs at least 36 months (3 years)"
        in notice
    )
    report = compute_market_report(frames, options)
    assert report.seasonal is None and report.seasonal_notice == notice
    html = seasonal_block(report)
    assert html.count('<p class="notice" data-notice="seasonal">') == 1
    assert "<figure" not in html and "<table" not in html
    assert "No seasonally adjusted series: " in html
    assert report.weekly is not None and len(report.weekly) == 26
    assert 'data-table="trends_weekly"' in weekly_block(report)
    monthly = MarketReportOptions(as_of=DAY, cities=("Doral",), trends_freq="M", edition="analyst")
    assert weekly_view(frames, monthly, covered) is None


@pytest.fixture(scope="module")
def four_years(sandbox_as_of: dt.datetime) -> Iterator[str]:
    """A sandbox with 4 years of history (as the embedded one): 41 covered months."""
    with start(seed=7, listings=3000, as_of=sandbox_as_of, history_years=4) as sandbox:
        yield sandbox.url


@pytest.fixture(scope="module")
def written(four_years: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    frames, options = _frames(four_years, tmp_path_factory.mktemp("c"), trends_freq="W")
    report = compute_market_report(frames, options)
    files = write_market_report(report, tmp_path_factory.mktemp("r"), xlsx=True, workers=0)
    return report, files


@pytest.mark.slow
def test_the_seasonally_adjusted_table_is_recomputed_from_the_written_frames(
    written: tuple[Any, Any],
) -> None:
    """The seasonal table: rf.seasonally_adjust of rf.market_trends by month from the first
    whole month 180 days after the oldest listing's entry, on the frames written beside the
    report; the chart and its caption (the months and years it stands on) are on the page."""
    report, files = written
    data = read_report_data(files.html)
    oldest = pd.to_datetime(data["listings"]["OriginalEntryTimestamp"], utc=True).min()
    first = pd.offsets.MonthBegin().rollforward((oldest + pd.Timedelta(days=180)).ceil("D"))
    months = rf.market_trends(data["listings"], data["changes"], freq="M",
                              start=first.tz_convert(None).date(), end=report.options.day,
                              min_sample=report.options.min_sample)  # fmt: skip
    adjusted = rf.seasonally_adjust(months, list(SA_COLUMNS)).set_index("period_begin")
    html = files.html.read_text()
    checked = 0
    for (table, row, col), (shown, _) in parse(html).values.items():
        if table != "trends_seasonal":
            continue
        expected = adjusted.loc[pd.Timestamp(row.split(" ")[0] + "-01"), col]
        if pd.isna(expected):
            assert shown == "", (row, col)
        else:
            assert float(shown) == pytest.approx(float(expected)), (row, col)
        checked += 1
    assert checked == 12 * 6
    complete = int(adjusted["complete"].sum())
    assert complete >= 36
    assert f"on the {complete} complete months the data cover" in html
    assert f"{complete / 12:.1f} years; at least 3 are needed" in html
    assert 'data-chart="trends_seasonal"' in html and 'data-notice="seasonal"' not in html
    assert adjusted["homes_sold_sa"].notna().sum() == complete  # the month not over: no SA


@pytest.mark.slow
def test_the_weekly_view_and_the_new_charts_read_right(written: tuple[Any, Any]) -> None:
    """``trends_freq="W"``: plain weeks, recomputed from the written frames; its chart and the
    seasonal chart keep their text inside the figure, with no tick labels running together."""
    report, files = written
    data = read_report_data(files.html)
    weeks = report.weekly
    assert weeks.attrs["freq"] == "W" and len(weeks) == 26
    again = rf.market_trends(data["listings"], data["changes"], freq="W",
                             start=weeks["period_begin"].min().date(), end=report.options.day,
                             min_sample=report.options.min_sample).set_index("period_begin")  # fmt: skip
    checked = 0
    for (table, row, col), (shown, _) in parse(files.html.read_text()).values.items():
        if table == "trends_weekly":
            expected = again.loc[pd.Timestamp(row.removeprefix("week of ")[:10]), col]
            assert (
                float(shown) == pytest.approx(float(expected))
                if pd.notna(expected)
                else shown == ""
            )
            checked += 1
    assert checked == 26 * 6
    figures = {
        "weekly": rf.plot.trend_panels(weeks, ["new_listings", "homes_sold", "median_sale_price",
                                              "off_market_in_two_weeks", "price_cut_share"],
                                       ncols=3),
        "seasonal": rf.plot.seasonal_panels(report.seasonal, list(SA_COLUMNS)),
    }  # fmt: skip
    assert {n: outside(f) for n, f in figures.items()} == {"weekly": [], "seasonal": []}
    assert {n: overlapping_ticks(f) for n, f in figures.items()} == {"weekly": [], "seasonal": []}
    labels = [t.get_text() for ax in figures["weekly"].axes for t in ax.get_yticklabels()]
    shares = [t for t in labels if t.endswith("%")]
    for ax in figures["weekly"].axes:  # no two ticks of one axis read the same ("2% 2% 2%")
        texts = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert len(texts) == len(set(texts)), texts
    assert shares


@pytest.mark.slow
def test_the_new_tables_are_in_the_workbook(written: tuple[Any, Any]) -> None:
    """Each new table on its own sheet, in the report's number formats."""
    import openpyxl

    _, files = written
    book = openpyxl.load_workbook(files.workbook)
    for name in ("trends_weekly", "trends_seasonal", "trends_tiers"):
        assert name in book.sheetnames, name
    formats = {c.number_format for r in book["trends_tiers"].iter_rows(min_row=2) for c in r[1:]}
    assert {"#,##0", '"$"#,##0', "0.0%"} <= formats
    formats = {c.number_format for r in book["trends_weekly"].iter_rows(min_row=2) for c in r[1:]}
    assert {"#,##0", '"$"#,##0', "0.0%"} <= formats
    seasonal = [[c.value for c in r] for r in book["trends_seasonal"].iter_rows()]
    assert seasonal[0] == ["Month", "Sold", "Sold, SA", "New", "New, SA", "Median sale",
                           "Median sale, SA"]  # fmt: skip
    assert len(seasonal) == 13 and seasonal[-1][2] is None  # the month not over: no SA
    assert np.isfinite(float(seasonal[-2][2]))


def test_a_market_whose_sales_cannot_identify_the_price_index_says_why(
    start_sandbox: Callable[..., RunningSandbox], tmp_path: Path
) -> None:
    """Doral on a small sandbox with ``min_sample=1``: its few sales cannot identify the hedonic
    fit by quarter (rf.price_index raises; by month, Doral's sales on the shared sandbox did, and
    crashed the report before); the report computes without an index, and its note gives the
    analysis's reason."""
    sandbox = start_sandbox()
    frames, options = _frames(sandbox.url, tmp_path, cities=("Doral",), min_sample=1)
    report = compute_market_report(frames, options)
    assert report.index is None
    (note,) = [n for n in report.notes if n.startswith("Price index: none for this market: ")]
    assert "hedonic coefficients; a group needs more sales than coefficients" in note
