"""The market report from frames: its numbers are the analysis functions' results on the frames
written next to it, it is self-contained, and loading again gives the same frames (the same bytes
from two whole runs: tests/cli/test_cli_report_fetch.py)."""

from __future__ import annotations

import base64
import datetime as dt
import io
import stat
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest
from PIL import Image
from report_html import parse, same

import realtyframes as rf
from realtyframes.analysis import REFERENCE_LABEL
from realtyframes.errors import QueryError
from realtyframes.report import (
    DATA_FILES,
    MarketReportOptions,
    analytics_from_files,
    compute_market_report,
    load_market_frames,
    read_report_data,
    render_market_report,
    write_market_report,
)
from realtyframes.report._html import data_value, format_value, render_cell
from realtyframes.report.compute import thin

AS_OF = "2026-06-30"


@pytest.fixture(scope="module")
def written(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of the shared sandbox (read-only), as of its clock."""
    cache = tmp_path_factory.mktemp("cache")
    out = tmp_path_factory.mktemp("reports")
    options = MarketReportOptions(as_of=AS_OF, source="test sandbox")
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        frames = load_market_frames(client, options)
    report = compute_market_report(frames, options)
    files = write_market_report(report, out)
    html = files.html.read_text(encoding="utf-8")
    return {
        "files": files,
        "report": report,
        "html": html,
        "parsed": parse(html),
        "cache": cache,
        "url": sandbox_url,
    }


@pytest.mark.slow
def test_files_are_dated_and_next_to_the_html(written: dict[str, Any]) -> None:
    files = written["files"]
    assert files.html.name == f"market-report-{AS_OF}.html"
    assert set(files.data) == set(DATA_FILES) - {"since-last"}  # a first run: nothing to compare
    for name, paths in files.data.items():
        for fmt, path in paths.items():
            assert path.parent == files.html.parent
            assert path.name == f"market-report-{AS_OF}.{name}.{fmt}"
            assert path.stat().st_size > 0
            if name == "contacts":  # about people: private whatever the umask
                assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.slow
def test_numbers_equal_the_analysis_functions_on_the_written_frames(
    written: dict[str, Any],
) -> None:
    """Every number in the HTML is recomputed from the Parquet files next to it."""
    data = read_report_data(written["files"].html)
    values = written["parsed"].values
    listings, changes, contacts = data["listings"], data["changes"], data["contacts"]
    options = written["report"].options
    by, days = options.by, float(options.window_days)

    summary = rf.market_summary(
        listings, by=by, as_of=dt.date(2026, 6, 30), window_days=days, compare_previous=True
    )
    shown_cols = sorted({col for t, _, col in values if t == "comparison"} - {REFERENCE_LABEL})
    assert 1 <= len(shown_cols) <= options.max_markets
    comparison = rf.compare_markets(
        listings,
        markets=shown_cols,
        by=by,
        as_of=AS_OF,
        window_days=days,
        compare_previous=True,
    )
    hidden = thin(comparison, options.min_sample)  # a median on too few sales: "—"
    checked = 0
    for (table, row, col), (shown, _text) in values.items():
        if table != "comparison":
            continue
        expected = None if hidden.loc[row, col] else comparison.loc[row, col]
        assert same(shown, expected), (row, col, shown, expected)
        checked += 1
    assert checked == len(rf.analysis.MARKET_METRICS) * (len(shown_cols) + 1)
    # the largest markets are the ones shown
    size = (summary["active_listings"] + summary["homes_sold"]).sort_values(ascending=False)
    assert set(shown_cols) == set(size.index[: len(shown_cols)])

    active_sale = listings[
        (listings["StandardStatus"] == "Active")
        & listings["PropertyType"].isin(rf.analysis.SALE_TYPES)
    ]
    changes = changes[changes["ListingId"].isin(active_sale["ListingId"])]  # the tables' population
    drops = rf.price_drops(listings, changes, since=summary.attrs["window_start"])
    assert len(drops) > 10
    drop_summary = rf.price_drop_summary(drops, by=by, listings=listings)
    top = drops.set_index("ListingId")
    rows = {"drop_summary": 0, "top_drops": 0}
    for (table, row, col), (shown, _) in values.items():
        if table == "drop_summary":
            assert same(shown, drop_summary.loc[row, col]), (row, col)
        elif table == "top_drops":
            expected = top.loc[row, col]
            if col == "last_drop_at":
                assert shown == data_value(expected)
            else:
                assert same(shown, expected), (row, col, shown, expected)
        else:
            continue
        rows[table] += 1
    assert rows["drop_summary"] == 5 * len(shown_cols)
    # its population is the active for-sale cuts: a "listings with a cut" column would repeat
    # "active, cut in the window" (it is left out)
    assert (drop_summary["price_drops"] == drop_summary["active_with_price_drop"]).all()
    top_ids = {r for t, r, _ in values if t == "top_drops"}
    assert top_ids == set(drops["ListingId"].head(options.top_drops))

    traffic = rf.traffic_summary(analytics_from_files(data))
    funnel = rf.lead_funnel(contacts)
    headline = {
        "active_listings": comparison.loc["active_listings", REFERENCE_LABEL],
        "new_listings": comparison.loc["new_listings", REFERENCE_LABEL],
        "homes_sold": comparison.loc["homes_sold", REFERENCE_LABEL],
        "median_sale_price": comparison.loc["median_sale_price", REFERENCE_LABEL],
        "median_dom": comparison.loc["median_dom", REFERENCE_LABEL],
        "months_of_supply": comparison.loc["months_of_supply", REFERENCE_LABEL],
        "price_drops": len(drops),
        "visitors": traffic.headline.loc["visitors", "value"],
        "conversion_rate": traffic.headline.loc["conversion_rate", "value"],
        "contacts": len(contacts),
    }
    for key, expected in headline.items():
        shown, _text = values[("headline", key, None)]
        assert same(shown, expected), key
    for metric, value in traffic.headline["value"].items():
        assert same(values[("traffic", str(metric), "value")][0], value), metric
    for stage, row in funnel.by_stage.iterrows():
        for col in ("contacts", "share", "reached", "reached_share"):
            assert same(values[("funnel", str(stage), col)][0], row[col]), (stage, col)
    for source, row in funnel.by_source.iterrows():
        for col in ("contacts", "share", "converted", "conversion_rate"):
            assert same(values[("lead_sources", str(source), col)][0], row[col])


@pytest.mark.slow
def test_shown_text_is_the_formatted_value(written: dict[str, Any]) -> None:
    comparison = written["report"].comparison
    values = written["parsed"].values
    shown, text = values[("comparison", "median_sale_price", REFERENCE_LABEL)]
    assert text == format_value(comparison.loc["median_sale_price", REFERENCE_LABEL], "money")
    assert text.startswith("$") and text.replace("$", "").replace(",", "").isdigit()
    shown, text = values[("comparison", "pct_active_with_price_drop", REFERENCE_LABEL)]
    assert text == f"{float(shown):.1%}"


@pytest.mark.slow
def test_report_is_self_contained_and_printable(written: dict[str, Any]) -> None:
    html, parsed = written["html"], written["parsed"]
    assert not parsed.tags & {"script", "link", "iframe", "object", "embed"}
    external = [u for u in parsed.urls if not u.startswith(("data:image/png;base64,", "#"))]
    # the only other links are the data files next to the report (relative names)
    stem = f"market-report-{AS_OF}."
    assert external and all(u.startswith(stem) and "/" not in u for u in external)
    assert "url(" not in html and "@import" not in html
    assert "@media print" in html
    charts = {
        "market_metrics",
        "ppsf_boxplot",
        "top_price_drops",
        "price_drop_distribution",
        "traffic_timeline",
        "traffic_panels",
        "lead_funnel",
        "leads_per_week",
        "inventory_trend",
        "trend_panels",
        "trends_weekly",
        "price_index",
        "price_drop_map",
        "market_map",
        "ppsf_boxplot_list",
    }  # fmt: skip
    assert {f'data-chart="{c}"' in html for c in charts} == {True}
    assert len(parsed.images) == len(charts)
    for img in parsed.images:
        png = base64.b64decode(str(img["src"]).split(",", 1)[1])
        image = Image.open(io.BytesIO(png))
        image.load()
        assert image.format == "PNG"
        assert (image.width, image.height) == (int(str(img["width"])), int(str(img["height"])))
        assert image.width >= 400 and image.height >= 250
        assert not {k for k in image.info if k.lower() in ("software", "creation time")}
        pixels = np.asarray(image.convert("L"))
        assert pixels.min() < 100 < pixels.max()  # something is drawn


@pytest.mark.slow
def test_the_page_is_the_same_bytes_however_many_processes_draw_its_charts(
    written: dict[str, Any],
) -> None:
    """The written page (charts drawn by a worker process and this one, on 2 cores or more) is
    byte for byte the page drawn by this process alone: every chart, every number."""
    alone = render_market_report(written["report"], workers=0)
    assert alone == written["html"]


@pytest.mark.slow
def test_data_files_round_trip_through_pandas_and_duckdb(written: dict[str, Any]) -> None:
    frames = written["report"].frames.data_frames()
    for name, paths in written["files"].data.items():
        frame = frames[name]
        parquet = pd.read_parquet(paths["parquet"])
        pd.testing.assert_frame_equal(parquet, frame, check_dtype=False, check_categorical=False)
        csv = pd.read_csv(paths["csv"])
        assert list(csv.columns) == list(frame.columns) and len(csv) == len(frame)
        for path in paths.values():
            reader = "read_parquet" if path.suffix == ".parquet" else "read_csv_auto"
            count = duckdb.sql(f"select count(*) from {reader}('{path}')").fetchall()
            assert count == [(len(frame),)]
    listings = written["files"].data["listings"]["parquet"]
    ids = duckdb.sql(f"select count(distinct ListingId) from read_parquet('{listings}')")
    assert ids.fetchall() == [(len(frames["listings"]),)]


@pytest.mark.slow
@pytest.mark.parametrize("refresh", [False, True], ids=["warm-cache", "refresh"])
def test_loading_again_gives_the_same_frames(written: dict[str, Any], refresh: bool) -> None:
    """A scheduled rerun (incremental sync from the cache, or a full refresh) on unchanged data
    gives the same frames, hence the same report."""
    report = written["report"]
    with rf.Client(base_url=written["url"], cache_dir=written["cache"], progress=False) as client:
        again = load_market_frames(client, report.options, refresh=refresh)
    first = report.frames.data_frames()
    second = again.data_frames()
    assert [n for n in second if n != "since-last"] == list(first)
    if refresh:  # a full reload compares with nothing
        assert again.since_last is None
    else:  # an incremental sync on unchanged data: nothing changed since the last one
        assert again.since_last is not None and again.since_last.empty
    for name, frame in first.items():
        pd.testing.assert_frame_equal(second[name], frame, obj=name)


@pytest.mark.slow
def test_report_from_csv_frames_gives_the_same_numbers(written: dict[str, Any]) -> None:
    """The CSV copies are enough to recompute the market table (text read back as numbers)."""
    paths = written["files"].data
    listings = pd.read_csv(paths["listings"]["csv"], dtype={"PostalCode": str})
    comparison = written["report"].comparison
    again = rf.compare_markets(
        listings,
        markets=written["report"].markets,
        as_of=AS_OF,
        window_days=90,
        compare_previous=True,
    )
    pd.testing.assert_frame_equal(again, comparison, check_exact=False, rtol=1e-9)


@pytest.mark.slow
def test_no_wall_clock_date_in_the_report(written: dict[str, Any]) -> None:
    html = written["html"]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert AS_OF in html
    assert today == AS_OF or today not in html


def test_options_are_checked() -> None:
    with pytest.raises(QueryError, match="by: unknown market dimension 'County'"):
        MarketReportOptions(by="County")
    with pytest.raises(QueryError, match="window_days"):
        MarketReportOptions(window_days=0)
    with pytest.raises(QueryError, match="property_types: 'Residential Lease' is not a sale"):
        MarketReportOptions(property_types=("Residential Lease",))
    with pytest.raises(QueryError, match="as_of: '30/06/2026' is not a date"):
        MarketReportOptions(as_of="30/06/2026")
    options = MarketReportOptions(as_of="2026-06-30", window_days=30)
    assert options.period == "30d"
    assert options.stem == "market-report-2026-06-30-30d"
    assert options.window_start == pd.Timestamp("2026-05-31T23:59:59.999999Z")


def test_cell_formatting() -> None:
    assert format_value(1234567.4, "money") == "$1,234,567"
    assert format_value(-5.0, "money") == "-$5"
    assert format_value(np.nan, "percent") == "—"
    assert format_value(pd.NA, "count") == "—"
    assert format_value(pd.Timestamp("2026-06-01T12:00Z"), "date") == "2026-06-01"
    with pytest.raises(ValueError, match="kind must be one of"):
        format_value(1, "currency")
    from realtyframes.report._html import Cell

    cell = render_cell(Cell("<b>", "text", row='a"b', col="c"))
    assert cell == '<td data-row="a&quot;b" data-col="c" data-value="&lt;b&gt;">&lt;b&gt;</td>'
