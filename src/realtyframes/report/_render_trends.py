"""The report's Trends section: the whole market month by month and quarter by quarter, the
markets shown by quarter (small multiples), and the constant-quality price index.

Monthly figures carry the activity (stocks and flows, and the month's median with its n); the
year-over-year changes of prices are by quarter, where a median stands on three times the
sales (on a month of about 130 sales a median moves by 10-15 % from chance alone). The recent
weeks, the seasonally adjusted months and the price tiers are blocks of their own
(``_render_views``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from realtyframes.report._charts import chart
from realtyframes.report._charts import render_chart as _figure
from realtyframes.report._html import Cell, Section
from realtyframes.report._html import render_table as _table
from realtyframes.report._render_views import seasonal_block, tiers_block, weekly_block
from realtyframes.report.compute import MarketReport

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["TREND_CHARTS", "index_block", "index_chart", "trends_section"]

#: The per-market trend panels: metric, and what its panel says.
TREND_CHARTS: tuple[tuple[str, str], ...] = (
    ("median_sale_price", "Median sale price"),
    ("median_sale_ppsf", "Median sale price per sq ft"),
    ("homes_sold", "Homes sold"),
    ("new_listings", "New listings"),
    ("months_of_supply", "Months of supply at the quarter's end"),
    ("median_dom", "Median days on market of the quarter's sales"),
)
_MONTH_TABLE: tuple[tuple[str, str, str], ...] = (
    ("active_listings", "Active (end)", "count"),
    ("new_listings", "New", "count"),
    ("homes_sold", "Sold", "count"),
    ("median_sale_price", "Median sale", "money"),
    ("median_sale_price_n", "n", "count"),
    ("median_sale_ppsf", "$/sq ft", "money"),
    ("months_of_supply", "Months of supply", "number"),
    ("median_dom", "Days on market", "number"),
)
_QUARTER_TABLE: tuple[tuple[str, str, str], ...] = (
    ("homes_sold", "Sold", "count"),
    ("homes_sold_yoy", "Sold YoY", "percent"),
    ("median_sale_price", "Median sale", "money"),
    ("median_sale_price_n", "n", "count"),
    ("median_sale_price_yoy", "Median sale YoY", "percent"),
    ("median_sale_ppsf", "$/sq ft", "money"),
    ("median_sale_ppsf_yoy", "$/sq ft YoY", "percent"),
    ("median_dom", "Days on market", "number"),
)
_INDEX_TABLE: tuple[tuple[str, str, str], ...] = (
    ("index", "Price index", "number"),
    ("index_low", "Band low", "number"),
    ("index_high", "Band high", "number"),
    ("n", "Sales (n)", "count"),
    ("median_sale_price", "Median sale", "money"),
    ("median_n", "n", "count"),
    ("median_index", "Median sale, indexed", "number"),
)


def _day(when: pd.Timestamp | None) -> str:
    return "—" if when is None else when.date().isoformat()


def _label(when: object, quarterly: bool) -> str:
    stamp = pd.Timestamp(when)  # type: ignore[arg-type]
    return f"{stamp.year} Q{stamp.quarter}" if quarterly else stamp.strftime("%Y-%m")


def _rows(
    frame: pd.DataFrame, spec: tuple[tuple[str, str, str], ...], quarterly: bool
) -> list[list[Cell | str]]:
    rows: list[list[Cell | str]] = []
    for _, row in frame.iterrows():
        over = bool(row["complete"]) if "complete" in row else True
        text = _label(row["period_begin"], quarterly) + ("" if over else " (so far)")
        rows.append([text, *[Cell(row[c], k, row=text, col=c) for c, _, k in spec]])
    return rows


def _recent(report: MarketReport, quarters: pd.DataFrame) -> pd.DataFrame:
    """The quarters that start within the months shown (the frame holds a year more, for YoY)."""
    total = report.trend_total
    assert total is not None
    first = pd.offsets.QuarterBegin(startingMonth=1).rollback(total["period_begin"].min())
    kept = quarters[(quarters["period_begin"] >= first).to_numpy()]
    kept.attrs = dict(quarters.attrs)
    return kept


def _tables(report: MarketReport) -> str:
    o = report.options
    total = report.trend_total
    assert total is not None
    months = _table(
        "trends",
        ["Month", *[h for _, h, _ in _MONTH_TABLE]],
        _rows(total.tail(12), _MONTH_TABLE, quarterly=False),
        caption=f"The whole market, month by month (calendar months, UTC). Stocks at each "
        f"month's end, flows in the month; medians on fewer than {o.min_sample} sales are "
        "blank. Changes against a year earlier are in the quarterly table below: a month's "
        "median stands on too few sales to compare. Definitions: at the end of this report, "
        "'Market trends'.",
        numeric_header=[False] + [True] * len(_MONTH_TABLE),
    )
    quarters = report.quarters
    if quarters is None or quarters.empty:
        return months
    return months + _table(
        "trends_quarterly",
        ["Quarter", *[h for _, h, _ in _QUARTER_TABLE]],
        _rows(_recent(report, quarters), _QUARTER_TABLE, quarterly=True),
        caption="The whole market, quarter by quarter; YoY: against the same quarter a year "
        f"earlier, shown only where the data cover that whole quarter (they cover this market "
        f"from {_day(report.covered_from)} on), both quarters have {o.min_sample} or more sales "
        "behind the median, and the quarter is over: else '—'.",
        numeric_header=[False] + [True] * len(_QUARTER_TABLE),
    )


def _markets_block(report: MarketReport) -> str:
    from realtyframes import plots

    o = report.options
    by_quarter = report.quarters_by
    if by_quarter is None or by_quarter.empty:
        return ""
    shown = _recent(report, by_quarter)
    shown = shown[shown[o.by].isin(list(report.markets))]
    shown.attrs = dict(by_quarter.attrs)
    highlighted = list(report.markets)[: plots.HIGHLIGHTED]  # the same colours on every chart
    metrics = [m for m, _ in TREND_CHARTS]
    return _figure(
        chart(plots.trend_panels, shown, metrics, highlight=highlighted),
        f"By quarter and {o.by}: " + "; ".join(text for _, text in TREND_CHARTS),
        "trend_panels",
        caption=f"Each point: one quarter's sales or listings in one {o.by} (n in the legend: "
        f"the sales behind the latest complete quarter's median). The {len(highlighted)} "
        "largest markets in colour, the same colour on every chart; the others grey. A city's "
        "year-over-year change is not shown: on a few dozen sales a quarter its median moves "
        "by tens of percent from chance alone.",
    )


def index_chart(index: pd.DataFrame, population: str, period: str) -> Figure:
    """``rf.plot.price_index`` of the report's quarterly index, saying by quarter (not month)
    and, above the plot, the sales it stands on (``population``) and their ``period``."""
    from realtyframes import plots

    fig = plots.price_index(index)
    fig.axes[0].set_title(f"{population}, {period}, by quarter; bars: the sales behind each",
                          loc="left", fontsize=9, color="0.3")  # fmt: skip
    begins = pd.to_datetime(index["period_begin"])
    fig.axes[1].set_xticks(begins, [_label(b, quarterly=True) for b in begins])
    return fig


def index_block(report: MarketReport) -> str:
    """The constant-quality price index by quarter: its chart (band, sales, the quarter's median
    beside it) and table (the median with its n), or nothing without an index."""
    index = report.index
    if index is None or index.empty:
        return ""
    o = report.options
    base = _label(index.attrs["base"], quarterly=True)
    first, last = (_label(index["period_begin"].iloc[i], quarterly=True) for i in (0, -1))
    period = f"{first} to {last}"
    where = ", ".join(o.cities) if o.cities else "the whole market"
    population = f"Closed sales, {where} ({', '.join(o.property_types)})"
    caption = (
        "A median sale price moves with the mix of homes sold: a quarter with more large homes "
        "or more sales in dear cities shows a higher median though no home's price changed. A "
        "constant-quality index compares like with like: a hedonic regression of each sale's "
        "log price on the home's beds, baths, living area, age, subtype and city, with one "
        f"term per quarter, scaled to 100 in {base}. The band: 95 % confidence; bars: the sales "
        f"behind each quarter. {population}, {period}. By quarter, not by month: a month's "
        "median stands on a third of the sales and moves by 10 % from chance alone. Quarters "
        f"with fewer than {o.min_sample} sales are blank."
    )
    table = _table(
        "price_index",
        ["Quarter", *[h for _, h, _ in _INDEX_TABLE]],
        _rows(index, _INDEX_TABLE, quarterly=True),
        caption=f"The price index by quarter (100 = {base}), its 95 % band and the sales behind "
        "it; beside it the quarter's median sale price with its n, and that median indexed to "
        f"the same quarter. {population}, {period}.",
        numeric_header=[False] + [True] * len(_INDEX_TABLE),
    )
    figure = _figure(
        chart(index_chart, index, population, period),
        f"Constant-quality price index by quarter with its 95 % band and the sales behind it, "
        f"beside the median sale price indexed to the same quarter; {population}, {period}",
        "price_index",
        caption=caption,
    )
    return "<h3>Constant-quality price index, by quarter</h3>" + figure + table


def trends_section(report: MarketReport) -> Section:
    """Monthly and quarterly series of the whole market (tables, inventory), the markets shown
    by quarter (small multiples), and the price index."""
    from realtyframes import plots

    total = report.trend_total
    if total is None or report.trends is None or total.empty:
        return Section("trends", "Trends", '<p class="empty">No listings to follow.</p>')
    o = report.options
    blocks = [
        _tables(report),
        _figure(
            chart(plots.inventory_trend, total),
            "Inventory and flows, whole market",
            "inventory_trend",
        ),
        weekly_block(report),
        seasonal_block(report),
        _markets_block(report),
        tiers_block(report),
        index_block(report),
    ]
    intro = (
        f"{len(total):,} months to {o.day.isoformat()}: the whole market month by month (and "
        "week by week, seasonally adjusted), its prices quarter by quarter against a year "
        f"earlier, each {o.by} by quarter, the price tiers, and a price index that holds the "
        "homes' quality constant. The month (or quarter) not "
        "over yet is a hollow point on a dotted line."
    )
    return Section("trends", "Trends", "".join(blocks), intro)
