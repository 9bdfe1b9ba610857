"""The report's market sections: comparison (with the largest subtypes), trends, maps."""

from __future__ import annotations

import pandas as pd

from realtyframes.analysis import MARKET_METRICS, REFERENCE_LABEL, SAMPLE_SIZE_OF
from realtyframes.report._charts import chart
from realtyframes.report._charts import render_chart as _figure
from realtyframes.report._html import Cell, Section
from realtyframes.report._html import render_table as _table
from realtyframes.report._render_common import label, metric_kind
from realtyframes.report.compute import MarketReport, thin

__all__ = [
    "SHORT_LABELS",
    "TABLE_METRICS",
    "maps_section",
    "market_section",
]

#: Market metrics shown in the comparison table, in order.
TABLE_METRICS: tuple[str, ...] = MARKET_METRICS
#: Row labels of the comparison table.
SHORT_LABELS: dict[str, str] = {
    "active_listings": "Active listings",
    "new_listings": "New listings",
    "pending_sales": "Pending sales",
    "homes_sold": "Homes sold",
    "median_list_price": "Median list price",
    "median_list_ppsf": "Median list $/sq ft",
    "median_sale_price": "Median sale price",
    "median_sale_ppsf": "Median sale $/sq ft",
    "median_dom": "Median days on market",
    "avg_sale_to_list": "Avg sale-to-list",
    "pct_sold_above_list": "Sold above list",
    "months_of_supply": "Months of supply",
    "pct_active_with_price_drop": "Active whose last price change was a cut (any time)",
}


def market_section(report: MarketReport) -> Section:
    from realtyframes import plots

    o = report.options
    comp = report.comparison
    table = comparison_table(
        "comparison",
        comp,
        o.min_sample,
        f"{', '.join(o.property_types)}; window: the {float(o.window_days):g} days to "
        f"{o.day.isoformat()}. '{REFERENCE_LABEL}' is the whole market of the report. "
        f"— n=…: fewer than {o.min_sample} listings behind the value, not shown.",
    )
    if report.subtypes is not None:
        table += comparison_table(
            "subtypes",
            report.subtypes,
            o.min_sample,
            f"The {len(report.subtypes.columns) - 1} largest property subtypes, same window; "
            f"'{REFERENCE_LABEL}' is the whole market. — n=…: below the minimum sample.",
        )
    shown = report.summary.reindex(pd.Index(report.markets, tupleize_cols=True, name=o.by))
    shown.attrs = dict(report.summary.attrs)
    charts = [
        _figure(
            chart(plots.market_metrics, shown),
            f"Market metrics by {o.by}: median sale price, price per sq ft, homes sold, months of "
            "supply, days on market, share with a price drop",
            "market_metrics",
        ),
        '<div class="grid2">'
        + "".join(
            _figure(
                chart(
                    plots.ppsf_boxplot,
                    report.frames.listings,
                    by=o.by,
                    price=price,
                    markets=report.markets,
                    as_of=o.day,
                    window_days=float(o.window_days),
                ),
                f"{price.capitalize()} price per square foot by {o.by}",
                "ppsf_boxplot" if price == "sale" else "ppsf_boxplot_list",
            )
            for price in ("sale", "list")
        )
        + "</div>",
    ]
    intro = (
        f"Markets by {o.by}: {len(report.summary):,} in the data, the {len(report.markets)} "
        "largest shown side by side"
        if not (o.cities and o.by == "City")
        else f"Markets by {o.by}: the cities asked for"
    ) + ". Every metric is defined under Definitions at the end of this report."
    return Section("markets", "Market comparison", table + "".join(charts), intro)


def comparison_table(table_id: str, comp: pd.DataFrame, min_sample: int, caption: str) -> str:
    """Metrics as rows, markets as columns; a median or ratio on fewer than ``min_sample``
    listings is shown as "—" with its n (``SAMPLE_SIZE_OF``), never as a firm figure."""
    from realtyframes.plots import METRIC_LABELS

    columns = list(comp.columns)
    hidden = thin(comp, min_sample)
    rows: list[list[Cell | str]] = []
    for metric in TABLE_METRICS:
        cells: list[Cell | str] = [SHORT_LABELS.get(metric, METRIC_LABELS[metric][0])]
        for col in columns:
            value, kind = comp.loc[metric, col], metric_kind(metric)
            if hidden.loc[metric, col]:
                n = comp.loc[SAMPLE_SIZE_OF[metric], col]
                cells.append(Cell(None, kind, row=metric, col=label(col), note=f"n={n}"))
            else:
                cells.append(Cell(value, kind, row=metric, col=label(col)))
        rows.append(cells)
    return _table(
        table_id,
        ["Metric", *[label(c) for c in columns]],
        rows,
        caption=caption,
        numeric_header=[False] + [True] * len(columns),
    )


def maps_section(report: MarketReport) -> Section:
    """Active listings on a map, coloured by price per square foot (drawn offline)."""
    from realtyframes import plots

    listings = report.frames.listings
    active = listings[listings["StandardStatus"].astype("str") == "Active"]
    if active.empty:
        return Section("map", "Map of the market", '<p class="empty">No active listings.</p>')
    title = f"{len(active):,} active listings by list price per sq ft"
    body = _figure(
        chart(plots.listing_map, active, color="ppsf", title=title),
        "Active listings by list price per square foot (no map tiles: drawn offline)",
        "market_map",
    )
    return Section("map", "Map of the market", body)
