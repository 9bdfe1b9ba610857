"""The report's v2 promises: the workbook reads back equal, the manifest is complete, no median
below the minimum sample, one price-cut definition labelled per table, and ``--as-of`` reproduces
an earlier run's headline numbers."""

from __future__ import annotations

import datetime as dt
import json
import re
import warnings
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pandas as pd
import pytest
from report_html import parse

import realtyframes as rf
from chart_checks import outside, overlapping_ticks
from realtyframes.analysis import SAMPLE_SIZE_OF
from realtyframes.errors import DataQualityWarning
from realtyframes.report import (
    MarketReportOptions,
    compute_market_report,
    load_market_frames,
    read_report_data,
    write_market_report,
)
from realtyframes.report._render_trends import index_chart
from realtyframes.report.excel import excel_ready
from realtyframes.report.manifest import frame_hash

DAY = "2026-06-29"  # a day before the shared sandboxes' clock (2026-06-30 00:00 UTC)


def _report(url: str, cache: Path, out: Path, **kw: Any) -> Any:
    options = MarketReportOptions(as_of=DAY, source="test sandbox", edition="analyst", **kw)
    with rf.Client(base_url=url, cache_dir=cache, progress=False) as client:
        frames = load_market_frames(client, options)
    report = compute_market_report(frames, options)
    return report, write_market_report(report, out, xlsx=True)


@pytest.fixture(scope="module")
def written(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    with rf.Client(base_url=sandbox_url, cache=False, progress=False) as client:
        sold = client.listings(City="Miami", Status="Closed", PropertyType="Residential")
    subject = str(sold.sort_values(["CloseDate", "ListingId"])["ListingId"].iloc[-1])
    return _report(sandbox_url, tmp_path_factory.mktemp("c"), tmp_path_factory.mktemp("r"),
                   cities=("Miami", "Doral", "Miami Beach"), comps=(subject,))  # fmt: skip


class _Grids(HTMLParser):
    """Every ``<table data-table=ID>`` of a page as a grid of what a cell holds: its exact
    ``data-value`` where it has one, else its text."""

    def __init__(self) -> None:
        super().__init__()
        self.grids: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._value: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and a.get("data-table"):
            self._table = str(a["data-table"])
            self.grids[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.grids[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell, self._value = [], a.get("data-value")
        elif tag == "span" and self._cell is not None:
            self._cell = None  # a note after the value ("n=3"): not part of it

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table is not None and self.grids[self._table]:
            text = "".join(self._cell or []).strip()
            self.grids[self._table][-1].append(self._value if self._value is not None else text)
            self._cell, self._value = None, None
        elif tag == "table":
            self._table = None


def _same(cell: Any, shown: str) -> bool:
    """A workbook cell against the page's exact value (or text)."""
    if cell is None:
        return shown in ("", "—")
    if isinstance(cell, dt.datetime):
        return pd.Timestamp(shown).tz_convert("UTC").tz_localize(None) == pd.Timestamp(cell)
    if isinstance(cell, int | float):
        return float(shown) == pytest.approx(float(cell), rel=1e-12)
    return str(cell) == shown


@pytest.mark.slow
def test_the_workbook_holds_every_table_the_page_shows(written: tuple[Any, Any]) -> None:
    """Sheet by sheet, the report's own tables (headline, comparison, subtypes, trends by month
    and by quarter, the price index, price drops, comps) equal the page's cells, each in its kind's number format;
    then the input frames, then Definitions as plain text. Comps are written beside the report."""
    import openpyxl

    report, files = written
    html = files.html.read_text(encoding="utf-8")
    grids = _Grids()
    grids.feed(html)
    book = openpyxl.load_workbook(files.workbook)
    tables = [name for name in book.sheetnames if name in grids.grids or name == "headline"]
    assert tables[0] == "headline" and book.sheetnames[: len(tables)] == tables
    assert {"comparison", "subtypes", "trends", "trends_quarterly", "price_index", "drop_summary",
            "top_drops", "trends_weekly", "trends_tiers"} <= set(tables)  # fmt: skip
    assert not {"traffic", "funnel", "lead_sources", "contacts"} & set(book.sheetnames)
    assert any(t.startswith("comps_") for t in tables)
    for name in tables[1:]:
        rows = [[c.value for c in r] for r in book[name].iter_rows()]
        grid = grids.grids[name]
        assert len(rows) == len(grid), name
        for got, want in zip(rows, grid, strict=True):
            assert len(got) == len(want), (name, want)
            bad = [(g, w) for g, w in zip(got, want, strict=True) if not _same(g, w)]
            assert not bad, (name, bad[:3])
    headline = parse(html).values
    sheet = [[c.value for c in r] for r in book["headline"].iter_rows()][1:]
    shown = [v for (t, _, _), (v, _) in headline.items() if t == "headline"]
    assert [row[1] for row in sheet] == [
        pytest.approx(float(v), rel=1e-12) if v else None for v in shown
    ]
    formats = {c.number_format for r in book["comparison"].iter_rows(min_row=2) for c in r[1:]}
    assert {"#,##0", '"$"#,##0', "0.0%"} <= formats  # counts, prices and shares as such
    assert book.sheetnames[len(tables) :] == [*read_report_data(files.html), "Definitions"]
    defs = [str(c.value) for r in book["Definitions"].iter_rows() for c in r if c.value]
    assert not [d for d in defs if "**" in d or "`" in d]  # plain text, not Markdown
    (subject,) = report.options.comps
    stem = files.html.name.removesuffix(".html")
    comps = pd.read_parquet(files.html.with_name(f"{stem}.comps-{subject}.parquet"))
    assert len(comps) == len(report.comps[subject]) > 0


@pytest.mark.slow
def test_the_workbook_reads_back_equal_to_the_parquet_frames(written: tuple[Any, Any]) -> None:
    _, files = written
    assert files.workbook is not None and files.workbook.name.endswith(".xlsx")
    frames = read_report_data(files.html)
    sheets = pd.read_excel(files.workbook, sheet_name=None)
    assert list(sheets)[-len(frames) - 1 :] == [*frames, "Definitions"]  # after the shown tables
    for name, frame in frames.items():
        expected = excel_ready(frame)
        got = sheets[name]
        assert list(got.columns) == list(expected.columns), name
        assert len(got) == len(expected), name
        for column in expected.columns:
            left, right = got[column], expected[column]
            if pd.api.types.is_numeric_dtype(right) and not pd.api.types.is_bool_dtype(right):
                pd.testing.assert_series_equal(
                    pd.to_numeric(left), right.astype("float64"), check_names=False,
                    check_dtype=False, rtol=1e-9,
                )  # fmt: skip
            elif pd.api.types.is_datetime64_any_dtype(right):
                assert (
                    (pd.to_datetime(left).fillna(pd.NaT) == right).where(right.notna(), True).all()
                )
            else:
                want = right.astype("string").fillna("")
                assert (left.astype("string").fillna("") == want).all(), (name, column)
    definitions = sheets["Definitions"]
    assert {"homes_sold", "median_sale_price", "pending_listings"} <= set(definitions["metric"])
    assert definitions["section"].str.contains("Market trends").any()


@pytest.mark.slow
def test_the_manifest_is_complete(written: tuple[Any, Any]) -> None:
    report, files = written
    manifest = json.loads(files.manifest.read_text())
    assert manifest["as_of"] == DAY and manifest["first_run"] is True
    assert manifest["scope"] == {"cities": ["Miami", "Doral", "Miami Beach"],
                                 "property_types": ["Residential"], "by": "City"}  # fmt: skip
    assert manifest["parameters"]["min_sample"] == 5 and manifest["realtyframes"] == rf.__version__
    frames = report.frames.data_frames()
    assert set(manifest["data"]) == set(frames) == set(manifest["rows"])
    for name, frame in frames.items():
        assert manifest["rows"][name] == len(frame)
        assert manifest["data"][name]["sha256"] == frame_hash(frame)
        for file_name in manifest["data"][name]["files"].values():
            assert (files.html.parent / file_name).exists()
    assert manifest["quarantined"] == {"listings": 0}
    assert files.manifest in files.all()


@pytest.mark.slow
def test_no_median_is_shown_below_the_minimum_sample(written: tuple[Any, Any]) -> None:
    report, files = written
    values = parse(files.html.read_text()).values
    checked = thin = 0
    for table, frame in (("comparison", report.comparison), ("subtypes", report.subtypes)):
        for metric, count in SAMPLE_SIZE_OF.items():
            for col in frame.columns:
                shown, text = values[(table, metric, str(col))]
                n = frame.loc[count, col]
                if pd.isna(n) or n < 5:
                    assert shown == "" and f"n={n}" in text, (table, metric, col)
                    thin += 1
                else:
                    assert shown != "" or pd.isna(frame.loc[metric, col])
                checked += 1
    assert checked > 50 and thin > 0  # the subtypes have thin columns in the sandbox


def test_one_price_cut_definition_each_table_labelled() -> None:
    from realtyframes.report._render_market import SHORT_LABELS

    comparison = SHORT_LABELS["pct_active_with_price_drop"]
    assert "last price change was a cut" in comparison and "any time" in comparison
    source = Path(rf.report.__file__).with_name("_render_changes.py").read_text()
    assert "Share of active cut in the window" in source and "not windowed" in source


@pytest.mark.slow
def test_as_of_reproduces_an_earlier_runs_headline(start_sandbox, tmp_path: Path) -> None:
    sandbox = start_sandbox(listings=1500)
    cache = tmp_path / "cache"
    _first, files = _report(sandbox.url, cache, tmp_path / "first")
    httpx.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 30}).raise_for_status()
    again, files_again = _report(sandbox.url, cache, tmp_path / "again")
    assert again.frames.since_last is not None and len(again.frames.since_last) > 0  # it moved

    def headline(path: Path) -> dict[str, str]:
        values = parse(path.read_text()).values
        return {row: v for (table, row, _), (v, _) in values.items() if table == "headline"}

    shown, reproduced = headline(files.html), headline(files_again.html)
    assert set(shown) >= {"active_listings", "new_listings", "homes_sold", "median_sale_price",
                          "median_dom", "months_of_supply", "price_drops"}  # fmt: skip
    for key in ("active_listings", "new_listings", "homes_sold", "median_sale_price",
                "median_dom", "months_of_supply", "price_drops"):  # fmt: skip
        assert reproduced[key] == shown[key], key


@pytest.mark.slow
def test_no_chart_text_leaves_its_figure(written: tuple[Any, Any]) -> None:
    report, _ = written
    o = report.options
    shown = report.trends[report.trends["City"].isin(report.markets)]
    shown.attrs = dict(report.trends.attrs)
    listings = report.frames.listings
    figures = {
        "inventory_trend": rf.plot.inventory_trend(report.trend_total),
        "market_trend": rf.plot.market_trend(shown, "median_sale_price"),
        "market_metrics": rf.plot.market_metrics(
            report.summary.reindex(pd.Index(report.markets, name=o.by))
        ),
        "top_price_drops": rf.plot.top_price_drops(report.drops, top_n=o.top_drops),
        "price_drop_distribution": rf.plot.price_drop_distribution(report.drops),
        "price_drop_map": rf.plot.listing_map(report.drops, color="drop_pct", market=listings),
        "market_map": rf.plot.listing_map(listings[listings["StandardStatus"] == "Active"]),
        "ppsf_boxplot": rf.plot.ppsf_boxplot(listings, by=o.by, markets=report.markets),
    }
    quarters = report.quarters_by[report.quarters_by["City"].isin(report.markets)]
    quarters.attrs = dict(report.quarters_by.attrs)
    figures["trend_panels"] = rf.plot.trend_panels(
        quarters, ["median_sale_price", "median_sale_ppsf", "homes_sold", "new_listings",
                   "months_of_supply", "median_dom"], highlight=list(report.markets)[:4],
    )  # fmt: skip
    figures["price_index"] = index_chart(report.index, "Closed sales", "2024 Q1 to 2026 Q2")
    if report.traffic is not None:
        figures["top_sources"] = rf.plot.top_sources(report.traffic)
        figures["traffic_timeline"] = rf.plot.traffic_timeline(report.traffic)
        figures["traffic_panels"] = rf.plot.traffic_panels(report.traffic)
    from matplotlib.figure import Figure

    control = Figure(figsize=(4, 3))
    control.text(1.05, 0.5, "a label past the right edge")
    assert outside(control) == ["right"]  # the check can fail
    cut = {name: outside(fig) for name, fig in figures.items()}
    assert {name: texts for name, texts in cut.items() if texts} == {}
    crowded = Figure(figsize=(3, 2))
    crowded.add_subplot().set_xticks(range(12), [f"label {i:02d}" for i in range(12)])
    assert overlapping_ticks(crowded)  # the check can fail
    closed = listings[listings["StandardStatus"].astype("str") == "Closed"]
    subject = str(closed["ListingId"].iloc[0])
    figures["comps"] = rf.plot.comps(rf.comps(listings, subject, radius_km=3, months=12))
    run_together = {name: overlapping_ticks(fig) for name, fig in figures.items()}
    assert {name: pairs for name, pairs in run_together.items() if pairs} == {}


@pytest.mark.slow
def test_the_trend_and_change_tables_are_recomputed_from_the_written_frames(
    written: tuple[Any, Any],
) -> None:
    report, files = written
    data = read_report_data(files.html)
    values = parse(files.html.read_text()).values
    options = report.options
    trends = rf.market_trends(
        data["listings"], data["changes"], freq="M", end=options.day,
        start=report.trend_total["period_begin"].min().date(), min_sample=options.min_sample,
    ).set_index("period_begin")  # fmt: skip
    checked = 0
    for (table, row, col), (shown, _) in values.items():
        if table != "trends":
            continue
        month = pd.Timestamp(row.split(" ")[0] + "-01")
        expected = trends.loc[month, col]
        if row.endswith("(so far)") and col.endswith(("_yoy", "_mom")):
            expected = np.nan  # the month not over: no change against the past (its months of
            # supply stay: rf.market_trends takes them over the days it has had, #27)
        if pd.isna(expected):
            assert shown == "", (row, col)
        else:
            assert float(shown) == pytest.approx(float(expected)), (row, col)
        checked += 1
    assert checked >= 12 * 8
    assert "data-first-run" in files.html.read_text()  # the first run says so


@pytest.mark.slow
def test_the_quarterly_and_index_tables_are_recomputed_from_the_written_frames(
    written: tuple[Any, Any],
) -> None:
    """The quarterly table is rf.market_trends(freq="Q") and the price index table is
    rf.price_index(freq="Q") on the frames written beside the report, beside each quarter's
    median sale price and its n (the quarterly table's) and that median over the base
    quarter's."""
    report, files = written
    data = read_report_data(files.html)
    values = parse(files.html.read_text()).values
    options = report.options
    quarters = rf.market_trends(
        data["listings"], data["changes"], freq="Q", end=options.day,
        start=report.quarters["period_begin"].min().date(), min_sample=options.min_sample,
    ).set_index("period_begin")  # fmt: skip
    first_quarter = report.quarters["period_begin"].min()
    listings = data["listings"]
    closed = pd.to_datetime(listings["CloseDate"], utc=True).dt.tz_localize(None)
    sales = listings[
        (closed >= first_quarter).to_numpy() & (closed.dt.date <= options.day).to_numpy()
    ]
    with warnings.catch_warnings():  # a thin base: the report carries the warning as a note
        warnings.simplefilter("ignore", DataQualityWarning)
        index = rf.price_index(sales, freq="Q", min_sample=options.min_sample)
    index = index.set_index("period_begin")
    base = quarters.loc[pd.Timestamp(index.attrs["base"]), "median_sale_price"]
    covered = report.covered_from
    checked = {"trends_quarterly": 0, "price_index": 0}
    for (table, row, col), (shown, _) in values.items():
        if table == "trends_quarterly":
            year, quarter = row.split(" ")[0], row.split(" ")[1]
            period = pd.Timestamp(f"{year}-{3 * int(quarter[1]) - 2:02d}-01")
            expected = quarters.loc[period, col]
            if row.endswith("(so far)") and col.endswith("_yoy"):
                expected = np.nan  # the quarter not over has no change against the past
            back = {"_yoy": pd.DateOffset(years=1), "_mom": pd.DateOffset(months=3)}
            for suffix, offset in back.items():  # nor against a quarter the data do not cover
                if col.endswith(suffix) and period.tz_localize("UTC") - offset < covered:
                    expected = np.nan
        elif table == "price_index":
            year, quarter = row.split(" ")[0], row.split(" ")[1]
            period = pd.Timestamp(f"{year}-{3 * int(quarter[1]) - 2:02d}-01")
            median = {"median_sale_price": "median_sale_price", "median_n": "median_sale_price_n"}
            if col == "median_index":
                expected = 100 * quarters.loc[period, "median_sale_price"] / base
            elif col in median:
                expected = quarters.loc[period, median[col]]
            else:
                expected = index.loc[period, col]
        else:
            continue
        if pd.isna(expected):
            assert shown == "", (table, row, col)
        else:
            assert float(shown) == pytest.approx(float(expected)), (table, row, col)
        checked[table] += 1
    assert checked["trends_quarterly"] >= 8 * 8 and checked["price_index"] >= 8 * 7
    assert not any(t == "price_index" and re.match(r"\d{4}-\d{2}", r) for t, r, _ in values)
    rows = list(dict.fromkeys(r for t, r, _ in values if t == "price_index"))
    period = f"{rows[0].split(' (')[0]} to {rows[-1].split(' (')[0]}"  # the table's quarters
    page = files.html.read_text()
    figure = page[page.index('data-chart="price_index"') :].split("</figure>")[0]
    assert f"Closed sales, Miami, Doral, Miami Beach (Residential), {period}" in figure
    # 100 at the best-covered quarter of the first year shown (docs/metrics.md, "Base period")
    assert index.attrs["base"] == index["n"].iloc[:4].idxmax()


@pytest.mark.slow
def test_the_rolling_weeks_and_the_tiers_are_recomputed_from_the_written_frames(
    written: tuple[Any, Any],
) -> None:
    """The 4-week table is rf.market_trends(freq="4W") and the tier table rf.market_trends(
    freq="Q", tiers=True)'s latest complete quarter, on the frames written beside the report; a
    tier's YoY only where the year-earlier quarter is covered and both have min_sample sales.
    On 3 years of history no seasonal adjustment: one notice with the error's text."""
    report, files = written
    data = read_report_data(files.html)
    html = files.html.read_text()
    values = parse(html).values
    o = report.options
    listings, changes = data["listings"], data["changes"]
    oldest = pd.to_datetime(listings["OriginalEntryTimestamp"], utc=True).min()
    covered = (oldest + pd.Timedelta(days=180)).tz_convert(None)
    weeks = rf.market_trends(listings, changes, freq="4W", end=o.day, min_sample=o.min_sample,
                             start=report.weekly["period_begin"].min().date()).set_index(
                                 "period_begin")  # fmt: skip
    quarters = rf.market_trends(listings, changes, freq="Q", end=o.day, tiers=True,
                                min_sample=o.min_sample,
                                start=covered.ceil("D").date())  # fmt: skip
    done = quarters[quarters["complete"].astype(bool)]
    latest = done[done["period_begin"] == done["period_begin"].max()].set_index("tier")
    year_ago = latest["period_begin"].iloc[0] - pd.DateOffset(years=1)
    earlier = quarters[quarters["period_begin"] == year_ago].set_index("tier")
    checked = {"trends_weekly": 0, "trends_tiers": 0}
    for (table, row, col), (shown, _) in values.items():
        if table == "trends_weekly":
            expected = weeks.loc[pd.Timestamp(row[:10]), col]
            assert bool(weeks.loc[pd.Timestamp(row[:10]), "complete"]) != row.endswith("(so far)")
        elif table == "trends_tiers":
            tier = row.split(" ")[0].lower()
            expected = latest.loc[tier, col]
            if col.endswith("_yoy"):
                n = [latest.loc[tier, "median_sale_price_n"], np.nan]
                if tier in earlier.index and year_ago >= covered:
                    n[1] = earlier.loc[tier, "median_sale_price_n"]
                if not min(n) >= o.min_sample:
                    expected = np.nan
        else:
            continue
        if pd.isna(expected):
            assert shown == "", (table, row, col)
        else:
            assert float(shown) == pytest.approx(float(expected)), (table, row, col)
        checked[table] += 1
    assert checked == {"trends_weekly": 26 * 6, "trends_tiers": 3 * 7}
    assert latest["homes_sold"].sum() <= int(done[done["period_begin"] == latest[
        "period_begin"].iloc[0]]["homes_sold"].sum())  # fmt: skip
    notice = re.search(r'<p class="notice" data-notice="seasonal">([^<]*)</p>', html)
    assert notice is not None and "needs at least 36 months (3 years)" in notice.group(1)
    assert 'data-chart="trends_seasonal"' not in html
