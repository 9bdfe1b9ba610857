"""The whole market report on a small sandbox, in the fast loop: load -> compute -> render ->
write (HTML, Parquet, CSV, manifest, workbook) -> read back, with the e-mail summary. The
larger checks of each part (every number against the analysis functions, the charts, the
workbook's sheets) are the ``slow`` tests beside this one; this one keeps the report package
exercised on every run (issue #25: 85 % of its lines in the fast loop)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from report_html import parse

import realtyframes as rf
from realtyframes.report import (
    MarketReportOptions,
    compute_market_report,
    load_market_frames,
    read_report_data,
    report_message,
    write_market_report,
)

AS_OF = "2026-06-30"


def test_a_small_report_is_written_whole_and_reads_back(
    start_sandbox: Callable[..., Any], tmp_path: Path
) -> None:
    """A small market (fast to generate) with two years of history: year-over-year changes."""
    small_url = start_sandbox(listings=600, history_years=2).url
    options = MarketReportOptions(
        as_of=AS_OF, source="test sandbox", max_markets=3, trend_months=12, edition="analyst"
    )
    with rf.Client(base_url=small_url, cache_dir=tmp_path / "cache", progress=False) as client:
        frames = load_market_frames(client, options)
    assert frames.contacts is None and frames.analytics is None  # the brokerage report's data

    # the client edition (the default) of the same frames: one page for the whole market
    client_report = compute_market_report(frames, dataclasses.replace(options, edition="client"))
    client_files = write_market_report(client_report, tmp_path / "client", xlsx=True, workers=0)
    page = client_files.html.read_text(encoding="utf-8")
    assert page.count('<section class="area" data-area="All markets">') == 1
    assert '<section class="cover">' not in page and "<a " not in page and "Definitions" not in page
    assert {t for t, _, _ in parse(page).values} >= {"lmu-All markets"}
    assert set(pd.read_excel(client_files.workbook, sheet_name=None)) >= {"lmu-All markets"}

    report = compute_market_report(frames, options)
    files = write_market_report(report, tmp_path / "out", xlsx=True, workers=0)

    html = files.html.read_text(encoding="utf-8")
    assert files.html.name == f"market-report-{AS_OF}-analyst.html"
    assert "<img" in html  # the charts are drawn into the page
    tables = {table for table, _, _ in parse(html).values}
    assert tables >= {"headline", "comparison", "trends", "top_drops"}
    assert not tables & {"traffic", "funnel"}
    assert set(files.data) == {"listings", "changes"}  # a first run; the market only

    back = read_report_data(files.html)
    for name, frame in report.frames.data_frames().items():
        assert len(back[name]) == len(frame), name

    manifest = json.loads(files.manifest.read_text(encoding="utf-8"))
    assert manifest["as_of"] == AS_OF and manifest["first_run"] is True
    assert manifest["rows"] == {k: len(v) for k, v in report.frames.data_frames().items()}
    assert files.workbook is not None
    sheets = pd.read_excel(files.workbook, sheet_name=None)
    assert "Definitions" in sheets and len(sheets) > 2

    message = report_message(report, files.html)
    active = f"{report.headline['active_listings']:,.0f} active"
    assert message.title.startswith(f"realtyframes market report {AS_OF} (all markets): {active}")
    assert message.attach == (files.html,) and "Median sale price, 90 days" in message.text
