"""The report's "What changed since the last report": first run, then a run after the clock moved."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from report_html import parse

import realtyframes as rf
from realtyframes.report import (
    MarketReportOptions,
    compute_market_report,
    load_market_frames,
    render_market_report,
)
from realtyframes.report._render_changes import CHANGE_LABELS, since_last_counts


def _run(url: str, cache: Path) -> tuple[object, str, object]:
    options = MarketReportOptions(
        cities=("Miami", "Doral"), source="test sandbox", edition="analyst"
    )
    with rf.Client(base_url=url, cache_dir=cache, progress=False) as client:
        frames = load_market_frames(client, options)
    report = compute_market_report(frames, options)
    return frames, render_market_report(report), report


@pytest.mark.slow
def test_a_second_run_after_the_clock_moves_lists_the_changes(
    start_sandbox, tmp_path: Path
) -> None:
    sandbox = start_sandbox(listings=1500)
    cache = tmp_path / "cache"
    first, html, _ = _run(sandbox.url, cache)
    assert first.since_last is None
    assert 'data-first-run="true"' in html and "This is the first report" in html

    httpx.post(f"{sandbox.url}/_sandbox/clock", json={"advance_days": 7}).raise_for_status()
    frames, html, _ = _run(sandbox.url, cache)
    since = frames.since_last
    assert since is not None and len(since) > 0
    assert "data-first-run" not in html
    counts = since_last_counts(since)
    shown = parse(html).values
    for kind in CHANGE_LABELS:
        value, _text = shown[("since_last", kind, "listings")]
        assert int(value) == counts[kind], kind
    assert counts["new"] > 0 and counts["price_cut"] > 0 and counts["closed"] > 0
    # checked against the two markets the runs saw
    after = frames.listings.set_index("ListingId")
    before_ids = set(first.listings["ListingId"])
    kinds = {k: set(v) for k, v in since.groupby(since["change"].astype(str))["ListingId"]}
    assert kinds["new"] == set(after.index) - before_ids
    was_closed = set(first.listings.loc[first.listings["StandardStatus"] == "Closed", "ListingId"])
    assert all(after.loc[i, "StandardStatus"] == "Closed" for i in kinds["closed"])
    assert not kinds["closed"] & was_closed
    cut = since[since["change"] == "price_cut"].set_index("ListingId")
    assert (cut["new_price"] < cut["old_price"]).all()
    still = [i for i in cut.index if after.loc[i, "ListPrice"] == cut.loc[i, "new_price"]]
    assert len(still) >= 0.9 * len(cut)  # a later raise may move a few on
    assert set(since["City"].astype(str)) <= {"Miami", "Doral"}
    cuts = {row for table, row, _ in shown if table == "since_last_cuts"}
    assert cuts and cuts <= set(cut.index)
