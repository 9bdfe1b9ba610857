"""Short reprs and notebook HTML of the multi-frame results (issue #13)."""

from __future__ import annotations

import realtyframes as rf


def test_analytics_and_traffic_summary_have_short_reprs(sandbox_url: str) -> None:
    with rf.Client(sandbox_url, cache=False, progress=False) as client:
        analytics = client.analytics(period="7d")
    text = repr(analytics)
    lines = text.splitlines()
    assert lines[0] == "Analytics(period='7d')" and len(lines) == 1 + len(analytics.frames())
    overview = analytics.overview
    assert f"overview   {overview.shape[0]} x {overview.shape[1]}" in text
    assert len(text) < 1000  # not every frame printed in full
    page = analytics._repr_html_()
    assert page.count("<details>") == len(analytics.frames()) and "<table" in page

    summary = rf.traffic_summary(analytics)
    text = repr(summary)
    assert text.startswith("TrafficSummary(period='7d')") and "referrers" in text
    assert len(text.splitlines()) == 1 + 3 + len(summary.breakdowns)  # headline, timeline, utm
    assert summary._repr_html_().count("<details>") == 3 + len(summary.breakdowns)


def test_traffic_counts_are_integers(sandbox_url: str) -> None:
    """Counts are integers everywhere (issue #13): breakdowns, UTM and the daily timeline."""
    with rf.Client(sandbox_url, cache=False, progress=False) as client:
        summary = rf.traffic_summary(client.analytics(period="7d"))
    for frame in (*summary.breakdowns.values(), summary.utm):
        assert {str(frame[c].dtype) for c in ("visitors", "pageviews", "conversions")} == {"Int64"}
        assert frame["share"].dtype == "float64"
    assert set(map(str, summary.timeline.dtypes)) == {"Int64"}
