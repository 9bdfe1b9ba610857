"""The report's v2 promises: the workbook reads back equal, the manifest is complete, no median
below the minimum sample, one price-cut definition labelled per table, and ``--as-of`` reproduces
an earlier run's headline numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from report_html import parse

import realtyframes as rf
from chart_checks import outside, overlapping_ticks
from realtyframes.analysis import SAMPLE_SIZE_OF
from realtyframes.report import (
    MarketReportOptions,
    compute_market_report,
    load_market_frames,
    read_report_data,
    write_market_report,
)
from realtyframes.report.excel import excel_ready
from realtyframes.report.manifest import frame_hash

DAY = "2026-06-29"  # a day before the shared sandboxes' clock (2026-06-30 00:00 UTC)


def _report(url: str, cache: Path, out: Path, **kw: Any) -> Any:
    options = MarketReportOptions(as_of=DAY, source="test sandbox", **kw)
    with rf.Client(base_url=url, cache_dir=cache, progress=False) as client:
        frames = load_market_frames(client, options)
    report = compute_market_report(frames, options)
    return report, write_market_report(report, out, xlsx=True)


@pytest.fixture(scope="module")
def written(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    return _report(sandbox_url, tmp_path_factory.mktemp("c"), tmp_path_factory.mktemp("r"),
                   cities=("Miami", "Doral", "Miami Beach"))  # fmt: skip


@pytest.mark.slow
def test_the_workbook_reads_back_equal_to_the_parquet_frames(written: tuple[Any, Any]) -> None:
    _, files = written
    assert files.workbook is not None and files.workbook.name.endswith(".xlsx")
    frames = read_report_data(files.html)
    sheets = pd.read_excel(files.workbook, sheet_name=None)
    assert list(sheets) == [*frames, "Definitions"]
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
        "top_price_drops": rf.plot.top_price_drops(report.drops, n=o.top_drops),
        "price_drop_distribution": rf.plot.price_drop_distribution(report.drops),
        "price_drop_map": rf.plot.listing_map(report.drops, color="drop_pct", market=listings),
        "market_map": rf.plot.listing_map(listings[listings["StandardStatus"] == "Active"]),
        "ppsf_boxplot": rf.plot.ppsf_boxplot(listings, by=o.by, markets=report.markets),
    }
    if report.traffic is not None:
        figures["top_sources"] = rf.plot.top_sources(report.traffic)
        figures["traffic_timeline"] = rf.plot.traffic_timeline(report.traffic)
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
        if pd.isna(expected):
            assert shown == "", (row, col)
        else:
            assert float(shown) == pytest.approx(float(expected)), (row, col)
        checked += 1
    assert checked >= 12 * 9
    assert "data-first-run" in files.html.read_text()  # the first run says so
