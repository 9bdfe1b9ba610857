"""The report's "What changed since the last report" section (pure HTML from a MarketReport).

It reads ``report.frames.since_last``: what the syncs of this run changed since the previous sync of
the same market (``client.last_load.changes``; one row per listing and kind of change). None means a
first run, and the section says so plainly.

>>> html = changes_section(report).body  # doctest: +SKIP
"""

from __future__ import annotations

import pandas as pd

from realtyframes.report._charts import chart
from realtyframes.report._charts import render_chart as _figure
from realtyframes.report._html import Cell, Section
from realtyframes.report._html import render_table as _table
from realtyframes.report._render_common import frame_table
from realtyframes.report.compute import MarketReport

__all__ = ["CHANGE_LABELS", "changes_section", "drops_section", "since_last_counts"]

#: How each kind of change is named in the report, in the order shown.
CHANGE_LABELS: dict[str, str] = {
    "new": "New listings",
    "price_cut": "Price cuts",
    "price_increase": "Price increases",
    "pending": "Went pending",
    "closed": "Sold (closed)",
    "back_on_market": "Back on market",
    "status_change": "Other status changes",
    "removed": "Removed from the service",
}
_TOP_CUTS = 10


def since_last_counts(since_last: pd.DataFrame) -> pd.Series:
    """Listings per kind of change (every kind, 0 when none), in :data:`CHANGE_LABELS` order.

    >>> int(since_last_counts(pd.DataFrame({"change": ["new", "new", "closed"]}))["new"])
    2
    """
    kinds = since_last["change"].astype("str") if len(since_last) else pd.Series([], dtype=str)
    counts = kinds.value_counts().reindex(list(CHANGE_LABELS), fill_value=0)
    return counts.astype("int64")


def _biggest_cuts(since_last: pd.DataFrame) -> pd.DataFrame:
    cuts = since_last[since_last["change"].astype("str") == "price_cut"].copy()
    cuts["cut_pct"] = (cuts["old_price"] - cuts["new_price"]) / cuts["old_price"]
    cuts = cuts.sort_values(["cut_pct", "ListingId"], ascending=[False, True], kind="stable")
    return cuts.head(_TOP_CUTS)


def changes_section(report: MarketReport) -> Section:
    """What changed since the previous sync of this market (the previous scheduled report)."""
    since = report.frames.since_last
    if since is None:
        body = (
            '<p class="notice" data-first-run="true">This is the first report of this market: '
            "there is no earlier state to compare with yet. The next run lists the new listings, "
            "price cuts, pending sales, sales and listings back on market since this one.</p>"
        )
        return Section("since-last", "What changed since the last report", body)
    counts = since_last_counts(since)
    rows: list[list[Cell | str]] = [
        [label, Cell(int(counts[kind]), "count", row=kind, col="listings")]
        for kind, label in CHANGE_LABELS.items()
    ]
    table = _table(
        "since_last",
        ["Change", "Listings"],
        rows,
        caption="Listings per kind of change since the previous sync of this market (one listing "
        "counts once per kind, however many changes of that kind it had).",
        numeric_header=[False, True],
    )
    cuts = _biggest_cuts(since)
    spec = [
        ("UnparsedAddress", "Address", "text"),
        ("City", "City", "text"),
        ("PropertySubType", "Type", "text"),
        ("old_price", "Was", "money"),
        ("new_price", "Now", "money"),
        ("cut_pct", "Cut", "percent"),
        ("events", "Cuts", "count"),
        ("ChangeTimestamp", "Last cut", "date"),
    ]
    cut_rows: list[list[Cell | str]] = []
    for _, row in cuts.iterrows():
        lid = str(row["ListingId"])
        cut_rows.append([lid, *[Cell(row[c], k, row=lid, col=c) for c, _, k in spec]])
    cut_table = (
        _table(
            "since_last_cuts",
            ["Listing", *[h for _, h, _ in spec]],
            cut_rows,
            caption=f"The {len(cuts)} biggest price cuts since the previous sync (first price "
            "before them against the latest), any status.",
            numeric_header=[False, False, False, False] + [True] * (len(spec) - 3),
        )
        if len(cuts)
        else '<p class="empty">No price cut since the previous sync.</p>'
    )
    total = int(counts.sum())
    intro = (
        f"{total:,} changes on {since['ListingId'].nunique():,} listings since the previous sync."
        if total
        else "Nothing changed since the previous sync of this market."
    )
    return Section("since-last", "What changed since the last report", table + cut_table, intro)


def drops_section(report: MarketReport) -> Section:
    from realtyframes import plots

    o = report.options
    ds = report.drop_summary.reindex(pd.Index(report.markets, tupleize_cols=True, name=o.by))
    spec = [
        # the cuts are those of active for-sale listings: "listings with a cut" would repeat
        # the next column but one (active_with_price_drop) number for number
        ("active_listings", "Active listings", "count"),
        ("active_with_price_drop", "Active, cut in the window", "count"),
        ("pct_active_with_price_drop", "Share of active cut in the window", "percent"),
        ("median_drop_pct", "Median cut", "percent"),
        ("median_drop_amount", "Median cut (USD)", "money"),
    ]
    summary_table = frame_table(
        "drop_summary",
        o.by,
        ds,
        spec,
        f"Price cuts in the window (the {float(o.window_days):g} days to {o.day.isoformat()}) by "
        "market, sale segment, from the listing history: one definition of a cut across the "
        "report (a price change down). The comparison's 'last price change was a cut (any "
        "time)' is another measure: not windowed.",
    )
    top = report.drops.head(o.top_drops)
    top_spec = [
        ("UnparsedAddress", "Address", "text"),
        ("City", "City", "text"),
        ("PropertySubType", "Type", "text"),
        ("previous_price", "Was", "money"),
        ("current_price", "Now", "money"),
        ("drop_pct", "Cut", "percent"),
        ("drop_amount", "Cut (USD)", "money"),
        ("drop_count", "Cuts", "count"),
        ("total_drop_pct", "Total cut", "percent"),
        ("last_drop_at", "Last cut", "date"),
        ("DaysOnMarket", "Days on market", "days"),
    ]
    top_rows: list[list[Cell | str]] = []
    for _, row in top.iterrows():
        lid = str(row["ListingId"])
        top_rows.append([lid, *[Cell(row[c], k, row=lid, col=c) for c, _, k in top_spec]])
    top_table = _table(
        "top_drops",
        ["Listing", *[h for _, h, _ in top_spec]],
        top_rows,
        caption=f"The {len(top)} biggest cuts (by the latest cut's percentage) of active "
        f"for-sale listings since {o.window_start.strftime('%Y-%m-%d')}.",
        numeric_header=[False, False, False, False] + [True] * (len(top_spec) - 3),
    )
    charts = (
        '<div class="grid2">'
        + _figure(
            chart(plots.top_price_drops, report.drops, top_n=o.top_drops),
            "The biggest price cuts, by percentage",
            "top_price_drops",
        )
        + _figure(
            chart(plots.price_drop_distribution, report.drops),
            "Distribution of price cuts",
            "price_drop_distribution",
        )
        + "</div>"
        + _figure(
            chart(
                plots.listing_map,
                report.drops,
                color="drop_pct",
                market=report.frames.listings,
                title=f"Where the {len(report.drops):,} cuts are (latest cut, %)",
            ),
            "Price cuts on a map, coloured by the latest cut (drawn offline)",
            "price_drop_map",
        )
    )
    intro = (
        f"{len(report.drops):,} active for-sale listings cut their price in the "
        f"{float(o.window_days):g} days to {o.day.isoformat()} (from the listing change feed)."
    )
    return Section("price-drops", "Price drops", summary_table + top_table + charts, intro)
