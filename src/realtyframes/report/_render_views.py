"""The Trends section's further views: the recent weeks (or rolling 4-week periods), the
months seasonally adjusted beside the raw ones (or one line saying why not), and the price
tiers of the latest complete quarter. Each is one block of ``trends_section``."""

from __future__ import annotations

import pandas as pd

from realtyframes.report._charts import chart
from realtyframes.report._charts import render_chart as _figure
from realtyframes.report._html import Cell, esc
from realtyframes.report._html import render_table as _table
from realtyframes.report.compute import MarketReport
from realtyframes.report.trend_views import SA_COLUMNS, WEEKS_SHOWN

__all__ = ["seasonal_block", "tiers_block", "weekly_block"]

#: The weekly view's columns: metric, header, kind (Redfin's 4-week view).
WEEK_TABLE: tuple[tuple[str, str, str], ...] = (
    ("new_listings", "New", "count"),
    ("homes_sold", "Sold", "count"),
    ("median_sale_price", "Median sale", "money"),
    ("median_sale_price_n", "n", "count"),
    ("off_market_in_two_weeks", "Off market in 2 weeks", "percent"),
    ("price_cut_share", "Price-cut share", "percent"),
)
WEEK_CHARTS: tuple[str, ...] = (
    "new_listings",
    "homes_sold",
    "median_sale_price",
    "off_market_in_two_weeks",
    "price_cut_share",
)
#: The seasonal table's columns: metric, header, kind.
SA_TABLE: tuple[tuple[str, str, str], ...] = tuple(
    item
    for column, header, kind in (
        ("homes_sold", "Sold", "count"),
        ("new_listings", "New", "count"),
        ("median_sale_price", "Median sale", "money"),
    )
    for item in ((column, header, kind), (f"{column}_sa", f"{header}, SA", kind))
)
TIER_TABLE: tuple[tuple[str, str, str], ...] = (
    ("sale_band_low", "Band from", "money"),
    ("sale_band_high", "Band to", "money"),
    ("homes_sold", "Sold", "count"),
    ("homes_sold_yoy", "Sold YoY", "percent"),
    ("median_sale_price", "Median sale", "money"),
    ("median_sale_price_n", "n", "count"),
    ("median_sale_price_yoy", "Median sale YoY", "percent"),
)
_VIEW_NAMES = {"4W": "rolling 4-week periods", "W": "weeks"}


def _period(row: pd.Series, freq: str) -> str:
    begin, end = pd.Timestamp(row["period_begin"]), pd.Timestamp(row["period_end"])
    text = f"{begin:%Y-%m-%d} to {end:%m-%d}" if freq == "4W" else f"week of {begin:%Y-%m-%d}"
    return text + ("" if bool(row["complete"]) else " (so far)")


def _rows(
    frame: pd.DataFrame, spec: tuple[tuple[str, str, str], ...], label: list[str]
) -> list[list[Cell | str]]:
    return [
        [text, *[Cell(row[c], k, row=text, col=c) for c, _, k in spec]]
        for text, (_, row) in zip(label, frame.iterrows(), strict=True)
    ]


def weekly_block(report: MarketReport) -> str:
    """The whole market's last weeks or rolling 4-week periods: one chart of small multiples
    and a table (nothing for the monthly view, ``--trends-freq M``)."""
    from realtyframes import plots

    weeks = report.weekly
    if weeks is None or weeks.empty:
        return ""
    o = report.options
    freq = str(weeks.attrs.get("freq", o.trends_freq))
    name = _VIEW_NAMES[freq]
    labels = [_period(row, freq) for _, row in weeks.iterrows()]
    window = (
        "each row the 4 weeks (Monday to Sunday) ending that Sunday, so neighbouring rows "
        "share 3 weeks (Redfin's 4-week view)"
        if freq == "4W"
        else "each row one week, Monday to Sunday"
    )
    table = _table(
        "trends_weekly",
        ["Period", *[h for _, h, _ in WEEK_TABLE]],
        _rows(weeks, WEEK_TABLE, labels),
        caption=f"The whole market's last {len(weeks)} {name} (UTC): {window}. Flows in the "
        f"period; medians and shares on fewer than {o.min_sample} listings are blank; the "
        "period not over is marked '(so far)'. Off market in 2 weeks: the share of the "
        "period's new listings that went pending within 14 days; price-cut share: listings "
        "whose price at the period's end is below its start, of those active at any point.",
        numeric_header=[False] + [True] * len(WEEK_TABLE),
    )
    figure = _figure(
        chart(plots.trend_panels, weeks, list(WEEK_CHARTS), ncols=3),
        f"The whole market by {name}: " + ", ".join(WEEK_CHARTS).replace("_", " "),
        "trends_weekly",
        caption=f"The last {WEEKS_SHOWN} {name} of the whole market, each point at its "
        "period's start; the period not over is a hollow point on a dotted line.",
    )
    title = "Rolling 4-week view" if freq == "4W" else "Weekly view"
    return f"<h3>{title}</h3>" + figure + table


def seasonal_block(report: MarketReport) -> str:
    """The covered months with homes sold, new listings and the median sale price as counted
    and seasonally adjusted (a chart and a table); or one line saying why there are none."""
    from realtyframes import plots

    months = report.seasonal
    if months is None or months.empty:
        if report.seasonal_notice is None:
            return ""
        return (
            '<h3>Seasonally adjusted</h3><p class="notice" data-notice="seasonal">'
            f"No seasonally adjusted series: {esc(report.seasonal_notice)}</p>"
        )
    done = months[months["complete"].astype(bool).to_numpy()]
    years = len(done) / 12
    first, last = pd.Timestamp(done["period_begin"].min()), pd.Timestamp(done["period_begin"].max())
    caption = (
        "Seasonal adjustment removes the part of each month's figure that recurs every year at "
        "that time (more sales in spring and summer, fewer in winter), so that a move up or "
        "down is the market's, not the calendar's. Method: STL (seasonal-trend decomposition "
        f"by loess) on the {len(done)} complete months the data cover ({first:%b %Y} to "
        f"{last:%b %Y}, {years:.1f} years; at least 3 are needed); the median sale price "
        "multiplicatively, the counts additively. Solid: as counted; dashed: seasonally "
        "adjusted. With few years the seasonal pattern is itself an estimate: read the dashed "
        "line's turns, not its single months."
    )
    figure = _figure(
        chart(plots.seasonal_panels, months, list(SA_COLUMNS)),
        "Homes sold, new listings and median sale price by month, as counted and seasonally "
        "adjusted",
        "trends_seasonal",
        caption=caption,
    )
    shown = months.tail(12)
    labels = [
        f"{pd.Timestamp(b):%Y-%m}" + ("" if bool(c) else " (so far)")
        for b, c in zip(shown["period_begin"], shown["complete"], strict=True)
    ]
    table = _table(
        "trends_seasonal",
        ["Month", *[h for _, h, _ in SA_TABLE]],
        _rows(shown, SA_TABLE, labels),
        caption="The last 12 months as counted and seasonally adjusted (SA); the month not over "
        "has no SA figure.",
        numeric_header=[False] + [True] * len(SA_TABLE),
    )
    return "<h3>Seasonally adjusted</h3>" + figure + table


def tiers_block(report: MarketReport) -> str:
    """The bottom, middle and top price tiers of the latest complete quarter (a table)."""
    tiers = report.tiers
    if tiers is None or tiers.empty:
        return ""
    o = report.options
    begin = pd.Timestamp(tiers["period_begin"].iloc[0])
    quarter = f"{begin.year} Q{begin.quarter}"
    covered = "never" if report.covered_from is None else f"{report.covered_from:%Y-%m-%d} on"
    bands = tiers.attrs.get("tiers", {}).get("bands", {})
    labels = [
        f"{tier.capitalize()} ({bands[tier][0]:.0%}–{bands[tier][1]:.0%})" if tier in bands
        else str(tier)
        for tier in tiers["tier"]
    ]  # fmt: skip
    return "<h3>Price tiers</h3>" + _table(
        "trends_tiers",
        [f"Tier, {quarter}", *[h for _, h, _ in TIER_TABLE]],
        _rows(tiers, TIER_TABLE, labels),
        caption=f"The sales of {quarter} (the latest complete quarter) in three price tiers, "
        "Zillow's bands: bottom = the 5th to 35th percentile of that quarter's sale prices, "
        "middle 35th–65th, top 65th–95th (the 10 % at either end are in no tier). Band from/to: "
        "the sale prices at those percentiles. YoY: against the same tier of the same quarter "
        "a year earlier (its own bands), shown only where the data cover that quarter "
        f"({covered}) and both have {o.min_sample} or more sales; "
        "else '—'.",
        numeric_header=[False] + [True] * len(TIER_TABLE),
    )
